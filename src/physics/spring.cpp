// A spring with a damper between two particles (kinema/physics/spring.h).
#include "kinema/physics/spring.h"

namespace kinema {

Vec3 spring_force_on_a(const Vec3& xa, const Vec3& xb, const Vec3& va, const Vec3& vb,
                       double rest_length, double stiffness, double damping) {
  const Vec3 d = xb - xa;
  const double len = length(d);
  if (len <= 0) return {0, 0, 0};
  const Vec3 dir = d / len;
  const double stretch_speed = dot(vb - va, dir);
  return dir * (stiffness * (len - rest_length) + damping * stretch_speed);
}

}  // namespace kinema
