// tools/kinema/verb_info.cpp — `kinema info FILE [--json] [--no-tree]`.
//
// Shows what a file holds: the joint tree (humanoid-mapped joints marked ★ with their VRM bone
// name), counts, clips, the source's format/units/axes/generator and the importer's warnings;
// for a .kmc its compression, for a .kmm motion-matching database its frames and features.
// --json prints the same as one JSON object (schema documented in docs / the verb's help).
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "info_summary.h"
#include "kinema/io/asset_file.h"
#include "kinema/pipeline/inspect.h"
#include "match_summary.h"

namespace kinema::cli {

VerbRun register_info(CLI::App& app, const GlobalOptions& global) {
  struct Args {
    std::string file;
    bool json = false;
    bool no_tree = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub =
      app.add_subcommand("info", "Show what a file holds: joints, clips, meshes, units");
  sub->add_option("FILE", args->file, "A .bvh .gltf .glb .vrm .fbx .dae .kmc .kmm or .kml file")
      ->required();
  sub->add_flag("--json", args->json,
                "Print one JSON object: file, format, joint_count, joints, clips, meshes, skins, "
                "source, humanoid, humanoid_source, humanoid_scheme (humanoid_missing: the "
                "first bone not found and its candidates) (and compressed for a .kmc); for a "
                ".kmm: file, format, "
                "database (frames, features, groups, memory, tags, clip variants); for a .kml: "
                "file, format, model (features, latent, joints, trained frames, networks)");
  sub->add_flag("--no-tree", args->no_tree, "Leave out the joint tree");
  return [args, &global]() {
    const pipeline::FileContents contents = pipeline::inspect_file(args->file, global.load);
    if (contents.database) {
      const match::Database& db = *contents.database;
      if (args->json) {
        nlohmann::ordered_json j;
        j["file"] = args->file;
        j["format"] = "kmm";
        j["database"] = database_json(db, contents.file_bytes);
        std::cout << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                  << '\n';
      } else {
        std::cout << args->file << " (kinema motion-matching database, format version "
                  << match::database_format_version << ")\n";
        print_database(db, contents.file_bytes, true, std::cout);
      }
      return kExitOk;
    }
    if (contents.model) {
      if (args->json) {
        nlohmann::ordered_json j;
        j["file"] = args->file;
        j["format"] = "kml";
        j["model"] = learned_model_json(*contents.model, contents.file_bytes);
        std::cout << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                  << '\n';
      } else {
        std::cout << args->file << " (kinema learned motion-matching model, format version "
                  << match::learned_format_version << ")\n";
        print_learned_model(*contents.model, contents.file_bytes, std::cout);
      }
      return kExitOk;
    }
    const Asset& asset = *contents.asset;
    if (args->json) {
      nlohmann::ordered_json j = asset_json(asset, args->file);
      if (contents.compressed) j["compressed"] = compressed_json(*contents.compressed);
      std::cout << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
    } else {
      print_info(asset, args->file, std::cout, !args->no_tree);
      if (contents.compressed) print_compressed(*contents.compressed, std::cout);
    }
    return kExitOk;
  };
}

}  // namespace kinema::cli
