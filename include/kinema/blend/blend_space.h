// kinema/blend/blend_space.h — 1D and 2D blend spaces with phase synchronization.
//
// A blend space places clips ("samples") at points of a parameter space (speed in m/s for a 1D
// locomotion space; sideways/forward velocity in the character's frame for a 2D one) and turns
// the current parameter into one weight per sample. The weights then drive a pose blend; the
// clips are kept in step by a shared normalized phase (`PhaseSync`).
//
// Build vs. query. Constructors validate their input and throw kinema::Error (with the sample's
// index and name as the place) on bad data; they are the only functions that allocate. Query
// functions (weights, phase advance, local times, speed correction) are noexcept, never allocate,
// are safe to call from many threads on one shared object, and report bad runtime input
// (NaN/Inf parameters, wrongly sized spans, invalid weights) by returning false / 0 / nullopt
// while leaving their outputs untouched, so a caller may keep last frame's values.
//
// Units: positions are whatever the parameter axis measures (m/s for locomotion spaces), cycle
// durations are seconds, root speeds are metres per second, phases and marker times are
// normalized cycle fractions in [0, 1). Runtime values are float; arithmetic is double inside.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kinema {

/// A named event at a normalized time of a clip's cycle, e.g. a foot-down ("L", "R").
struct SyncMarker {
  std::string id;  ///< Matches markers across clips; need not be unique within a clip.
  float time = 0;  ///< Normalized cycle time in [0, 1).
};

/// Cycle information of one looping clip, the input of phase synchronization.
struct ClipCycle {
  float duration = 1.0f;            ///< Cycle length in seconds, finite and > 0.
  std::vector<SyncMarker> markers;  ///< Any order; empty = synchronized by normalized time only.
};

/// One non-zero blend weight, for callers that blend only the active samples.
struct BlendWeight {
  std::uint32_t sample = 0;  ///< Index into the blend space's samples, in construction order.
  float weight = 0;          ///< In (0, 1]; the weights of one query sum to 1.
};

/// Keeps a set of looping clips in step through one shared phase (normalized time).
///
/// Without sync markers the shared phase is the normalized time of every clip: the blended cycle
/// lasts T = Σ wᵢTᵢ (weights normalized to sum 1), clip i plays at rate Tᵢ/T and the phase
/// advances by dt/T per frame, wrapping to [0, 1).
///
/// With sync markers (e.g. foot-downs "L", "R") the M markers cut every cycle into M segments and
/// the phase encodes "segment k plus fraction f" as (k + f)/M, with canonical marker k at phase
/// k/M. Each clip's local time is found in its own segment k (piecewise-linear warp), so when the
/// phase passes a marker, every clip is at its marker with the same id even if the clips start on
/// different feet. Segment k lasts Dₖ = Σ wᵢTᵢ·lenᵢₖ for the blend; the whole cycle still lasts
/// Σₖ Dₖ = T, so the mean rate of clip i is Tᵢ/T as without markers. Because the phase is stored
/// as (segment, fraction), changing the weights never makes the clips' local times jump.
///
/// Marker rules (checked at construction): every clip with markers has the same number M of
/// them, and the same id sequence in cyclic time order up to a rotation (walk L,R with run R,L is
/// fine: clips are aligned by id). The canonical order is that of the first clip with markers,
/// starting at its earliest marker. Marker times are in [0, 1) and distinct within a clip. Clips
/// without markers (an idle) are warped uniformly: their local time equals the phase.
class PhaseSync {
 public:
  /// An empty group (no clips); every query fails.
  PhaseSync() = default;

  /// Validates and precomputes the segments. `names` (optional, one per clip) only label errors,
  /// whose place is "clip i (\"name\")". Throws kinema::Error for: no clips, a non-finite or
  /// non-positive duration, a marker time outside [0, 1) or non-finite, two markers of one clip
  /// at the same time, a marker with an empty id, or marker sequences that do not match
  /// ("sync markers do not match").
  explicit PhaseSync(std::span<const ClipCycle> clips, std::span<const std::string> names = {})
      : PhaseSync(clips, names, "clip") {}

