// The checks every pipeline job makes on the file it is asked to write (kinema/pipeline/job.h).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "kinema/core/error.h"
#include "kinema/pipeline/job.h"
#include "pipeline_test_util.h"

namespace kinema::test {
namespace {

using pipeline::check_output_file;
using pipeline::NamedInput;

class OutputFile : public PipelineTest {};

/// The UsageError message of check_output_file, or "" when it accepts.
std::string refusal(const std::string& out, const std::string& in) {
  static constexpr std::string_view kExtensions[] = {"glb", "bvh"};
  const NamedInput inputs[] = {{"IN", in}};
  try {
    check_output_file(out, inputs, kExtensions, "convert");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST_F(OutputFile, RefusesFoldersInputsAndOtherFormats) {
  const std::string in = path("walk.bvh");
  std::ofstream(in) << "x";
  EXPECT_EQ(refusal(path("out.glb"), in), "");
  EXPECT_EQ(refusal(path("OUT.BVH"), in), "") << "extensions are case-insensitive";
  EXPECT_EQ(refusal(in, in), "OUT is the same file as IN (" + in +
                                 "); kinema never overwrites its input — choose another OUT");
  // The same file by another name is still the input.
  EXPECT_NE(refusal(dir_.string() + "/./walk.bvh", in), "");
  EXPECT_EQ(refusal(dir_.string(), in), "OUT " + dir_.string() +
                                            " is a folder; give a file name such as " +
                                            dir_.string() + "/out.glb");
  EXPECT_EQ(refusal(path("out.fbx"), in), "cannot write '.fbx' files (convert writes .glb .bvh)");
  EXPECT_EQ(refusal("", in), "convert needs an output file (.glb .bvh)");
  // Inputs with an empty path are not there (an optional input left out).
  const NamedInput none[] = {{"the avatar", ""}};
  EXPECT_NO_THROW(check_output_file(path("a.txt"), none, {}, "anything"));
}

TEST_F(OutputFile, SameFileCompares) {
  const std::string a = path("a.glb");
  std::ofstream(a) << "x";
  EXPECT_TRUE(pipeline::same_file(a, a));
  EXPECT_TRUE(pipeline::same_file(a, dir_.string() + "/../" + dir_.filename().string() + "/a.glb"));
  EXPECT_FALSE(pipeline::same_file(a, path("b.glb")));
  EXPECT_TRUE(pipeline::same_file(path("new.glb"), path("./new.glb"))) << "neither exists yet";
}

}  // namespace
}  // namespace kinema::test
