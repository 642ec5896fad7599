// src/ik/bend_acos.h — acos for the two-bone solve's mid_bend, inline (no libm call).
#pragma once

#include <cmath>

#include "kinema/math/scalar.h"

namespace kinema::ik_detail {

// acos(c) for c in [−1, 1] within 1.5 ulp of the exact value (measured over 240 000 arguments,
// dense near ±1; tests/ik/two_bone_test.cpp checks it against std::acos): asin(t) = t + t·z·R(z)
// with z = t², t in [0, 1/2], and R a degree-11 polynomial (a Chebyshev fit of
// (asin √z − √z)/z^{3/2} on [0, 1/4], |error| < 2.4e-16 there, so < 3e-17 on asin), evaluated
// by Estrin's scheme (a short dependency chain). |c| ≤ 1/2: π/2 − asin(c); c > 1/2:
// 2·asin(√((1 − c)/2)); c < −1/2: π − 2·asin(√((1 + c)/2)) (1 ∓ c is exact there). Plain
// multiplications and additions only: the same bits in every copy compiled without FMA.
[[gnu::always_inline]] inline double bend_acos(double c) {
  constexpr double k[12] = {0.1666666666666665,   0.07500000000020764,   0.044642857103423646,
                            0.03038194736709848,  0.02237204763174451,   0.017355259955786323,
                            0.013929652902326633, 0.011875494382636922,  0.0078029494773533175,
                            0.01603551434914882,  -0.010749050339697808, 0.028169218060881414};
  const double a = std::abs(c);
  const bool small = a <= 0.5;
  const double z = small ? a * a : 0.5 * (1.0 - a);
  const double t = small ? a : std::sqrt(z);
  const double z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
  const double q0 = (k[0] + k[1] * z) + (k[2] + k[3] * z) * z2;
  const double q1 = (k[4] + k[5] * z) + (k[6] + k[7] * z) * z2;
  const double q2 = (k[8] + k[9] * z) + (k[10] + k[11] * z) * z2;
  const double asin_t = t + t * (z * ((q0 + q1 * z4) + q2 * z8));
  if (small) return kPi / 2 - std::copysign(asin_t, c);
  return c > 0 ? 2 * asin_t : kPi - 2 * asin_t;
}

}  // namespace kinema::ik_detail
