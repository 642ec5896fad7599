// Internal: one joint's constraint rows for the sequential-impulse solver of RigidWorld.
#pragma once

#include "kinema/math/mat3.h"
#include "kinema/physics/rigid_body.h"
#include "kinema/physics/rigid_joint.h"

namespace kinema::detail {

/// One angular constraint row: the relative angular velocity along `axis` is driven toward
/// `target` (rad/s) with the accumulated impulse kept within [lo, hi] (N·m·s).
struct AngularRow {
  Vec3 axis{0, 0, 0};
  double mass = 0;
  double target = 0;
  double lo = 0, hi = 0;
  double lambda = 0;
};

struct JointState {
  JointDesc desc;
  Vec3 anchor_a, anchor_b;  // body frames, from the centre of mass (m)
  Vec3 axis_a, axis_b;      // body frames, unit
  Quat rest;                // conj(q_a)·q_b at creation
  bool broken = false;
  bool direct = false;      // its equality rows are solved exactly (joint_direct_solver.h)
  double last_impulse = 0;  // the largest impulse of the last step (N·s)

  // Per step.
  Vec3 ra, rb;      // world arms (m)
  Mat3 point_mass;  // inverse of the 3×3 point-constraint matrix (set by prepare_point_mass)
  Vec3 point_lambda{0, 0, 0};
  AngularRow rows[5];
  int row_count = 0;
  Vec3 rod_direction{0, 0, 0};
  double rod_mass = 0, rod_target = 0, rod_lo = 0, rod_hi = 0, rod_lambda = 0;
  // Warm starting: the always-present rows' impulses from the previous step.
  Vec3 previous_point_lambda{0, 0, 0};
  double previous_rows[3] = {0, 0, 0};
  double previous_rod = 0;
};

/// Records the joint's anchors and axes in the bodies' frames and its rest pose.
void initialise_joint(JointState& j, const RigidBody& a, const RigidBody& b);

/// Builds this step's rows and applies the warm-start impulses.
void prepare_joint(JointState& j, RigidBody& a, RigidBody& b, const Mat3& ia, const Mat3& ib,
                   double h, bool warm_start);

/// Sets point_mass for a joint whose point the iterations solve (prepare_joint leaves it to the
/// direct solve, which calls this when it hands the joint back).
void prepare_point_mass(JointState& j, const RigidBody& a, const RigidBody& b, const Mat3& ia,
                        const Mat3& ib);

/// Whether the joint has rows the iterations must solve this step: all of them when it is not
/// solved directly, else its limits and motors.
bool needs_iterations(const JointState& j);

/// One Gauss–Seidel pass over the joint's rows.
void solve_joint_velocity(JointState& j, RigidBody& a, RigidBody& b, const Mat3& ia,
                          const Mat3& ib);

/// After the velocity passes: keeps impulses for warm starting, and breaks the joint when they
/// exceed its break_impulse.
void finish_joint_step(JointState& j);

/// One non-linear Gauss–Seidel pass on the positions: removes part of the joint's drift.
void solve_joint_position(JointState& j, RigidBody& a, RigidBody& b, double fraction);

/// How far apart the anchors are (m), or how far outside its range a distance joint is.
double joint_position_error(const JointState& j, const RigidBody& a, const RigidBody& b);

}  // namespace kinema::detail
