// Narrow phase and continuous collision detection (kinema/physics/narrow_phase.h).
#include "kinema/physics/narrow_phase.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "convex_core.h"

namespace kinema {

using detail::ConvexCore;

double ContactManifold::max_depth() const {
  double d = 0;
  for (int k = 0; k < count; ++k) d = std::max(d, points[k].depth);
  return d;
}

namespace {

bool finite_size(double v) { return std::isfinite(v) && v >= 0; }
bool finite_size(const Vec3& v) { return finite_size(v.x) && finite_size(v.y) && finite_size(v.z); }

// A usable pose: finite, its rotation normalized (a zero or non-finite quaternion is refused).
bool clean_pose(const Pose& in, Pose& out) {
  const double len = length(in.orientation);
  if (!is_finite(in.position) || !std::isfinite(len) || !(len > 1e-9)) return false;
  out.position = in.position;
  out.orientation = in.orientation * (1.0 / len);
  return true;
}

bool sizes_ok(const RigidShape& s) {
  return finite_size(s.radius) && finite_size(s.half_height) && finite_size(s.half_extents);
}

// A contact from A's deepest point into B and B's into A, along `normal` (A → B).
void one_point(ContactManifold& out, const Vec3& normal, const Vec3& on_a, const Vec3& on_b,
               double depth) {
  out.normal = normal;
  out.count = 1;
  out.points[0] = {(on_a + on_b) * 0.5, std::max(0.0, depth)};
}

void flip(ContactManifold& m) { m.normal = -m.normal; }

Vec3 closest_on_segment(const Vec3& p, const Vec3& a, const Vec3& b) {
  const Vec3 ab = b - a;
  const double len2 = dot(ab, ab);
  const double t = len2 > 0 ? std::clamp(dot(p - a, ab) / len2, 0.0, 1.0) : 0.0;
  return a + ab * t;
}

}  // namespace

Aabb world_bounds(const RigidShape& shape, const Pose& pose, double margin) {
  Pose p;
  if (!clean_pose(pose, p) || !sizes_ok(shape) || !std::isfinite(margin))
    return {pose.position, pose.position};
  const Vec3 grow{std::max(margin, 0.0), std::max(margin, 0.0), std::max(margin, 0.0)};
  ConvexCore core;
  if (is_convex(shape) && detail::make_core(shape, p, core)) {
    Aabb box;
    for (int k = 0; k < 3; ++k) {
      Vec3 axis{0, 0, 0};
      axis[k] = 1;
      box.max[k] = core.support_full(axis)[k];
      box.min[k] = core.support_full(-axis)[k];
    }
    return {box.min - grow, box.max + grow};
  }
  Vec3 lo, hi;
  shape_bounds(shape, lo, hi);
  // The turned box's half extents along each world axis: |R|·(half extents).
  const Vec3 centre = p.to_world((lo + hi) * 0.5), half = (hi - lo) * 0.5;
  Vec3 reach{0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    Vec3 e{0, 0, 0};
    e[k] = half[k];
    const Vec3 r = rotate(p.orientation, e);
    reach += Vec3{std::abs(r.x), std::abs(r.y), std::abs(r.z)};
  }
  return {centre - reach - grow, centre + reach + grow};
}

// ---- closed forms ------------------------------------------------------------------------------

bool collide_sphere_sphere(const Vec3& centre_a, double radius_a, const Vec3& centre_b,
                           double radius_b, ContactManifold& out) {
  out.count = 0;
  if (!is_finite(centre_a) || !is_finite(centre_b) || !finite_size(radius_a) ||
      !finite_size(radius_b))
    return false;
  const Vec3 d = centre_b - centre_a;
  const double reach = radius_a + radius_b;
  const double dist2 = dot(d, d);
  if (dist2 > reach * reach) return false;  // compare squares: no root for the common miss
  const double dist = std::sqrt(dist2);
  const Vec3 n = dist > 1e-12 ? d / dist : Vec3::unit_y();
  one_point(out, n, centre_a + n * radius_a, centre_b - n * radius_b, reach - dist);
  return true;
}

bool collide_sphere_box(const Vec3& centre, double radius, const Pose& box_pose,
                        const Vec3& half_extents, ContactManifold& out) {
  out.count = 0;
  Pose box;
  if (!is_finite(centre) || !finite_size(radius) || !finite_size(half_extents) ||
      !clean_pose(box_pose, box))
    return false;
  const Vec3 c = box.to_local(centre);
  const Vec3 q{std::clamp(c.x, -half_extents.x, half_extents.x),
               std::clamp(c.y, -half_extents.y, half_extents.y),
               std::clamp(c.z, -half_extents.z, half_extents.z)};
  const Vec3 diff = c - q;
  const double dist2 = dot(diff, diff);
  if (dist2 > 0) {  // the centre is outside the box
    if (dist2 > radius * radius) return false;
    const double dist = std::sqrt(dist2);
    const Vec3 n = rotate(box.orientation, -diff / dist);
    one_point(out, n, centre + n * radius, box.to_world(q), radius - dist);
    return true;
  }
  // Inside: out through the nearest face.
  int k = 0;
  double best = INFINITY;
  for (int i = 0; i < 3; ++i) {
    const double gap = half_extents[i] - std::abs(c[i]);
    if (gap < best) {
      best = gap;
      k = i;
    }
  }
  Vec3 face_normal{0, 0, 0};
  face_normal[k] = c[k] >= 0 ? 1 : -1;
  Vec3 on_face = c;
  on_face[k] = face_normal[k] * half_extents[k];
  const Vec3 n = -rotate(box.orientation, face_normal);
  one_point(out, n, centre + n * radius, box.to_world(on_face), radius + best);
  return true;
}

bool collide_sphere_capsule(const Vec3& centre, double radius, const Vec3& cap_0, const Vec3& cap_1,
                            double cap_radius, ContactManifold& out) {
  out.count = 0;
  if (!is_finite(cap_0) || !is_finite(cap_1)) return false;
  return collide_sphere_sphere(centre, radius, closest_on_segment(centre, cap_0, cap_1), cap_radius,
                               out);
}

bool collide_capsule_capsule(const Vec3& a0, const Vec3& a1, double radius_a, const Vec3& b0,
                             const Vec3& b1, double radius_b, ContactManifold& out) {
  out.count = 0;
  if (!is_finite(a0) || !is_finite(a1) || !is_finite(b0) || !is_finite(b1) ||
      !finite_size(radius_a) || !finite_size(radius_b))
    return false;
  double s, t;
  detail::closest_segment_segment(a0, a1, b0, b1, s, t);
  const Vec3 pa = a0 + (a1 - a0) * s, pb = b0 + (b1 - b0) * t;
  const double reach = radius_a + radius_b;
  const double dist = distance(pa, pb);
  if (dist > reach) return false;
  const Vec3 da = a1 - a0, db = b1 - b0;
  Vec3 n;
  if (dist > 1e-12) {
    n = (pb - pa) / dist;
  } else {  // the axes cross: any direction across both
    n = normalize(cross(da, db),
                  length_squared(da) > 0 ? any_perpendicular(normalize(da)) : Vec3::unit_y());
  }
  one_point(out, n, pa + n * radius_a, pb - n * radius_b, reach - dist);
  // Parallel capsules lying along each other: the two ends of the overlap, so they rest flat.
  const double la = length(da), lb = length(db);
  if (la < 1e-9 || lb < 1e-9 || length(cross(da / la, db / lb)) > 1e-3) return true;
  const double u0 = dot(b0 - a0, da) / (la * la), u1 = dot(b1 - a0, da) / (la * la);
  const double lo = std::max(0.0, std::min(u0, u1)), hi = std::min(1.0, std::max(u0, u1));
  if ((hi - lo) * la < 1e-6) return true;
  int count = 0;
  for (const double u : {lo, hi}) {
    const Vec3 on_axis_a = a0 + da * u;
    const Vec3 on_axis_b = closest_on_segment(on_axis_a, b0, b1);
    const double depth = reach - dot(on_axis_b - on_axis_a, n);
    if (depth < 0) continue;
    out.points[count++] = {(on_axis_a + n * radius_a + on_axis_b - n * radius_b) * 0.5, depth};
  }
  if (count > 0) out.count = count;
  return true;
}

bool collide_capsule_box(const Vec3& p0, const Vec3& p1, double radius, const Pose& box_pose,
                         const Vec3& half_extents, ContactManifold& out) {
  out.count = 0;
  Pose box;
  if (!is_finite(p0) || !is_finite(p1) || !finite_size(radius) || !finite_size(half_extents) ||
      !clean_pose(box_pose, box))
    return false;
  return detail::convex_contact(detail::segment_core(p0, p1, radius),
                                detail::box_core(box, half_extents), out);
}

// ---- box against box: separating axes, then clipping ------------------------------------------

namespace {

// Whether `candidate` separates clearly better (is clearly less deep) than `current`: a ratio
// and an absolute slack keep the choice from flickering between near-equal axes.
bool clearly_better(double candidate, double current) { return candidate > 0.95 * current + 1e-6; }

}  // namespace

bool collide_box_box(const Pose& pose_a, const Vec3& half_a, const Pose& pose_b, const Vec3& half_b,
                     ContactManifold& out) {
  out.count = 0;
  Pose pa, pb;
  if (!finite_size(half_a) || !finite_size(half_b) || !clean_pose(pose_a, pa) ||
      !clean_pose(pose_b, pb))
    return false;
  const ConvexCore a = detail::box_core(pa, half_a), b = detail::box_core(pb, half_b);
  const Vec3 t = pb.position - pa.position;
  // The 15 axes on B's axes written in A's frame, r[i][j] = a_i·b_j (Gottschalk, Lin and Manocha
  // 1996): each axis's separation is then a few products instead of seven dot products. The
  // separation along unit axis L is the gap between the boxes' projections (< 0: overlap).
  double r[3][3], abs_r[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      r[i][j] = dot(a.axes[i], b.axes[j]);
      abs_r[i][j] = std::abs(r[i][j]);
    }
  const double ta[3] = {dot(t, a.axes[0]), dot(t, a.axes[1]), dot(t, a.axes[2])};
  double face_a = -INFINITY, face_b = -INFINITY, edge = -INFINITY;
  int axis_a = 0, axis_b = 0, edge_i = 0, edge_j = 0;
  for (int k = 0; k < 3; ++k) {
    const double sa = std::abs(ta[k]) - half_a[k] -
                      (half_b[0] * abs_r[k][0] + half_b[1] * abs_r[k][1] + half_b[2] * abs_r[k][2]);
    if (sa > 0) return false;
    if (sa > face_a) face_a = sa, axis_a = k;
    const double sb = std::abs(dot(t, b.axes[k])) - half_b[k] -
                      (half_a[0] * abs_r[0][k] + half_a[1] * abs_r[1][k] + half_a[2] * abs_r[2][k]);
    if (sb > 0) return false;
    if (sb > face_b) face_b = sb, axis_b = k;
  }
  // Edge axes a_i × b_j, of length √(1 − r_ij²): in A's frame a_i × b_j = r[i1][j]·a_i2 −
  // r[i2][j]·a_i1, whence the three projections.
  for (int i = 0; i < 3; ++i) {
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      const double len = std::sqrt(std::max(0.0, 1 - r[i][j] * r[i][j]));
      if (len < 1e-6) continue;  // parallel edges: their axis is a face axis already tested
      const double along = ta[i2] * r[i1][j] - ta[i1] * r[i2][j];
      const double reach_a = half_a[i1] * abs_r[i2][j] + half_a[i2] * abs_r[i1][j];
      const double reach_b = half_b[j1] * abs_r[i][j2] + half_b[j2] * abs_r[i][j1];
      const double s = (std::abs(along) - reach_a - reach_b) / len;
      if (s > 0) return false;
      if (s > edge) edge = s, edge_i = i, edge_j = j;
    }
  }
  const Vec3 edge_axis =
      edge > -INFINITY ? normalize(cross(a.axes[edge_i], b.axes[edge_j])) : Vec3{0, 0, 0};
  // The shallower face axis of the two boxes (ties to A): the same choice whichever box is A.
  const bool use_b_face = face_b > face_a;
  const double face = use_b_face ? face_b : face_a;
  if (clearly_better(edge, face)) {
    // Edge against edge: the edge of each box that lies farthest along the axis toward the other.
    const Vec3 l = dot(t, edge_axis) >= 0 ? edge_axis : -edge_axis;  // A → B
    Vec3 mid_a = a.centre, mid_b = b.centre;
    for (int k = 0; k < 3; ++k) {
      if (k != edge_i) mid_a += a.axes[k] * (dot(a.axes[k], l) >= 0 ? half_a[k] : -half_a[k]);
      if (k != edge_j) mid_b += b.axes[k] * (dot(b.axes[k], l) >= 0 ? -half_b[k] : half_b[k]);
    }
    const Vec3 ea = a.axes[edge_i] * half_a[edge_i], eb = b.axes[edge_j] * half_b[edge_j];
    double s, u;
    detail::closest_segment_segment(mid_a - ea, mid_a + ea, mid_b - eb, mid_b + eb, s, u);
    const Vec3 on_a = mid_a - ea + ea * (2 * s), on_b = mid_b - eb + eb * (2 * u);
    one_point(out, l, on_a, on_b, -edge);
    return true;
  }
  // A face: the reference face of one box, the other's face most turned against it incident.
  const ConvexCore& ref = use_b_face ? b : a;
  const ConvexCore& inc = use_b_face ? a : b;
  const Vec3 axis = use_b_face ? b.axes[axis_b] : a.axes[axis_a];
  const Vec3 toward_inc = use_b_face ? -t : t;
  const Vec3 ref_dir = dot(toward_inc, axis) >= 0 ? axis : -axis;
  thread_local detail::Feature ref_face, inc_face;  // per thread: 1.5 KB to zero otherwise
  Vec3 ref_normal, inc_normal;
  const int m = detail::support_feature(ref, ref_dir, ref_face, ref_normal);
  const int n = detail::support_feature(inc, -ref_dir, inc_face, inc_normal);
  std::array<ContactPoint, 4> points;
  const int found = detail::clip_features(ref_face, m, ref_normal, ref_normal, inc_face, n, points);
  out.normal = use_b_face ? -ref_normal : ref_normal;
  if (found == 0) {  // rounding left nothing: the SAT depth at the incident box's deepest point
    const Vec3 deepest = inc.support(-ref_normal);
    out.count = 1;
    out.points[0] = {deepest + ref_normal * (-0.5 * face), -face};
    return true;
  }
  out.count = found;
  out.points = points;
  return true;
}

