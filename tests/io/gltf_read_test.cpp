// glTF / GLB reading: real Khronos sample files, interpolation, morph targets, and hostile
// input (every failure is a kinema::Error naming the file and a JSON pointer, never a crash).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "io/gltf_bytes.h"
#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/gltf.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir() + "/gltf/";

std::string temp_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("kinema_gltf_read_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir.string();
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

using test::b64;
using test::floats;

// Two nodes, one translation animation with 3 keys at 30 fps. `patch` edits the JSON text.
struct Tiny {
  std::string nodes = R"([{"name":"root","children":[1]},{"name":"child","translation":[0,1,0]}])";
  std::string count = "3";
  std::string data = floats({0.f, 1.f / 30, 2.f / 30, 0, 0, 0, 1, 0, 0, 2, 0, 0});
  std::string json() const {
    return R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":)" + nodes +
           R"(,"buffers":[{"byteLength":48,"uri":"data:application/octet-stream;base64,)" +
           b64(data) +
           R"("}],"bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":12},{"buffer":0,"byteOffset":12,"byteLength":36}],)"
           R"("accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"SCALAR","min":[0],"max":[0.0666667]},)"
           R"({"bufferView":1,"componentType":5126,"count":)" +
           count +
           R"(,"type":"VEC3"}],)"
           R"("animations":[{"channels":[{"sampler":0,"target":{"node":1,"path":"translation"}}],)"
           R"("samplers":[{"input":0,"output":1}]}]})";
  }
};

Error read_error(const std::string& path) {
  try {
    read_gltf(path);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << path;
  return Error(path, "", "no error");
}

TEST(Gltf, ReadsRiggedSimple) {
  const Asset a = read_gltf(kData + "rigged_simple.gltf");
  EXPECT_EQ(a.source.format, "gltf");
  EXPECT_EQ(a.skeleton.joint_count(), 5);
  ASSERT_EQ(a.skins.size(), 1u);
  EXPECT_EQ(a.skins[0].joints.size(), 2u);
  ASSERT_EQ(a.meshes.size(), 1u);
  EXPECT_EQ(a.meshes[0].influences, 4);
  EXPECT_EQ(a.meshes[0].skin, 0);
  EXPECT_EQ(a.meshes[0].indices.size() % 3, 0u);
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_NEAR(a.clips[0].duration, 2.083, 1e-3);
  // Node "Z_UP" has a matrix: decomposed into a rotation of −90° about X.
  const int z_up = a.skeleton.find("Z_UP");
  ASSERT_GE(z_up, 0);
  EXPECT_NEAR(angle_between(a.skeleton.joint(z_up).rest.rotation,
                            Quat::from_axis_angle(Vec3::unit_x(), -kPi / 2)),
              0, 1e-9);
  ASSERT_TRUE(a.gltf != nullptr);
}

TEST(Gltf, ReadsRiggedFigureGlb) {
  const Asset a = read_gltf(kData + "RiggedFigure.glb");
  EXPECT_EQ(a.source.format, "glb");
  EXPECT_EQ(a.skeleton.joint_count(), 22);
  EXPECT_EQ(a.skeleton.find("node_0"), 0);  // unnamed nodes get "node_<i>"
  ASSERT_EQ(a.skins.size(), 1u);
  EXPECT_EQ(a.skins[0].joints.size(), 19u);
  ASSERT_EQ(a.meshes.size(), 1u);
  const Mesh& m = a.meshes[0];
  ASSERT_EQ(m.weights.size(), m.vertex_count() * 4);
  for (size_t v = 0; v < m.vertex_count(); ++v) {
    double sum = 0;
    for (int k = 0; k < 4; ++k) sum += m.weights[v * 4 + static_cast<size_t>(k)];
    ASSERT_NEAR(sum, 1.0, 1e-6);
  }
  for (int j : a.skins[0].joints) EXPECT_TRUE(a.skeleton.joint(j).inverse_bind.has_value());
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_NEAR(a.clips[0].duration, 1.25, 1e-6);
}

// W_j · B_j⁻¹ is the same matrix for every joint of the skin at rest (the mesh's bind frame):
// the inverse bind matrices reproduce the bind pose.
TEST(Gltf, InverseBindMatricesReproduceBindPose) {
  for (const char* file : {"RiggedFigure.glb", "rigged_simple.gltf", "greenman.glb"}) {
    const Asset a = read_gltf(kData + file);
    const auto model = rest_model_matrices(a.skeleton);
    const Skin& s = a.skins.at(0);
    const Mat4 first = model[static_cast<size_t>(s.joints[0])] * s.inverse_bind[0];
    for (size_t k = 0; k < s.joints.size(); ++k) {
      const Mat4 p = model[static_cast<size_t>(s.joints[k])] * s.inverse_bind[k];
      for (int i = 0; i < 16; ++i) EXPECT_NEAR(p.m[i], first.m[i], 2e-4) << file << " joint " << k;
    }
  }
}

TEST(Gltf, CubicSplineSamplingMatchesHermite) {
  const Asset a = read_gltf(kData + "interpolation_test.gltf");
  ASSERT_EQ(a.clips.size(), 9u);
  const Clip* cubic = nullptr;
  for (const auto& c : a.clips)
    if (c.name == "CubicSpline Translation") cubic = &c;
  ASSERT_NE(cubic, nullptr);
  const Keyframes<Vec3>* k = nullptr;
  for (const auto& t : cubic->tracks)
    if (!t.translation.empty()) k = &t.translation;
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->interpolation, Interpolation::CubicSpline);
  ASSERT_EQ(k->values.size(), 3 * k->times.size());
  ASSERT_GE(k->times.size(), 2u);
  const double t0 = k->times[0], t1 = k->times[1], dt = t1 - t0;
  const double s = 0.37, t = t0 + s * dt;
  const Vec3 p0 = k->values[1], m0 = k->values[2], m1 = k->values[3], p1 = k->values[4];
  const double s2 = s * s, s3 = s2 * s;
  const Vec3 expect = p0 * (2 * s3 - 3 * s2 + 1) + m0 * (dt * (s3 - 2 * s2 + s)) +
                      p1 * (-2 * s3 + 3 * s2) + m1 * (dt * (s3 - s2));
  const Vec3 got = sample(*k, t, Vec3{});
  EXPECT_NEAR(got.x, expect.x, 1e-9);
  EXPECT_NEAR(got.y, expect.y, 1e-9);
  EXPECT_NEAR(got.z, expect.z, 1e-9);
}

