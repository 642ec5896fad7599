// The rigid-body world (kinema/physics/rigid_world.h): broad and narrow phase, sequential
// impulses with friction and warm starting, continuous collision against static bodies,
// penetration recovery on positions, islands and sleep.
#include "kinema/physics/rigid_world.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <utility>

#include <tbb/task_arena.h>

#include "contact_batches.h"
#include "joint_direct_solver.h"
#include "kinema/core/error.h"
#include "kinema/physics/narrow_phase.h"
#include "parallel_blocks.h"
#include "rigid_joint_solver.h"

namespace kinema {

namespace {

// A persisting contact point is recognised by where it sits on body A: within this distance of
// last step's point (m), its impulses are reused to start the solver (warm starting).
constexpr double kWarmStartMatchDistance = 0.02;

struct BodyEntry {
  RigidBody body;
  RigidShape shape;
  RigidMaterial material;
  std::string name;
  std::shared_ptr<const TriangleBvh> bvh;  // triangle meshes: their triangles' hierarchy
  Vec3 bounds_lo, bounds_hi;               // the shape's own bounds
  double inner_radius = 0;  // below this motion a step cannot tunnel through anything (m)
};

// One contact point as the solver sees it.
struct SolverPoint {
  BodyId a = 0, b = 0;
  Vec3 normal, tangent1, tangent2;
  Vec3 anchor_a, anchor_b;  // the deepest points of A and B, in their body frames (from the COM)
  Vec3 point;               // world, midway (m)
  double depth = 0;
  double normal_mass = 0, tangent_mass1 = 0, tangent_mass2 = 0;
  double velocity_bias = 0;  // restitution's target separating speed (m/s)
  double friction = 0;
  double jn = 0, jt1 = 0, jt2 = 0;  // accumulated impulses (N·s)
  // For each direction d of normal, tangent1, tangent2: the arms' moments r × d, and what a unit
  // impulse along d does to each body's angular velocity, I⁻¹(r × d) — computed once a step so
  // that each pass is a few dot products per point.
  Vec3 ra_cross[3], rb_cross[3], turn_a[3], turn_b[3];
};

// Last step's impulse at a contact point, for warm starting; the cache is a flat list sorted by
// pair (a map of vectors cost two allocations per touching pair every step).
struct CachedPoint {
  BodyId a = 0, b = 0;  // the pair, a < b
  Vec3 anchor_a;
  double jn = 0;
  Vec3 jt;  // world friction impulse, re-projected on the new tangents
};

}  // namespace

struct RigidWorld::Impl {
  RigidWorldSettings settings;
  std::vector<BodyEntry> bodies;
  std::unique_ptr<BroadPhase> broad;
  std::vector<ProxyPair> pairs;
  std::vector<SolverPoint> points;
  std::vector<char> touching;                  // per body: in a contact point this step
  std::vector<Mat3> inverse_inertia;           // world, per body, this step
  std::vector<CachedPoint> cache, next_cache;  // sorted by (a, b)
  std::vector<RigidContact> contacts;
  std::vector<detail::JointState> joints;
  detail::JointDirectSolver joint_solver;
  std::vector<RigidBody*> body_pointers;  // for the joint solvers, this step
  std::vector<char> joint_taking_part;
  std::vector<std::pair<BodyId, BodyId>> unjoined_pairs;  // sorted: pairs a joint keeps apart
  std::size_t awake_islands = 0;
  int last_substeps = 1;
  int last_stabilization_passes = 0;                  // over the last step's substeps
  std::vector<std::pair<Vec3, Vec3>> applied_forces;  // the caller's force and torque, per body
  std::vector<ContactManifold> manifolds;             // per broad-phase pair, this step
  std::vector<char> pair_touches;                     // per pair: its manifold has points
  std::vector<std::size_t> manifold_start;            // each manifold's first point, then the end
  std::vector<char> warm_started;                     // per point: last step's impulse found
  // The contact pass four manifolds at a time (contact_batches.h), rebuilt each substep.
  std::vector<detail::ContactBatch> contact_batches;
  std::vector<detail::WideContactPoint> wide_points;
  std::vector<std::uint32_t> manifold_a, manifold_b;  // per manifold: its two bodies
  std::vector<char> body_moves;                       // per body: inverse mass > 0
  std::vector<std::int32_t> body_last_batch;          // scratch for the batching
  std::unique_ptr<tbb::task_arena> arena;             // made when more than one thread is asked
  int arena_threads = 0;

