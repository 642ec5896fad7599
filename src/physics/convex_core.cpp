// GJK, EPA and feature clipping for the convex shapes of narrow_phase.h (see convex_core.h).
#include "convex_core.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kinema::detail {

// ---- shapes ----------------------------------------------------------------------------------

Vec3 ConvexCore::support(const Vec3& d) const {
  switch (kind) {
    case Kind::Point:
      return v[0];
    case Kind::Segment:
      return dot(v[1] - v[0], d) >= 0 ? v[1] : v[0];
    case Kind::Triangle: {
      const double d0 = dot(v[0], d), d1 = dot(v[1], d), d2 = dot(v[2], d);
      return d0 >= d1 ? (d0 >= d2 ? v[0] : v[2]) : (d1 >= d2 ? v[1] : v[2]);
    }
    case Kind::Box: {
      Vec3 p = centre;
      for (int k = 0; k < 3; ++k)
        p += axes[k] * (dot(axes[k], d) >= 0 ? half_extents[k] : -half_extents[k]);
      return p;
    }
    case Kind::Cylinder: {
      const double along = dot(axes[1], d);
      Vec3 p = centre + axes[1] * (along >= 0 ? half_height : -half_height);
      const Vec3 radial = d - axes[1] * along;
      const double len = length(radial);
      if (len > 1e-12 * length(d)) p += radial * (cylinder_radius / len);
      return p;
    }
    case Kind::Hull:
      return pose.to_world(support_point(*hull, rotate(conjugate(pose.orientation), d)));
  }
  return centre;
}

void ConvexCore::translate(const Vec3& offset) {
  centre += offset;
  for (Vec3& p : v) p += offset;
  pose.position += offset;
}

bool make_core(const RigidShape& shape, const Pose& pose, ConvexCore& out) {
  out = ConvexCore{};
  const Quat& q = pose.orientation;
  switch (shape.kind) {
    case ShapeKind::Sphere:
      out = point_core(pose.position, shape.radius);
      return true;
    case ShapeKind::Capsule: {
      const Vec3 up = rotate(q, Vec3{0, shape.half_height, 0});
      out = segment_core(pose.position - up, pose.position + up, shape.radius);
      return true;
    }
    case ShapeKind::Box:
      out = box_core(pose, shape.half_extents);
      return true;
    case ShapeKind::Cylinder:
      out.kind = ConvexCore::Kind::Cylinder;
      out.centre = pose.position;
      out.axes = {rotate(q, Vec3::unit_x()), rotate(q, Vec3::unit_y()), rotate(q, Vec3::unit_z())};
      out.half_height = shape.half_height;
      out.cylinder_radius = shape.radius;
      return true;
    case ShapeKind::ConvexHull: {
      if (shape.points.empty()) return false;
      out.kind = ConvexCore::Kind::Hull;
      out.hull = &shape;
      out.pose = pose;
      Vec3 mean{0, 0, 0};  // the vertices' mean lies inside; the shape's origin need not
      for (const Vec3& p : shape.points) mean += p;
      out.centre = pose.to_world(mean / static_cast<double>(shape.points.size()));
      return true;
    }
    case ShapeKind::TriangleMesh:
    case ShapeKind::HeightField:
      return false;
  }
  return false;
}

ConvexCore point_core(const Vec3& centre, double radius) {
  ConvexCore c;
  c.kind = ConvexCore::Kind::Point;
  c.centre = centre;
  c.v[0] = centre;
  c.radius = radius;
  return c;
}

ConvexCore segment_core(const Vec3& p0, const Vec3& p1, double radius) {
  ConvexCore c;
  c.kind = ConvexCore::Kind::Segment;
  c.centre = (p0 + p1) * 0.5;
  c.v[0] = p0;
  c.v[1] = p1;
  c.radius = radius;
  return c;
}