  /// Number of clips.
  std::size_t clip_count() const noexcept { return duration_.size(); }
  /// Number M of marker segments per cycle; 1 when no clip has markers.
  std::size_t segment_count() const noexcept { return segments_; }
  /// Marker ids in canonical order (canonical marker k sits at phase k/M); empty without markers.
  std::span<const std::string> marker_ids() const noexcept { return marker_ids_; }
  /// The phase of canonical marker k, k/M (0 for k ≥ M).
  float marker_phase(std::size_t k) const noexcept;

  /// Blended cycle length T = Σ wᵢTᵢ / Σ wᵢ in seconds. `weights` has one entry per clip, each
  /// finite and ≥ 0, with a positive sum (they need not sum to 1); otherwise nullopt.
  std::optional<float> cycle_duration(std::span<const float> weights) const noexcept;

  /// Mean playback rate of each clip, Tᵢ/T (1.059 for the worked walk, 0.706 for its run), into
  /// `rates` (one per clip). False (rates untouched) for invalid weights or a wrong span size.
  bool playback_rates(std::span<const float> weights, std::span<float> rates) const noexcept;

  /// Advances `phase` (in/out, in [0, 1)) by `dt` seconds of the blend given by `weights`.
  /// Segment by segment, so a large dt crosses markers correctly; dt < 0 plays backwards; a
  /// finite phase outside [0, 1) is wrapped first. False (phase untouched) for invalid weights,
  /// a non-finite dt or a non-finite phase.
  bool advance(std::span<const float> weights, float dt, float& phase) const noexcept;

  /// Each clip's local normalized time in [0, 1) at the shared `phase` (wrapped to [0, 1) first),
  /// into `out` (one per clip). Multiply by the clip's duration for seconds. False (out untouched)
  /// for a non-finite phase or a wrong span size.
  bool local_times(float phase, std::span<float> out) const noexcept;

  /// Local normalized time in [0, 1) of one clip at `phase`; nullopt for a bad clip index or a
  /// non-finite phase.
  std::optional<float> local_time(std::size_t clip, float phase) const noexcept;

 private:
  friend class BlendSpace1D;
  friend class BlendSpace2D;
  // `label` names an entry in error places ("clip", or "sample" for the blend spaces).
  PhaseSync(std::span<const ClipCycle> clips, std::span<const std::string> names,
            const char* label);
  // Sum of the weights, or a negative value when they are unusable.
  double weight_sum(std::span<const float> weights) const noexcept;
  double segment_duration(std::size_t k, std::span<const float> weights,
                          double inv_sum) const noexcept;
  double local_time_unchecked(std::size_t clip, double phase01) const noexcept;

  std::vector<double> duration_;         // Tᵢ, seconds
  std::size_t segments_ = 1;             // M
  std::vector<double> seg_start_;        // [clip * M + k], normalized start of segment k
  std::vector<double> seg_len_;          // [clip * M + k], normalized length (sums to 1 per clip)
  std::vector<std::string> marker_ids_;  // canonical order
};

/// One clip of a 1D blend space.
struct BlendSample1D {
  std::string name;                 ///< For tools and error messages; may be empty.
  float position = 0;               ///< Where the clip sits on the axis (e.g. speed in m/s).
  ClipCycle cycle;                  ///< Duration (s) and sync markers of the clip's loop.
  std::optional<float> root_speed;  ///< Root speed of the clip in m/s, for speed correction.
};

/// A 1D blend space: samples on one axis, e.g. idle 0, walk 1.5, run 4.5 m/s (the walk/run numbers
/// used in these comments are worked in docs/worked_examples.md, "Blend spaces").
///
/// Weights: between two neighbouring samples a < x < b the weights are linear,
/// w_b = (x − a)/(b − a), w_a = 1 − w_b; outside [first, last] the end sample gets weight 1.
/// At most 2 weights are non-zero. Queries are O(log n) (binary search over sorted positions).
class BlendSpace1D {
 public:
  /// At most this many weights of one query are non-zero.
  static constexpr std::size_t kMaxActive = 2;

