// VRM spring bones (see kinema/physics/spring_bones.h).
#include "kinema/physics/spring_bones.h"

#include <cmath>
#include <functional>
#include <string>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr double kMaxPull = 1e6;  // per second: the largest stiffness or gravity accepted

/// three.js's Vector3.normalize(): a zero vector stays zero.
Vec3 normalize_or_zero(const Vec3& v) {
  const double l = length(v);
  return l > 0 ? v / l : Vec3{0, 0, 0};
}

/// three.js's Quaternion.setFromUnitVectors, with its choice of axis for opposite vectors.
Quat from_unit_vectors(const Vec3& from, const Vec3& to) {
  double r = dot(from, to) + 1;
  Quat q;
  if (r < 1e-8) {
    r = 0;
    if (std::abs(from.x) > std::abs(from.z))
      q = {-from.y, from.x, 0, r};
    else
      q = {0, -from.z, from.y, r};
  } else {
    const Vec3 c = cross(from, to);
    q = {c.x, c.y, c.z, r};
  }
  return normalize(q);
}

Mat4 local_matrix(const Transform& t, const Quat& rotation) {
  return Mat4::trs(t.translation, rotation, t.scale);
}

Mat4 inverse_or_identity(const Mat4& m) {
  Mat4 out;
  return inverse(m, out) ? out : Mat4::identity();
}

}  // namespace

