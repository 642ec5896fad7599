// Ragdolls (kinema/physics/ragdoll.h).
#include "kinema/physics/ragdoll.h"

#include <algorithm>
#include <cmath>

#include "kinema/core/error.h"
#include "kinema/physics/mass_properties.h"
#include "kinema/physics/narrow_phase.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {

namespace {

// A body's shape pose (origin and rotation) from a rigid model matrix.
void split(const Mat4& m, Vec3& origin, Quat& rotation) {
  const Transform t = Transform::from_matrix(m);
  origin = t.translation;
  rotation = normalize(t.rotation);
}

Mat4 shape_matrix(const RigidBody& b) {
  return Mat4::trs(shape_origin(b), b.orientation, {1, 1, 1});
}

void check_pose(const Asset& a, std::span<const Mat4> pose, const char* what) {
  if (pose.size() != size_t(a.skeleton.joint_count()))
    throw Error({}, "ragdoll",
                std::string(what) + " has " + std::to_string(pose.size()) + " matrices for " +
                    std::to_string(a.skeleton.joint_count()) + " joints");
}

// The humanoid bones a ragdoll is made of (VRM names).
constexpr const char* kRagdollBones[] = {
    "hips",          "spine",         "chest",         "upperChest",   "neck",
    "head",          "leftShoulder",  "rightShoulder", "leftUpperArm", "rightUpperArm",
    "leftLowerArm",  "rightLowerArm", "leftHand",      "rightHand",    "leftUpperLeg",
    "rightUpperLeg", "leftLowerLeg",  "rightLowerLeg", "leftFoot",     "rightFoot"};

// Anatomical cone–twist limits (rad): swing, twist range ±.
struct ConeDefault {
  const char* bone;
  double swing, twist;
};
constexpr ConeDefault kHumanoidCones[] = {
    {"spine", 0.35, 0.35},       {"chest", 0.35, 0.35},       {"upperChest", 0.35, 0.35},
    {"neck", 0.5, 0.6},          {"head", 0.5, 0.6},          {"leftShoulder", 0.3, 0.2},
    {"rightShoulder", 0.3, 0.2}, {"leftUpperArm", 1.66, 1.2}, {"rightUpperArm", 1.66, 1.2},
    {"leftHand", 0.9, 0.3},      {"rightHand", 0.9, 0.3},     {"leftUpperLeg", 1.2, 0.5},
    {"rightUpperLeg", 1.2, 0.5}, {"leftFoot", 0.6, 0.25},     {"rightFoot", 0.6, 0.25}};

// Knees and elbows: hinges from the bone to its child, bending 0…kBend.
struct HingeDefault {
  const char* bone;
  const char* child;
  bool bends_back;  // the shin folds behind the thigh; the forearm comes forward
};
constexpr HingeDefault kHumanoidHinges[] = {{"leftLowerArm", "leftHand", false},
                                            {"rightLowerArm", "rightHand", false},
                                            {"leftLowerLeg", "leftFoot", true},
                                            {"rightLowerLeg", "rightFoot", true}};
constexpr double kBend = 2.5;          // rad, ≈ 143°
constexpr double kHyperextend = 0.05;  // rad: a little past straight, as a knee locks

Vec3 joint_origin(const Mat4& m) { return m.transform_point({0, 0, 0}); }

// Direction `world` (at rest) in joint j's own frame.
Vec3 in_joint_frame(const Mat4& rest_model, const Vec3& world) {
  return normalize(
      rotate(conjugate(normalize(Transform::from_matrix(rest_model).rotation)), world));
}

}  // namespace

