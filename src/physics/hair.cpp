// Hair as Cosserat rods (kinema/physics/hair.h).
#include "kinema/physics/hair.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "hair";
/// A segment's frame turns as if its moment of inertia were this many times m·l²: heavy enough
/// that the stretch–shear constraint moves the points more than the frames (lighter frames lagged
/// behind their segments and pulled soft strands into kinks, even upward).
constexpr double kFrameInertia = 10;

Quat pure(const Vec3& v) { return {v.x, v.y, v.z, 0}; }

/// d₃ of a frame: its third axis, along the segment.
Vec3 tangent(const Quat& q) { return rotate(q, Vec3{0, 0, 1}); }

}  // namespace

HairSystem::HairSystem(std::vector<std::vector<Vec3>> guides, HairOptions options)
    : o_(std::move(options)) {
  auto fail = [](const std::string& reason) { throw Error({}, kPlace, reason); };
  if (guides.empty()) fail("no guide strands");
  auto unit = [&](double v, const char* what) {
    if (!(v >= 0 && v <= 1)) fail(std::string(what) + " must be between 0 and 1");
  };
  unit(o_.bend_stiffness, "bend_stiffness");
  unit(o_.twist_stiffness, "twist_stiffness");
  if (!(o_.mass_per_length > 0) || !std::isfinite(o_.mass_per_length))
    fail("mass_per_length must be positive and finite");
  if (!(o_.air_drag >= 0) || !std::isfinite(o_.air_drag)) fail("air_drag must be ≥ 0 and finite");
  if (!(o_.thickness >= 0) || !std::isfinite(o_.thickness))
    fail("thickness must be ≥ 0 and finite");
  if (!is_finite(o_.gravity)) fail("gravity is not finite");
  if (o_.substeps < 1 || o_.iterations < 1) fail("substeps and iterations must be ≥ 1");
  for (size_t c = 0; c < o_.colliders.size(); ++c)
    validate_collider(o_.colliders[c], kPlace, "collider " + std::to_string(c));

  start_.push_back(0);
  for (size_t g = 0; g < guides.size(); ++g) {
    const std::vector<Vec3>& strand = guides[g];
    const std::string what = "guide " + std::to_string(g);
    if (strand.size() < 2) fail(what + " has fewer than 2 points");
    for (size_t i = 0; i < strand.size(); ++i)
      if (!is_finite(strand[i])) fail(what + ", point " + std::to_string(i) + " is not finite");
    // Frames by parallel transport: the first turns z onto the root segment, each next one the
    // least rotation from its predecessor (no twist at rest).
    Quat frame{0, 0, 0, 1};
    for (size_t i = 0; i + 1 < strand.size(); ++i) {
      const Vec3 d = strand[i + 1] - strand[i];
      const double l = length(d);
      if (!(l > 0)) fail(what + ", segment " + std::to_string(i) + " has zero length");
      frame = i == 0 ? from_to(Vec3{0, 0, 1}, d / l)
                     : normalize(from_to(tangent(frame), d / l) * frame);
      q_.push_back(frame);
      rest_.push_back(l);
      const double segment_mass = o_.mass_per_length * l;
      inverse_inertia_.push_back(i == 0 ? 0 : 1 / (kFrameInertia * segment_mass * l * l));
    }
    for (size_t i = 0; i < strand.size(); ++i) {
      x_.push_back(strand[i]);
      // Each point carries half of each segment beside it.
      const double m = o_.mass_per_length * 0.5 *
                       ((i > 0 ? length(strand[i] - strand[i - 1]) : 0) +
                        (i + 1 < strand.size() ? length(strand[i + 1] - strand[i]) : 0));
      inverse_mass_.push_back(i == 0 ? 0 : 1 / m);
    }
    start_.push_back(x_.size());
  }
  rest_x_ = x_;
  rest_q_ = q_;
  v_.assign(x_.size(), Vec3{0, 0, 0});
  // Rest Darboux vectors between neighbouring segments of a guide (the last segment's is unused).
  rest_darboux_.assign(q_.size(), Quat{0, 0, 0, 1});
  for (size_t g = 0; g + 1 < start_.size(); ++g) {
    const size_t first = start_[g] - g, segments = start_[g + 1] - start_[g] - 1;
    for (size_t s = 0; s + 1 < segments; ++s)
      rest_darboux_[first + s] = conjugate(q_[first + s]) * q_[first + s + 1];
  }
}

