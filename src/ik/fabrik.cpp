#include "kinema/ik/fabrik.h"

#include "kinema/ik/joint_limits.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace kinema {
namespace {

constexpr std::size_t kMax = kMaxFabrikJoints;

struct Scratch {
  std::array<double, kMax> length;  // bone length from the parent
  std::array<bool, kMax> active;    // on a path from a root to an effector
  std::array<Vec3, kMax> start;     // positions at the start of the iteration
  std::array<Vec3, kMax> sum;       // backward-pass proposals, summed
  std::array<int, kMax> count;
};

bool is_ancestor(std::span<const int> parents, std::size_t a, std::size_t j) {
  for (int k = parents[j]; k >= 0; k = parents[static_cast<std::size_t>(k)])
    if (static_cast<std::size_t>(k) == a) return true;
  return false;
}

bool valid(std::span<const Vec3> pos, std::span<const int> parents,
           std::span<const FabrikEffector> effectors, const FabrikSettings& s) {
  const std::size_t n = pos.size();
  if (n == 0 || n > kMax || parents.size() != n || effectors.empty()) return false;
  for (std::size_t j = 0; j < n; ++j) {
    if (!is_finite(pos[j])) return false;
    if (parents[j] < -1 || parents[j] >= static_cast<int>(j)) return false;
  }
  for (const FabrikEffector& e : effectors)
    if (e.joint >= n || !is_finite(e.target)) return false;
  if (!s.constraints.empty()) {
    if (s.constraints.size() != n) return false;
    for (const FabrikConstraint& c : s.constraints) {
      if (c.kind == FabrikConstraint::Kind::kNone) continue;
      if (!is_finite(c.axis) || !(length(c.axis) > 0)) return false;
      if (c.kind == FabrikConstraint::Kind::kCone && !(c.max_angle >= 0 && c.max_angle <= kPi))
        return false;
      if (c.kind == FabrikConstraint::Kind::kHinge &&
          !(c.hinge_min >= -kPi && c.hinge_min <= c.hinge_max && c.hinge_max <= kPi))
        return false;
    }
  }
  for (const FabrikPole& p : s.poles) {
    if (p.root >= n || p.mid >= n || p.end >= n || !is_finite(p.pole)) return false;
    if (!is_ancestor(parents, p.root, p.mid) || !is_ancestor(parents, p.mid, p.end)) return false;
  }
  return s.settings.tolerance >= 0 && s.settings.max_iterations >= 0;
}

// Any unit vector perpendicular to n (unit).
Vec3 perpendicular(const Vec3& n) {
  const Vec3 a = std::abs(n.x) < 0.9 ? Vec3::unit_x() : Vec3::unit_y();
  return normalize(cross(n, a));
}

// Direction `d` (unit) pushed into the plane with unit normal `n`; `fallback` when d ∥ n.
Vec3 onto_plane(const Vec3& d, const Vec3& n, const Vec3& fallback) {
  const Vec3 p = d - n * dot(d, n);
  if (length_squared(p) > 1e-20) return normalize(p);
  const Vec3 f = fallback - n * dot(fallback, n);
  return length_squared(f) > 1e-20 ? normalize(f) : perpendicular(n);
}

// Direction `d` (unit) turned towards `axis` (unit) until it is within `max_angle` of it.
Vec3 into_cone(const Vec3& d, const Vec3& axis, double max_angle) {
  const double angle = std::atan2(length(cross(axis, d)), dot(axis, d));
  if (angle <= max_angle) return d;
  Vec3 side = d - axis * dot(d, axis);
  side = length_squared(side) > 1e-20 ? normalize(side) : perpendicular(axis);
  return normalize(axis * std::cos(max_angle) + side * std::sin(max_angle));
}

// Unit direction from `from` to `to`, or `fallback` when they coincide.
Vec3 direction(const Vec3& from, const Vec3& to, const Vec3& fallback) {
  const Vec3 d = to - from;
  const double len = length(d);
  return len > 1e-12 ? d / len : fallback;
}

void backward(std::span<Vec3> pos, std::span<const int> parents,
              std::span<const FabrikEffector> effectors, const FabrikSettings& s, Scratch& w) {
  const std::size_t n = pos.size();
  std::fill_n(w.sum.begin(), n, Vec3{});
  std::fill_n(w.count.begin(), n, 0);
  for (const FabrikEffector& e : effectors) {
    w.sum[e.joint] += e.target;
    ++w.count[e.joint];
  }
  for (std::size_t j = n; j-- > 0;) {
    if (!w.active[j] || parents[j] < 0) continue;
    // Every child (larger index) has proposed by now: this joint takes their average.
    if (w.count[j] > 0) pos[j] = w.sum[j] / static_cast<double>(w.count[j]);
    const std::size_t p = static_cast<std::size_t>(parents[j]);
    Vec3 d = direction(pos[j], pos[p], -direction(w.start[p], w.start[j], Vec3::unit_x()));
    if (!s.constraints.empty() && s.constraints[p].kind == FabrikConstraint::Kind::kHinge)
      d = onto_plane(d, normalize(s.constraints[p].axis), d);
    w.sum[p] += pos[j] + d * w.length[j];
    ++w.count[p];
  }
}

void forward(std::span<Vec3> pos, std::span<const int> parents, const FabrikSettings& s,
             Scratch& w) {
  const std::size_t n = pos.size();
  for (std::size_t j = 0; j < n; ++j) {
    if (parents[j] < 0) {
      pos[j] = w.start[j];  // roots stay put
      continue;
    }
    const std::size_t p = static_cast<std::size_t>(parents[j]);
    if (!w.active[j]) {
      pos[j] = pos[p] + (w.start[j] - w.start[p]);  // rigidly with the parent
      continue;
    }
    const Vec3 old_dir = direction(w.start[p], w.start[j], Vec3::unit_x());
    Vec3 d = direction(pos[p], pos[j], old_dir);
    if (!s.constraints.empty()) {
      const FabrikConstraint& c = s.constraints[p];
      if (c.kind == FabrikConstraint::Kind::kHinge) {
        const Vec3 n_axis = normalize(c.axis);
        d = onto_plane(d, n_axis, old_dir);
        if (parents[p] >= 0 && (c.hinge_min > -kPi || c.hinge_max < kPi)) {
          // The bend is measured in the plane from the incoming bone's direction.
          const Vec3 in = direction(pos[static_cast<std::size_t>(parents[p])], pos[p], d);
          const Vec3 ref = in - n_axis * dot(in, n_axis);
          if (length_squared(ref) > 1e-20) {
            const Vec3 r = normalize(ref);
            const double angle = std::atan2(dot(cross(r, d), n_axis), dot(r, d));
            const double clamped = clamp_angle(angle, c.hinge_min, c.hinge_max);
            if (clamped != angle) d = rotate(Quat::from_axis_angle(n_axis, clamped), r);
          }
        }
      } else if (c.kind == FabrikConstraint::Kind::kCone) {
        const Vec3 axis = parents[p] < 0 ? normalize(c.axis)
                                         : direction(pos[static_cast<std::size_t>(parents[p])],
                                                     pos[p], normalize(c.axis));
        d = into_cone(d, axis, c.max_angle);
      }
    }
    pos[j] = pos[p] + d * w.length[j];
  }
}

void apply_poles(std::span<Vec3> pos, std::span<const int> parents, const FabrikSettings& s) {
  for (const FabrikPole& pole : s.poles) {
    const Vec3 root = pos[pole.root];
    const Vec3 axis = pos[pole.end] - root;
    if (length_squared(axis) < 1e-20) continue;
    const Vec3 u = normalize(axis);
    auto off_axis = [&](const Vec3& p) {
      const Vec3 d = p - root;
      return d - u * dot(d, u);
    };
    const Vec3 m = off_axis(pos[pole.mid]), q = off_axis(pole.pole);
    Quat turn;
    if (pole.align) {
      // Signed angle about u from the mid joint's half-plane to the pole's.
      if (length_squared(m) < 1e-20 || length_squared(q) < 1e-20) continue;
      turn = Quat::from_axis_angle(u, std::atan2(dot(cross(m, q), u), dot(m, q)));
    } else {
      if (dot(m, q) >= 0) continue;
      // Wrong side: 180° about the root–end line (in a plane, the mirror image across it).
      turn = Quat::from_axis_angle(u, kPi);
    }
    for (int k = parents[pole.end]; k >= 0 && static_cast<std::size_t>(k) != pole.root;
         k = parents[static_cast<std::size_t>(k)])
      pos[static_cast<std::size_t>(k)] =
          root + rotate(turn, pos[static_cast<std::size_t>(k)] - root);
  }
}

double max_error(std::span<const Vec3> pos, std::span<const FabrikEffector> effectors) {
  double e = 0;
  for (const FabrikEffector& f : effectors) e = std::max(e, distance(pos[f.joint], f.target));
  return e;
}

}  // namespace

