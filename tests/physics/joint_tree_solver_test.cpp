// The joints' direct solve on forests (src/physics/joint_tree_solver.h) against the general sparse
// factorization, and loops, which take the general one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "../../src/physics/joint_direct_solver.h"
#include "kinema/physics/mass_properties.h"
#include "kinema/physics/rigid_world.h"

namespace kinema {
namespace {

using detail::JointDirectSolver;
using detail::JointState;

constexpr double kStep = 1.0 / 60;

// mt19937_64's output is fixed by the standard; the distributions are not.
double uniform(std::mt19937_64& g, double lo, double hi) {
  return lo + (hi - lo) * double(g() >> 11) * 0x1p-53;
}

Vec3 random_vector(std::mt19937_64& g, double r) {
  return {uniform(g, -r, r), uniform(g, -r, r), uniform(g, -r, r)};
}

struct System {
  std::vector<RigidBody> bodies;
  std::vector<JointState> joints;
  std::vector<RigidBody*> pointers;
  std::vector<Mat3> inverse_inertia;

  System() = default;
  System(const System& other) : bodies(other.bodies), joints(other.joints) {}

  // This step's rows, as RigidWorld builds them before the direct solve.
  void prepare() {
    pointers.clear();
    inverse_inertia.clear();
    for (RigidBody& b : bodies) {
      pointers.push_back(&b);
      inverse_inertia.push_back(world_inverse_inertia(b));
    }
    for (JointState& j : joints)
      detail::prepare_joint(j, bodies[j.desc.a], bodies[j.desc.b], inverse_inertia[j.desc.a],
                            inverse_inertia[j.desc.b], kStep, false);
  }

  void factor(JointDirectSolver& solver) {
    solver.factor(pointers, inverse_inertia, joints, std::vector<char>(joints.size(), 1));
  }

  void add_joint(const JointDesc& desc) {
    JointState j;
    j.desc = desc;
    detail::initialise_joint(j, bodies[desc.a], bodies[desc.b]);
    joints.push_back(j);
  }

  // The largest speed at which a joint's anchors part (m/s).
  double worst_anchor_speed() const {
    double worst = 0;
    for (const JointState& j : joints) {
      const RigidBody& a = bodies[j.desc.a];
      const RigidBody& b = bodies[j.desc.b];
      const Vec3 va = a.linear_velocity + cross(a.angular_velocity, j.ra);
      const Vec3 vb = b.linear_velocity + cross(b.angular_velocity, j.rb);
      worst = std::max(worst, j.desc.kind == JointKind::Distance
                                  ? std::abs(dot(vb - va, j.rod_direction))
                                  : length(vb - va));
    }
    return worst;
  }
};

RigidBody random_body(std::mt19937_64& g, const Vec3& at) {
  const RigidShape box =
      box_shape({uniform(g, 0.05, 0.3), uniform(g, 0.05, 0.3), uniform(g, 0.05, 0.3)});
  const Quat q =
      Quat::from_axis_angle(normalize(random_vector(g, 1) + Vec3{0, 0, 1e-3}), uniform(g, -3, 3));
  RigidBody b = make_dynamic_body(mass_properties(box, uniform(g, 300, 3000)), at, q);
  b.linear_velocity = random_vector(g, 2);
  b.angular_velocity = random_vector(g, 5);
  return b;
}

// Body 0 is static; every other body hangs from an earlier one or from body 0 by a joint of a
// random kind: a forest over the moving bodies, with many joints to the static body.
System random_tree(std::uint64_t seed, int moving) {
  std::mt19937_64 g(seed);
  System s;
  s.bodies.push_back(make_static_body({0, 0, 0}, Quat::identity()));
  for (int i = 1; i <= moving; ++i) {
    s.bodies.push_back(random_body(g, random_vector(g, 2)));
    JointDesc d;
    d.a = i == 1 || g() % 4 == 0 ? 0 : std::uint32_t(1 + g() % std::uint64_t(i - 1));
    d.b = std::uint32_t(i);
    const Vec3 pa = s.bodies[d.a].position, pb = s.bodies[d.b].position;
    d.anchor = (pa + pb) * 0.5 + random_vector(g, 0.1);
    d.axis = normalize(random_vector(g, 1) + Vec3{1e-3, 0, 0});
    const JointKind kinds[] = {JointKind::Ball, JointKind::Hinge, JointKind::ConeTwist,
                               JointKind::Fixed, JointKind::Distance};
    d.kind = kinds[g() % 5];
    if (d.kind == JointKind::Distance) {  // a rigid rod between points near each body
      d.anchor = pa + random_vector(g, 0.1);
      d.anchor_b = pb + random_vector(g, 0.1);
    }
    s.add_joint(d);
  }
  return s;
}

// The same system twice, prepared and factored: by the tree solver and by the general one.
struct TwoSolvers {
  System tree, general;
  JointDirectSolver tree_solver, general_solver;

