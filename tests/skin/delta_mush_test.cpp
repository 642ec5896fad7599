// Delta mush and the LBS weight bake (Mancewicz et al. 2014), on synthetic cylinders and real
// meshes.
#include "kinema/skin/delta_mush.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_process.h"
#include "common/replace_global_new.h"  // the one replacement in kinema_skin_tests
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

constexpr float kPi = std::numbers::pi_v<float>;
constexpr float kDeg = kPi / 180.0f;

// A tube along x from 0 to 4 (radius 0.5), two bones with the elbow at x = 2, weights ramping
// smoothly over [1.4, 2.6]. With `seam`, every ring repeats its first vertex at the end (as glTF
// splits a UV seam).
struct Tube {
  std::vector<Vec3f> positions;
  std::vector<uint32_t> indices;
  std::vector<uint16_t> joints;
  std::vector<float> weights;
  int segments = 24, rings = 41;
  bool seam = false;

  explicit Tube(bool with_seam = false, bool rigid = false) : seam(with_seam) {
    const int per_ring = segments + (seam ? 1 : 0);
    for (int r = 0; r < rings; ++r) {
      const float x = 4.0f * float(r) / float(rings - 1);
      const float t = std::clamp((x - 1.4f) / 1.2f, 0.0f, 1.0f);
      float w1 = t * t * (3 - 2 * t);
      if (rigid) w1 = x < 2 ? 0.0f : 1.0f;
      for (int s = 0; s < per_ring; ++s) {
        const float a = 2 * kPi * float(s % segments) / float(segments);
        positions.push_back({x, 0.5f * std::cos(a), 0.5f * std::sin(a)});
        joints.insert(joints.end(), {0, 1});
        weights.insert(weights.end(), {1 - w1, w1});
      }
    }
    for (int r = 0; r + 1 < rings; ++r)
      for (int s = 0; s < segments; ++s) {
        const auto at = [&](int rr, int ss) {
          return uint32_t(rr * per_ring + (seam ? ss : ss % segments));
        };
        const uint32_t a = at(r, s), b = at(r, s + 1), c = at(r + 1, s), d = at(r + 1, s + 1);
        indices.insert(indices.end(), {a, c, b, b, c, d});
      }
  }
  SkinMeshView view() const { return {positions, {}, {}, 2, joints, weights}; }
  size_t ring_vertex(int ring, int s) const {
    return size_t(ring * (segments + (seam ? 1 : 0)) + s);
  }
};

std::vector<Affine3x4f> bend(float degrees) {
  const Mat4f s1 = Mat4f::translation({2, 0, 0}) *
                   Mat4f::rotation(Quatf::from_axis_angle({0, 0, 1}, degrees * kDeg)) *
                   Mat4f::translation({-2, 0, 0});
  return {Affine3x4f::identity(), to_affine3x4(s1)};
}

std::vector<Vec3f> deform_with_mush(const DeltaMushBind& bind, std::span<const Vec3f> deformed) {
  std::vector<Vec3f> scratch(delta_mush_scratch_size(bind)), out(deformed.size());
  EXPECT_TRUE(delta_mush_deform(bind, deformed, scratch, out));
  return out;
}

TEST(DeltaMush, DeltaTurnsWithTheSmoothedFrame) {
  // Smoothed point (5, 2) whose frame turned 30°: n = (−sin 30°, cos 30°), t = (cos 30°, sin 30°).
  const float c = std::cos(30 * kDeg), s = std::sin(30 * kDeg);
  const Vec3f p = delta_mush_frame_point({5, 2, 0}, {c, s, 0}, {-s, c, 0}, {0, 0, 0.3f});
  EXPECT_NEAR(p.x, 4.85f, 5e-3f);
  EXPECT_NEAR(p.y, 2.26f, 5e-3f);
  EXPECT_NEAR(p.z, 0.0f, 1e-7f);
  EXPECT_NEAR(distance(p, Vec3f{5, 2, 0}), 0.3f, 1e-6f);
  // Tangent and bitangent components go along t and b = n × t.
  const Vec3f q = delta_mush_frame_point({0, 0, 0}, {c, s, 0}, {-s, c, 0}, {1, 2, 0});
  EXPECT_NEAR(q.x, c, 1e-6f);
  EXPECT_NEAR(q.y, s, 1e-6f);
  EXPECT_NEAR(q.z, -2.0f, 1e-6f);

  // The same step inside the whole pipeline: the tube turned 30° about z moves every vertex as
  // its delta rotated by 30°.
  Tube tube;
  const DeltaMushBind bind = build_delta_mush(tube.positions, tube.indices);
  std::vector<Vec3f> turned(tube.positions.size());
  const Quatf r = Quatf::from_axis_angle({0, 0, 1}, 30 * kDeg);
  for (size_t v = 0; v < turned.size(); ++v) turned[v] = rotate(r, tube.positions[v]);
  const auto out = deform_with_mush(bind, turned);
  for (size_t v = 0; v < out.size(); ++v) EXPECT_LT(distance(out[v], turned[v]), 1e-5f) << v;
}

