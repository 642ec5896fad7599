// Learned motion matching at run time: the MLP kernels, the .kml file and LearnedPlayer.
//
// Mlp::evaluate normalizes its input, runs the layers through two ping-pong halves of the
// caller's scratch, and de-normalizes the output. A layer is a matrix–vector product over
// input-major weights: the outputs start at their biases, then tiles of 8 inputs (rows) are added
// a block of outputs at a time in SIMD registers, each input broadcast and multiplied by its
// row's slice of the block, so every output sums the same terms in the same order (i = 0, 1,
// 2, …) wherever it sits in the layer. The baseline kernel (SSE, x86-64-v2) multiplies then adds;
// the AVX2 one, chosen at run time, fuses them (FMA): the two differ in the last bits
// (learned_internal.h), each is deterministic.
//
// The .kml file: a 32-byte header (kinema/core/byte_io.h: "KMLEARN\0", u32 format version, u32
// zero, u64 payload bytes, u64 FNV-1a of the payload), then the payload, little-endian: the
// feature layout as in .kmm, the skeleton, the latent size, the start state and the three
// networks (docs/match.md). The reader checks every count against the bytes left before
// allocating, every size against the others, and that every number is finite.
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "kinema/core/byte_io.h"
#include "kinema/core/cpu_features.h"
#include "kinema/core/error.h"
#include "kinema/match/learned.h"
#include "kinema/skeleton/skeleton_bytes.h"
#include "learned_internal.h"

#if defined(__SSE2__) || defined(KINEMA_MATCH_MLP_AVX2)
#include <immintrin.h>
#endif

