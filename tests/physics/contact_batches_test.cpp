// The contact pass four manifolds at a time (src/physics/contact_batches.h): the batching keeps
// every pair of manifolds that share a moving body in order, and the batched kernels give the
// bits of solving the manifolds one at a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "../../src/physics/contact_batches.h"

namespace kinema {
namespace {

using detail::ContactBatch;
using detail::kContactLanes;
using detail::WideContactPoint;

// mt19937_64's output is fixed by the standard; the distributions are not.
double batch_uniform(std::mt19937_64& g, double lo, double hi) {
  return lo + (hi - lo) * double(g() >> 11) * 0x1p-53;
}

Vec3 batch_random_vector(std::mt19937_64& g, double r) {
  return {batch_uniform(g, -r, r), batch_uniform(g, -r, r), batch_uniform(g, -r, r)};
}

// One contact point as the world's solver holds it (rigid_world.cpp's SolverPoint, the fields
// the pass reads and writes).
struct ScalarPoint {
  Vec3 direction[3];  // normal, tangent1, tangent2
  Vec3 ra_cross[3], rb_cross[3], turn_a[3], turn_b[3];
  double mass[3] = {};
  double velocity_bias = 0, friction = 0;
  double impulse[3] = {};  // jn, jt1, jt2
};

struct Manifold {
  std::uint32_t a = 0, b = 0;
  std::vector<ScalarPoint> points;
};

// The pass manifold by manifold, as the world ran it before the batches: the reference.
void solve_one_at_a_time(std::vector<Manifold>& manifolds, std::vector<RigidBody>& bodies) {
  for (Manifold& m : manifolds) {
    RigidBody& a = bodies[m.a];
    RigidBody& b = bodies[m.b];
    Vec3 va = a.linear_velocity, wa = a.angular_velocity;
    Vec3 vb = b.linear_velocity, wb = b.angular_velocity;
    const double ma = a.inverse_mass, mb = b.inverse_mass;
    auto speed = [&](const ScalarPoint& p, int k) {
      return dot(vb - va, p.direction[k]) + dot(wb, p.rb_cross[k]) - dot(wa, p.ra_cross[k]);
    };
    for (ScalarPoint& p : m.points) {
      const double max_friction = p.friction * p.impulse[0];
      const double old1 = p.impulse[1], old2 = p.impulse[2];
      double new1 = old1 - speed(p, 1) * p.mass[1];
      double new2 = old2 - speed(p, 2) * p.mass[2];
      const double magnitude_squared = new1 * new1 + new2 * new2;
      if (magnitude_squared > max_friction * max_friction) {
        const double scale = max_friction / std::sqrt(magnitude_squared);
        new1 *= scale;
        new2 *= scale;
      }
      p.impulse[1] = new1;
      p.impulse[2] = new2;
      const double d1 = new1 - old1, d2 = new2 - old2;
      const Vec3 impulse = p.direction[1] * d1 + p.direction[2] * d2;
      va -= impulse * ma;
      wa -= p.turn_a[1] * d1 + p.turn_a[2] * d2;
      vb += impulse * mb;
      wb += p.turn_b[1] * d1 + p.turn_b[2] * d2;
    }
    for (ScalarPoint& p : m.points) {
      const double old = p.impulse[0];
      p.impulse[0] = std::max(0.0, old + (p.velocity_bias - speed(p, 0)) * p.mass[0]);
      const double dn = p.impulse[0] - old;
      va -= p.direction[0] * (dn * ma);
      wa -= p.turn_a[0] * dn;
      vb += p.direction[0] * (dn * mb);
      wb += p.turn_b[0] * dn;
    }
    if (ma > 0) {
      a.linear_velocity = va;
      a.angular_velocity = wa;
    }
    if (mb > 0) {
      b.linear_velocity = vb;
      b.angular_velocity = wb;
    }
  }
}

// A random world: `statics` bodies that never move first, then moving ones; manifolds of one to
// four points with arbitrary (not physical) numbers, friction sometimes small enough to clamp.
void random_world(std::mt19937_64& g, int body_count, int statics, int manifold_count,
                  std::vector<RigidBody>& bodies, std::vector<Manifold>& manifolds) {
  bodies.assign(std::size_t(body_count), RigidBody{});
  for (int i = 0; i < body_count; ++i) {
    RigidBody& b = bodies[std::size_t(i)];
    b.inverse_mass = i < statics ? 0.0 : batch_uniform(g, 0.1, 2);
    b.linear_velocity = batch_random_vector(g, 3);
    b.angular_velocity = batch_random_vector(g, 3);
  }
  manifolds.assign(std::size_t(manifold_count), Manifold{});
  for (Manifold& m : manifolds) {
    m.a = std::uint32_t(g() % std::uint64_t(body_count));
    do m.b = std::uint32_t(g() % std::uint64_t(body_count));
    while (m.b == m.a);
    m.points.resize(1 + g() % 4);
    const double friction = g() % 3 == 0 ? 0.05 : batch_uniform(g, 0.2, 1);
    for (ScalarPoint& p : m.points) {
      for (int k = 0; k < 3; ++k) {
        p.direction[k] = normalize(batch_random_vector(g, 1));
        p.ra_cross[k] = batch_random_vector(g, 0.5);
        p.rb_cross[k] = batch_random_vector(g, 0.5);
        p.turn_a[k] = bodies[m.a].inverse_mass > 0 ? batch_random_vector(g, 0.5) : Vec3{};
        p.turn_b[k] = bodies[m.b].inverse_mass > 0 ? batch_random_vector(g, 0.5) : Vec3{};
        p.mass[k] = batch_uniform(g, 0.1, 1);
        p.impulse[k] = k == 0 ? batch_uniform(g, 0, 1) : batch_uniform(g, -0.2, 0.2);
      }
      p.velocity_bias = g() % 2 ? batch_uniform(g, 0, 2) : 0.0;
      p.friction = friction;
    }
  }
}

std::vector<ContactBatch> deal(const std::vector<Manifold>& manifolds,
                               const std::vector<RigidBody>& bodies) {
  std::vector<std::uint32_t> a, b;
  for (const Manifold& m : manifolds) {
    a.push_back(m.a);
    b.push_back(m.b);
  }
  std::vector<char> moves;
  for (const RigidBody& body : bodies) moves.push_back(body.inverse_mass > 0);
  std::vector<ContactBatch> batches;
  std::vector<std::int32_t> scratch;
  detail::deal_contact_batches(a, b, moves, batches, scratch);
  return batches;
}

// The manifolds' points in the batches' lanes, as the world lays them out.
std::vector<WideContactPoint> lay_out(std::vector<ContactBatch>& batches,
                                      const std::vector<Manifold>& manifolds,
                                      const std::vector<RigidBody>& bodies) {
  std::size_t slots = 0;
  for (ContactBatch& batch : batches) {
    batch.first_slot = std::uint32_t(slots);
    batch.slot_count = 0;
    for (int l = 0; l < kContactLanes && batch.manifold[l] >= 0; ++l) {
      const Manifold& m = manifolds[std::size_t(batch.manifold[l])];
      batch.slot_count = std::max(batch.slot_count, std::uint32_t(m.points.size()));
      batch.inverse_mass_a[l] = bodies[m.a].inverse_mass;
      batch.inverse_mass_b[l] = bodies[m.b].inverse_mass;
    }
    slots += batch.slot_count;
  }
  std::vector<WideContactPoint> wide(slots);
  for (const ContactBatch& batch : batches)
    for (int l = 0; l < kContactLanes && batch.manifold[l] >= 0; ++l) {
      const Manifold& m = manifolds[std::size_t(batch.manifold[l])];
      for (std::size_t i = 0; i < m.points.size(); ++i) {
        const ScalarPoint& p = m.points[i];
        WideContactPoint& w = wide[batch.first_slot + i];
        for (int k = 0; k < 3; ++k) {
          for (int c = 0; c < 3; ++c) {
            w.direction[k][c][l] = p.direction[k][c];
            w.ra_cross[k][c][l] = p.ra_cross[k][c];
            w.rb_cross[k][c][l] = p.rb_cross[k][c];
            w.turn_a[k][c][l] = p.turn_a[k][c];
            w.turn_b[k][c][l] = p.turn_b[k][c];
          }
          w.mass[k][l] = p.mass[k];
          w.impulse[k][l] = p.impulse[k];
        }
        w.velocity_bias[l] = p.velocity_bias;
        w.friction[l] = p.friction;
      }
    }
  return wide;
}

bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

// Every manifold dealt once, into its own lane; two that share a moving body in increasing
// batches. Returns how many pairs of manifolds share a batch through a body that never moves.
std::size_t expect_dealt_in_order(const std::vector<Manifold>& manifolds,
                                  const std::vector<RigidBody>& bodies,
                                  const std::vector<ContactBatch>& batches) {
  std::vector<int> batch_of(manifolds.size(), -1);
  std::size_t lanes_used = 0;
  for (std::size_t k = 0; k < batches.size(); ++k)
    for (int l = 0; l < kContactLanes; ++l) {
      const std::int32_t m = batches[k].manifold[l];
      if (m < 0) {
        // Empty lanes come last in a batch.
        for (int rest = l; rest < kContactLanes; ++rest) EXPECT_LT(batches[k].manifold[rest], 0);
        break;
      }
      EXPECT_EQ(batch_of[std::size_t(m)], -1) << "manifold " << m << " dealt twice";
      batch_of[std::size_t(m)] = int(k);
      EXPECT_EQ(batches[k].body_a[l], manifolds[std::size_t(m)].a);
      EXPECT_EQ(batches[k].body_b[l], manifolds[std::size_t(m)].b);
      ++lanes_used;
    }
  EXPECT_EQ(lanes_used, manifolds.size());
  std::size_t static_shared = 0;
  for (std::size_t i = 0; i < manifolds.size(); ++i)
    for (std::size_t j = i + 1; j < manifolds.size(); ++j) {
      bool share_moving = false, share_static = false;
      for (const std::uint32_t x : {manifolds[i].a, manifolds[i].b})
        for (const std::uint32_t y : {manifolds[j].a, manifolds[j].b})
          if (x == y) (bodies[x].inverse_mass > 0 ? share_moving : share_static) = true;
      if (share_moving)
        EXPECT_LT(batch_of[i], batch_of[j]) << "manifolds " << i << " and " << j;
      else if (share_static && batch_of[i] == batch_of[j])
        ++static_shared;
    }
  return static_shared;
}

TEST(ContactBatches, DealKeepsManifoldsThatShareAMovingBodyInTheirOrder) {
  std::mt19937_64 g(7);
  std::vector<RigidBody> bodies;
  std::vector<Manifold> manifolds;
  random_world(g, 60, 4, 400, bodies, manifolds);
  const std::vector<ContactBatch> batches = deal(manifolds, bodies);
  // A body that never moves does not keep two manifolds apart.
  EXPECT_GT(expect_dealt_in_order(manifolds, bodies, batches), 0u);
  // 400 manifolds over 56 moving bodies: most lanes are used.
  EXPECT_LT(batches.size(), manifolds.size() / 2);
}

TEST(ContactBatches, DealStaysInOrderPastTheLimitOnHowFarAManifoldLooks) {
  // A chain of 80 manifolds, each waiting on the one before (a batch each), and from each chain
  // body three more manifolds to bodies of their own, which wait on the chain and on each other:
  // the chain's first batch keeps free lanes, the next ones fill. A last manifold on the chain's
  // first body then finds full batches after that body's last one; it looks at 32 of them and
  // opens a batch at the end rather than walking on to a free lane further along.
  std::vector<RigidBody> bodies(2000);
  for (RigidBody& b : bodies) b.inverse_mass = 1;
  std::vector<Manifold> manifolds;
  for (std::uint32_t i = 0; i < 80; ++i) manifolds.push_back({i, i + 1, {}});
  for (std::uint32_t i = 0; i < 80; ++i)
    for (std::uint32_t k = 0; k < 3; ++k) manifolds.push_back({i, 100 + 3 * i + k, {}});
  manifolds.push_back({0, 1999, {}});
  const std::vector<ContactBatch> batches = deal(manifolds, bodies);
  expect_dealt_in_order(manifolds, bodies, batches);
  int last = -1;  // the last manifold's batch
  for (std::size_t k = 0; k < batches.size(); ++k)
    for (const std::int32_t m : batches[k].manifold)
      if (m == std::int32_t(manifolds.size() - 1)) last = int(k);
  EXPECT_EQ(last, int(batches.size()) - 1);
  EXPECT_EQ(batches.back().manifold[1], -1);  // alone in a new batch
  // Body 0's last batch before it is 3; a free lane waited somewhere between 4 + 32 and the end.
  bool free_lane_further = false;
  for (std::size_t k = 4 + 32; k + 1 < batches.size(); ++k)
    free_lane_further = free_lane_further || batches[k].manifold[kContactLanes - 1] < 0;
  EXPECT_TRUE(free_lane_further);
}

TEST(ContactBatches, FillsEveryLaneWhenNoManifoldsShareAMovingBody) {
  // A row of boxes on the ground (body 0), each touching only the ground: 4 to a batch.
  std::vector<RigidBody> bodies(13);
  for (std::size_t i = 1; i < bodies.size(); ++i) bodies[i].inverse_mass = 1;
  std::vector<Manifold> manifolds;
  for (std::uint32_t i = 1; i < 13; ++i) manifolds.push_back({0, i, {}});
  EXPECT_EQ(deal(manifolds, bodies).size(), 3u);
  // A chain of boxes, each touching the next: every manifold waits for the one before it.
  manifolds.clear();
  for (std::uint32_t i = 1; i + 1 < 13; ++i) manifolds.push_back({i, i + 1, {}});
  EXPECT_EQ(deal(manifolds, bodies).size(), manifolds.size());
}

TEST(ContactBatches, GiveTheBitsOfSolvingTheManifoldsOneAtATime) {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 g(seed);
    std::vector<RigidBody> bodies;
    std::vector<Manifold> manifolds;
    random_world(g, 40, 3, 250, bodies, manifolds);
    std::vector<ContactBatch> batches = deal(manifolds, bodies);
    std::vector<WideContactPoint> wide = lay_out(batches, manifolds, bodies);
    std::vector<WideContactPoint> wide_baseline = wide;
    std::vector<RigidBody> batched = bodies, baseline = bodies, reference = bodies;
    std::vector<RigidBody*> batched_pointers, baseline_pointers;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      batched_pointers.push_back(&batched[i]);
      baseline_pointers.push_back(&baseline[i]);
    }
    std::size_t clamped = 0;
    for (int pass = 0; pass < 10; ++pass) {
      solve_one_at_a_time(manifolds, reference);
      detail::solve_contact_batches(batches, wide, batched_pointers);
      detail::solve_contact_batches_baseline(batches, wide_baseline, baseline_pointers);
    }
    for (std::size_t i = 0; i < bodies.size(); ++i)
      for (int c = 0; c < 3; ++c) {
        EXPECT_TRUE(same_bits(batched[i].linear_velocity[c], reference[i].linear_velocity[c]))
            << "seed " << seed << " body " << i;
        EXPECT_TRUE(same_bits(batched[i].angular_velocity[c], reference[i].angular_velocity[c]))
            << "seed " << seed << " body " << i;
        EXPECT_TRUE(same_bits(baseline[i].linear_velocity[c], reference[i].linear_velocity[c]));
        EXPECT_TRUE(same_bits(baseline[i].angular_velocity[c], reference[i].angular_velocity[c]));
      }
    for (const ContactBatch& batch : batches)
      for (int l = 0; l < kContactLanes && batch.manifold[l] >= 0; ++l) {
        const Manifold& m = manifolds[std::size_t(batch.manifold[l])];
        for (std::size_t i = 0; i < m.points.size(); ++i)
          for (int k = 0; k < 3; ++k) {
            EXPECT_TRUE(
                same_bits(wide[batch.first_slot + i].impulse[k][l], m.points[i].impulse[k]));
            EXPECT_TRUE(same_bits(wide_baseline[batch.first_slot + i].impulse[k][l],
                                  m.points[i].impulse[k]));
          }
        for (const ScalarPoint& p : m.points) clamped += p.impulse[0] == 0;
      }
    // The normal impulses' clamp at zero was taken somewhere.
    EXPECT_GT(clamped, 0u) << "seed " << seed;
  }
}

}  // namespace
}  // namespace kinema