ConvexCore box_core(const Pose& pose, const Vec3& half_extents) {
  ConvexCore c;
  c.kind = ConvexCore::Kind::Box;
  c.centre = pose.position;
  const Quat& q = pose.orientation;
  c.axes = {rotate(q, Vec3::unit_x()), rotate(q, Vec3::unit_y()), rotate(q, Vec3::unit_z())};
  c.half_extents = half_extents;
  return c;
}

ConvexCore triangle_core(const Vec3& a, const Vec3& b, const Vec3& c) {
  ConvexCore t;
  t.kind = ConvexCore::Kind::Triangle;
  t.v = {a, b, c};
  t.centre = (a + b + c) / 3.0;
  return t;
}

// ---- GJK -------------------------------------------------------------------------------------

namespace {

SupportVertex support_of(const ConvexCore& a, const ConvexCore& b, const Vec3& d, bool grown) {
  SupportVertex s;
  s.a = grown ? a.support_full(d) : a.support(d);
  s.b = grown ? b.support_full(-d) : b.support(-d);
  s.w = s.a - s.b;
  return s;
}

// A simplex of 1–4 support vertices and the barycentric weights of its point nearest the origin.
struct Simplex {
  std::array<SupportVertex, 4> v{};
  std::array<double, 4> weight{};
  int n = 0;
};

void keep(Simplex& s, std::initializer_list<int> which, std::initializer_list<double> weights) {
  Simplex r;
  for (const int i : which) r.v[r.n++] = s.v[i];
  int k = 0;
  for (const double w : weights) r.weight[k++] = w;
  s = r;
}

void nearest_on_segment(Simplex& s, int i, int j) {
  const Vec3 a = s.v[i].w, ab = s.v[j].w - a;
  const double len2 = dot(ab, ab);
  const double t = len2 > 0 ? -dot(a, ab) / len2 : 0;
  if (t <= 0) return keep(s, {i}, {1.0});
  if (t >= 1) return keep(s, {j}, {1.0});
  keep(s, {i, j}, {1 - t, t});
}

// The triangle's point nearest the origin by its Voronoi regions (vertex, edge, face).
void nearest_on_triangle(Simplex& s, int ia, int ib, int ic) {
  const Vec3 a = s.v[ia].w, b = s.v[ib].w, c = s.v[ic].w;
  const Vec3 ab = b - a, ac = c - a;
  const double d1 = -dot(ab, a), d2 = -dot(ac, a);
  if (d1 <= 0 && d2 <= 0) return keep(s, {ia}, {1.0});
  const double d3 = -dot(ab, b), d4 = -dot(ac, b);
  if (d3 >= 0 && d4 <= d3) return keep(s, {ib}, {1.0});
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    const double t = d1 / (d1 - d3);
    return keep(s, {ia, ib}, {1 - t, t});
  }
  const double d5 = -dot(ab, c), d6 = -dot(ac, c);
  if (d6 >= 0 && d5 <= d6) return keep(s, {ic}, {1.0});
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    const double t = d2 / (d2 - d6);
    return keep(s, {ia, ic}, {1 - t, t});
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    const double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return keep(s, {ib, ic}, {1 - t, t});
  }
  const double sum = va + vb + vc;
  if (!(sum > 0)) {  // a degenerate (flat) triangle: its nearest edge
    Simplex best = s, trial;
    double best_d = INFINITY;
    const int edges[3][2] = {{ia, ib}, {ib, ic}, {ia, ic}};
    for (const auto& e : edges) {
      trial = s;
      nearest_on_segment(trial, e[0], e[1]);
      Vec3 p{0, 0, 0};
      for (int k = 0; k < trial.n; ++k) p += trial.v[k].w * trial.weight[k];
      if (dot(p, p) < best_d) {
        best_d = dot(p, p);
        best = trial;
      }
    }
    s = best;
    return;
  }
  keep(s, {ia, ib, ic}, {va / sum, vb / sum, vc / sum});
}