IkResult fabrik_solve(std::span<Vec3> positions, std::span<const int> parents,
                      std::span<const FabrikEffector> effectors, const FabrikSettings& s) {
  IkResult result;
  result.error = std::nan("");
  if (!valid(positions, parents, effectors, s)) return result;
  const std::size_t n = positions.size();
  Scratch w;
  std::fill_n(w.active.begin(), n, false);
  for (std::size_t j = 0; j < n; ++j) {
    w.start[j] = positions[j];
    w.length[j] = parents[j] < 0
                      ? 0.0
                      : distance(positions[j], positions[static_cast<std::size_t>(parents[j])]);
  }
  bool unreachable = false;
  for (const FabrikEffector& e : effectors) {
    double reach = 0;
    std::size_t root = e.joint;
    for (int k = static_cast<int>(e.joint); k >= 0; k = parents[static_cast<std::size_t>(k)]) {
      w.active[static_cast<std::size_t>(k)] = true;
      reach += w.length[static_cast<std::size_t>(k)];
      root = static_cast<std::size_t>(k);
    }
    if (distance(positions[root], e.target) > reach) unreachable = true;
  }

  if (unreachable && effectors.size() == 1) {
    // Reachability test: stretch the path straight at the target and stop.
    const FabrikEffector& e = effectors[0];
    std::size_t root = e.joint;
    while (parents[root] >= 0) root = static_cast<std::size_t>(parents[root]);
    const Vec3 d = direction(positions[root], e.target, Vec3::unit_x());
    for (std::size_t j = root + 1; j < n; ++j)
      if (w.active[j]) {
        // Along the path, parents come first, so the parent is already placed.
        positions[j] = positions[static_cast<std::size_t>(parents[j])] + d * w.length[j];
      }
    // The forward pass re-applies constraints and moves the other branches along.
    forward(positions, parents, s, w);
    apply_poles(positions, parents, s);
    result.status = IkStatus::kUnreachable;
    result.iterations = 0;
    result.error = max_error(positions, effectors);
    return result;
  }

  double err = max_error(positions, effectors);
  int it = 0;
  while (err > s.settings.tolerance && it < s.settings.max_iterations) {
    for (std::size_t j = 0; j < n; ++j) w.start[j] = positions[j];
    backward(positions, parents, effectors, s, w);
    forward(positions, parents, s, w);
    apply_poles(positions, parents, s);
    ++it;
    err = max_error(positions, effectors);
  }
  result.iterations = it;
  result.error = err;
  result.status = err <= s.settings.tolerance ? IkStatus::kReached
                  : unreachable               ? IkStatus::kUnreachable
                                              : IkStatus::kMaxIterations;
  return result;
}