SpringBoneSim::SpringBoneSim(const Skeleton& skeleton, const SpringBones& setup)
    : parents_(skeleton.parents().begin(), skeleton.parents().end()),
      colliders_(setup.colliders),
      simulated_(static_cast<size_t>(skeleton.joint_count()), -1) {
  const int n = skeleton.joint_count();
  const std::string file = "spring_bones";
  auto check_joint = [&](int j, const std::string& place) {
    if (j < 0 || j >= n) throw Error(file, place, "joint " + std::to_string(j) + " does not exist");
  };
  for (size_t c = 0; c < colliders_.size(); ++c) {
    const SpringCollider& col = colliders_[c];
    const std::string place = "colliders/" + std::to_string(c);
    check_joint(col.joint, place + "/joint");
    if (!is_finite(col.offset) || !is_finite(col.tail) || !is_finite(col.normal) ||
        !std::isfinite(col.radius) || col.radius < 0)
      throw Error(file, place, "a non-finite number or a negative radius");
    if (col.shape == SpringColliderShape::Plane && length(col.normal) < 1e-12)
      throw Error(file, place + "/normal", "a plane's normal is zero");
  }
  for (size_t g = 0; g < setup.collider_groups.size(); ++g)
    for (int c : setup.collider_groups[g])
      if (c < 0 || c >= static_cast<int>(colliders_.size()))
        throw Error(file, "collider_groups/" + std::to_string(g),
                    "collider " + std::to_string(c) + " does not exist");

  // Gather the joints in declaration order.
  std::vector<JointState> declared;
  for (size_t s = 0; s < setup.springs.size(); ++s) {
    const Spring& spring = setup.springs[s];
    const std::string place = "springs/" + std::to_string(s);
    if (spring.center != -1) check_joint(spring.center, place + "/center");
    std::vector<int> colliders;
    for (int g : spring.collider_groups) {
      if (g < 0 || g >= static_cast<int>(setup.collider_groups.size()))
        throw Error(file, place + "/collider_groups",
                    "collider group " + std::to_string(g) + " does not exist");
      for (int c : setup.collider_groups[static_cast<size_t>(g)]) colliders.push_back(c);
    }
    for (size_t k = 0; k < spring.joints.size(); ++k) {
      const SpringJoint& sj = spring.joints[k];
      const std::string at = place + "/joints/" + std::to_string(k);
      check_joint(sj.joint, at + "/joint");
      if (sj.child != -1) {
        check_joint(sj.child, at + "/child");
        if (skeleton.parent(sj.child) != sj.joint)
          throw Error(file, at + "/child",
                      "joint '" + skeleton.joint(sj.child).name + "' is not a child of '" +
                          skeleton.joint(sj.joint).name + "'");
      }
      if (simulated_[static_cast<size_t>(sj.joint)] >= 0)
        throw Error(file, at + "/joint",
                    "joint '" + skeleton.joint(sj.joint).name + "' is simulated twice");
      simulated_[static_cast<size_t>(sj.joint)] = static_cast<int>(declared.size());
      if (!std::isfinite(sj.hit_radius) || sj.hit_radius < 0 || !std::isfinite(sj.stiffness) ||
          sj.stiffness < 0 || !std::isfinite(sj.gravity_power) || sj.gravity_power < 0 ||
          !is_finite(sj.gravity_dir) || !(sj.drag_force >= 0 && sj.drag_force <= 1))
        throw Error(file, at,
                    "hit radius, stiffness and gravity power must be finite and ≥ 0, drag 0–1");
      // Far past any avatar's settings (0–4 is usual), and where a step's sums would overflow.
      if (sj.stiffness > kMaxPull || sj.gravity_power * length(sj.gravity_dir) > kMaxPull)
        throw Error(file, at,
                    "stiffness and gravity power × |gravity direction| must be at most 10⁶");
      JointState st;
      st.joint = sj.joint;
      st.child = sj.child;
      st.parent = skeleton.parent(sj.joint);
      st.center = spring.center;
      st.hit_radius = sj.hit_radius;
      st.stiffness = sj.stiffness;
      st.gravity_power = sj.gravity_power;
      st.gravity_dir = sj.gravity_dir;
      st.drag = sj.drag_force;
      st.colliders = colliders;
      declared.push_back(std::move(st));
    }
  }

  // Update order: a joint after the simulated joints it depends on — its nearest simulated
  // ancestor and the nearest simulated ancestor-or-self of every collider it sees (three-vrm's
  // dependency sort, declaration order otherwise).
  auto nearest_simulated = [&](int j) {
    for (; j >= 0; j = parents_[static_cast<size_t>(j)])
      if (simulated_[static_cast<size_t>(j)] >= 0) return simulated_[static_cast<size_t>(j)];
    return -1;
  };
  std::vector<char> state(declared.size(), 0);  // 0 new, 1 visiting, 2 done
  std::vector<int> order;
  std::function<void(int)> visit = [&](int d) {
    if (state[static_cast<size_t>(d)] != 0) return;  // done, or a cycle (skipped, as three-vrm)
    state[static_cast<size_t>(d)] = 1;
    const JointState& st = declared[static_cast<size_t>(d)];
    if (st.parent >= 0)
      if (const int dep = nearest_simulated(st.parent); dep >= 0) visit(dep);
    for (int c : st.colliders)
      if (const int dep = nearest_simulated(colliders_[static_cast<size_t>(c)].joint);
          dep >= 0 && dep != d)
        visit(dep);
    state[static_cast<size_t>(d)] = 2;
    order.push_back(d);
  };
  for (size_t d = 0; d < declared.size(); ++d) visit(static_cast<int>(d));
  for (int d : order) joints_.push_back(std::move(declared[static_cast<size_t>(d)]));
  for (size_t k = 0; k < joints_.size(); ++k) {
    simulated_[static_cast<size_t>(joints_[k].joint)] = static_cast<int>(k);
    order_joint_.push_back(joints_[k].joint);
  }
  // Unsimulated joints below a simulated one follow their nearest simulated ancestor.
  for (int j = 0; j < n; ++j) {
    if (simulated_[static_cast<size_t>(j)] >= 0) continue;
    const int p = parents_[static_cast<size_t>(j)];
    if (const int owner = p >= 0 ? nearest_simulated(p) : -1; owner >= 0)
      joints_[static_cast<size_t>(owner)].refresh.push_back(j);
  }

  // Rest state (three-vrm's setInitState on the loaded model).
  std::vector<Transform> rest = skeleton.rest_pose();
  world_.assign(static_cast<size_t>(n), Mat4::identity());
  for (JointState& s : joints_) {
    const Transform& r = rest[static_cast<size_t>(s.joint)];
    s.initial_local = local_matrix(r, r.rotation);
    s.initial_rotation = r.rotation;
    s.rotation = r.rotation;
    // A leaf's virtual tail: 7 cm along the joint's offset from its parent (UniVRM 0.x).
    s.child_local = s.child >= 0 ? rest[static_cast<size_t>(s.child)].translation
                                 : normalize_or_zero(r.translation) * 0.07;
    s.bone_axis = normalize_or_zero(s.child_local);
    s.rest_axis = normalize_or_zero(s.initial_local.transform_vector(s.bone_axis));
  }
  reset(rest);
}

Mat4 SpringBoneSim::parent_world(int joint) const {
  const int p = parents_[static_cast<size_t>(joint)];
  return p >= 0 ? world_[static_cast<size_t>(p)] : Mat4::identity();
}

void SpringBoneSim::world_pass(std::span<const Transform> local_pose) {
  for (size_t j = 0; j < parents_.size(); ++j) {
    const int k = simulated_[j];
    const Quat q = k >= 0 ? joints_[static_cast<size_t>(k)].rotation : local_pose[j].rotation;
    world_[j] = parent_world(static_cast<int>(j)) * local_matrix(local_pose[j], q);
  }
}

