// tools/kinema/verb_view.cpp — `kinema view FILE… [--port N] [--no-open] [--viewer-dir DIR]`.
//
// Serves the web viewer (viewer/: three.js and three-vrm) and the files named on 127.0.0.1 only,
// until interrupted: skinned characters, VRM with spring bones, BVH, point caches, grounds with
// feet goals, motion matching along a stick path (kinema/pipeline/view.h; docs/viewer.md). What
// each request gets is decided by pipeline::view_respond; this file only binds the socket.
//
// Exit codes: 1 for a command line that makes no sense (no files, a kind kinema does not view, a
// .kmm without its PATH.json, an address other than the loopback, a port out of range, the page
// not installed); 2 for a file that cannot be read or is broken, or a port that cannot be bound.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <httplib.h>
#include <CLI/CLI.hpp>

#include "build_paths.h"
#include "cli.h"
#include "kinema/core/error.h"
#include "kinema/pipeline/view.h"

namespace kinema::cli {

namespace {

struct ViewArgs {
  std::vector<std::string> files;
  int port = 8642;
  std::string bind = "127.0.0.1";
  std::string viewer_dir;
  bool no_open = false;
};

std::string viewer_dir_of(const ViewArgs& a) {
  if (!a.viewer_dir.empty()) return a.viewer_dir;
  if (const char* env = std::getenv("KINEMA_VIEWER_DIR"); env && *env) return env;
  return build_paths::viewer();
}

/// Only the loopback: the viewer serves files from this machine and must never be reachable
/// from another.
void check_bind(const std::string& bind) {
  if (bind != "127.0.0.1" && bind != "localhost")
    throw UsageError("kinema view serves on 127.0.0.1 only (--bind " + bind +
                     " refused: the files it shows must not be reachable from other machines)");
}

int run_view(const ViewArgs& a, const GlobalOptions& global) {
  check_bind(a.bind);
  if (a.port < 0 || a.port > 65535)
    throw UsageError("--port must be 0 (any free port) … 65535, not " + std::to_string(a.port));
  pipeline::ViewOptions options;
  options.load = global.load;
  const pipeline::ViewSite site = pipeline::make_view_site(a.files, viewer_dir_of(a), options);

  httplib::Server server;
  int port = a.port;
  // A page on another name that resolves here (DNS rebinding) must not read the files: only
  // requests addressed to the loopback by name or number are answered.
  const auto host_ok = [&port](const httplib::Request& req) {
    const std::string host = req.get_header_value("Host");
    const std::string p = ":" + std::to_string(port);
    return host == "127.0.0.1" + p || host == "localhost" + p;
  };
  server.Get(".*", [&](const httplib::Request& req, httplib::Response& res) {
    if (!host_ok(req)) {
      res.status = 403;
      res.set_content("kinema view answers 127.0.0.1 and localhost only\n", "text/plain");
      return;
    }
    const pipeline::ViewResponse r = pipeline::view_respond(site, req.path);
    res.status = r.status;
    res.set_header("Cache-Control", "no-store");
    res.set_content(r.body, r.content_type.c_str());
  });
  if (a.port == 0) {
    port = server.bind_to_any_port("127.0.0.1");
    if (port <= 0) throw Error("", "127.0.0.1", "no free port to serve the viewer on");
  } else if (!server.bind_to_port("127.0.0.1", a.port)) {
    throw Error("", "127.0.0.1:" + std::to_string(a.port),
                "cannot listen there (in use? --port 0 picks a free port)");
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  // The address goes out even with --quiet: it is what the verb outputs (tests read it).
  std::cout << "kinema view: " << url << '\n';
  if (!global.quiet) {
    for (const pipeline::ViewFile& f : site.files)
      std::cout << "  " << pipeline::view_kind_name(f.kind) << "  " << f.path
                << (f.stick_path.empty() ? "" : " along " + f.stick_path) << '\n';
    std::cout << "  (Ctrl-C stops)\n";
  }
  std::cout.flush();
  if (!a.no_open && (std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY")) &&
      std::system("command -v xdg-open >/dev/null 2>&1") == 0)
    (void)std::system(("xdg-open " + url + " >/dev/null 2>&1 &").c_str());
  if (!server.listen_after_bind()) throw Error("", url, "the server stopped with an error");
  return kExitOk;
}

}  // namespace

VerbRun register_view(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<ViewArgs>();
  CLI::App* sub = app.add_subcommand(
      "view",
      "Serve a web viewer on 127.0.0.1 that plays characters, VRM, BVH, point caches, grounds "
      "with feet goals and motion matching (see docs/viewer.md)");
  sub->add_option("FILES", args->files,
                  "Files to show: .glb .gltf .vrm .bvh .pc2, a ground .png/.obj, a .kmm followed "
                  "by its PATH.json")
      ->required();
  sub->add_option("--port", args->port, "Port on 127.0.0.1 (0: any free port)")
      ->capture_default_str();
  sub->add_option("--bind", args->bind, "Address to listen on: 127.0.0.1 only")
      ->capture_default_str();
  sub->add_flag("--no-open", args->no_open, "Do not open a browser");
  sub->add_option("--viewer-dir", args->viewer_dir,
                  "The page's folder (default: $KINEMA_VIEWER_DIR, else the source's viewer/)");
  return [args, &global]() { return run_view(*args, global); };
}

}  // namespace kinema::cli