// ---- general convex ----------------------------------------------------------------------------

bool is_convex(const RigidShape& shape) {
  switch (shape.kind) {
    case ShapeKind::Sphere:
    case ShapeKind::Box:
    case ShapeKind::Capsule:
    case ShapeKind::Cylinder:
    case ShapeKind::ConvexHull:
      return true;
    case ShapeKind::TriangleMesh:
    case ShapeKind::HeightField:
      return false;
  }
  return false;
}

namespace {

bool prepare(const RigidShape& s, const Pose& pose, ConvexCore& core) {
  Pose p;
  return is_convex(s) && sizes_ok(s) && clean_pose(pose, p) && detail::make_core(s, p, core);
}

}  // namespace

bool gjk_distance(const RigidShape& a, const Pose& pose_a, const RigidShape& b, const Pose& pose_b,
                  GjkResult& out) {
  out = GjkResult{};
  ConvexCore ca, cb;
  if (!prepare(a, pose_a, ca) || !prepare(b, pose_b, cb)) return false;
  detail::GjkState g;
  detail::gjk(ca, cb, /*grown=*/false, g);
  out.iterations = g.iterations;
  const double radii = ca.radius + cb.radius;
  if (g.overlap || g.distance <= radii) {
    out.overlapping = true;
    return true;
  }
  const Vec3 n = (g.point_b - g.point_a) / g.distance;
  out.distance = g.distance - radii;
  out.point_a = g.point_a + n * ca.radius;
  out.point_b = g.point_b - n * cb.radius;
  return true;
}

