// The scalar, SIMD, multi-threaded and SkinMesh paths agree; properties (bind pose, rigid parts,
// partition of unity); determinism across thread counts; randomized stress; bad input.
#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/skin/skinning.h"

namespace kinema {
namespace {

struct RandomMesh {
  std::vector<Vec3f> positions, normals, tangents;
  std::vector<uint16_t> joints;
  std::vector<float> weights;
  int influences = 4;
  SkinMeshView view() const { return {positions, normals, tangents, influences, joints, weights}; }
};

Vec3f random_unit(std::mt19937& rng) {
  std::normal_distribution<float> g;
  Vec3f v{g(rng), g(rng), g(rng)};
  return normalize(v);
}

// Vertices in a 2 m cube, 1…influences non-zero weights at random slots (the rest padding).
RandomMesh random_mesh(std::mt19937& rng, size_t n, int influences, size_t joints) {
  RandomMesh m;
  m.influences = influences;
  std::uniform_real_distribution<float> pos(-1, 1), weight(0.05f, 1);
  std::uniform_int_distribution<int> count(1, influences), joint(0, int(joints) - 1);
  for (size_t v = 0; v < n; ++v) {
    m.positions.push_back({pos(rng), pos(rng), pos(rng)});
    m.normals.push_back(random_unit(rng));
    m.tangents.push_back(random_unit(rng));
    std::vector<float> w(size_t(influences), 0.0f);
    const int used = count(rng);
    for (int i = 0; i < used; ++i) w[size_t(rng() % unsigned(influences))] = weight(rng);
    float sum = 0;
    for (const float x : w) sum += x;
    if (sum == 0) w[0] = sum = 1;
    for (float& x : w) x /= sum;
    for (int i = 0; i < influences; ++i) {
      m.joints.push_back(uint16_t(joint(rng)));
      m.weights.push_back(w[size_t(i)]);
    }
  }
  return m;
}

// A pose: each bone rotated by up to `max_degrees` about a random axis, moved up to 0.5 m,
// optionally scaled (non-uniformly, 0.7…1.4).
std::vector<Affine3x4f> random_palette(std::mt19937& rng, size_t joints, float max_degrees,
                                       bool scale) {
  std::uniform_real_distribution<float> angle(-max_degrees, max_degrees), move(-0.5f, 0.5f),
      s(0.7f, 1.4f);
  std::vector<Affine3x4f> palette;
  for (size_t j = 0; j < joints; ++j) {
    const Quatf q = Quatf::from_axis_angle(random_unit(rng), angle(rng) * 3.14159265f / 180);
    Mat4f m = Mat4f::translation({move(rng), move(rng), move(rng)}) * Mat4f::rotation(q);
    if (scale) m = m * Mat4f::scaling({s(rng), s(rng), s(rng)});
    palette.push_back(to_affine3x4(m));
  }
  return palette;
}

struct Outputs {
  std::vector<Vec3f> p, n, t;
  explicit Outputs(size_t count) : p(count), n(count), t(count) {}
  SkinOutputs spans() { return {p, n, t}; }
};

float max_difference(const std::vector<Vec3f>& a, const std::vector<Vec3f>& b) {
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, distance(a[i], b[i]));
  return worst;
}

bool finite_all(const Outputs& o) {
  for (size_t i = 0; i < o.p.size(); ++i)
    for (const Vec3f& v : {o.p[i], o.n[i], o.t[i]})
      if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) return false;
  return true;
}

void expect_agree(const Outputs& a, const Outputs& b, float tolerance, const char* what) {
  EXPECT_LE(max_difference(a.p, b.p), tolerance) << what << " positions";
  EXPECT_LE(max_difference(a.n, b.n), tolerance) << what << " normals";
  EXPECT_LE(max_difference(a.t, b.t), tolerance) << what << " tangents";
}

void expect_same_bits(const Outputs& a, const Outputs& b) {
  EXPECT_EQ(std::memcmp(a.p.data(), b.p.data(), a.p.size() * sizeof(Vec3f)), 0);
  EXPECT_EQ(std::memcmp(a.n.data(), b.n.data(), a.n.size() * sizeof(Vec3f)), 0);
  EXPECT_EQ(std::memcmp(a.t.data(), b.t.data(), a.t.size() * sizeof(Vec3f)), 0);
}

// Every path on one mesh and palette; all must agree with the scalar reference.
void check_all_paths(const RandomMesh& m, const std::vector<Affine3x4f>& palette, bool dqs,
                     float tolerance) {
  const size_t n = m.positions.size();
  const SkinMesh mesh = make_skin_mesh(m.view(), palette.size());
  std::vector<DualQuatf> dq(palette.size());
  std::vector<Affine3x4f> pre(palette.size());
  bool scaled = false;
  ASSERT_TRUE(dual_quat_palette(palette, dq, pre, &scaled));
  const DqsPaletteView dqp{
      dq, scaled ? std::span<const Affine3x4f>(pre) : std::span<const Affine3x4f>{}};
  Outputs ref(n), simd(n), par(n), ms(n), mp(n), mr(n);
  if (dqs) {
    ASSERT_TRUE(skin_dqs(m.view(), dqp, ref.spans()));
    ASSERT_TRUE(skin_dqs_simd(m.view(), dqp, simd.spans()));
    ASSERT_TRUE(skin_dqs_parallel(m.view(), dqp, par.spans(), {}, {}, 64));
    ASSERT_TRUE(skin_dqs(mesh, dqp, ms.spans(), SkinPath::simd));
    ASSERT_TRUE(skin_dqs(mesh, dqp, mp.spans(), SkinPath::parallel));
    ASSERT_TRUE(skin_dqs(mesh, dqp, mr.spans(), SkinPath::scalar));
  } else {
    ASSERT_TRUE(skin_lbs(m.view(), palette, ref.spans()));
    ASSERT_TRUE(skin_lbs_simd(m.view(), palette, simd.spans()));
    ASSERT_TRUE(skin_lbs_parallel(m.view(), palette, par.spans(), 64));
    ASSERT_TRUE(skin_lbs(mesh, palette, ms.spans(), SkinPath::simd));
    ASSERT_TRUE(skin_lbs(mesh, palette, mp.spans(), SkinPath::parallel));
    ASSERT_TRUE(skin_lbs(mesh, palette, mr.spans(), SkinPath::scalar));
  }
  EXPECT_TRUE(finite_all(ref));
  expect_agree(ref, simd, tolerance, "simd");
  expect_agree(ref, ms, tolerance, "SkinMesh simd");
  expect_agree(ref, mr, tolerance, "SkinMesh scalar");
  expect_same_bits(simd, par);
  expect_same_bits(ms, mp);
}

TEST(SkinPaths, LbsAgreeOnRandomMeshesEveryInfluenceCount) {
  std::mt19937 rng(5);
  for (int k = 1; k <= 8; ++k) {
    const RandomMesh m = random_mesh(rng, 1500, k, 40);
    check_all_paths(m, random_palette(rng, 40, 60, false), false, 1e-5f);
    check_all_paths(m, random_palette(rng, 40, 60, true), false, 1e-5f);
  }
}

TEST(SkinPaths, DqsAgreeOnRandomMeshesWithAndWithoutScale) {
  std::mt19937 rng(6);
  for (int k = 1; k <= 8; ++k) {
    const RandomMesh m = random_mesh(rng, 1500, k, 40);
    check_all_paths(m, random_palette(rng, 40, 60, false), true, 1e-5f);
    check_all_paths(m, random_palette(rng, 40, 60, true), true, 1e-5f);
  }
}

