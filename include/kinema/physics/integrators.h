// kinema/physics/integrators.h — stepping a second-order system x'' = a(t, x, v) through time.
//
// The state is a flat array of degrees of freedom (a 1-D spring has one; n particles in 3-D have
// 3n, stored x0 y0 z0 x1 …) with their velocities. Each step function advances it by h seconds:
//   explicit Euler        x += h·v(old), v += h·a(old)                       order 1, 1 evaluation
//   semi-implicit Euler   v += h·a(old), x += h·v(new)   (symplectic)        order 1, 1 evaluation
//   Verlet                x(n+1) = 2x(n) − x(n−1) + h²·a(n)  (no velocity)   order 2, 1 evaluation
//   midpoint (RK2)        the slope at the half step's Euler estimate        order 2, 2 evaluations
//   RK4                   four slopes weighted 1, 2, 2, 1                    order 4, 4 evaluations
//   implicit Euler        v(n+1) = v(n) + h·a(x(n+1)), x(n+1) = x(n) + h·v(n+1); for linear
//                         springs a sparse solve per step, stable at any h (it damps)
// On an undamped oscillator (ω² = k/m) explicit Euler multiplies the energy by 1 + h²ω² every
// step, at any h; semi-implicit Euler keeps it bounded while hω < 2 (h < 2/ω = T/π) and explodes
// beyond; implicit Euler multiplies it by 1/(1 + h²ω²). Units: seconds, and whatever the caller's
// positions are in (metres in kinema).
#pragma once

#include <functional>
#include <span>
#include <vector>

namespace kinema {

/// The acceleration of every degree of freedom at time t, written into `a` (same length as x).
using AccelerationFn = std::function<void(double t, std::span<const double> x,
                                          std::span<const double> v, std::span<double> a)>;

/// Positions, velocities and time of a second-order system.
struct SecondOrderState {
  std::vector<double> x, v;
  double t = 0;
};

/// One explicit (forward) Euler step: both updates from the old state.
void step_explicit_euler(SecondOrderState& s, double h, const AccelerationFn& accel);

/// One semi-implicit (symplectic) Euler step: velocity first, then position with the new velocity.
void step_semi_implicit_euler(SecondOrderState& s, double h, const AccelerationFn& accel);

/// One midpoint (RK2) step: s + h·f(s + h/2·f(s)), f(s) = (v, a).
void step_midpoint(SecondOrderState& s, double h, const AccelerationFn& accel);

/// One classical fourth-order Runge–Kutta step.
void step_rk4(SecondOrderState& s, double h, const AccelerationFn& accel);

/// Verlet's state: the current and the previous positions; the velocity is implied by them.
struct VerletState {
  std::vector<double> x, x_previous;
  double t = 0;
};

/// Starts Verlet from positions and velocities: x(1) = x(0) + h·v(0) + ½h²·a(0), so the first
/// step is exact for a constant acceleration. Returns the state at t + h.
VerletState start_verlet(const SecondOrderState& s, double h, const AccelerationFn& accel);

/// One Verlet step: x(n+1) = 2x(n) − x(n−1) + h²·a(n). The acceleration is given the central
/// velocity estimate (x(n) − x(n−1))/h, for forces that need one (drag).
void step_verlet(VerletState& s, double h, const AccelerationFn& accel);

/// The velocity Verlet's positions imply: (x(n) − x(n−1)) / h.
std::vector<double> verlet_velocity(const VerletState& s, double h);

/// One entry of a sparse symmetric stiffness matrix (row, column, value); entries with the same
/// row and column add up. Give both (i, j) and (j, i) for off-diagonal terms.
struct StiffnessEntry {
  int row = 0, col = 0;
  double value = 0;
};

/// A linear spring system M x'' = −K x + f: per-degree-of-freedom masses, a sparse symmetric
/// positive semi-definite stiffness K and a constant force f (gravity, wind). The implicit Euler
/// step solves (M + h²K) v(n+1) = M v(n) + h (f − K x(n)) once per step (sparse LDLᵀ, factored
/// once per step size).
class ImplicitSpringSystem {
 public:
  /// Throws kinema::Error when a mass is not positive and finite, an entry is out of range or not
  /// finite, or the force's length is not the masses'.
  ImplicitSpringSystem(std::vector<double> masses, std::span<const StiffnessEntry> stiffness,
                       std::vector<double> force = {});
  ~ImplicitSpringSystem();
  ImplicitSpringSystem(const ImplicitSpringSystem&) = delete;
  ImplicitSpringSystem& operator=(const ImplicitSpringSystem&) = delete;

  /// One implicit Euler step of h seconds (h > 0).
  void step(SecondOrderState& s, double h);

  /// K x, for energies and tests.
  std::vector<double> stiffness_times(std::span<const double> x) const;

 private:
  struct Impl;
  Impl* impl_;
};

/// The largest stable semi-implicit Euler step for an undamped spring: h < 2/ω = 2·√(m/k)
/// (seconds; a third of the period). k in N/m, m in kg.
double semi_implicit_step_limit(double stiffness, double mass);

/// Critical damping of a spring: c = 2·√(k·m) (N·s/m), the least that returns to rest without
/// overshooting.
double critical_damping(double stiffness, double mass);

/// The substeps a step of h seconds needs so that each stays below the stability limit:
/// the smallest n ≥ 1 with h/n < semi_implicit_step_limit(k, m).
int stable_substeps(double h, double stiffness, double mass);

}  // namespace kinema
