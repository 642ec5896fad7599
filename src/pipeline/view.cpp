// What `kinema view` serves: the files sorted and checked, and request paths answered
// (kinema/pipeline/view.h). The JSON conversions are in view_convert.cpp.
#include "kinema/pipeline/view.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "view_convert.h"

namespace kinema::pipeline {

namespace fs = std::filesystem;

const char* view_kind_name(ViewKind kind) {
  switch (kind) {
    case ViewKind::gltf:
      return "gltf";
    case ViewKind::vrm:
      return "vrm";
    case ViewKind::bvh:
      return "bvh";
    case ViewKind::points:
      return "points";
    case ViewKind::ground:
      return "ground";
    case ViewKind::match:
      return "match";
  }
  return "?";
}

namespace {

bool is_clip_kind(ViewKind k) {
  return k == ViewKind::gltf || k == ViewKind::vrm || k == ViewKind::bvh;
}

ViewKind kind_of(const std::string& path) {
  const std::string ext = extension_of(path);
  if (ext == "glb" || ext == "gltf") return ViewKind::gltf;
  if (ext == "vrm") return ViewKind::vrm;
  if (ext == "bvh") return ViewKind::bvh;
  if (ext == "pc2") return ViewKind::points;
  if (ext == "png" || ext == "obj") return ViewKind::ground;
  if (ext == "kmm") return ViewKind::match;
  throw UsageError(
      "kinema view shows .glb .gltf .vrm .bvh .pc2 .kmm (with its PATH.json) and "
      "grounds (.png .obj), not '" +
      path + "'");
}

/// The files a .gltf names beside it (buffers and images with a relative uri): served with it,
/// since the page's loader asks for them relative to the .gltf's address.
void add_gltf_resources(ViewFile& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(file.body);
  } catch (const nlohmann::json::exception& e) {
    throw Error(file.path, "", std::string("not JSON: ") + e.what());
  }
  const fs::path folder = fs::path(file.path).parent_path();
  for (const char* list : {"buffers", "images"}) {
    if (!j.contains(list) || !j[list].is_array()) continue;
    for (size_t i = 0; i < j[list].size(); ++i) {
      const nlohmann::json& item = j[list][i];
      if (!item.contains("uri") || !item["uri"].is_string()) continue;
      const std::string uri = item["uri"];
      if (uri.starts_with("data:")) continue;
      const std::string place = std::string("/") + list + "/" + std::to_string(i) + "/uri";
      if (uri.find('/') != std::string::npos || uri.find('\\') != std::string::npos ||
          uri.starts_with("."))
        throw Error(file.path, place,
                    "'" + uri + "' is not a file beside the .gltf (the viewer serves only those)");
      const fs::path resource = folder / uri;
      // A missing image only leaves a texture out (three.js goes on without it); a missing
      // buffer is an error kinema's reader reports too.
      if (std::string_view(list) == "images" && !fs::is_regular_file(resource)) continue;
      file.resources[uri] = read_file(resource.string());
    }
  }
}

}  // namespace

ViewSite make_view_site(const std::vector<std::string>& files, const std::string& viewer_dir,
                        const ViewOptions& options) {
  if (files.empty()) throw UsageError("kinema view needs at least one file to show");
  const fs::path dir(viewer_dir);
  if (!fs::is_regular_file(dir / "index.html"))
    throw UsageError("the viewer's page is not in '" + viewer_dir +
                     "' (no index.html; --viewer-dir names the folder)");
  if (!fs::is_regular_file(dir / "node_modules/three/build/three.module.js") ||
      !fs::is_regular_file(dir / "node_modules/@pixiv/three-vrm/lib/three-vrm.module.js"))
    throw UsageError("the viewer's npm modules are not installed in '" + viewer_dir +
                     "/node_modules' (run bash scripts/setup.sh, or npm ci in that folder)");
  ViewSite site;
  site.viewer_dir = viewer_dir;
  for (size_t i = 0; i < files.size(); ++i) {
    ViewFile f;
    f.path = files[i];
    f.name = fs::path(f.path).filename().string();
    f.kind = kind_of(f.path);
    if (fs::is_directory(f.path)) throw Error(f.path, "", "is a folder, not a file");
    if (f.kind == ViewKind::match) {
      if (i + 1 >= files.size() || extension_of(files[i + 1]) != "json")
        throw UsageError("a motion-matching database is shown along a stick path: kinema view " +
                         f.path + " PATH.json");
      f.stick_path = files[++i];
    }
    site.files.push_back(std::move(f));
  }
  // Read and check every file now, so that a bad one fails before anything is served.
  const ViewFile* clip_file = nullptr;
  for (const ViewFile& f : site.files)
    if (!clip_file && is_clip_kind(f.kind)) clip_file = &f;
  for (ViewFile& f : site.files) {
    switch (f.kind) {
      case ViewKind::gltf:
      case ViewKind::vrm:
      case ViewKind::bvh:
        f.body = read_file(f.path);
        if (extension_of(f.path) == "gltf") add_gltf_resources(f);
        (void)load_asset(f.path, options.load);  // kinema's readers check it
        break;
      case ViewKind::points:
        f.body = point_cache_json(f.path);
        break;
      case ViewKind::ground:
        f.body = ground_json(f.path, clip_file ? clip_file->path : "", options);
        break;
      case ViewKind::match:
        f.body = match_debug_json(f.path, f.stick_path, options);
        break;
    }
  }
  return site;
}

