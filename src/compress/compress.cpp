// The compressor: lossless classification, range reduction, the error-driven bit-rate search per
// segment, serialization, and the verification loop that makes the bound a guarantee.
#include "kinema/compress/compress.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "error_metric.h"
#include "format.h"
#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

using namespace compress_format;
using namespace compress_detail;

namespace {

// The search aims a little under the bound: it measures in double precision what the float
// decoder computes, and verification repairs whatever still slips over.
constexpr double kSearchMargin = 0.97;
constexpr int kMaxRepairRounds = 200;
// The part of a track's share of the bound that a near-constant track may use up.
constexpr double kNearConstantShare = 0.1;

struct TrackRef {
  int joint, channel;
};

struct SegTrack {
  uint8_t drop = 0;
  uint8_t q[6] = {0, 0, 0, 0, 0, 0};  // (min, extent) bytes of the three stored components
  Range range[3] = {{0, 0}, {0, 0}, {0, 0}};
};

class Encoder {
 public:
  Encoder(const Skeleton& sk, const CompressOptions& opt, std::vector<Transform> ref, double rate,
          std::string name)
      : sk_(sk), opt_(opt), ref_(std::move(ref)), rate_(rate), name_(std::move(name)) {
    J_ = sk.joint_count();
    F_ = int(ref_.size() / size_t(J_));
    S_ = opt.segment_frames;
    nseg_ = int(segment_count(uint64_t(F_), uint32_t(S_)));
    parents_.assign(sk.parents().begin(), sk.parents().end());
  }

  CompressedClip run(CompressionStats* stats);

 private:
  const Skeleton& sk_;
  CompressOptions opt_;
  std::vector<Transform> ref_;
  double rate_;
  std::string name_;
  int J_ = 0, F_ = 0, S_ = 16, nseg_ = 0, T_ = 0;
  std::vector<int> parents_;
  TrackClassification cls_;
  std::vector<TrackRef> tracks_;
  std::vector<std::array<int, 3>> joint_tracks_;  // per joint: track per channel or -1
  std::vector<Transform> base_;                   // identity / constant channels (float values)
  std::vector<std::array<float, 8>> clip_range_;  // per track: (min, extent) × 4
  std::vector<std::array<float, 4>> vals_;        // F × T, sign-flipped per segment
  std::vector<SegTrack> seg_;                     // nseg × T
  // Per segment, track and stored component: the rate index (kRawRate for all three: raw), and
  // the level offset of the equal-step split (log2 of the widest component's extent over its).
  std::vector<uint8_t> rates_, delta_;  // nseg × T × 3
  std::vector<std::vector<int>> subtree_;
  std::vector<double> reach_;      // D_a: farthest virtual vertex of the subtree from joint a
  std::vector<int> chain_tracks_;  // n_a: animated tracks on the longest chain through a

  // --- per-segment search state
  int seg_a_ = 0, seg_n_ = 0, ns_ = 0;
  std::vector<float> cache_;  // per frame, track, component and rate code
  std::vector<uint8_t> cached_;
  struct Memo {  // per frame and track: the last rates emulated and the sample they gave
    uint8_t r[3] = {255, 255, 255};
    float v[4];
  };
  std::vector<Memo> memo_;
  std::vector<double> local_err_;
  std::vector<std::array<Vec3, 3>> refv_;  // ns × J
  std::vector<Transform> L_, M_;           // ns × J
  std::vector<double> E_;                  // ns × J
  std::vector<Transform> tmp_;

  int seg_end(int s) const {
    return s * S_ + int(segment_length(uint32_t(s), uint64_t(F_), uint32_t(S_), uint32_t(nseg_)));
  }
  int seg_of(int f) const { return int(segment_of(uint64_t(f), uint32_t(S_), uint32_t(nseg_))); }
  double target() const { return opt_.max_error * kSearchMargin; }
  uint8_t* rates(int s, int t) { return &rates_[(size_t(s) * size_t(T_) + size_t(t)) * 3]; }
  const uint8_t* rates(int s, int t) const {
    return &rates_[(size_t(s) * size_t(T_) + size_t(t)) * 3];
  }
  // The rates of a level: 0…15 the code of the widest component (the others fewer by their
  // offset, so that every component's step is about the same), 16 raw.
  void level_rates(int s, int t, int level, uint8_t out[3]) const {
    const uint8_t* dl = &delta_[(size_t(s) * size_t(T_) + size_t(t)) * 3];
    for (int i = 0; i < 3; ++i)
      out[i] = uint8_t(level >= kRawRate ? kRawRate : std::max(0, level - int(dl[i])));
  }
  int widest(int s, int t) const {
    const uint8_t* r = rates(s, t);
    return std::max({r[0], r[1], r[2]});
  }

