// kinema/blend/blend_space.cpp — 1D/2D blend spaces and phase synchronization.
#include "kinema/blend/blend_space.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "kinema/core/error.h"

namespace kinema {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// "sample 2 ("run")": the place of an entry in errors.
std::string entry_place(const char* label, std::size_t i, std::span<const std::string> names) {
  std::string s = std::string(label) + " " + std::to_string(i);
  if (i < names.size() && !names[i].empty()) s += " (\"" + names[i] + "\")";
  return s;
}

// Wraps a finite value to [0, 1).
double wrap01(double v) {
  v -= std::floor(v);
  return v >= 1.0 ? 0.0 : v;
}

// Narrows a value in [0, 1) to float without letting rounding produce 1.0f.
float unit_float(double v) {
  const float f = static_cast<float>(v);
  return f >= 1.0f ? 0.0f : f;
}

std::string joined_ids(const std::vector<const SyncMarker*>& markers) {
  std::string s;
  for (std::size_t i = 0; i < markers.size(); ++i) s += (i ? "," : "") + markers[i]->id;
  return s;
}

}  // namespace

// ---- PhaseSync --------------------------------------------------------------------------------

PhaseSync::PhaseSync(std::span<const ClipCycle> clips, std::span<const std::string> names,
                     const char* label) {
  if (clips.empty()) throw Error("", "", "phase sync needs at least one clip");
  const std::size_t n = clips.size();
  const auto place = [&](std::size_t i) { return entry_place(label, i, names); };

  // Validate each clip and sort its markers by time.
  std::vector<std::vector<const SyncMarker*>> sorted(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float d = clips[i].duration;
    if (!std::isfinite(d) || d <= 0.0f)
      throw Error("", place(i), "cycle duration must be finite and > 0 s (got " + num(d) + ")");
    for (const SyncMarker& m : clips[i].markers) {
      if (m.id.empty()) throw Error("", place(i), "sync marker with an empty id");
      if (!std::isfinite(m.time) || m.time < 0.0f || m.time >= 1.0f)
        throw Error(
            "", place(i),
            "sync marker \"" + m.id + "\" time must be in [0, 1) (got " + num(m.time) + ")");
      sorted[i].push_back(&m);
    }
    std::stable_sort(sorted[i].begin(), sorted[i].end(),
                     [](const SyncMarker* a, const SyncMarker* b) { return a->time < b->time; });
    for (std::size_t k = 1; k < sorted[i].size(); ++k)
      if (sorted[i][k]->time == sorted[i][k - 1]->time)
        throw Error("", place(i),
                    "sync markers \"" + sorted[i][k - 1]->id + "\" and \"" + sorted[i][k]->id +
                        "\" are at the same time " + num(sorted[i][k]->time));
    duration_.push_back(d);
  }

  // The first clip with markers defines the canonical order, starting at its earliest marker.
  std::size_t ref = n;
  for (std::size_t i = 0; i < n && ref == n; ++i)
    if (!sorted[i].empty()) ref = i;
  segments_ = ref == n ? 1 : sorted[ref].size();
  const std::size_t m_count = segments_;
  if (ref != n)
    for (const SyncMarker* m : sorted[ref]) marker_ids_.push_back(m->id);

  seg_start_.assign(n * m_count, 0.0);
  seg_len_.assign(n * m_count, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& ms = sorted[i];
    if (ms.empty()) {
      // No markers: a uniform warp, so the clip's local time equals the phase.
      for (std::size_t k = 0; k < m_count; ++k) {
        seg_start_[i * m_count + k] = double(k) / double(m_count);
        seg_len_[i * m_count + k] = 1.0 / double(m_count);
      }
      continue;
    }
    const std::string expected = "expected " + joined_ids(sorted[ref]) + " in cyclic order as " +
                                 entry_place(label, ref, names);
    if (ms.size() != m_count)
      throw Error("", place(i),
                  "sync markers do not match: got " + joined_ids(ms) + ", " + expected);
    // Align by id: find the rotation r with ms[(r + k) % M].id == canonical[k] for all k.
    std::size_t rot = m_count;
    for (std::size_t r = 0; r < m_count && rot == m_count; ++r) {
      bool ok = true;
      for (std::size_t k = 0; k < m_count && ok; ++k)
        ok = ms[(r + k) % m_count]->id == marker_ids_[k];
      if (ok) rot = r;
    }
    if (rot == m_count)
      throw Error("", place(i),
                  "sync markers do not match: got " + joined_ids(ms) + ", " + expected);
    for (std::size_t k = 0; k < m_count; ++k) {
      const double start = ms[(rot + k) % m_count]->time;
      double end = ms[(rot + k + 1) % m_count]->time;
      if (end <= start) end += 1.0;  // the segment wraps past the end of the cycle
      seg_start_[i * m_count + k] = start;
      seg_len_[i * m_count + k] = end - start;
    }
  }
}