void SpringBoneSim::refresh_after(const JointState& s, std::span<const Transform> local_pose) {
  for (int j : s.refresh)
    world_[static_cast<size_t>(j)] =
        parent_world(j) * local_matrix(local_pose[static_cast<size_t>(j)],
                                       local_pose[static_cast<size_t>(j)].rotation);
}

void SpringBoneSim::remember_children() {
  for (JointState& s : joints_)
    if (s.child >= 0) s.child_world = world_[static_cast<size_t>(s.child)].translation_part();
}

void SpringBoneSim::reset(std::span<Transform> local_pose) {
  if (local_pose.size() != parents_.size())
    throw Error("spring_bones", "reset",
                "the pose has " + std::to_string(local_pose.size()) + " joints, the skeleton " +
                    std::to_string(parents_.size()));
  for (JointState& s : joints_) s.rotation = s.initial_rotation;
  world_pass(local_pose);
  for (JointState& s : joints_) {
    const Mat4& w = world_[static_cast<size_t>(s.joint)];
    const Mat4 to_center = s.center >= 0
                               ? inverse_or_identity(world_[static_cast<size_t>(s.center)])
                               : Mat4::identity();
    s.tail = s.prev_tail = to_center.transform_point(w.transform_point(s.child_local));
    local_pose[static_cast<size_t>(s.joint)].rotation = s.rotation;
  }
  remember_children();
}

Vec3 SpringBoneSim::collide(const JointState& s, const Vec3& p, double length_m, Vec3 tail) const {
  for (int c : s.colliders) {
    const SpringCollider& col = colliders_[static_cast<size_t>(c)];
    const Mat4& w = world_[static_cast<size_t>(col.joint)];
    const Vec3 head = w.transform_point(col.offset);
    Vec3 dir;
    double distance = 0;
    if (col.shape == SpringColliderShape::Plane) {
      const Mat4 nm = normal_matrix(w);
      dir = normalize_or_zero(nm.transform_vector(col.normal));
      distance = dot(tail - head, dir) - s.hit_radius;
    } else {
      Vec3 d = tail - head;
      if (col.shape == SpringColliderShape::Capsule) {
        const Vec3 axis = w.transform_point(col.tail) - head;
        const double along = dot(axis, d), len2 = dot(axis, axis);
        if (along <= 0) {
        } else if (len2 <= along) {
          d = d - axis;
        } else {
          d = d - axis * (along / len2);
        }
      }
      const double l = length(d);
      distance = col.inside ? col.radius - s.hit_radius - l : l - s.hit_radius - col.radius;
      dir = l > 0 ? d * ((col.inside ? -1.0 : 1.0) / l) : Vec3{0, 0, 0};
    }
    if (distance < 0) {
      tail = tail - dir * distance;
      const Vec3 r = tail - p;
      tail = p + r * (length_m / length(r));
    }
  }
  return tail;
}

void SpringBoneSim::step(std::span<Transform> local_pose, double dt) {
  if (local_pose.size() != parents_.size())
    throw Error("spring_bones", "step",
                "the pose has " + std::to_string(local_pose.size()) + " joints, the skeleton " +
                    std::to_string(parents_.size()));
  world_pass(local_pose);
  for (JointState& s : joints_) {
    const size_t j = static_cast<size_t>(s.joint);
    const Mat4 wp = parent_world(s.joint);
    if (dt > 0 && length_squared(s.bone_axis) > 0) {
      const Mat4 w = wp * local_matrix(local_pose[j], s.rotation);
      const Vec3 p = w.translation_part();
      const Vec3 child = s.child >= 0 ? s.child_world : w.transform_point(s.child_local);
      const double bone_length = length(p - child);
      const Vec3 rest_dir = normalize_or_zero(wp.transform_vector(s.rest_axis));
      const Mat4 center_to_world =
          s.center >= 0 ? world_[static_cast<size_t>(s.center)] : Mat4::identity();
      Vec3 next = center_to_world.transform_point(s.tail + (s.tail - s.prev_tail) * (1 - s.drag));
      next = next + rest_dir * (s.stiffness * dt) + s.gravity_dir * (s.gravity_power * dt);
      next = p + normalize_or_zero(next - p) * bone_length;
      next = collide(s, p, bone_length, next);
      s.prev_tail = s.tail;
      s.tail = s.center >= 0 ? inverse_or_identity(center_to_world).transform_point(next) : next;
      const Vec3 local_dir =
          normalize_or_zero(inverse_or_identity(wp * s.initial_local).transform_point(next));
      s.rotation = s.initial_rotation * from_unit_vectors(s.bone_axis, local_dir);
    }
    local_pose[j].rotation = s.rotation;
    world_[j] = wp * local_matrix(local_pose[j], s.rotation);
    refresh_after(s, local_pose);
  }
  remember_children();
}

}  // namespace kinema