  explicit TwoSolvers(const System& system) : tree(system), general(system) {
    tree.prepare();
    general.prepare();
    general_solver.allow_tree_solver(false);
    tree.factor(tree_solver);
    general.factor(general_solver);
  }
};

double max_abs(const Vec3& v) { return std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)}); }

TEST(JointTreeSolver, MatchesTheSparseFactorizationOnRandomTrees) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    TwoSolvers both(random_tree(seed, 40));
    auto& [tree, general, tree_solver, general_solver] = both;
    ASSERT_TRUE(tree_solver.using_tree_solver());
    ASSERT_FALSE(general_solver.using_tree_solver());
    const System before = tree;
    tree_solver.solve_velocities(tree.pointers, tree.inverse_inertia, tree.joints);
    general_solver.solve_velocities(general.pointers, general.inverse_inertia, general.joints);
    // Both bring every anchor to rest relative to its partner (but for the regularization) ...
    EXPECT_GT(before.worst_anchor_speed(), 0.1);
    EXPECT_LT(tree.worst_anchor_speed(), 1e-5 * before.worst_anchor_speed());
    // ... with the same impulses, to ~1e-9 of the change they make.
    double change = 0, difference = 0;
    for (std::size_t i = 1; i < tree.bodies.size(); ++i) {
      change = std::max(
          {change, max_abs(tree.bodies[i].linear_velocity - before.bodies[i].linear_velocity),
           max_abs(tree.bodies[i].angular_velocity - before.bodies[i].angular_velocity)});
      difference = std::max(
          {difference, max_abs(tree.bodies[i].linear_velocity - general.bodies[i].linear_velocity),
           max_abs(tree.bodies[i].angular_velocity - general.bodies[i].angular_velocity)});
    }
    EXPECT_LE(difference, 1e-9 * change);
    double impulse = 0, impulse_difference = 0;
    for (std::size_t j = 0; j < tree.joints.size(); ++j) {
      impulse = std::max(
          {impulse, max_abs(tree.joints[j].point_lambda), std::abs(tree.joints[j].rod_lambda)});
      impulse_difference =
          std::max({impulse_difference,
                    max_abs(tree.joints[j].point_lambda - general.joints[j].point_lambda),
                    std::abs(tree.joints[j].rod_lambda - general.joints[j].rod_lambda)});
    }
    EXPECT_LE(impulse_difference, 1e-9 * impulse);
    // The position pass after a step: the same Newton step on the drift.
    for (System* s : {&tree, &general})
      for (std::size_t i = 1; i < s->bodies.size(); ++i) {
        RigidBody& b = s->bodies[i];
        b.position += b.linear_velocity * kStep;
        b.orientation = turned_by(b.orientation, b.angular_velocity * kStep);
      }
    const System moved = tree;
    tree_solver.stabilize_positions(tree.pointers, tree.inverse_inertia, tree.joints, 0.0);
    general_solver.stabilize_positions(general.pointers, general.inverse_inertia, general.joints,
                                       0.0);
    double moved_by = 0, moved_difference = 0;
    for (std::size_t i = 1; i < tree.bodies.size(); ++i) {
      moved_by = std::max(moved_by, max_abs(tree.bodies[i].position - moved.bodies[i].position));
      moved_difference =
          std::max(moved_difference, max_abs(tree.bodies[i].position - general.bodies[i].position));
    }
    EXPECT_GT(moved_by, 0);
    EXPECT_LE(moved_difference, 1e-9 * moved_by);
  }
}