TEST(DeltaMush, StoredDeltasAreNonTrivial) {
  Tube tube;
  const DeltaMushBind bind = build_delta_mush(tube.positions, tube.indices);
  EXPECT_EQ(bind.node_count, tube.positions.size());
  // Smoothing shrinks the tube: the end rings' deltas are large, and interior deltas point along
  // the normal (outward) mostly.
  const Vec3f d = bind.deltas[tube.ring_vertex(20, 3)];
  EXPECT_GT(std::abs(d.z), 0.01f);
  EXPECT_GT(std::abs(d.z), 5 * std::hypot(d.x, d.y));
  // No smoothing: nothing to store, the output is the deformed input.
  DeltaMushSettings none;
  none.iterations = 0;
  const DeltaMushBind identity = build_delta_mush(tube.positions, tube.indices, none);
  std::vector<Vec3f> lbs(tube.positions.size());
  ASSERT_TRUE(skin_lbs(tube.view(), bend(70), {lbs, {}, {}}));
  const auto out = deform_with_mush(identity, lbs);
  for (size_t v = 0; v < out.size(); ++v) EXPECT_LT(distance(out[v], lbs[v]), 1e-6f);
}

// Σ over the vertices of rings [r0, r1] of | |L(out)| − |L(bind)| |, L(v) = v − mean of v's
// neighbours: how far the local shape (a rotation-invariant detail measure) is from the modelled
// one.
double detail_distortion(const Tube& tube, const DeltaMushBind& bind, std::span<const Vec3f> out,
                         int r0, int r1) {
  auto lap = [&](std::span<const Vec3f> p, size_t v) {
    const uint32_t node = bind.node_of[v];
    Vec3f sum{};
    for (uint32_t e = bind.neighbour_start[node]; e < bind.neighbour_start[node + 1]; ++e)
      sum += p[bind.node_vertices[bind.node_vertex_start[bind.neighbours[e]]]];
    const float k = float(bind.neighbour_start[node + 1] - bind.neighbour_start[node]);
    return length(p[v] - sum * (1.0f / k));
  };
  double total = 0;
  for (int r = r0; r <= r1; ++r)
    for (int s = 0; s < tube.segments; ++s) {
      const size_t v = tube.ring_vertex(r, s);
      total += std::abs(lap(out, v) - lap(tube.positions, v));
    }
  return total;
}

TEST(DeltaMush, RemovesTheCreaseOfARigidBinding) {
  // A rigid binding (each vertex on one bone) creases and self-intersects at a bent elbow; delta
  // mush on top of it gives a smooth elbow that keeps the modelled detail (Mancewicz et al.).
  Tube tube(false, true);
  const DeltaMushBind bind = build_delta_mush(tube.positions, tube.indices, {20, 0.5f, 1e-6f});
  std::vector<Vec3f> rigid(tube.positions.size());
  ASSERT_TRUE(skin_lbs(tube.view(), bend(90), {rigid, {}, {}}));
  const auto mush = deform_with_mush(bind, rigid);
  const double d_rigid = detail_distortion(tube, bind, rigid, 14, 26);
  const double d_mush = detail_distortion(tube, bind, mush, 14, 26);
  EXPECT_LT(d_mush, 0.3 * d_rigid) << d_mush << " vs " << d_rigid;
  // The inside of the elbow: the rigid binding folds a vertex onto the bone axis; delta mush
  // keeps it off.
  const size_t inner = tube.ring_vertex(20, 0);
  EXPECT_LT(distance(rigid[inner], Vec3f{1.5f, 0, 0}), 1e-5f);
  EXPECT_GT(std::abs(mush[inner].y), 0.15f);
  // Away from the elbow the mesh is moved rigidly and delta mush changes nothing.
  for (int r : {0, 40})
    for (int s = 0; s < tube.segments; ++s) {
      const size_t v = tube.ring_vertex(r, s);
      EXPECT_LT(distance(mush[v], rigid[v]), 2e-3f) << r << " " << s;
    }
}

