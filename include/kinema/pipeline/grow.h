// kinema/pipeline/grow.h — `kinema grow` as a library call: a timed L-system
// (kinema/procedural/lsystem.h) from a JSON spec or a built-in preset, grown for some seconds and
// written as a mesh that grows: a .glb/.gltf whose one mesh has a morph target per frame played by
// a clip "growth" (`kinema render OUT.glb` draws it, any glTF viewer plays it), a .pc2 point cache
// with the rest mesh as OBJ beside it (Blender's Mesh Cache modifier), or a .obj of the grown
// plant alone. Every frame has the same vertices and triangles: the final plant's, with what is
// not yet born collapsed where it will sprout.
//
// The spec (docs/procedural.md, "L-system growth"); every key but axiom is optional:
//   { "axiom": "X", "rules": ["X -> F[+X]F[-X]+X", "F -> FF"],
//     "angle": 20,            degrees, the default turn (22.5)
//     "step": 0.02,           m, a segment's final length (0.1)
//     "seconds": 7,           s of growth (5)
//     "terminal_age": 1,      s from a module's birth to its rewriting (1)
//     "terminal_ages": {"F": 1.5},
//     "growth": {"curve": "smoothstep" | "logistic" | "linear", "length_maturity": 1,
//                "angle_maturity": 1, "leaf_maturity": 1, "pipe_radius": 0.01},
//     "leaf": {"symbol": "L", "size": 0.1},     "symbol": "" for none
//     "seed": 0, "ring": 8, "max_modules": 2000000 }
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kinema/pipeline/job.h"
#include "kinema/procedural/lsystem.h"

namespace kinema::pipeline {

struct GrowSpec {
  std::string name;  ///< the preset's name, else the spec's "name", else empty
  LSystem system;
  double seconds = 5;  ///< s
  int ring = 8;        ///< vertices around a branch
};

/// Parses a spec. Throws kinema::Error naming `file` and the place: the line and column of
/// malformed JSON; the JSON pointer of a value that is missing, of the wrong type, out of range
/// or an unknown key; a rule's pointer and column ("/rules/1, column 7") with a caret under the
/// fault; "/rules" for probabilities that do not sum to 1.
GrowSpec parse_grow_spec(const std::string& json_text, const std::string& file);

/// The built-in presets: ABOP's bracketed plants of Fig. 1.24 a–f ("abop-1.24a" …), each with its
/// angle and derivation length (one generation a second, so the last frame is the figure's
/// string), a 3-D bush adapted from Fig. 1.25 ("bush-3d") and a stochastic weed after §1.7
/// ("stochastic-weed").
std::vector<std::string> grow_presets();

/// A preset's spec as JSON text. Throws kinema::UsageError listing the presets for another name.
std::string grow_preset_json(const std::string& name);

struct GrowRequest {
  std::string spec;               ///< SPEC.json, or empty with `preset`
  std::string preset;             ///< a built-in preset, or empty with `spec`
  std::string out;                ///< .glb .gltf .pc2 (with OUT's stem .obj beside it) or .obj
  std::optional<double> seconds;  ///< replaces the spec's
  int fps = 24;                   ///< frames a second (the growth is rounded down to whole frames)
  std::optional<int> ring;        ///< replaces the spec's
  std::optional<std::uint64_t> seed;
  Progress progress;
};

struct GrowReport {
  std::string name;
  double seconds = 0;  ///< grown, rounded down to whole frames
  int frames = 0;      ///< written (1 for .obj)
  std::size_t modules = 0, rewrites = 0, segments = 0, leaves = 0;
  std::size_t vertices = 0, triangles = 0;  ///< of every frame
  double height = 0, total_length = 0;      ///< m, of the grown plant
  double base_radius = 0;                   ///< m, of its first segment
  double seconds_per_frame = 0;             ///< wall clock: turtle and mesh
  std::vector<std::string> written;
};

/// Reads the spec (or takes the preset), derives, draws every frame and writes the output (each
/// file atomically; nothing written on failure). Progress stage: "growing" (frames). Throws
/// UsageError for OUT that is not .glb .gltf .pc2 .obj or is the spec, for neither or both of
/// spec and preset, an unknown preset, fps or seconds out of range, and for more frames ×
/// vertices than the format holds sensibly; kinema::Error (the spec's file and place) for a bad
/// spec or a derivation refused by its limits.
GrowReport run_grow(const GrowRequest& request);

}  // namespace kinema::pipeline
