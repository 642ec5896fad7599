// PhaseSync: one shared phase for a set of looping clips, warped segment by segment between
// their sync markers. See kinema/blend/blend_space.h.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "blend_space_internal.h"
#include "kinema/blend/blend_space.h"
#include "kinema/core/error.h"

namespace kinema {
namespace {

using blend_detail::entry_place;
using blend_detail::num;

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

}  // namespace kinema