void HairSystem::set_head(const Quat& rotation, const Vec3& translation) {
  if (!is_finite(rotation) || !(length(rotation) > 0) || !is_finite(translation))
    throw Error({}, kPlace, "the head's placement is not finite");
  head_to_ = normalize(rotation);
  head_to_t_ = translation;
}

void HairSystem::set_colliders(std::vector<Collider> colliders) {
  for (size_t c = 0; c < colliders.size(); ++c)
    validate_collider(colliders[c], kPlace, "collider " + std::to_string(c));
  o_.colliders = std::move(colliders);
}

size_t HairSystem::step(double h) {
  if (!(h > 0) || !std::isfinite(h))
    throw Error({}, kPlace, "the step must be positive and finite");
  const double hs = h / o_.substeps;
  const Vec3 e3{0, 0, 1};
  const double bend_twist[3] = {o_.bend_stiffness, o_.bend_stiffness, o_.twist_stiffness};
  size_t contacts = 0;
  for (int sub = 0; sub < o_.substeps; ++sub) {
    const double f = double(sub + 1) / o_.substeps;
    const Quat head = slerp(head_from_, head_to_, f);
    const Vec3 head_t = lerp(head_from_t_, head_to_t_, f);
    previous_ = x_;
    for (size_t i = 0; i < x_.size(); ++i) {
      if (inverse_mass_[i] == 0) {  // a root: clamped to the head
        x_[i] = rotate(head, rest_x_[i]) + head_t;
        continue;
      }
      v_[i] += (o_.gravity - v_[i] * o_.air_drag) * hs;
      x_[i] += v_[i] * hs;
    }
    // Frames carry no angular momentum (a strand's is negligible beside its bending forces):
    // they turn only as the constraints turn them. Root frames follow the head.
    for (size_t s = 0; s < q_.size(); ++s)
      if (inverse_inertia_[s] == 0) q_[s] = normalize(head * rest_q_[s]);
    for (int it = 0; it < o_.iterations; ++it) {
      for (size_t g = 0; g + 1 < start_.size(); ++g) {
        const size_t p0 = start_[g], first = start_[g] - g;
        const size_t segments = start_[g + 1] - start_[g] - 1;
        // Stretch–shear: (p_{i+1} − p_i)/l − d₃(q_i) = 0.
        for (size_t s = 0; s < segments; ++s) {
          Vec3 &a = x_[p0 + s], &b = x_[p0 + s + 1];
          Quat& q = q_[first + s];
          const double wa = inverse_mass_[p0 + s], wb = inverse_mass_[p0 + s + 1];
          const double wq = inverse_inertia_[first + s], l = rest_[first + s];
          const Vec3 gamma = ((b - a) / l - tangent(q)) / ((wa + wb) / l + 4 * wq * l + 1e-12);
          a += gamma * wa;
          b -= gamma * wb;
          if (wq > 0) {
            const Quat q_e3_bar = q * conjugate(pure(e3));
            q = normalize(q + pure(gamma) * q_e3_bar * (2 * wq * l));
          }
        }
        // Bend–twist: the Darboux vector q_iᶜ·q_{i+1} toward its rest value.
        for (size_t s = 0; s + 1 < segments; ++s) {
          Quat &qa = q_[first + s], &qb = q_[first + s + 1];
          const double wa = inverse_inertia_[first + s], wb = inverse_inertia_[first + s + 1];
          if (wa + wb == 0) continue;
          const Quat omega = conjugate(qa) * qb, rest = rest_darboux_[first + s];
          const Quat plus = omega + rest, minus = omega - rest;
          Quat delta = dot(minus, minus) > dot(plus, plus) ? plus : minus;
          delta = {delta.x * bend_twist[0] / (wa + wb), delta.y * bend_twist[1] / (wa + wb),
                   delta.z * bend_twist[2] / (wa + wb), 0};
          const Quat correction_a = qb * delta * wa, correction_b = qa * delta * (-wb);
          qa = normalize(qa + correction_a);
          qb = normalize(qb + correction_b);
        }
      }
    }
    // Hair barely stretches: follow the leader (Müller, Kim & Chentanez 2012), each point put
    // back at its segment's rest length from the point before it, root to tip.
    for (size_t g = 0; g + 1 < start_.size(); ++g)
      for (size_t i = start_[g] + 1; i < start_[g + 1]; ++i) {
        const Vec3 d = x_[i] - x_[i - 1];
        const double len = length(d);
        if (len > 0) x_[i] = x_[i - 1] + d * (rest_[i - 1 - g] / len);
      }
    for (size_t i = 0; i < x_.size(); ++i) {
      if (inverse_mass_[i] == 0) continue;
      for (const Collider& c : o_.colliders) {
        Vec3 surface, normal;
        if (collider_contact(c, x_[i], o_.thickness, surface, normal)) {
          x_[i] = surface;
          ++contacts;
        }
      }
      v_[i] = (x_[i] - previous_[i]) / hs;
    }
  }
  head_from_ = head_to_;
  head_from_t_ = head_to_t_;
  for (const Vec3& p : x_)
    if (!is_finite(p)) throw Error({}, kPlace, "the hair blew up (a position is not finite)");
  return contacts;
}