bool collide_convex(const RigidShape& a, const Pose& pose_a, const RigidShape& b,
                    const Pose& pose_b, ContactManifold& out) {
  out.count = 0;
  ConvexCore ca, cb;
  if (!prepare(a, pose_a, ca) || !prepare(b, pose_b, cb)) return false;
  return detail::convex_contact(ca, cb, out);
}

bool penetration(const RigidShape& a, const Pose& pose_a, const RigidShape& b, const Pose& pose_b,
                 Vec3& normal, double& depth) {
  normal = Vec3::unit_y();
  depth = 0;
  ConvexCore ca, cb;
  if (!prepare(a, pose_a, ca) || !prepare(b, pose_b, cb)) return false;
  Vec3 on_a, on_b;
  return detail::convex_penetration(ca, cb, normal, depth, on_a, on_b);
}

// ---- triangle meshes and height fields --------------------------------------------------------

namespace {

// The grown convex shape's bounds in the frame of `frame` (m).
void bounds_in(const ConvexCore& c, const Pose& frame, Vec3& lo, Vec3& hi) {
  for (int k = 0; k < 3; ++k) {
    Vec3 e{0, 0, 0};
    e[k] = 1;
    const Vec3 axis = rotate(frame.orientation, e);
    const double origin = dot(frame.position, axis);
    hi[k] = dot(c.support_full(axis), axis) - origin;
    lo[k] = dot(c.support_full(-axis), axis) - origin;
  }
}

bool boxes_meet(const Vec3& lo_a, const Vec3& hi_a, const Vec3& lo_b, const Vec3& hi_b) {
  return lo_a.x <= hi_b.x && lo_b.x <= hi_a.x && lo_a.y <= hi_b.y && lo_b.y <= hi_a.y &&
         lo_a.z <= hi_b.z && lo_b.z <= hi_a.z;
}

// Calls f(a, b, c) with the world corners of each triangle of mesh or height field `s` whose
// bounds meet the box lo–hi (in the shape's frame). Height-field triangles wind upward.
template <class F>
void for_each_triangle(const RigidShape& s, const Pose& pose, const Vec3& lo, const Vec3& hi,
                       const TriangleBvh* bvh, F&& f) {
  if (s.kind == ShapeKind::TriangleMesh && bvh != nullptr && !bvh->empty() &&
      bvh->triangle_count() == s.triangles.size()) {
    std::vector<std::uint32_t> hits;
    bvh->query(lo, hi, hits);
    std::sort(hits.begin(), hits.end());  // the scan's order: results never depend on the BVH
    for (const std::uint32_t index : hits) {
      const Triangle& t = s.triangles[index];
      f(pose.to_world(s.points[t[0]]), pose.to_world(s.points[t[1]]),
        pose.to_world(s.points[t[2]]));
    }
    return;
  }
  if (s.kind == ShapeKind::TriangleMesh) {
    const std::size_t n = s.points.size();
    for (const Triangle& t : s.triangles) {
      if (t[0] >= n || t[1] >= n || t[2] >= n) continue;
      const Vec3 &p = s.points[t[0]], &q = s.points[t[1]], &r = s.points[t[2]];
      const Vec3 tlo{std::min({p.x, q.x, r.x}), std::min({p.y, q.y, r.y}),
                     std::min({p.z, q.z, r.z})};
      const Vec3 thi{std::max({p.x, q.x, r.x}), std::max({p.y, q.y, r.y}),
                     std::max({p.z, q.z, r.z})};
      if (boxes_meet(lo, hi, tlo, thi)) f(pose.to_world(p), pose.to_world(q), pose.to_world(r));
    }
    return;
  }
  if (s.kind != ShapeKind::HeightField || s.columns < 2 || s.rows < 2 ||
      s.heights.size() != static_cast<std::size_t>(s.columns) * s.rows || !(s.spacing_x > 0) ||
      !(s.spacing_z > 0))
    return;
  auto cell_range = [](double a, double b, double spacing, int cells, int& first, int& last) {
    const double f = std::floor(a / spacing), l = std::floor(b / spacing);
    first = static_cast<int>(std::clamp(f, 0.0, double(cells - 1)));
    last = static_cast<int>(std::clamp(l, 0.0, double(cells - 1)));
    return !(l < 0 || f > cells - 1);
  };
  int i0, i1, j0, j1;
  if (!cell_range(lo.x, hi.x, s.spacing_x, s.columns - 1, i0, i1) ||
      !cell_range(lo.z, hi.z, s.spacing_z, s.rows - 1, j0, j1))
    return;
  auto vertex = [&](int i, int j) {
    return Vec3{i * s.spacing_x, s.heights[static_cast<std::size_t>(j) * s.columns + i],
                j * s.spacing_z};
  };
  for (int j = j0; j <= j1; ++j) {
    for (int i = i0; i <= i1; ++i) {
      const Vec3 v00 = vertex(i, j), v10 = vertex(i + 1, j), v01 = vertex(i, j + 1),
                 v11 = vertex(i + 1, j + 1);
      if (lo.y > std::max({v00.y, v10.y, v01.y, v11.y})) continue;  // wholly above the cell
      const Vec3 w00 = pose.to_world(v00), w10 = pose.to_world(v10), w01 = pose.to_world(v01),
                 w11 = pose.to_world(v11);
      f(w00, w01, w11);
      f(w00, w11, w10);
    }
  }
}

// Convex A against one triangle, one-sided: a shape behind the triangle's plane is pushed out
// through its front (outward) side.
bool triangle_contact(const ConvexCore& a, const ConvexCore& tri, ContactManifold& m) {
  if (!detail::convex_contact(a, tri, m)) return false;
  const Vec3 nt = normalize(cross(tri.v[1] - tri.v[0], tri.v[2] - tri.v[0]), Vec3::unit_y());
  if (dot(m.normal, nt) <= 0) return true;  // A is on the front side (normal A → triangle)
  const Vec3 low = a.support_full(-nt);
  const double depth = dot(tri.v[0] - low, nt);
  if (depth < 0) return false;
  m.normal = -nt;
  m.count = 1;
  m.points[0] = {low + nt * (0.5 * depth), depth};
  return true;
}

}  // namespace

