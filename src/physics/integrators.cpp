// Time integrators for second-order systems (kinema/physics/integrators.h).
#include "kinema/physics/integrators.h"

#include <Eigen/Sparse>
#include <cmath>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "integrator";

std::vector<double> acceleration(const AccelerationFn& accel, double t, std::span<const double> x,
                                 std::span<const double> v) {
  std::vector<double> a(x.size(), 0.0);
  accel(t, x, v, a);
  return a;
}

/// y + c·d, elementwise.
std::vector<double> plus_scaled(std::span<const double> y, double c, std::span<const double> d) {
  std::vector<double> out(y.size());
  for (size_t i = 0; i < y.size(); ++i) out[i] = y[i] + c * d[i];
  return out;
}

}  // namespace

void step_explicit_euler(SecondOrderState& s, double h, const AccelerationFn& accel) {
  const std::vector<double> a = acceleration(accel, s.t, s.x, s.v);
  for (size_t i = 0; i < s.x.size(); ++i) {
    s.x[i] += h * s.v[i];  // the old velocity
    s.v[i] += h * a[i];
  }
  s.t += h;
}

void step_semi_implicit_euler(SecondOrderState& s, double h, const AccelerationFn& accel) {
  const std::vector<double> a = acceleration(accel, s.t, s.x, s.v);
  for (size_t i = 0; i < s.x.size(); ++i) {
    s.v[i] += h * a[i];
    s.x[i] += h * s.v[i];  // the new velocity
  }
  s.t += h;
}

void step_midpoint(SecondOrderState& s, double h, const AccelerationFn& accel) {
  const std::vector<double> a0 = acceleration(accel, s.t, s.x, s.v);
  const std::vector<double> x_mid = plus_scaled(s.x, h / 2, s.v);
  const std::vector<double> v_mid = plus_scaled(s.v, h / 2, a0);
  const std::vector<double> a_mid = acceleration(accel, s.t + h / 2, x_mid, v_mid);
  for (size_t i = 0; i < s.x.size(); ++i) {
    s.x[i] += h * v_mid[i];
    s.v[i] += h * a_mid[i];
  }
  s.t += h;
}

void step_rk4(SecondOrderState& s, double h, const AccelerationFn& accel) {
  // Slopes k = (dx, dv) = (v, a) at the start, twice at the middle and at the end.
  const std::vector<double>& x1 = s.x;
  const std::vector<double>& v1 = s.v;
  const std::vector<double> a1 = acceleration(accel, s.t, x1, v1);
  const std::vector<double> x2 = plus_scaled(x1, h / 2, v1), v2 = plus_scaled(v1, h / 2, a1);
  const std::vector<double> a2 = acceleration(accel, s.t + h / 2, x2, v2);
  const std::vector<double> x3 = plus_scaled(x1, h / 2, v2), v3 = plus_scaled(v1, h / 2, a2);
  const std::vector<double> a3 = acceleration(accel, s.t + h / 2, x3, v3);
  const std::vector<double> x4 = plus_scaled(x1, h, v3), v4 = plus_scaled(v1, h, a3);
  const std::vector<double> a4 = acceleration(accel, s.t + h, x4, v4);
  for (size_t i = 0; i < s.x.size(); ++i) {
    const double dx = v1[i] + 2 * v2[i] + 2 * v3[i] + v4[i];
    const double dv = a1[i] + 2 * a2[i] + 2 * a3[i] + a4[i];
    s.x[i] += h / 6 * dx;
    s.v[i] += h / 6 * dv;
  }
  s.t += h;
}

VerletState start_verlet(const SecondOrderState& s, double h, const AccelerationFn& accel) {
  const std::vector<double> a = acceleration(accel, s.t, s.x, s.v);
  VerletState out;
  out.x_previous = s.x;
  out.x.resize(s.x.size());
  for (size_t i = 0; i < s.x.size(); ++i) out.x[i] = s.x[i] + h * s.v[i] + 0.5 * h * h * a[i];
  out.t = s.t + h;
  return out;
}

std::vector<double> verlet_velocity(const VerletState& s, double h) {
  std::vector<double> v(s.x.size());
  for (size_t i = 0; i < s.x.size(); ++i) v[i] = (s.x[i] - s.x_previous[i]) / h;
  return v;
}

void step_verlet(VerletState& s, double h, const AccelerationFn& accel) {
  const std::vector<double> a = acceleration(accel, s.t, s.x, verlet_velocity(s, h));
  for (size_t i = 0; i < s.x.size(); ++i) {
    const double next = 2 * s.x[i] - s.x_previous[i] + h * h * a[i];
    s.x_previous[i] = s.x[i];
    s.x[i] = next;
  }
  s.t += h;
}

