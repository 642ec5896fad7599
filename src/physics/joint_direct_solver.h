// Internal: the joints' equality rows solved exactly by a sparse direct solve each pass.
//
// Sequential impulses fix one joint at a time, and a correction travels one link per pass: a
// 50-link chain at ten passes stretches by metres (Bullet's does, 1.8 m). Here the rows every
// joint must keep at zero — the anchor point's three, a hinge's two axis rows, a weld's three
// angular rows, a rod's one — are solved together: A·λ = −J·v with A = J·M⁻¹·Jᵀ (Baraff 1996,
// "Linear-Time Dynamics using Lagrange Multipliers", in its reduced form). A is sparse — joints
// couple only through a shared body. When the joints form a forest over the moving bodies
// (chains, ragdolls), A is factored leaves first with no fill in linear time
// (joint_tree_solver.h); with loops, by a sparse LDLᵀ with a fill-reducing ordering. The factor
// is built once a step and reused by every pass; the position stabilization after the step
// (Cline and Pai 2003) builds it again at the new poses.
#pragma once

#include <memory>
#include <vector>

#include "kinema/physics/rigid_body.h"
#include "rigid_joint_solver.h"

namespace kinema::detail {

class JointDirectSolver {
 public:
  JointDirectSolver();
  ~JointDirectSolver();
  JointDirectSolver(JointDirectSolver&&) noexcept;
  JointDirectSolver& operator=(JointDirectSolver&&) noexcept;

  /// Takes the active joints' equality rows (marking those joints `direct`), builds A at the
  /// bodies' current poses and factors it. `active_joint[j]` says whether joint j takes part;
  /// call after prepare_joint (which sets the arms and axes).
  void factor(const std::vector<RigidBody*>& bodies, const std::vector<Mat3>& inverse_inertia,
              std::vector<JointState>& joints, const std::vector<char>& active_joint);

  /// Velocity pass: applies the impulses that bring every direct row's velocity to zero, and adds
  /// them to the joints' point_lambda / rod_lambda (for breaking).
  void solve_velocities(const std::vector<RigidBody*>& bodies,
                        const std::vector<Mat3>& inverse_inertia, std::vector<JointState>& joints);

  /// Tests: whether a forest of joints may use the tree factorization (it may by default); off,
  /// every system goes to the general sparse one.
  void allow_tree_solver(bool allowed);
  /// Whether the last factorization was the tree one.
  bool using_tree_solver() const;

  /// Position pass after the step: moves and turns the bodies so that the direct rows' position
  /// errors vanish to first order; velocities are untouched. Returns false, moving nothing and
  /// factoring nothing, when no row's error exceeds `tolerance` (m for the point rows and rods,
  /// rad for the angular rows). `inverse_inertia` (the step's) divided by `inertia_scale` is the
  /// metric of the correction: the larger the scale, the more it moves bodies and the less it
  /// turns them; bodies flagged in `unscaled` keep their own.
  bool stabilize_positions(const std::vector<RigidBody*>& bodies,
                           const std::vector<Mat3>& inverse_inertia,
                           std::vector<JointState>& joints, double tolerance,
                           double inertia_scale = 1, const std::vector<char>* unscaled = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinema::detail