TEST(SkinPaths, DqsLbsMixAgreesAndEndsAtBothMethods) {
  std::mt19937 rng(7);
  const RandomMesh m = random_mesh(rng, 2000, 4, 30);
  const auto palette = random_palette(rng, 30, 70, false);
  std::vector<DualQuatf> dq(palette.size());
  ASSERT_TRUE(dual_quat_palette(palette, dq, {}));
  std::vector<float> amount(m.positions.size());
  std::uniform_real_distribution<float> u(-0.2f, 1.2f);  // clamped to [0, 1]
  for (float& a : amount) a = u(rng);
  const size_t n = m.positions.size();
  const SkinMesh mesh = make_skin_mesh(m.view(), palette.size());
  Outputs ref(n), simd(n), par(n), ms(n), lbs(n), dqs(n);
  ASSERT_TRUE(skin_dqs(m.view(), {dq, {}}, ref.spans(), amount, palette));
  ASSERT_TRUE(skin_dqs_simd(m.view(), {dq, {}}, simd.spans(), amount, palette));
  ASSERT_TRUE(skin_dqs_parallel(m.view(), {dq, {}}, par.spans(), amount, palette, 100));
  ASSERT_TRUE(skin_dqs(mesh, {dq, {}}, ms.spans(), SkinPath::simd, amount, palette));
  ASSERT_TRUE(skin_lbs_simd(m.view(), palette, lbs.spans()));
  ASSERT_TRUE(skin_dqs_simd(m.view(), {dq, {}}, dqs.spans()));
  expect_agree(ref, simd, 1e-5f, "mix simd");
  expect_agree(ref, ms, 1e-5f, "mix SkinMesh");
  expect_same_bits(simd, par);
  for (size_t v = 0; v < n; ++v) {
    if (amount[v] <= 0) {
      EXPECT_LE(distance(simd.p[v], lbs.p[v]), 1e-6f);
    }
    if (amount[v] >= 1) {
      EXPECT_LE(distance(simd.p[v], dqs.p[v]), 1e-6f);
    }
  }
}

TEST(SkinPaths, SameBitsWhateverTheThreadCountAndBlockSize) {
  std::mt19937 rng(8);
  const RandomMesh m = random_mesh(rng, 20000, 4, 60);
  const auto palette = random_palette(rng, 60, 90, true);
  std::vector<DualQuatf> dq(palette.size());
  std::vector<Affine3x4f> pre(palette.size());
  ASSERT_TRUE(dual_quat_palette(palette, dq, pre));
  const SkinMesh mesh = make_skin_mesh(m.view(), palette.size());
  const size_t n = m.positions.size();
  Outputs lbs1(n), dqs1(n);
  tbb::task_arena one(1);
  one.execute([&] {
    ASSERT_TRUE(skin_lbs(mesh, palette, lbs1.spans(), SkinPath::parallel));
    ASSERT_TRUE(skin_dqs(mesh, {dq, pre}, dqs1.spans(), SkinPath::parallel));
  });
  for (const int threads : {2, 3, 8}) {
    tbb::task_arena arena(threads);
    for (const size_t grain : {size_t(1), size_t(7), size_t(4096)}) {
      Outputs lbs(n), dqs(n), lbs_view(n), lbs_view1(n), dqs_view(n), dqs_view1(n);
      std::vector<Vec3f> p_only(n), p_only1(n);
      arena.execute([&] {
        ASSERT_TRUE(skin_lbs(mesh, palette, lbs.spans(), SkinPath::parallel));
        ASSERT_TRUE(skin_dqs(mesh, {dq, pre}, dqs.spans(), SkinPath::parallel));
        ASSERT_TRUE(skin_lbs_parallel(m.view(), palette, lbs_view.spans(), grain));
        ASSERT_TRUE(skin_dqs_parallel(m.view(), {dq, {}}, dqs_view.spans(), {}, {}, grain));
        ASSERT_TRUE(skin_lbs_parallel(m.view(), palette, {p_only, {}, {}}, grain));
      });
      one.execute([&] {
        ASSERT_TRUE(skin_lbs_parallel(m.view(), palette, lbs_view1.spans(), grain));
        ASSERT_TRUE(skin_dqs_simd(m.view(), {dq, {}}, dqs_view1.spans()));
        ASSERT_TRUE(skin_lbs_simd(m.view(), palette, {p_only1, {}, {}}));
      });
      expect_same_bits(dqs_view1, dqs_view);
      EXPECT_EQ(std::memcmp(p_only.data(), p_only1.data(), n * sizeof(Vec3f)), 0);
      expect_same_bits(lbs1, lbs);
      expect_same_bits(dqs1, dqs);
      expect_same_bits(lbs_view1, lbs_view);
    }
  }
}

TEST(SkinPaths, BindPoseGivesTheInputMeshOnEveryPath) {
  std::mt19937 rng(9);
  const RandomMesh m = random_mesh(rng, 3000, 8, 20);
  const std::vector<Affine3x4f> identity(20);
  std::vector<DualQuatf> dq(20);
  ASSERT_TRUE(dual_quat_palette(identity, dq, {}));
  const SkinMesh mesh = make_skin_mesh(m.view(), 20);
  const size_t n = m.positions.size();
  for (int path = 0; path < 8; ++path) {
    Outputs o(n);
    switch (path) {
      case 0:
        ASSERT_TRUE(skin_lbs(m.view(), identity, o.spans()));
        break;
      case 1:
        ASSERT_TRUE(skin_lbs_simd(m.view(), identity, o.spans()));
        break;
      case 2:
        ASSERT_TRUE(skin_lbs_parallel(m.view(), identity, o.spans()));
        break;
      case 3:
        ASSERT_TRUE(skin_lbs(mesh, identity, o.spans()));
        break;
      case 4:
        ASSERT_TRUE(skin_dqs(m.view(), {dq, {}}, o.spans()));
        break;
      case 5:
        ASSERT_TRUE(skin_dqs_simd(m.view(), {dq, {}}, o.spans()));
        break;
      case 6:
        ASSERT_TRUE(skin_dqs_parallel(m.view(), {dq, {}}, o.spans()));
        break;
      default:
        ASSERT_TRUE(skin_dqs(mesh, {dq, {}}, o.spans(), SkinPath::parallel));
        break;
    }
    EXPECT_LE(max_difference(o.p, m.positions), 1e-6f) << path;
    EXPECT_LE(max_difference(o.n, m.normals), 1e-6f) << path;
    EXPECT_LE(max_difference(o.t, m.tangents), 1e-6f) << path;
  }
}

TEST(SkinPaths, DqsKeepsRigidPartsRigid) {
  // Vertices weighted to one bone move rigidly (distances kept) under DQS on every path; the
  // same palette through the mixed vertices stays finite.
  std::mt19937 rng(10);
  RandomMesh m = random_mesh(rng, 1000, 4, 10);
  for (size_t v = 0; v < 500; ++v)  // the first half: all weight on bone 3, in slot v % 4
    for (size_t i = 0; i < 4; ++i) {
      m.joints[v * 4 + i] = i == v % 4 ? 3 : uint16_t(rng() % 10);
      m.weights[v * 4 + i] = i == v % 4 ? 1.0f : 0.0f;
    }
  const auto palette = random_palette(rng, 10, 170, false);
  std::vector<DualQuatf> dq(10);
  ASSERT_TRUE(dual_quat_palette(palette, dq, {}));
  const SkinMesh mesh = make_skin_mesh(m.view(), 10);
  Outputs a(1000), b(1000), c(1000);
  ASSERT_TRUE(skin_dqs(m.view(), {dq, {}}, a.spans()));
  ASSERT_TRUE(skin_dqs_simd(m.view(), {dq, {}}, b.spans()));
  ASSERT_TRUE(skin_dqs(mesh, {dq, {}}, c.spans(), SkinPath::parallel));
  for (const Outputs* o : {&a, &b, &c}) {
    for (size_t v = 1; v < 500; ++v) {
      EXPECT_NEAR(distance(o->p[v], o->p[0]), distance(m.positions[v], m.positions[0]), 2e-6f);
      EXPECT_NEAR(dot(o->n[v], o->n[0]), dot(m.normals[v], m.normals[0]), 2e-6f);
    }
    EXPECT_TRUE(finite_all(*o));
  }
}

TEST(SkinPaths, WeightsArePartitionOfUnity) {
  // Every bone translated by the same t: normalized weights move every vertex by exactly t.
  std::mt19937 rng(11);
  const RandomMesh m = random_mesh(rng, 2000, 8, 16);
  const Affine3x4f moved = to_affine3x4(Mat4f::translation({0.3f, -1.2f, 2.5f}));
  const std::vector<Affine3x4f> palette(16, moved);
  const SkinMesh mesh = make_skin_mesh(m.view(), 16);
  for (size_t g = 0; g < mesh.groups.size(); ++g) {
    const SkinMesh::Group& group = mesh.groups[g];
    for (size_t v = 0; v < group.count; ++v) {
      float sum = 0;
      for (int i = 0; i < group.influences; ++i)
        sum += mesh.weights[group.pair_begin + v * size_t(group.influences) + size_t(i)];
      ASSERT_NEAR(sum, 1.0f, 1e-5f);
    }
  }
  Outputs a(2000), b(2000);
  ASSERT_TRUE(skin_lbs_simd(m.view(), palette, a.spans()));
  ASSERT_TRUE(skin_lbs(mesh, palette, b.spans(), SkinPath::parallel));
  for (size_t v = 0; v < 2000; ++v) {
    EXPECT_LE(distance(a.p[v], m.positions[v] + Vec3f{0.3f, -1.2f, 2.5f}), 2e-6f);
    EXPECT_LE(distance(b.p[v], m.positions[v] + Vec3f{0.3f, -1.2f, 2.5f}), 2e-6f);
  }
}