namespace {

ViewResponse not_found(const std::string& path) {
  return {404, "text/plain; charset=utf-8", "not found: " + path + "\n"};
}

const char* mime_of(const std::string& name) {
  const std::string ext = extension_of(name);
  if (ext == "html") return "text/html; charset=utf-8";
  if (ext == "js" || ext == "mjs") return "text/javascript; charset=utf-8";
  if (ext == "css") return "text/css; charset=utf-8";
  if (ext == "json") return "application/json";
  if (ext == "glb" || ext == "vrm") return "model/gltf-binary";
  if (ext == "gltf") return "model/gltf+json";
  if (ext == "png") return "image/png";
  if (ext == "jpg" || ext == "jpeg") return "image/jpeg";
  return "application/octet-stream";
}

/// A path of plain segments ([A-Za-z0-9_.-], no segment starting with '.'), so that it cannot
/// leave the folder it is joined to.
bool plain_relative(std::string_view p) {
  if (p.empty()) return false;
  size_t start = 0;
  while (start <= p.size()) {
    const size_t end = std::min(p.find('/', start), p.size());
    const std::string_view seg = p.substr(start, end - start);
    if (seg.empty() || seg[0] == '.') return false;
    for (const char c : seg)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
        return false;
    start = end + 1;
  }
  return true;
}

ViewResponse serve_disk(const fs::path& file, const std::string& request) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return not_found(request);
  try {
    return {200, mime_of(file.string()), read_file(file.string())};
  } catch (const Error&) {
    return not_found(request);
  }
}

std::string files_json(const ViewSite& site) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (size_t i = 0; i < site.files.size(); ++i) {
    const ViewFile& f = site.files[i];
    nlohmann::ordered_json j;
    j["name"] = f.name;
    j["kind"] = view_kind_name(f.kind);
    j["url"] = "/api/file/" + std::to_string(i) + "/" + f.name;
    if (!f.stick_path.empty()) j["stick_path"] = fs::path(f.stick_path).filename().string();
    list.push_back(std::move(j));
  }
  return list.dump();
}

}  // namespace

ViewResponse view_respond(const ViewSite& site, const std::string& path) {
  const fs::path dir(site.viewer_dir);
  if (path == "/" || path == "/index.html") return serve_disk(dir / "index.html", path);
  if (path.starts_with("/app/")) {
    const std::string rest = path.substr(5);
    if (!plain_relative(rest) || rest.find('/') != std::string::npos) return not_found(path);
    return serve_disk(dir / "app" / rest, path);
  }
  // three.js: only its ES-module build and its examples (loaders, controls).
  if (path.starts_with("/three/build/") || path.starts_with("/three/examples/jsm/")) {
    const std::string rest = path.substr(7);
    if (!plain_relative(rest)) return not_found(path);
    return serve_disk(dir / "node_modules/three" / rest, path);
  }
  if (path == "/three-vrm.js")
    return serve_disk(dir / "node_modules/@pixiv/three-vrm/lib/three-vrm.module.js", path);
  if (path == "/api/files") return {200, "application/json", files_json(site)};
  if (path.starts_with("/api/file/")) {
    // /api/file/<i>/<name>: the file; /api/file/<i>/<resource>: what a .gltf names beside it.
    const std::string rest = path.substr(10);
    const size_t slash = rest.find('/');
    if (slash == std::string::npos || slash == 0 || slash > 6) return not_found(path);
    size_t index = 0;
    for (size_t k = 0; k < slash; ++k) {
      if (!std::isdigit(static_cast<unsigned char>(rest[k]))) return not_found(path);
      index = index * 10 + size_t(rest[k] - '0');
    }
    if (index >= site.files.size()) return not_found(path);
    const ViewFile& f = site.files[index];
    const std::string name = rest.substr(slash + 1);
    if (name == f.name) {
      const bool converted =
          f.kind == ViewKind::points || f.kind == ViewKind::ground || f.kind == ViewKind::match;
      return {200, converted ? "application/json" : mime_of(f.name), f.body};
    }
    const auto it = f.resources.find(name);
    if (it != f.resources.end()) return {200, mime_of(name), it->second};
    return not_found(path);
  }
  return not_found(path);
}

}  // namespace kinema::pipeline