HairChildren make_hair_children(const HairSystem& system, std::span<const Vec3> roots, int points) {
  if (points < 2) throw Error({}, kPlace, "child strands need at least 2 points");
  HairChildren c;
  c.points = points;
  for (size_t r = 0; r < roots.size(); ++r) {
    if (!is_finite(roots[r]))
      throw Error({}, kPlace, "child root " + std::to_string(r) + " is not finite");
    // The three nearest guide roots (fewer when there are fewer guides), inverse distance.
    std::vector<std::pair<double, std::uint32_t>> near;
    for (size_t g = 0; g < system.guide_count(); ++g)
      near.push_back({length(system.rest_guide(g)[0] - roots[r]), std::uint32_t(g)});
    std::sort(near.begin(), near.end());
    std::array<std::uint32_t, 3> guides{};
    std::array<double, 3> weights{};
    const size_t k = std::min<size_t>(3, near.size());
    if (near[0].first < 1e-9) {
      guides = {near[0].second, near[0].second, near[0].second};
      weights = {1, 0, 0};
    } else {
      double total = 0;
      for (size_t i = 0; i < 3; ++i) {
        guides[i] = near[std::min(i, k - 1)].second;
        weights[i] = i < k ? 1 / near[i].first : 0;
        total += weights[i];
      }
      for (double& w : weights) w /= total;
    }
    c.roots.push_back(roots[r]);
    c.guides.push_back(guides);
    c.weights.push_back(weights);
  }
  return c;
}

std::vector<Vec3> interpolate_hair(const HairSystem& system, const HairChildren& children) {
  // Each guide resampled at `points` fractions of its rest arc length.
  const size_t guides = system.guide_count();
  const size_t n = size_t(children.points);
  std::vector<Vec3> resampled(guides * n);
  for (size_t g = 0; g < guides; ++g) {
    const std::span<const Vec3> now = system.guide(g);
    std::vector<double> arc{0};
    for (size_t s = 0; s + 1 < now.size(); ++s)
      arc.push_back(arc.back() + system.rest_length(g, s));
    size_t s = 0;
    for (size_t j = 0; j < n; ++j) {
      const double at = arc.back() * double(j) / double(n - 1);
      while (s + 2 < arc.size() && arc[s + 1] < at) ++s;
      const double t = std::clamp((at - arc[s]) / (arc[s + 1] - arc[s]), 0.0, 1.0);
      resampled[g * n + j] = lerp(now[s], now[s + 1], t) - now[0];
    }
  }
  std::vector<Vec3> out;
  out.reserve(children.roots.size() * n);
  for (size_t c = 0; c < children.roots.size(); ++c) {
    const Vec3 root = rotate(system.head_rotation(), children.roots[c]) + system.head_translation();
    for (size_t j = 0; j < n; ++j) {
      Vec3 p = root;
      for (size_t k = 0; k < 3; ++k)
        p += resampled[children.guides[c][k] * n + j] * children.weights[c][k];
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace kinema
