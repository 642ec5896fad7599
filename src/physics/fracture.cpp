// Voronoi pre-fracture (kinema/physics/fracture.h).
#include "kinema/physics/fracture.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "kinema/core/error.h"
#include "kinema/physics/mass_properties.h"

namespace kinema {

namespace {

// A half-space n·x ≤ d.
struct Plane {
  Vec3 n;
  double d = 0;
};

// The solid's bounding planes (shape frame).
std::vector<Plane> solid_planes(const RigidShape& s) {
  std::vector<Plane> planes;
  if (s.kind == ShapeKind::Box) {
    for (int axis = 0; axis < 3; ++axis)
      for (const double sign : {-1.0, 1.0}) {
        Vec3 n{0, 0, 0};
        n[axis] = sign;
        planes.push_back({n, s.half_extents[axis]});
      }
  } else if (s.kind == ShapeKind::ConvexHull) {
    for (const Triangle& t : s.triangles) {
      const Vec3 a = s.points[t[0]];
      const Vec3 n = normalize(cross(s.points[t[1]] - a, s.points[t[2]] - a));
      planes.push_back({n, dot(n, a)});
    }
  } else {
    throw Error({}, "fracture",
                std::string("a ") + shape_kind_name(s.kind) +
                    " cannot be fractured: give a box or a convex hull");
  }
  return planes;
}

double extent(const RigidShape& s) {
  Vec3 lo, hi;
  shape_bounds(s, lo, hi);
  return length(hi - lo);
}

bool inside(const std::vector<Plane>& planes, const Vec3& p, double tolerance) {
  for (const Plane& q : planes)
    if (dot(q.n, p) > q.d + tolerance) return false;
  return true;
}

}  // namespace

std::vector<Vec3> fracture_sites(const RigidShape& shape, const Vec3& impact, int count,
                                 double spread, std::uint32_t seed) {
  const std::vector<Plane> planes = solid_planes(shape);
  if (count < 1 || !(spread > 0) || !is_finite(impact))
    throw Error({}, "fracture", "needs at least one site, a spread > 0 and a finite impact point");
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, spread);
  Vec3 lo, hi;
  shape_bounds(shape, lo, hi);
  std::uniform_real_distribution<double> ux(lo.x, hi.x), uy(lo.y, hi.y), uz(lo.z, hi.z);
  std::vector<Vec3> sites;
  for (int tries = 0; int(sites.size()) < count && tries < 1000 * count; ++tries) {
    // Mostly around the impact; one in four anywhere, so that the far side breaks too.
    const Vec3 p = tries % 4 == 3 ? Vec3{ux(rng), uy(rng), uz(rng)}
                                  : impact + Vec3{normal(rng), normal(rng), normal(rng)};
    if (inside(planes, p, 0)) sites.push_back(p);
  }
  return sites;
}