TEST(DeltaMush, WeldingKeepsSeamsClosed) {
  Tube tube(true);
  std::vector<Vec3f> lbs(tube.positions.size());
  ASSERT_TRUE(skin_lbs(tube.view(), bend(100), {lbs, {}, {}}));
  const DeltaMushBind welded = build_delta_mush(tube.positions, tube.indices);
  EXPECT_EQ(welded.node_count, size_t(tube.rings * tube.segments));
  DeltaMushSettings no_weld;
  no_weld.weld_distance = -1;
  const DeltaMushBind split = build_delta_mush(tube.positions, tube.indices, no_weld);
  EXPECT_EQ(split.node_count, tube.positions.size());
  const auto a = deform_with_mush(welded, lbs), b = deform_with_mush(split, lbs);
  float gap_welded = 0, gap_split = 0;
  for (int r = 0; r < tube.rings; ++r) {
    const size_t first = tube.ring_vertex(r, 0), last = tube.ring_vertex(r, tube.segments);
    gap_welded = std::max(gap_welded, distance(a[first], a[last]));
    gap_split = std::max(gap_split, distance(b[first], b[last]));
  }
  EXPECT_LT(gap_welded, 1e-6f);
  EXPECT_GT(gap_split, 1e-3f);  // without welding the seam opens
}

struct RealMesh {
  Asset asset;
  size_t mesh = 0;
  const Mesh& m() const { return asset.meshes[mesh]; }
  SkinMeshView view() const {
    return {m().positions, {}, {}, m().influences, m().joints, m().weights};
  }
  // A palette for the rest pose with every joint turned by a random rotation up to max_deg.
  std::vector<Affine3x4f> random_palette(std::mt19937& rng, float max_deg) const {
    std::uniform_real_distribution<double> u(-1, 1);
    auto local = asset.skeleton.rest_pose();
    for (auto& t : local) {
      const Vec3 axis = normalize(Vec3{u(rng), u(rng), u(rng)});
      t.rotation = t.rotation * Quat::from_axis_angle(axis, double(max_deg * kDeg) * u(rng));
    }
    std::vector<Mat4> model(local.size());
    EXPECT_TRUE(local_to_model(asset.skeleton.parents(), local, model));
    const Skin& skin = asset.skins[size_t(m().skin)];
    std::vector<Affine3x4f> palette(skin.joints.size());
    EXPECT_TRUE(skinning_palette(model, skin.joints, skin.inverse_bind, palette));
    return palette;
  }
};

RealMesh load_mesh(const std::string& rel, size_t mesh) {
  RealMesh r{load_asset(test_paths::data_dir() + "/" + rel), mesh};
  EXPECT_GE(r.m().skin, 0);
  return r;
}

TEST(DeltaMush, BindPoseReproducesRealMeshes) {
  for (const auto& [file, mesh] : {std::pair<std::string, size_t>{"gltf/RiggedFigure.glb", 0},
                                   {"gltf/greenman.glb", 0},
                                   {"vrm/Godette_vrm_v4.vrm", 1}}) {
    const RealMesh r = load_mesh(file, mesh);
    const DeltaMushBind bind = build_delta_mush(r.m().positions, r.m().indices);
    const auto out = deform_with_mush(bind, r.m().positions);
    float worst = 0;
    for (size_t v = 0; v < out.size(); ++v)
      worst = std::max(worst, distance(out[v], r.m().positions[v]));
    EXPECT_LE(worst, 1e-5f) << file;
  }
}