namespace kinema::match {

// ---- The kernels --------------------------------------------------------------------------------
//
// Names live in learned_detail (not an anonymous namespace): the sanitized builds compile the
// module's sources in unity batches, where file-local names of other sources would meet these.

namespace learned_detail {

// A layer starts its outputs at their biases and adds the inputs' terms a tile of kTileInputs
// inputs at a time: each tile walks the outputs a block of registers at a time, loads the
// block's running sums, adds its inputs' terms in order and stores them back. The weights are
// read once, as kTileInputs sequential streams (rows), which the prefetchers follow better than
// one walk down a column block; every output still sums its terms in input order.
constexpr int kTileInputs = 8;

/// Adds the terms of inputs x[0 .. inputs) to y[o], o < count (multiply, then add).
void base_scalar_terms(const float* x, int inputs, const float* w, size_t stride, float* y,
                       size_t count) {
  for (size_t o = 0; o < count; ++o) {
    float acc = y[o];
    for (int i = 0; i < inputs; ++i) {
      const float p = x[i] * w[size_t(i) * stride + o];
      acc = acc + p;
    }
    y[o] = acc;
  }
}

#if defined(__SSE2__)
/// R registers of 4 outputs, I inputs: each lane multiplies then adds, the scalar tail's bits.
template <int R, int I>
void base_tile(const float* x, const float* w, size_t stride, float* y) {
  __m128 acc[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r] = _mm_loadu_ps(y + 4 * r);
#pragma GCC unroll 8
  for (int i = 0; i < I; ++i) {
    const __m128 xi = _mm_set1_ps(x[i]);
    const float* row = w + size_t(i) * stride;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      acc[r] = _mm_add_ps(acc[r], _mm_mul_ps(xi, _mm_loadu_ps(row + 4 * r)));
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) _mm_storeu_ps(y + 4 * r, acc[r]);
}

template <int R, int I>
void base_tile_rest(int regs, const float* x, const float* w, size_t stride, float* y) {
  if constexpr (R > 0) {
    if (regs == R) return base_tile<R, I>(x, w, stride, y);
    base_tile_rest<R - 1, I>(regs, x, w, stride, y);
  }
}
#endif

/// Adds I inputs' terms to every output: 32 at a time in 8 of the 16 xmm registers, then fewer
/// registers, then the last (outputs mod 4) one by one.
template <int I>
void base_rows(const float* x, const float* w, size_t outputs, float* y) {
  size_t o = 0;
#if defined(__SSE2__)
  for (; o + 32 <= outputs; o += 32) base_tile<8, I>(x, w + o, outputs, y + o);
  const int regs = int((outputs - o) / 4);
  if (regs > 0) {
    base_tile_rest<7, I>(regs, x, w + o, outputs, y + o);
    o += 4 * size_t(regs);
  }
#endif
  base_scalar_terms(x, I, w + o, outputs, y + o, outputs - o);
}

void matvec_base(const DenseLayer& layer, const float* x, float* y) {
  const size_t inputs = layer.inputs, outputs = layer.outputs;
  const float* w = layer.weights.data();
  std::memcpy(y, layer.bias.data(), outputs * sizeof(float));
  size_t i = 0;
  for (; i + kTileInputs <= inputs; i += kTileInputs)
    base_rows<kTileInputs>(x + i, w + i * outputs, outputs, y);
  for (; i < inputs; ++i) base_rows<1>(x + i, w + i * outputs, outputs, y);
}

#if defined(KINEMA_MATCH_MLP_AVX2)
/// R registers of 8 outputs, I inputs, fused multiply-adds; when Masked the last register holds
/// `last_lanes` (1…7) outputs: masked loads and stores never touch the lanes past the layer.
template <int R, bool Masked, int I>
[[gnu::target("avx2,fma")]] void avx2_tile(const float* x, const float* w, size_t stride, float* y,
                                           int last_lanes) {
  const __m256i mask =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(last_lanes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  constexpr int kFull = Masked ? R - 1 : R;
  __m256 acc[R];
#pragma GCC unroll 8
  for (int r = 0; r < kFull; ++r) acc[r] = _mm256_loadu_ps(y + 8 * r);
  if constexpr (Masked) acc[R - 1] = _mm256_maskload_ps(y + 8 * (R - 1), mask);
#pragma GCC unroll 8
  for (int i = 0; i < I; ++i) {
    const __m256 xi = _mm256_broadcast_ss(x + i);
    const float* row = w + size_t(i) * stride;
#pragma GCC unroll 8
    for (int r = 0; r < kFull; ++r)
      acc[r] = _mm256_fmadd_ps(xi, _mm256_loadu_ps(row + 8 * r), acc[r]);
    if constexpr (Masked)
      acc[R - 1] = _mm256_fmadd_ps(xi, _mm256_maskload_ps(row + 8 * (R - 1), mask), acc[R - 1]);
  }
#pragma GCC unroll 8
  for (int r = 0; r < kFull; ++r) _mm256_storeu_ps(y + 8 * r, acc[r]);
  if constexpr (Masked) _mm256_maskstore_ps(y + 8 * (R - 1), mask, acc[R - 1]);
}

template <int R, int I>
[[gnu::target("avx2,fma")]] void avx2_tile_rest(int regs, int last_lanes, const float* x,
                                                const float* w, size_t stride, float* y) {
  if constexpr (R > 0) {
    if (regs == R) {
      if (last_lanes == 8) return avx2_tile<R, false, I>(x, w, stride, y, 8);
      return avx2_tile<R, true, I>(x, w, stride, y, last_lanes);
    }
    avx2_tile_rest<R - 1, I>(regs, last_lanes, x, w, stride, y);
  }
}

/// Adds I inputs' terms to every output: 64 at a time in 8 of the 16 ymm registers, then the
/// rest in as many registers as it needs, the last one masked.
template <int I>
[[gnu::target("avx2,fma")]] void avx2_rows(const float* x, const float* w, size_t outputs,
                                           float* y) {
  size_t o = 0;
  for (; o + 64 <= outputs; o += 64) avx2_tile<8, false, I>(x, w + o, outputs, y + o, 8);
  const size_t rest = outputs - o;
  if (rest > 0) {
    const int regs = int((rest + 7) / 8);
    avx2_tile_rest<8, I>(regs, int(rest - 8 * size_t(regs - 1)), x, w + o, outputs, y + o);
  }
}

[[gnu::target("avx2,fma")]] void matvec_avx2(const DenseLayer& layer, const float* x, float* y) {
  const size_t inputs = layer.inputs, outputs = layer.outputs;
  const float* w = layer.weights.data();
  std::memcpy(y, layer.bias.data(), outputs * sizeof(float));
  size_t i = 0;
  for (; i + kTileInputs <= inputs; i += kTileInputs)
    avx2_rows<kTileInputs>(x + i, w + i * outputs, outputs, y);
  for (; i < inputs; ++i) avx2_rows<1>(x + i, w + i * outputs, outputs, y);
}
#endif

namespace {
std::atomic<bool> g_force_baseline_mlp{false};
}  // namespace

bool mlp_avx2_available() {
#if defined(KINEMA_MATCH_MLP_AVX2)
  static const bool available = cpu_features().avx2_fma();
  return available;
#else
  return false;
#endif
}

MlpIsa mlp_isa() {
  if (mlp_avx2_available() && !g_force_baseline_mlp.load(std::memory_order_relaxed))
    return MlpIsa::kAvx2;
  return MlpIsa::kBase;
}

void force_baseline_mlp(bool on) { g_force_baseline_mlp.store(on, std::memory_order_relaxed); }

void evaluate_with(MlpIsa isa, const Mlp& mlp, std::span<const float> in, std::span<float> out,
                   std::span<float> scratch) {
  if (mlp.layers.empty()) return;
  const size_t half = mlp.scratch_floats() / 2;
  const size_t n_in = mlp.inputs(), n_out = mlp.outputs();
  assert(in.size() >= n_in && out.size() >= n_out && scratch.size() >= 2 * half);
  assert(mlp.input_mean.size() == n_in && mlp.input_scale.size() == n_in);
  assert(mlp.output_mean.size() == n_out && mlp.output_scale.size() == n_out);
  (void)n_out;
  const bool avx2 = isa == MlpIsa::kAvx2 && mlp_avx2_available();
  float* a = scratch.data();
  float* b = a + half;
  for (size_t i = 0; i < n_in; ++i) a[i] = (in[i] - mlp.input_mean[i]) * mlp.input_scale[i];
  for (const DenseLayer& layer : mlp.layers) {
    assert(layer.weights.size() == size_t(layer.inputs) * layer.outputs);
    assert(layer.bias.size() == layer.outputs);
#if defined(KINEMA_MATCH_MLP_AVX2)
    if (avx2)
      matvec_avx2(layer, a, b);
    else
      matvec_base(layer, a, b);
#else
    (void)avx2;
    matvec_base(layer, a, b);
#endif
    switch (layer.activation) {
      case Activation::none:
        break;
      case Activation::relu:
        for (uint32_t o = 0; o < layer.outputs; ++o) b[o] = b[o] > 0 ? b[o] : 0.0f;
        break;
      case Activation::elu:
        for (uint32_t o = 0; o < layer.outputs; ++o) b[o] = b[o] > 0 ? b[o] : std::expm1(b[o]);
        break;
    }
    std::swap(a, b);
  }
  for (size_t o = 0; o < mlp.outputs(); ++o)
    out[o] = a[o] * mlp.output_scale[o] + mlp.output_mean[o];
}

}  // namespace learned_detail

size_t Mlp::scratch_floats() const {
  size_t widest = 0;
  for (const DenseLayer& l : layers)
    widest = std::max({widest, size_t(l.inputs), size_t(l.outputs)});
  return 2 * widest;
}

size_t Mlp::parameter_count() const {
  size_t n = input_mean.size() + input_scale.size() + output_mean.size() + output_scale.size();
  for (const DenseLayer& l : layers) n += l.weights.size() + l.bias.size();
  return n;
}

void Mlp::evaluate(std::span<const float> in, std::span<float> out,
                   std::span<float> scratch) const {
  learned_detail::evaluate_with(learned_detail::mlp_isa(), *this, in, out, scratch);
}

size_t LearnedModel::model_bytes() const {
  const size_t floats = decompressor.parameter_count() + stepper.parameter_count() +
                        projector.parameter_count() + mean.size() + start_state.size();
  size_t bytes = floats * sizeof(float) + trajectory_times.size() * sizeof(double);
  for (const FeatureGroup& g : groups) bytes += g.name.size() + 4 * sizeof(uint32_t);
  return bytes;
}

// ---- The .kml file ------------------------------------------------------------------------------

namespace learned_detail {
namespace {

constexpr char kLearnedMagic[8] = {'K', 'M', 'L', 'E', 'A', 'R', 'N', '\0'};
constexpr size_t kLearnedHeaderBytes = 32;
constexpr uint32_t kMaxLayerWidth = 1u << 16;

using detail::ByteReader;
using detail::ByteWriter;

void put_floats(ByteWriter& w, const std::vector<float>& v) {
  w.put(uint64_t(v.size()));
  w.put_array(v);
}

/// A network: layer count, each layer (inputs, outputs, activation, weights, bias), then the
/// input mean and scale and the output mean and scale, each array after its u64 count.
void put_mlp(ByteWriter& w, const Mlp& m) {
  w.put(uint64_t(m.layers.size()));
  for (const DenseLayer& l : m.layers) {
    w.put(l.inputs);
    w.put(l.outputs);
    w.put(uint8_t(l.activation));
    put_floats(w, l.weights);
    put_floats(w, l.bias);
  }
  put_floats(w, m.input_mean);
  put_floats(w, m.input_scale);
  put_floats(w, m.output_mean);
  put_floats(w, m.output_scale);
}

[[noreturn]] void fail_at(const std::string& file, size_t at, const std::string& reason) {
  throw Error(file, "byte " + std::to_string(kLearnedHeaderBytes + at), reason);
}

/// A u64 count that must be `expected`, then that many finite floats.
void get_floats(ByteReader& r, std::vector<float>& v, size_t expected, const std::string& what,
                const std::string& file) {
  const size_t at = r.offset();
  const size_t n = r.get_count(what.c_str(), sizeof(float), size_t(1) << 32);
  if (n != expected)
    fail_at(file, at,
            what + ": " + std::to_string(n) + " numbers where " + std::to_string(expected) +
                " were expected");
  const size_t values_at = r.offset();
  r.get_array(v, n);
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]))
      fail_at(file, values_at + 4 * i,
              what + ": number " + std::to_string(i) + " is not a finite number");
}

Mlp get_mlp(ByteReader& r, const char* name, const std::string& file) {
  Mlp m;
  const std::string net(name);
  // The smallest layer: inputs, outputs, activation, two counts and one weight and one bias.
  const size_t L = r.get_count((net + " layer count").c_str(), 33, 64);
  if (L == 0) r.fail("the " + net + " has no layers");
  for (size_t k = 0; k < L; ++k) {
    const std::string layer = "layer " + std::to_string(k) + " of the " + net;
    const size_t at = r.offset();
    DenseLayer l;
    l.inputs = r.get<uint32_t>("layer inputs");
    l.outputs = r.get<uint32_t>("layer outputs");
    if (l.inputs == 0 || l.outputs == 0 || l.inputs > kMaxLayerWidth || l.outputs > kMaxLayerWidth)
      fail_at(file, at,
              layer + " has " + std::to_string(l.inputs) + " inputs and " +
                  std::to_string(l.outputs) + " outputs (1 to 65536 each)");
    if (k > 0 && l.inputs != m.layers.back().outputs)
      fail_at(file, at,
              layer + " takes " + std::to_string(l.inputs) + " inputs; the layer before gives " +
                  std::to_string(m.layers.back().outputs));
    const size_t activation_at = r.offset();
    const uint8_t activation = r.get<uint8_t>("layer activation");
    if (activation > uint8_t(Activation::elu))
      fail_at(file, activation_at,
              layer + " has an unknown activation (" + std::to_string(activation) + ")");
    l.activation = Activation(activation);
    get_floats(r, l.weights, size_t(l.inputs) * l.outputs, layer + " weights", file);
    get_floats(r, l.bias, l.outputs, layer + " bias", file);
    m.layers.push_back(std::move(l));
  }
  get_floats(r, m.input_mean, m.inputs(), net + " input mean", file);
  get_floats(r, m.input_scale, m.inputs(), net + " input scale", file);
  get_floats(r, m.output_mean, m.outputs(), net + " output mean", file);
  get_floats(r, m.output_scale, m.outputs(), net + " output scale", file);
  return m;
}

/// A network's sizes against what the model needs of it; `at` is where it starts.
void check_sizes(const Mlp& m, size_t at, const char* name, size_t inputs, size_t outputs,
                 const std::string& what, const std::string& file) {
  if (m.inputs() != inputs || m.outputs() != outputs)
    fail_at(file, at,
            std::string("the ") + name + " maps " + std::to_string(m.inputs()) + " to " +
                std::to_string(m.outputs()) + " numbers; " + what + " needs " +
                std::to_string(inputs) + " to " + std::to_string(outputs));
}

/// fps, trajectory times, feature groups (each following the previous one) and the means, as in
/// .kmm. Returns the dimensions of a frame.
size_t read_learned_layout(ByteReader& r, LearnedModel& m, const std::string& file) {
  m.fps = r.get<double>("fps");
  if (!(m.fps > 0) || !std::isfinite(m.fps)) r.fail("fps is not a positive number");
  const size_t T = r.get_count("trajectory time count", sizeof(double), 64);
  for (size_t i = 0; i < T; ++i) {
    const double t = r.get<double>("trajectory time");
    if (!std::isfinite(t)) r.fail("a trajectory time is not a finite number");
    m.trajectory_times.push_back(t);
  }
  const size_t G = r.get_count("group count", 20, 4096);
  uint32_t dims = 0;
  for (size_t i = 0; i < G; ++i) {
    FeatureGroup g;
    g.name = r.get_string("group name");
    const size_t at = r.offset();
    g.offset = r.get<uint32_t>("group offset");
    g.dims = r.get<uint32_t>("group dims");
    g.weight = r.get_finite("group weight");
    g.scale = r.get_finite("group scale");
    if (g.offset != dims || g.dims == 0 || g.dims > 4096 || !(g.scale > 0))
      fail_at(file, at, "feature group \"" + g.name + "\" does not follow the previous one");
    dims += g.dims;
    m.groups.push_back(g);
  }
  const size_t D = r.get_count("dimension count", sizeof(float), 4096);
  if (D != dims || D == 0) r.fail("the dimension count does not match the feature groups");
  for (size_t d = 0; d < D; ++d) m.mean.push_back(r.get_finite("feature mean"));
  return D;
}

/// The joint count, the feature joints and the skeleton.
void read_learned_skeleton(ByteReader& r, LearnedModel& m, const std::string& file) {
  const size_t joints = r.get_count("joint count", 50, 65535);
  if (joints == 0) r.fail("a learned model needs its skeleton (joint count 0)");
  int32_t feature_joints[7];
  for (int32_t& j : feature_joints) {
    j = r.get<int32_t>("feature joint");
    if (j < -1 || j >= int32_t(joints)) r.fail("a feature joint is outside the skeleton");
  }
  m.joints = {feature_joints[0], feature_joints[1], feature_joints[2], feature_joints[3],
              feature_joints[4], feature_joints[5], feature_joints[6]};
  if (m.joints.hips < 0 || m.joints.left_foot < 0 || m.joints.right_foot < 0)
    r.fail("the hips and feet joints are missing");
  m.skeleton = detail::get_skeleton_joints(r, joints, file);
}

}  // namespace
}  // namespace learned_detail