float PhaseSync::marker_phase(std::size_t k) const noexcept {
  return k < segments_ ? static_cast<float>(double(k) / double(segments_)) : 0.0f;
}

double PhaseSync::weight_sum(std::span<const float> weights) const noexcept {
  if (weights.size() != duration_.size() || duration_.empty()) return -1.0;
  double sum = 0.0;
  for (float w : weights) {
    if (!std::isfinite(w) || w < 0.0f) return -1.0;
    sum += w;
  }
  return sum > 0.0 && std::isfinite(sum) ? sum : -1.0;
}

double PhaseSync::segment_duration(std::size_t k, std::span<const float> weights,
                                   double inv_sum) const noexcept {
  double d = 0.0;
  for (std::size_t i = 0; i < duration_.size(); ++i)
    d += weights[i] * inv_sum * duration_[i] * seg_len_[i * segments_ + k];
  return d;
}

std::optional<float> PhaseSync::cycle_duration(std::span<const float> weights) const noexcept {
  const double sum = weight_sum(weights);
  if (sum <= 0.0) return std::nullopt;
  double t = 0.0;
  for (std::size_t i = 0; i < duration_.size(); ++i) t += weights[i] * duration_[i];
  return static_cast<float>(t / sum);
}

bool PhaseSync::playback_rates(std::span<const float> weights,
                               std::span<float> rates) const noexcept {
  if (rates.size() != duration_.size()) return false;
  const std::optional<float> t = cycle_duration(weights);
  if (!t) return false;
  const double cycle = *t;
  for (std::size_t i = 0; i < duration_.size(); ++i)
    rates[i] = static_cast<float>(duration_[i] / cycle);
  return true;
}

bool PhaseSync::advance(std::span<const float> weights, float dt, float& phase) const noexcept {
  const double sum = weight_sum(weights);
  if (sum <= 0.0 || !std::isfinite(dt) || !std::isfinite(phase)) return false;
  const double inv_sum = 1.0 / sum;
  double cycle = 0.0;
  for (std::size_t i = 0; i < duration_.size(); ++i) cycle += weights[i] * inv_sum * duration_[i];

  const std::size_t m = segments_;
  const double s = wrap01(phase) * double(m);
  std::size_t k = std::min(static_cast<std::size_t>(s), m - 1);
  double f = s - double(k);
  // Whole cycles change nothing; going back by |dt| is going forward by T − |dt|.
  double rest = std::fmod(double(dt), cycle);
  if (rest < 0.0) rest += cycle;
  // Walk segment by segment: each lasts D_k for this blend. rest < T = Σ D_k bounds the walk to
  // about M + 1 steps; the cap only guards against rounding.
  for (std::size_t step = 0; step < 2 * m + 2 && rest > 0.0; ++step) {
    const double seg = segment_duration(k, weights, inv_sum);
    if (!(seg > 0.0)) break;
    const double left = (1.0 - f) * seg;
    if (rest < left) {
      f += rest / seg;
      break;
    }
    rest -= left;
    k = (k + 1) % m;
    f = 0.0;
  }
  phase = unit_float(wrap01((double(k) + std::min(f, 1.0)) / double(m)));
  return true;
}