TEST(DeltaMush, RigidMotionOfARealMeshIsRigid) {
  const RealMesh r = load_mesh("gltf/RiggedFigure.glb", 0);
  const DeltaMushBind bind = build_delta_mush(r.m().positions, r.m().indices);
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int trial = 0; trial < 5; ++trial) {
    const Quatf q = Quatf::from_axis_angle(normalize(Vec3f{u(rng), u(rng), u(rng)}), 3 * u(rng));
    const Vec3f t{u(rng), u(rng), u(rng)};
    std::vector<Vec3f> moved(r.m().positions.size());
    for (size_t v = 0; v < moved.size(); ++v) moved[v] = rotate(q, r.m().positions[v]) + t;
    const auto out = deform_with_mush(bind, moved);
    for (size_t v = 0; v < out.size(); ++v) ASSERT_LT(distance(out[v], moved[v]), 2e-5f) << v;
  }
}

TEST(DeltaMush, RandomExtremePosesStayFiniteAndNearTheSkin) {
  for (const char* file : {"gltf/RiggedFigure.glb", "gltf/greenman.glb"}) {
    const RealMesh r = load_mesh(file, 0);
    const DeltaMushBind bind = build_delta_mush(r.m().positions, r.m().indices);
    Vec3f lo = r.m().positions[0], hi = lo;
    for (const Vec3f& p : r.m().positions) {
      lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
      hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
    }
    const float diagonal = distance(lo, hi);
    std::mt19937 rng(17);
    const size_t n = r.m().positions.size();
    std::vector<Vec3f> lbs(n);
    for (int trial = 0; trial < 20; ++trial) {
      const auto palette = r.random_palette(rng, 170);
      ASSERT_TRUE(skin_lbs(r.view(), palette, {lbs, {}, {}}));
      const auto out = deform_with_mush(bind, lbs);
      for (size_t v = 0; v < n; ++v) {
        ASSERT_TRUE(is_finite(out[v])) << file << " " << v;
        ASSERT_LT(distance(out[v], lbs[v]), 0.5f * diagonal) << file << " " << v;
      }
    }
  }
}

TEST(DeltaMush, DegenerateTrianglesAndIsolatedVertices) {
  // A quad, a zero-area sliver on its edge, and a vertex no triangle uses.
  const std::vector<Vec3f> p{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0.5f, 0, 0}, {3, 3, 3}};
  const std::vector<uint32_t> idx{0, 1, 2, 0, 2, 3, 0, 4, 1};
  // Few passes: ten would shrink this five-vertex patch to a few thousandths of its size, where
  // float differences (and so the frames) are only good to ~1e-4.
  const DeltaMushBind bind = build_delta_mush(p, idx, {3, 0.5f, 1e-6f});
  const auto same = deform_with_mush(bind, p);
  for (size_t v = 0; v < p.size(); ++v) EXPECT_LT(distance(same[v], p[v]), 1e-6f) << v;
  std::vector<Vec3f> moved = p;
  for (auto& q : moved) q = rotate(Quatf::from_axis_angle({1, 0, 0}, 1.0f), q) + Vec3f{0, 2, 0};
  moved[5] = {7, 7, 7};
  const auto out = deform_with_mush(bind, moved);
  for (size_t v = 0; v < 5; ++v) EXPECT_LT(distance(out[v], moved[v]), 1e-5f) << v;
  EXPECT_EQ(out[5], (Vec3f{7, 7, 7}));  // isolated: follows its own deformation
}