bool collide_convex_triangles(const RigidShape& a, const Pose& pose_a, const RigidShape& b,
                              const Pose& pose_b, ContactManifold& out, const TriangleBvh* bvh) {
  out.count = 0;
  ConvexCore ca;
  Pose pb;
  if (!prepare(a, pose_a, ca) || !clean_pose(pose_b, pb)) return false;
  if (b.kind != ShapeKind::TriangleMesh && b.kind != ShapeKind::HeightField) return false;
  Vec3 lo, hi;
  bounds_in(ca, pb, lo, hi);
  struct Found {
    Vec3 normal;
    ContactPoint point;
  };
  std::vector<Found> found;
  double deepest = -1;
  Vec3 normal{0, 1, 0};
  for_each_triangle(b, pb, lo, hi, bvh, [&](const Vec3& p, const Vec3& q, const Vec3& r) {
    ContactManifold m;
    if (!triangle_contact(ca, detail::triangle_core(p, q, r), m)) return;
    for (int k = 0; k < m.count; ++k) found.push_back({m.normal, m.points[k]});
    if (m.max_depth() > deepest) {
      deepest = m.max_depth();
      normal = m.normal;
    }
  });
  if (found.empty()) return false;
  // One normal for the manifold (the deepest triangle's); other points count by their depth
  // along it, and points pushing the other way are dropped.
  std::vector<ContactPoint> points;
  for (const Found& f : found) {
    const double along = dot(f.normal, normal);
    if (along > 0) points.push_back({f.point.position, f.point.depth * along});
  }
  const int count = detail::reduce_contacts(points.data(), static_cast<int>(points.size()), normal);
  out.normal = normal;
  out.count = count;
  for (int k = 0; k < count; ++k) out.points[k] = points[k];
  return count > 0;
}

