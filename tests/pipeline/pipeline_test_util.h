// tests/pipeline/pipeline_test_util.h — a scratch folder per test for the pipeline jobs, which
// read and write files.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "test_paths.h"

namespace kinema::test {

inline const std::string kData = test_paths::data_dir();
inline const std::string kDemo = test_paths::source_dir() + "/data/demo";

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("kinema_pipeline_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }
  /// `name` in the scratch folder.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  /// How many files the scratch folder holds.
  size_t file_count() const {
    size_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_))
      n += e.is_regular_file();
    return n;
  }

  std::filesystem::path dir_;
};

}  // namespace kinema::test
