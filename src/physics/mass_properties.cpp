// Mass properties (kinema/physics/mass_properties.h).
#include "kinema/physics/mass_properties.h"

#include <cmath>
#include <map>
#include <numbers>
#include <utility>

#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr double pi = std::numbers::pi;

// Names the first edge that keeps the triangles from closing a volume.
void require_closed(const RigidShape& s, const std::string& place) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> directed;
  for (const Triangle& t : s.triangles)
    for (int e = 0; e < 3; ++e) ++directed[{t[e], t[(e + 1) % 3]}];
  for (const auto& [edge, count] : directed) {
    const std::string name =
        "edge " + std::to_string(edge.first) + "–" + std::to_string(edge.second);
    if (count > 1)
      throw Error({}, place,
                  "triangle mesh is not a closed surface: " + name + " is used " +
                      std::to_string(count) +
                      " times in the same direction (inconsistent winding)");
    const auto reverse = directed.find({edge.second, edge.first});
    if (reverse == directed.end())
      throw Error({}, place,
                  "triangle mesh is not a closed surface: " + name +
                      " borders only one triangle (a hole), so it has no volume or mass");
  }
}

// The integrals of 1, x, y, z, x², y², z², xy, yz, zx over the solid a closed triangle surface
// bounds, by the divergence theorem (Eberly's arrangement of Mirtich's formulas).
struct PolyhedronIntegrals {
  double v[10] = {};
};

void subexpressions(double w0, double w1, double w2, double& f1, double& f2, double& f3, double& g0,
                    double& g1, double& g2) {
  const double temp0 = w0 + w1;
  f1 = temp0 + w2;
  const double temp1 = w0 * w0;
  const double temp2 = temp1 + w1 * temp0;
  f2 = temp2 + w2 * f1;
  f3 = w0 * temp1 + w1 * temp2 + w2 * f2;
  g0 = f2 + w0 * (f1 + w0);
  g1 = f2 + w1 * (f1 + w1);
  g2 = f2 + w2 * (f1 + w2);
}

PolyhedronIntegrals polyhedron_integrals(const RigidShape& s) {
  PolyhedronIntegrals in;
  for (const Triangle& t : s.triangles) {
    const Vec3 p0 = s.points[t[0]], p1 = s.points[t[1]], p2 = s.points[t[2]];
    const Vec3 e1 = p1 - p0, e2 = p2 - p0;
    const Vec3 d = cross(e1, e2);  // twice the area times the outward normal
    double f1x, f2x, f3x, g0x, g1x, g2x, f1y, f2y, f3y, g0y, g1y, g2y, f1z, f2z, f3z, g0z, g1z, g2z;
    subexpressions(p0.x, p1.x, p2.x, f1x, f2x, f3x, g0x, g1x, g2x);
    subexpressions(p0.y, p1.y, p2.y, f1y, f2y, f3y, g0y, g1y, g2y);
    subexpressions(p0.z, p1.z, p2.z, f1z, f2z, f3z, g0z, g1z, g2z);
    in.v[0] += d.x * f1x;
    in.v[1] += d.x * f2x;
    in.v[2] += d.y * f2y;
    in.v[3] += d.z * f2z;
    in.v[4] += d.x * f3x;
    in.v[5] += d.y * f3y;
    in.v[6] += d.z * f3z;
    in.v[7] += d.x * (p0.y * g0x + p1.y * g1x + p2.y * g2x);
    in.v[8] += d.y * (p0.z * g0y + p1.z * g1y + p2.z * g2y);
    in.v[9] += d.z * (p0.x * g0z + p1.x * g1z + p2.x * g2z);
  }
  static constexpr double scale[10] = {1.0 / 6,  1.0 / 24, 1.0 / 24,  1.0 / 24,  1.0 / 60,
                                       1.0 / 60, 1.0 / 60, 1.0 / 120, 1.0 / 120, 1.0 / 120};
  for (int i = 0; i < 10; ++i) in.v[i] *= scale[i];
  return in;
}