  void setup_tracks();
  void prepare_segment_ranges();
  float component(int s, int f, int t, int i, int code);
  void emulate(int s, int f, int t, const uint8_t r[3], float out[4]);
  void emulate_sample(int s, int f, int t, const uint8_t r[3], float out[4]);
  Transform local(int s, int sample, int j);
  double measure_all(int s, int& worst_sample, int& worst_joint);
  bool try_rates(int s, int t, const uint8_t r[3]);
  double track_error(int s, int t, int level);
  void allocate(int s, double k);
  bool raise_chain(int s, int joint);
  void search_segment(int s);
  std::vector<std::byte> serialize() const;
};

// n_a for every joint: the most animated tracks on a root-to-leaf chain through it.
std::vector<int> chain_counts(std::span<const int> parents, std::span<const TrackKind> kinds) {
  const size_t n = parents.size();
  std::vector<int> count(n, 0), up(n, 0), below(n, 0), out(n);
  for (size_t j = 0; j < n; ++j)
    for (int ch = 0; ch < 3; ++ch) count[j] += kinds[j * 3 + size_t(ch)] == TrackKind::Animated;
  for (size_t j = 0; j < n; ++j) up[j] = count[j] + (parents[j] >= 0 ? up[size_t(parents[j])] : 0);
  for (size_t j = n; j-- > 0;)
    if (parents[j] >= 0)
      below[size_t(parents[j])] = std::max(below[size_t(parents[j])], count[j] + below[j]);
  for (size_t j = 0; j < n; ++j) out[j] = std::max(1, up[j] + below[j]);
  return out;
}

void Encoder::setup_tracks() {
  cls_ = classify_tracks(ref_, J_);
  base_.assign(size_t(J_), Transform{});
  for (int j = 0; j < J_; ++j)
    for (int ch = 0; ch < 3; ++ch) {
      if (cls_.kinds[size_t(j) * 3 + size_t(ch)] != TrackKind::Constant) continue;
      // Exactly the float the file stores.
      const Transform& x = ref_[size_t(j)];
      Transform& b = base_[size_t(j)];
      if (ch == kTranslation) b.translation = Vec3(Vec3f(x.translation));
      if (ch == kRotation) b.rotation = Quat(Quatf(x.rotation));
      if (ch == kScale) b.scale = Vec3(Vec3f(x.scale));
    }

  // Subtrees (parents-first order makes each a sorted list).
  subtree_.assign(size_t(J_), {});
  for (int j = 0; j < J_; ++j)
    for (int a = j; a >= 0; a = parents_[size_t(a)]) subtree_[size_t(a)].push_back(j);

  // D_a over a sample of frames.
  reach_.assign(size_t(J_), opt_.vertex_distance);
  std::vector<Transform> model(static_cast<size_t>(J_));
  const int step = std::max(1, F_ / 32);
  for (int f = 0; f < F_; f += step) {
    model_pose(parents_,
               std::span<const Transform>(ref_.data() + size_t(f) * size_t(J_), size_t(J_)), model);
    for (int a = 0; a < J_; ++a)
      for (int j : subtree_[size_t(a)]) {
        Vec3 v[3];
        vertices(model[size_t(j)], opt_.vertex_distance, v);
        for (const Vec3& p : v)
          reach_[size_t(a)] =
              std::max(reach_[size_t(a)], 1.05 * distance(p, model[size_t(a)].translation));
      }
  }

  // Near-constant tracks (a lossy stage): an animated channel that never strays from its
  // midrange by more than kNearConstantShare of its share of the bound (turned into a vertex
  // displacement as in allocate()) is stored once, as that midrange. Mocap exports are full of
  // such channels (finger rotations of 1e-12 rad). Their error is measured with everything
  // else, and being at most a tenth of each chain's budget, the rest of the chain can always
  // absorb it.
  const std::vector<int> n_before = chain_counts(parents_, cls_.kinds);
  for (int j = 0; j < J_; ++j)
    for (int ch = 0; ch < 3; ++ch) {
      TrackKind& kind = cls_.kinds[size_t(j) * 3 + size_t(ch)];
      if (kind != TrackKind::Animated) continue;
      Vec3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
      Quat qlo{1e300, 1e300, 1e300, 1e300}, qhi{-1e300, -1e300, -1e300, -1e300};
      for (int f = 0; f < F_; ++f) {
        const Transform& x = ref_[size_t(f) * size_t(J_) + size_t(j)];
        const Vec3& v = ch == kScale ? x.scale : x.translation;
        lo = {std::min(lo.x, v.x), std::min(lo.y, v.y), std::min(lo.z, v.z)};
        hi = {std::max(hi.x, v.x), std::max(hi.y, v.y), std::max(hi.z, v.z)};
        const Quat& q = x.rotation;
        qlo = {std::min(qlo.x, q.x), std::min(qlo.y, q.y), std::min(qlo.z, q.z),
               std::min(qlo.w, q.w)};
        qhi = {std::max(qhi.x, q.x), std::max(qhi.y, q.y), std::max(qhi.z, q.z),
               std::max(qhi.w, q.w)};
      }
      const Vec3 mid = Vec3(Vec3f(lerp(lo, hi, 0.5)));
      const Quat qmid = Quat(Quatf(normalize((qlo + qhi) * 0.5)));
      double dev = 0;
      for (int f = 0; f < F_; ++f) {
        const Transform& x = ref_[size_t(f) * size_t(J_) + size_t(j)];
        dev = std::max(dev, ch == kRotation ? angle_between(qmid, x.rotation)
                            : ch == kScale  ? distance(mid, x.scale)
                                            : distance(mid, x.translation));
      }
      const double lever = ch == kTranslation ? 1.0 : reach_[size_t(j)];
      if (!(dev * lever <= kNearConstantShare * opt_.max_error / n_before[size_t(j)])) continue;
      kind = TrackKind::Constant;
      --cls_.animated, ++cls_.constant;
      Transform& b = base_[size_t(j)];
      if (ch == kTranslation) b.translation = mid;
      if (ch == kRotation) b.rotation = qmid;
      if (ch == kScale) b.scale = mid;
    }

  joint_tracks_.assign(size_t(J_), {-1, -1, -1});
  for (int j = 0; j < J_; ++j)
    for (int ch = 0; ch < 3; ++ch)
      if (cls_.kinds[size_t(j) * 3 + size_t(ch)] == TrackKind::Animated) {
        joint_tracks_[size_t(j)][size_t(ch)] = int(tracks_.size());
        tracks_.push_back({j, ch});
      }
  T_ = int(tracks_.size());
  chain_tracks_ = chain_counts(parents_, cls_.kinds);
}

void Encoder::prepare_segment_ranges() {
  vals_.assign(size_t(F_) * size_t(T_), {0, 0, 0, 0});
  seg_.assign(size_t(nseg_) * size_t(T_), SegTrack{});
  rates_.assign(size_t(nseg_) * size_t(T_) * 3, 0);
  delta_.assign(size_t(nseg_) * size_t(T_) * 3, 0);
  // Values (rotations sign-flipped per segment so the dropped component is positive).
  for (int s = 0; s < nseg_; ++s) {
    const int a = s * S_, b = seg_end(s);
    for (int t = 0; t < T_; ++t) {
      const TrackRef tr = tracks_[size_t(t)];
      SegTrack& st = seg_[size_t(s) * size_t(T_) + size_t(t)];
      if (tr.channel == kRotation) {
        double best = -1;
        for (int c = 0; c < 4; ++c) {
          double mn = 2;
          for (int f = a; f < b; ++f) {
            const Quat& q = ref_[size_t(f) * size_t(J_) + size_t(tr.joint)].rotation;
            const double v[4] = {q.x, q.y, q.z, q.w};
            mn = std::min(mn, std::abs(v[c]));
          }
          if (mn > best) best = mn, st.drop = uint8_t(c);
        }
      }
      for (int f = a; f < b; ++f) {
        const Transform& x = ref_[size_t(f) * size_t(J_) + size_t(tr.joint)];
        auto& v = vals_[size_t(f) * size_t(T_) + size_t(t)];
        if (tr.channel == kTranslation)
          v = {float(x.translation.x), float(x.translation.y), float(x.translation.z), 0};
        if (tr.channel == kScale) v = {float(x.scale.x), float(x.scale.y), float(x.scale.z), 0};
        if (tr.channel == kRotation) {
          Quat q = x.rotation;
          const double c[4] = {q.x, q.y, q.z, q.w};
          if (c[st.drop] < 0) q = -q;
          v = {float(q.x), float(q.y), float(q.z), float(q.w)};
        }
      }
    }
  }
  // Clip ranges.
  clip_range_.assign(size_t(T_), {});
  for (int t = 0; t < T_; ++t)
    for (int c = 0; c < 4; ++c) {
      float mn = std::numeric_limits<float>::max(), mx = -mn;
      for (int f = 0; f < F_; ++f) {
        const float v = vals_[size_t(f) * size_t(T_) + size_t(t)][size_t(c)];
        mn = std::min(mn, v), mx = std::max(mx, v);
      }
      float ext = float(double(mx) - double(mn));
      while (mn + ext < mx) ext = std::nextafter(ext, std::numeric_limits<float>::infinity());
      clip_range_[size_t(t)][size_t(2 * c)] = mn;
      clip_range_[size_t(t)][size_t(2 * c + 1)] = ext;
    }
  // Segment ranges: 8-bit fractions of the clip range, widened until they hold every value.
  for (int s = 0; s < nseg_; ++s) {
    const int a = s * S_, b = seg_end(s);
    for (int t = 0; t < T_; ++t) {
      SegTrack& st = seg_[size_t(s) * size_t(T_) + size_t(t)];
      const bool rot = tracks_[size_t(t)].channel == kRotation;
      for (int i = 0; i < 3; ++i) {
        const int c = rot ? i + (i >= st.drop) : i;
        const float cmin = clip_range_[size_t(t)][size_t(2 * c)];
        const float cext = clip_range_[size_t(t)][size_t(2 * c + 1)];
        float mn = std::numeric_limits<float>::max(), mx = -mn;
        for (int f = a; f < b; ++f) {
          const float v = vals_[size_t(f) * size_t(T_) + size_t(t)][size_t(c)];
          mn = std::min(mn, v), mx = std::max(mx, v);
        }
        int lo = 0, hi = 0;
        if (cext > 0) {
          lo = std::clamp(int(std::floor((double(mn) - cmin) / cext * 255.0)), 0, 255);
          hi = std::clamp(int(std::ceil((double(mx) - cmin) / cext * 255.0)), lo, 255);
          for (;;) {
            const Range r = segment_range(cmin, cext, uint8_t(lo), uint8_t(hi - lo));
            const bool ok_lo = r.min <= mn || lo == 0, ok_hi = r.min + r.extent >= mx || hi == 255;
            if (ok_lo && ok_hi) break;
            if (!ok_lo) --lo;
            if (!ok_hi) ++hi;
          }
        }
        st.q[2 * i] = uint8_t(lo);
        st.q[2 * i + 1] = uint8_t(hi - lo);
        st.range[i] = segment_range(cmin, cext, st.q[2 * i], st.q[2 * i + 1]);
      }
      const float widest_ext =
          std::max({st.range[0].extent, st.range[1].extent, st.range[2].extent});
      uint8_t* dl = &delta_[(size_t(s) * size_t(T_) + size_t(t)) * 3];
      for (int i = 0; i < 3; ++i) {
        const float e = st.range[i].extent;
        dl[i] = uint8_t(
            e > 0 ? std::clamp(int(std::floor(std::log2(double(widest_ext) / e))), 0, 15) : 15);
      }
    }
  }
}

// One stored component at rate code `code`, as decode.cpp dequantizes it (cached).
float Encoder::component(int s, int f, int t, int i, int code) {
  const size_t k =
      ((size_t(f - seg_a_) * size_t(T_) + size_t(t)) * 3 + size_t(i)) * 16 + size_t(code);
  if (!cached_[k]) {
    const SegTrack& st = seg_[size_t(s) * size_t(T_) + size_t(t)];
    const auto& v = vals_[size_t(f) * size_t(T_) + size_t(t)];
    const int c = tracks_[size_t(t)].channel == kRotation ? i + (i >= st.drop) : i;
    const int bits = kBitRates[code];
    cache_[k] = dequantize(quantize(v[size_t(c)], bits, st.range[i]), bits, st.range[i]);
    cached_[k] = 1;
  }
  return cache_[k];
}

// Exactly what decode.cpp computes for one track sample at the rate indices r.
void Encoder::emulate(int s, int f, int t, const uint8_t r[3], float out[4]) {
  Memo& m = memo_[size_t(f - seg_a_) * size_t(T_) + size_t(t)];
  if (m.r[0] == r[0] && m.r[1] == r[1] && m.r[2] == r[2]) {
    std::copy(m.v, m.v + 4, out);
    return;
  }
  std::copy(r, r + 3, m.r);
  emulate_sample(s, f, t, r, m.v);
  std::copy(m.v, m.v + 4, out);
}

void Encoder::emulate_sample(int s, int f, int t, const uint8_t r[3], float out[4]) {
  const SegTrack& st = seg_[size_t(s) * size_t(T_) + size_t(t)];
  const auto& v = vals_[size_t(f) * size_t(T_) + size_t(t)];
  const bool rot = tracks_[size_t(t)].channel == kRotation;
  if (r[0] == kRawRate) {
    for (int i = 0; i < 4; ++i) out[i] = rot || i < 3 ? v[size_t(i)] : 0.0f;
    return;
  }
  float k[3];
  for (int i = 0; i < 3; ++i) k[i] = component(s, f, t, i, r[i]);
  if (rot) {
    const float d = dropped_component(k[0], k[1], k[2]);
    for (int i = 0, o = 0; i < 4; ++i) out[i] = i == st.drop ? d : k[o++];
  } else {
    out[0] = k[0], out[1] = k[1], out[2] = k[2], out[3] = 0;
  }
}

Transform Encoder::local(int s, int sample, int j) {
  Transform x = base_[size_t(j)];
  const int f = seg_a_ + sample / 2;
  const bool mid = sample & 1;
  for (int ch = 0; ch < 3; ++ch) {
    const int t = joint_tracks_[size_t(j)][size_t(ch)];
    if (t < 0) continue;
    const uint8_t* r = rates(s, t);
    float a[4], b[4];
    emulate(s, f, t, r, a);
    if (mid) emulate(s, f + 1, t, r, b);
    if (ch == kRotation) {
      const Quat qa{a[0], a[1], a[2], a[3]}, qb{b[0], b[1], b[2], b[3]};
      x.rotation = mid ? nlerp(qa, qb, 0.5) : normalize(qa);
    } else {
      const Vec3 va{a[0], a[1], a[2]}, vb{b[0], b[1], b[2]};
      (ch == kTranslation ? x.translation : x.scale) = mid ? lerp(va, vb, 0.5) : va;
    }
  }
  return x;
}

double Encoder::measure_all(int s, int& worst_sample, int& worst_joint) {
  double worst = -1;
  for (int i = 0; i < ns_; ++i) {
    Transform* L = &L_[size_t(i) * size_t(J_)];
    Transform* M = &M_[size_t(i) * size_t(J_)];
    for (int j = 0; j < J_; ++j) {
      L[j] = local(s, i, j);
      const int p = parents_[size_t(j)];
      M[j] = p < 0 ? L[j] : M[p] * L[j];
      Vec3 v[3];
      vertices(M[j], opt_.vertex_distance, v);
      const double e = vertex_error(v, refv_[size_t(i) * size_t(J_) + size_t(j)].data());
      E_[size_t(i) * size_t(J_) + size_t(j)] = e;
      if (e > worst) worst = e, worst_sample = i, worst_joint = j;
    }
  }
  return worst;
}

// Tries the rate indices r for track t: keeps them when every vertex of the joint's subtree stays
// within the target at every sample of the segment.
bool Encoder::try_rates(int s, int t, const uint8_t r[3]) {
  const int a = tracks_[size_t(t)].joint;
  uint8_t* cur = rates(s, t);
  const uint8_t old[3] = {cur[0], cur[1], cur[2]};
  std::copy(r, r + 3, cur);
  const std::vector<int>& sub = subtree_[size_t(a)];
  const int pa = parents_[size_t(a)];
  for (int i = 0; i < ns_; ++i) {
    const Transform* L = &L_[size_t(i) * size_t(J_)];
    const Transform* M = &M_[size_t(i) * size_t(J_)];
    const Transform la = local(s, i, a);
    for (int j : sub) {
      const Transform& lj = j == a ? la : L[j];
      const int p = parents_[size_t(j)];
      tmp_[size_t(j)] = j == a ? (pa < 0 ? la : M[pa] * la) : tmp_[size_t(p)] * lj;
      Vec3 v[3];
      vertices(tmp_[size_t(j)], opt_.vertex_distance, v);
      if (vertex_error(v, refv_[size_t(i) * size_t(J_) + size_t(j)].data()) > target()) {
        std::copy(old, old + 3, cur);
        return false;
      }
    }
  }
  // Commit: refresh the cached locals, models and errors of the subtree.
  for (int i = 0; i < ns_; ++i) {
    Transform* L = &L_[size_t(i) * size_t(J_)];
    Transform* M = &M_[size_t(i) * size_t(J_)];
    L[a] = local(s, i, a);
    for (int j : sub) {
      const int p = parents_[size_t(j)];
      M[j] = p < 0 ? L[j] : M[p] * L[j];
      Vec3 v[3];
      vertices(M[j], opt_.vertex_distance, v);
      E_[size_t(i) * size_t(J_) + size_t(j)] =
          vertex_error(v, refv_[size_t(i) * size_t(J_) + size_t(j)].data());
    }
  }
  return true;
}

// The track's own error at a level over the segment's frames: an angle (radians) for rotations,
// a distance for translations, a ratio for scales.
double Encoder::track_error(int s, int t, int level) {
  double& e = local_err_[size_t(t) * kBitRateCount + size_t(level)];
  if (e >= 0) return e;
  e = 0;
  const TrackRef tr = tracks_[size_t(t)];
  uint8_t r[3];
  level_rates(s, t, level, r);
  for (int f = seg_a_; f < seg_a_ + seg_n_; ++f) {
    float d[4];
    emulate(s, f, t, r, d);
    const Transform& x = ref_[size_t(f) * size_t(J_) + size_t(tr.joint)];
    if (tr.channel == kRotation) {
      const Quat q = normalize(Quat{d[0], d[1], d[2], d[3]});
      const Quat diff = dot(q, x.rotation) < 0 ? q + x.rotation : q - x.rotation;
      e = std::max(e, 2.0 * std::sqrt(dot(diff, diff)));  // ≈ the angle, slightly over
    } else {
      const Vec3& v = tr.channel == kTranslation ? x.translation : x.scale;
      e = std::max(e, distance(v, Vec3{d[0], d[1], d[2]}));
    }
  }
  return e;
}

// The split of the bound, scaled by k: each track takes the smallest rate whose own error,
// turned into a vertex displacement, fits k · bound / n_a.
void Encoder::allocate(int s, double k) {
  for (int t = 0; t < T_; ++t) {
    const TrackRef tr = tracks_[size_t(t)];
    const double share = k * target() / chain_tracks_[size_t(tr.joint)];
    const double lever = tr.channel == kTranslation ? 1.0 : reach_[size_t(tr.joint)];
    int level = 0;
    while (level < kRawRate && track_error(s, t, level) * lever > share) ++level;
    level_rates(s, t, level, rates(s, t));
  }
}

// Raises every animated track on the chain from the root to `joint` by one step: each component
// one code more, raw once one is at the last code.
bool Encoder::raise_chain(int s, int joint) {
  bool raised = false;
  for (int j = joint; j >= 0; j = parents_[size_t(j)])
    for (int t : joint_tracks_[size_t(j)]) {
      if (t < 0) continue;
      uint8_t* r = rates(s, t);
      if (r[0] == kRawRate) continue;
      const bool to_raw = widest(s, t) >= kRawRate - 1;
      for (int i = 0; i < 3; ++i) r[i] = uint8_t(to_raw ? kRawRate : r[i] + 1);
      raised = true;
    }
  return raised;
}

void Encoder::search_segment(int s) {
  seg_a_ = s * S_;
  seg_n_ = seg_end(s) - seg_a_;
  ns_ = 2 * seg_n_ - 1;
  const size_t jn = size_t(J_);
  cache_.resize(size_t(seg_n_) * size_t(T_) * 3 * 16);
  cached_.assign(cache_.size(), 0);
  memo_.assign(size_t(seg_n_) * size_t(T_), Memo{});
  local_err_.assign(size_t(T_) * kBitRateCount, -1.0);
  refv_.resize(size_t(ns_) * jn);
  L_.resize(size_t(ns_) * jn);
  M_.resize(size_t(ns_) * jn);
  E_.resize(size_t(ns_) * jn);
  tmp_.resize(jn);
  // Reference vertices at the frames and midpoints.
  std::vector<Transform> rl(jn), rm(jn);
  for (int i = 0; i < ns_; ++i) {
    const int f = seg_a_ + i / 2;
    for (size_t j = 0; j < jn; ++j) {
      const Transform& r0 = ref_[size_t(f) * jn + j];
      rl[j] = (i & 1) ? blend(r0, ref_[size_t(f + 1) * jn + j], 0.5) : r0;
    }
    model_pose(parents_, rl, rm);
    for (size_t j = 0; j < jn; ++j)
      vertices(rm[j], opt_.vertex_distance, refv_[size_t(i) * jn + j].data());
  }
  if (T_ == 0) return;

  int ws = 0, wj = 0;
  allocate(s, 1.0);
  double m = measure_all(s, ws, wj);
  if (m > target()) {
    // The split was not enough (midpoints, reconstruction): raise the worst chain until it fits.
    while (m > target() && raise_chain(s, wj)) m = measure_all(s, ws, wj);
  } else {
    // Scale the split up while the measured error allows (it is conservative: errors along a
    // chain rarely add up in the worst direction).
    const auto first = rates_.begin() + std::ptrdiff_t(size_t(s) * size_t(T_) * 3);
    const auto last = first + std::ptrdiff_t(size_t(T_) * 3);
    std::vector<uint8_t> best(first, last);
    double lo = 1, hi = 64;
    for (int it = 0; it < 6; ++it) {
      const double mid = std::sqrt(lo * hi);
      allocate(s, mid);
      if (measure_all(s, ws, wj) <= target()) {
        lo = mid;
        std::copy(first, last, best.begin());
      } else {
        hi = mid;
      }
    }
    std::copy(best.begin(), best.end(), first);
    m = measure_all(s, ws, wj);
  }
  // Greedy refinement: lower single components, most expensive first, while the subtree fits.
  std::vector<int> order(size_t(T_) * 3);  // track · 3 + component
  for (int pass = 0; pass < opt_.refine_passes; ++pass) {
    for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return rates(s, x / 3)[x % 3] > rates(s, y / 3)[y % 3]; });
    bool changed = false;
    for (int o : order) {
      const int t = o / 3, i = o % 3;
      const uint8_t* cur = rates(s, t);
      if (cur[i] == 0) continue;
      uint8_t r[3] = {cur[0], cur[1], cur[2]};
      if (cur[0] == kRawRate) {
        if (i != 0) continue;
        level_rates(s, t, kRawRate - 1, r);  // raw floats step down to the last code
      } else {
        --r[i];
      }
      if (try_rates(s, t, r)) changed = true;
    }
    if (!changed) break;
  }
}