std::string serialize_learned_model(const LearnedModel& model) {
  using learned_detail::put_floats;
  using learned_detail::put_mlp;
  detail::ByteWriter w;
  w.put(model.fps);
  w.put(uint64_t(model.trajectory_times.size()));
  for (const double t : model.trajectory_times) w.put(t);
  w.put(uint64_t(model.groups.size()));
  for (const FeatureGroup& g : model.groups) {
    w.put_string(g.name);
    w.put(g.offset);
    w.put(g.dims);
    w.put(g.weight);
    w.put(g.scale);
  }
  w.put(uint64_t(model.mean.size()));
  w.put_array(model.mean);
  w.put(uint64_t(model.skeleton.joint_count()));
  for (const int j : {model.joints.hips, model.joints.left_foot, model.joints.right_foot,
                      model.joints.left_upper_leg, model.joints.right_upper_leg,
                      model.joints.left_lower_leg, model.joints.right_lower_leg})
    w.put(int32_t(j));
  detail::put_skeleton_joints(w, model.skeleton);
  w.put(model.latent_dims);
  w.put(model.trained_frames);
  put_floats(w, model.start_state);
  put_mlp(w, model.decompressor);
  put_mlp(w, model.stepper);
  put_mlp(w, model.projector);
  return detail::with_header(learned_detail::kLearnedMagic, learned_format_version, w.out);
}

