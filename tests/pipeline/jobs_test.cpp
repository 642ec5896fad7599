// The pipeline jobs as a library user calls them: each reads its inputs, writes its outputs and
// returns the report the CLI prints. The CLI tests (tests/cli) run the same jobs through the
// `kinema` program; these check the reports and the refusals directly.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/asset_file.h"
#include "kinema/pipeline/compress.h"
#include "kinema/pipeline/convert.h"
#include "kinema/pipeline/feet.h"
#include "kinema/pipeline/inspect.h"
#include "kinema/pipeline/match.h"
#include "kinema/pipeline/skin_weights.h"
#include "kinema/pipeline/vat.h"
#include "pipeline_test_util.h"

namespace kinema::test {
namespace {

namespace fs = std::filesystem;
const std::string kWalk = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";
const std::string kFigure = kData + "/gltf/RiggedFigure.glb";

class Jobs : public PipelineTest {};

TEST_F(Jobs, ConvertReportsWhatItWrote) {
  pipeline::ConvertRequest request;
  request.in = kWalk;
  request.out = path("walk.glb");
  request.fps = 30;
  const pipeline::ConvertResult r = pipeline::convert_file(request);
  EXPECT_EQ(r.written.skeleton.joint_count(), 31);
  EXPECT_EQ(r.clip, 0);
  EXPECT_EQ(r.rate, 30);
  EXPECT_EQ(r.frames, std::lround(r.written.clips[0].duration * 30) + 1);
  EXPECT_FALSE(r.retargeted);
  EXPECT_EQ(load_asset(request.out).clips[0].frame_count(), r.frames);
  // Onto an avatar: the avatar's skeleton carries the clip.
  request.onto = kData + "/vrm/Godette_vrm_v4.vrm";
  request.out = path("godette_walk.vrm");
  const pipeline::ConvertResult onto = pipeline::convert_file(request);
  EXPECT_TRUE(onto.retargeted);
  EXPECT_EQ(onto.written.skeleton.joint_count(), load_asset(request.onto).skeleton.joint_count());
  // VRM Animation and FBX outputs: the walk on the VRM 1.0 robot as .vrma, the walk as FBX.
  request.onto = kData + "/vrm/debug_robot.vrm";
  request.out = path("robot_walk.vrma");
  pipeline::convert_file(request);
  const Asset vrma = load_asset(request.out);
  ASSERT_TRUE(vrma.humanoid.has_value());
  EXPECT_GE(vrma.humanoid->find("hips"), 0);
  ASSERT_EQ(vrma.clips.size(), 1u);
  EXPECT_NEAR(vrma.clips[0].duration, onto.written.clips[0].duration, 1e-5);
  const std::string onto_vrm = kData + "/vrm/Godette_vrm_v4.vrm";
  request.onto.clear();
  request.out = path("walk.fbx");
  pipeline::convert_file(request);
  EXPECT_EQ(load_asset(request.out).skeleton.joint_count(), 31);
  request.onto = onto_vrm;
  // Refusals come before anything is read or written.
  request.out = request.onto;
  EXPECT_THROW(pipeline::convert_file(request), UsageError);
  request.onto.clear();
  request.out = path("walk.dae");  // read, not written
  EXPECT_THROW(pipeline::convert_file(request), UsageError);
  request.out = path("x.glb");
  request.clip = "swim";
  EXPECT_THROW(pipeline::convert_file(request), UsageError);
  EXPECT_FALSE(fs::exists(path("x.glb")));
}

TEST_F(Jobs, CompressThenDecompress) {
  pipeline::CompressRequest request;
  request.inputs = {kWalk, kDemo + "/pab_walk.glb"};
  request.out_dir = path("kmc");
  int last = 0;
  const pipeline::CompressResult r =
      pipeline::compress_files(request, [&](const std::string& stage, long done, long total) {
        EXPECT_EQ(stage, "compressing");
        EXPECT_EQ(total, 2);
        last = int(done);
      });
  EXPECT_EQ(last, 2);
  ASSERT_EQ(r.clips.size(), 2u);
  EXPECT_EQ(r.outputs, (std::vector<std::string>{path("kmc/02_01.kmc"), path("kmc/pab_walk.kmc")}));
  EXPECT_EQ(r.raw_bytes, r.clips[0].stats.raw_bytes + r.clips[1].stats.raw_bytes);
  EXPECT_LE(r.max_error, 1e-4);
  EXPECT_GT(r.ratio, 5);
  EXPECT_EQ(r.file_bytes, fs::file_size(r.outputs[0]) + fs::file_size(r.outputs[1]));
  // Back to BVH: one clip, every frame.
  const pipeline::DecompressResult d = pipeline::decompress_file({r.outputs[0], path("w.bvh"), ""});
  EXPECT_EQ(d.clips_written, 1u);
  EXPECT_EQ(load_asset(path("w.bvh")).clips[0].frame_count(), 343);
  // Two inputs with one stem would write one file twice: refused before anything is read.
  request.inputs = {kWalk, kWalk};
  request.out_dir = path("again");
  EXPECT_THROW(pipeline::compress_files(request), UsageError);
  EXPECT_FALSE(fs::exists(path("again")));
  EXPECT_THROW(pipeline::decompress_file({kWalk, path("x.bvh"), ""}), UsageError);
}

TEST_F(Jobs, FeetOnTheStairs) {
  pipeline::FeetRequest request;
  request.in = kDemo + "/walk.bvh";
  request.ground = kDemo + "/stairs.obj";
  request.out = path("stairs.glb");
  request.options.follow_ground = true;
  const pipeline::FeetResult r = pipeline::place_feet(request);
  EXPECT_EQ(r.legs, (std::vector<std::string>{"left", "right"}));
  EXPECT_NE(r.ground.find("mesh"), std::string::npos) << r.ground;
  EXPECT_LT(r.report.after.overall.penetration_mean, r.report.before.overall.penetration_mean);
  EXPECT_EQ(load_asset(request.out).clips.size(), 1u);
  request.ground = kDemo + "/walk.bvh";
  EXPECT_THROW(pipeline::place_feet(request), UsageError) << "a ground must be .png or .obj";
}

TEST_F(Jobs, InspectReadsAssetsCompressedAnimationsAndDatabases) {
  const pipeline::FileContents bvh = pipeline::inspect_file(kWalk);
  ASSERT_TRUE(bvh.asset.has_value());
  EXPECT_FALSE(bvh.compressed || bvh.database);
  pipeline::CompressRequest compress;
  compress.inputs = {kWalk};
  compress.out_dir = dir_.string();
  pipeline::compress_files(compress);
  const pipeline::FileContents kmc = pipeline::inspect_file(path("02_01.kmc"));
  ASSERT_TRUE(kmc.asset && kmc.compressed);
  EXPECT_EQ(kmc.compressed->clips.size(), 1u);
  pipeline::MatchBuildRequest build;
  build.inputs = {kDemo + "/pab_walk.glb"};
  build.out = path("walk.kmm");
  const pipeline::MatchBuildResult built = pipeline::build_match_database(build);
  const pipeline::FileContents kmm = pipeline::inspect_file(build.out);
  ASSERT_TRUE(kmm.database.has_value());
  EXPECT_FALSE(kmm.asset.has_value());
  EXPECT_EQ(kmm.file_bytes, built.file_bytes);
  EXPECT_EQ(kmm.database->frames(), built.database.frames());
  EXPECT_THROW(pipeline::inspect_file(dir_.string()), Error);
}

TEST_F(Jobs, MatchBuildThenRun) {
  pipeline::MatchBuildRequest build;
  build.inputs = {kDemo + "/pab_walk.glb", kDemo + "/pab_run.glb"};
  build.out = path("loco.kmm");
  build.database.mirror = true;
  const pipeline::MatchBuildResult b = pipeline::build_match_database(build);
  EXPECT_EQ(b.clip_count, 2u);
  EXPECT_EQ(b.input_count, 2u);
  EXPECT_EQ(b.database.clips.size(), 4u) << "two clips, each mirrored";
  write_file_atomically(
      path("path.json"),
      R"({"duration": 2, "keys": [{"time": 0, "direction": [0, 1], "speed": 2}]})");
  pipeline::MatchRunRequest run;
  run.database = build.out;
  run.path = path("path.json");
  run.out = path("run.glb");
  const pipeline::MatchRunResult r = pipeline::run_match_along_path(run);
  EXPECT_EQ(r.fps, 30);
  EXPECT_EQ(r.run.frames, 61);
  EXPECT_EQ(load_asset(run.out).clips[0].frame_count(), 61);
  run.tags = "sprint";
  run.out = path("tagged.glb");
  EXPECT_THROW(pipeline::run_match_along_path(run), UsageError) << "no such tag";
  build.out = path("loco.bin");
  EXPECT_THROW(pipeline::build_match_database(build), UsageError);
  build.out = path("x.kmm");
  build.skip_frames = -1;
  EXPECT_THROW(pipeline::build_match_database(build), UsageError);
}

TEST_F(Jobs, BakeWeightsReportsEveryMesh) {
  pipeline::BakeWeightsRequest request;
  request.in = kFigure;
  request.out = path("figure.glb");
  request.poses = 6;
  const pipeline::BakeWeightsResult r = pipeline::bake_weights_file(request);
  ASSERT_EQ(r.meshes.size(), 1u);
  EXPECT_EQ(r.poses, 6u);
  EXPECT_LE(r.meshes[0].rms_after, r.meshes[0].rms_before);
  // OUT carries the new weights (the source document is kept, with JOINTS_n/WEIGHTS_n rewritten).
  const Asset baked = load_asset(request.out);
  ASSERT_EQ(baked.meshes.size(), 1u);
  EXPECT_NE(baked.meshes[0].weights, load_asset(kFigure).meshes[0].weights);
  // Random poses are seeded: the same seed, the same poses.
  const Asset figure = load_asset(kFigure);
  const auto a = pipeline::sample_pose_models(figure.skeleton, nullptr, 3, 0.5, 7);
  const auto b = pipeline::sample_pose_models(figure.skeleton, nullptr, 3, 0.5, 7);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, pipeline::sample_pose_models(figure.skeleton, nullptr, 3, 0.5, 8));
}

TEST_F(Jobs, VatWritesTextureAndMetadata) {
  pipeline::VatRequest request;
  request.in = kFigure;
  request.out = path("figure.json");
  const pipeline::VatResult r = pipeline::bake_vat_file(request);
  EXPECT_EQ(r.files.texture_path, path("figure.dds"));
  EXPECT_EQ(fs::file_size(r.files.texture_path), r.files.texture_bytes);
  EXPECT_GT(r.bake.frame_count, 1u);
  request.out = path("figure.dds");
  EXPECT_THROW(pipeline::bake_vat_file(request), UsageError);
}

}  // namespace
}  // namespace kinema::test