double PhaseSync::local_time_unchecked(std::size_t clip, double phase01) const noexcept {
  const std::size_t m = segments_;
  const double s = phase01 * double(m);
  const std::size_t k = std::min(static_cast<std::size_t>(s), m - 1);
  const double f = s - double(k);
  const std::size_t at = clip * m + k;
  return wrap01(seg_start_[at] + f * seg_len_[at]);
}

bool PhaseSync::local_times(float phase, std::span<float> out) const noexcept {
  if (out.size() != duration_.size() || !std::isfinite(phase)) return false;
  const double p = wrap01(phase);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = unit_float(local_time_unchecked(i, p));
  return true;
}

std::optional<float> PhaseSync::local_time(std::size_t clip, float phase) const noexcept {
  if (clip >= duration_.size() || !std::isfinite(phase)) return std::nullopt;
  return unit_float(local_time_unchecked(clip, wrap01(phase)));
}

// ---- BlendSpace1D -----------------------------------------------------------------------------

namespace {

std::vector<std::string> names_of(const auto& samples) {
  std::vector<std::string> names;
  for (const auto& s : samples) names.push_back(s.name);
  return names;
}

std::vector<ClipCycle> cycles_of(const auto& samples) {
  std::vector<ClipCycle> cycles;
  for (const auto& s : samples) cycles.push_back(s.cycle);
  return cycles;
}

}  // namespace

BlendSpace1D::BlendSpace1D(std::vector<BlendSample1D> samples) : samples_(std::move(samples)) {
  const std::size_t n = samples_.size();
  if (n < 2)
    throw Error("", "",
                "a 1D blend space needs at least 2 samples (got " + std::to_string(n) + ")");
  const std::vector<std::string> names = names_of(samples_);
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(samples_[i].position))
      throw Error("", entry_place("sample", i, names), "position is not finite");
    if (samples_[i].root_speed && !std::isfinite(*samples_[i].root_speed))
      throw Error("", entry_place("sample", i, names), "root speed is not finite");
  }
  order_.resize(n);
  for (std::size_t i = 0; i < n; ++i) order_[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return samples_[a].position < samples_[b].position;
  });
  for (std::size_t k = 1; k < n; ++k)
    if (samples_[order_[k]].position == samples_[order_[k - 1]].position)
      throw Error("", entry_place("sample", order_[k], names),
                  "duplicate position " + num(samples_[order_[k]].position) + " (same as " +
                      entry_place("sample", order_[k - 1], names) + ")");
  for (std::uint32_t i : order_) sorted_pos_.push_back(samples_[i].position);
  const std::vector<ClipCycle> cycles = cycles_of(samples_);
  sync_ = PhaseSync(cycles, names, "sample");
}

void BlendSpace1D::locate(double x, std::size_t& lo, std::size_t& hi, double& t) const noexcept {
  const std::size_t n = sorted_pos_.size();
  t = 0.0;
  if (x <= sorted_pos_.front()) {
    lo = hi = 0;  // clamp to the first sample
  } else if (x >= sorted_pos_.back()) {
    lo = hi = n - 1;  // clamp to the last sample
  } else {
    hi = static_cast<std::size_t>(std::upper_bound(sorted_pos_.begin(), sorted_pos_.end(), x) -
                                  sorted_pos_.begin());
    lo = hi - 1;
    t = (x - sorted_pos_[lo]) / (sorted_pos_[hi] - sorted_pos_[lo]);
  }
}