  // Runs body(begin, end) over [0, n) in blocks of `block` indices on settings.threads threads
  // (parallel_blocks.h; the arena is made when more than one thread is first asked).
  template <class Body>
  void for_blocks(std::size_t n, std::size_t block, const Body& body) {
    const int threads = settings.threads;
    if (threads != 1 && (!arena || arena_threads != threads)) {
      arena = std::make_unique<tbb::task_arena>(threads > 0 ? threads
                                                            : int(tbb::task_arena::automatic));
      arena_threads = threads;
    }
    detail::for_blocks(arena.get(), threads, n, block, body);
  }

  bool active(BodyId id) const { return !is_static(bodies[id].body) && bodies[id].body.awake; }

  // A joint takes part in the step when it holds and one of its bodies moves.
  bool joint_active(const detail::JointState& j) const {
    return !j.broken && (active(j.desc.a) || active(j.desc.b));
  }

  void wake(BodyId id) {
    if (is_static(bodies[id].body) || bodies[id].body.awake) return;
    set_awake(bodies[id].body, true);
    inverse_inertia[id] = world_inverse_inertia(bodies[id].body);
  }

  Pose pose(BodyId id) const {
    const RigidBody& b = bodies[id].body;
    return {shape_origin(b), b.orientation};
  }

  Aabb bounds(BodyId id) const {
    const BodyEntry& e = bodies[id];
    const Pose p = pose(id);
    const Mat3 r = Mat3::from_quat(p.orientation);
    const Vec3 centre_local = (e.bounds_lo + e.bounds_hi) * 0.5;
    const Vec3 half = (e.bounds_hi - e.bounds_lo) * 0.5;
    Vec3 extent;
    for (int i = 0; i < 3; ++i)
      extent[i] = std::abs(r.m[i][0]) * half.x + std::abs(r.m[i][1]) * half.y +
                  std::abs(r.m[i][2]) * half.z;
    const Vec3 centre = p.to_world(centre_local);
    return {centre - extent, centre + extent};
  }

  void apply_impulse(BodyId id, const Vec3& impulse, const Vec3& r) {
    RigidBody& b = bodies[id].body;
    if (is_static(b)) return;
    b.linear_velocity += impulse * b.inverse_mass;
    b.angular_velocity += inverse_inertia[id] * cross(r, impulse);
  }

