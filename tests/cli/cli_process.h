// tests/cli/cli_process.h — running the `kinema` program from a test: a scratch folder per test
// (kept when the test fails, for a look), the program run through the shell with its stdout and
// stderr captured, and small file helpers.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "test_paths.h"

namespace kinema::test {

/// What one run of the program gave: its exit code (128 + signal when killed), stdout, stderr.
struct CliRun {
  int code = -1;
  std::string out, err;
};

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_all(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

/// `s` quoted for the POSIX shell.
inline std::string sh_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// A fixture with a fresh scratch folder named `prefix` + test name + pid.
class CliProcessTest : public ::testing::Test {
 protected:
  explicit CliProcessTest(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    // The focused sanitizer build (preset asan-focus) has no CLI: its process tests run in the
    // release pass only.
    if (test_paths::cli_path().empty()) GTEST_SKIP() << "no kinema CLI in this build";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::string(info->name()) + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  /// Runs `kinema ARGS` (ARGS as the shell reads them) with no stdin.
  CliRun kinema(const std::string& args) { return kinema_env("", args); }
  /// The same with environment settings `env` ("NAME=value …", through /usr/bin/env).
  CliRun kinema_env(const std::string& env, const std::string& args) {
    const std::filesystem::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string cmd = (env.empty() ? std::string() : "/usr/bin/env " + env + " ") +
                            sh_quote(test_paths::cli_path()) + " " + args + " >" +
                            sh_quote(out.string()) + " 2>" + sh_quote(err.string()) + " </dev/null";
    const int status = std::system(cmd.c_str());
    CliRun r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_all(out);
    r.err = read_all(err);
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
  }

  /// `name` in the scratch folder.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace kinema::test