// The largest distance between a joint's two anchors (m), over the point joints.
double worst_anchor_gap(const System& s) {
  double worst = 0;
  for (const JointState& j : s.joints) {
    if (j.desc.kind == JointKind::Distance) continue;
    const RigidBody& a = s.bodies[j.desc.a];
    const RigidBody& b = s.bodies[j.desc.b];
    worst = std::max(worst, length((a.position + rotate(a.orientation, j.anchor_a)) -
                                   (b.position + rotate(b.orientation, j.anchor_b))));
  }
  return worst;
}

// The position passes settle each tree of joints on its own: trees already within the tolerance
// are not moved at all (not even by the rounding of a zero correction), the others are brought
// within it, as the general solve, which takes every joint every pass, brings them.
TEST(JointTreeSolver, PositionPassesLeaveSettledTreesAlone) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(seed);
    TwoSolvers both(random_tree(seed, 40));
    auto& [tree, general, tree_solver, general_solver] = both;
    // Body i hangs from joint i − 1; the tree it belongs to is named by its body on the world.
    std::vector<std::size_t> root(tree.bodies.size(), 0);
    for (std::size_t i = 1; i < tree.bodies.size(); ++i) {
      const std::size_t parent = tree.joints[i - 1].desc.a;
      root[i] = parent == 0 ? i : root[parent];
    }
    tree_solver.solve_velocities(tree.pointers, tree.inverse_inertia, tree.joints);
    general_solver.solve_velocities(general.pointers, general.inverse_inertia, general.joints);
    // Every joint was closed where it was made; a step moves the trees of odd roots only, at a
    // fifth of the random speeds (J·v = 0 still holds): the bodies' 2 m arms turning at 5 rad/s
    // open gaps a Newton pass does not always come back from.
    for (System* s : {&tree, &general})
      for (std::size_t i = 1; i < s->bodies.size(); ++i) {
        if (root[i] % 2 == 0) continue;
        RigidBody& b = s->bodies[i];
        b.position += b.linear_velocity * (0.2 * kStep);
        b.orientation = turned_by(b.orientation, b.angular_velocity * (0.2 * kStep));
      }
    const System moved = tree;
    ASSERT_GT(worst_anchor_gap(moved), 1e-6);
    constexpr double kTolerance = 1e-9;
    int tree_passes = 0, general_passes = 0;
    while (tree_passes < 16 && tree_solver.stabilize_positions(tree.pointers, tree.inverse_inertia,
                                                               tree.joints, kTolerance, 4))
      ++tree_passes;
    while (general_passes < 16 &&
           general_solver.stabilize_positions(general.pointers, general.inverse_inertia,
                                              general.joints, kTolerance, 4))
      ++general_passes;
    EXPECT_LT(tree_passes, 16);
    EXPECT_LT(general_passes, 16);
    EXPECT_LE(worst_anchor_gap(tree), 10 * kTolerance);
    EXPECT_LE(worst_anchor_gap(general), 10 * kTolerance);
    for (std::size_t i = 1; i < tree.bodies.size(); ++i) {
      if (root[i] % 2 != 0) continue;
      EXPECT_EQ(tree.bodies[i].position, moved.bodies[i].position) << "body " << i;
      EXPECT_EQ(tree.bodies[i].orientation, moved.bodies[i].orientation) << "body " << i;
    }
  }
}

