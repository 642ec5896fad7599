// tools/kinema/verb_batch.cpp — `kinema batch MANIFEST.json [--scheduler ADDR] [--workers N]
// [--sequential] [--force] [--report FILE]`.
//
// Runs one verb (compress, retarget, clean, convert, decompress) over every input a manifest
// lists, on a Dask distributed cluster: the batch runner is Python (python/kinema/batch.py, on
// the kinema Python package), so this verb starts `python3 -m kinema.batch` with the same
// arguments and returns its exit code. It finds the package next to this build (the build
// tree's python/ folder) or installed; KINEMA_PYTHON names another interpreter.
//
// Exit codes: those of the runner — 0 every item done (or skipped as already done), 2 an
// unusable manifest or a failed item (the rest of the batch still runs), 1 a bad command line.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "build_paths.h"
#include "cli.h"
#include "kinema/core/error.h"

extern char** environ;

namespace kinema::cli {

namespace {

struct BatchArgs {
  std::string manifest, scheduler, report;
  int workers = 0;
  bool sequential = false, force = false;
};

bool is_file(const std::string& path) {
  struct stat s {};
  return ::stat(path.c_str(), &s) == 0 && S_ISREG(s.st_mode);
}

int run_batch(const BatchArgs& a, const GlobalOptions& global) {
  std::string python = "python3";
  if (const char* chosen = std::getenv("KINEMA_PYTHON"); chosen && *chosen)
    python = chosen;
  else if (is_file("/usr/bin/python3"))
    python = "/usr/bin/python3";  // Debian's, with Dask
  // Run from a build tree: its assembled package comes first.
  const std::string build_package = build_paths::python_build();
  if (is_file(build_package + "/kinema/__init__.py")) {
    const char* old = std::getenv("PYTHONPATH");
    const std::string path = build_package + (old && *old ? ":" + std::string(old) : "");
    ::setenv("PYTHONPATH", path.c_str(), 1);
  }
  std::vector<std::string> args = {python, "-m", "kinema.batch", a.manifest};
  if (!a.scheduler.empty()) args.insert(args.end(), {"--scheduler", a.scheduler});
  if (a.workers > 0) args.insert(args.end(), {"--workers", std::to_string(a.workers)});
  if (a.sequential) args.push_back("--sequential");
  if (a.force) args.push_back("--force");
  if (!a.report.empty()) args.insert(args.end(), {"--report", a.report});
  if (global.quiet || global.no_progress) args.push_back("--quiet");
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t child = 0;
  if (const int e = ::posix_spawnp(&child, python.c_str(), nullptr, nullptr, argv.data(), environ))
    throw Error(python, "",
                std::string("cannot start the batch runner (") + std::strerror(e) +
                    "): kinema batch needs python3 with the kinema package and "
                    "python3-distributed (scripts/setup.sh installs them)");
  int status = 0;
  while (::waitpid(child, &status, 0) < 0)
    if (errno != EINTR) throw Error(python, "", "lost the batch runner");
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  throw Error(python, "",
              "the batch runner was killed by signal " +
                  std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0));
}

}  // namespace

VerbRun register_batch(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<BatchArgs>();
  CLI::App* sub = app.add_subcommand(
      "batch", "Run one verb over a whole library on a Dask cluster (resumable; docs/batch.md)");
  sub->add_option("MANIFEST", args->manifest,
                  "The batch's manifest (JSON: verb, inputs, out_dir, "
                  "options)")
      ->required();
  sub->add_option("--scheduler", args->scheduler,
                  "A Dask scheduler's address, e.g. tcp://10.0.0.1:8786 (default: a LocalCluster "
                  "on this machine)");
  sub->add_option("--workers", args->workers, "LocalCluster worker processes (default 2)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--sequential", args->sequential,
                "Run every item in one process, one after another (no Dask)");
  sub->add_flag("--force", args->force, "Rerun items that are already done");
  sub->add_option("--report", args->report, "Write every item's result to this JSON file");
  return [args, &global]() { return run_batch(*args, global); };
}

}  // namespace kinema::cli