  void step(double h);
  void collide_pairs();
  void prepare_and_warm_start(double h);
  void prepare_points(std::size_t begin, std::size_t end);
  void match_cached_points(std::size_t begin, std::size_t end);
  void solve_velocities();
  void batch_contacts();
  void unbatch_contacts();
  void integrate_positions(double h);
  void recover_penetration();
  void store_cache_and_contacts();
  void sleep_islands(double h);
};

RigidWorld::RigidWorld(const RigidWorldSettings& settings) : impl_(std::make_unique<Impl>()) {
  impl_->settings = settings;
  impl_->broad = make_broad_phase(settings.broad_phase);
}
RigidWorld::~RigidWorld() = default;
RigidWorld::RigidWorld(RigidWorld&&) noexcept = default;
RigidWorld& RigidWorld::operator=(RigidWorld&&) noexcept = default;

BodyId RigidWorld::add_body(const RigidBody& body, RigidShape shape, const RigidMaterial& material,
                            std::string name) {
  const BodyId id = BodyId(impl_->bodies.size());
  if (name.empty()) name = "body " + std::to_string(id);
  validate_shape(shape, name);
  if (!is_static(body) && !is_convex(shape))
    throw Error({}, name,
                std::string("a ") + shape_kind_name(shape.kind) +
                    " cannot be a dynamic body (it has no convex support); make it static, or "
                    "use its convex hull");
  if (!(material.friction >= 0) || !std::isfinite(material.friction))
    throw Error({}, name, "friction must be ≥ 0 and finite");
  if (!(material.restitution >= 0 && material.restitution <= 1))
    throw Error({}, name, "restitution must be within [0, 1]");
  if (!is_finite(body.position) || !is_finite(body.linear_velocity) ||
      !is_finite(body.angular_velocity))
    throw Error({}, name, "position or velocity is not finite");
  BodyEntry e;
  e.body = body;
  e.body.orientation = normalize(body.orientation);
  e.shape = std::move(shape);
  e.material = material;
  e.name = std::move(name);
  shape_bounds(e.shape, e.bounds_lo, e.bounds_hi);
  if (e.shape.kind == ShapeKind::TriangleMesh) e.bvh = std::make_shared<const TriangleBvh>(e.shape);
  const Vec3 size = e.bounds_hi - e.bounds_lo;
  e.inner_radius = 0.5 * std::min({size.x, size.y, size.z});
  impl_->bodies.push_back(std::move(e));
  impl_->broad->insert(id, impl_->bounds(id));
  return id;
}

JointId RigidWorld::add_joint(const JointDesc& desc) {
  Impl& w = *impl_;
  const JointId id = JointId(w.joints.size());
  const std::string name = "joint " + std::to_string(id);
  auto fail = [&](const std::string& reason) {
    throw Error({}, name, std::string(joint_kind_name(desc.kind)) + " joint: " + reason);
  };
  if (desc.a >= w.bodies.size() || desc.b >= w.bodies.size())
    fail("names body " + std::to_string(std::max(desc.a, desc.b)) + " of " +
         std::to_string(w.bodies.size()));
  if (desc.a == desc.b) fail("joins a body to itself");
  if (is_static(w.bodies[desc.a].body) && is_static(w.bodies[desc.b].body))
    fail("joins two static bodies");
  if (!is_finite(desc.anchor) || !is_finite(desc.anchor_b) || !is_finite(desc.axis))
    fail("anchor or axis is not finite");
  if (!(length(desc.axis) > 0)) fail("axis is zero");
  constexpr double pi = 3.141592653589793;
  if (desc.limit && !(desc.lower <= desc.upper && desc.lower > -pi && desc.upper < pi))
    fail("limits must satisfy −π < lower ≤ upper < π");
  if (desc.motor && !(desc.max_motor_torque >= 0 && std::isfinite(desc.motor_speed)))
    fail("motor needs a finite speed and a torque ≥ 0");
  if (desc.kind == JointKind::ConeTwist &&
      !(desc.swing_limit > 0 && desc.swing_limit < pi && desc.twist_lower <= desc.twist_upper &&
        desc.twist_lower > -pi && desc.twist_upper < pi))
    fail("needs 0 < swing_limit < π and −π < twist_lower ≤ twist_upper < π");
  if (desc.kind == JointKind::Distance &&
      !(desc.min_distance >= 0 && desc.min_distance <= desc.max_distance &&
        std::isfinite(desc.max_distance)))
    fail("needs 0 ≤ min_distance ≤ max_distance, finite");
  if (!(desc.break_impulse > 0)) fail("break_impulse must be > 0 (infinity for unbreakable)");
  detail::JointState j;
  j.desc = desc;
  detail::initialise_joint(j, w.bodies[desc.a].body, w.bodies[desc.b].body);
  w.joints.push_back(j);
  if (!desc.collide_connected) {
    const std::pair key{std::min(desc.a, desc.b), std::max(desc.a, desc.b)};
    w.unjoined_pairs.insert(std::lower_bound(w.unjoined_pairs.begin(), w.unjoined_pairs.end(), key),
                            key);
  }
  return id;
}

void RigidWorld::disable_collision(BodyId a, BodyId b) {
  Impl& w = *impl_;
  if (a == b || a >= w.bodies.size() || b >= w.bodies.size()) return;
  const std::pair key{std::min(a, b), std::max(a, b)};
  const auto at = std::lower_bound(w.unjoined_pairs.begin(), w.unjoined_pairs.end(), key);
  if (at == w.unjoined_pairs.end() || *at != key) w.unjoined_pairs.insert(at, key);
}

std::size_t RigidWorld::joint_count() const { return impl_->joints.size(); }
const JointDesc& RigidWorld::joint(JointId id) const { return impl_->joints.at(id).desc; }
bool RigidWorld::joint_broken(JointId id) const { return impl_->joints.at(id).broken; }
double RigidWorld::joint_impulse(JointId id) const { return impl_->joints.at(id).last_impulse; }
double RigidWorld::joint_error(JointId id) const {
  const detail::JointState& j = impl_->joints.at(id);
  return detail::joint_position_error(j, impl_->bodies[j.desc.a].body,
                                      impl_->bodies[j.desc.b].body);
}

std::size_t RigidWorld::body_count() const { return impl_->bodies.size(); }
RigidBody& RigidWorld::body(BodyId id) { return impl_->bodies.at(id).body; }
const RigidBody& RigidWorld::body(BodyId id) const { return impl_->bodies.at(id).body; }
const RigidShape& RigidWorld::shape(BodyId id) const { return impl_->bodies.at(id).shape; }
const std::string& RigidWorld::name(BodyId id) const { return impl_->bodies.at(id).name; }
const RigidWorldSettings& RigidWorld::settings() const { return impl_->settings; }
RigidWorldSettings& RigidWorld::settings() { return impl_->settings; }
const std::vector<RigidContact>& RigidWorld::contacts() const { return impl_->contacts; }
std::size_t RigidWorld::awake_island_count() const { return impl_->awake_islands; }
int RigidWorld::last_substeps() const { return impl_->last_substeps; }
int RigidWorld::last_stabilization_passes() const { return impl_->last_stabilization_passes; }
Aabb RigidWorld::world_bounds(BodyId id) const { return impl_->bounds(id); }

double RigidWorld::kinetic_energy() const {
  double sum = 0;
  for (const BodyEntry& e : impl_->bodies) sum += kinema::kinetic_energy(e.body);
  return sum;
}

void RigidWorld::step(double h) {
  if (!(h > 0) || !std::isfinite(h)) return;
  const RigidWorldSettings& st = impl_->settings;
  int substeps = std::max(1, st.substeps);
  // Jointed bodies spinning fast need smaller steps: the joints are exact in velocity, but a step
  // turns each body along a straight line in angle, and the drift grows with the turn squared.
  if (st.max_joint_turn_per_substep > 0 && !impl_->joints.empty()) {
    double fastest = 0;
    for (const detail::JointState& j : impl_->joints) {
      if (j.broken) continue;
      for (const std::uint32_t id : {j.desc.a, j.desc.b}) {
        const RigidBody& b = impl_->bodies[id].body;
        if (!is_static(b) && b.awake) fastest = std::max(fastest, length(b.angular_velocity));
      }
    }
    const double needed = std::ceil(fastest * h / st.max_joint_turn_per_substep);
    substeps = std::max(substeps, int(std::min(needed, double(std::max(1, st.max_substeps)))));
  }
  impl_->last_substeps = substeps;
  impl_->last_stabilization_passes = 0;
  // The caller's forces act over the whole step: each substep gets them again.
  std::vector<std::pair<Vec3, Vec3>>& applied = impl_->applied_forces;
  applied.resize(impl_->bodies.size());
  for (std::size_t i = 0; i < applied.size(); ++i)
    applied[i] = {impl_->bodies[i].body.force, impl_->bodies[i].body.torque};
  for (int k = 0; k < substeps; ++k) {
    if (k > 0)
      for (std::size_t i = 0; i < applied.size(); ++i)
        std::tie(impl_->bodies[i].body.force, impl_->bodies[i].body.torque) = applied[i];
    impl_->step(h / substeps);
  }
}

void RigidWorld::Impl::step(double h) {
  Impl& w = *this;
  w.inverse_inertia.resize(w.bodies.size());
  w.for_blocks(w.bodies.size(), 256, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      integrate_velocity(w.bodies[i].body, w.settings.gravity, h);
      w.inverse_inertia[i] = world_inverse_inertia(w.bodies[i].body);
    }
  });
  w.collide_pairs();
  for (detail::JointState& j : w.joints)
    if (w.joint_active(j)) {
      w.wake(j.desc.a);
      w.wake(j.desc.b);
    }
  w.prepare_and_warm_start(h);
  for (detail::JointState& j : w.joints)
    if (w.joint_active(j))
      detail::prepare_joint(j, w.bodies[j.desc.a].body, w.bodies[j.desc.b].body,
                            w.inverse_inertia[j.desc.a], w.inverse_inertia[j.desc.b], h,
                            w.settings.warm_starting);
  w.body_pointers.resize(w.bodies.size());
  for (std::size_t i = 0; i < w.bodies.size(); ++i) w.body_pointers[i] = &w.bodies[i].body;
  w.joint_taking_part.resize(w.joints.size());
  for (std::size_t i = 0; i < w.joints.size(); ++i)
    w.joint_taking_part[i] = w.joint_active(w.joints[i]);
  w.joint_solver.factor(w.body_pointers, w.inverse_inertia, w.joints, w.joint_taking_part);
  w.solve_velocities();
  for (detail::JointState& j : w.joints)
    if (w.joint_active(j)) detail::finish_joint_step(j);
  w.integrate_positions(h);
  w.recover_penetration();
  const double inertia_scale = w.settings.joint_stabilization_inertia_scale;
  // Bodies touching something keep their own inertias in the passes' metric: the contacts have
  // already pushed them out, and the heavier metric's moves pushed a pile of ragdolls 19 mm into
  // the floor where turning them (as their own inertias say) leaves 11 mm.
  if (!w.joints.empty()) {
    w.touching.assign(w.bodies.size(), 0);
    for (const SolverPoint& p : w.points) w.touching[p.a] = w.touching[p.b] = 1;
  }
  for (int pass = 0; pass < w.settings.joint_stabilization_passes; ++pass)
    if (!w.joint_solver.stabilize_positions(
            w.body_pointers, w.inverse_inertia, w.joints, w.settings.joint_stabilization_tolerance,
            inertia_scale > 0 && std::isfinite(inertia_scale) ? inertia_scale : 1, &w.touching))
      break;
    else
      ++w.last_stabilization_passes;
  w.store_cache_and_contacts();
  w.sleep_islands(h);
}