TEST(Gltf, ReadsEveryInterpolationAndPath) {
  const Asset a = read_gltf(kData + "interpolation_test.gltf");
  int step = 0, linear = 0, cubic = 0, t = 0, r = 0, s = 0;
  for (const auto& c : a.clips)
    for (const auto& tr : c.tracks) {
      auto count = [&](Interpolation i) {
        step += i == Interpolation::Step;
        linear += i == Interpolation::Linear;
        cubic += i == Interpolation::CubicSpline;
      };
      if (!tr.translation.empty()) ++t, count(tr.translation.interpolation);
      if (!tr.rotation.empty()) ++r, count(tr.rotation.interpolation);
      if (!tr.scale.empty()) ++s, count(tr.scale.interpolation);
    }
  // The file's "Linear Scale" animation really uses a CUBICSPLINE sampler.
  EXPECT_EQ(step, 3);
  EXPECT_EQ(linear, 2);
  EXPECT_EQ(cubic, 4);
  EXPECT_EQ(t, 3);
  EXPECT_EQ(r, 3);
  EXPECT_EQ(s, 3);
  EXPECT_EQ(a.meshes.size(), 10u);  // one kinema Mesh per primitive
}

TEST(Gltf, ReadsMorphTargetsAndWeightsTrack) {
  const Asset a = read_gltf(kData + "AnimatedMorphCube.glb");
  ASSERT_EQ(a.meshes.size(), 1u);
  const Mesh& m = a.meshes[0];
  ASSERT_EQ(m.morph_targets.size(), 2u);
  // The file has no extras.targetNames: targets are named by index.
  EXPECT_EQ(m.morph_targets[0].name, "target_0");
  EXPECT_EQ(m.morph_targets[1].name, "target_1");
  EXPECT_EQ(m.morph_targets[0].position_deltas.size(), m.vertex_count());
  EXPECT_EQ(m.morph_targets[0].normal_deltas.size(), m.vertex_count());
  EXPECT_EQ(m.default_weights.size(), 2u);
  ASSERT_EQ(a.clips.size(), 1u);
  const Clip& c = a.clips[0];
  EXPECT_EQ(c.name, "Square");
  ASSERT_EQ(c.morph_tracks.size(), 1u);
  const MorphTrack& mt = c.morph_tracks[0];
  EXPECT_EQ(mt.mesh, 0);
  EXPECT_EQ(mt.target_count, 2);
  ASSERT_EQ(mt.values.size(), mt.times.size() * 2);
  std::vector<double> w(2);
  ASSERT_TRUE(sample(mt, mt.times[1], w));
  EXPECT_NEAR(w[0], mt.values[2], 1e-9);
  EXPECT_NEAR(w[1], mt.values[3], 1e-9);
  EXPECT_NEAR(c.duration, mt.times.back(), 1e-12);
}

TEST(Gltf, EstimatesSampleRateFromUniformKeys) {
  const std::string dir = temp_dir();
  write(dir + "/tiny.gltf", Tiny{}.json());
  const Asset a = read_gltf(dir + "/tiny.gltf");
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_NEAR(a.clips[0].sample_rate, 30.0, 1e-9);
  EXPECT_NEAR(a.clips[0].duration, 2.0 / 30, 1e-6);
  const int child = a.skeleton.find("child");
  ASSERT_GE(child, 0);
  EXPECT_EQ(a.skeleton.parent(child), a.skeleton.find("root"));
  // Keys at 0 and 1.25 s only: not enough to call it a frame rate.
  EXPECT_EQ(read_gltf(kData + "RiggedFigure.glb").clips[0].sample_rate, 0.0);
}