// ---- dispatch ----------------------------------------------------------------------------------

namespace {

void capsule_ends(const RigidShape& s, const Pose& p, Vec3& e0, Vec3& e1) {
  const Vec3 up = rotate(normalize(p.orientation), Vec3{0, s.half_height, 0});
  e0 = p.position - up;
  e1 = p.position + up;
}

}  // namespace

bool collide(const RigidShape& a, const Pose& pose_a, const RigidShape& b, const Pose& pose_b,
             ContactManifold& out, const TriangleBvh* bvh) {
  out.count = 0;
  const bool a_convex = is_convex(a), b_convex = is_convex(b);
  if (!a_convex && !b_convex) return false;
  if (!b_convex) return collide_convex_triangles(a, pose_a, b, pose_b, out, bvh);
  if (!a_convex) {
    if (!collide_convex_triangles(b, pose_b, a, pose_a, out, bvh)) return false;
    flip(out);
    return true;
  }
  // Closed forms take the lower kind first; swap and flip for the others.
  const bool swap = static_cast<int>(a.kind) > static_cast<int>(b.kind);
  const RigidShape& s = swap ? b : a;
  const RigidShape& t = swap ? a : b;
  const Pose& ps = swap ? pose_b : pose_a;
  const Pose& pt = swap ? pose_a : pose_b;
  bool hit = false;
  Vec3 s0, s1, t0, t1;
  if (s.kind == ShapeKind::Sphere && t.kind == ShapeKind::Sphere) {
    hit = collide_sphere_sphere(ps.position, s.radius, pt.position, t.radius, out);
  } else if (s.kind == ShapeKind::Sphere && t.kind == ShapeKind::Box) {
    hit = collide_sphere_box(ps.position, s.radius, pt, t.half_extents, out);
  } else if (s.kind == ShapeKind::Sphere && t.kind == ShapeKind::Capsule) {
    capsule_ends(t, pt, t0, t1);
    hit = collide_sphere_capsule(ps.position, s.radius, t0, t1, t.radius, out);
  } else if (s.kind == ShapeKind::Box && t.kind == ShapeKind::Box) {
    hit = collide_box_box(ps, s.half_extents, pt, t.half_extents, out);
  } else if (s.kind == ShapeKind::Box && t.kind == ShapeKind::Capsule) {
    capsule_ends(t, pt, t0, t1);  // the capsule first in collide_capsule_box: flip once more
    hit = collide_capsule_box(t0, t1, t.radius, ps, s.half_extents, out);
    if (hit) flip(out);
  } else if (s.kind == ShapeKind::Capsule && t.kind == ShapeKind::Capsule) {
    capsule_ends(s, ps, s0, s1);
    capsule_ends(t, pt, t0, t1);
    hit = collide_capsule_capsule(s0, s1, s.radius, t0, t1, t.radius, out);
  } else {
    hit = collide_convex(s, ps, t, pt, out);
  }
  if (hit && swap) flip(out);
  return hit;
}