bool BlendSpace1D::weights(float x, std::span<float> out) const noexcept {
  if (!std::isfinite(x) || out.size() != samples_.size()) return false;
  std::size_t lo = 0, hi = 0;
  double t = 0.0;
  locate(x, lo, hi, t);
  std::fill(out.begin(), out.end(), 0.0f);
  out[order_[lo]] = static_cast<float>(1.0 - t);
  if (hi != lo) out[order_[hi]] = static_cast<float>(t);
  return true;
}

std::size_t BlendSpace1D::sparse_weights(float x, std::span<BlendWeight> out) const noexcept {
  if (!std::isfinite(x) || out.size() < kMaxActive) return 0;
  std::size_t lo = 0, hi = 0;
  double t = 0.0;
  locate(x, lo, hi, t);
  std::size_t count = 0;
  const float wl = static_cast<float>(1.0 - t), wh = static_cast<float>(t);
  if (wl > 0.0f) out[count++] = {order_[lo], wl};
  if (hi != lo && wh > 0.0f) out[count++] = {order_[hi], wh};
  return count;
}

std::optional<float> BlendSpace1D::stride(std::span<const float> weights) const noexcept {
  const double sum = sync_.weight_sum(weights);
  if (sum <= 0.0) return std::nullopt;
  double dist = 0.0;
  for (std::size_t i = 0; i < samples_.size(); ++i) {
    if (weights[i] == 0.0f) continue;
    if (!samples_[i].root_speed) return std::nullopt;
    dist += weights[i] * double(*samples_[i].root_speed) * sync_.duration_[i];
  }
  return static_cast<float>(dist / sum);
}

std::optional<float> BlendSpace1D::root_speed(std::span<const float> weights) const noexcept {
  const std::optional<float> s = stride(weights);
  const std::optional<float> t = sync_.cycle_duration(weights);
  if (!s || !t) return std::nullopt;
  return static_cast<float>(double(*s) / double(*t));
}

std::optional<float> BlendSpace1D::playback_scale(std::span<const float> weights,
                                                  float target_speed) const noexcept {
  if (!std::isfinite(target_speed)) return std::nullopt;
  const std::optional<float> v = root_speed(weights);
  if (!v || *v == 0.0f) return std::nullopt;
  return target_speed / *v;
}

bool BlendSpace1D::speed_matched_weights(float target_speed, std::span<float> out) const noexcept {
  if (!std::isfinite(target_speed) || out.size() != samples_.size()) return false;
  const double v = target_speed;
  const std::size_t n = order_.size();
  for (std::size_t k = 0; k + 1 < n; ++k) {
    const BlendSample1D& a = samples_[order_[k]];
    const BlendSample1D& b = samples_[order_[k + 1]];
    if (!a.root_speed || !b.root_speed) continue;
    const double sa = *a.root_speed, sb = *b.root_speed;
    if (v < std::min(sa, sb) || v > std::max(sa, sb)) continue;
    // (w_a·s_a·T_a + w_b·s_b·T_b) / (w_a·T_a + w_b·T_b) = v with w_a = 1 − w_b, solved for w_b.
    const double na = sync_.duration_[order_[k]] * (v - sa);
    const double nb = sync_.duration_[order_[k + 1]] * (sb - v);
    const double wb = na + nb != 0.0 ? std::clamp(na / (na + nb), 0.0, 1.0) : 0.0;
    std::fill(out.begin(), out.end(), 0.0f);
    out[order_[k]] = static_cast<float>(1.0 - wb);
    out[order_[k + 1]] += static_cast<float>(wb);
    return true;
  }
  // No bracketing pair: the sample whose speed is nearest (the caller may then scale playback).
  std::size_t best = n;
  double best_gap = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < n; ++k) {
    const BlendSample1D& s = samples_[order_[k]];
    if (s.root_speed && std::abs(*s.root_speed - v) < best_gap) {
      best_gap = std::abs(*s.root_speed - v);
      best = k;
    }
  }
  if (best == n) return false;
  std::fill(out.begin(), out.end(), 0.0f);
  out[order_[best]] = 1.0f;
  return true;
}