MassProperties polyhedron_mass_properties(const RigidShape& s, double density,
                                          const std::string& place) {
  require_closed(s, place);
  const PolyhedronIntegrals in = polyhedron_integrals(s);
  const double volume = in.v[0];
  if (!(volume > 0))
    throw Error({}, place,
                "triangle mesh encloses a volume of " + std::to_string(volume) +
                    " m³; its triangles must be counter-clockwise seen from outside");
  MassProperties m;
  m.mass = density * volume;
  const Vec3 c{in.v[1] / volume, in.v[2] / volume, in.v[3] / volume};
  m.centre_of_mass = c;
  // Second moments about the centre of mass (per unit density), then the tensor.
  const double xx = in.v[4] - volume * c.x * c.x, yy = in.v[5] - volume * c.y * c.y,
               zz = in.v[6] - volume * c.z * c.z;
  const double xy = in.v[7] - volume * c.x * c.y, yz = in.v[8] - volume * c.y * c.z,
               zx = in.v[9] - volume * c.z * c.x;
  Mat3& I = m.inertia;
  I.m[0][0] = density * (yy + zz);
  I.m[1][1] = density * (zz + xx);
  I.m[2][2] = density * (xx + yy);
  I.m[0][1] = I.m[1][0] = -density * xy;
  I.m[1][2] = I.m[2][1] = -density * yz;
  I.m[0][2] = I.m[2][0] = -density * zx;
  return m;
}

}  // namespace

double shape_volume(const RigidShape& s, const std::string& place) {
  return mass_properties(s, 1.0, place).mass;
}

MassProperties mass_properties(const RigidShape& s, double density, const std::string& place) {
  if (!(density > 0) || !std::isfinite(density))
    throw Error({}, place, "density must be > 0 and finite (is " + std::to_string(density) + ")");
  validate_shape(s, place);
  MassProperties m;
  switch (s.kind) {
    case ShapeKind::Sphere: {
      const double r = s.radius;
      m.mass = density * 4.0 / 3.0 * pi * r * r * r;
      m.inertia = Mat3::diagonal(Vec3{1, 1, 1} * (0.4 * m.mass * r * r));
      return m;
    }
    case ShapeKind::Box: {
      const Vec3 size = s.half_extents * 2.0;
      m.mass = density * size.x * size.y * size.z;
      const double k = m.mass / 12.0;
      m.inertia = Mat3::diagonal({k * (size.y * size.y + size.z * size.z),
                                  k * (size.z * size.z + size.x * size.x),
                                  k * (size.x * size.x + size.y * size.y)});
      return m;
    }
    case ShapeKind::Cylinder: {
      const double r = s.radius, height = 2 * s.half_height;
      m.mass = density * pi * r * r * height;
      const double across = m.mass * (3 * r * r + height * height) / 12.0;
      m.inertia = Mat3::diagonal({across, 0.5 * m.mass * r * r, across});
      return m;
    }
    case ShapeKind::Capsule: {
      // A cylinder and two hemispheres. A hemisphere's inertia about its flat face's centre is
      // (2/5)·m·r² about any axis through it; its own centre of mass sits 3r/8 off the face, so
      // about the capsule's centre (parallel axes, via the hemisphere's centroid):
      // m·(2r²/5 + H²/4 + 3Hr/8) across the axis.
      const double r = s.radius, height = 2 * s.half_height;
      const double cylinder_mass = density * pi * r * r * height;
      const double hemisphere_mass = density * 2.0 / 3.0 * pi * r * r * r;
      m.mass = cylinder_mass + 2 * hemisphere_mass;
      const double along = 0.5 * cylinder_mass * r * r + 2 * (0.4 * hemisphere_mass * r * r);
      const double across =
          cylinder_mass * (height * height / 12.0 + r * r / 4.0) +
          2 * hemisphere_mass * (0.4 * r * r + height * height / 4.0 + 3.0 * height * r / 8.0);
      m.inertia = Mat3::diagonal({across, along, across});
      return m;
    }
    case ShapeKind::ConvexHull:
    case ShapeKind::TriangleMesh:
      return polyhedron_mass_properties(s, density, place);
    case ShapeKind::HeightField:
      throw Error({}, place, "a height field has no volume, so no mass: use it for static ground");
  }
  return m;
}

MassProperties scaled_to_mass(const MassProperties& p, double mass) {
  MassProperties r = p;
  if (!(mass > 0) || !std::isfinite(mass) || !(p.mass > 0))
    throw Error({}, "mass", "mass must be > 0 and finite (is " + std::to_string(mass) + ")");
  r.inertia = p.inertia * (mass / p.mass);
  r.mass = mass;
  return r;
}

Mat3 inertia_about(const MassProperties& p, const Vec3& point) {
  const Vec3 d = point - p.centre_of_mass;
  Mat3 shift = Mat3::diagonal(Vec3{1, 1, 1} * dot(d, d));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) shift.m[i][j] -= d[i] * d[j];
  return p.inertia + shift * p.mass;
}

}  // namespace kinema