std::vector<RagdollJointLimit> humanoid_ragdoll_limits(const Asset& character) {
  std::vector<RagdollJointLimit> out;
  if (!character.humanoid) return out;
  const Humanoid& h = *character.humanoid;
  const int left_leg = h.find("leftUpperLeg"), right_leg = h.find("rightUpperLeg");
  if (left_leg < 0 || right_leg < 0) return out;
  const std::vector<Mat4> rest = rest_model_matrices(character.skeleton);
  const Vec3 left = joint_origin(rest[size_t(left_leg)]) - joint_origin(rest[size_t(right_leg)]);
  const Vec3 forward = cross(left, Vec3{0, 1, 0});
  if (!(length(forward) > 1e-9)) return out;
  for (const ConeDefault& c : kHumanoidCones)
    if (const int j = h.find(c.bone); j >= 0) {
      RagdollJointLimit l;
      l.joint = j;
      l.kind = JointKind::ConeTwist;
      l.swing = c.swing;
      l.twist_lower = -c.twist;
      l.twist_upper = c.twist;
      out.push_back(l);
    }
  for (const HingeDefault& c : kHumanoidHinges) {
    const int j = h.find(c.bone), child = h.find(c.child);
    if (j < 0 || child < 0) continue;
    const Vec3 bone = joint_origin(rest[size_t(child)]) - joint_origin(rest[size_t(j)]);
    // Turning the bone positively about bone × forward brings its end forward; the other way
    // round, back.
    const Vec3 axis = c.bends_back ? cross(forward, bone) : cross(bone, forward);
    if (!(length(axis) > 1e-9 * length(bone) * length(forward))) continue;
    RagdollJointLimit l;
    l.joint = j;
    l.kind = JointKind::Hinge;
    l.axis = in_joint_frame(rest[size_t(j)], normalize(axis));
    l.lower = -kHyperextend;
    l.upper = kBend;
    out.push_back(l);
  }
  return out;
}

Ragdoll::Ragdoll(const Asset& character, RigidWorld& world, std::span<const Mat4> model_pose,
                 const RagdollOptions& options)
    : character_(character), options_(options) {
  check_pose(character, model_pose, "the pose");
  std::vector<CharacterCollider> colliders = character_colliders(character, options.colliders);
  std::vector<int> wanted = options.joints;
  if (wanted.empty() && character.humanoid)
    for (const char* bone : kRagdollBones)
      if (const int j = character.humanoid->find(bone); j >= 0) wanted.push_back(j);
  if (!wanted.empty())
    std::erase_if(colliders, [&](const CharacterCollider& c) {
      return std::find(wanted.begin(), wanted.end(), c.joint) == wanted.end();
    });
  if (colliders.empty())
    throw Error({}, "ragdoll", "no joint has enough skin of its own to become a body");
  const Skeleton& skeleton = character.skeleton;
  const std::vector<Mat4> rest = rest_model_matrices(skeleton);
  body_of_joint_.assign(size_t(skeleton.joint_count()), -1);
  std::vector<RigidShape> shapes;
  for (const CharacterCollider& c : colliders) {
    RagdollBody rb;
    rb.joint = c.joint;
    Mat4 shape_at_rest;
    RigidShape shape;
    if (c.shape.shape == ColliderShape::Capsule) {
      const Vec3 axis = c.shape.b - c.shape.a;
      shape = capsule_shape(c.shape.radius, 0.5 * length(axis));
      shape_at_rest =
          Mat4::trs((c.shape.a + c.shape.b) * 0.5, from_to(Vec3{0, 1, 0}, axis), {1, 1, 1});
    } else {
      shape = sphere_shape(c.shape.radius);
      shape_at_rest = Mat4::trs(c.shape.a, Quat::identity(), {1, 1, 1});
    }
    Mat4 rest_inverse;
    if (!inverse(rest[size_t(c.joint)], rest_inverse))
      throw Error({}, skeleton.joint(c.joint).name, "the joint's rest matrix is singular");
    rb.offset = rest_inverse * shape_at_rest;
    inverse(rb.offset, rb.offset_inverse);
    Vec3 origin;
    Quat q;
    split(rest[size_t(c.joint)] * rb.offset, origin, q);  // at rest until the joints are made
    const MassProperties mass =
        mass_properties(shape, options.density, skeleton.joint(c.joint).name);
    if (mass.mass < options.min_mass) continue;
    mass_ += mass.mass;
    rb.body =
        world.add_body(make_dynamic_body(mass, origin, q, skeleton.joint(c.joint).name), shape,
                       {options.friction, 0}, "ragdoll " + skeleton.joint(c.joint).name);
    body_of_joint_[size_t(c.joint)] = int(bodies_.size());
    bodies_.push_back(rb);
    shapes.push_back(shape);
  }
  // Each joint's limit: the caller's, else the humanoid default, else the options' cone.
  std::vector<const RagdollJointLimit*> limit_of(size_t(skeleton.joint_count()), nullptr);
  const std::vector<RagdollJointLimit> defaults = options.humanoid_limits
                                                      ? humanoid_ragdoll_limits(character)
                                                      : std::vector<RagdollJointLimit>{};
  for (const auto* list : {&defaults, &options.limits})
    for (const RagdollJointLimit& l : *list) {
      if (l.joint < 0 || l.joint >= skeleton.joint_count())
        throw Error({}, "ragdoll",
                    "a joint limit names joint " + std::to_string(l.joint) + " of " +
                        std::to_string(skeleton.joint_count()));
      limit_of[size_t(l.joint)] = &l;
    }
  // Each body hangs from the nearest ancestor with a body, at its own joint, made at rest.
  const std::span<const int> parents = skeleton.parents();
  for (RagdollBody& rb : bodies_) {
    int up = parents[size_t(rb.joint)];
    while (up >= 0 && body_of_joint_[size_t(up)] < 0) up = parents[size_t(up)];
    if (up < 0) continue;
    rb.parent = body_of_joint_[size_t(up)];
    const RigidBody& child = world.body(rb.body);
    const Vec3 along_bone = rotate(child.orientation, Vec3{0, 1, 0});
    JointDesc d;
    d.kind = JointKind::ConeTwist;
    d.a = bodies_[size_t(rb.parent)].body;
    d.b = rb.body;
    d.anchor = joint_origin(rest[size_t(rb.joint)]);
    d.axis = along_bone;
    d.swing_limit = options.swing_limit;
    d.twist_lower = -options.twist_limit;
    d.twist_upper = options.twist_limit;
    if (const RagdollJointLimit* l = limit_of[size_t(rb.joint)]) {
      const std::string& name = skeleton.joint(rb.joint).name;
      if (l->kind != JointKind::ConeTwist && l->kind != JointKind::Hinge)
        throw Error({}, name, "a ragdoll joint limit is a cone_twist or a hinge");
      const Quat rest_rotation = normalize(Transform::from_matrix(rest[size_t(rb.joint)]).rotation);
      const bool along = l->axis.x == 0 && l->axis.y == 0 && l->axis.z == 0;
      if (!is_finite(l->axis) || (along && l->kind == JointKind::Hinge))
        throw Error({}, name, "the limit's axis is not finite, or a hinge's is zero");
      d.kind = l->kind;
      d.axis = along ? along_bone : rotate(rest_rotation, normalize(l->axis));
      if (l->kind == JointKind::Hinge) {
        if (!(l->lower <= 0 && l->upper >= 0))
          throw Error({}, name, "a hinge's range must hold its rest angle: lower ≤ 0 ≤ upper");
        d.limit = true;
        d.lower = l->lower;
        d.upper = l->upper;
      } else {
        d.swing_limit = l->swing;
        d.twist_lower = l->twist_lower;
        d.twist_upper = l->twist_upper;
      }
    }
    try {
      rb.link = world.add_joint(d);
    } catch (const Error& e) {
      throw Error({}, skeleton.joint(rb.joint).name, e.reason());
    }
  }
  // Parts that overlap at rest or at the start (thighs and hips, the chest and the upper arms)
  // would push each other apart for ever: they do not collide. The rest do (an arm hits the
  // chest).
  auto disable_overlaps = [&] {
    ContactManifold m;
    for (size_t i = 0; i < bodies_.size(); ++i)
      for (size_t k = i + 1; k < bodies_.size(); ++k) {
        const RigidBody& a = world.body(bodies_[i].body);
        const RigidBody& b = world.body(bodies_[k].body);
        if (collide(shapes[i], {shape_origin(a), a.orientation}, shapes[k],
                    {shape_origin(b), b.orientation}, m))
          world.disable_collision(bodies_[i].body, bodies_[k].body);
      }
  };
  disable_overlaps();
  match_pose(world, model_pose, model_pose, 0);
  disable_overlaps();
}

