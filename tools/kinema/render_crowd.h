// tools/kinema/render_crowd.h — `kinema render SCENE.json`: a crowd scene drawn as `kinema crowd`
// draws it (verb_render_crowd.cpp), for verb_render.cpp.
#pragma once

#include <optional>

namespace CLI {
class App;
}

namespace kinema::cli {

struct GlobalOptions;

/// Adds the options only a crowd scene takes (--lod-colours) to `render`'s subcommand.
void add_render_crowd_options(CLI::App& render);

/// When FILE of `render` (the parsed subcommand) is a crowd scene (.json, docs/crowds.md), draws
/// it as `kinema crowd SCENE -o OUT.png|OUT.mp4` does (pipeline::run_crowd with render's --size,
/// --fps, --contact-sheet and --lod-colours; those not given, kinema crowd's defaults), prints
/// kinema crowd's summary and returns the exit code. Throws UsageError when `render` was given an
/// option that makes no sense for a scene or OUT is not .png or .mp4, and kinema::Error as
/// run_crowd does. For any other FILE returns nothing (render draws it), after refusing
/// --lod-colours.
std::optional<int> render_crowd_scene(const CLI::App& render, const GlobalOptions& global);

}  // namespace kinema::cli