TEST(SkinPaths, SkinMeshGroupsByInfluenceCount) {
  std::mt19937 rng(12);
  const RandomMesh m = random_mesh(rng, 5000, 8, 16);
  const SkinMesh mesh = make_skin_mesh(m.view(), 16);
  ASSERT_EQ(mesh.vertex_count(), 5000u);
  std::vector<int> seen(5000, 0);
  size_t pairs = 0, nonzero = 0;
  int last = 0;
  for (const SkinMesh::Group& g : mesh.groups) {
    EXPECT_GT(g.influences, last);
    last = g.influences;
    EXPECT_EQ(g.pair_begin, pairs);
    pairs += g.count * size_t(g.influences);
    for (size_t v = g.begin; v < g.begin + g.count; ++v) {
      ++seen[mesh.order[v]];
      size_t used = 0;
      for (size_t i = 0; i < 8; ++i) used += m.weights[mesh.order[v] * 8 + i] > 0 ? 1 : 0;
      EXPECT_EQ(used, size_t(g.influences));
    }
  }
  for (const float w : m.weights) nonzero += w > 0 ? 1 : 0;
  EXPECT_EQ(pairs, nonzero);
  EXPECT_EQ(mesh.joints.size(), nonzero);
  EXPECT_NEAR(mesh.mean_influences(), double(nonzero) / 5000.0, 1e-12);
  for (const int s : seen) EXPECT_EQ(s, 1);
}

TEST(SkinPaths, RandomizedStressNoNanPathsAgree) {
  // Random skeleton sizes, wild poses (any rotation, scale), random influence layouts.
  std::mt19937 rng(13);
  for (int round = 0; round < 30; ++round) {
    const size_t joints = 1 + rng() % 200;
    const int k = 1 + int(rng() % 8);
    const RandomMesh m = random_mesh(rng, 1 + rng() % 3000, k, joints);
    const auto palette = random_palette(rng, joints, 180, round % 2 == 1);
    const size_t n = m.positions.size();
    std::vector<DualQuatf> dq(joints);
    std::vector<Affine3x4f> pre(joints);
    ASSERT_TRUE(dual_quat_palette(palette, dq, pre));
    Outputs lr(n), ls(n), lp(n), dr(n), ds(n), dp(n);
    ASSERT_TRUE(skin_lbs(m.view(), palette, lr.spans()));
    ASSERT_TRUE(skin_lbs_simd(m.view(), palette, ls.spans()));
    ASSERT_TRUE(skin_lbs_parallel(m.view(), palette, lp.spans(), 256));
    ASSERT_TRUE(skin_dqs(m.view(), {dq, pre}, dr.spans()));
    ASSERT_TRUE(skin_dqs_simd(m.view(), {dq, pre}, ds.spans()));
    ASSERT_TRUE(skin_dqs_parallel(m.view(), {dq, pre}, dp.spans(), {}, {}, 256));
    for (const Outputs* o : {&lr, &ls, &lp, &dr, &ds, &dp}) EXPECT_TRUE(finite_all(*o)) << round;
    EXPECT_LE(max_difference(lr.p, ls.p), 1e-5f) << round;
    EXPECT_LE(max_difference(dr.p, ds.p), 1e-5f) << round;
    expect_same_bits(ls, lp);
    expect_same_bits(ds, dp);
  }
}

// Restores the default kernel choice when a test that forces one ends.
// Kernel sets: 0 SSE4.1 (forced), 1 AVX2 + FMA (AVX-512 forbidden), 2 AVX-512 where the CPU has
// it. `in_use`: set 1 or 2 is the one that runs.
struct KernelChoice {
  explicit KernelChoice(int set) {
    const bool avx2 = set_skin_simd_avx2(set >= 1);
    const bool avx512 = set_skin_simd_avx512(set >= 2);
    in_use = set == 2 ? avx512 : set == 1 && avx2;
  }
  ~KernelChoice() {
    set_skin_simd_avx2(true);
    set_skin_simd_avx512(true);
  }
  bool in_use = false;
};

// Whether kernel set `set` runs; says so where the AVX-512 one cannot (its checks are then left
// out on this machine, visibly).
bool runs(const KernelChoice& choice, int set, const char* test) {
  if (set == 2 && !choice.in_use) {
    std::printf(
        "[   NOTE   ] %s: this CPU has no AVX-512 (F, VL, DQ, BW with the zmm state "
        "saved): the AVX-512 kernel is not tested here\n",
        test);
    return false;
  }
  return true;
}

TEST(SkinPaths, SseAvx2AndAvx512KernelsAgreeWithTheReferenceOnEveryTailLength) {
  // Both kernel sets (the SSE4.1 one is forced; AVX2 runs where the CPU has it), every
  // influence count, and vertex counts 1…19 so that every block tail length (1…7 of 8, 1…3 of
  // 4) and group boundary is hit; the multi-threaded path keeps the SIMD path's bits.
  for (const int set : {0, 1, 2}) {
    const KernelChoice choice(set);
    if (!runs(choice, set, "SseAvx2AndAvx512KernelsAgreeWithTheReferenceOnEveryTailLength"))
      continue;
    if (set == 1 && !choice.in_use) GTEST_SKIP() << "this CPU has no AVX2 + FMA";
    EXPECT_STREQ(skin_simd_kernels(), set == 2 ? "avx512" : set == 1 ? "avx2+fma" : "sse4.1");
    std::mt19937 rng(20 + unsigned(set));
    for (int k = 1; k <= 8; ++k) {
      for (size_t n = 1; n < 20; n += 3) {
        const RandomMesh m = random_mesh(rng, n, k, 12);
        check_all_paths(m, random_palette(rng, 12, 80, false), false, 1e-5f);
        check_all_paths(m, random_palette(rng, 12, 80, true), false, 1e-5f);
        check_all_paths(m, random_palette(rng, 12, 80, false), true, 1e-5f);
        check_all_paths(m, random_palette(rng, 12, 80, true), true, 1e-5f);
      }
      const RandomMesh big = random_mesh(rng, 1203, k, 40);
      check_all_paths(big, random_palette(rng, 40, 60, false), false, 1e-5f);
      check_all_paths(big, random_palette(rng, 40, 60, false), true, 1e-5f);
    }
  }
}

TEST(SkinPaths, SseAndAvx2KernelsAgreeWithEachOther) {
  std::mt19937 rng(22);
  const RandomMesh m = random_mesh(rng, 3001, 4, 50);
  const auto palette = random_palette(rng, 50, 120, false);
  std::vector<DualQuatf> dq(palette.size());
  ASSERT_TRUE(dual_quat_palette(palette, dq, {}));
  const SkinMesh mesh = make_skin_mesh(m.view(), palette.size());
  const size_t n = m.positions.size();
  Outputs lbs_sse(n), dqs_sse(n), lbs_avx(n), dqs_avx(n);
  {
    const KernelChoice sse(false);
    ASSERT_TRUE(skin_lbs(mesh, palette, lbs_sse.spans()));
    ASSERT_TRUE(skin_dqs(mesh, {dq, {}}, dqs_sse.spans()));
  }
  const KernelChoice avx(true);
  if (!avx.in_use) GTEST_SKIP() << "this CPU has no AVX2 + FMA";
  ASSERT_TRUE(skin_lbs(mesh, palette, lbs_avx.spans()));
  ASSERT_TRUE(skin_dqs(mesh, {dq, {}}, dqs_avx.spans()));
  expect_agree(lbs_sse, lbs_avx, 2e-6f, "LBS SSE vs AVX2");
  expect_agree(dqs_sse, dqs_avx, 2e-6f, "DQS SSE vs AVX2");
}