int Ragdoll::body_of_joint(int joint) const {
  return joint >= 0 && size_t(joint) < body_of_joint_.size() ? body_of_joint_[size_t(joint)] : -1;
}

void Ragdoll::match_pose(RigidWorld& world, std::span<const Mat4> previous_pose,
                         std::span<const Mat4> model_pose, double h) {
  check_pose(character_, previous_pose, "the previous pose");
  check_pose(character_, model_pose, "the pose");
  for (const RagdollBody& rb : bodies_) {
    RigidBody& b = world.body(rb.body);
    Vec3 o0, o1;
    Quat q0, q1;
    split(previous_pose[size_t(rb.joint)] * rb.offset, o0, q0);
    split(model_pose[size_t(rb.joint)] * rb.offset, o1, q1);
    const Vec3 c0 = o0 + rotate(q0, b.centre_of_mass_in_shape);
    const Vec3 c1 = o1 + rotate(q1, b.centre_of_mass_in_shape);
    b.position = c1;
    b.orientation = q1;
    b.linear_velocity = h > 0 ? (c1 - c0) / h : Vec3{0, 0, 0};
    b.angular_velocity = h > 0 ? to_rotation_vector(q1 * conjugate(q0)) / h : Vec3{0, 0, 0};
    set_awake(b, true);
  }
}