struct ImplicitSpringSystem::Impl {
  std::vector<double> masses, force;
  Eigen::SparseMatrix<double> stiffness;
  double factored_h = -1;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> solver;
};

ImplicitSpringSystem::ImplicitSpringSystem(std::vector<double> masses,
                                           std::span<const StiffnessEntry> stiffness,
                                           std::vector<double> force)
    : impl_(new Impl) {
  const int n = static_cast<int>(masses.size());
  try {
    for (int i = 0; i < n; ++i)
      if (!(masses[size_t(i)] > 0) || !std::isfinite(masses[size_t(i)]))
        throw Error({}, kPlace, "mass " + std::to_string(i) + " is not positive and finite");
    if (force.empty()) force.assign(masses.size(), 0.0);
    if (force.size() != masses.size())
      throw Error({}, kPlace,
                  "force has " + std::to_string(force.size()) + " entries for " +
                      std::to_string(n) + " masses");
    for (size_t i = 0; i < force.size(); ++i)
      if (!std::isfinite(force[i]))
        throw Error({}, kPlace, "force " + std::to_string(i) + " is not finite");
    std::vector<Eigen::Triplet<double>> triplets;
    for (size_t e = 0; e < stiffness.size(); ++e) {
      const StiffnessEntry& k = stiffness[e];
      if (k.row < 0 || k.row >= n || k.col < 0 || k.col >= n || !std::isfinite(k.value))
        throw Error({}, kPlace,
                    "stiffness entry " + std::to_string(e) + " (" + std::to_string(k.row) + ", " +
                        std::to_string(k.col) + ") is out of range or not finite");
      triplets.emplace_back(k.row, k.col, k.value);
    }
    impl_->stiffness.resize(n, n);
    impl_->stiffness.setFromTriplets(triplets.begin(), triplets.end());
    impl_->masses = std::move(masses);
    impl_->force = std::move(force);
  } catch (...) {
    delete impl_;
    throw;
  }
}

ImplicitSpringSystem::~ImplicitSpringSystem() { delete impl_; }

std::vector<double> ImplicitSpringSystem::stiffness_times(std::span<const double> x) const {
  const Eigen::Map<const Eigen::VectorXd> xv(x.data(), Eigen::Index(x.size()));
  const Eigen::VectorXd kx = impl_->stiffness * xv;
  return {kx.data(), kx.data() + kx.size()};
}

void ImplicitSpringSystem::step(SecondOrderState& s, double h) {
  const Eigen::Index n = Eigen::Index(impl_->masses.size());
  if (!(h > 0) || !std::isfinite(h)) throw Error({}, kPlace, "the step must be positive");
  if (Eigen::Index(s.x.size()) != n || Eigen::Index(s.v.size()) != n)
    throw Error({}, kPlace,
                "the state has " + std::to_string(s.x.size()) + " positions for " +
                    std::to_string(n) + " masses");
  if (h != impl_->factored_h) {
    Eigen::SparseMatrix<double> system = impl_->stiffness * (h * h);
    for (Eigen::Index i = 0; i < n; ++i) system.coeffRef(i, i) += impl_->masses[size_t(i)];
    impl_->solver.compute(system);
    if (impl_->solver.info() != Eigen::Success)
      throw Error({}, kPlace, "M + h²K is not positive definite (is K symmetric and ≥ 0?)");
    impl_->factored_h = h;
  }
  Eigen::Map<Eigen::VectorXd> x(s.x.data(), n), v(s.v.data(), n);
  const Eigen::Map<const Eigen::VectorXd> m(impl_->masses.data(), n), f(impl_->force.data(), n);
  const Eigen::VectorXd rhs = m.cwiseProduct(v) + h * (f - impl_->stiffness * Eigen::VectorXd(x));
  const Eigen::VectorXd v_next = impl_->solver.solve(rhs);
  v = v_next;
  x += h * v_next;
  s.t += h;
}

double semi_implicit_step_limit(double stiffness, double mass) {
  if (!(stiffness > 0) || !(mass > 0))
    throw Error({}, kPlace, "stiffness and mass must be positive");
  return 2 * std::sqrt(mass / stiffness);
}

double critical_damping(double stiffness, double mass) {
  if (!(stiffness >= 0) || !(mass > 0))
    throw Error({}, kPlace, "stiffness must be ≥ 0 and mass positive");
  return 2 * std::sqrt(stiffness * mass);
}

int stable_substeps(double h, double stiffness, double mass) {
  if (!(h > 0) || !std::isfinite(h)) throw Error({}, kPlace, "the step must be positive");
  const double limit = semi_implicit_step_limit(stiffness, mass);
  int n = std::max(1, int(std::ceil(h / limit)));
  while (h / n >= limit) ++n;  // strictly below the limit
  return n;
}

}  // namespace kinema
