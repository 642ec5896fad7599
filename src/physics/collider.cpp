// Colliders (kinema/physics/collider.h).
#include "kinema/physics/collider.h"

#include <algorithm>
#include <cmath>

#include "kinema/core/error.h"

namespace kinema {

void validate_collider(Collider& k, const std::string& place, const std::string& what) {
  auto fail = [&](const std::string& reason) { throw Error({}, place, what + " " + reason); };
  if (!is_finite(k.a) || !is_finite(k.b)) fail("point is not finite");
  if (!is_finite(k.normal)) fail("normal is not finite");
  if (!is_finite(k.half_extents)) fail("half extents are not finite");
  auto non_negative = [&](double v, const char* name) {
    if (!(v >= 0) || !std::isfinite(v)) fail(std::string(name) + " must be ≥ 0 and finite");
  };
  non_negative(k.radius, "radius");
  non_negative(k.restitution, "restitution");
  non_negative(k.friction, "friction");
  if (k.shape == ColliderShape::Plane) {
    if (!(length(k.normal) > 0)) fail("plane normal is zero");
    k.normal = normalize(k.normal);
  }
  if (k.shape == ColliderShape::Capsule && !(length(k.b - k.a) > 0))
    fail("capsule has no axis (a = b)");
  if (k.shape == ColliderShape::Box) {
    if (!is_finite(k.rotation) || !(length(k.rotation) > 0)) fail("rotation is not a rotation");
    k.rotation = normalize(k.rotation);
  }
}

bool collider_contact(const Collider& c, const Vec3& x, double margin, Vec3& surface,
                      Vec3& normal) {
  switch (c.shape) {
    case ColliderShape::Plane: {
      const double s = dot(x - c.a, c.normal) - margin;
      if (s >= 0) return false;
      surface = x - c.normal * s;
      normal = c.normal;
      return true;
    }
    case ColliderShape::Sphere: {
      const Vec3 d = x - c.a;
      const double len = length(d), r = c.radius + margin;
      if (len >= r) return false;
      normal = len > 0 ? d / len : Vec3{0, 1, 0};
      surface = c.a + normal * r;
      return true;
    }
    case ColliderShape::Capsule: {
      const Vec3 axis = c.b - c.a;
      const double t = std::clamp(dot(x - c.a, axis) / dot(axis, axis), 0.0, 1.0);
      const Vec3 closest = c.a + axis * t, d = x - closest;
      const double len = length(d), r = c.radius + margin;
      if (len >= r) return false;
      normal = len > 0 ? d / len : any_perpendicular(normalize(axis));
      surface = closest + normal * r;
      return true;
    }
    case ColliderShape::Box: {
      const Vec3 local = rotate(conjugate(c.rotation), x - c.a);
      const Vec3 h = c.half_extents + Vec3{margin, margin, margin};
      const double gaps[3] = {h.x - std::abs(local.x), h.y - std::abs(local.y),
                              h.z - std::abs(local.z)};
      if (gaps[0] <= 0 || gaps[1] <= 0 || gaps[2] <= 0) return false;
      // Out through the nearest face.
      const int axis = gaps[0] <= gaps[1] && gaps[0] <= gaps[2] ? 0 : (gaps[1] <= gaps[2] ? 1 : 2);
      Vec3 n_local{0, 0, 0}, on_face = local;
      if (axis == 0) {
        n_local.x = local.x >= 0 ? 1 : -1;
        on_face.x = h.x * n_local.x;
      } else if (axis == 1) {
        n_local.y = local.y >= 0 ? 1 : -1;
        on_face.y = h.y * n_local.y;
      } else {
        n_local.z = local.z >= 0 ? 1 : -1;
        on_face.z = h.z * n_local.z;
      }
      surface = c.a + rotate(c.rotation, on_face);
      normal = rotate(c.rotation, n_local);
      return true;
    }
  }
  return false;
}

}  // namespace kinema