void RigidWorld::Impl::collide_pairs() {
  for (BodyId id = 0; id < bodies.size(); ++id)
    if (active(id)) broad->update(id, bounds(id));
  broad->pairs(pairs);
  points.clear();
  manifold_start.clear();
  // Each pair's manifold on its own (in parallel when asked), then gathered in pair order: the
  // same points, wakes and warm starts whatever the thread count.
  manifolds.resize(pairs.size());
  pair_touches.resize(pairs.size());
  for_blocks(pairs.size(), 32, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const BodyId a = pairs[i].first, b = pairs[i].second;
      pair_touches[i] = 0;
      if (!active(a) && !active(b)) continue;  // static or sleeping on both sides
      if (std::binary_search(unjoined_pairs.begin(), unjoined_pairs.end(), std::pair{a, b}))
        continue;
      const TriangleBvh* bvh = bodies[a].bvh ? bodies[a].bvh.get() : bodies[b].bvh.get();
      ContactManifold& m = manifolds[i];
      pair_touches[i] =
          collide(bodies[a].shape, pose(a), bodies[b].shape, pose(b), m, bvh) && m.count > 0;
    }
  });
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (!pair_touches[i]) continue;
    const BodyId a = pairs[i].first, b = pairs[i].second;
    const ContactManifold& m = manifolds[i];
    // A touched sleeper wakes (its island follows in sleep_islands).
    wake(a);
    wake(b);
    const RigidBody& ba = bodies[a].body;
    const RigidBody& bb = bodies[b].body;
    const double friction = std::sqrt(bodies[a].material.friction * bodies[b].material.friction);
    manifold_start.push_back(points.size());
    for (int k = 0; k < m.count; ++k) {
      SolverPoint& p = points.emplace_back();  // in place: the point is half a kilobyte
      p.a = a;
      p.b = b;
      p.normal = m.normal;
      p.point = m.points[k].position;
      p.depth = m.points[k].depth;
      const Vec3 deepest_a = p.point + m.normal * (0.5 * p.depth);
      const Vec3 deepest_b = p.point - m.normal * (0.5 * p.depth);
      p.anchor_a = rotate(conjugate(ba.orientation), deepest_a - ba.position);
      p.anchor_b = rotate(conjugate(bb.orientation), deepest_b - bb.position);
      p.friction = friction;
    }
  }
  manifold_start.push_back(points.size());
}

