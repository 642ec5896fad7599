// Soft bodies (kinema/physics/soft_body.h).
#include "kinema/physics/soft_body.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "soft body";

}  // namespace

double tet_volume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  return dot(cross(b - a, c - a), d - a) / 6;
}

TetMesh make_box_tets(int nx, int ny, int nz, const Vec3& size, const Vec3& corner) {
  if (nx < 1 || ny < 1 || nz < 1)
    throw Error({}, kPlace, "a box needs at least one cube along each axis");
  if (!(size.x > 0 && size.y > 0 && size.z > 0) || !is_finite(size) || !is_finite(corner))
    throw Error({}, kPlace, "a box's size must be positive and finite");
  TetMesh m;
  for (int k = 0; k <= nz; ++k)
    for (int j = 0; j <= ny; ++j)
      for (int i = 0; i <= nx; ++i)
        m.positions.push_back(corner + Vec3{size.x * i / nx, size.y * j / ny, size.z * k / nz});
  auto at = [&](int i, int j, int k) { return std::uint32_t((k * (ny + 1) + j) * (nx + 1) + i); };
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        // The cube's corners p[bits] with bit 0 = x, bit 1 = y, bit 2 = z. Even cubes keep the
        // corners 0, 3, 5, 6 for the middle tetrahedron, odd cubes 1, 2, 4, 7 (mirrored), so a
        // face shared by two cubes is cut along the same diagonal on both sides.
        std::uint32_t p[8];
        for (int b = 0; b < 8; ++b) p[b] = at(i + (b & 1), j + ((b >> 1) & 1), k + ((b >> 2) & 1));
        const bool even = (i + j + k) % 2 == 0;
        const std::array<std::array<int, 4>, 5> cut =
            even ? std::array<std::array<int, 4>, 5>{{{1, 0, 3, 5},
                                                      {2, 0, 3, 6},
                                                      {4, 0, 5, 6},
                                                      {7, 3, 5, 6},
                                                      {0, 3, 5, 6}}}
                 : std::array<std::array<int, 4>, 5>{
                       {{0, 1, 2, 4}, {3, 1, 2, 7}, {5, 1, 4, 7}, {6, 2, 4, 7}, {1, 2, 4, 7}}};
        for (const auto& t : cut) {
          std::array<std::uint32_t, 4> tet{p[t[0]], p[t[1]], p[t[2]], p[t[3]]};
          const Vec3 &a = m.positions[tet[0]], &b = m.positions[tet[1]], &c = m.positions[tet[2]],
                     &d = m.positions[tet[3]];
          if (tet_volume(a, b, c, d) < 0) std::swap(tet[2], tet[3]);  // orient positively
          m.tets.push_back(tet);
        }
      }
  return m;
}

void validate_tet_mesh(const TetMesh& mesh, const std::string& name) {
  const size_t n = mesh.positions.size();
  if (n < 4 || mesh.tets.empty())
    throw Error({}, name, "a soft body needs at least one tetrahedron");
  for (size_t i = 0; i < n; ++i)
    if (!is_finite(mesh.positions[i]))
      throw Error({}, name, "vertex " + std::to_string(i) + " is not finite");
  for (size_t t = 0; t < mesh.tets.size(); ++t) {
    const auto& tet = mesh.tets[t];
    const std::string what = "tetrahedron " + std::to_string(t);
    for (std::uint32_t v : tet)
      if (v >= n)
        throw Error({}, name,
                    what + " names vertex " + std::to_string(v) + " of " + std::to_string(n));
    const std::set<std::uint32_t> distinct(tet.begin(), tet.end());
    if (distinct.size() != 4) throw Error({}, name, what + " repeats a vertex");
    const Vec3 &a = mesh.positions[tet[0]], &b = mesh.positions[tet[1]],
               &c = mesh.positions[tet[2]], &d = mesh.positions[tet[3]];
    double longest = 0;
    for (const Vec3& e : {b - a, c - a, d - a, c - b, d - b, d - c})
      longest = std::max(longest, length(e));
    const double volume = tet_volume(a, b, c, d);
    if (volume < 0) throw Error({}, name, what + " is inverted (negative volume)");
    if (!(volume > 1e-12 * longest * longest * longest))
      throw Error({}, name, what + " is flat (no volume)");
  }
}

