// Displacing a trajectory within per-frame acceleration bounds
// (kinema/retarget/acceleration_limit.h).
#include "kinema/retarget/acceleration_limit.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "acceleration limit";

/// |d_{t−1} − 2 d_t + d_{t+1}| pieces: the second difference of a track at t.
Vec3 second_difference(std::span<const Vec3> v, size_t t) {
  return v[t - 1] - v[t] * 2.0 + v[t + 1];
}

/// A symmetric positive definite pentadiagonal matrix, factored once (Cholesky, band 2) and
/// solved for many right-hand sides.
class PentadiagonalCholesky {
 public:
  /// diag[i] = A(i,i), off1[i] = A(i,i+1), off2[i] = A(i,i+2).
  PentadiagonalCholesky(const std::vector<double>& diag, const std::vector<double>& off1,
                        const std::vector<double>& off2)
      : l0_(diag.size()), l1_(diag.size()), l2_(diag.size()) {
    const size_t n = diag.size();
    for (size_t i = 0; i < n; ++i) {
      // Row i of L: l2_[i] = L(i,i−2), l1_[i] = L(i,i−1), l0_[i] = L(i,i).
      l2_[i] = i >= 2 ? off2[i - 2] / l0_[i - 2] : 0;
      l1_[i] = i >= 1 ? (off1[i - 1] - (i >= 2 ? l2_[i] * l1_[i - 1] : 0)) / l0_[i - 1] : 0;
      l0_[i] = std::sqrt(diag[i] - l1_[i] * l1_[i] - l2_[i] * l2_[i]);
    }
  }

  /// Solves A x = b in place.
  void solve(std::vector<Vec3>& b) const {
    const size_t n = b.size();
    for (size_t i = 0; i < n; ++i) {
      Vec3 s = b[i];
      if (i >= 1) s = s - b[i - 1] * l1_[i];
      if (i >= 2) s = s - b[i - 2] * l2_[i];
      b[i] = s / l0_[i];
    }
    for (size_t k = n; k-- > 0;) {
      Vec3 s = b[k];
      if (k + 1 < n) s = s - b[k + 1] * l1_[k + 1];
      if (k + 2 < n) s = s - b[k + 2] * l2_[k + 2];
      b[k] = s / l0_[k];
    }
  }

 private:
  std::vector<double> l0_, l1_, l2_;
};

/// v moved to the nearest point of the ball of `radius` around `centre`.
Vec3 into_ball(const Vec3& v, const Vec3& centre, double radius) {
  const Vec3 r = v - centre;
  const double len = length(r);
  return len <= radius ? v : centre + r * (radius / len);
}

/// One stretch [s, e] of frames (inclusive), solved in place on `d`. Frames flagged `fixed` keep
/// their value; the bounds solved are those at t ∈ [s+1, e−1]. accel[t] = Δ²base_t.
/// Returns the largest violation left among them.
double solve_stretch(std::vector<Vec3>& d, std::span<const Vec3> target,
                     std::span<const Vec3> accel, std::span<const double> bound,
                     const std::vector<char>& fixed, size_t s, size_t e,
                     const AccelerationLimitOptions& o) {
  const size_t m = e - s + 1;  // frames in the stretch
  if (m < 3) return 0;
  const size_t rows = m - 2;  // bounds: t = s+1 … e−1, row r ↔ t = s+1+r
  // ADMM on  ½ Σ w_i |d_i − target_i|² + Σ_r indicator(|z_r + accel_t| ≤ bound_t),  z = D d.
  // Fixed frames get a weight large enough to pin them; the final projection pins them exactly.
  constexpr double kPinned = 1e8;
  const double rho = o.admm_rho;
  std::vector<double> diag(m), off1(m, 0.0), off2(m, 0.0);
  for (size_t i = 0; i < m; ++i) diag[i] = fixed[s + i] ? kPinned : 1.0;
  const double coef[3] = {1, -2, 1};
  for (size_t r = 0; r < rows; ++r)
    for (int a = 0; a < 3; ++a) {
      diag[r + size_t(a)] += rho * coef[a] * coef[a];
      if (a < 2) off1[r + size_t(a)] += rho * coef[a] * coef[a + 1];
      if (a < 1) off2[r] += rho * coef[0] * coef[2];
    }
  const PentadiagonalCholesky system(diag, off1, off2);

  std::vector<Vec3> weighted_target(m), z(rows), u(rows, Vec3{0, 0, 0}), rhs(m);
  for (size_t i = 0; i < m; ++i)
    weighted_target[i] = target[s + i] * (fixed[s + i] ? kPinned : 1.0);
  auto dd = [&](size_t r) { return d[s + r] - d[s + r + 1] * 2.0 + d[s + r + 2]; };
  for (size_t r = 0; r < rows; ++r) {
    const size_t t = s + 1 + r;
    z[r] = into_ball(dd(r), accel[t] * -1.0, bound[t]);
  }
  for (int it = 0; it < o.admm_iterations; ++it) {
    // d-step: (W + ρ DᵀD) d = W target + ρ Dᵀ (z − u).
    rhs = weighted_target;
    for (size_t r = 0; r < rows; ++r) {
      const Vec3 v = (z[r] - u[r]) * rho;
      rhs[r] = rhs[r] + v;
      rhs[r + 1] = rhs[r + 1] - v * 2.0;
      rhs[r + 2] = rhs[r + 2] + v;
    }
    system.solve(rhs);
    for (size_t i = 0; i < m; ++i) d[s + i] = rhs[i];
    // z-step (projection onto each bound's ball) and the dual update.
    double primal = 0;
    for (size_t r = 0; r < rows; ++r) {
      const size_t t = s + 1 + r;
      const Vec3 dr = dd(r);
      z[r] = into_ball(dr + u[r], accel[t] * -1.0, bound[t]);
      const Vec3 gap = dr - z[r];
      u[r] = u[r] + gap;
      primal = std::max(primal, length(gap));
    }
    if (primal <= o.tolerance) break;
  }

  // Finish: project each violated bound in turn, moving its free frames the least (ADMM's z is
  // feasible, its d only nearly so).
  for (size_t i = s; i <= e; ++i)
    if (fixed[i]) d[i] = target[i];
  auto excess_at = [&](size_t t) {
    return length(accel[t] + d[t - 1] - d[t] * 2.0 + d[t + 1]) - bound[t];
  };
  for (int sweep = 0; sweep < o.projection_sweeps; ++sweep) {
    bool any = false;
    for (size_t t = s + 1; t + 1 <= e; ++t) {
      const Vec3 g = accel[t] + d[t - 1] - d[t] * 2.0 + d[t + 1];
      const double len = length(g);
      const double over = len - bound[t];
      if (over <= 0) continue;
      any = any || over > o.tolerance;
      const double mass = (fixed[t - 1] ? 0 : 1) + (fixed[t] ? 0 : 4) + (fixed[t + 1] ? 0 : 1);
      if (mass == 0) continue;
      const Vec3 excess = g * (over / len) / mass;
      if (!fixed[t - 1]) d[t - 1] = d[t - 1] - excess;
      if (!fixed[t]) d[t] = d[t] + excess * 2.0;
      if (!fixed[t + 1]) d[t + 1] = d[t + 1] - excess;
    }
    if (!any) break;
  }
  double worst = 0;
  for (size_t t = s + 1; t + 1 <= e; ++t) worst = std::max(worst, excess_at(t));
  return worst;
}

}  // namespace

