#include "kinema/ik/ccd.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace kinema {

IkResult ccd_solve(const IkChain& chain, std::span<Quat> local, const Vec3& target,
                   const CcdSettings& cs, IkLimitHook limits) {
  IkResult result;
  result.error = std::nan("");
  const std::size_t n = chain.offsets.size();
  if (!ik_chain_valid(chain, local) || !is_finite(target)) return result;
  if (!cs.max_step.empty() && cs.max_step.size() != n) return result;
  for (double m : cs.max_step)
    if (!(m > 0)) return result;
  if (!(cs.settings.tolerance >= 0) || cs.settings.max_iterations < 0) return result;

  std::array<Quat, kMaxIkChainJoints> model;
  std::array<Vec3, kMaxIkChainJoints + 1> points;
  const std::span<Quat> m(model.data(), n);
  const std::span<Vec3> p(points.data(), n + 1);
  for (std::size_t i = 0; i < n; ++i) local[i] = limits(i, normalize(local[i]));
  ik_chain_fk(chain, local, m, p);
  double err = distance(p[n], target);
  // A sweep that gains less than `stall` makes no real progress: on an unreachable target, or
  // against a limit. After kPatience such sweeps in a row the solve stops with the best pose
  // seen (a limited sweep can also lose ground).
  const double stall = 1e-12 * std::max(1.0, ik_chain_reach(chain));
  constexpr int kPatience = 4;
  std::array<Quat, kMaxIkChainJoints> best;
  std::copy(local.begin(), local.end(), best.begin());
  double best_err = err;
  int without_progress = 0;
  int it = 0;
  while (err > cs.settings.tolerance && it < cs.settings.max_iterations) {
    ++it;
    for (std::size_t k = n; k-- > 0;) {
      const Vec3 to_end = p[n] - p[k], to_target = target - p[k];
      // A point at the joint itself gives no direction: nothing this joint can do.
      if (length_squared(to_end) < 1e-24 || length_squared(to_target) < 1e-24) continue;
      Quat q = from_to(to_end, to_target);
      if (!cs.max_step.empty()) {
        Vec3 axis;
        double angle;
        to_axis_angle(q, axis, angle);
        if (angle > cs.max_step[k]) q = Quat::from_axis_angle(axis, cs.max_step[k]);
      }
      // Turn the joint in model space, then express it back in its parent's frame.
      const Quat parent = k == 0 ? normalize(chain.base_rotation) : m[k - 1];
      const Quat turned = normalize(q * m[k]);
      local[k] = limits(k, normalize(conjugate(parent) * turned));
      // Only joint k and what hangs below it moved: redo FK from k on.
      Quat r = parent;
      for (std::size_t i = k; i < n; ++i) {
        r = normalize(r * local[i]);
        m[i] = r;
        p[i + 1] = p[i] + rotate(r, chain.offsets[i]);
      }
    }
    err = distance(p[n], target);
    if (err < best_err - stall) {
      best_err = err;
      std::copy(local.begin(), local.end(), best.begin());
      without_progress = 0;
    } else if (++without_progress >= kPatience) {
      break;
    }
  }
  if (best_err < err) {
    std::copy_n(best.begin(), n, local.begin());
    err = best_err;
  }
  result.iterations = it;
  result.error = err;
  result.status = ik_chain_status(chain, target, err, cs.settings.tolerance);
  return result;
}

}  // namespace kinema