std::vector<std::array<std::uint32_t, 3>> tet_surface(const TetMesh& mesh) {
  // Faces of a positively oriented (a, b, c, d), counter-clockwise from outside.
  std::map<std::array<std::uint32_t, 3>, std::pair<int, std::array<std::uint32_t, 3>>> faces;
  for (const auto& t : mesh.tets) {
    const std::array<std::array<std::uint32_t, 3>, 4> four{
        {{t[0], t[2], t[1]}, {t[0], t[1], t[3]}, {t[1], t[2], t[3]}, {t[0], t[3], t[2]}}};
    for (const auto& f : four) {
      std::array<std::uint32_t, 3> key = f;
      std::sort(key.begin(), key.end());
      auto& entry = faces[key];
      ++entry.first;
      entry.second = f;
    }
  }
  std::vector<std::array<std::uint32_t, 3>> surface;
  for (const auto& [key, entry] : faces)
    if (entry.first == 1) surface.push_back(entry.second);
  return surface;
}

SoftBody::SoftBody(TetMesh mesh, SoftBodyOptions options)
    : mesh_(std::move(mesh)), o_(std::move(options)) {
  validate_tet_mesh(mesh_);
  auto non_negative = [](double v, const char* what) {
    if (!(v >= 0) || !std::isfinite(v))
      throw Error({}, kPlace, std::string(what) + " must be ≥ 0 and finite");
  };
  non_negative(o_.density, "density");
  if (!(o_.density > 0)) throw Error({}, kPlace, "density must be > 0");
  non_negative(o_.edge_compliance, "edge_compliance");
  non_negative(o_.volume_compliance, "volume_compliance");
  non_negative(o_.air_drag, "air_drag");
  if (!is_finite(o_.gravity)) throw Error({}, kPlace, "gravity is not finite");
  if (o_.substeps < 1) throw Error({}, kPlace, "substeps must be ≥ 1");
  for (size_t c = 0; c < o_.colliders.size(); ++c)
    validate_collider(o_.colliders[c], kPlace, "collider " + std::to_string(c));
  const size_t n = mesh_.positions.size();
  x_ = mesh_.positions;
  v_.assign(n, Vec3{0, 0, 0});
  mass_.assign(n, 0.0);
  std::set<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (const auto& t : mesh_.tets) {
    const double volume = tet_volume(x_[t[0]], x_[t[1]], x_[t[2]], x_[t[3]]);
    tet_rest_.push_back(volume);
    rest_volume_ += volume;
    for (std::uint32_t v : t) mass_[v] += o_.density * volume / 4;
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b)
        edges.insert({std::min(t[size_t(a)], t[size_t(b)]), std::max(t[size_t(a)], t[size_t(b)])});
  }
  for (const auto& [a, b] : edges) {
    edges_.push_back({a, b});
    edge_rest_.push_back(length(x_[b] - x_[a]));
  }
  inverse_mass_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (!(mass_[i] > 0))
      throw Error({}, kPlace, "vertex " + std::to_string(i) + " is in no tetrahedron");
    inverse_mass_[i] = 1 / mass_[i];
  }
  for (std::uint32_t p : o_.pinned) {
    if (p >= n)
      throw Error(
          {}, kPlace,
          "pinned vertex " + std::to_string(p) + " is past the mesh's " + std::to_string(n));
    inverse_mass_[p] = 0;
  }
  pin_target_ = x_;
}

void SoftBody::set_pin_target(std::uint32_t v, const Vec3& target) {
  if (v >= x_.size() || inverse_mass_[v] != 0)
    throw Error({}, kPlace, "vertex " + std::to_string(v) + " is not pinned");
  if (!is_finite(target)) throw Error({}, kPlace, "a pin's target is not finite");
  pin_target_[v] = target;
}

void SoftBody::set_colliders(std::vector<Collider> colliders) {
  for (size_t c = 0; c < colliders.size(); ++c)
    validate_collider(colliders[c], kPlace, "collider " + std::to_string(c));
  o_.colliders = std::move(colliders);
}

void SoftBody::set_state(std::span<const Vec3> positions, std::span<const Vec3> velocities) {
  if (positions.size() != x_.size() || velocities.size() != x_.size())
    throw Error({}, kPlace,
                "set_state needs " + std::to_string(x_.size()) + " positions and velocities");
  for (size_t i = 0; i < x_.size(); ++i)
    if (!is_finite(positions[i]) || !is_finite(velocities[i]))
      throw Error({}, kPlace, "set_state: vertex " + std::to_string(i) + " is not finite");
  x_.assign(positions.begin(), positions.end());
  v_.assign(velocities.begin(), velocities.end());
  pin_target_ = x_;
}