void put16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
  b[at] = uint8_t(v), b[at + 1] = uint8_t(v >> 8);
}
void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + size_t(i)] = uint8_t(v >> (8 * i));
}
void push32(std::vector<uint8_t>& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
void pushf(std::vector<uint8_t>& b, float v) { push32(b, std::bit_cast<uint32_t>(v)); }

std::vector<std::byte> Encoder::serialize() const {
  std::vector<uint8_t> b(kHeaderBytes, 0);
  std::memcpy(b.data(), kMagic, 4);
  put16(b, 4, kVersion);
  put32(b, 16, uint32_t(J_));
  put32(b, 20, uint32_t(F_));
  put32(b, 24, std::bit_cast<uint32_t>(float(rate_)));
  put32(b, 28, std::bit_cast<uint32_t>(float((F_ - 1) / rate_)));
  put16(b, 32, uint16_t(S_));
  const size_t name_len = std::min<size_t>(name_.size(), 65535);
  put16(b, 34, uint16_t(name_len));
  put32(b, 36, uint32_t(cls_.animated));
  put32(b, 40, uint32_t(cls_.constant));
  b.insert(b.end(), name_.begin(), name_.begin() + std::ptrdiff_t(name_len));
  for (int j = 0; j < J_; ++j) {
    uint8_t k = 0;
    for (int ch = 0; ch < 3; ++ch) k |= kind_bits(cls_.kinds[size_t(j) * 3 + size_t(ch)], ch);
    b.push_back(k);
  }
  for (int j = 0; j < J_; ++j)
    for (int ch = 0; ch < 3; ++ch) {
      if (cls_.kinds[size_t(j) * 3 + size_t(ch)] != TrackKind::Constant) continue;
      const Transform& x = base_[size_t(j)];
      if (ch == kTranslation)
        for (double v : {x.translation.x, x.translation.y, x.translation.z}) pushf(b, float(v));
      if (ch == kRotation)
        for (double v : {x.rotation.x, x.rotation.y, x.rotation.z, x.rotation.w})
          pushf(b, float(v));
      if (ch == kScale)
        for (double v : {x.scale.x, x.scale.y, x.scale.z}) pushf(b, float(v));
    }
  for (int t = 0; t < T_; ++t)
    for (int half = 0; half < 2; ++half)  // the minima, then the extents
      for (int c = 0; c < (tracks_[size_t(t)].channel == kRotation ? 4 : 3); ++c)
        pushf(b, clip_range_[size_t(t)][size_t(2 * c + half)]);
  for (int s = 0; s < nseg_; ++s)
    for (int t = 0; t < T_; ++t) {
      const SegTrack& st = seg_[size_t(s) * size_t(T_) + size_t(t)];
      const uint8_t* r = rates(s, t);
      const uint16_t word =
          uint16_t((r[0] == kRawRate ? kRawFlag : r[0] | r[1] << 4 | r[2] << 8) | st.drop << 12);
      b.push_back(uint8_t(word)), b.push_back(uint8_t(word >> 8));
      for (int i : {0, 2, 4, 1, 3, 5}) b.push_back(st.q[i]);  // 3 minima, then 3 extents
    }
  for (int s = 0; s < nseg_; ++s) {
    const int a = s * S_, n = seg_end(s) - a;
    uint64_t frame_bits = 0;
    for (int t = 0; t < T_; ++t) {
      const uint8_t* r = rates(s, t);
      const bool raw = r[0] == kRawRate;
      for (int i = 0; i < stored_components(tracks_[size_t(t)].channel, raw); ++i)
        frame_bits += uint64_t(raw ? 32 : kBitRates[r[i]]);
    }
    const size_t start = b.size();
    b.resize(start + size_t((uint64_t(n) * frame_bits + 7) / 8) + 8, 0);
    uint64_t bit = 0;
    for (int f = a; f < a + n; ++f)
      for (int t = 0; t < T_; ++t) {
        const SegTrack& st = seg_[size_t(s) * size_t(T_) + size_t(t)];
        const uint8_t* r = rates(s, t);
        const bool raw = r[0] == kRawRate;
        const auto& v = vals_[size_t(f) * size_t(T_) + size_t(t)];
        const bool rot = tracks_[size_t(t)].channel == kRotation;
        const int comps = stored_components(tracks_[size_t(t)].channel, raw);
        for (int i = 0; i < comps; bit += uint64_t(raw ? 32 : kBitRates[r[i]]), ++i) {
          const int bits = raw ? 32 : kBitRates[r[i]];
          if (bits == 0) continue;
          const int c = rot && comps == 3 ? i + (i >= st.drop) : i;
          const uint64_t code = quantize(v[size_t(c)], bits, st.range[i]);
          uint8_t* p = b.data() + start + (bit >> 3);
          const uint64_t w = load_le64(p) | code << (bit & 7);
          for (int k = 0; k < 8; ++k) p[k] = uint8_t(w >> (8 * k));
        }
      }
    b.resize(start + size_t((uint64_t(n) * frame_bits + 7) / 8));
  }
  b.resize(b.size() + kTailPadding, 0);
  put32(b, 8, uint32_t(b.size()));
  put32(b, 12, fnv1a(b.data() + 16, b.size() - 16));
  std::vector<std::byte> out(b.size());
  std::memcpy(out.data(), b.data(), b.size());
  return out;
}

CompressedClip Encoder::run(CompressionStats* stats) {
  setup_tracks();
  prepare_segment_ranges();
  for (int s = 0; s < nseg_; ++s) search_segment(s);

  // Verify with the real decoder; raise the chains that slip over the bound and rebuild.
  int rounds = 0;
  for (;;) {
    const std::vector<std::byte> bytes = serialize();
    CompressedClip c = CompressedClip::deserialize(bytes, name_);
    std::vector<std::pair<int, int>> over;  // (segment, joint)
    std::string where;
    const ErrorStats st = verify_clip(
        parents_, ref_, c, opt_.vertex_distance,
        [&](int f, bool mid, int j) {
          over.emplace_back(seg_of(f), j);
          where = "joint " + sk_.joint(j).name + ", frame " + std::to_string(f) +
                  (mid ? " (midpoint to the next)" : "");
          if (mid) over.emplace_back(seg_of(f + 1), j);
        },
        opt_.max_error);
    if (over.empty()) {
      if (stats) {
        stats->error = st;
        stats->repair_rounds = rounds;
      }
      return c;
    }
    if (++rounds > kMaxRepairRounds)
      throw Error(name_, "compress",
                  "cannot meet the error bound of " + std::to_string(opt_.max_error) +
                      " m even with raw floats");
    std::sort(over.begin(), over.end());
    over.erase(std::unique(over.begin(), over.end()), over.end());
    bool raised = false;
    for (auto [s, j] : over) raised = raise_chain(s, j) || raised;
    if (!raised)
      throw Error(name_, "compress",
                  "cannot meet the error bound of " + std::to_string(opt_.max_error) +
                      " m even with raw floats (below float precision?) at " + where);
  }
}

}  // namespace