std::vector<double> second_difference_norms(std::span<const Vec3> track) {
  std::vector<double> out(track.size(), 0.0);
  for (size_t t = 1; t + 1 < track.size(); ++t) out[t] = length(second_difference(track, t));
  return out;
}

AccelerationLimitResult limit_acceleration(std::span<const Vec3> base, std::span<const Vec3> target,
                                           std::span<const double> bound,
                                           const AccelerationLimitOptions& o) {
  const size_t n = base.size();
  if (target.size() != n || bound.size() != n)
    throw Error({}, kPlace,
                "base, target and bound must have one entry per frame (" + std::to_string(n) +
                    ", " + std::to_string(target.size()) + ", " + std::to_string(bound.size()) +
                    ")");
  for (size_t i = 0; i < n; ++i)
    if (!(bound[i] >= 0) || !std::isfinite(bound[i]))
      throw Error({}, kPlace, "bound at frame " + std::to_string(i) + " is negative or not finite");
  AccelerationLimitResult result;
  result.offsets.assign(target.begin(), target.end());
  if (n < 3) return result;

  std::vector<Vec3> accel(n, Vec3{0, 0, 0});
  for (size_t t = 1; t + 1 < n; ++t) accel[t] = second_difference(base, t);
  std::vector<char> violated(n, 0);
  bool any = false;
  for (size_t t = 1; t + 1 < n; ++t) {
    const double g = length(accel[t] + second_difference(target, t));
    violated[t] = g - bound[t] > o.tolerance;
    any = any || violated[t];
  }
  if (!any) return result;

  // Stretches: violated frames dilated by pad_frames, merged; two pinned frames at inner ends.
  const long pad = std::max(2, o.pad_frames);
  std::vector<char> fixed(n, 0);
  std::vector<Vec3>& d = result.offsets;
  size_t t = 1;
  while (t + 1 < n) {
    if (!violated[t]) {
      ++t;
      continue;
    }
    // The last violated frame of this stretch: violated frames closer than 2·pad + 6 merge, so
    // stretches never overlap and the bounds between them see only target frames.
    size_t last = t;
    for (size_t k = t; k + 1 < n && k <= last + size_t(2 * pad + 6); ++k)
      if (violated[k]) last = k;
    const size_t s = size_t(std::max(0L, long(t) - pad - 2));
    const size_t e = std::min(n - 1, last + size_t(pad) + 2);
    if (s > 0) fixed[s] = fixed[s + 1] = 1;
    if (e < n - 1) fixed[e] = fixed[e - 1] = 1;
    result.max_violation =
        std::max(result.max_violation, solve_stretch(d, target, accel, bound, fixed, s, e, o));
    ++result.stretches;
    t = e + 1;
  }
  for (size_t i = 0; i < n; ++i) result.frames_changed += length(d[i] - target[i]) > 1e-9;
  return result;
}

}  // namespace kinema
