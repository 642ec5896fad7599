// Learned motion matching at run time (kinema/match/learned.h): the MLP kernels against plain
// references (bit for bit on each instruction set, 1e-5 between them), the pose vector's
// encoding, the .kml file with hostile inputs, and LearnedPlayer; nothing allocates.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../../src/match/learned_internal.h"
#include "common/alloc_counter.h"
#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/match/learned.h"
#include "kinema/math/mat3.h"
#include "test_paths.h"

using namespace kinema;
using namespace kinema::match;
using learned_detail::evaluate_with;
using learned_detail::MlpIsa;

// Helpers in their own namespace: the test files of a program are compiled in unity batches.
namespace learned_test {

DenseLayer dense(uint32_t inputs, uint32_t outputs, Activation act, std::vector<float> weights,
                 std::vector<float> bias) {
  DenseLayer l;
  l.inputs = inputs;
  l.outputs = outputs;
  l.activation = act;
  l.weights = std::move(weights);
  l.bias = std::move(bias);
  return l;
}

/// Identity normalization around `layers`.
Mlp plain_mlp(std::vector<DenseLayer> layers) {
  Mlp m;
  m.layers = std::move(layers);
  m.input_mean.assign(m.inputs(), 0.0f);
  m.input_scale.assign(m.inputs(), 1.0f);
  m.output_mean.assign(m.outputs(), 0.0f);
  m.output_scale.assign(m.outputs(), 1.0f);
  return m;
}

/// Random weights of about unit gain (uniform ±√(3 / inputs)), small biases, non-trivial
/// normalization: layer k maps sizes[k] → sizes[k + 1] with acts[k].
Mlp random_mlp(const std::vector<uint32_t>& sizes, const std::vector<Activation>& acts,
               uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  Mlp m;
  for (size_t k = 0; k + 1 < sizes.size(); ++k) {
    DenseLayer l;
    l.inputs = sizes[k];
    l.outputs = sizes[k + 1];
    l.activation = acts[k];
    const float gain = std::sqrt(3.0f / float(l.inputs));
    for (size_t i = 0; i < size_t(l.inputs) * l.outputs; ++i) l.weights.push_back(u(rng) * gain);
    for (uint32_t o = 0; o < l.outputs; ++o) l.bias.push_back(0.1f * u(rng));
    m.layers.push_back(std::move(l));
  }
  for (uint32_t i = 0; i < m.inputs(); ++i) {
    m.input_mean.push_back(u(rng));
    m.input_scale.push_back(1.25f + u(rng) * 0.75f);
  }
  for (uint32_t o = 0; o < m.outputs(); ++o) {
    m.output_mean.push_back(u(rng));
    m.output_scale.push_back(1.25f + u(rng) * 0.75f);
  }
  return m;
}

std::vector<float> random_vector(size_t n, uint32_t seed, float scale = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

/// The network in plain C++, in the kernels' order: each output starts at its bias and adds the
/// inputs' terms in input order, multiplying then adding (`fused` false: the baseline kernel) or
/// fused (true: the AVX2 + FMA kernel).
std::vector<float> reference(const Mlp& m, const std::vector<float>& in, bool fused) {
  std::vector<float> x(m.inputs());
  for (size_t i = 0; i < x.size(); ++i) x[i] = (in[i] - m.input_mean[i]) * m.input_scale[i];
  for (const DenseLayer& l : m.layers) {
    std::vector<float> y(l.outputs);
    for (uint32_t o = 0; o < l.outputs; ++o) {
      float acc = l.bias[o];
      for (uint32_t i = 0; i < l.inputs; ++i) {
        const float w = l.weights[size_t(i) * l.outputs + o];
        if (fused) {
          acc = std::fma(x[i], w, acc);
        } else {
          const float p = x[i] * w;
          acc = acc + p;
        }
      }
      if (l.activation == Activation::relu) acc = acc > 0 ? acc : 0.0f;
      if (l.activation == Activation::elu) acc = acc > 0 ? acc : std::expm1(acc);
      y[o] = acc;
    }
    x = std::move(y);
  }
  std::vector<float> out(m.outputs());
  for (size_t o = 0; o < out.size(); ++o) {
    const float p = x[o] * m.output_scale[o];
    out[o] = p + m.output_mean[o];
  }
  return out;
}

/// The network in double precision (no rounding to speak of): the truth both kernels approach.
std::vector<double> exact(const Mlp& m, const std::vector<float>& in) {
  std::vector<double> x(m.inputs());
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (double(in[i]) - m.input_mean[i]) * double(m.input_scale[i]);
  for (const DenseLayer& l : m.layers) {
    std::vector<double> y(l.outputs);
    for (uint32_t o = 0; o < l.outputs; ++o) {
      double acc = l.bias[o];
      for (uint32_t i = 0; i < l.inputs; ++i) acc += x[i] * l.weights[size_t(i) * l.outputs + o];
      if (l.activation == Activation::relu) acc = acc > 0 ? acc : 0.0;
      if (l.activation == Activation::elu) acc = acc > 0 ? acc : std::expm1(acc);
      y[o] = acc;
    }
    x = std::move(y);
  }
  std::vector<double> out(m.outputs());
  for (size_t o = 0; o < out.size(); ++o) out[o] = x[o] * m.output_scale[o] + m.output_mean[o];
  return out;
}

std::vector<float> run(MlpIsa isa, const Mlp& m, const std::vector<float>& in) {
  std::vector<float> out(m.outputs()), scratch(m.scratch_floats());
  evaluate_with(isa, m, in, out, scratch);
  return out;
}

/// The largest |a − b| over the outputs, relative to the outputs' largest magnitude (≥ 1).
double relative_gap(const std::vector<float>& a, const std::vector<double>& b) {
  double gap = 0, big = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    gap = std::max(gap, std::abs(double(a[i]) - b[i]));
    big = std::max(big, std::abs(b[i]));
  }
  return gap / big;
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Hips with two feet below it.
Skeleton tiny_skeleton() {
  std::vector<Joint> j(3);
  j[0] = {"hips", kNoParent, {{0, 0.9, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  j[1] = {"left_foot", 0, {{0.1, -0.8, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  j[2] = {"right_foot", 0, {{-0.1, -0.8, 0}, {0, 0, 0, 1}, {1, 1, 1}}, {}};
  return Skeleton::build(j);
}

/// 3 features (groups of 2 and 1), latent 2, 3 joints: state 5, pose vector 32.
LearnedModel tiny_model(uint32_t seed = 1) {
  LearnedModel m;
  m.fps = 30;
  m.trajectory_times = {0.33, 0.67, 1.0};
  m.groups = {{"feet", 0, 2, 0.75f, 0.5f}, {"speed", 2, 1, 1.0f, 2.0f}};
  m.mean = {0.1f, -0.2f, 0.3f};
  m.joints = {0, 1, 2, -1, -1, -1, -1};
  m.skeleton = tiny_skeleton();
  m.latent_dims = 2;
  m.trained_frames = 1234;
  m.start_state = {0.5f, -0.25f, 1.0f, 0.125f, -1.5f};
  m.decompressor = random_mlp({5, 16, 32}, {Activation::elu, Activation::none}, seed);
  m.stepper = random_mlp({5, 8, 5}, {Activation::relu, Activation::none}, seed + 1);
  m.projector =
      random_mlp({3, 8, 8, 5}, {Activation::relu, Activation::elu, Activation::none}, seed + 2);
  return m;
}

std::string kml_message(std::string_view bytes) {
  try {
    deserialize_learned_model(bytes, "model.kml");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Rewrites the header's size and checksum after an edit, so that the reader gets past them.
void refresh_header(std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 32; i < bytes.size(); ++i) {
    h ^= uint8_t(bytes[i]);
    h *= 1099511628211ull;
  }
  const uint64_t size = bytes.size() - 32;
  std::memcpy(&bytes[16], &size, 8);
  std::memcpy(&bytes[24], &h, 8);
}

bool same_rotation(const Quatf& a, const Quatf& b, float tolerance) {
  const float s = dot(a, b) < 0 ? -1.0f : 1.0f;
  return std::abs(a.x - s * b.x) <= tolerance && std::abs(a.y - s * b.y) <= tolerance &&
         std::abs(a.z - s * b.z) <= tolerance && std::abs(a.w - s * b.w) <= tolerance;
}

Quatf random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> n(0, 1);
  return Quatf(normalize(Quat(n(rng), n(rng), n(rng), n(rng))));
}

}  // namespace learned_test

using namespace learned_test;

// ---- The MLP -----------------------------------------------------------------------------------

TEST(MatchLearnedMlp, HandBuiltNetworksGiveHandComputedValues) {
  // Identity layer: the input back, exactly.
  const Mlp identity =
      plain_mlp({dense(3, 3, Activation::none, {1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0})});
  // 2 → 3 relu → 1 elu. Row i of the weights holds input i's weight to each output.
  //   hidden = relu([1, -1, 0.5] · x0 + [2, 1, -1] · x1 + [0.5, 0, -1])
  //   out    = elu(hidden · [1, 2, -3] − 1)
  const Mlp two_layer =
      plain_mlp({dense(2, 3, Activation::relu, {1, -1, 0.5f, 2, 1, -1}, {0.5f, 0, -1}),
                 dense(3, 1, Activation::elu, {1, 2, -3}, {-1})});
  // The same with normalization: x' = (x − [1, 2]) · [2, 0.5], out = net · 4 + 10.
  Mlp normalized = two_layer;
  normalized.input_mean = {1, 2};
  normalized.input_scale = {2, 0.5f};
  normalized.output_mean = {10};
  normalized.output_scale = {4};
  for (const MlpIsa isa : {MlpIsa::kBase, MlpIsa::kAvx2}) {
    EXPECT_EQ(run(isa, identity, {1.5f, -2, 3.25f}), (std::vector<float>{1.5f, -2, 3.25f}));
    // x = [1, 1]: hidden = relu([3.5, 0, -1.5]) = [3.5, 0, 0]; out = elu(3.5 − 1) = 2.5.
    EXPECT_EQ(run(isa, two_layer, {1, 1}), std::vector<float>{2.5f});
    // x = [0, 1]: hidden = relu([2.5, 1, -2]) = [2.5, 1, 0]; out = elu(2.5 + 2 − 1) = 3.5.
    EXPECT_EQ(run(isa, two_layer, {0, 1}), std::vector<float>{3.5f});
    // x = [-1, 0]: hidden = relu([-0.5, 1, -1.5]) = [0, 1, 0]; out = elu(2 − 1) = 1.
    EXPECT_EQ(run(isa, two_layer, {-1, 0}), std::vector<float>{1.0f});
    // x = [0, 0]: hidden = relu([0.5, 0, -1]) = [0.5, 0, 0]; out = elu(-0.5) = e^-0.5 − 1.
    EXPECT_FLOAT_EQ(run(isa, two_layer, {0, 0})[0], std::expm1(-0.5f));
    // x = [1.5, 4] → x' = [1, 1] → net 2.5 → 2.5 · 4 + 10 = 20.
    EXPECT_EQ(run(isa, normalized, {1.5f, 4}), std::vector<float>{20.0f});
  }
  EXPECT_EQ(two_layer.parameter_count(), size_t(6 + 3 + 3 + 1 + 2 + 2 + 1 + 1));
  EXPECT_EQ(two_layer.scratch_floats(), 6u);
  EXPECT_EQ(two_layer.inputs(), 2u);
  EXPECT_EQ(two_layer.outputs(), 1u);
  EXPECT_EQ(Mlp().scratch_floats(), 0u);
}

TEST(MatchLearnedMlp, EachKernelMatchesItsReferenceBitForBit) {
  // Sizes that hit every path: 64-output AVX2 blocks, 32-output SSE blocks, partial register
  // counts, masked AVX2 tails and scalar SSE tails (1, 3, 5, 7 outputs past a register).
  const std::vector<std::vector<uint32_t>> shapes = {
      {1, 1},        {3, 5},        {5, 7, 3}, {37, 64, 53}, {13, 65, 9}, {59, 512, 512, 59},
      {27, 100, 97}, {8, 33, 31, 1}};
  uint32_t seed = 10;
  for (const auto& sizes : shapes) {
    std::vector<Activation> acts;
    for (size_t k = 0; k + 1 < sizes.size(); ++k)
      acts.push_back(k + 2 == sizes.size() ? Activation::none
                                           : (k % 2 ? Activation::elu : Activation::relu));
    const Mlp m = random_mlp(sizes, acts, ++seed);
    for (int trial = 0; trial < 3; ++trial) {
      const std::vector<float> in = random_vector(m.inputs(), ++seed);
      const std::vector<float> base = run(MlpIsa::kBase, m, in);
      const std::vector<double> truth = exact(m, in);
      EXPECT_LT(relative_gap(base, truth), 1e-5) << sizes.size() << " layers, " << sizes[1];
#if !defined(__FMA__)  // a compiler free to fuse would not compute the reference as written
      EXPECT_TRUE(same_bits(base, reference(m, in, false))) << sizes[0] << " → " << sizes[1];
#endif
      if (!learned_detail::mlp_avx2_available()) continue;
      const std::vector<float> avx2 = run(MlpIsa::kAvx2, m, in);
      EXPECT_TRUE(same_bits(avx2, reference(m, in, true))) << sizes[0] << " → " << sizes[1];
      EXPECT_LT(relative_gap(avx2, truth), 1e-5);
      EXPECT_LT(relative_gap(avx2, widen(base)), 1e-5);
      // Mlp::evaluate takes the CPU's best.
      std::vector<float> out(m.outputs()), scratch(m.scratch_floats());
      m.evaluate(in, out, scratch);
      EXPECT_TRUE(same_bits(out, avx2));
      learned_detail::force_baseline_mlp(true);
      m.evaluate(in, out, scratch);
      learned_detail::force_baseline_mlp(false);
      EXPECT_TRUE(same_bits(out, base));
    }
  }
}

TEST(MatchLearnedMlp, HoldenSizedNetworksAgreeAcrossKernelsAndThreads) {
  // The projector of Holden et al.: 27 → 512 ×4 → 59, ReLU.
  const Mlp m = random_mlp(
      {27, 512, 512, 512, 512, 59},
      {Activation::relu, Activation::relu, Activation::relu, Activation::relu, Activation::none},
      77);
  const std::vector<float> in = random_vector(27, 78);
  const std::vector<float> alone = run(learned_detail::mlp_isa(), m, in);
  EXPECT_LT(relative_gap(alone, exact(m, in)), 1e-5);
  EXPECT_LT(relative_gap(run(MlpIsa::kBase, m, in), widen(alone)), 1e-5);
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> threads;
  for (auto& r : results)
    threads.emplace_back([&] {
      std::vector<float> out(m.outputs()), scratch(m.scratch_floats());
      for (int k = 0; k < 20; ++k) m.evaluate(in, out, scratch);
      r = out;
    });
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_TRUE(same_bits(r, alone));
}

TEST(MatchLearnedMlp, EvaluateDoesNotAllocate) {
  const Mlp m = random_mlp({37, 64, 53}, {Activation::elu, Activation::none}, 5);
  const std::vector<float> in = random_vector(37, 6);
  std::vector<float> out(53), scratch(m.scratch_floats());
  test::start_counting_allocations();
  for (const MlpIsa isa : {MlpIsa::kBase, MlpIsa::kAvx2}) evaluate_with(isa, m, in, out, scratch);
  m.evaluate(in, out, scratch);
  EXPECT_EQ(test::stop_counting_allocations(), 0);
}

// ---- The pose vector ---------------------------------------------------------------------------

TEST(MatchLearnedPose, EncodeDecodeRoundTripsRandomAndHalfTurnRotations) {
  std::mt19937 rng(3);
  std::vector<Transformf> pose;
  for (int k = 0; k < 200; ++k) {
    Transformf t;
    t.translation = {float(k) * 0.01f, -0.5f, 2.0f - float(k) * 0.003f};
    t.rotation = random_rotation(rng);
    pose.push_back(t);
  }
  // Half turns and near half turns: the trace is about −1, where w is the smallest component.
  for (const Vec3& axis :
       {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}, Vec3{1, 1, 0}, Vec3{1, -2, 3}, Vec3{0, -1, 1}})
    for (const double angle : {3.14159265358979, 3.1415, -3.1, 0.0, 1e-4}) {
      Transformf t;
      t.rotation = Quatf(Quat::from_axis_angle(axis, angle));
      pose.push_back(t);
    }
  const RootStep step{0.03f, 0.05f, -0.02f};
  const bool contacts[2] = {true, false};
  std::vector<float> v(pose_vector_size(int(pose.size())));
  encode_pose(pose, step, contacts, v);
  std::vector<Transformf> back(pose.size());
  RootStep step_back;
  bool contacts_back[2] = {false, true};
  decode_pose(v, back, step_back, contacts_back);
  for (size_t j = 0; j < pose.size(); ++j) {
    EXPECT_TRUE(same_rotation(back[j].rotation, pose[j].rotation, 1e-6f)) << j;
    EXPECT_EQ(back[j].translation, pose[j].translation);
    EXPECT_EQ(back[j].scale, Vec3f(1, 1, 1));
    EXPECT_NEAR(length(back[j].rotation), 1.0f, 1e-6f);
  }
  EXPECT_EQ(step_back.x, step.x);
  EXPECT_EQ(step_back.z, step.z);
  EXPECT_EQ(step_back.turn, step.turn);
  EXPECT_TRUE(contacts_back[0]);
  EXPECT_FALSE(contacts_back[1]);
  // The layout: joint j's translation, then its matrix's first two columns.
  const Mat3 r = Mat3::from_quat(Quat(pose[7].rotation));
  EXPECT_EQ(v[9 * 7], pose[7].translation.x);
  EXPECT_NEAR(v[9 * 7 + 3], r.m[0][0], 1e-7);
  EXPECT_NEAR(v[9 * 7 + 5], r.m[2][0], 1e-7);
  EXPECT_NEAR(v[9 * 7 + 6], r.m[0][1], 1e-7);
  EXPECT_NEAR(v[9 * 7 + 8], r.m[2][1], 1e-7);
  EXPECT_EQ(v[v.size() - 5], step.x);
  EXPECT_EQ(v[v.size() - 2], 1.0f);
  EXPECT_EQ(v[v.size() - 1], 0.0f);
}

TEST(MatchLearnedPose, DecodeRebuildsRotationsFromNetworkLikeColumns) {
  // A network's columns are neither unit nor orthogonal: Gram–Schmidt keeps the first column's
  // direction and the plane of the two.
  std::mt19937 rng(4);
  for (int k = 0; k < 100; ++k) {
    const Quatf q = random_rotation(rng);
    const Mat3 r = Mat3::from_quat(Quat(q));
    const Vec3 c0 = r.column(0), c1 = r.column(1);
    const Vec3 a = c0 * 2.5, b = c1 * 0.7 + c0 * 0.4;
    float v[9 + 5] = {0,          0,          0, float(a.x), float(a.y), float(a.z), float(b.x),
                      float(b.y), float(b.z), 0, 0,          0,          0.49f,      0.5f};
    Transformf t;
    RootStep s;
    bool contacts[2];
    decode_pose(v, std::span<Transformf>(&t, 1), s, contacts);
    EXPECT_TRUE(same_rotation(t.rotation, q, 2e-6f)) << k;
    EXPECT_FALSE(contacts[0]);
    EXPECT_TRUE(contacts[1]);
  }
  // Degenerate columns (zero, parallel, not finite) still give a unit rotation.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const std::array<float, 6>& cols :
       {std::array<float, 6>{0, 0, 0, 0, 0, 0}, std::array<float, 6>{1, 0, 0, 2, 0, 0},
        std::array<float, 6>{0, 1, 0, 0, -3, 0}, std::array<float, 6>{nan, 0, 0, 0, 1, 0},
        std::array<float, 6>{1, 0, 0, nan, nan, nan}}) {
    float v[14] = {};
    std::copy(cols.begin(), cols.end(), v + 3);
    Transformf t;
    RootStep s;
    bool contacts[2];
    decode_pose(v, std::span<Transformf>(&t, 1), s, contacts);
    EXPECT_NEAR(length(t.rotation), 1.0f, 1e-6f);
    EXPECT_TRUE(is_finite(t.rotation));
    const Vec3f first = rotate(t.rotation, Vec3f(1, 0, 0));
    if (std::isfinite(cols[0]) && (cols[0] != 0 || cols[1] != 0)) {
      EXPECT_NEAR(dot(first, normalize(Vec3f(cols[0], cols[1], cols[2]))), 1.0f, 1e-6f);
    }
  }
}

TEST(MatchLearnedPose, RealPosesRoundTrip) {
  const Asset asset = load_asset(test_paths::data_dir() + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const Clip& clip = asset.clips.at(0);
  const size_t J = size_t(asset.skeleton.joint_count());
  std::vector<Transform> sampled(J);
  std::vector<Transformf> pose(J);
  std::vector<Transformf> back(J);
  std::vector<float> v(pose_vector_size(int(J)));
  size_t checked = 0;
  for (double t = 0; t < clip.duration; t += 1.0 / 30) {
    ASSERT_TRUE(sample_pose(clip, asset.skeleton, t, WrapMode::Clamp, sampled));
    for (size_t j = 0; j < J; ++j) {
      pose[j] = Transformf(sampled[j]);
      pose[j].rotation = normalize(pose[j].rotation);
    }
    const bool contacts[2] = {t < 1, t >= 1};
    encode_pose(pose, {0.01f, float(t), 0.0f}, contacts, v);
    RootStep s;
    bool c[2];
    decode_pose(v, back, s, c);
    for (size_t j = 0; j < J; ++j, ++checked) {
      ASSERT_TRUE(same_rotation(back[j].rotation, pose[j].rotation, 1e-6f))
          << "joint " << j << " at " << t;
      ASSERT_EQ(back[j].translation, pose[j].translation);
    }
    EXPECT_EQ(s.z, float(t));
    EXPECT_EQ(c[0], contacts[0]);
    EXPECT_EQ(c[1], contacts[1]);
  }
  EXPECT_GT(checked, 1000u);
}

// ---- The .kml file -----------------------------------------------------------------------------

TEST(MatchLearnedFile, RoundTripIsExact) {
  const LearnedModel m = tiny_model();
  const std::string bytes = serialize_learned_model(m);
  EXPECT_EQ(bytes.substr(0, 8), std::string("KMLEARN\0", 8));
  const LearnedModel back = deserialize_learned_model(bytes, "model.kml");
  EXPECT_EQ(serialize_learned_model(back), bytes);
  EXPECT_EQ(back.fps, m.fps);
  EXPECT_EQ(back.trajectory_times, m.trajectory_times);
  ASSERT_EQ(back.groups.size(), 2u);
  EXPECT_EQ(back.groups[1].name, "speed");
  EXPECT_EQ(back.groups[1].scale, 2.0f);
  EXPECT_EQ(back.mean, m.mean);
  EXPECT_EQ(back.joints.right_foot, 2);
  EXPECT_EQ(back.joints.left_upper_leg, -1);
  EXPECT_EQ(back.skeleton.joint_count(), 3);
  EXPECT_EQ(back.skeleton.joint(1).name, "left_foot");
  EXPECT_EQ(back.latent_dims, 2u);
  EXPECT_EQ(back.trained_frames, 1234u);
  EXPECT_EQ(back.start_state, m.start_state);
  for (const auto& [a, b] :
       {std::pair{&m.decompressor, &back.decompressor}, std::pair{&m.stepper, &back.stepper},
        std::pair{&m.projector, &back.projector}}) {
    ASSERT_EQ(a->layers.size(), b->layers.size());
    for (size_t k = 0; k < a->layers.size(); ++k) {
      EXPECT_EQ(a->layers[k].weights, b->layers[k].weights);
      EXPECT_EQ(a->layers[k].bias, b->layers[k].bias);
      EXPECT_EQ(a->layers[k].activation, b->layers[k].activation);
    }
    const std::vector<float> in = random_vector(a->inputs(), 9);
    EXPECT_TRUE(
        same_bits(run(learned_detail::mlp_isa(), *a, in), run(learned_detail::mlp_isa(), *b, in)));
  }
  // The model's memory: its parameters and layout, not the frames it was trained on.
  const size_t params = m.decompressor.parameter_count() + m.stepper.parameter_count() +
                        m.projector.parameter_count();
  EXPECT_EQ(params,
            size_t((5 * 16 + 16 + 16 * 32 + 32 + 2 * 5 + 2 * 32) + (5 * 8 + 8 + 8 * 5 + 5 + 4 * 5) +
                   (3 * 8 + 8 + 8 * 8 + 8 + 8 * 5 + 5 + 2 * 3 + 2 * 5)));
  EXPECT_GE(m.model_bytes(), 4 * (params + 3 + 5));
  EXPECT_LT(m.model_bytes(), 4 * (params + 3 + 5) + 200);
}

TEST(MatchLearnedFile, ForeignTruncatedAndCorruptedFilesGiveClearErrors) {
  const std::string bytes = serialize_learned_model(tiny_model());
  EXPECT_NE(kml_message("").find("truncated"), std::string::npos);
  EXPECT_NE(kml_message(std::string(64, 'x')).find("no KMLEARN magic"), std::string::npos);
  const std::string kmm_like = "KMMATCH" + bytes.substr(7);
  EXPECT_NE(kml_message(kmm_like).find("no KMLEARN magic"), std::string::npos);
  std::string version = bytes;
  version[8] = 2;
  EXPECT_NE(kml_message(version).find("format version 2"), std::string::npos)
      << kml_message(version);
  // Every cut: the header's size gives it away, and with the header rewritten the reader runs
  // out of bytes somewhere and says so.
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    const std::string m = kml_message(std::string_view(bytes).substr(0, cut));
    ASSERT_NE(m.find("truncated"), std::string::npos) << cut << ": " << m;
    ASSERT_NE(m.find("model.kml"), std::string::npos) << cut << ": " << m;
    if (cut < 32) continue;
    std::string refreshed = bytes.substr(0, cut);
    refresh_header(refreshed);
    const std::string r = kml_message(refreshed);
    ASSERT_NE(r, "no error") << cut;
    ASSERT_NE(r.find("model.kml:byte "), std::string::npos) << cut << ": " << r;
  }
  // Every single-byte change is caught: by the checksum in the payload, by the header checks
  // in the header (or, in the checksum's own bytes, as a checksum mismatch).
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string flipped = bytes;
    flipped[i] = char(flipped[i] ^ 0x10);
    const std::string m = kml_message(flipped);
    ASSERT_NE(m, "no error") << i;
    if (i >= 24) {
      ASSERT_NE(m.find("checksum mismatch"), std::string::npos) << i << ": " << m;
    }
  }
  std::string extra = bytes + "x";
  refresh_header(extra);
  EXPECT_NE(kml_message(extra).find("unexpected bytes after the end"), std::string::npos);
  // A huge count with a valid checksum: refused before allocating.
  std::string huge = bytes;
  const uint64_t big = uint64_t(1) << 40;
  std::memcpy(&huge[32 + 8], &big, 8);  // the trajectory time count, after fps
  refresh_header(huge);
  EXPECT_NE(kml_message(huge).find("does not fit the file"), std::string::npos)
      << kml_message(huge);
}

TEST(MatchLearnedFile, ByteFlipsWithAValidChecksumLoadOrFailCleanly) {
  // Every single-byte change with the checksum rewritten must either load a model that runs, or
  // throw kinema::Error.
  const std::string bytes = serialize_learned_model(tiny_model());
  size_t rejected = 0, loaded = 0;
  for (size_t i = 32; i < bytes.size(); ++i) {
    std::string edited = bytes;
    edited[i] = char(edited[i] ^ 0xA5);
    refresh_header(edited);
    try {
      const LearnedModel m = deserialize_learned_model(edited, "model.kml");
      LearnedPlayer player(m);
      player.step();
      player.project(std::vector<float>(m.dims(), 0.5f));
      player.jump_to_candidate();
      const auto pose = player.decompress();
      EXPECT_EQ(pose.size(), pose_vector_size(m.skeleton.joint_count()));
      ++loaded;
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 100u);
  EXPECT_GT(loaded, 100u);  // most bytes are weights: a changed weight is still a model
}

TEST(MatchLearnedFile, InconsistentSizesAndBadNumbersAreRejected) {
  // Each edit makes a model whose file has a valid checksum but does not hold together.
  const auto expect = [](const std::function<void(LearnedModel&)>& edit, const std::string& what) {
    LearnedModel model = tiny_model();
    edit(model);
    const std::string m = kml_message(serialize_learned_model(model));
    EXPECT_NE(m.find(what), std::string::npos) << "expected \"" << what << "\", got: " << m;
    EXPECT_NE(m.find("model.kml:byte "), std::string::npos) << m;
  };
  expect(
      [](LearnedModel& m) {
        m.stepper = random_mlp({5, 8, 4}, {Activation::relu, Activation::none}, 3);
      },
      "the stepper maps 5 to 4 numbers; 3 features, latent 2 and 3 joints needs 5 to 5");
  expect(
      [](LearnedModel& m) {
        m.decompressor = random_mlp({5, 31}, {Activation::none}, 3);
      },
      "the decompressor maps 5 to 31 numbers");
  expect(
      [](LearnedModel& m) {
        m.projector = random_mlp({5, 5}, {Activation::none}, 3);
      },
      "the projector maps 5 to 5 numbers; 3 features, latent 2 and 3 joints needs 3 to 5");
  expect(
      [](LearnedModel& m) {
        DenseLayer& l = m.projector.layers[1];
        l.inputs = 7;
        l.weights.resize(7 * 8);
      },
      "layer 1 of the projector takes 7 inputs; the layer before gives 8");
  expect([](LearnedModel& m) { m.stepper.layers[0].weights.pop_back(); },
         "layer 0 of the stepper weights: 39 numbers where 40 were expected");
  expect([](LearnedModel& m) { m.stepper.layers[1].bias.push_back(0); },
         "layer 1 of the stepper bias: 6 numbers where 5 were expected");
  expect([](LearnedModel& m) { m.decompressor.input_scale.pop_back(); },
         "decompressor input scale: 4 numbers where 5 were expected");
  expect([](LearnedModel& m) { m.projector.output_mean.push_back(1); },
         "projector output mean: 6 numbers where 5 were expected");
  expect([](LearnedModel& m) { m.stepper.layers.clear(); }, "the stepper has no layers");
  expect([](LearnedModel& m) { m.stepper.layers[0].inputs = 70000; },
         "layer 0 of the stepper has 70000 inputs and 8 outputs (1 to 65536 each)");
  expect([](LearnedModel& m) { m.start_state.pop_back(); },
         "start state: 4 numbers where 5 were expected");
  expect([](LearnedModel& m) { m.latent_dims = 3; }, "start state: 5 numbers where 6");
  expect([](LearnedModel& m) { m.latent_dims = 5000; }, "latent size 5000 (at most 4096)");
  expect([](LearnedModel& m) { m.groups[1].offset = 3; },
         "feature group \"speed\" does not follow the previous one");
  expect([](LearnedModel& m) { m.mean.push_back(0); },
         "the dimension count does not match the feature groups");
  expect([](LearnedModel& m) { m.mean[1] = INFINITY; }, "feature mean is not a finite number");
  expect([](LearnedModel& m) { m.joints.left_foot = 3; },
         "a feature joint is outside the skeleton");
  expect([](LearnedModel& m) { m.joints.hips = -1; }, "the hips and feet joints are missing");
  expect([](LearnedModel& m) { m.skeleton = Skeleton(); }, "needs its skeleton");
  expect([](LearnedModel& m) { m.fps = 0; }, "fps is not a positive number");
  expect([](LearnedModel& m) { m.trajectory_times[0] = NAN; },
         "a trajectory time is not a finite number");
  expect([](LearnedModel& m) { m.projector.layers[2].activation = Activation(3); },
         "layer 2 of the projector has an unknown activation (3)");
  expect([](LearnedModel& m) { m.stepper.output_scale[4] = -NAN; },
         "stepper output scale: number 4 is not a finite number");
  // A NaN weight: the message names it and the byte it starts at.
  LearnedModel bad = tiny_model();
  const uint32_t pattern = 0x7fc12345u;  // a quiet NaN no other number of the file has
  float nan;
  std::memcpy(&nan, &pattern, 4);
  bad.decompressor.layers[1].weights[17] = nan;
  const std::string bytes = serialize_learned_model(bad);
  const size_t at = bytes.find(std::string(reinterpret_cast<const char*>(&pattern), 4));
  ASSERT_NE(at, std::string::npos);
  const std::string m = kml_message(bytes);
  EXPECT_NE(m.find("model.kml:byte " + std::to_string(at) +
                   ": layer 1 of the decompressor weights: number 17 is not a finite number"),
            std::string::npos)
      << m << " (expected byte " << at << ")";
}

// ---- LearnedPlayer -----------------------------------------------------------------------------

TEST(MatchLearnedPlayer, StepProjectJumpCostAndDecompress) {
  // Single linear layers with hand-picked weights, so that each answer can be written down.
  LearnedModel m = tiny_model();
  // stepper: Δ = 0.5 · state + [0.1, 0.2, 0.3, 0.4, 0.5] (weights 0.5 on the diagonal).
  std::vector<float> half(25, 0.0f);
  for (int i = 0; i < 5; ++i) half[size_t(i * 5 + i)] = 0.5f;
  m.stepper = plain_mlp({dense(5, 5, Activation::none, half, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f})});
  // projector: [x, z] = [q0, q1, q2 + 1, q0 + q1, 2] (row i: input i's weight to each output).
  m.projector = plain_mlp({dense(3, 5, Activation::none,
                                 {1, 0, 0, 1, 0,  //
                                  0, 1, 0, 1, 0,  //
                                  0, 0, 1, 0, 0},
                                 {0, 0, 1, 0, 2})});
  LearnedPlayer player(m);
  EXPECT_EQ(std::vector<float>(player.state().begin(), player.state().end()), m.start_state);
  ASSERT_EQ(player.features().size(), 3u);
  ASSERT_EQ(player.latent().size(), 2u);
  EXPECT_EQ(player.latent()[1], -1.5f);
  // step: state · 1.5 + bias, exactly representable here.
  player.step();
  const std::vector<float> stepped = {0.5f * 1.5f + 0.1f, -0.25f * 1.5f + 0.2f, 1.0f * 1.5f + 0.3f,
                                      0.125f * 1.5f + 0.4f, -1.5f * 1.5f + 0.5f};
  for (size_t k = 0; k < 5; ++k) EXPECT_FLOAT_EQ(player.state()[k], stepped[k]) << k;
  // project: candidate [1, 2, 4, 3, 2] for q = [1, 2, 3]; cost (3 − 4)² = 1.
  const std::vector<float> q = {1, 2, 3};
  EXPECT_EQ(player.project(q), 1.0f);
  EXPECT_EQ(std::vector<float>(player.candidate().begin(), player.candidate().end()),
            (std::vector<float>{1, 2, 4, 3, 2}));
  // The current state is untouched until the jump; its cost is to the stepped features.
  const float before = (1 - stepped[0]) * (1 - stepped[0]) + (2 - stepped[1]) * (2 - stepped[1]) +
                       (3 - stepped[2]) * (3 - stepped[2]);
  EXPECT_FLOAT_EQ(player.cost(q), before);
  player.jump_to_candidate();
  EXPECT_EQ(player.cost(q), 1.0f);
  EXPECT_EQ(player.latent()[0], 3.0f);
  // A query of the wrong size costs +inf and leaves the candidate alone.
  EXPECT_TRUE(std::isinf(player.project(std::vector<float>{1, 2})));
  EXPECT_TRUE(std::isinf(player.cost(std::vector<float>{1, 2, 3, 4})));
  EXPECT_EQ(player.candidate()[2], 4.0f);
  // decompress: the decompressor at the current state.
  const std::vector<float> state(player.state().begin(), player.state().end());
  const std::vector<float> expected = run(learned_detail::mlp_isa(), m.decompressor, state);
  const std::span<const float> pose = player.decompress();
  ASSERT_EQ(pose.size(), pose_vector_size(3));
  EXPECT_TRUE(same_bits(std::vector<float>(pose.begin(), pose.end()), expected));
  // set_state and reset.
  player.set_state(std::vector<float>{9, 8, 7, 6, 5});
  EXPECT_EQ(player.features()[0], 9.0f);
  EXPECT_EQ(player.latent()[1], 5.0f);
  player.reset();
  EXPECT_EQ(std::vector<float>(player.state().begin(), player.state().end()), m.start_state);
}

TEST(MatchLearnedPlayer, NoMethodAllocates) {
  const LearnedModel m = tiny_model(7);
  LearnedPlayer player(m);
  const std::vector<float> q = {0.3f, -0.1f, 0.8f};
  const std::vector<float> other = {1, 2, 3, 4, 5};
  float sum = 0;
  test::start_counting_allocations();
  for (int frame = 0; frame < 10; ++frame) {
    player.step();
    sum += player.cost(q);
    if (frame % 4 == 0) {
      sum += player.project(q);
      player.jump_to_candidate();
    }
    sum += player.decompress()[0];
    sum += player.features()[0] + player.latent()[0] + player.candidate()[0];
  }
  player.set_state(other);
  player.reset();
  EXPECT_EQ(test::stop_counting_allocations(), 0);
  EXPECT_TRUE(std::isfinite(sum));
}

TEST(MatchLearnedPlayer, RunsALoadedModelLikeTheOriginal) {
  const LearnedModel m = tiny_model(11);
  const LearnedModel back = deserialize_learned_model(serialize_learned_model(m), "model.kml");
  LearnedPlayer a(m), b(back);
  const std::vector<float> q = {0.2f, 0.4f, -0.6f};
  for (int frame = 0; frame < 30; ++frame) {
    a.step();
    b.step();
    if (frame % 10 == 0) {
      EXPECT_EQ(a.project(q), b.project(q));
      a.jump_to_candidate();
      b.jump_to_candidate();
    }
  }
  const auto pa = a.decompress();
  const auto pb = b.decompress();
  EXPECT_TRUE(same_bits(std::vector<float>(pa.begin(), pa.end()),
                        std::vector<float>(pb.begin(), pb.end())));
}