  /// Validates and sorts the samples (their order in `samples()` and in the weight outputs stays
  /// the construction order). Throws kinema::Error for: fewer than 2 samples, a non-finite
  /// position, two samples at one position ("duplicate position"), a non-finite root speed, and
  /// every PhaseSync error (bad duration, bad or mismatched markers).
  explicit BlendSpace1D(std::vector<BlendSample1D> samples);

  /// The samples, in construction order.
  std::span<const BlendSample1D> samples() const noexcept { return samples_; }
  /// Number of samples.
  std::size_t sample_count() const noexcept { return samples_.size(); }
  /// Phase synchronization of the samples' clips (clip i = sample i).
  const PhaseSync& sync() const noexcept { return sync_; }

  /// One weight per sample for parameter `x` into `out` (size sample_count()): at most two are
  /// non-zero and they sum to 1. False (out untouched) for a non-finite x or a wrong span size.
  bool weights(float x, std::span<float> out) const noexcept;

  /// The non-zero weights for `x` into `out` (needs kMaxActive entries), in increasing position
  /// order; returns how many were written (1 or 2), 0 for a non-finite x or a short span.
  std::size_t sparse_weights(float x, std::span<BlendWeight> out) const noexcept;

  /// Blended root speed (m/s) of a blend, Σ wᵢ·strideᵢ / Σ wᵢTᵢ with strideᵢ = speedᵢ·Tᵢ (the
  /// distance covered in one synchronized cycle over its length; worked: 1.853 m/s at 2.0).
  /// nullopt for invalid weights or when a sample with a non-zero weight has no root speed.
  std::optional<float> root_speed(std::span<const float> weights) const noexcept;

  /// Blended stride (m per synchronized cycle), Σ wᵢ·speedᵢ·Tᵢ / Σ wᵢ (worked: 2.1 m at 2.0).
  /// nullopt as for root_speed().
  std::optional<float> stride(std::span<const float> weights) const noexcept;

  /// Speed correction (b): the playback scale target_speed / root_speed(weights) that makes the
  /// blend cover the ground at `target_speed` (worked: 2.0/1.853 = 1.079). nullopt when
  /// root_speed() is, for a non-finite target, or when the blended speed is zero.
  std::optional<float> playback_scale(std::span<const float> weights,
                                      float target_speed) const noexcept;

  /// Speed correction (a): weights whose blended root speed is exactly `target_speed` (m/s). The
  /// pair of position-neighbouring samples (both with root speeds) whose speeds bracket the
  /// target is blended with w_b = T_a(v − s_a) / (T_a(v − s_a) + T_b(s_b − v)), the closed-form
  /// solution of (w_a·s_a·T_a + w_b·s_b·T_b)/(w_a·T_a + w_b·T_b) = v (worked: w_run = 0.2308 at
  /// 2.0). A target beyond every pair gives weight 1 to the sample whose speed is nearest. False
  /// (out untouched) for a non-finite target, a wrong span size, or no sample with a root speed.
  bool speed_matched_weights(float target_speed, std::span<float> out) const noexcept;

 private:
  // Sorted index range and the weight of the upper one: x sits at lerp(pos[lo], pos[hi], t).
  void locate(double x, std::size_t& lo, std::size_t& hi, double& t) const noexcept;

  std::vector<BlendSample1D> samples_;
  std::vector<std::uint32_t> order_;  // sample indices sorted by position
  std::vector<double> sorted_pos_;    // positions in that order
  PhaseSync sync_;
};

/// A point of a 2D blend space's parameter plane (e.g. x = sideways, y = forward velocity, m/s).
struct BlendPoint2D {
  float x = 0;  ///< First axis (e.g. sideways velocity, + = right).
  float y = 0;  ///< Second axis (e.g. forward velocity).
  bool operator==(const BlendPoint2D&) const = default;
};

/// One clip of a 2D blend space.
struct BlendSample2D {
  std::string name;       ///< For tools and error messages; may be empty.
  BlendPoint2D position;  ///< Where the clip sits in the parameter plane.
  ClipCycle cycle;        ///< Duration (s) and sync markers, for sync(); defaults to 1 s, none.
};