// The AVX-512 build of the LBS kernel is the AVX2 one's source (its passes over pairs of blocks
// run each lane's operations in the same order): the same bits on every normal mode and output
// order, with and without the planar copies, with zero normals and tangents here and there (the
// renormalization's fallback), and the multi-threaded path keeps them.
TEST(SkinPaths, Avx2AndAvx512KernelsAgreeWithEachOther) {
  std::mt19937 rng(24);
  RandomMesh m = random_mesh(rng, 3001, 4, 50);
  for (size_t v = 5; v < m.normals.size(); v += 97) m.normals[v] = {};
  for (size_t v = 7; v < m.tangents.size(); v += 89) m.tangents[v] = {};
  const auto palette = random_palette(rng, 50, 120, true);
  for (const LbsNormals normals : {LbsNormals::inverse_transpose, LbsNormals::blended_matrix}) {
    for (const auto& [order, planar] :
         {std::pair{SkinOutputOrder::original, true}, std::pair{SkinOutputOrder::stored, true},
          std::pair{SkinOutputOrder::original, false}, std::pair{SkinOutputOrder::stored, false}}) {
      SkinMesh mesh = make_skin_mesh(m.view(), palette.size());
      mesh.lbs_normals = normals;
      mesh.output_order = order;
      if (!planar) {
        mesh.planar_positions.clear();
        mesh.planar_normals.clear();
        mesh.planar_tangents.clear();
      }
      const size_t n = m.positions.size();
      Outputs avx2(n), avx512(n), threads(n);
      std::vector<Vec3f> p2(n), p512(n);
      {
        const KernelChoice choice(1);
        if (!choice.in_use) GTEST_SKIP() << "this CPU has no AVX2 + FMA";
        ASSERT_TRUE(skin_lbs(mesh, palette, avx2.spans()));
        ASSERT_TRUE(skin_lbs(mesh, palette, {p2, {}, {}}));
      }
      const KernelChoice choice(2);
      if (!runs(choice, 2, "Avx2AndAvx512KernelsAgreeWithEachOther")) return;
      EXPECT_STREQ(skin_simd_kernels(), "avx512");
      ASSERT_TRUE(skin_lbs(mesh, palette, avx512.spans()));
      ASSERT_TRUE(skin_lbs(mesh, palette, threads.spans(), SkinPath::parallel));
      ASSERT_TRUE(skin_lbs(mesh, palette, {p512, {}, {}}));
      expect_same_bits(avx2, avx512);
      expect_same_bits(avx512, threads);
      EXPECT_EQ(std::memcmp(p2.data(), p512.data(), n * sizeof(Vec3f)), 0);
    }
  }
}

// Full blocks of one- or two-influence vertices that share their joints (runs in the stored
// order) take a blend without transposition in the AVX2 kernel and its AVX-512 build: the same
// operations, so the same bits wherever the blocks start (threads, grains, the groups of a
// SkinMesh), and within 1e-5 of the scalar reference.
TEST(SkinPaths, BlocksSharingTheirJointsKeepTheBits) {
  std::mt19937 rng(71);
  const size_t n = 2001, joints = 30;
  RandomMesh m = random_mesh(rng, n, 2, joints);
  std::uniform_real_distribution<float> weight(0.05f, 0.95f);
  for (size_t v = 0; v < n; ++v) {  // runs of 13 vertices, one or two influences by turns
    const size_t run = v / 13;
    m.joints[2 * v] = uint16_t(run % joints);
    m.joints[2 * v + 1] = uint16_t((run * 7 + 3) % joints);
    const float w = run % 2 ? weight(rng) : 1.0f;
    m.weights[2 * v] = w;
    m.weights[2 * v + 1] = 1.0f - w;
    // Every other one-influence run has a weight a little under 1 (within make_skin_mesh's
    // tolerance of 1e-3, taken as it is): a kernel that took a lone influence's weight as exactly
    // 1 (skipping the multiplication) would give these vertices other bits.
    if (run % 4 == 2) m.weights[2 * v] = 0.9995f;
  }
  const auto palette = random_palette(rng, joints, 80, true);
  const SkinMesh mesh = make_skin_mesh(m.view(), palette.size());
  tbb::task_arena arena(3);
  for (const int set : {0, 1, 2}) {
    const KernelChoice choice(set);
    if (!runs(choice, set, "BlocksSharingTheirJointsKeepTheBits")) continue;
    Outputs ref(n), simd(n), threads(n), view(n);
    ASSERT_TRUE(skin_lbs(m.view(), palette, ref.spans()));
    ASSERT_TRUE(skin_lbs(mesh, palette, simd.spans(), SkinPath::simd));
    ASSERT_TRUE(skin_lbs_simd(m.view(), palette, view.spans()));
    arena.execute(
        [&] { ASSERT_TRUE(skin_lbs(mesh, palette, threads.spans(), SkinPath::parallel)); });
    expect_agree(ref, simd, 1e-5f, "shared joints, SkinMesh");
    expect_agree(ref, view, 1e-5f, "shared joints, view");
    expect_same_bits(simd, threads);
    for (const size_t grain : {size_t(1), size_t(3), size_t(7), size_t(4096)}) {
      Outputs g(n);
      arena.execute([&] { ASSERT_TRUE(skin_lbs_parallel(m.view(), palette, g.spans(), grain)); });
      expect_same_bits(view, g);
    }
    // The column kernels (positions alone; normals and tangents by the blended matrix) take
    // such blocks too: the same bits wherever the blocks start, in stored order as well.
    for (const bool blended : {false, true}) {
      const LbsNormals mode = blended ? LbsNormals::blended_matrix : LbsNormals::inverse_transpose;
      Outputs one(n), stored(n), stored_threads(n);
      std::vector<Vec3f> p_ref(n), p_one(n);
      ASSERT_TRUE(skin_lbs(m.view(), palette, ref.spans(), mode));
      ASSERT_TRUE(skin_lbs_simd(m.view(), palette, one.spans(), mode));
      ASSERT_TRUE(skin_lbs(m.view(), palette, {p_ref, {}, {}}));
      ASSERT_TRUE(skin_lbs_simd(m.view(), palette, {p_one, {}, {}}));
      EXPECT_LE(max_difference(p_ref, p_one), 1e-5f);
      expect_agree(ref, one, 1e-5f, blended ? "shared joints, blended" : "shared joints");
      SkinMesh s = mesh;
      s.lbs_normals = mode;
      {  // original order (scattered stores): one thread and the parallel path's blocks
        std::vector<Vec3f> a(n), b(n);
        ASSERT_TRUE(skin_lbs(s, palette, {a, {}, {}}, SkinPath::simd));
        arena.execute([&] { ASSERT_TRUE(skin_lbs(s, palette, {b, {}, {}}, SkinPath::parallel)); });
        EXPECT_LE(max_difference(a, p_ref), 1e-5f);
        EXPECT_EQ(std::memcmp(a.data(), b.data(), n * sizeof(Vec3f)), 0);
      }
      s.output_order = SkinOutputOrder::stored;
      ASSERT_TRUE(skin_lbs(s, palette, stored.spans(), SkinPath::simd));
      arena.execute(
          [&] { ASSERT_TRUE(skin_lbs(s, palette, stored_threads.spans(), SkinPath::parallel)); });
      expect_same_bits(stored, stored_threads);
      for (const size_t grain : {size_t(1), size_t(3), size_t(7), size_t(4096)}) {
        Outputs g(n);
        std::vector<Vec3f> p_g(n);
        arena.execute([&] {
          ASSERT_TRUE(skin_lbs_parallel(m.view(), palette, g.spans(), grain, mode));
          ASSERT_TRUE(skin_lbs_parallel(m.view(), palette, {p_g, {}, {}}, grain));
        });
        expect_same_bits(one, g);
        EXPECT_EQ(std::memcmp(p_one.data(), p_g.data(), n * sizeof(Vec3f)), 0) << grain;
      }
    }
  }
}

// A mesh of runs of vertices sharing their joints, as rigid regions give: runs of 1…20 vertices
// with one to four influences, drawn from few joint sets so that they come back later and
// make_skin_mesh's sorting has something to gather.
RandomMesh mesh_of_runs(std::mt19937& rng, size_t n, size_t joints) {
  RandomMesh m = random_mesh(rng, n, 4, joints);
  std::uniform_real_distribution<float> weight(0.05f, 1.0f);
  for (size_t v = 0; v < n;) {
    const size_t run = std::min<size_t>(n - v, 1 + rng() % 20);
    const int used = 1 + int(rng() % 4);
    std::array<uint16_t, 4> j{};
    for (uint16_t& x : j) x = uint16_t(rng() % 6);
    if (rng() % 2) std::reverse(j.begin(), j.end());
    for (size_t r = 0; r < run; ++r, ++v) {
      float sum = 0;
      for (int i = 0; i < 4; ++i) {
        m.joints[4 * v + size_t(i)] = uint16_t((j[size_t(i)] * 5 + size_t(i)) % joints);
        m.weights[4 * v + size_t(i)] = i < used ? weight(rng) : 0.0f;
        sum += m.weights[4 * v + size_t(i)];
      }
      for (int i = 0; i < 4; ++i) m.weights[4 * v + size_t(i)] /= sum;
    }
  }
  return m;
}

