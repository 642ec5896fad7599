// Internal: the contact points' sequential impulses four manifolds at a time.
//
// One manifold's points must be solved one after another (each impulse changes the two bodies'
// velocities the next point reads), but two manifolds that share no moving body are independent.
// The manifolds are dealt into batches of four body-disjoint ones, each manifold after every
// earlier one it shares a moving body with, and a batch's four manifolds run in the four lanes of
// one vector of doubles with the scalar pass's own arithmetic: the result is bit for bit that of
// solving the manifolds one at a time in their order (only independent updates change places),
// whatever the thread count and whichever instruction set runs the kernel.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kinema/physics/rigid_body.h"

namespace kinema::detail {

constexpr int kContactLanes = 4;

/// One point slot of a batch: lane l holds point `slot` of the batch's l-th manifold, or zeros
/// (no point: zero masses give zero impulses). Directions are [normal, tangent1, tangent2].
struct alignas(32) WideContactPoint {
  double direction[3][3][kContactLanes];  ///< [direction][x, y, z][lane], unit
  double ra_cross[3][3][kContactLanes];   ///< r_a × direction (m)
  double rb_cross[3][3][kContactLanes];
  double turn_a[3][3][kContactLanes];  ///< I_a⁻¹(r_a × direction)
  double turn_b[3][3][kContactLanes];
  double mass[3][kContactLanes];        ///< effective mass along each direction (kg)
  double velocity_bias[kContactLanes];  ///< restitution's target separating speed (m/s)
  double friction[kContactLanes];       ///< Coulomb coefficient
  double impulse[3][kContactLanes];     ///< accumulated jn, jt1, jt2 (N·s)
};

/// Up to four manifolds without a moving body in common.
struct ContactBatch {
  std::uint32_t body_a[kContactLanes] = {};  ///< lanes without a manifold: body 0, masses 0
  std::uint32_t body_b[kContactLanes] = {};
  double inverse_mass_a[kContactLanes] = {};  ///< 1/kg; 0: not written back
  double inverse_mass_b[kContactLanes] = {};
  std::int32_t manifold[kContactLanes] = {-1, -1, -1, -1};  ///< −1: an empty lane
  std::uint32_t first_slot = 0;                             ///< into the wide points
  std::uint32_t slot_count = 0;  ///< the batch's largest manifold's point count
};

/// Deals manifolds into batches. Manifold m joins bodies `pair_a[m]` and `pair_b[m]`; a body
/// whose `moves[body]` is 0 (static, kinematic) is never written and may sit in several lanes of
/// one batch. Each manifold goes into the first batch with a free lane after every batch holding
/// one of its moving bodies (or, past 32 full batches, into a new one at the end), so two
/// manifolds that share a moving body meet in their own order:
/// solving the batches in turn gives exactly what solving the manifolds in turn gives.
/// `last_batch` is scratch (one entry a body).
void deal_contact_batches(std::span<const std::uint32_t> pair_a,
                          std::span<const std::uint32_t> pair_b, std::span<const char> moves,
                          std::vector<ContactBatch>& batches,
                          std::vector<std::int32_t>& last_batch);

/// One pass over the batches: for each, the friction of each lane's points, then their normal
/// impulses (never pulling), updating the bodies' velocities. Chooses the widest kernel the CPU
/// runs; every kernel gives the same bits.
void solve_contact_batches(std::span<const ContactBatch> batches,
                           std::span<WideContactPoint> points, std::span<RigidBody* const> bodies);

/// The same with the baseline kernel only (tests compare the two).
void solve_contact_batches_baseline(std::span<const ContactBatch> batches,
                                    std::span<WideContactPoint> points,
                                    std::span<RigidBody* const> bodies);

}  // namespace kinema::detail