// ---- BlendSpace2D -----------------------------------------------------------------------------

namespace {

// Twice the signed area of (a, b, c): > 0 when counter-clockwise. One formula everywhere, so the
// query's edge functions reproduce a triangle's own area bit for bit at its vertices.
double orient(double ax, double ay, double bx, double by, double cx, double cy) {
  return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

// Rounding bound for orient(): its terms' magnitude times a small multiple of the unit roundoff.
double orient_tolerance(double ax, double ay, double bx, double by, double cx, double cy) {
  return 1e-12 * (std::abs((bx - ax) * (cy - ay)) + std::abs((by - ay) * (cx - ax)));
}

struct Points {
  const std::vector<double>& x;
  const std::vector<double>& y;

  double orient(std::uint32_t a, std::uint32_t b, std::uint32_t c) const {
    return kinema::orient(x[a], y[a], x[b], y[b], x[c], y[c]);
  }
  // Sign of orient() with rounding-level values read as 0 (collinear).
  int orient_sign(std::uint32_t a, std::uint32_t b, std::uint32_t c) const {
    const double o = orient(a, b, c);
    const double tol = orient_tolerance(x[a], y[a], x[b], y[b], x[c], y[c]);
    return o > tol ? 1 : (o < -tol ? -1 : 0);
  }

  // Should edge a–b (triangles (a, b, c) and (b, a, d), both CCW) be flipped to c–d? True when d
  // is inside the circumcircle of (a, b, c). Ties (cocircular points) are decided by a perturbed
  // lift x² + y² + ε·y² + ε²·x·y (Delaunay with the second axis infinitesimally stretched, then
  // sheared), and last by index, so the result does not depend on the insertion order.
  bool should_flip(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) const {
    const double adx = x[a] - x[d], ady = y[a] - y[d];
    const double bdx = x[b] - x[d], bdy = y[b] - y[d];
    const double cdx = x[c] - x[d], cdy = y[c] - y[d];
    const double bc = bdx * cdy - cdx * bdy, ca = cdx * ady - adx * cdy, ab = adx * bdy - bdx * ady;
    const double pbc = std::abs(bdx * cdy) + std::abs(cdx * bdy);
    const double pca = std::abs(cdx * ady) + std::abs(adx * cdy);
    const double pab = std::abs(adx * bdy) + std::abs(bdx * ady);
    const auto lifted = [&](auto lift) {
      const double la = lift(adx, ady), lb = lift(bdx, bdy), lc = lift(cdx, cdy);
      const double det = la * bc + lb * ca + lc * ab;
      const double tol = 1e-12 * (std::abs(la) * pbc + std::abs(lb) * pca + std::abs(lc) * pab);
      return det > tol ? 1 : (det < -tol ? -1 : 0);
    };
    int s = lifted([](double u, double v) { return u * u + v * v; });
    if (s == 0) s = lifted([](double, double v) { return v * v; });
    if (s == 0) s = lifted([](double u, double v) { return u * v; });
    if (s != 0) return s > 0;
    return std::min(c, d) < std::min(a, b);  // keep the diagonal with the smaller index
  }
};

struct Triangulation {
  std::vector<std::array<std::uint32_t, 3>> tris;
  std::vector<std::uint32_t> hull;
};

// Sweep triangulation: insert points in lexicographic order, each joined to the hull edges it
// sees. Throws when all points are collinear.
Triangulation sweep(const Points& pts, std::vector<std::uint32_t> ord) {
  Triangulation out;
  const std::size_t n = ord.size();
  std::size_t k = 2;
  while (k < n && pts.orient_sign(ord[0], ord[1], ord[k]) == 0) ++k;
  if (k == n)
    throw Error("", "",
                "samples are collinear: a 2D blend space needs 3 samples that are not on one line");
  // ord[0..k-1] lie on one line, in order along it: fan them to ord[k].
  const bool left = pts.orient_sign(ord[0], ord[1], ord[k]) > 0;
  for (std::size_t j = 0; j + 1 < k; ++j) {
    if (left)
      out.tris.push_back({ord[j], ord[j + 1], ord[k]});
    else
      out.tris.push_back({ord[j + 1], ord[j], ord[k]});
  }
  if (left) {
    out.hull.assign(ord.begin(), ord.begin() + static_cast<std::ptrdiff_t>(k + 1));
  } else {
    out.hull.push_back(ord[0]);
    for (std::size_t j = k; j >= 1; --j) out.hull.push_back(ord[j]);
  }
  std::vector<char> visible;
  std::vector<std::uint32_t> next_hull;
  for (std::size_t m = k + 1; m < n; ++m) {
    const std::uint32_t p = ord[m];
    const std::vector<std::uint32_t>& h = out.hull;
    const std::size_t hn = h.size();
    visible.assign(hn, 0);
    for (std::size_t i = 0; i < hn; ++i) visible[i] = pts.orient_sign(h[i], h[(i + 1) % hn], p) < 0;
    // p is lexicographically past every hull point, so it sees a non-empty chain of edges.
    std::size_t s = hn;
    for (std::size_t i = 0; i < hn && s == hn; ++i)
      if (visible[i] && !visible[(i + hn - 1) % hn]) s = i;
    // Exactly, p sees at least one edge; only rounding-level near-collinearity can hide them all.
    if (s == hn)
      throw Error(
          "", "",
          "samples are nearly collinear: cannot triangulate around sample " + std::to_string(p));
    std::size_t e = s;
    while (visible[(e + 1) % hn] && (e + 1) % hn != s) e = (e + 1) % hn;
    for (std::size_t i = s;; i = (i + 1) % hn) {
      out.tris.push_back({h[(i + 1) % hn], h[i], p});
      if (i == e) break;
    }
    next_hull.clear();
    for (std::size_t i = (e + 1) % hn;; i = (i + 1) % hn) {
      next_hull.push_back(h[i]);
      if (i == s) break;
    }
    next_hull.push_back(p);
    out.hull.swap(next_hull);
  }
  return out;
}

// Lawson flips until every interior edge is (tie-broken) Delaunay. Flips keep the triangulation
// valid, so even the defensive pass cap leaves a usable result.
void make_delaunay(const Points& pts, std::vector<std::array<std::uint32_t, 3>>& tris) {
  struct EdgeRef {
    std::uint32_t lo, hi, tri, opposite;  // opposite: local index of the vertex facing the edge
  };
  std::vector<EdgeRef> edges;
  std::vector<char> touched;
  const std::size_t max_passes = 4 * pts.x.size() * pts.x.size() + 16;
  for (std::size_t pass = 0; pass < max_passes; ++pass) {
    edges.clear();
    for (std::uint32_t t = 0; t < tris.size(); ++t)
      for (std::uint32_t j = 0; j < 3; ++j) {
        const std::uint32_t u = tris[t][(j + 1) % 3], v = tris[t][(j + 2) % 3];
        edges.push_back({std::min(u, v), std::max(u, v), t, j});
      }
    std::sort(edges.begin(), edges.end(), [](const EdgeRef& a, const EdgeRef& b) {
      return a.lo != b.lo ? a.lo < b.lo : (a.hi != b.hi ? a.hi < b.hi : a.tri < b.tri);
    });
    touched.assign(tris.size(), 0);
    bool flipped = false;
    for (std::size_t i = 0; i + 1 < edges.size(); ++i) {
      const EdgeRef& e1 = edges[i];
      const EdgeRef& e2 = edges[i + 1];
      if (e1.lo != e2.lo || e1.hi != e2.hi) continue;
      if (touched[e1.tri] || touched[e2.tri]) continue;  // stale: flipped earlier in this pass
      const std::uint32_t c = tris[e1.tri][e1.opposite];
      const std::uint32_t a = tris[e1.tri][(e1.opposite + 1) % 3];
      const std::uint32_t b = tris[e1.tri][(e1.opposite + 2) % 3];
      const std::uint32_t d = tris[e2.tri][e2.opposite];
      // Quad a, d, b, c (CCW): flip only if strictly convex at a and b.
      if (pts.orient_sign(c, a, d) <= 0 || pts.orient_sign(d, b, c) <= 0) continue;
      if (!pts.should_flip(a, b, c, d)) continue;
      tris[e1.tri] = {a, d, c};
      tris[e2.tri] = {d, b, c};
      touched[e1.tri] = touched[e2.tri] = 1;
      flipped = true;
    }
    if (!flipped) return;
  }
}

}  // namespace

BlendSpace2D::BlendSpace2D(std::vector<BlendSample2D> samples) : samples_(std::move(samples)) {
  const std::size_t n = samples_.size();
  if (n < 3)
    throw Error("", "",
                "a 2D blend space needs at least 3 samples (got " + std::to_string(n) + ")");
  const std::vector<std::string> names = names_of(samples_);
  for (std::size_t i = 0; i < n; ++i) {
    const BlendPoint2D p = samples_[i].position;
    if (!std::isfinite(p.x) || !std::isfinite(p.y))
      throw Error("", entry_place("sample", i, names), "position is not finite");
    px_.push_back(p.x);
    py_.push_back(p.y);
  }
  std::vector<std::uint32_t> ord(n);
  for (std::size_t i = 0; i < n; ++i) ord[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(ord.begin(), ord.end(), [&](std::uint32_t a, std::uint32_t b) {
    return px_[a] != px_[b] ? px_[a] < px_[b] : py_[a] < py_[b];
  });
  for (std::size_t k = 1; k < n; ++k)
    if (px_[ord[k]] == px_[ord[k - 1]] && py_[ord[k]] == py_[ord[k - 1]])
      throw Error("", entry_place("sample", ord[k], names),
                  "duplicate position (" + num(px_[ord[k]]) + ", " + num(py_[ord[k]]) +
                      ") (same as " + entry_place("sample", ord[k - 1], names) + ")");
  const Points pts{px_, py_};
  Triangulation t = sweep(pts, std::move(ord));
  make_delaunay(pts, t.tris);
  tris_ = std::move(t.tris);
  hull_ = std::move(t.hull);
  for (const auto& tri : tris_) {
    TriangleGeometry g{};
    for (int j = 0; j < 3; ++j) {
      g.x[j] = px_[tri[j]];
      g.y[j] = py_[tri[j]];
    }
    g.inv_area = 1.0 / orient(g.x[0], g.y[0], g.x[1], g.y[1], g.x[2], g.y[2]);
    geometry_.push_back(g);
  }
  const std::vector<ClipCycle> cycles = cycles_of(samples_);
  sync_ = PhaseSync(cycles, names, "sample");
}

void BlendSpace2D::nearest_on_hull(double px, double py, std::size_t& edge,
                                   double& t) const noexcept {
  double best = std::numeric_limits<double>::infinity();
  edge = 0;
  t = 0.0;
  for (std::size_t i = 0; i < hull_.size(); ++i) {
    const std::uint32_t a = hull_[i], b = hull_[(i + 1) % hull_.size()];
    const double ex = px_[b] - px_[a], ey = py_[b] - py_[a];
    const double len2 = ex * ex + ey * ey;
    const double u = std::clamp(((px - px_[a]) * ex + (py - py_[a]) * ey) / len2, 0.0, 1.0);
    const double dx = px_[a] + u * ex - px, dy = py_[a] + u * ey - py;
    const double d2 = dx * dx + dy * dy;
    if (d2 < best) {
      best = d2;
      edge = i;
      t = u;
    }
  }
}

std::size_t BlendSpace2D::compute(double px, double py, std::array<std::uint32_t, 3>& idx,
                                  std::array<double, 3>& w) const noexcept {
  // Linear scan: the first triangle whose barycentrics are all ≥ 0 contains p. Rounding can leave
  // a point on an edge a hair outside both neighbours, so also keep the least-outside triangle.
  constexpr double kInside = -1e-9;  // barycentric slack for "on the boundary"
  double best_min = -std::numeric_limits<double>::infinity();
  std::size_t best = tris_.size();
  std::array<double, 3> best_l{};
  for (std::size_t t = 0; t < tris_.size(); ++t) {
    const TriangleGeometry& g = geometry_[t];
    const double la = orient(px, py, g.x[1], g.y[1], g.x[2], g.y[2]) * g.inv_area;
    const double lb = orient(g.x[0], g.y[0], px, py, g.x[2], g.y[2]) * g.inv_area;
    const double lc = orient(g.x[0], g.y[0], g.x[1], g.y[1], px, py) * g.inv_area;
    const double m = std::min({la, lb, lc});
    if (m > best_min) {
      best_min = m;
      best = t;
      best_l = {la, lb, lc};
      if (m >= 0.0) break;
    }
  }
  if (best < tris_.size() && best_min >= kInside) {
    idx = tris_[best];
    double sum = 0.0;
    for (double& l : best_l) sum += (l = std::max(l, 0.0));
    for (int j = 0; j < 3; ++j) w[j] = best_l[j] / sum;
    return 3;
  }
  // Outside the hull: the weights of the nearest hull point, on one hull edge.
  std::size_t e = 0;
  double t = 0.0;
  nearest_on_hull(px, py, e, t);
  idx = {hull_[e], hull_[(e + 1) % hull_.size()], hull_[e]};
  w = {1.0 - t, t, 0.0};
  return 2;
}

bool BlendSpace2D::weights(BlendPoint2D p, std::span<float> out) const noexcept {
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || out.size() != samples_.size()) return false;
  std::array<std::uint32_t, 3> idx{};
  std::array<double, 3> w{};
  const std::size_t count = compute(p.x, p.y, idx, w);
  std::fill(out.begin(), out.end(), 0.0f);
  for (std::size_t j = 0; j < count; ++j) out[idx[j]] = static_cast<float>(w[j]);
  return true;
}

std::size_t BlendSpace2D::sparse_weights(BlendPoint2D p,
                                         std::span<BlendWeight> out) const noexcept {
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || out.size() < kMaxActive) return 0;
  std::array<std::uint32_t, 3> idx{};
  std::array<double, 3> w{};
  const std::size_t count = compute(p.x, p.y, idx, w);
  std::size_t written = 0;
  for (std::size_t j = 0; j < count; ++j) {
    const float wf = static_cast<float>(w[j]);
    if (wf > 0.0f) out[written++] = {idx[j], wf};
  }
  std::sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(written),
            [](const BlendWeight& a, const BlendWeight& b) { return a.sample < b.sample; });
  return written;
}

std::optional<BlendPoint2D> BlendSpace2D::project_to_hull(BlendPoint2D p) const noexcept {
  if (!std::isfinite(p.x) || !std::isfinite(p.y)) return std::nullopt;
  std::array<std::uint32_t, 3> idx{};
  std::array<double, 3> w{};
  if (compute(p.x, p.y, idx, w) == 3) return p;
  std::size_t e = 0;
  double t = 0.0;
  nearest_on_hull(p.x, p.y, e, t);
  const std::uint32_t a = hull_[e], b = hull_[(e + 1) % hull_.size()];
  return BlendPoint2D{static_cast<float>(px_[a] + t * (px_[b] - px_[a])),
                      static_cast<float>(py_[a] + t * (py_[b] - py_[a]))};
}

}  // namespace kinema