// make_skin_mesh sorts each influence-count group by joint set, whole blocks of eight first: the
// vertices of one joint sequence keep their original order, and every joint sequence fills as
// many aligned blocks of eight as its count allows.
TEST(SkinPaths, SkinMeshGathersTheVerticesOfAJointSetIntoBlocks) {
  std::mt19937 rng(81);
  const RandomMesh m = mesh_of_runs(rng, 3001, 40);
  const SkinMesh mesh = make_skin_mesh(m.view(), 40);
  ASSERT_EQ(mesh.vertex_count(), 3001u);
  for (const SkinMesh::Group& g : mesh.groups) {
    const size_t k = size_t(g.influences);
    const auto seq = [&](size_t v) {  // stored vertex v's joints, in their order
      const uint16_t* j = &mesh.joints[g.pair_begin + (v - g.begin) * k];
      return std::vector<uint16_t>(j, j + k);
    };
    std::map<std::vector<uint16_t>, size_t> count, last;
    for (size_t v = g.begin; v < g.begin + g.count; ++v) {
      const std::vector<uint16_t> s = seq(v);
      if (count[s]++ > 0) {
        EXPECT_GT(mesh.order[v], last[s]) << "stable within a joint sequence";
      }
      last[s] = mesh.order[v];
    }
    size_t uniform = 0, best = 0;
    for (size_t b = g.begin; b + 8 <= g.begin + g.count; b += 8) {
      bool same = true;
      for (size_t v = b + 1; v < b + 8; ++v) same = same && seq(v) == seq(b);
      uniform += same ? 1 : 0;
    }
    for (const auto& [s, c] : count) best += c / 8;
    EXPECT_EQ(uniform, best) << g.influences << " influences";
    EXPECT_GT(best, 0u);
  }
}

// The layout changes where vertices are stored, not what they become: outputs in original order
// have the same bits as from a SkinMesh that keeps the original order inside each group (the
// layout before the sorting), on every path, normal mode and kernel set, LBS and DQS.
TEST(SkinPaths, SortedLayoutKeepsTheBitsOfEveryVertex) {
  std::mt19937 rng(82);
  const size_t joints = 40;
  for (const bool runs_of_joints : {true, false}) {
    const RandomMesh m =
        runs_of_joints ? mesh_of_runs(rng, 2003, joints) : random_mesh(rng, 2003, 8, joints);
    const size_t n = m.positions.size();
    const SkinMesh sorted = make_skin_mesh(m.view(), joints);
    // The same groups, each in original order.
    SkinMesh plain = sorted;
    for (const SkinMesh::Group& g : sorted.groups) {
      std::vector<size_t> by_original(g.count);
      for (size_t i = 0; i < g.count; ++i) by_original[i] = g.begin + i;
      std::sort(by_original.begin(), by_original.end(),
                [&](size_t a, size_t b) { return sorted.order[a] < sorted.order[b]; });
      const size_t k = size_t(g.influences);
      for (size_t i = 0; i < g.count; ++i) {
        const size_t from = by_original[i], to = g.begin + i;
        plain.order[to] = sorted.order[from];
        plain.positions[to] = sorted.positions[from];
        plain.normals[to] = sorted.normals[from];
        plain.tangents[to] = sorted.tangents[from];
        for (size_t p = 0; p < k; ++p) {
          plain.joints[g.pair_begin + i * k + p] =
              sorted.joints[g.pair_begin + (from - g.begin) * k + p];
          plain.weights[g.pair_begin + i * k + p] =
              sorted.weights[g.pair_begin + (from - g.begin) * k + p];
        }
        for (int c = 0; c < 3; ++c) {
          plain.planar_positions[size_t(c) * n + to] =
              sorted.planar_positions[size_t(c) * n + from];
          plain.planar_normals[size_t(c) * n + to] = sorted.planar_normals[size_t(c) * n + from];
          plain.planar_tangents[size_t(c) * n + to] = sorted.planar_tangents[size_t(c) * n + from];
        }
      }
    }
    ASSERT_NE(plain.order, sorted.order);
    const auto palette = random_palette(rng, joints, 90, true);
    std::vector<DualQuatf> dq(joints);
    std::vector<Affine3x4f> pre(joints);
    ASSERT_TRUE(dual_quat_palette(palette, dq, pre));
    std::vector<float> amount(n);
    std::uniform_real_distribution<float> u(0, 1);
    for (float& a : amount) a = u(rng);
    for (const int set : {0, 1, 2}) {
      const KernelChoice choice(set);
      if (!runs(choice, set, "SortedLayoutKeepsTheBitsOfEveryVertex")) continue;
      for (const SkinPath path : {SkinPath::scalar, SkinPath::simd, SkinPath::parallel}) {
        for (int method = 0; method < 5; ++method) {
          for (const int attributes : {1, 2, 3}) {
            const auto run = [&](SkinMesh mesh) {
              mesh.lbs_normals =
                  method == 1 ? LbsNormals::blended_matrix : LbsNormals::inverse_transpose;
              Outputs o(n);
              SkinOutputs out = o.spans();
              if (attributes < 3) out.tangents = {};
              if (attributes < 2) out.normals = {};
              switch (method) {
                case 0:
                case 1:
                  EXPECT_TRUE(skin_lbs(mesh, palette, out, path));
                  break;
                case 2:
                  EXPECT_TRUE(skin_dqs(mesh, {dq, {}}, out, path));
                  break;
                case 3:
                  EXPECT_TRUE(skin_dqs(mesh, {dq, pre}, out, path));
                  break;
                default:
                  EXPECT_TRUE(skin_dqs(mesh, {dq, {}}, out, path, amount, palette));
                  break;
              }
              return o;
            };
            SCOPED_TRACE(testing::Message() << "set " << set << " path " << int(path) << " method "
                                            << method << " attributes " << attributes);
            expect_same_bits(run(plain), run(sorted));
          }
        }
      }
    }
  }
}

// Positions alone take their own AVX2 kernel (per-call column palette, 16-byte stores that
// overlap the next vertex): every influence count and length, both output orders, views and
// SkinMeshes, one and many threads, small palettes and ones too large for the column copy. It
// must match the full kernel's positions and write nothing past its range or its outputs.
TEST(SkinPaths, PositionsOnlyKernelsAgreeAndStayInsideTheirOutputs) {
  const Vec3f sentinel{-7.5e30f, 3.25e-20f, 1.0e10f};
  const auto intact = [&](const std::vector<Vec3f>& buffer, size_t n) {
    for (size_t i = n; i < buffer.size(); ++i)
      if (std::memcmp(&buffer[i], &sentinel, sizeof(Vec3f)) != 0) return false;
    return true;
  };
  for (const int set : {0, 1, 2}) {
    const KernelChoice choice(set);
    if (!runs(choice, set, "PositionsOnlyKernelsAgreeAndStayInsideTheirOutputs")) continue;
    std::mt19937 rng(30 + unsigned(set));
    for (const size_t joints : {size_t(12), size_t(300)}) {
      for (int k = 1; k <= 8; ++k) {
        for (const size_t n : {size_t(1), size_t(2), size_t(3), size_t(4), size_t(5), size_t(7),
                               size_t(8), size_t(9), size_t(17), size_t(1203)}) {
          const RandomMesh m = random_mesh(rng, n, k, joints);
          const auto palette = random_palette(rng, joints, 80, k % 2 == 0);
          Outputs full(n);
          ASSERT_TRUE(skin_lbs(m.view(), palette, full.spans()));
          SkinMesh mesh = make_skin_mesh(m.view(), palette.size());
          for (int run = 0; run < 7; ++run) {
            std::vector<Vec3f> buffer(n + 2, sentinel);
            const SkinOutputs out{std::span<Vec3f>(buffer.data(), n), {}, {}};
            mesh.output_order = run >= 5 ? SkinOutputOrder::stored : SkinOutputOrder::original;
            switch (run) {
              case 0:
                ASSERT_TRUE(skin_lbs(m.view(), palette, out));
                break;
              case 1:
                ASSERT_TRUE(skin_lbs_simd(m.view(), palette, out));
                break;
              case 2:
                ASSERT_TRUE(skin_lbs_parallel(m.view(), palette, out, 3));
                break;
              case 3:
              case 5:
                ASSERT_TRUE(skin_lbs(mesh, palette, out, SkinPath::simd));
                break;
              default:
                ASSERT_TRUE(skin_lbs(mesh, palette, out, SkinPath::parallel));
                break;
            }
            ASSERT_TRUE(intact(buffer, n)) << "run " << run << " wrote past its outputs";
            buffer.resize(n);
            if (run >= 5) {
              const std::vector<Vec3f> expected = to_stored_order<Vec3f>(mesh, full.p);
              EXPECT_LE(max_difference(buffer, expected), 1e-5f) << "run " << run;
            } else {
              EXPECT_LE(max_difference(buffer, full.p), 1e-5f) << "run " << run;
            }
          }
        }
      }
    }
  }
}