/// A 2D blend space: samples scattered in a plane, Delaunay-triangulated;
/// the weights of a point are its barycentric coordinates in the triangle containing it (at most
/// 3 non-zero, continuous from triangle to triangle, exactly 1 at a sample).
///
/// Triangulation: a sweep triangulation made Delaunay by Lawson edge flips. Cocircular ties (the
/// nine-sample layout: idle at the centre, walks at 1.5 and runs at 4.5 m/s in four directions,
/// whose walk/run quadrilaterals are cyclic) are broken as if the second axis were infinitesimally
/// stretched, then as if sheared, then by sample index. So symmetric layouts triangulate
/// mirror-symmetrically and that layout's quadrant is cut along forward walk – right run, giving
/// the worked triangle (forward run, forward walk, right run) for p = (1.0, 2.5).
///
/// Points outside the convex hull are projected onto the nearest hull point first, so their
/// weights lie on one hull edge (at most 2 non-zero). Point location is a linear scan over the
/// triangles (≤ 2n − 5 of them), meant for the few dozen samples a blend space has (up to ~64);
/// construction is O(n²)–O(n³) for the flips.
class BlendSpace2D {
 public:
  /// At most this many weights of one query are non-zero.
  static constexpr std::size_t kMaxActive = 3;

  /// Validates and triangulates. Throws kinema::Error for: fewer than 3 samples, a non-finite
  /// coordinate, two samples at one point ("duplicate position"), all samples on one line
  /// ("samples are collinear"), and every PhaseSync error.
  explicit BlendSpace2D(std::vector<BlendSample2D> samples);

  /// The samples, in construction order.
  std::span<const BlendSample2D> samples() const noexcept { return samples_; }
  /// Number of samples.
  std::size_t sample_count() const noexcept { return samples_.size(); }
  /// Phase synchronization of the samples' clips (clip i = sample i).
  const PhaseSync& sync() const noexcept { return sync_; }

  /// The Delaunay triangles as sample indices, counter-clockwise (for tools and plots).
  std::span<const std::array<std::uint32_t, 3>> triangles() const noexcept { return tris_; }
  /// The convex hull as a counter-clockwise loop of sample indices (collinear ones included).
  std::span<const std::uint32_t> hull() const noexcept { return hull_; }

  /// One weight per sample for point `p` into `out` (size sample_count()): at most three are
  /// non-zero, they are ≥ 0, sum to 1 and Σ wᵢpᵢ = p inside the hull (= the projection of p
  /// outside). False (out untouched) for a non-finite p or a wrong span size.
  bool weights(BlendPoint2D p, std::span<float> out) const noexcept;

  /// The non-zero weights for `p` into `out` (needs kMaxActive entries), in increasing sample
  /// index; returns how many were written (1 to 3), 0 for a non-finite p or a short span.
  std::size_t sparse_weights(BlendPoint2D p, std::span<BlendWeight> out) const noexcept;

  /// `p` itself when it is inside the hull (or on it), else the nearest point of the hull
  /// boundary; nullopt for a non-finite p.
  std::optional<BlendPoint2D> project_to_hull(BlendPoint2D p) const noexcept;

 private:
  // Up to 3 (sample, weight) pairs for p; returns the count (0 if p is not finite).
  std::size_t compute(double px, double py, std::array<std::uint32_t, 3>& idx,
                      std::array<double, 3>& w) const noexcept;
  // Nearest hull point: the hull edge (index into hull_) and the parameter t along it.
  void nearest_on_hull(double px, double py, std::size_t& edge, double& t) const noexcept;

  std::vector<BlendSample2D> samples_;
  std::vector<double> px_, py_;                     // positions in double
  std::vector<std::array<std::uint32_t, 3>> tris_;  // CCW
  // Per triangle, its corners and 1/(2·area) packed together for the point-location scan.
  struct TriangleGeometry {
    double x[3], y[3], inv_area;
  };
  std::vector<TriangleGeometry> geometry_;
  std::vector<std::uint32_t> hull_;  // CCW loop
  PhaseSync sync_;
};

}  // namespace kinema
