// kinema/physics/spring.h — a spring with a damper between two particles (Hooke's law in 3-D).
#pragma once

#include "kinema/math/vec3.h"

namespace kinema {

/// The force on particle A (newtons) of a spring of rest length L0 (metres), stiffness k (N/m)
/// and damping c (N·s/m) between A and B:
///   F_A = k·(|d| − L0)·d̂ + c·((v_B − v_A)·d̂)·d̂,  d = x_B − x_A,  d̂ = d/|d|.
/// A stretched spring pulls A towards B, a compressed one pushes it away; the damper resists the
/// relative velocity along the spring only. The force on B is −F_A. Coincident particles (no
/// direction) get no force.
Vec3 spring_force_on_a(const Vec3& xa, const Vec3& xb, const Vec3& va, const Vec3& vb,
                       double rest_length, double stiffness, double damping);

}  // namespace kinema