Vec3 simplex_point(const Simplex& s) {
  Vec3 p{0, 0, 0};
  for (int k = 0; k < s.n; ++k) p += s.v[k].w * s.weight[k];
  return p;
}

// Whether the origin is on the far side of plane (a, b, c) from `d`, or the plane is degenerate.
bool origin_outside(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const Vec3 n = cross(b - a, c - a);
  const double sign_o = -dot(a, n), sign_d = dot(d - a, n);
  if (sign_d * sign_d < 1e-24 * dot(n, n) * dot(d - a, d - a)) return true;
  return sign_o * sign_d < 0;
}

// Reduces the simplex to the feature nearest the origin. Returns false when the origin is inside
// the tetrahedron (the shapes overlap).
bool nearest_on_simplex(Simplex& s) {
  switch (s.n) {
    case 1:
      s.weight[0] = 1;
      return true;
    case 2:
      nearest_on_segment(s, 0, 1);
      return true;
    case 3:
      nearest_on_triangle(s, 0, 1, 2);
      return true;
    default:
      break;
  }
  const int faces[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};
  Simplex best;
  double best_d = INFINITY;
  bool any_outside = false;
  for (const auto& f : faces) {
    if (!origin_outside(s.v[f[0]].w, s.v[f[1]].w, s.v[f[2]].w, s.v[f[3]].w)) continue;
    any_outside = true;
    Simplex trial = s;
    nearest_on_triangle(trial, f[0], f[1], f[2]);
    const Vec3 p = simplex_point(trial);
    if (dot(p, p) < best_d) {
      best_d = dot(p, p);
      best = trial;
    }
  }
  if (!any_outside) return false;
  s = best;
  return true;
}

}  // namespace

void gjk(const ConvexCore& a, const ConvexCore& b, bool grown, GjkState& out) {
  out = GjkState{};
  Vec3 dir = a.centre - b.centre;
  if (!(dot(dir, dir) > 1e-24)) dir = Vec3::unit_x();
  Simplex s;
  s.v[0] = support_of(a, b, -dir, grown);
  s.n = 1;
  double prev = INFINITY;
  Simplex last = s;
  last.weight[0] = 1;
  constexpr int kMaxIterations = 64;
  for (int it = 0; it < kMaxIterations; ++it) {
    out.iterations = it + 1;
    if (!nearest_on_simplex(s)) {
      out.overlap = true;
      break;
    }
    const Vec3 v = simplex_point(s);
    const double vv = dot(v, v);
    if (vv < 1e-24) {  // the origin is on the simplex: touching
      out.overlap = true;
      break;
    }
    if (vv >= prev) {  // no progress (rounding): the previous simplex is the answer
      s = last;
      break;
    }
    prev = vv;
    last = s;
    const SupportVertex w = support_of(a, b, -v, grown);
    // Converged when the new support point brings the bound on the distance no closer.
    if (vv - dot(v, w.w) <= 1e-12 * vv) break;
    bool repeated = false;
    for (int k = 0; k < s.n; ++k) repeated |= length_squared(s.v[k].w - w.w) < 1e-24;
    if (repeated) break;
    s.v[s.n++] = w;
  }
  out.simplex = s.v;
  out.simplex_size = s.n;
  if (out.overlap) return;
  out.point_a = Vec3{0, 0, 0};
  out.point_b = Vec3{0, 0, 0};
  for (int k = 0; k < s.n; ++k) {
    out.point_a += s.v[k].a * s.weight[k];
    out.point_b += s.v[k].b * s.weight[k];
  }
  out.distance = length(simplex_point(s));
}

// ---- EPA -------------------------------------------------------------------------------------