LearnedModel deserialize_learned_model(std::string_view bytes, const std::string& file) {
  using namespace learned_detail;
  const std::string_view payload =
      detail::checked_payload(bytes, kLearnedMagic, learned_format_version, file,
                              "kinema learned motion-matching model", " (export the model again)");
  detail::ByteReader r(payload, kLearnedHeaderBytes, file);
  LearnedModel m;
  const size_t D = read_learned_layout(r, m, file);
  read_learned_skeleton(r, m, file);
  const size_t latent_at = r.offset();
  m.latent_dims = r.get<uint32_t>("latent size");
  if (m.latent_dims > 4096)
    fail_at(file, latent_at, "latent size " + std::to_string(m.latent_dims) + " (at most 4096)");
  m.trained_frames = r.get<uint64_t>("trained frame count");
  const size_t state = D + m.latent_dims;
  get_floats(r, m.start_state, state, "start state", file);
  const size_t pose = pose_vector_size(m.skeleton.joint_count());
  const std::string fits = std::to_string(D) + " features, latent " +
                           std::to_string(m.latent_dims) + " and " +
                           std::to_string(m.skeleton.joint_count()) + " joints";
  size_t at = r.offset();
  m.decompressor = get_mlp(r, "decompressor", file);
  check_sizes(m.decompressor, at, "decompressor", state, pose, fits, file);
  at = r.offset();
  m.stepper = get_mlp(r, "stepper", file);
  check_sizes(m.stepper, at, "stepper", state, state, fits, file);
  at = r.offset();
  m.projector = get_mlp(r, "projector", file);
  check_sizes(m.projector, at, "projector", D, state, fits, file);
  if (r.left() != 0) r.fail("unexpected bytes after the end of the model");
  return m;
}