TEST(Gltf, RejectsJsonGarbage) {
  const std::string dir = temp_dir();
  write(dir + "/a.gltf", "{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [ {,,, ");
  const Error e = read_error(dir + "/a.gltf");
  EXPECT_NE(std::string(e.what()).find("a.gltf"), std::string::npos);
  write(dir + "/b.gltf", "this is not json");
  read_error(dir + "/b.gltf");
  write(dir + "/c.glb", "");
  read_error(dir + "/c.glb");
}

TEST(Gltf, RejectsTruncatedGlb) {
  const std::string bytes = read_file(kData + "RiggedFigure.glb");
  const std::string dir = temp_dir();
  for (size_t len : {size_t{12}, size_t{19}, size_t{100}, bytes.size() / 2, bytes.size() - 4}) {
    write(dir + "/t.glb", bytes.substr(0, len));
    read_error(dir + "/t.glb");
  }
}

TEST(Gltf, RejectsAccessorOutOfRange) {
  Tiny t;
  t.count = "1000";
  const std::string dir = temp_dir();
  write(dir + "/a.gltf", t.json());
  const Error e = read_error(dir + "/a.gltf");
  EXPECT_EQ(e.place(), "/accessors/1");
}

TEST(Gltf, RejectsAbsurdAccessorCount) {
  Tiny t;
  t.count = "4000000000";
  const std::string dir = temp_dir();
  write(dir + "/a.gltf", t.json());
  const Error e = read_error(dir + "/a.gltf");
  EXPECT_EQ(e.place(), "/accessors/1");
}

TEST(Gltf, RejectsNaNInAccessor) {
  Tiny t;
  t.data = floats({0.f, 1.f / 30, 2.f / 30, 0, 0, 0, 1, std::nanf(""), 0, 2, 0, 0});
  const std::string dir = temp_dir();
  write(dir + "/a.gltf", t.json());
  const Error e = read_error(dir + "/a.gltf");
  EXPECT_EQ(e.place(), "/accessors/1");
  EXPECT_NE(e.reason().find("NaN"), std::string::npos);
}

TEST(Gltf, RejectsNodeCycleAndTwoParents) {
  const std::string dir = temp_dir();
  Tiny cycle;
  cycle.nodes = R"([{"name":"a","children":[1]},{"name":"b","children":[0]}])";
  write(dir + "/c.gltf", cycle.json());
  EXPECT_NE(read_error(dir + "/c.gltf").reason().find("cycle"), std::string::npos);
  Tiny self;
  self.nodes = R"([{"name":"a","children":[0]},{"name":"b"}])";
  write(dir + "/s.gltf", self.json());
  EXPECT_NE(read_error(dir + "/s.gltf").reason().find("cycle"), std::string::npos);
  Tiny two;
  two.nodes = R"([{"name":"a","children":[1]},{"name":"b"},{"name":"c","children":[1]}])";
  write(dir + "/t.gltf", two.json());
  const Error e = read_error(dir + "/t.gltf");
  EXPECT_EQ(e.place(), "/nodes/1");
  EXPECT_NE(e.reason().find("two parents"), std::string::npos);
  Tiny dangling;
  dangling.nodes = R"([{"name":"a","children":[7]},{"name":"b"}])";
  write(dir + "/d.gltf", dangling.json());
  EXPECT_EQ(read_error(dir + "/d.gltf").place(), "/nodes/0/children/0");
}

TEST(Gltf, RejectsMissingBin) {
  const std::string dir = temp_dir();
  std::filesystem::copy_file(kData + "interpolation_test.gltf", dir + "/interpolation_test.gltf",
                             std::filesystem::copy_options::overwrite_existing);
  const Error e = read_error(dir + "/interpolation_test.gltf");
  EXPECT_NE(std::string(e.what()).find("interpolation_test.bin"), std::string::npos) << e.what();
}

TEST(Gltf, RejectsMissingFile) { read_error(kData + "does_not_exist.glb"); }

// Random byte corruption of a real GLB: each read either succeeds or throws kinema::Error.
TEST(Gltf, CorruptedGlbNeverCrashes) {
  const std::string bytes = read_file(kData + "RiggedFigure.glb");
  const std::string dir = temp_dir();
  std::mt19937 rng(1234);
  int errors = 0;
  for (int iter = 0; iter < 150; ++iter) {
    std::string b = bytes;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<char>(rng() & 0xFF);
    write(dir + "/f.glb", b);
    try {
      read_gltf(dir + "/f.glb");
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace kinema