IkResult fabrik_solve_chain(std::span<Vec3> positions, const Vec3& target,
                            const FabrikSettings& settings) {
  if (positions.empty() || positions.size() > kMax) {
    IkResult bad;
    bad.error = std::nan("");
    return bad;
  }
  std::array<int, kMax> parents;
  for (std::size_t j = 0; j < positions.size(); ++j) parents[j] = static_cast<int>(j) - 1;
  const FabrikEffector effector{positions.size() - 1, target};
  return fabrik_solve(positions, std::span<const int>(parents.data(), positions.size()),
                      std::span<const FabrikEffector>(&effector, 1), settings);
}

IkResult fabrik_solve_chain(const IkChain& chain, std::span<Quat> local, const Vec3& target,
                            const IkSettings& settings, IkLimitHook limits) {
  IkResult result;
  result.error = std::nan("");
  const std::size_t n = chain.offsets.size();
  if (!ik_chain_valid(chain, local) || !is_finite(target)) return result;
  if (!(settings.tolerance >= 0) || settings.max_iterations < 0) return result;

  std::array<Quat, kMaxIkChainJoints> model_storage;
  std::array<Quat, kMaxIkChainJoints> best_storage;
  std::array<Vec3, kMaxIkChainJoints + 1> point_storage, reached_storage;
  const std::span<Quat> model(model_storage.data(), n);
  const std::span<Vec3> points(point_storage.data(), n + 1);
  const std::span<Vec3> reached(reached_storage.data(), n + 1);
  for (std::size_t i = 0; i < n; ++i) local[i] = limits(i, normalize(local[i]));
  ik_chain_fk(chain, local, model, points);
  double error = distance(points[n], target);
  // Limits can make a pass lose ground, so the best pose seen is kept, and the solve stops
  // once several passes in a row have not improved on it by more than `stall`: it has
  // converged to what the limits (or the reach) allow.
  const double stall = 1e-12 * std::max(1.0, ik_chain_reach(chain));
  constexpr int kPatience = 4;
  std::copy(local.begin(), local.end(), best_storage.begin());
  double best_error = error;
  int without_progress = 0;
  int iteration = 0;
  while (error > settings.tolerance && iteration < settings.max_iterations) {
    ++iteration;
    // Backward pass: the effector on the target, each joint at bone length from its child on
    // the line to its current position (a joint on its child keeps its bone's direction). With
    // limits the bone's direction is first limited as the joint would be under its current
    // parent, so the pass does not aim for a pose the forward pass cannot make (a foot bent
    // past its cone, a knee bent backwards).
    reached[n] = target;
    for (std::size_t i = n; i-- > 0;) {
      const Vec3 bone = rotate(model[i], chain.offsets[i]);
      Vec3 wanted = reached[i + 1] - points[i];
      if (length_squared(wanted) < 1e-24) wanted = bone;
      Vec3 limited = wanted;
      if (limits && length_squared(bone) > 1e-24) {
        const Quat parent = i == 0 ? normalize(chain.base_rotation) : model[i - 1];
        const Quat turned = normalize(from_to(bone, wanted) * model[i]);
        const Quat allowed = limits(i, normalize(conjugate(parent) * turned));
        limited = rotate(normalize(parent * allowed), chain.offsets[i]);
      }
      const double len = length(limited);
      reached[i] = len > 1e-12 ? reached[i + 1] - limited * (length(chain.offsets[i]) / len)
                               : reached[i + 1];
    }
    // Forward pass in rotation space: the base stays; each bone turns towards the backward
    // pass's next point and its local rotation is limited before the next joint is placed.
    Quat parent = normalize(chain.base_rotation);
    for (std::size_t i = 0; i < n; ++i) {
      const Vec3 bone = rotate(normalize(parent * local[i]), chain.offsets[i]);
      const Vec3 wanted = reached[i + 1] - points[i];
      if (length_squared(bone) > 1e-24 && length_squared(wanted) > 1e-24) {
        const Quat turned = normalize(from_to(bone, wanted) * parent * local[i]);
        local[i] = limits(i, normalize(conjugate(parent) * turned));
      }
      parent = normalize(parent * local[i]);
      model[i] = parent;
      points[i + 1] = points[i] + rotate(parent, chain.offsets[i]);
    }
    error = distance(points[n], target);
    if (error < best_error - stall) {
      best_error = error;
      std::copy(local.begin(), local.end(), best_storage.begin());
      without_progress = 0;
    } else if (++without_progress >= kPatience) {
      break;
    }
  }
  if (best_error < error) {
    std::copy_n(best_storage.begin(), n, local.begin());
    error = best_error;
  }
  result.iterations = iteration;
  result.error = error;
  result.status = ik_chain_status(chain, target, error, settings.tolerance);
  return result;
}

}  // namespace kinema