void RigidWorld::Impl::prepare_and_warm_start(double) {
  // Each point's arms, masses and last step's impulses on their own (in parallel when asked);
  // the warm-start impulses are then applied in order, as the iterations will be.
  warm_started.assign(points.size(), 0);
  for_blocks(points.size(), 64, [&](std::size_t begin, std::size_t end) {
    prepare_points(begin, end);
    if (settings.warm_starting) match_cached_points(begin, end);
  });
  if (!settings.warm_starting) return;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!warm_started[i]) continue;
    const SolverPoint& p = points[i];
    const Vec3 impulse = p.normal * p.jn + p.tangent1 * p.jt1 + p.tangent2 * p.jt2;
    apply_impulse(p.a, -impulse, p.point - bodies[p.a].body.position);
    apply_impulse(p.b, impulse, p.point - bodies[p.b].body.position);
  }
}

void RigidWorld::Impl::prepare_points(std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    SolverPoint& p = points[i];
    const RigidBody& a = bodies[p.a].body;
    const RigidBody& b = bodies[p.b].body;
    const Vec3 ra = p.point - a.position, rb = p.point - b.position;
    p.tangent1 = normalize(any_perpendicular(p.normal));
    p.tangent2 = cross(p.normal, p.tangent1);
    const bool a_moves = !is_static(a), b_moves = !is_static(b);
    const Vec3 directions[3] = {p.normal, p.tangent1, p.tangent2};
    double mass[3];
    for (int k = 0; k < 3; ++k) {
      p.ra_cross[k] = cross(ra, directions[k]);
      p.rb_cross[k] = cross(rb, directions[k]);
      p.turn_a[k] = inverse_inertia[p.a] * p.ra_cross[k];
      p.turn_b[k] = inverse_inertia[p.b] * p.rb_cross[k];
      // The inverse mass along the direction, 1/m + (r×d)·I⁻¹(r×d) on each moving side.
      const double k_inverse = (a_moves ? a.inverse_mass + dot(p.ra_cross[k], p.turn_a[k]) : 0.0) +
                               (b_moves ? b.inverse_mass + dot(p.rb_cross[k], p.turn_b[k]) : 0.0);
      mass[k] = k_inverse > 0 ? 1.0 / k_inverse : 0.0;
    }
    p.normal_mass = mass[0];
    p.tangent_mass1 = mass[1];
    p.tangent_mass2 = mass[2];
    const double approach =
        dot(velocity_at_point(b, p.point) - velocity_at_point(a, p.point), p.normal);
    const double e = std::max(bodies[p.a].material.restitution, bodies[p.b].material.restitution);
    p.velocity_bias = approach < -settings.restitution_threshold ? -e * approach : 0.0;
  }
}