// ---- LearnedPlayer ------------------------------------------------------------------------------

LearnedPlayer::LearnedPlayer(const LearnedModel& model)
    : model_(&model),
      state_(model.state_size()),
      candidate_(model.state_size()),
      delta_(model.stepper.outputs()),
      pose_(model.decompressor.outputs()),
      scratch_(std::max({model.decompressor.scratch_floats(), model.stepper.scratch_floats(),
                         model.projector.scratch_floats()})) {
  reset();
}

void LearnedPlayer::reset() {
  const size_t n = std::min(state_.size(), model_->start_state.size());
  std::copy_n(model_->start_state.begin(), n, state_.begin());
  std::fill(state_.begin() + std::ptrdiff_t(n), state_.end(), 0.0f);
}

std::span<const float> LearnedPlayer::features() const {
  return std::span<const float>(state_).first(model_->dims());
}

std::span<const float> LearnedPlayer::latent() const {
  return std::span<const float>(state_).subspan(model_->dims());
}

void LearnedPlayer::set_state(std::span<const float> state) {
  assert(state.size() == state_.size());
  std::copy_n(state.begin(), std::min(state.size(), state_.size()), state_.begin());
}

void LearnedPlayer::step() {
  model_->stepper.evaluate(state_, delta_, scratch_);
  const size_t n = std::min(state_.size(), delta_.size());
  for (size_t k = 0; k < n; ++k) state_[k] += delta_[k];
}

float LearnedPlayer::project(std::span<const float> query) {
  const size_t D = model_->dims();
  if (query.size() != D) return std::numeric_limits<float>::infinity();
  model_->projector.evaluate(query, candidate_, scratch_);
  float cost = 0;
  for (size_t d = 0; d < D; ++d) {
    const float e = query[d] - candidate_[d];
    cost += e * e;
  }
  return cost;
}

void LearnedPlayer::jump_to_candidate() { state_ = candidate_; }

float LearnedPlayer::cost(std::span<const float> query) const {
  const size_t D = model_->dims();
  if (query.size() != D) return std::numeric_limits<float>::infinity();
  float cost = 0;
  for (size_t d = 0; d < D; ++d) {
    const float e = query[d] - state_[d];
    cost += e * e;
  }
  return cost;
}

std::span<const float> LearnedPlayer::decompress() {
  model_->decompressor.evaluate(state_, pose_, scratch_);
  return pose_;
}

}  // namespace kinema::match
