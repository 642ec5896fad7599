// Outputs of a many-file job, staged beside their targets and moved into place only when the
// whole job has succeeded (module-private: comp.cpp, lens.cpp, render_plate.cpp, sim_smoke.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/core/file.h"

namespace kinema::pipeline {

/// Each add() writes its bytes (atomically) under a hidden name in the target's folder; commit()
/// renames them all into place. Destroyed without commit() — a later frame failed — it removes
/// what it staged, so the targets are untouched.
class StagedOutputs {
 public:
  StagedOutputs() = default;
  StagedOutputs(const StagedOutputs&) = delete;
  StagedOutputs& operator=(const StagedOutputs&) = delete;
  ~StagedOutputs() {
    std::error_code ec;
    for (const auto& [staged, target] : files_) std::filesystem::remove(staged, ec);
  }
  void add(const std::string& target, const std::string& bytes) {
    write_file_atomically(stage(target), bytes);
  }
  /// For a writer that writes the file itself (write_vdb): the hidden path to write `target` to,
  /// listed before it is written, so that a write failing midway is removed too.
  std::string stage(const std::string& target) {
    const std::filesystem::path t(target);
    const std::filesystem::path staged =
        (t.has_parent_path() ? t.parent_path() : std::filesystem::path(".")) /
        ("." + t.filename().string() + ".kinema-staged");
    files_.emplace_back(staged.string(), target);
    return staged.string();
  }
  /// Moves every staged file into place; returns the targets in the order they were added.
  std::vector<std::string> commit() {
    std::vector<std::string> written;
    for (const auto& [staged, target] : files_) {
      std::error_code ec;
      std::filesystem::rename(staged, target, ec);
      if (ec)
        throw Error(target, "", "cannot move the finished output into place: " + ec.message());
      written.push_back(target);
    }
    files_.clear();
    return written;
  }

 private:
  std::vector<std::pair<std::string, std::string>> files_;  ///< (staged, target)
};

}  // namespace kinema::pipeline