TEST(JointTreeSolver, HubsOfManyJointsTakeTheSparseFactorization) {
  for (const int spokes : {16, 17}) {
    std::mt19937_64 g(3);
    System star;
    star.bodies.push_back(make_static_body({0, 0, 0}, Quat::identity()));
    star.bodies.push_back(random_body(g, {0, 0, 0}));
    for (int i = 0; i < spokes; ++i) {
      const double angle = 2 * std::numbers::pi * i / spokes;
      const Vec3 at{0.5 * std::cos(angle), 0.5 * std::sin(angle), 0};
      star.bodies.push_back(random_body(g, at));
      JointDesc d;
      d.a = 1;
      d.b = std::uint32_t(star.bodies.size() - 1);
      d.anchor = at * 0.5;
      star.add_joint(d);
    }
    star.prepare();
    const double before = star.worst_anchor_speed();
    JointDirectSolver solver;
    star.factor(solver);
    EXPECT_EQ(solver.using_tree_solver(), spokes <= 16);
    solver.solve_velocities(star.pointers, star.inverse_inertia, star.joints);
    EXPECT_LT(star.worst_anchor_speed(), 1e-5 * before);
  }
}

TEST(JointTreeSolver, LoopsTakeTheSparseFactorizationAndHold) {
  // Eight boxes in a ring, each joined to the next by a ball joint, one pinned to the world.
  std::mt19937_64 g(7);
  System ring;
  ring.bodies.push_back(make_static_body({0, 0, 0}, Quat::identity()));
  const int n = 8;
  for (int i = 0; i < n; ++i) {
    const double angle = 2 * std::numbers::pi * i / n;
    ring.bodies.push_back(random_body(g, {0.5 * std::cos(angle), 0.5 * std::sin(angle), 0}));
  }
  for (int i = 0; i < n; ++i) {
    JointDesc d;
    d.a = std::uint32_t(1 + i);
    d.b = std::uint32_t(1 + (i + 1) % n);
    d.anchor = (ring.bodies[d.a].position + ring.bodies[d.b].position) * 0.5;
    ring.add_joint(d);
  }
  JointDesc pin;
  pin.a = 0;
  pin.b = 1;
  pin.anchor = ring.bodies[1].position;
  ring.add_joint(pin);
  ring.prepare();
  const double before = ring.worst_anchor_speed();
  JointDirectSolver solver;
  ring.factor(solver);
  EXPECT_FALSE(solver.using_tree_solver());
  solver.solve_velocities(ring.pointers, ring.inverse_inertia, ring.joints);
  EXPECT_LT(ring.worst_anchor_speed(), 1e-5 * before);

  // The same ring in a world, swinging and spinning about its pin for two seconds.
  RigidWorldSettings settings;
  settings.sleeping = false;
  RigidWorld world(settings);
  world.add_body(make_static_body({0, 0, 0}, Quat::identity()), sphere_shape(0.01), {}, "pin");
  const RigidShape box = box_shape({0.05, 0.05, 0.05});
  for (int i = 0; i < n; ++i) {
    const double angle = 2 * std::numbers::pi * i / n;
    RigidBody b = make_dynamic_body(mass_properties(box, 1000),
                                    {0.5 * std::cos(angle), 0.5 * std::sin(angle) - 0.5, 0},
                                    Quat::identity());
    b.linear_velocity = {0, 0, 2 * std::cos(angle)};
    world.add_body(b, box);
  }
  for (int i = 0; i < n; ++i) {
    JointDesc d;
    d.a = BodyId(1 + i);
    d.b = BodyId(1 + (i + 1) % n);
    d.anchor = (world.body(d.a).position + world.body(d.b).position) * 0.5;
    world.add_joint(d);
  }
  JointDesc top;
  top.a = 0;
  top.b = BodyId(1 + n / 4);  // the ring's top body, at (0, 0, 0)
  top.anchor = world.body(top.b).position;
  world.add_joint(top);
  double worst = 0;
  for (int i = 0; i < 120; ++i) {
    world.step(kStep);
    for (JointId j = 0; j < world.joint_count(); ++j) worst = std::max(worst, world.joint_error(j));
  }
  EXPECT_LT(worst, 1e-4);
  EXPECT_LT(world.body(BodyId(1 + 3 * n / 4)).position.y, -0.5);  // still hanging below the pin
}

}  // namespace
}  // namespace kinema