TEST(SkinPaths, StoredOutputOrderIsTheOriginalOrderPermuted) {
  std::mt19937 rng(23);
  const RandomMesh m = random_mesh(rng, 2501, 6, 30);
  const auto palette = random_palette(rng, 30, 90, true);
  std::vector<DualQuatf> dq(palette.size());
  std::vector<Affine3x4f> pre(palette.size());
  ASSERT_TRUE(dual_quat_palette(palette, dq, pre));
  std::vector<float> amount(m.positions.size());
  std::uniform_real_distribution<float> u(0, 1);
  for (float& a : amount) a = u(rng);
  const SkinMesh original = make_skin_mesh(m.view(), palette.size());
  SkinMesh stored = original;
  stored.output_order = SkinOutputOrder::stored;
  const std::vector<float> stored_amount = to_stored_order<float>(stored, amount);
  const size_t n = m.positions.size();
  for (const int set : {0, 1, 2}) {
    const KernelChoice choice(set);
    if (!runs(choice, set, "StoredOutputOrderIsTheOriginalOrderPermuted")) continue;
    for (const SkinPath path : {SkinPath::scalar, SkinPath::simd, SkinPath::parallel}) {
      for (int method = 0; method < 4; ++method) {
        Outputs a(n), b(n);
        const auto run = [&](const SkinMesh& mesh, Outputs& o, std::span<const float> mix) {
          switch (method) {
            case 0:
              return skin_lbs(mesh, palette, o.spans(), path);
            case 1:
              return skin_dqs(mesh, {dq, {}}, o.spans(), path);
            case 2:
              return skin_dqs(mesh, {dq, pre}, o.spans(), path);
            default:
              return skin_dqs(mesh, {dq, {}}, o.spans(), path, mix, palette);
          }
        };
        ASSERT_TRUE(run(original, a, amount));
        ASSERT_TRUE(run(stored, b, stored_amount));
        for (size_t v = 0; v < n; ++v) {
          const size_t o = original.order[v];
          ASSERT_EQ(std::memcmp(&b.p[v], &a.p[o], sizeof(Vec3f)), 0) << method << " " << v;
          ASSERT_EQ(std::memcmp(&b.n[v], &a.n[o], sizeof(Vec3f)), 0) << method << " " << v;
          ASSERT_EQ(std::memcmp(&b.t[v], &a.t[o], sizeof(Vec3f)), 0) << method << " " << v;
        }
      }
    }
  }
}

TEST(SkinPaths, StoredIndicesDrawTheSameTriangles) {
  std::mt19937 rng(24);
  const RandomMesh m = random_mesh(rng, 400, 4, 10);
  SkinMesh mesh = make_skin_mesh(m.view(), 10);
  mesh.output_order = SkinOutputOrder::stored;
  std::vector<uint32_t> triangles;
  for (int i = 0; i < 900; ++i) triangles.push_back(uint32_t(rng() % 400));
  const std::vector<uint32_t> stored = stored_indices(mesh, triangles);
  ASSERT_EQ(stored.size(), triangles.size());
  const auto palette = random_palette(rng, 10, 45, false);
  Outputs original_order(400), stored_order(400);
  SkinMesh as_original = mesh;
  as_original.output_order = SkinOutputOrder::original;
  ASSERT_TRUE(skin_lbs(as_original, palette, original_order.spans()));
  ASSERT_TRUE(skin_lbs(mesh, palette, stored_order.spans()));
  for (size_t i = 0; i < triangles.size(); ++i) {
    EXPECT_EQ(mesh.positions[stored[i]].x, m.positions[triangles[i]].x);
    EXPECT_EQ(
        std::memcmp(&stored_order.p[stored[i]], &original_order.p[triangles[i]], sizeof(Vec3f)), 0);
  }
  const std::vector<Vec3f> normals = to_stored_order<Vec3f>(mesh, m.normals);
  for (size_t v = 0; v < 400; ++v) EXPECT_EQ(normals[v].z, mesh.normals[v].z);
  const std::vector<uint32_t> bad{1, 2, 400};
  try {
    (void)stored_indices(mesh, bad);
    FAIL() << "an index past the mesh was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("vertex 400 of a 400-vertex mesh"), std::string::npos)
        << e.what();
  }
}

TEST(SkinPaths, BadInputIsRejected) {
  std::mt19937 rng(14);
  RandomMesh m = random_mesh(rng, 10, 4, 5);
  EXPECT_FALSE(check_skin_mesh(m.view(), 5).has_value());
  const std::vector<Affine3x4f> palette(5);
  Outputs o(10);
  {  // weights that sum to zero
    RandomMesh bad = m;
    for (size_t i = 12; i < 16; ++i) bad.weights[i] = 0;
    const auto issue = check_skin_mesh(bad.view(), 5);
    ASSERT_TRUE(issue.has_value());
    EXPECT_EQ(issue->vertex, 3u);
    EXPECT_EQ(issue->reason, "weights sum to 0");
    EXPECT_THROW(make_skin_mesh(bad.view(), 5), Error);
  }
  {  // joint index out of range: check names it, every path refuses
    RandomMesh bad = m;
    bad.joints[21] = 5;
    const auto issue = check_skin_mesh(bad.view(), 5);
    ASSERT_TRUE(issue.has_value());
    EXPECT_EQ(issue->vertex, 5u);
    EXPECT_NE(issue->reason.find("joint 5"), std::string::npos);
    EXPECT_FALSE(skin_lbs_simd(bad.view(), palette, o.spans()));
    EXPECT_FALSE(skin_lbs_parallel(bad.view(), palette, o.spans()));
    std::vector<DualQuatf> dq(5);
    EXPECT_FALSE(skin_dqs_simd(bad.view(), {dq, {}}, o.spans()));
    EXPECT_FALSE(skin_dqs_parallel(bad.view(), {dq, {}}, o.spans()));
    EXPECT_THROW(validate_skin_mesh(bad.view(), 5, "a.glb", "body"), Error);
  }
  {  // NaN position
    RandomMesh bad = m;
    bad.positions[7].y = std::nanf("");
    const auto issue = check_skin_mesh(bad.view(), 5);
    ASSERT_TRUE(issue.has_value());
    EXPECT_EQ(issue->vertex, 7u);
    EXPECT_EQ(issue->reason, "position is NaN or infinite");
  }
  {  // wrong counts: every path returns false and writes nothing
    RandomMesh bad = m;
    bad.weights.pop_back();
    EXPECT_TRUE(check_skin_mesh(bad.view(), 5).has_value());
    Outputs untouched(10);
    EXPECT_FALSE(skin_lbs_simd(bad.view(), palette, untouched.spans()));
    EXPECT_FALSE(skin_lbs_parallel(bad.view(), palette, untouched.spans()));
    for (const Vec3f& p : untouched.p) EXPECT_EQ(p.x, 0.0f);
    Outputs short_out(9);
    EXPECT_FALSE(skin_lbs_simd(m.view(), palette, short_out.spans()));
    RandomMesh nine = m;
    nine.influences = 9;
    EXPECT_TRUE(check_skin_mesh(nine.view(), 5).has_value());
    EXPECT_FALSE(skin_lbs_simd(nine.view(), palette, o.spans()));
  }
  {  // a SkinMesh refuses a smaller palette and outputs of the wrong size
    const SkinMesh mesh = make_skin_mesh(m.view(), 5);
    const std::vector<Affine3x4f> small(4);
    EXPECT_FALSE(skin_lbs(mesh, small, o.spans()));
    Outputs short_out(9);
    EXPECT_FALSE(skin_lbs(mesh, palette, short_out.spans()));
    std::vector<DualQuatf> dq(5);
    std::vector<float> amount(9, 0.5f);
    EXPECT_FALSE(skin_dqs(mesh, {dq, {}}, o.spans(), SkinPath::simd, amount, palette));
    RandomMesh no_normals = m;
    no_normals.normals.clear();
    const SkinMesh bare = make_skin_mesh(no_normals.view(), 5);
    EXPECT_FALSE(skin_lbs(bare, palette, o.spans()));
  }
}