TEST(DeltaMush, BadInputIsRejected) {
  Tube tube;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto place_of = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.place() + ": " + e.reason();
    }
    return "accepted";
  };
  std::vector<uint32_t> idx = tube.indices;
  idx.pop_back();
  EXPECT_NE(place_of([&] { build_delta_mush(tube.positions, idx); }).find("whole number"),
            std::string::npos);
  idx = tube.indices;
  idx[7] = uint32_t(tube.positions.size());
  EXPECT_NE(place_of([&] { build_delta_mush(tube.positions, idx); }).find("index 7"),
            std::string::npos);
  std::vector<Vec3f> p = tube.positions;
  p[3].y = nan;
  EXPECT_NE(place_of([&] { build_delta_mush(p, tube.indices); }).find("vertex 3"),
            std::string::npos);
  EXPECT_NE(place_of([&] {
              build_delta_mush(tube.positions, tube.indices, {-1, 0.5f, 0});
            }).find("iterations"),
            std::string::npos);
  EXPECT_NE(place_of([&] {
              build_delta_mush(tube.positions, tube.indices, {5, 1.5f, 0});
            }).find("λ"),
            std::string::npos);
  // Empty mesh: nothing to do, but it works.
  const DeltaMushBind empty = build_delta_mush({}, {});
  EXPECT_TRUE(delta_mush_deform(empty, {}, {}, {}));

  // Runtime: false and nothing written on mismatched sizes, short scratch or aliasing.
  const DeltaMushBind bind = build_delta_mush(tube.positions, tube.indices);
  const size_t n = tube.positions.size();
  std::vector<Vec3f> scratch(delta_mush_scratch_size(bind)), out(n, Vec3f{7, 7, 7});
  EXPECT_FALSE(delta_mush_deform(bind, std::span(tube.positions).first(n - 1), scratch, out));
  EXPECT_FALSE(delta_mush_deform(bind, tube.positions, std::span(scratch).first(10), out));
  EXPECT_FALSE(delta_mush_deform(bind, tube.positions, scratch, std::span(out).first(n - 1)));
  std::vector<Vec3f> in_out = tube.positions;
  EXPECT_FALSE(delta_mush_deform(bind, in_out, scratch, in_out));
  EXPECT_FALSE(delta_mush_deform(DeltaMushBind{}, tube.positions, scratch, out));
  EXPECT_EQ(out[0], (Vec3f{7, 7, 7}));

  // The bake: no poses, a palette of the wrong size, NaN.
  const std::vector<std::vector<Affine3x4f>> none;
  EXPECT_NE(place_of([&] { bake_lbs_weights(tube.view(), tube.indices, none); }).find("no sample"),
            std::string::npos);
  std::vector<std::vector<Affine3x4f>> poses{bend(30), {Affine3x4f::identity()}};
  EXPECT_NE(place_of([&] { bake_lbs_weights(tube.view(), tube.indices, poses); }).find("pose 1"),
            std::string::npos);
  poses[1] = bend(60);
  poses[1][1].m[3] = nan;
  EXPECT_NE(place_of([&] { bake_lbs_weights(tube.view(), tube.indices, poses); }).find("NaN"),
            std::string::npos);
  poses = {{Affine3x4f::identity()}};
  EXPECT_NE(place_of([&] {
              bake_lbs_weights(tube.view(), tube.indices, poses);
            }).find("outside the skin"),
            std::string::npos);
}

TEST(DeltaMush, RuntimePathDoesNotAllocate) {
  const RealMesh r = load_mesh("vrm/Godette_vrm_v4.vrm", 1);
  const DeltaMushBind bind = build_delta_mush(r.m().positions, r.m().indices);
  std::mt19937 rng(4);
  const auto palette = r.random_palette(rng, 30);
  const size_t n = r.m().positions.size();
  std::vector<Vec3f> lbs(n), scratch(delta_mush_scratch_size(bind)), out(n);
  test::start_counting_allocations();
  const bool ok =
      skin_lbs(r.view(), palette, {lbs, {}, {}}) && delta_mush_deform(bind, lbs, scratch, out);
  EXPECT_EQ(test::stop_counting_allocations(), 0);
  ASSERT_TRUE(ok);
  for (const Vec3f& p : out) ASSERT_TRUE(is_finite(p));
}

void expect_valid_bake(const WeightBake& bake, const SkinMeshView& mesh, size_t joints) {
  const SkinMeshView baked{mesh.positions, {}, {}, bake.influences, bake.joints, bake.weights};
  const auto issue = check_skin_mesh(baked, joints);
  EXPECT_FALSE(issue.has_value()) << issue->vertex << ": " << issue->reason;
  EXPECT_LE(bake.rms_after, bake.rms_before);
}