std::vector<FracturePiece> voronoi_fracture(const RigidShape& shape, std::span<const Vec3> sites) {
  const std::vector<Plane> solid = solid_planes(shape);
  const double size = extent(shape);
  const double eps = 1e-9 * size;
  std::vector<Vec3> kept;
  for (const Vec3& s : sites)
    if (is_finite(s) && inside(solid, s, 0)) kept.push_back(s);
  if (kept.empty()) throw Error({}, "fracture", "no site lies inside the solid");
  std::vector<FracturePiece> pieces;
  std::vector<int> piece_of_site(kept.size(), -1);
  std::vector<std::vector<int>> touching(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    // The cell: the solid's planes and the bisector plane with every other site.
    std::vector<Plane> planes = solid;
    std::vector<int> owner(solid.size(), -1);  // which site made each plane (-1: the solid)
    for (size_t k = 0; k < kept.size(); ++k) {
      if (k == i) continue;
      const Vec3 d = kept[k] - kept[i];
      if (!(length(d) > eps)) continue;  // a duplicate site: the first one keeps the cell
      const Vec3 n = normalize(d);
      planes.push_back({n, dot(n, (kept[i] + kept[k]) * 0.5)});
      owner.push_back(int(k));
    }
    // Its corners: every three planes that meet in a point inside all the others.
    std::vector<Vec3> corners;
    std::vector<char> used(planes.size(), 0);
    for (size_t a = 0; a < planes.size(); ++a)
      for (size_t b = a + 1; b < planes.size(); ++b)
        for (size_t c = b + 1; c < planes.size(); ++c) {
          const Vec3 bc = cross(planes[b].n, planes[c].n);
          const double det = dot(planes[a].n, bc);
          if (std::abs(det) < 1e-12) continue;
          const Vec3 p = (bc * planes[a].d + cross(planes[c].n, planes[a].n) * planes[b].d +
                          cross(planes[a].n, planes[b].n) * planes[c].d) /
                         det;
          if (!inside(planes, p, eps * 10)) continue;
          corners.push_back(p);
          used[a] = used[b] = used[c] = 1;
        }
    RigidShape hull;
    try {
      hull = convex_hull_shape(corners);
    } catch (const Error&) {
      continue;  // no volume: a site squeezed out by its neighbours
    }
    if (!(shape_volume(hull) > 1e-12 * size * size * size)) continue;
    piece_of_site[i] = int(pieces.size());
    for (size_t p = solid.size(); p < planes.size(); ++p)
      if (used[p]) touching[i].push_back(owner[p]);
    pieces.push_back({std::move(hull), {}});
  }
  // Neighbours: cells that share a bisector face (its plane carries corners of the cell).
  for (size_t i = 0; i < kept.size(); ++i) {
    if (piece_of_site[i] < 0) continue;
    for (const int k : touching[i]) {
      const int other = piece_of_site[size_t(k)];
      if (other < 0) continue;
      std::vector<int>& list = pieces[size_t(piece_of_site[i])].neighbours;
      if (std::find(list.begin(), list.end(), other) == list.end()) list.push_back(other);
    }
  }
  for (FracturePiece& p : pieces) std::sort(p.neighbours.begin(), p.neighbours.end());
  return pieces;
}

std::vector<JointDesc> fracture_welds(std::span<const FracturePiece> pieces, BodyId first_body,
                                      const Vec3& origin, const Quat& rotation, double strength) {
  std::vector<Vec3> centre(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i)
    centre[i] = origin + rotate(rotation, mass_properties(pieces[i].hull, 1).centre_of_mass);
  std::vector<JointDesc> welds;
  for (size_t i = 0; i < pieces.size(); ++i)
    for (const int k : pieces[i].neighbours) {
      if (size_t(k) <= i) continue;  // each pair once
      JointDesc glue;
      glue.kind = JointKind::Fixed;
      glue.a = first_body + BodyId(i);
      glue.b = first_body + BodyId(k);
      glue.anchor = (centre[i] + centre[size_t(k)]) * 0.5;  // a weld holds the whole pose anyway
      glue.break_impulse = strength;
      welds.push_back(glue);
    }
  return welds;
}

std::vector<BodyId> add_fractured_body(RigidWorld& world, std::span<const FracturePiece> pieces,
                                       const Vec3& origin, const Quat& rotation, double density,
                                       double strength, const RigidMaterial& material,
                                       const Vec3& velocity) {
  std::vector<BodyId> ids;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const MassProperties mass =
        mass_properties(pieces[i].hull, density, "piece " + std::to_string(i));
    RigidBody body = make_dynamic_body(mass, origin, rotation);
    body.linear_velocity = velocity;
    ids.push_back(world.add_body(body, pieces[i].hull, material, "piece " + std::to_string(i)));
  }
  if (!ids.empty())
    for (const JointDesc& weld : fracture_welds(pieces, ids.front(), origin, rotation, strength))
      world.add_joint(weld);
  return ids;
}

}  // namespace kinema