void RigidWorld::Impl::match_cached_points(std::size_t begin, std::size_t end) {
  auto by_pair = [](const CachedPoint& c, std::pair<BodyId, BodyId> key) {
    return std::pair{c.a, c.b} < key;
  };
  // A pair's points are consecutive: its cached range is looked up once.
  std::pair<BodyId, BodyId> range_pair{BodyId(-1), BodyId(-1)};
  auto range_begin = cache.cend(), range_end = cache.cend();
  for (std::size_t i = begin; i < end; ++i) {
    SolverPoint& p = points[i];
    if (std::pair{p.a, p.b} != range_pair) {
      range_pair = {p.a, p.b};
      range_begin = std::lower_bound(cache.cbegin(), cache.cend(), range_pair, by_pair);
      range_end = range_begin;
      while (range_end != cache.cend() && range_end->a == p.a && range_end->b == p.b) ++range_end;
    }
    const CachedPoint* best = nullptr;
    double best_distance_squared = kWarmStartMatchDistance * kWarmStartMatchDistance;
    for (auto it = range_begin; it != range_end; ++it) {
      const CachedPoint& c = *it;
      const double d = length_squared(c.anchor_a - p.anchor_a);
      if (d < best_distance_squared) {
        best_distance_squared = d;
        best = &c;
      }
    }
    if (!best) continue;
    p.jn = best->jn;
    p.jt1 = dot(best->jt, p.tangent1);
    p.jt2 = dot(best->jt, p.tangent2);
    warm_started[i] = 1;
  }
}

void RigidWorld::Impl::solve_velocities() {
  // With nothing for the iterations to do (no contacts, joints all exact), one direct solve is
  // the answer: more passes would repeat it.
  bool iterate = !points.empty();
  for (const detail::JointState& j : joints)
    iterate = iterate || (joint_active(j) && detail::needs_iterations(j));
  const int passes = iterate ? settings.velocity_iterations : 1;
  batch_contacts();
  for (int iteration = 0; iteration < passes; ++iteration) {
    // The joints' exact solve first in each pass and the contacts after it: with the joints last,
    // a ragdoll's limb lying on its own body was pushed into it by every pass's projection and
    // back out by the contacts, and never came to rest (0.1 rad/s after 10 s on the floor; it
    // sleeps within 5 s this way). The step still ends on the exact solve, below.
    joint_solver.solve_velocities(body_pointers, inverse_inertia, joints);
    for (detail::JointState& j : joints)
      if (joint_active(j))
        detail::solve_joint_velocity(j, bodies[j.desc.a].body, bodies[j.desc.b].body,
                                     inverse_inertia[j.desc.a], inverse_inertia[j.desc.b]);
    // Four body-disjoint manifolds at a time, each the friction of all its points, then their
    // normal impulses (Box2D's and Jolt's order: the normal impulses, solved last, win where the
    // two fight, and no point of a face is always first to both).
    detail::solve_contact_batches(contact_batches, wide_points, body_pointers);
  }
  // Last, so that the step ends with the joints' equalities exactly satisfied (one pass with
  // nothing to iterate has just done it).
  if (iterate) joint_solver.solve_velocities(body_pointers, inverse_inertia, joints);
  unbatch_contacts();
}