void Ragdoll::drive(RigidWorld& world, std::span<const Mat4> target_pose, double strength) {
  check_pose(character_, target_pose, "the target pose");
  if (!(strength > 0)) return;
  const double wn = options_.natural_frequency;
  // Every body's target rotation once (each is a child, and a parent to several).
  target_rotation_.resize(bodies_.size());
  for (size_t i = 0; i < bodies_.size(); ++i) {
    Vec3 unused;
    split(target_pose[size_t(bodies_[i].joint)] * bodies_[i].offset, unused, target_rotation_[i]);
  }
  for (size_t i = 0; i < bodies_.size(); ++i) {
    const RagdollBody& rb = bodies_[i];
    if (rb.parent < 0) continue;
    const RagdollBody& up = bodies_[size_t(rb.parent)];
    RigidBody& child = world.body(rb.body);
    RigidBody& parent = world.body(up.body);
    const Quat& target_child = target_rotation_[i];
    const Quat& target_parent = target_rotation_[size_t(rb.parent)];
    // The turn (in the parent's frame) from the current relative rotation to the target's, seen
    // in the world.
    const Quat target_relative = conjugate(target_parent) * target_child;
    const Quat relative = conjugate(parent.orientation) * child.orientation;
    const Vec3 error =
        rotate(parent.orientation, to_rotation_vector(target_relative * conjugate(relative)));
    // Gains from the pair's reduced inertia tensor, (Ic⁻¹ + Ip⁻¹)⁻¹ in world axes, so that the
    // relative rotation rings at ω_n about every axis whatever the two weigh and however thin
    // they are: τ = I·(ω_n²·θ − 2ω_n·Δω), that is kp = ω_n²·I and kd = 2ω_n·I. The child's own
    // inertia would make a heavy head on a light neck ring far faster than a step can follow.
    const Mat3 reduced = inverse(world_inverse_inertia(child) + world_inverse_inertia(parent));
    const double g = strength * rb.gain;
    const Vec3 torque =
        reduced *
        (error * (wn * wn) - (child.angular_velocity - parent.angular_velocity) * (2 * wn)) * g;
    child.torque += torque;
    parent.torque -= torque;
  }
}

void Ragdoll::set_gain(int body, double factor) {
  if (body < 0 || size_t(body) >= bodies_.size() || !(factor >= 0)) return;
  bodies_[size_t(body)].gain *= factor;
}

void Ragdoll::recover(double h, double rate) {
  for (RagdollBody& rb : bodies_) rb.gain = std::min(1.0, rb.gain + rate * h);
}

void Ragdoll::read_pose(const RigidWorld& world, std::span<const Transform> animation_local,
                        std::vector<Mat4>& out) const {
  const Skeleton& skeleton = character_.skeleton;
  const size_t n = size_t(skeleton.joint_count());
  if (animation_local.size() != n)
    throw Error({}, "ragdoll",
                "the animation pose has " + std::to_string(animation_local.size()) +
                    " transforms for " + std::to_string(n) + " joints");
  out.resize(n);
  const std::span<const int> parents = skeleton.parents();
  // Where each joint is relative to its root in the animation: a root without a body is placed
  // so that its first body's joint lands where that body is.
  std::vector<Mat4> relative(n);
  local_to_model(parents, animation_local, std::span<Mat4>(relative));
  auto joint_from_body = [&](int b) {
    return shape_matrix(world.body(bodies_[size_t(b)].body)) * bodies_[size_t(b)].offset_inverse;
  };
  std::vector<int> root_of(n);
  for (size_t j = 0; j < n; ++j) root_of[j] = parents[j] < 0 ? int(j) : root_of[size_t(parents[j])];
  for (size_t j = 0; j < n; ++j) {
    const int b = body_of_joint_[j];
    if (b >= 0) {
      out[j] = joint_from_body(b);
    } else if (parents[j] >= 0) {
      out[j] = out[size_t(parents[j])] * animation_local[j].to_matrix();
    } else {
      out[j] = animation_local[j].to_matrix();
      for (size_t k = j; k < n; ++k)  // its first descendant with a body
        if (root_of[k] == int(j) && body_of_joint_[k] >= 0) {
          Mat4 to_root;
          if (inverse(relative[k], to_root))
            out[j] = joint_from_body(body_of_joint_[k]) * to_root * relative[j];
          break;
        }
    }
  }
}

}  // namespace kinema