// ---- continuous collision detection ------------------------------------------------------------

namespace {

// Conservative advancement of A along `motion` (B still): the first t ∈ [0, 1] at which the gap
// is at most `tolerance`, or −1. Each step moves as far as the gap allows if A closed it at its
// full speed along the current normal; the gap is convex in t, so no step passes the contact.
double advance(ConvexCore a, const ConvexCore& b, const Vec3& motion, double tolerance) {
  const ConvexCore start = a;
  double t = 0;
  const double radii = a.radius + b.radius;
  for (int it = 0; it < 64; ++it) {
    detail::GjkState g;
    detail::gjk(a, b, /*grown=*/false, g);
    if (g.overlap || g.distance - radii <= tolerance) return t;
    const Vec3 n = (g.point_b - g.point_a) / g.distance;
    const double closing = dot(motion, n);
    if (!(closing > 0)) return -1;  // moving apart along the normal: the gap only grows
    t += (g.distance - radii - 0.5 * tolerance) / closing;
    if (t > 1) return -1;
    a = start;
    a.translate(motion * t);
  }
  return t;  // not converged in 64 steps: t is still before the contact
}

}  // namespace

bool time_of_impact(const RigidShape& a, const Pose& pose_a, const Vec3& motion_a,
                    const RigidShape& b, const Pose& pose_b, const Vec3& motion_b, double& fraction,
                    double tolerance, const TriangleBvh* bvh) {
  fraction = 1;
  ConvexCore ca;
  if (!prepare(a, pose_a, ca) || !is_finite(motion_a) || !is_finite(motion_b) || !(tolerance > 0) ||
      !std::isfinite(tolerance))
    return false;
  const Vec3 motion = motion_a - motion_b;  // A's motion seen from B
  double best = -1;
  if (is_convex(b)) {
    ConvexCore cb;
    if (!prepare(b, pose_b, cb)) return false;
    best = advance(ca, cb, motion, tolerance);
  } else {
    Pose pb;
    if (!clean_pose(pose_b, pb)) return false;
    Vec3 lo0, hi0, lo1, hi1;
    bounds_in(ca, pb, lo0, hi0);
    ConvexCore moved = ca;
    moved.translate(motion);
    bounds_in(moved, pb, lo1, hi1);
    const Vec3 lo{std::min(lo0.x, lo1.x), std::min(lo0.y, lo1.y), std::min(lo0.z, lo1.z)};
    const Vec3 hi{std::max(hi0.x, hi1.x), std::max(hi0.y, hi1.y), std::max(hi0.z, hi1.z)};
    for_each_triangle(b, pb, lo, hi, bvh, [&](const Vec3& p, const Vec3& q, const Vec3& r) {
      const double t = advance(ca, detail::triangle_core(p, q, r), motion, tolerance);
      if (t >= 0 && (best < 0 || t < best)) best = t;
    });
  }
  if (best < 0) return false;
  fraction = std::clamp(best, 0.0, 1.0);
  return true;
}

}  // namespace kinema