TEST(DeltaMush, WeightBakeOnRigidTubeLearnsASmoothBlend) {
  Tube tube(false, true);
  std::vector<std::vector<Affine3x4f>> poses;
  for (float deg : {-80.0f, -40.0f, 20.0f, 50.0f, 90.0f}) poses.push_back(bend(deg));
  const WeightBake bake =
      bake_lbs_weights(tube.view(), tube.indices, poses, {10, 0.5f, 1e-6f}, {4, 2, true});
  expect_valid_bake(bake, tube.view(), 2);
  EXPECT_LT(bake.rms_after, 0.5 * bake.rms_before) << bake.rms_before << " → " << bake.rms_after;
  // A vertex on the elbow ring now blends both bones.
  const size_t v = tube.ring_vertex(20, 5);
  EXPECT_GT(bake.weights[v * 4 + 1], 0.05f);
}

TEST(DeltaMush, WeightBakeOnRiggedFigureReducesTheError) {
  const RealMesh r = load_mesh("gltf/RiggedFigure.glb", 0);
  std::mt19937 rng(99);
  std::vector<std::vector<Affine3x4f>> poses;
  for (int i = 0; i < 12; ++i) poses.push_back(r.random_palette(rng, 35));
  const WeightBake bake = bake_lbs_weights(r.view(), r.m().indices, poses);
  const size_t joints = r.asset.skins[0].joints.size();
  expect_valid_bake(bake, r.view(), joints);
  EXPECT_LT(bake.rms_after, bake.rms_before);
  RecordProperty("rms_before_mm", std::to_string(bake.rms_before * 1e3));
  RecordProperty("rms_after_mm", std::to_string(bake.rms_after * 1e3));
  std::printf("RiggedFigure bake, 12 poses: rms %.3f → %.3f mm, max %.3f → %.3f mm, kept %zu\n",
              bake.rms_before * 1e3, bake.rms_after * 1e3, bake.max_before * 1e3,
              bake.max_after * 1e3, bake.vertices_kept);
}

class SkinBakeCli : public test::CliProcessTest {
 protected:
  SkinBakeCli() : CliProcessTest("kinema_skin_bake_") {}
};

TEST_F(SkinBakeCli, BakesWeightsIntoAValidFileAndReportsTheError) {
  const std::string in = test_paths::data_dir() + "/gltf/greenman.glb";
  const std::string out = path("baked.glb");
  const test::CliRun r = kinema("skin bake-weights " + test::sh_quote(in) + " -o " +
                                test::sh_quote(out) + " --poses 16 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["meshes"].size(), 1u);
  EXPECT_EQ(j["poses"], 16);
  const double before = j["meshes"][0]["rms_before_m"], after = j["meshes"][0]["rms_after_m"];
  EXPECT_GT(before, 0);
  EXPECT_LT(after, before);
  const Asset original = load_asset(in), baked = load_asset(out);
  ASSERT_EQ(baked.meshes.size(), 1u);
  const Mesh& m = baked.meshes[0];
  EXPECT_EQ(m.positions, original.meshes[0].positions);
  const SkinMeshView view{m.positions, {}, {}, m.influences, m.joints, m.weights};
  const auto issue = check_skin_mesh(view, baked.skins[0].joints.size());
  EXPECT_FALSE(issue.has_value()) << issue->reason;
  EXPECT_NE(m.weights, original.meshes[0].weights);

  // From a clip's frames, as text.
  const test::CliRun c = kinema("skin bake-weights " + test::sh_quote(in) + " -o " +
                                test::sh_quote(path("clip.glb")) + " --clip 1_idle --poses 8");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("over 8 poses: rms"), std::string::npos) << c.out;
}

TEST_F(SkinBakeCli, RefusesBadCommandLines) {
  const std::string in = test_paths::data_dir() + "/gltf/greenman.glb";
  EXPECT_EQ(kinema("skin bake-weights " + test::sh_quote(in) + " -o " + test::sh_quote(in)).code,
            1);
  EXPECT_EQ(
      kinema("skin bake-weights " + test::sh_quote(in) + " -o " + test::sh_quote(path("x.bvh")))
          .code,
      1);
  EXPECT_EQ(kinema("skin bake-weights " + test::sh_quote(in) + " -o " +
                   test::sh_quote(path("x.glb")) + " --clip nope")
                .code,
            1);
  const test::CliRun missing = kinema("skin bake-weights " + test::sh_quote(path("none.glb")) +
                                      " -o " + test::sh_quote(path("x.glb")));
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("kinema: error:"), std::string::npos);
  EXPECT_EQ(kinema("skin").code, 1);
}

}  // namespace
}  // namespace kinema