void RigidWorld::Impl::batch_contacts() {
  const std::size_t manifold_count = manifold_start.empty() ? 0 : manifold_start.size() - 1;
  manifold_a.resize(manifold_count);
  manifold_b.resize(manifold_count);
  for (std::size_t m = 0; m < manifold_count; ++m) {
    manifold_a[m] = points[manifold_start[m]].a;
    manifold_b[m] = points[manifold_start[m]].b;
  }
  body_moves.resize(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) body_moves[i] = bodies[i].body.inverse_mass > 0;
  detail::deal_contact_batches(manifold_a, manifold_b, body_moves, contact_batches,
                               body_last_batch);
  std::size_t slots = 0;
  for (detail::ContactBatch& batch : contact_batches) {
    batch.first_slot = std::uint32_t(slots);
    batch.slot_count = 0;
    for (int l = 0; l < detail::kContactLanes && batch.manifold[l] >= 0; ++l) {
      const std::size_t m = std::size_t(batch.manifold[l]);
      batch.slot_count =
          std::max(batch.slot_count, std::uint32_t(manifold_start[m + 1] - manifold_start[m]));
      batch.inverse_mass_a[l] = bodies[batch.body_a[l]].body.inverse_mass;
      batch.inverse_mass_b[l] = bodies[batch.body_b[l]].body.inverse_mass;
    }
    slots += batch.slot_count;
  }
  wide_points.assign(slots, detail::WideContactPoint{});
  for (const detail::ContactBatch& batch : contact_batches)
    for (int l = 0; l < detail::kContactLanes && batch.manifold[l] >= 0; ++l) {
      const std::size_t m = std::size_t(batch.manifold[l]);
      for (std::size_t i = manifold_start[m]; i < manifold_start[m + 1]; ++i) {
        const SolverPoint& p = points[i];
        detail::WideContactPoint& w = wide_points[batch.first_slot + (i - manifold_start[m])];
        const Vec3 directions[3] = {p.normal, p.tangent1, p.tangent2};
        for (int k = 0; k < 3; ++k)
          for (int c = 0; c < 3; ++c) {
            w.direction[k][c][l] = directions[k][c];
            w.ra_cross[k][c][l] = p.ra_cross[k][c];
            w.rb_cross[k][c][l] = p.rb_cross[k][c];
            w.turn_a[k][c][l] = p.turn_a[k][c];
            w.turn_b[k][c][l] = p.turn_b[k][c];
          }
        w.mass[0][l] = p.normal_mass;
        w.mass[1][l] = p.tangent_mass1;
        w.mass[2][l] = p.tangent_mass2;
        w.velocity_bias[l] = p.velocity_bias;
        w.friction[l] = p.friction;
        w.impulse[0][l] = p.jn;
        w.impulse[1][l] = p.jt1;
        w.impulse[2][l] = p.jt2;
      }
    }
}

void RigidWorld::Impl::unbatch_contacts() {
  for (const detail::ContactBatch& batch : contact_batches)
    for (int l = 0; l < detail::kContactLanes && batch.manifold[l] >= 0; ++l) {
      const std::size_t m = std::size_t(batch.manifold[l]);
      for (std::size_t i = manifold_start[m]; i < manifold_start[m + 1]; ++i) {
        const detail::WideContactPoint& w = wide_points[batch.first_slot + (i - manifold_start[m])];
        points[i].jn = w.impulse[0][l];
        points[i].jt1 = w.impulse[1][l];
        points[i].jt2 = w.impulse[2][l];
      }
    }
}

void RigidWorld::Impl::integrate_positions(double h) {
  std::vector<ProxyId> nearby;
  for (BodyId id = 0; id < bodies.size(); ++id) {
    if (!active(id)) continue;
    BodyEntry& e = bodies[id];
    const Vec3 motion = e.body.linear_velocity * h;
    double fraction = 1;
    if (settings.continuous && length(motion) > e.inner_radius) {
      // Fast enough to pass through something thin: sweep it against the bodies on its way and
      // stop it at the first time of impact (it keeps its velocity; next step's contact
      // takes it from there).
      Aabb swept = bounds(id);
      const Aabb moved{swept.min + motion, swept.max + motion};
      swept = aabb_union(swept, moved);
      broad->query_near(ProxyId(id), swept, nearby);
      const Pose from = pose(id);
      for (ProxyId other : nearby) {
        if (other == id) continue;
        if (std::binary_search(unjoined_pairs.begin(), unjoined_pairs.end(),
                               std::pair{std::min(id, BodyId(other)), std::max(id, BodyId(other))}))
          continue;
        // Shapes already touching at the start are the contacts' business (a box sliding fast
        // along the ground must not be stopped by it).
        // A moving body is swept too, over the part of the step it has not taken yet (bodies
        // before this one have already moved).
        const Vec3 other_motion = other > id && active(BodyId(other))
                                      ? bodies[other].body.linear_velocity * h
                                      : Vec3{0, 0, 0};
        double t = 1;
        if (time_of_impact(e.shape, from, motion, bodies[other].shape, pose(other), other_motion, t,
                           1e-4, bodies[other].bvh.get()) &&
            t > 0 && t < fraction)
          fraction = t;
      }
    }
    if (fraction < 1) {
      // Stop just past first contact, half the slop deep, so that next step's contact sees the
      // overlap and takes the velocity away.
      const double travel = length(motion);
      fraction = std::min(1.0, fraction + 0.5 * settings.penetration_slop / travel);
    }
    e.body.position += motion * fraction;
    const Vec3 w = e.body.angular_velocity;
    e.body.orientation = turned_by(e.body.orientation, w * h);
  }
}