// make_skin_mesh's hemisphere links: every distinct (anchor, other) pair of a vertex appears once,
// the first dqs_tree_links as a breadth-first forest (each reaches a new joint from one already
// reached).
TEST(SkinPaths, DqsHemisphereLinksCoverEveryAnchorPairOnce) {
  std::mt19937 rng(41);
  const RandomMesh m = random_mesh(rng, 3000, 4, 25);
  const SkinMesh mesh = make_skin_mesh(m.view(), 25);
  ASSERT_TRUE(mesh.dqs_links_built);
  std::vector<std::array<uint16_t, 2>> expected;
  for (const SkinMesh::Group& g : mesh.groups)
    for (size_t v = 0; v < g.count; ++v) {
      const uint16_t* j = &mesh.joints[g.pair_begin + v * size_t(g.influences)];
      for (int i = 1; i < g.influences; ++i)
        if (j[i] != j[0]) expected.push_back({std::min(j[0], j[i]), std::max(j[0], j[i])});
    }
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  std::vector<std::array<uint16_t, 2>> links;
  for (const auto& l : mesh.dqs_links)
    links.push_back({std::min(l[0], l[1]), std::max(l[0], l[1])});
  std::sort(links.begin(), links.end());
  EXPECT_EQ(links, expected);
  std::vector<bool> reached(25, false);
  for (size_t i = 0; i < mesh.dqs_tree_links; ++i) {
    const auto& l = mesh.dqs_links[i];
    if (!reached[l[0]]) reached[l[0]] = true;  // a new tree's root
    EXPECT_FALSE(reached[l[1]]) << "tree link " << i << " reaches joint " << l[1] << " twice";
    reached[l[1]] = true;
  }
}

// Pure DQS of a SkinMesh flips the palette's dual quaternions once per call so that no influence
// needs a sign test; when the pose makes the links' signs inconsistent around a cycle it falls
// back to testing each influence. Either way the result must have the same bits as the
// per-influence test (a mesh without links), for randomly negated dual quaternions (q and −q are
// the same transform), every influence count, attributes, output orders and threads.
TEST(SkinPaths, DqsSignedPaletteGivesThePerInfluenceResultBitForBit) {
  const auto same = [](const std::vector<Vec3f>& a, const std::vector<Vec3f>& b) {
    return std::memcmp(a.data(), b.data(), a.size() * sizeof(Vec3f)) == 0;
  };
  for (const int set : {0, 1}) {  // DQS has no AVX-512 kernel
    const KernelChoice choice(set);
    std::mt19937 rng(42 + unsigned(set));
    for (int k = 1; k <= 8; ++k) {
      // 75°: every pair of joints within 150°, so the links agree (the signed path runs);
      // 180°: links disagree around some cycle (the fallback runs).
      for (const float max_degrees : {75.0f, 180.0f}) {
        const size_t n = 1000 + size_t(k);
        const RandomMesh m = random_mesh(rng, n, k, 20);
        const auto palette = random_palette(rng, 20, max_degrees, false);
        std::vector<DualQuatf> dq(palette.size());
        ASSERT_TRUE(dual_quat_palette(palette, dq, {}));
        for (DualQuatf& q : dq)
          if (rng() % 2) q = {-q.real, -q.dual};
        SkinMesh linked = make_skin_mesh(m.view(), palette.size());
        SkinMesh unlinked = linked;
        unlinked.dqs_links_built = false;
        for (const SkinOutputOrder order : {SkinOutputOrder::original, SkinOutputOrder::stored})
          for (const SkinPath path : {SkinPath::simd, SkinPath::parallel})
            for (int attributes = 0; attributes < 3; ++attributes) {
              linked.output_order = unlinked.output_order = order;
              Outputs a(n), b(n);
              SkinOutputs sa = a.spans(), sb = b.spans();
              if (attributes < 2) sa.tangents = sb.tangents = {};
              if (attributes < 1) sa.normals = sb.normals = {};
              ASSERT_TRUE(skin_dqs(linked, {dq, {}}, sa, path));
              ASSERT_TRUE(skin_dqs(unlinked, {dq, {}}, sb, path));
              EXPECT_TRUE(same(a.p, b.p) && same(a.n, b.n) && same(a.t, b.t))
                  << "k " << k << ", " << max_degrees << "°, attributes " << attributes;
            }
      }
    }
  }
}

// DQS of positions alone takes per-call copies on AVX2: one-influence vertices by the column
// kernel from the dual quaternions' rigid matrices (their weight ignored, as DQS normalizes it
// away), the rest by the signed palette. Every influence count and length, both output orders,
// views and SkinMeshes, one and many threads, palettes small and too large for the copies:
// within 1e-5 m of the scalar reference, nothing written past the outputs.
TEST(SkinPaths, DqsPositionsOnlyAgreeAndStayInsideTheirOutputs) {
  const Vec3f sentinel{-7.5e30f, 3.25e-20f, 1.0e10f};
  for (const int set : {0, 1}) {  // DQS has no AVX-512 kernel
    const KernelChoice choice(set);
    std::mt19937 rng(50 + unsigned(set));
    for (const size_t joints : {size_t(12), size_t(300)}) {
      for (int k = 1; k <= 8; ++k) {
        for (const size_t n :
             {size_t(1), size_t(2), size_t(3), size_t(8), size_t(9), size_t(17), size_t(1203)}) {
          const RandomMesh m = random_mesh(rng, n, k, joints);
          const auto palette = random_palette(rng, joints, 80, false);
          std::vector<DualQuatf> dq(palette.size());
          ASSERT_TRUE(dual_quat_palette(palette, dq, {}));
          Outputs full(n);
          ASSERT_TRUE(skin_dqs(m.view(), {dq, {}}, full.spans()));
          SkinMesh mesh = make_skin_mesh(m.view(), palette.size());
          for (int run = 0; run < 6; ++run) {
            std::vector<Vec3f> buffer(n + 2, sentinel);
            const SkinOutputs out{std::span<Vec3f>(buffer.data(), n), {}, {}};
            mesh.output_order = run >= 4 ? SkinOutputOrder::stored : SkinOutputOrder::original;
            if (run == 0)
              ASSERT_TRUE(skin_dqs_simd(m.view(), {dq, {}}, out));
            else if (run == 1)
              ASSERT_TRUE(skin_dqs_parallel(m.view(), {dq, {}}, out, {}, {}, 3));
            else
              ASSERT_TRUE(skin_dqs(mesh, {dq, {}}, out,
                                   run % 2 == 0 ? SkinPath::simd : SkinPath::parallel));
            for (size_t i = n; i < buffer.size(); ++i)
              ASSERT_EQ(std::memcmp(&buffer[i], &sentinel, sizeof(Vec3f)), 0)
                  << "run " << run << " wrote past its outputs";
            buffer.resize(n);
            const std::vector<Vec3f> expected =
                run >= 4 ? to_stored_order<Vec3f>(mesh, full.p) : full.p;
            EXPECT_LE(max_difference(buffer, expected), 1e-5f)
                << "run " << run << ", k " << k << ", n " << n << ", joints " << joints;
          }
        }
      }
    }
  }
}