size_t SoftBody::step(double h) {
  if (!(h > 0) || !std::isfinite(h))
    throw Error({}, kPlace, "the step must be positive and finite");
  const double hs = h / o_.substeps;
  const size_t n = x_.size();
  const double edge_alpha = o_.edge_compliance / (hs * hs);
  const double volume_alpha = o_.volume_compliance / (hs * hs);
  size_t contacts = 0;
  step_start_ = x_;
  for (int s = 0; s < o_.substeps; ++s) {
    previous_ = x_;
    const double f = double(s + 1) / o_.substeps;
    for (size_t i = 0; i < n; ++i) {
      if (inverse_mass_[i] == 0) {  // pinned: on the straight line to its target
        x_[i] = lerp(step_start_[i], pin_target_[i], f);
        continue;
      }
      v_[i] += (o_.gravity - v_[i] * o_.air_drag) * hs;
      x_[i] += v_[i] * hs;
    }
    // Edges: C = |x_b − x_a| − L0 (one sweep a substep: small steps, not iterations).
    for (size_t e = 0; e < edges_.size(); ++e) {
      const auto [a, b] = edges_[e];
      const double w = inverse_mass_[a] + inverse_mass_[b];
      const Vec3 d = x_[b] - x_[a];
      const double len = length(d);
      if (w == 0 || !(len > 0)) continue;
      const double dl = -(len - edge_rest_[e]) / (w + edge_alpha);
      const Vec3 dir = d / len;
      x_[a] -= dir * (inverse_mass_[a] * dl);
      x_[b] += dir * (inverse_mass_[b] * dl);
    }
    // Volumes: C = V − V0 with ∂V/∂x1 = (x2 − x0) × (x3 − x0)/6 and its cyclic kin.
    if (o_.volume_constraints) {
      for (size_t t = 0; t < mesh_.tets.size(); ++t) {
        const auto& tet = mesh_.tets[t];
        const Vec3 &p0 = x_[tet[0]], &p1 = x_[tet[1]], &p2 = x_[tet[2]], &p3 = x_[tet[3]];
        std::array<Vec3, 4> grad;
        grad[1] = cross(p2 - p0, p3 - p0) / 6.0;
        grad[2] = cross(p3 - p0, p1 - p0) / 6.0;
        grad[3] = cross(p1 - p0, p2 - p0) / 6.0;
        grad[0] = -(grad[1] + grad[2] + grad[3]);
        double w = 0;
        for (int k = 0; k < 4; ++k)
          w += inverse_mass_[tet[size_t(k)]] * length_squared(grad[size_t(k)]);
        if (!(w > 0)) continue;
        const double constraint = tet_volume(p0, p1, p2, p3) - tet_rest_[t];
        const double dl = -constraint / (w + volume_alpha);
        for (int k = 0; k < 4; ++k)
          x_[tet[size_t(k)]] += grad[size_t(k)] * (inverse_mass_[tet[size_t(k)]] * dl);
      }
    }
    // Colliders, with Coulomb friction on the substep's slide.
    for (size_t i = 0; i < n; ++i) {
      if (inverse_mass_[i] == 0) continue;
      for (const Collider& c : o_.colliders) {
        Vec3 surface, normal;
        if (!collider_contact(c, x_[i], 0, surface, normal)) continue;
        ++contacts;
        const double depth = length(surface - x_[i]);
        x_[i] = surface;
        const Vec3 moved = x_[i] - previous_[i];
        const Vec3 slide = moved - normal * dot(moved, normal);
        const double slide_length = length(slide);
        if (slide_length > 0) x_[i] -= slide * std::min(1.0, c.friction * depth / slide_length);
      }
    }
    for (size_t i = 0; i < n; ++i) v_[i] = (x_[i] - previous_[i]) / hs;
  }
  for (const Vec3& p : x_)
    if (!is_finite(p))
      throw Error(
          {}, kPlace,
          "the soft body blew up (a position is not finite): lower the step or raise the substeps");
  return contacts;
}

double SoftBody::volume() const {
  double v = 0;
  for (const auto& t : mesh_.tets) v += tet_volume(x_[t[0]], x_[t[1]], x_[t[2]], x_[t[3]]);
  return v;
}

double SoftBody::kinetic_energy() const {
  double e = 0;
  for (size_t i = 0; i < x_.size(); ++i) e += 0.5 * mass_[i] * length_squared(v_[i]);
  return e;
}

double SoftBody::largest_stretch() const {
  double worst = 0;
  for (size_t e = 0; e < edges_.size(); ++e)
    worst = std::max(worst,
                     (length(x_[edges_[e][1]] - x_[edges_[e][0]]) - edge_rest_[e]) / edge_rest_[e]);
  return worst;
}

}  // namespace kinema
