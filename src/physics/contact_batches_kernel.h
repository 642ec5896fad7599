// Internal: the body of the batched contact pass (contact_batches.h), compiled once per
// instruction set — contact_batches.cpp (the build's baseline) and contact_batches_avx2.cpp
// (-mavx2). Four lanes of doubles as a GCC/Clang vector: the compiler maps each operation onto
// the widest registers it may use. No fused multiply-adds (-ffp-contract=off on both files): each
// lane computes exactly the scalar expression, so both builds give the same bits.
#pragma once

#include <cmath>
#include <cstring>

#include "contact_batches.h"

namespace kinema::detail {
namespace {

using ContactLanes = double __attribute__((vector_size(8 * kContactLanes)));

struct ContactLaneVec3 {
  ContactLanes x, y, z;
};

[[gnu::always_inline]] inline ContactLanes load_lanes(const double* p) {
  ContactLanes r;
  std::memcpy(&r, p, sizeof r);
  return r;
}

[[gnu::always_inline]] inline void store_lanes(double* p, ContactLanes v) {
  std::memcpy(p, &v, sizeof v);
}

[[gnu::always_inline]] inline ContactLaneVec3 load_lanes3(const double (&p)[3][kContactLanes]) {
  return {load_lanes(p[0]), load_lanes(p[1]), load_lanes(p[2])};
}

// The same grouping as kinema::dot: (x·x + y·y) + z·z.
[[gnu::always_inline]] inline ContactLanes dot_lanes(const ContactLaneVec3& a,
                                                     const ContactLaneVec3& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}

// Body velocities of the four lanes' sides, gathered from and scattered back to the bodies.
[[gnu::always_inline]] inline void gather_velocities(RigidBody* const* bodies,
                                                     const std::uint32_t* ids, ContactLaneVec3& v,
                                                     ContactLaneVec3& w) {
  alignas(32) double lanes[6][kContactLanes];
  for (int l = 0; l < kContactLanes; ++l) {
    const RigidBody& b = *bodies[ids[l]];
    for (int c = 0; c < 3; ++c) {
      lanes[c][l] = b.linear_velocity[c];
      lanes[3 + c][l] = b.angular_velocity[c];
    }
  }
  v = {load_lanes(lanes[0]), load_lanes(lanes[1]), load_lanes(lanes[2])};
  w = {load_lanes(lanes[3]), load_lanes(lanes[4]), load_lanes(lanes[5])};
}

// A body that does not move (zero inverse mass, or an empty lane) is not written: it may sit in
// several lanes, and its velocity has not changed.
[[gnu::always_inline]] inline void scatter_velocities(RigidBody* const* bodies,
                                                      const std::uint32_t* ids,
                                                      const double* inverse_mass,
                                                      const ContactLaneVec3& v,
                                                      const ContactLaneVec3& w) {
  for (int l = 0; l < kContactLanes; ++l) {
    if (!(inverse_mass[l] > 0)) continue;
    RigidBody& b = *bodies[ids[l]];
    b.linear_velocity = {v.x[l], v.y[l], v.z[l]};
    b.angular_velocity = {w.x[l], w.y[l], w.z[l]};
  }
}

[[gnu::always_inline]] inline void solve_contact_batches_kernel(
    std::span<const ContactBatch> batches, std::span<WideContactPoint> points,
    RigidBody* const* bodies) {
  for (const ContactBatch& batch : batches) {
    ContactLaneVec3 va, wa, vb, wb;
    gather_velocities(bodies, batch.body_a, va, wa);
    gather_velocities(bodies, batch.body_b, vb, wb);
    const ContactLanes ma = load_lanes(batch.inverse_mass_a), mb = load_lanes(batch.inverse_mass_b);
    WideContactPoint* const first = points.data() + batch.first_slot;
    // Speed of b relative to a at the point along its direction k.
    auto speed = [&](const WideContactPoint& p, int k) {
      const ContactLaneVec3 d = load_lanes3(p.direction[k]);
      const ContactLaneVec3 relative{vb.x - va.x, vb.y - va.y, vb.z - va.z};
      return dot_lanes(relative, d) + dot_lanes(wb, load_lanes3(p.rb_cross[k])) -
             dot_lanes(wa, load_lanes3(p.ra_cross[k]));
    };
    for (std::uint32_t s = 0; s < batch.slot_count; ++s) {  // friction, inside the normal cone
      WideContactPoint& p = first[s];
      const ContactLanes max_friction = load_lanes(p.friction) * load_lanes(p.impulse[0]);
      const ContactLanes old1 = load_lanes(p.impulse[1]), old2 = load_lanes(p.impulse[2]);
      ContactLanes new1 = old1 - speed(p, 1) * load_lanes(p.mass[1]);
      ContactLanes new2 = old2 - speed(p, 2) * load_lanes(p.mass[2]);
      const ContactLanes magnitude_squared = new1 * new1 + new2 * new2;
      for (int l = 0; l < kContactLanes; ++l)  // Coulomb's circular cone
        if (magnitude_squared[l] > max_friction[l] * max_friction[l]) {
          const double scale = max_friction[l] / std::sqrt(magnitude_squared[l]);
          new1[l] *= scale;
          new2[l] *= scale;
        }
      store_lanes(p.impulse[1], new1);
      store_lanes(p.impulse[2], new2);
      const ContactLanes d1 = new1 - old1, d2 = new2 - old2;
      const ContactLaneVec3 t1 = load_lanes3(p.direction[1]), t2 = load_lanes3(p.direction[2]);
      const ContactLaneVec3 impulse{t1.x * d1 + t2.x * d2, t1.y * d1 + t2.y * d2,
                                    t1.z * d1 + t2.z * d2};
      const ContactLaneVec3 ta1 = load_lanes3(p.turn_a[1]), ta2 = load_lanes3(p.turn_a[2]);
      const ContactLaneVec3 tb1 = load_lanes3(p.turn_b[1]), tb2 = load_lanes3(p.turn_b[2]);
      va = {va.x - impulse.x * ma, va.y - impulse.y * ma, va.z - impulse.z * ma};
      wa = {wa.x - (ta1.x * d1 + ta2.x * d2), wa.y - (ta1.y * d1 + ta2.y * d2),
            wa.z - (ta1.z * d1 + ta2.z * d2)};
      vb = {vb.x + impulse.x * mb, vb.y + impulse.y * mb, vb.z + impulse.z * mb};
      wb = {wb.x + (tb1.x * d1 + tb2.x * d2), wb.y + (tb1.y * d1 + tb2.y * d2),
            wb.z + (tb1.z * d1 + tb2.z * d2)};
    }
    const ContactLanes zero{};
    for (std::uint32_t s = 0; s < batch.slot_count; ++s) {  // the normal impulses, never pulling
      WideContactPoint& p = first[s];
      const ContactLanes old = load_lanes(p.impulse[0]);
      ContactLanes jn = old + (load_lanes(p.velocity_bias) - speed(p, 0)) * load_lanes(p.mass[0]);
      jn = jn > zero ? jn : zero;
      store_lanes(p.impulse[0], jn);
      const ContactLanes dn = jn - old;
      const ContactLaneVec3 n = load_lanes3(p.direction[0]);
      const ContactLaneVec3 ta = load_lanes3(p.turn_a[0]), tb = load_lanes3(p.turn_b[0]);
      const ContactLanes dna = dn * ma, dnb = dn * mb;
      va = {va.x - n.x * dna, va.y - n.y * dna, va.z - n.z * dna};
      wa = {wa.x - ta.x * dn, wa.y - ta.y * dn, wa.z - ta.z * dn};
      vb = {vb.x + n.x * dnb, vb.y + n.y * dnb, vb.z + n.z * dnb};
      wb = {wb.x + tb.x * dn, wb.y + tb.y * dn, wb.z + tb.z * dn};
    }
    scatter_velocities(bodies, batch.body_a, batch.inverse_mass_a, va, wa);
    scatter_velocities(bodies, batch.body_b, batch.inverse_mass_b, vb, wb);
  }
}

}  // namespace
}  // namespace kinema::detail
