// tools/kinema/main.cpp — the `kinema` command: verb registration and error handling.
//
// Exit codes: 0 success, 1 usage (unknown flag, missing argument, nonsensical combination),
// 2 bad input or I/O failure. Every error is one line on stderr, "kinema: error: …", naming the
// file, the place and the reason when the library knows them.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/core/error.h"
#include "kinema/io/bvh.h"

namespace {

using namespace kinema::cli;

int print_error(const std::string& message, int code) {
  std::cout.flush();
  std::fprintf(stderr, "kinema: error: %s\n", message.c_str());
  return code;
}

/// The first command-line word that is neither an option nor the value of a global option that
/// takes one: the verb, or "" when there is none.
std::string first_positional(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--bvh-translation") {
      ++i;  // its value
      continue;
    }
    if (!arg.empty() && arg[0] == '-') continue;
    return arg;
  }
  return "";
}

int run(int argc, char** argv) {
  CLI::App app{
      "kinema — character animation toolkit.\n"
      "Reads BVH, glTF/GLB, VRM, FBX and Collada; writes BVH, glTF/GLB and VRM.",
      "kinema"};
  app.set_version_flag("--version", "kinema 0.1.0");
  app.require_subcommand(1);
  app.fallthrough();  // global flags may follow the verb

  GlobalOptions global;
  app.add_flag("-q,--quiet", global.quiet, "Print nothing but errors (and what a verb outputs)");
  app.add_flag("--progress", global.force_progress,
               "Draw progress bars on stderr even when it is not a terminal");
  app.add_flag("--no-progress", global.no_progress, "Never draw progress bars");
  app.add_option_function<std::string>(
         "--bvh-translation",
         [&global](const std::string& name) {
           global.load.bvh.translation = *kinema::bvh_translation_from_string(name);
         },
         "How BVH position channels combine with each joint's OFFSET: auto (default: decided "
         "per joint from the data, shown by `kinema info`), replace (the channels are the "
         "joint's local translation, as Blender reads them) or add (a displacement added to "
         "the OFFSET, as three.js reads them)")
      ->check(CLI::IsMember({"auto", "replace", "add"}));

  const std::vector<std::pair<std::string, VerbRun>> verbs = {
      // clang-format off
      {"info", register_info(app, global)},
      {"convert", register_convert(app, global)},
      {"retarget", register_retarget(app, global)},
      {"clean", register_clean(app, global)},
      {"demo", register_demo(app, global)},
      {"play", register_play(app, global)},
      {"ik", register_ik(app, global)},
      {"skin", register_skin(app, global)},
      {"vat", register_vat(app, global)},
      {"render", register_render(app, global)},
      {"match", register_match(app, global)},
      {"compress", register_compress(app, global)},
      {"decompress", register_decompress(app, global)},
      {"sim", register_sim(app, global)},
      {"ragdoll", register_ragdoll(app, global)},
      {"boids", register_boids(app, global)},
      {"drive", register_drive(app, global)},
      {"grow", register_grow(app, global)},
      {"crowd", register_crowd(app, global)},
      {"gait", register_gait(app, global)},
      {"key", register_key(app, global)},
      {"comp", register_comp(app, global)},
      {"undistort", register_undistort(app, global)},
      {"distort", register_distort(app, global)},
      {"track", register_track(app, global)},
      {"solve", register_solve(app, global)},
      {"view", register_view(app, global)},
      {"batch", register_batch(app, global)},
      // clang-format on
  };

  // An unknown verb is a usage error naming it, even when --help follows it (CLI11 would print
  // the main help for `kinema frobnicate --help` and exit 0).
  if (const std::string verb = first_positional(argc, argv); !verb.empty()) {
    std::string known;
    bool found = false;
    for (const auto& [name, run_verb] : verbs) {
      found = found || name == verb;
      known += (known.empty() ? "" : ", ") + name;
    }
    if (!found)
      return print_error("unknown verb '" + verb + "' (kinema knows " + known + ")", kExitUsage);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help/version to stdout, errors to stderr
    return code == 0 ? kExitOk : kExitUsage;
  }

  for (const auto& [name, run_verb] : verbs)
    if (app.get_subcommand(name)->parsed()) return run_verb();
  return print_error("no verb given (try kinema --help)", kExitUsage);
}

}  // namespace

int main(int argc, char** argv) {
  // A closed pipe (kinema info x.bvh | head) must not kill the process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  int code = kExitFailure;
  try {
    code = run(argc, argv);
  } catch (const kinema::UsageError& e) {
    code = print_error(e.what(), kExitUsage);
  } catch (const kinema::Error& e) {
    code = print_error(e.what(), kExitFailure);
  } catch (const std::bad_alloc&) {
    code = print_error("out of memory (the input is too large or malformed)", kExitFailure);
  } catch (const std::exception& e) {
    code = print_error(e.what(), kExitFailure);
  } catch (...) {
    code = print_error("unexpected failure", kExitFailure);
  }
  std::cout.flush();
  if (!std::cout.good() || std::fflush(stdout) != 0) {
    // Standard output could not be written (a full disk, /dev/full): that is an I/O failure,
    // unless the reader just went away (EPIPE), which is not worth reporting.
    if (code == kExitOk && errno != EPIPE) {
      std::fprintf(stderr, "kinema: error: cannot write to standard output\n");
      code = kExitFailure;
    }
  }
  return code;
}
