// kinema/pipeline/view.h — what `kinema view` serves, as library calls without sockets: the files
// named on the command line sorted into kinds and checked, and every request path answered from
// the viewer's page, its npm modules and those files — nothing else from disk (docs/viewer.md).
//
// glTF/GLB, VRM and BVH go to the page as they are (three.js reads them); kinema's own formats are
// turned into JSON the page draws: point caches (PC2, with the particle sidecar and hair strands
// found beside them), grounds (a height-map PNG or an OBJ mesh, sampled into a height grid), and
// motion matching (a .kmm run along a stick path, with its trajectory and chosen frames).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kinema/io/asset_file.h"

namespace kinema::pipeline {

enum class ViewKind {
  gltf,    ///< .glb .gltf: skinned characters, morph-target caches (cloth), node animation
  vrm,     ///< .vrm: played with its spring bones
  bvh,     ///< .bvh: a skeleton
  points,  ///< .pc2: a point cache (+ .kpa sidecar, + .obj strands beside it)
  ground,  ///< .png height map or .obj mesh: the ground of `kinema ik feet`, with feet goals
  match,   ///< .kmm + PATH.json: motion matching along a stick, with its debug lines
};

/// "gltf", "vrm", …: the name the page and its state use.
const char* view_kind_name(ViewKind kind);

/// One file the viewer serves.
struct ViewFile {
  std::string path;  ///< as given
  std::string name;  ///< its file name, for the page
  ViewKind kind = ViewKind::gltf;
  std::string stick_path;  ///< match: the PATH.json that drives it
  std::string body;        ///< what /api/file/<i> answers: the bytes, or the JSON conversion
  /// .gltf: the buffers and images it names beside it (served with it, nothing else).
  std::map<std::string, std::string> resources;
};

struct ViewSite {
  std::string viewer_dir;  ///< the page: index.html, app/, node_modules/ (npm ci)
  std::vector<ViewFile> files;
};

struct ViewOptions {
  LoadOptions load;  ///< how BVH files are read when checked (the page reads them with three.js)
  /// Frames of the ground's feet goals and of motion matching: at most this many are sent.
  int max_frames = 3000;
};

/// Sorts `files` into kinds by extension (a .kmm takes the .json after it as its stick path),
/// reads and checks each with kinema's readers and converts kinema's formats to JSON, so that a
/// bad file fails here, before anything is served. Throws UsageError for no files, a kind kinema
/// does not view, a .kmm without its PATH.json, a viewer folder without index.html or without
/// its npm modules (say how to install them); kinema::Error (file, place, reason) for a file
/// that cannot be read or is broken.
ViewSite make_view_site(const std::vector<std::string>& files, const std::string& viewer_dir,
                        const ViewOptions& options = {});

struct ViewResponse {
  int status = 200;
  std::string content_type;
  std::string body;
};

/// The answer to a GET of `path` (the URL's path, without query): "/" the page, "/app/NAME" its
/// scripts and styles, "/three/…" three.js's build and examples, "/three-vrm.js" three-vrm,
/// "/api/files" the list of files (JSON: name, kind, url), "/api/file/<i>" a file. Anything
/// else — other paths on disk, "..", unknown indices — is 404. Never throws for a bad path.
ViewResponse view_respond(const ViewSite& site, const std::string& path);

/// The JSON the page draws for a point cache (`pc2`), with its sidecar and strands beside it.
std::string point_cache_json(const std::string& pc2);

}  // namespace kinema::pipeline