void RigidWorld::Impl::recover_penetration() {
  for (int iteration = 0; iteration < settings.position_iterations; ++iteration) {
    for (detail::JointState& j : joints)
      if (joint_active(j))
        detail::solve_joint_position(j, bodies[j.desc.a].body, bodies[j.desc.b].body,
                                     settings.joint_correction);
    for (SolverPoint& p : points) {
      RigidBody& a = bodies[p.a].body;
      RigidBody& b = bodies[p.b].body;
      const Vec3 xa = a.position + rotate(a.orientation, p.anchor_a);
      const Vec3 xb = b.position + rotate(b.orientation, p.anchor_b);
      const double separation = dot(xb - xa, p.normal);
      const double c =
          std::clamp(settings.position_correction * (separation + settings.penetration_slop),
                     -settings.max_correction, 0.0);
      if (c >= 0) continue;
      const Vec3 point = (xa + xb) * 0.5;
      const Vec3 ra = point - a.position, rb = point - b.position;
      // The step's inertias: the turns since are small, and recomputing both tensors for every
      // point and pass was a twentieth of a crate-scene step.
      const Mat3& ia = inverse_inertia[p.a];
      const Mat3& ib = inverse_inertia[p.b];
      const double k =
          inverse_mass_along(a, ia, ra, p.normal) + inverse_mass_along(b, ib, rb, p.normal);
      if (!(k > 0)) continue;
      const Vec3 impulse = p.normal * (-c / k);
      apply_position_impulse(a, b, ia, ib, ra, rb, impulse);
    }
  }
}

void RigidWorld::Impl::store_cache_and_contacts() {
  // Sleeping pairs keep last step's entries (their bodies have not moved), so islands stay linked.
  next_cache.clear();
  for (const CachedPoint& c : cache)
    if (!active(c.a) && !active(c.b) &&
        !(is_static(bodies[c.a].body) && is_static(bodies[c.b].body)))
      next_cache.push_back(c);
  const std::size_t kept = next_cache.size();
  contacts.clear();
  for (const SolverPoint& p : points) {
    const Vec3 jt = p.tangent1 * p.jt1 + p.tangent2 * p.jt2;
    next_cache.push_back({p.a, p.b, p.anchor_a, p.jn, jt});
    contacts.push_back({p.a, p.b, p.point, p.normal, p.depth, p.jn, jt});
  }
  // Sleeping pairs and touching ones are disjoint (a touch wakes both); each part is put in pair
  // order (stable: a pair's points keep their order) and the two merged.
  auto pair_less = [](const CachedPoint& x, const CachedPoint& y) {
    return std::pair{x.a, x.b} < std::pair{y.a, y.b};
  };
  const auto middle = next_cache.begin() + std::ptrdiff_t(kept);
  if (!std::is_sorted(middle, next_cache.end(), pair_less))
    std::stable_sort(middle, next_cache.end(), pair_less);
  std::inplace_merge(next_cache.begin(), middle, next_cache.end(), pair_less);
  std::swap(cache, next_cache);
}

void RigidWorld::Impl::sleep_islands(double h) {
  // Union–find over dynamic bodies linked by a contact (static bodies do not link islands).
  std::vector<BodyId> parent(bodies.size());
  std::iota(parent.begin(), parent.end(), BodyId(0));
  auto find = [&](BodyId x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const CachedPoint& c : cache) {
    const BodyId a = c.a, b = c.b;
    if (is_static(bodies[a].body) || is_static(bodies[b].body)) continue;
    const BodyId ra = find(a), rb = find(b);
    if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
  }
  for (const detail::JointState& j : joints) {
    if (j.broken || is_static(bodies[j.desc.a].body) || is_static(bodies[j.desc.b].body)) continue;
    const BodyId ra = find(j.desc.a), rb = find(j.desc.b);
    if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
  }
  // Per island: any awake member wakes the rest; all ready to sleep puts them all to sleep.
  std::vector<char> any_awake(bodies.size(), 0), all_ready(bodies.size(), 1);
  for (BodyId id = 0; id < bodies.size(); ++id) {
    RigidBody& b = bodies[id].body;
    if (is_static(b)) continue;
    const BodyId root = find(id);
    if (b.awake) {
      any_awake[root] = 1;
      if (!ready_to_sleep(b, h, settings.sleep)) all_ready[root] = 0;
    }
  }
  awake_islands = 0;
  for (BodyId id = 0; id < bodies.size(); ++id) {
    RigidBody& b = bodies[id].body;
    if (is_static(b)) continue;
    const BodyId root = find(id);
    if (!any_awake[root]) continue;
    if (root == id) ++awake_islands;
    const bool sleep = settings.sleeping && all_ready[root];
    if (sleep && b.awake) set_awake(b, false);
    if (!sleep && !b.awake) set_awake(b, true);
  }
  if (!settings.sleeping) return;
  // Islands put to sleep this step no longer count as awake.
  awake_islands = 0;
  for (BodyId id = 0; id < bodies.size(); ++id)
    if (!is_static(bodies[id].body) && find(id) == id && bodies[id].body.awake) ++awake_islands;
}

}  // namespace kinema