namespace {

constexpr int kEpaMaxVertices = 128;
constexpr int kEpaMaxFaces = 256;

struct EpaFace {
  int i = 0, j = 0, k = 0;
  Vec3 normal{0, 0, 0};  // outward, unit
  double distance = 0;   // of the origin to the face's plane
};

bool make_face(const std::array<SupportVertex, kEpaMaxVertices>& v, int i, int j, int k,
               EpaFace& f) {
  const Vec3 n = cross(v[j].w - v[i].w, v[k].w - v[i].w);
  const double len = length(n);
  if (!(len > 1e-30)) return false;
  f = {i, j, k, n / len, dot(n / len, v[i].w)};
  return true;
}

// Grows GJK's simplex (which may be a point, segment or triangle when the shapes just touch)
// into a tetrahedron holding the origin.
bool blow_up(const ConvexCore& a, const ConvexCore& b, std::array<SupportVertex, 4>& s, int& n) {
  const Vec3 axes[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  if (n == 1) {
    for (const Vec3& d : axes) {
      const SupportVertex w = support_of(a, b, d, true);
      if (length_squared(w.w - s[0].w) > 1e-18) {
        s[n++] = w;
        break;
      }
    }
    if (n < 2) return false;
  }
  if (n == 2) {
    const Vec3 d = s[1].w - s[0].w;
    const Vec3 e = any_perpendicular(normalize(d));
    for (int k = 0; k < 6 && n < 3; ++k) {
      const Vec3 dir = rotate(Quat::from_axis_angle(d, k * std::numbers::pi / 3), e);
      const SupportVertex w = support_of(a, b, dir, true);
      if (length_squared(cross(d, w.w - s[0].w)) > 1e-18 * length_squared(d)) s[n++] = w;
    }
    if (n < 3) return false;
  }
  if (n == 3) {
    const Vec3 nrm = cross(s[1].w - s[0].w, s[2].w - s[0].w);
    for (const Vec3& dir : {nrm, -nrm}) {
      const SupportVertex w = support_of(a, b, dir, true);
      if (std::abs(dot(w.w - s[0].w, nrm)) > 1e-9 * length(nrm)) {
        s[n++] = w;
        break;
      }
    }
    if (n < 4) return false;
  }
  return true;
}

// Barycentric weights of p (in the triangle's plane) in triangle a, b, c.
void barycentric(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c, double& u, double& v,
                 double& w) {
  const Vec3 n = cross(b - a, c - a);
  const double area = dot(n, n);
  if (!(area > 0)) {
    u = 1;
    v = w = 0;
    return;
  }
  u = dot(cross(b - p, c - p), n) / area;
  v = dot(cross(c - p, a - p), n) / area;
  w = 1 - u - v;
}

}  // namespace

bool epa(const ConvexCore& a, const ConvexCore& b, const GjkState& start, Vec3& normal,
         double& depth, Vec3& point_a, Vec3& point_b) {
  std::array<SupportVertex, 4> tetra = start.simplex;
  int n = start.simplex_size;
  if (n < 1 || !blow_up(a, b, tetra, n)) return false;

  std::array<SupportVertex, kEpaMaxVertices> verts;
  for (int k = 0; k < 4; ++k) verts[k] = tetra[k];
  int vert_count = 4;
  // Orient the tetrahedron so its faces wind outward.
  if (dot(cross(verts[1].w - verts[0].w, verts[2].w - verts[0].w), verts[3].w - verts[0].w) > 0)
    std::swap(verts[1], verts[2]);
  std::array<EpaFace, kEpaMaxFaces> faces;
  int face_count = 0;
  const int initial[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
  for (const auto& f : initial)
    if (!make_face(verts, f[0], f[1], f[2], faces[face_count++])) return false;

  std::array<std::pair<int, int>, 3 * kEpaMaxFaces> horizon;
  constexpr int kMaxIterations = 100;
  int best = 0;
  for (int it = 0; it < kMaxIterations; ++it) {
    best = 0;
    for (int f = 1; f < face_count; ++f)
      if (faces[f].distance < faces[best].distance) best = f;
    const EpaFace closest = faces[best];
    const SupportVertex w = support_of(a, b, closest.normal, true);
    const double gain = dot(w.w, closest.normal) - closest.distance;
    if (gain <= 1e-9 + 1e-9 * std::abs(closest.distance)) break;  // converged
    if (vert_count == kEpaMaxVertices) break;
    const int wi = vert_count;
    verts[vert_count++] = w;
    // Remove the faces that see w; their boundary (edges not shared by two removed faces) is the
    // horizon, fanned to w.
    int edge_count = 0;
    for (int f = 0; f < face_count;) {
      if (dot(faces[f].normal, w.w - verts[faces[f].i].w) <= 1e-12) {
        ++f;
        continue;
      }
      const int e[3][2] = {
          {faces[f].i, faces[f].j}, {faces[f].j, faces[f].k}, {faces[f].k, faces[f].i}};
      for (const auto& edge : e) {
        bool shared = false;
        for (int h = 0; h < edge_count; ++h) {
          if (horizon[h].first == edge[1] && horizon[h].second == edge[0]) {
            horizon[h] = horizon[--edge_count];
            shared = true;
            break;
          }
        }
        if (!shared && edge_count < static_cast<int>(horizon.size()))
          horizon[edge_count++] = {edge[0], edge[1]};
      }
      faces[f] = faces[--face_count];
    }
    for (int h = 0; h < edge_count; ++h) {
      if (face_count == kEpaMaxFaces) break;
      EpaFace f;
      if (make_face(verts, horizon[h].first, horizon[h].second, wi, f)) faces[face_count++] = f;
    }
    if (face_count == 0) return false;
  }
  best = 0;
  for (int f = 1; f < face_count; ++f)
    if (faces[f].distance < faces[best].distance) best = f;
  const EpaFace& f = faces[best];
  normal = f.normal;
  depth = std::max(0.0, f.distance);
  double u, v, t;
  barycentric(f.normal * f.distance, verts[f.i].w, verts[f.j].w, verts[f.k].w, u, v, t);
  point_a = verts[f.i].a * u + verts[f.j].a * v + verts[f.k].a * t;
  point_b = verts[f.i].b * u + verts[f.j].b * v + verts[f.k].b * t;
  return std::isfinite(depth) && is_finite(normal);
}

// ---- features and clipping -------------------------------------------------------------------

namespace {

// Sorts points lying in a plane with normal n into ring order around their mean.
void ring_order(Feature& p, int count, const Vec3& n) {
  Vec3 mean{0, 0, 0};
  for (int k = 0; k < count; ++k) mean += p[k];
  mean = mean / static_cast<double>(count);
  const Vec3 u = any_perpendicular(n), v = cross(n, u);
  std::sort(p.begin(), p.begin() + count, [&](const Vec3& x, const Vec3& y) {
    return std::atan2(dot(x - mean, v), dot(x - mean, u)) <
           std::atan2(dot(y - mean, v), dot(y - mean, u));
  });
}

// Points closer than this (cosine) to the direction count as a face turned that way.
constexpr double kFaceCosine = 0.9;
// A segment (capsule, cylinder side) within this (sine) of perpendicular to d lies along it.
constexpr double kEdgeSine = 0.05;

int hull_face(const ConvexCore& c, const Vec3& d, Feature& points, Vec3& normal) {
  const RigidShape& h = *c.hull;
  const Vec3 dl = rotate(conjugate(c.pose.orientation), d);
  double best = -INFINITY;
  Vec3 best_n{0, 1, 0};
  for (const Triangle& t : h.triangles) {
    const Vec3 n =
        normalize(cross(h.points[t[1]] - h.points[t[0]], h.points[t[2]] - h.points[t[0]]));
    if (dot(n, dl) > best) {
      best = dot(n, dl);
      best_n = n;
    }
  }
  const Vec3 top = support_point(h, dl);
  if (best < kFaceCosine) {
    points[0] = c.pose.to_world(top);
    normal = d;
    return 1;
  }
  // The face: every vertex in the best triangle's plane.
  double extent = 0;
  for (const Vec3& p : h.points) extent = std::max(extent, std::abs(dot(p - top, best_n)));
  const double plane = dot(top, best_n);
  int count = 0;
  for (const Vec3& p : h.points) {
    if (std::abs(dot(p, best_n) - plane) > 1e-7 * (1 + extent)) continue;
    if (count == kMaxFeature) break;
    points[count++] = p;
  }
  if (count < 3) {
    points[0] = c.pose.to_world(top);
    normal = d;
    return 1;
  }
  ring_order(points, count, best_n);
  for (int k = 0; k < count; ++k) points[k] = c.pose.to_world(points[k]);
  normal = rotate(c.pose.orientation, best_n);
  return count;
}

}  // namespace

int support_feature(const ConvexCore& c, const Vec3& d, Feature& points, Vec3& normal) {
  using Kind = ConvexCore::Kind;
  switch (c.kind) {
    case Kind::Box: {
      int k = 0;
      for (int i = 1; i < 3; ++i)
        if (std::abs(dot(c.axes[i], d)) > std::abs(dot(c.axes[k], d))) k = i;
      // Always the face most turned toward d, even tilted: as the incident face, clipping keeps
      // only its points below the reference face; as the reference, the caller checks alignment.
      const double sign = dot(c.axes[k], d) >= 0 ? 1 : -1;
      const int u = (k + 1) % 3, v = (k + 2) % 3;
      const Vec3 face = c.centre + c.axes[k] * (sign * c.half_extents[k]);
      const Vec3 eu = c.axes[u] * c.half_extents[u], ev = c.axes[v] * c.half_extents[v];
      points[0] = face + eu + ev;
      points[1] = face - eu + ev;
      points[2] = face - eu - ev;
      points[3] = face + eu - ev;
      normal = c.axes[k] * sign;
      return 4;
    }
    case Kind::Segment: {
      const Vec3 axis = c.v[1] - c.v[0];
      const double len = length(axis);
      if (len > 0 && std::abs(dot(axis, d)) < kEdgeSine * len) {
        points[0] = c.v[0] + d * c.radius;
        points[1] = c.v[1] + d * c.radius;
        normal = d;
        return 2;
      }
      break;
    }
    case Kind::Cylinder: {
      const Vec3 axis = c.axes[1];
      const double along = dot(axis, d);
      if (std::abs(along) >= kFaceCosine) {  // a cap, as an octagon
        const double sign = along >= 0 ? 1 : -1;
        const Vec3 cap = c.centre + axis * (sign * c.half_height);
        for (int k = 0; k < 8; ++k) {
          const double angle = k * std::numbers::pi / 4;
          points[k] =
              cap + (c.axes[0] * std::cos(angle) + c.axes[2] * std::sin(angle)) * c.cylinder_radius;
        }
        normal = axis * sign;
        return 8;
      }
      if (std::abs(along) < kEdgeSine) {  // a line along the side
        const Vec3 radial = normalize(d - axis * along);
        const Vec3 rim = c.centre + radial * c.cylinder_radius;
        points[0] = rim - axis * c.half_height;
        points[1] = rim + axis * c.half_height;
        normal = radial;
        return 2;
      }
      break;
    }
    case Kind::Triangle: {
      const Vec3 n = normalize(cross(c.v[1] - c.v[0], c.v[2] - c.v[0]));
      const double facing = dot(n, d);
      if (std::abs(facing) >= kFaceCosine) {
        points[0] = c.v[0];
        points[1] = facing >= 0 ? c.v[1] : c.v[2];
        points[2] = facing >= 0 ? c.v[2] : c.v[1];
        normal = facing >= 0 ? n : -n;
        return 3;
      }
      break;
    }
    case Kind::Hull:
      return hull_face(c, d, points, normal);
    case Kind::Point:
      break;
  }
  points[0] = c.support_full(d);
  normal = d;
  return 1;
}

int reduce_contacts(ContactPoint* p, int count, const Vec3& normal) {
  if (count <= 4) return count;
  auto take = [&](int slot, int from) { std::swap(p[slot], p[from]); };
  int deepest = 0;
  for (int k = 1; k < count; ++k)
    if (p[k].depth > p[deepest].depth) deepest = k;
  take(0, deepest);
  int far = 1;
  for (int k = 2; k < count; ++k)
    if (length_squared(p[k].position - p[0].position) >
        length_squared(p[far].position - p[0].position))
      far = k;
  take(1, far);
  const Vec3 edge = p[1].position - p[0].position;
  auto signed_area = [&](int k) { return dot(cross(edge, p[k].position - p[0].position), normal); };
  int third = 2;
  for (int k = 3; k < count; ++k)
    if (std::abs(signed_area(k)) > std::abs(signed_area(third))) third = k;
  take(2, third);
  // The fourth on the other side of the first edge from the third, as far from it as possible.
  const double side = signed_area(2) >= 0 ? -1 : 1;
  int fourth = 3;
  for (int k = 4; k < count; ++k)
    if (side * signed_area(k) > side * signed_area(fourth)) fourth = k;
  take(3, fourth);
  return 4;
}

int clip_features(const Feature& reference, int m, const Vec3& ref_normal, const Vec3& lift,
                  const Feature& incident, int n, std::array<ContactPoint, 4>& out) {
  const double lift_cos = dot(lift, ref_normal);
  if (!(lift_cos > 0)) return 0;
  // Scratch kept per thread and swapped by pointer: building (zeroing) and swapping three arrays
  // of 72 points on every call was a seventh of a box-stacking step.
  thread_local std::array<Vec3, 2 * kMaxFeature + 8> buffer_a, buffer_b;
  thread_local std::array<ContactPoint, 2 * kMaxFeature + 8> contacts;
  Vec3* poly = buffer_a.data();
  Vec3* next = buffer_b.data();
  constexpr int kCapacity = 2 * kMaxFeature + 8;
  int count = n;
  for (int k = 0; k < n; ++k) poly[k] = incident[k];
  Vec3 mean{0, 0, 0};
  for (int k = 0; k < m; ++k) mean += reference[k];
  mean = mean / static_cast<double>(m);
  for (int e = 0; e < m && count > 0; ++e) {
    const Vec3 r0 = reference[e], r1 = reference[(e + 1) % m];
    Vec3 side = cross(r1 - r0, ref_normal);
    if (dot(side, mean - r0) > 0) side = -side;  // outward, whatever the ring's direction
    auto outside = [&](const Vec3& p) { return dot(p - r0, side); };
    int kept = 0;
    if (count <= 2) {  // a segment or a point: clip its ends
      const Vec3 a = poly[0], b = poly[count - 1];
      const double da = outside(a), db = outside(b);
      if (da > 0 && db > 0) {
        count = 0;
        break;
      }
      next[kept++] = da > 0 ? a + (b - a) * (da / (da - db)) : a;
      if (count == 2) next[kept++] = db > 0 ? a + (b - a) * (da / (da - db)) : b;
    } else {  // Sutherland–Hodgman
      for (int k = 0; k < count && kept + 2 <= kCapacity; ++k) {
        const Vec3 a = poly[k], b = poly[(k + 1) % count];
        const double da = outside(a), db = outside(b);
        if (da <= 0) next[kept++] = a;
        if ((da <= 0) != (db <= 0)) next[kept++] = a + (b - a) * (da / (da - db));
      }
    }
    count = kept;
    std::swap(poly, next);
  }
  int found = 0;
  for (int k = 0; k < count; ++k) {
    const double height = dot(reference[0] - poly[k], ref_normal);
    if (height < -1e-9) continue;  // above the reference face: not touching
    const double d = std::max(0.0, height) / lift_cos;
    contacts[found++] = {poly[k] + lift * (0.5 * d), d};
  }
  found = reduce_contacts(contacts.data(), found, ref_normal);
  for (int k = 0; k < found; ++k) out[k] = contacts[k];
  return found;
}

void closest_segment_segment(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1,
                             double& s, double& t) {
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
  constexpr double kTiny = 1e-24;
  if (a <= kTiny && e <= kTiny) {
    s = t = 0;
    return;
  }
  if (a <= kTiny) {
    s = 0;
    t = std::clamp(f / e, 0.0, 1.0);
    return;
  }
  const double c = dot(d1, r);
  if (e <= kTiny) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
    return;
  }
  const double b = dot(d1, d2), denom = a * e - b * b;
  s = denom > 1e-12 * a * e ? std::clamp((b * f - c * e) / denom, 0.0, 1.0) : 0.0;
  t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1) {
    t = 1;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
}

// ---- the convex pipeline ---------------------------------------------------------------------

bool convex_penetration(const ConvexCore& a, const ConvexCore& b, Vec3& normal, double& depth,
                        Vec3& on_a, Vec3& on_b) {
  GjkState g;
  gjk(a, b, /*grown=*/false, g);
  const double radii = a.radius + b.radius;
  if (!g.overlap && g.distance > radii) return false;
  if (!g.overlap && g.distance > 1e-12) {  // the cores are apart: only the radii overlap
    normal = (g.point_b - g.point_a) / g.distance;
    depth = radii - g.distance;
    on_a = g.point_a + normal * a.radius;
    on_b = g.point_b - normal * b.radius;
    return true;
  }
  GjkState grown = g;
  if (radii > 0) gjk(a, b, /*grown=*/true, grown);
  if (!epa(a, b, grown, normal, depth, on_a, on_b)) {
    // A flat Minkowski difference (e.g. a triangle against a triangle): touching, depth 0.
    normal = normalize(b.centre - a.centre, Vec3::unit_y());
    depth = 0;
    on_a = on_b = g.point_a;
  }
  return true;
}

bool convex_contact(const ConvexCore& a, const ConvexCore& b, ContactManifold& out) {
  out.count = 0;
  Vec3 normal, on_a, on_b;
  double depth = 0;
  if (!convex_penetration(a, b, normal, depth, on_a, on_b)) return false;
  out.normal = normal;
  out.points[0] = {(on_a + on_b) * 0.5, depth};
  out.count = 1;

  // More points where two faces (or a face and an edge) meet: clip one by the other. The normal
  // stays the one found above; the faces only say where the contact area is.
  thread_local Feature fa, fb;  // per thread: 1.5 KB to zero on every call otherwise
  Vec3 na, nb;
  const int ka = support_feature(a, normal, fa, na);
  const int kb = support_feature(b, -normal, fb, nb);
  const bool a_ref = ka >= 3 && (kb < 3 || dot(na, normal) >= dot(nb, -normal));
  const bool b_ref = !a_ref && kb >= 3;
  if (!a_ref && !b_ref) return true;
  if (a_ref && (kb < 2 || dot(na, normal) < kFaceCosine)) return true;
  if (b_ref && (ka < 2 || dot(nb, -normal) < kFaceCosine)) return true;
  std::array<ContactPoint, 4> clipped;
  const int found = a_ref ? clip_features(fa, ka, na, normal, fb, kb, clipped)
                          : clip_features(fb, kb, nb, -normal, fa, ka, clipped);
  if (found == 0) return true;
  // Depths measured to the reference plane can exceed the penetration where a point would leave
  // through a side first; the penetration bounds them.
  for (int k = 0; k < found; ++k) clipped[k].depth = std::min(clipped[k].depth, depth);
  out.count = found;
  out.points = clipped;
  return true;
}

}  // namespace kinema::detail