// LbsNormals::blended_matrix (ozz's math: normals and tangents by the blended 3×3 part, not
// renormalized) takes the AVX2 column kernel when positions are written and the palette fits
// the column copy, else the 8- and 4-wide kernels. Every path, attribute set, influence count
// and length must match the scalar reference's blended mode, keep the SIMD path's bits on
// every thread count, and write nothing past its outputs.
TEST(SkinPaths, BlendedMatrixNormalsAgreeOnEveryPathAndStayInsideTheirOutputs) {
  const Vec3f sentinel{-7.5e30f, 3.25e-20f, 1.0e10f};
  struct Buffers {
    std::vector<Vec3f> p, n, t;
    Buffers(size_t count, const Vec3f& fill)
        : p(count + 2, fill), n(count + 2, fill), t(count + 2, fill) {}
  };
  for (const int set : {0, 1, 2}) {
    const KernelChoice choice(set);
    if (!runs(choice, set, "BlendedMatrixNormalsAgreeOnEveryPathAndStayInsideTheirOutputs"))
      continue;
    std::mt19937 rng(60 + unsigned(set));
    for (const size_t joints : {size_t(12), size_t(300)}) {
      for (int k = 1; k <= 8; ++k) {
        for (const size_t n : {size_t(1), size_t(2), size_t(3), size_t(4), size_t(7), size_t(8),
                               size_t(9), size_t(17), size_t(1203)}) {
          const RandomMesh m = random_mesh(rng, n, k, joints);
          const auto palette = random_palette(rng, joints, 80, k % 2 == 0);
          SkinMesh mesh = make_skin_mesh(m.view(), palette.size());
          mesh.lbs_normals = LbsNormals::blended_matrix;
          // Attribute sets: P N T, P N, P T, N alone (no positions: never by columns).
          for (const int attributes : {7, 3, 5, 2}) {
            const bool want_p = attributes & 1, want_n = attributes & 2, want_t = attributes & 4;
            auto spans = [&](Buffers& b) {
              return SkinOutputs{want_p ? std::span<Vec3f>(b.p.data(), n) : std::span<Vec3f>{},
                                 want_n ? std::span<Vec3f>(b.n.data(), n) : std::span<Vec3f>{},
                                 want_t ? std::span<Vec3f>(b.t.data(), n) : std::span<Vec3f>{}};
            };
            Buffers ref(n, sentinel);
            ASSERT_TRUE(skin_lbs(m.view(), palette, spans(ref), LbsNormals::blended_matrix));
            Buffers simd(n, sentinel), threads(n, sentinel);
            for (int run = 0; run < 7; ++run) {
              Buffers b(n, sentinel);
              mesh.output_order = run >= 5 ? SkinOutputOrder::stored : SkinOutputOrder::original;
              switch (run) {
                case 0:
                  ASSERT_TRUE(
                      skin_lbs_simd(m.view(), palette, spans(b), LbsNormals::blended_matrix));
                  break;
                case 1:
                  ASSERT_TRUE(skin_lbs_parallel(m.view(), palette, spans(b), 3,
                                                LbsNormals::blended_matrix));
                  break;
                case 2:
                  ASSERT_TRUE(skin_lbs(mesh, palette, spans(b), SkinPath::scalar));
                  break;
                case 3:
                case 5:
                  ASSERT_TRUE(skin_lbs(mesh, palette, spans(b), SkinPath::simd));
                  break;
                default:
                  ASSERT_TRUE(skin_lbs(mesh, palette, spans(b), SkinPath::parallel));
                  break;
              }
              for (std::vector<Vec3f>* buffer : {&b.p, &b.n, &b.t}) {
                const size_t written = buffer == &b.p   ? (want_p ? n : 0)
                                       : buffer == &b.n ? (want_n ? n : 0)
                                                        : (want_t ? n : 0);
                for (size_t i = written; i < buffer->size(); ++i)
                  ASSERT_EQ(std::memcmp(&(*buffer)[i], &sentinel, sizeof(Vec3f)), 0)
                      << "run " << run << " wrote past its outputs (attributes " << attributes
                      << ", k " << k << ", n " << n << ")";
              }
              if (run == 3) simd = b;
              if (run == 4) threads = b;
              for (auto [got, want] :
                   {std::pair{&b.p, &ref.p}, std::pair{&b.n, &ref.n}, std::pair{&b.t, &ref.t}}) {
                std::vector<Vec3f> g(got->begin(), got->begin() + long(n));
                std::vector<Vec3f> w(want->begin(), want->begin() + long(n));
                if (run >= 5) w = to_stored_order<Vec3f>(mesh, w);
                EXPECT_LE(max_difference(g, w), 1e-5f)
                    << "run " << run << ", attributes " << attributes << ", k " << k << ", n " << n
                    << ", joints " << joints;
              }
            }
            EXPECT_EQ(simd.p, threads.p);
            EXPECT_EQ(simd.n, threads.n);
            EXPECT_EQ(simd.t, threads.t);
          }
        }
      }
    }
  }
}

// Where the two normal modes agree and where they part (docs/skin.md): one rigid bone gives
// the same unit normal; a uniformly scaled one the same direction, s times as long; a 50/50
// blend of rotations of ±45° about z maps n = (1, 0, 1)/√2 by M = diag(c, c, 1), c = cos 45°:
// M·n = (c, 0, 1)/√2 = (0.5, 0, 0.7071), while the inverse transpose (cofactor diag(c, c, c²))
// gives (1, 0, c)/√(1 + c²) = (0.8165, 0, 0.5774).
TEST(SkinPaths, BlendedMatrixNormalsMatchTheInverseTransposeOnlyForRigidBones) {
  const float c = std::cos(3.14159265f / 4);
  const Vec3f n0 = normalize(Vec3f{1, 0, 1});
  const std::vector<Vec3f> positions{{0.1f, 0.2f, 0.3f}}, normals{n0},
      tangents{normalize(Vec3f{-1, 0, 1})};
  auto skin_one = [&](const std::vector<Affine3x4f>& palette, std::vector<uint16_t> joints,
                      std::vector<float> weights, LbsNormals mode) {
    const SkinMeshView view{positions, normals, tangents, int(joints.size()), joints, weights};
    std::vector<Vec3f> p(1), n(1), t(1);
    EXPECT_TRUE(skin_lbs(view, palette, {p, n, t}, mode));
    SkinMesh mesh = make_skin_mesh(view, palette.size());
    mesh.lbs_normals = mode;
    std::vector<Vec3f> p2(1), n2(1), t2(1);
    EXPECT_TRUE(skin_lbs(mesh, palette, {p2, n2, t2}));
    EXPECT_LE(distance(n[0], n2[0]), 1e-6f);
    EXPECT_LE(distance(t[0], t2[0]), 1e-6f);
    return std::pair{n[0], t[0]};
  };
  const Quatf turn = Quatf::from_axis_angle(normalize(Vec3f{1, 2, 3}), 0.7f);
  const std::vector<Affine3x4f> rigid{
      to_affine3x4(Mat4f::translation({0.3f, -1, 2}) * Mat4f::rotation(turn))};
  const auto [rigid_blended, rigid_t] = skin_one(rigid, {0}, {1}, LbsNormals::blended_matrix);
  const auto [rigid_exact, rigid_te] = skin_one(rigid, {0}, {1}, LbsNormals::inverse_transpose);
  EXPECT_LE(distance(rigid_blended, rigid_exact), 1e-6f);
  EXPECT_LE(distance(rigid_t, rigid_te), 1e-6f);

  const std::vector<Affine3x4f> scaled{
      to_affine3x4(Mat4f::rotation(turn) * Mat4f::scaling({2, 2, 2}))};
  const auto [scaled_blended, scaled_t] = skin_one(scaled, {0}, {1}, LbsNormals::blended_matrix);
  const auto [scaled_exact, scaled_te] = skin_one(scaled, {0}, {1}, LbsNormals::inverse_transpose);
  EXPECT_NEAR(length(scaled_blended), 2.0f, 1e-5f);
  EXPECT_LE(distance(scaled_blended * 0.5f, scaled_exact), 1e-6f);
  EXPECT_NEAR(length(scaled_exact), 1.0f, 1e-6f);

  const float quarter = 3.14159265f / 4;
  const std::vector<Affine3x4f> twist{
      to_affine3x4(Mat4f::rotation(Quatf::from_axis_angle({0, 0, 1}, quarter))),
      to_affine3x4(Mat4f::rotation(Quatf::from_axis_angle({0, 0, 1}, -quarter)))};
  const auto [blended, bt] = skin_one(twist, {0, 1}, {0.5f, 0.5f}, LbsNormals::blended_matrix);
  const auto [exact, et] = skin_one(twist, {0, 1}, {0.5f, 0.5f}, LbsNormals::inverse_transpose);
  EXPECT_NEAR(blended.x, 0.5f, 1e-6f);
  EXPECT_NEAR(blended.y, 0.0f, 1e-6f);
  EXPECT_NEAR(blended.z, std::sqrt(0.5f), 1e-6f);
  EXPECT_NEAR(exact.x, 1 / std::sqrt(1 + c * c), 1e-6f);
  EXPECT_NEAR(exact.z, c / std::sqrt(1 + c * c), 1e-6f);
  EXPECT_NEAR(length(bt), std::sqrt(0.5f * c * c + 0.5f), 1e-6f);  // M·t, not renormalized
  EXPECT_NEAR(length(et), 1.0f, 1e-6f);
  EXPECT_EQ(SkinMesh{}.lbs_normals, LbsNormals::inverse_transpose);
}

}  // namespace
}  // namespace kinema