CompressedClip compress(const Clip& clip, const Skeleton& skeleton, const CompressOptions& options,
                        CompressionStats* stats) {
  if (!(options.max_error > 0) || !std::isfinite(options.max_error))
    throw Error(clip.name, "max_error", "the error bound must be positive and finite");
  if (!(options.vertex_distance >= 0) || !std::isfinite(options.vertex_distance))
    throw Error(clip.name, "vertex_distance", "the vertex distance must be finite, not negative");
  if (options.segment_frames < 2 || options.segment_frames > 1024)
    throw Error(clip.name, "segment_frames", "frames per segment must be in 2…1024");
  if (skeleton.joint_count() == 0) throw Error(clip.name, "skeleton", "the skeleton has no joints");
  double rate = 0;
  std::vector<Transform> ref = resample_frames(clip, skeleton, options.sample_rate, rate);
  Encoder enc(skeleton, options, std::move(ref), rate, clip.name);
  CompressedClip c = enc.run(stats);
  if (stats) {
    const size_t frames = size_t(c.frame_count()), joints = size_t(c.joint_count());
    stats->frames = int(frames);
    stats->joints = int(joints);
    stats->raw_bytes = 40 * joints * frames;
    stats->compressed_bytes = c.size_bytes();
    stats->ratio = double(stats->raw_bytes) / double(c.size_bytes());
    stats->animated_tracks = c.animated_track_count();
    stats->constant_tracks = c.constant_track_count();
    stats->identity_tracks = 3 * int(joints) - stats->animated_tracks - stats->constant_tracks;
    double bits = 0, comps = 0;
    for (int s = 0; s < c.segment_count(); ++s) {
      const int n = int(segment_length(uint32_t(s), uint64_t(c.frame_count()),
                                       uint32_t(c.segment_frames()), uint32_t(c.segment_count())));
      for (int t = 0; t < c.animated_track_count(); ++t)
        for (int i = 0; i < 3; ++i) {
          bits += double(c.bit_rate(s, t, i)) * n;  // raw rotations count as 3 × 32 here
          comps += n;
        }
    }
    stats->mean_bits = comps > 0 ? bits / comps : 0;
  }
  return c;
}

}  // namespace kinema
