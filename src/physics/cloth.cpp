// Mass-spring and constraint cloth (kinema/physics/cloth.h): the solvers, contacts and checks.
// Meshes and springs: cloth_mesh.cpp.
#include "kinema/physics/cloth.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <queue>
#include <string>

#include "cloth_assembly.h"
#include "cloth_internal.h"
#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "cloth";
using cloth_detail::for_blocks;
using cloth_detail::kNone;
constexpr std::uint32_t kParallelSprings = 1024;  ///< a colour with fewer runs in one thread
constexpr size_t kTetherAnchors = 4;              ///< tethers per vertex at most
constexpr size_t kTetherSources = 64;             ///< more anchors than this: the nearest one only

}  // namespace

// ---- the cloth ---------------------------------------------------------------------------------

Cloth::Cloth(ClothMesh mesh, ClothOptions options)
    : parallel_(std::make_shared<Parallel>(options.threads)),
      mesh_(std::move(mesh)),
      o_(std::move(options)) {
  validate_cloth_mesh(mesh_);
  const size_t n = mesh_.positions.size();
  const ClothMaterial& mat = o_.material;
  auto fail = [](const std::string& reason) { throw Error({}, kPlace, reason); };
  auto non_negative = [&](double v, const char* what, bool infinite_ok = false) {
    if (!(v >= 0) || (!infinite_ok && !std::isfinite(v)))
      fail(std::string(what) + " must be ≥ 0" + (infinite_ok ? "" : " and finite"));
  };
  const bool xpbd = o_.solver == ClothSolver::Xpbd;
  non_negative(mat.mass_per_area, "mass_per_area");
  non_negative(mat.vertex_mass, "vertex_mass");
  if (!xpbd && (mat.stretch_stiffness == HUGE_VAL || mat.shear_stiffness == HUGE_VAL ||
                mat.bend_stiffness == HUGE_VAL))
    fail("an infinite stiffness (an inextensible spring) needs the XPBD solver");
  non_negative(mat.stretch_stiffness, "stretch_stiffness", xpbd);
  non_negative(mat.shear_stiffness, "shear_stiffness", xpbd);
  non_negative(mat.bend_stiffness, "bend_stiffness", xpbd);
  non_negative(mat.spring_damping, "spring_damping");
  non_negative(mat.air_drag, "air_drag");
  non_negative(mat.aerodynamic_coefficient, "aerodynamic_coefficient");
  non_negative(o_.thickness, "thickness");
  non_negative(o_.cg_tolerance, "cg_tolerance");
  non_negative(o_.strain_limit, "strain_limit");
  if (!(o_.slack_stiffness >= 0 && o_.slack_stiffness <= 1))
    fail("slack_stiffness must be between 0 and 1 (a fraction of each spring's stiffness)");
  if (o_.strain_limit > 0 && o_.strain_limit_passes < 1)
    fail("strain_limit_passes must be at least 1 when strain_limit is set");
  if (!(o_.strain_limit_relaxation > 0 && o_.strain_limit_relaxation < 2))
    fail("strain_limit_relaxation must be between 0 and 2 (exclusive)");
  if (!is_finite(o_.gravity)) fail("gravity is not finite");
  if (!is_finite(o_.wind)) fail("wind is not finite");
  if (o_.substeps < 0) fail("substeps must be ≥ 0 (0: automatic)");
  if (o_.iterations < 1) fail("iterations must be ≥ 1");
  if (o_.cg_max_iterations < 1) fail("cg_max_iterations must be ≥ 1");
  for (size_t c = 0; c < o_.colliders.size(); ++c)
    validate_collider(o_.colliders[c], kPlace, "collider " + std::to_string(c));

  // Masses: a third of each triangle's mass to each corner, or the same for every vertex.
  mass_.assign(n, 0.0);
  if (mat.vertex_mass > 0) {
    mass_.assign(n, mat.vertex_mass);
  } else {
    for (const auto& t : mesh_.triangles) {
      const Vec3 a = mesh_.positions[t[0]], b = mesh_.positions[t[1]], c = mesh_.positions[t[2]];
      const double third = mat.mass_per_area * 0.5 * length(cross(b - a, c - a)) / 3;
      for (std::uint32_t v : t) mass_[v] += third;
    }
  }
  inverse_mass_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (!(mass_[i] > 0))
      fail("vertex " + std::to_string(i) +
           " has no mass (it is in no triangle, or mass_per_area is 0): set vertex_mass");
    inverse_mass_[i] = 1 / mass_[i];
  }
  x_ = mesh_.positions;
  v_.assign(n, Vec3{0, 0, 0});
  previous_ = x_;

  // Kinematic vertices: pinned ones and attached ones.
  std::vector<char> kinematic(n, 0);
  auto make_kinematic = [&](std::uint32_t v, const char* what) {
    if (v >= n)
      fail(std::string(what) + " vertex " + std::to_string(v) + " is past the mesh's " +
           std::to_string(n));
    if (kinematic[v]) fail("vertex " + std::to_string(v) + " is pinned or attached twice");
    kinematic[v] = 1;
    inverse_mass_[v] = 0;
    kinematic_.push_back(v);
  };
  for (std::uint32_t v : o_.pinned) make_kinematic(v, "pinned");
  for (const ClothAttachment& a : o_.attachments) {
    if (!is_finite(a.offset)) fail("attachment offset is not finite");
    make_kinematic(a.cloth_vertex, "attached");
  }
  kinematic_from_ = x_;
  kinematic_to_ = x_;

  // Springs with their stiffness; kinds without stiffness get none.
  // Every spring of the mesh: those with stiffness become forces or constraints; all of them
  // (but bend) are the paths the tethers measure along.
  const std::vector<ClothSpring> all_springs = cloth_springs(mesh_);
  for (const ClothSpring& s : all_springs) {
    const double k = s.kind == ClothSpringKind::Structural ? mat.stretch_stiffness
                     : s.kind == ClothSpringKind::Shear    ? mat.shear_stiffness
                                                           : mat.bend_stiffness;
    if (k == 0 || (inverse_mass_[s.a] == 0 && inverse_mass_[s.b] == 0)) continue;
    springs_.push_back(s);
    stiffness_.push_back(k);
  }
  // Strain limiting works on every structural spring with a free end, whatever its stiffness.
  if (o_.strain_limit > 0) {
    for (const ClothSpring& s : all_springs) {
      const double wa = inverse_mass_[s.a], wb = inverse_mass_[s.b];
      if (s.kind != ClothSpringKind::Structural || wa + wb == 0) continue;
      const double longest = (1 + o_.strain_limit) * s.rest_length;
      limited_springs_.push_back(
          {s.a, s.b, wa / (wa + wb), wb / (wa + wb), longest, longest * longest});
    }
  }

  // Per-vertex adjacency of springs and triangles (CSR, in index order).
  auto build_csr = [n](std::vector<std::uint32_t>& start, std::vector<std::uint32_t>& of,
                       size_t count, auto&& vertices_of) {
    start.assign(n + 1, 0);
    for (size_t e = 0; e < count; ++e)
      for (std::uint32_t v : vertices_of(e)) ++start[v + 1];
    for (size_t i = 0; i < n; ++i) start[i + 1] += start[i];
    of.resize(start[n]);
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (size_t e = 0; e < count; ++e)
      for (std::uint32_t v : vertices_of(e)) of[fill[v]++] = std::uint32_t(e);
  };
  build_csr(spring_start_, spring_of_, springs_.size(), [&](size_t s) {
    return std::array<std::uint32_t, 2>{springs_[s].a, springs_[s].b};
  });
  build_csr(triangle_start_, triangle_of_, mesh_.triangles.size(),
            [&](size_t t) { return mesh_.triangles[t]; });

  // Colours for XPBD: greedy, in spring order; no two springs of a colour share a vertex. The
  // springs past 64 colours (very high valence) form one last colour solved in sequence.
  std::vector<std::uint64_t> used(n, 0);
  std::vector<int> colour(springs_.size());
  int colours = 0;
  for (size_t s = 0; s < springs_.size(); ++s) {
    const std::uint64_t taken = used[springs_[s].a] | used[springs_[s].b];
    const int c = taken == ~std::uint64_t(0) ? 64 : std::countr_one(taken);
    colour[s] = c;
    if (c < 64)
      used[springs_[s].a] |= std::uint64_t(1) << c, used[springs_[s].b] |= std::uint64_t(1) << c;
    colours = std::max(colours, c + 1);
  }
  colour_start_.assign(size_t(colours) + 1, 0);
  for (int c : colour) ++colour_start_[size_t(c) + 1];
  for (int c = 0; c < colours; ++c) colour_start_[size_t(c) + 1] += colour_start_[size_t(c)];
  coloured_.resize(springs_.size());
  {
    std::vector<std::uint32_t> fill(colour_start_.begin(), colour_start_.end() - 1);
    for (size_t s = 0; s < springs_.size(); ++s)
      coloured_[fill[size_t(colour[s])]++] = std::uint32_t(s);
  }
  // The XPBD sweep reads the springs in colour order, each with 1/k (0: inextensible).
  xpbd_springs_.reserve(springs_.size());
  for (std::uint32_t s : coloured_)
    xpbd_springs_.push_back({springs_[s].a, springs_[s].b, springs_[s].rest_length,
                             std::isinf(stiffness_[s]) ? 0 : 1 / stiffness_[s]});

  // Tethers: each free vertex to its kTetherAnchors nearest kinematic vertices, by distance along
  // the structural and shear springs (Dijkstra from each anchor; with more than kTetherSources
  // anchors, from all at once, keeping the nearest only). Several anchors matter: tied to one
  // pin only, the two halves of a cloth hung from two pins are pulled apart where they meet.
  tether_start_.assign(n + 1, 0);
  if (!kinematic_.empty()) {
    const std::vector<ClothSpring>& paths = all_springs;
    std::vector<std::uint32_t> start, of;
    build_csr(start, of, paths.size(), [&](size_t s) {
      return std::array<std::uint32_t, 2>{paths[s].a, paths[s].b};
    });
    std::vector<std::uint32_t> sources = kinematic_;
    std::sort(sources.begin(), sources.end());
    // Distances from a set of sources; `nearest` gets the source each vertex is nearest.
    auto geodesic = [&](std::span<const std::uint32_t> from, std::vector<double>& distance,
                        std::vector<std::uint32_t>& nearest) {
      using Item = std::pair<double, std::uint32_t>;
      std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
      distance.assign(n, std::numeric_limits<double>::infinity());
      nearest.assign(n, kNone);
      for (std::uint32_t k : from) distance[k] = 0, nearest[k] = k, queue.push({0.0, k});
      while (!queue.empty()) {
        const auto [d, v] = queue.top();
        queue.pop();
        if (d > distance[v]) continue;
        for (std::uint32_t e = start[v]; e < start[v + 1]; ++e) {
          const ClothSpring& sp = paths[of[e]];
          if (sp.kind == ClothSpringKind::Bend) continue;
          const std::uint32_t w = sp.a == v ? sp.b : sp.a;
          if (d + sp.rest_length < distance[w]) {
            distance[w] = d + sp.rest_length;
            nearest[w] = nearest[v];
            queue.push({distance[w], w});
          }
        }
      }
    };
    std::vector<std::vector<std::pair<double, std::uint32_t>>> candidates(n);
    std::vector<double> distance;
    std::vector<std::uint32_t> nearest;
    if (sources.size() <= kTetherSources) {
      for (std::uint32_t k : sources) {
        geodesic(std::span<const std::uint32_t>(&k, 1), distance, nearest);
        for (size_t i = 0; i < n; ++i)
          if (std::isfinite(distance[i])) candidates[i].push_back({distance[i], k});
      }
    } else {
      geodesic(sources, distance, nearest);
      for (size_t i = 0; i < n; ++i)
        if (nearest[i] != kNone) candidates[i].push_back({distance[i], nearest[i]});
    }
    for (size_t i = 0; i < n; ++i) {
      if (inverse_mass_[i] > 0) {
        std::sort(candidates[i].begin(), candidates[i].end());
        for (size_t c = 0; c < std::min(candidates[i].size(), kTetherAnchors); ++c) {
          tether_anchor_.push_back(candidates[i][c].second);
          tether_length_.push_back(candidates[i][c].first);
        }
      }
      tether_start_[i + 1] = std::uint32_t(tether_anchor_.size());
    }
  }
}

void Cloth::set_state(std::span<const Vec3> positions, std::span<const Vec3> velocities) {
  if (positions.size() != x_.size() || velocities.size() != x_.size())
    throw Error({}, kPlace,
                "set_state needs " + std::to_string(x_.size()) + " positions and velocities, not " +
                    std::to_string(positions.size()) + " and " + std::to_string(velocities.size()));
  for (size_t i = 0; i < x_.size(); ++i)
    if (!is_finite(positions[i]) || !is_finite(velocities[i]))
      throw Error({}, kPlace, "set_state: vertex " + std::to_string(i) + " is not finite");
  x_.assign(positions.begin(), positions.end());
  v_.assign(velocities.begin(), velocities.end());
  for (std::uint32_t k : kinematic_) kinematic_to_[k] = x_[k];
}

void Cloth::set_colliders(std::vector<Collider> colliders) {
  for (size_t c = 0; c < colliders.size(); ++c)
    validate_collider(colliders[c], kPlace, "collider " + std::to_string(c));
  o_.colliders = std::move(colliders);
}

void Cloth::set_pin_target(std::uint32_t vertex, const Vec3& position) {
  if (vertex >= x_.size() ||
      std::find(o_.pinned.begin(), o_.pinned.end(), vertex) == o_.pinned.end())
    throw Error({}, kPlace, "vertex " + std::to_string(vertex) + " is not pinned");
  if (!is_finite(position)) throw Error({}, kPlace, "pin target is not finite");
  kinematic_to_[vertex] = position;
}

double Cloth::stability_limit() const {
  double omega2 = 0, gamma = 0;
  for (size_t i = 0; i < x_.size(); ++i) {
    if (inverse_mass_[i] == 0) continue;
    double w = 0, g = 0;
    for (std::uint32_t e = spring_start_[i]; e < spring_start_[i + 1]; ++e) {
      const ClothSpring& s = springs_[spring_of_[e]];
      const std::uint32_t j = s.a == i ? s.b : s.a;
      const double factor =
          inverse_mass_[i] + std::sqrt(inverse_mass_[i] * inverse_mass_[j]);  // 0 for a pin
      w += stiffness_[spring_of_[e]] * factor;
      g += o_.material.spring_damping * factor;
    }
    omega2 = std::max(omega2, w);
    gamma = std::max(gamma, g + o_.material.air_drag);
  }
  if (omega2 == 0 && gamma == 0) return std::numeric_limits<double>::infinity();
  return 4 / (gamma + std::sqrt(gamma * gamma + 4 * omega2));
}

int Cloth::substeps_for(double h) const {
  if (o_.substeps > 0) return o_.substeps;
  switch (o_.solver) {
    case ClothSolver::ImplicitEuler:
      return 1;
    case ClothSolver::Xpbd:
      return 8;
    case ClothSolver::SemiImplicit: {
      const double limit = stability_limit();
      if (std::isinf(limit)) return 1;
      const double n = std::floor(h / limit) + 1;  // the fewest with h/n < limit
      if (n > 1e6)
        throw Error({}, kPlace,
                    "the springs are too stiff for the semi-implicit solver at this step (over a "
                    "million substeps): use ImplicitEuler or Xpbd");
      return int(n);
    }
  }
  return 1;
}

void Cloth::forces(std::vector<Vec3>& f) {
  const ClothMaterial& mat = o_.material;
  const size_t n = x_.size();
  f.assign(n, Vec3{0, 0, 0});
  // Aerodynamics per triangle: −C·A·(v_rel·n)|v_rel·n|·n, a third to each corner.
  std::vector<Vec3>& triangle_force = triangle_force_;
  if (mat.aerodynamic_coefficient > 0) {
    triangle_force.resize(mesh_.triangles.size());  // the pass writes every triangle's force
    detail::cloth_wind_pass({x_.data(), v_.data(), mesh_.triangles.data(), o_.wind,
                             mat.aerodynamic_coefficient, triangle_force.data()},
                            mesh_.triangles.size());
  } else {
    triangle_force.assign(mesh_.triangles.size(), Vec3{0, 0, 0});
  }
  for (size_t i = 0; i < n; ++i) {
    if (inverse_mass_[i] == 0) continue;
    Vec3 fi = o_.gravity * mass_[i] + (o_.wind - v_[i]) * (mat.air_drag * mass_[i]);
    for (std::uint32_t e = triangle_start_[i]; e < triangle_start_[i + 1]; ++e)
      fi += triangle_force[triangle_of_[e]];
    f[i] = fi;
  }
}

// Moves the kinematic vertices a `fraction` of the way from where the step began to its targets.
void Cloth::move_kinematic(double fraction) {
  for (std::uint32_t k : kinematic_) x_[k] = lerp(kinematic_from_[k], kinematic_to_[k], fraction);
}

size_t Cloth::collide(std::span<const Vec3> before, bool friction) {
  if (o_.colliders.empty()) return 0;
  size_t contacts = 0;
  for (size_t i = 0; i < x_.size(); ++i) {
    if (inverse_mass_[i] == 0) continue;
    for (const Collider& c : o_.colliders) {
      Vec3 surface, normal;
      if (!collider_contact(c, x_[i], o_.thickness, surface, normal)) continue;
      const double depth = length(surface - x_[i]);
      x_[i] = surface;
      ++contacts;
      if (!friction) continue;
      // Coulomb friction on the substep's tangential motion: static while it is under
      // friction·depth, else shortened by that much.
      const Vec3 moved = x_[i] - before[i];
      const Vec3 tangential = moved - normal * dot(moved, normal);
      const double slide = length(tangential), grip = c.friction * depth;
      if (slide > 0) x_[i] = x_[i] - tangential * std::min(1.0, grip / slide);
    }
  }
  return contacts;
}

void Cloth::build_self_candidates(double h) {
  self_pairs_.clear();
  self_rest_.clear();
  if (!o_.self_collision || o_.thickness <= 0) return;
  const size_t n = x_.size();
  double fastest = 0;
  for (const Vec3& v : v_) fastest = std::max(fastest, length(v));
  // Pairs that may meet this step: within thickness plus what both can travel (capped at ten
  // thicknesses so that a fast cloth does not pair everything).
  const double reach = o_.thickness + std::min(2 * fastest * h, 10 * o_.thickness);
  const size_t table = 2 * n;
  auto cell_of = [&](const Vec3& p) {
    return std::array<long long, 3>{(long long)std::floor(p.x / reach),
                                    (long long)std::floor(p.y / reach),
                                    (long long)std::floor(p.z / reach)};
  };
  auto hash = [&](long long cx, long long cy, long long cz) {
    const std::uint64_t h = std::uint64_t(cx * 92837111) ^ std::uint64_t(cy * 689287499) ^
                            std::uint64_t(cz * 283923481);
    return size_t(h % table);
  };
  std::vector<std::uint32_t> start(table + 1, 0), entries(n);
  std::vector<size_t> slot(n);
  for (size_t i = 0; i < n; ++i) {
    const auto c = cell_of(x_[i]);
    slot[i] = hash(c[0], c[1], c[2]);
    ++start[slot[i] + 1];
  }
  for (size_t s = 0; s < table; ++s) start[s + 1] += start[s];
  {
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (size_t i = 0; i < n; ++i) entries[fill[slot[i]]++] = std::uint32_t(i);
  }
  std::vector<std::uint32_t> seen;
  for (size_t i = 0; i < n; ++i) {
    const auto c = cell_of(x_[i]);
    seen.clear();
    for (long long dx = -1; dx <= 1; ++dx)
      for (long long dy = -1; dy <= 1; ++dy)
        for (long long dz = -1; dz <= 1; ++dz) {
          const size_t s = hash(c[0] + dx, c[1] + dy, c[2] + dz);
          for (std::uint32_t e = start[s]; e < start[s + 1]; ++e) {
            const std::uint32_t j = entries[e];
            if (j <= i || length_squared(x_[j] - x_[i]) >= reach * reach) continue;
            seen.push_back(j);
          }
        }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());  // hash collisions
    for (std::uint32_t j : seen) {
      if (inverse_mass_[i] == 0 && inverse_mass_[j] == 0) continue;
      const double rest = length(mesh_.positions[j] - mesh_.positions[i]);
      self_pairs_.push_back({std::uint32_t(i), j});
      self_rest_.push_back(std::min(rest, o_.thickness));
    }
  }
}

size_t Cloth::self_collide() {
  size_t contacts = 0;
  for (size_t p = 0; p < self_pairs_.size(); ++p) {
    const auto [i, j] = self_pairs_[p];
    const Vec3 d = x_[j] - x_[i];
    const double len = length(d), target = self_rest_[p];
    if (!(len < target) || !(len > 0)) continue;
    const double wi = inverse_mass_[i], wj = inverse_mass_[j];
    const Vec3 push = d * ((target - len) / (len * (wi + wj)));
    x_[i] = x_[i] - push * wi;
    x_[j] = x_[j] + push * wj;
    ++contacts;
  }
  return contacts;
}

void Cloth::substep_semi_implicit(double h) {
  const size_t n = x_.size();
  std::vector<Vec3>& f = force_;
  forces(f);
  // Springs, each computed once and gathered per vertex in index order.
  std::vector<Vec3>& on_a = on_a_;
  on_a.resize(springs_.size());
  for (size_t s = 0; s < springs_.size(); ++s) {
    const ClothSpring& sp = springs_[s];
    const Vec3 d = x_[sp.b] - x_[sp.a];
    const double len = length(d);
    if (!(len > 0)) {
      on_a[s] = {0, 0, 0};
      continue;
    }
    const Vec3 dir = d / len;
    on_a[s] = dir * (stiffness_[s] * (len - sp.rest_length) +
                     o_.material.spring_damping * dot(v_[sp.b] - v_[sp.a], dir));
  }
  for (size_t i = 0; i < n; ++i) {
    if (inverse_mass_[i] == 0) continue;
    Vec3 fi = f[i];
    for (std::uint32_t e = spring_start_[i]; e < spring_start_[i + 1]; ++e) {
      const std::uint32_t s = spring_of_[e];
      fi += springs_[s].a == i ? on_a[s] : -on_a[s];
    }
    v_[i] += fi * (h * inverse_mass_[i]);
    x_[i] += v_[i] * h;
  }
}

void Cloth::substep_xpbd(double h) {
  const size_t n = x_.size();
  tbb::task_arena& arena = parallel_->arena;
  std::vector<Vec3>& f = force_;
  forces(f);
  for (size_t i = 0; i < n; ++i) {
    if (inverse_mass_[i] == 0) continue;
    v_[i] += f[i] * (h * inverse_mass_[i]);
    x_[i] += v_[i] * h;
  }
  // Distance constraints, colour by colour (a colour's springs share no vertex, so they run in
  // parallel and give what a sequential sweep in this order gives). λ is accumulated over the
  // iterations of this substep.
  std::vector<double>& lambda = lambda_;
  lambda.assign(springs_.size(), 0.0);
  const double damping = o_.material.spring_damping;
  const double inverse_h = 1 / h, inverse_h2 = inverse_h * inverse_h;
  auto project = [&](std::uint32_t k) {
    const XpbdSpring& sp = xpbd_springs_[k];
    const double wa = inverse_mass_[sp.a], wb = inverse_mass_[sp.b];
    const Vec3 d = x_[sp.b] - x_[sp.a];
    const double len = length(d);
    if (!(len > 0)) return;
    // α̃ = 1/(k·h²); damping γ = α̃·β̃/h with β̃ = h²·c (both 0 for an inextensible spring).
    const double compliance = sp.flexibility * inverse_h2;
    const double gamma = sp.flexibility * damping * inverse_h;
    const double denominator = (1 + gamma) * (wa + wb) + compliance;
    // One division for both 1/|d| and 1/denominator (the sweep is bound by divisions).
    const double shared = 1 / (len * denominator), inverse_len = shared * denominator;
    double closing = 0;
    if (gamma > 0)
      closing = dot(d, (x_[sp.b] - previous_[sp.b]) - (x_[sp.a] - previous_[sp.a])) * inverse_len;
    const double dl =
        (sp.rest_length - len - compliance * lambda[k] - gamma * closing) * len * shared;
    const Vec3 dir = d * inverse_len;
    lambda[k] += dl;
    x_[sp.a] -= dir * (wa * dl);
    x_[sp.b] += dir * (wb * dl);
  };
  const size_t colours = colour_start_.size() - 1;
  for (int it = 0; it < o_.iterations; ++it) {
    apply_tethers();
    for (size_t c = 0; c < colours; ++c) {
      const std::uint32_t begin = colour_start_[c], end = colour_start_[c + 1];
      if (c == 64 || o_.threads == 1 || end - begin < kParallelSprings) {
        for (std::uint32_t k = begin; k < end; ++k) project(k);
      } else {
        arena.execute([&] {
          tbb::parallel_for(tbb::blocked_range<std::uint32_t>(begin, end, kParallelSprings / 2),
                            [&](const tbb::blocked_range<std::uint32_t>& range) {
                              for (std::uint32_t k = range.begin(); k < range.end(); ++k)
                                project(k);
                            });
        });
      }
    }
  }
}

// Tethers: a free vertex no further from its anchors than its rest distances along the cloth.
void Cloth::apply_tethers() {
  if (!o_.tethers || kinematic_.empty()) return;
  for_blocks(parallel_->arena, o_.threads, x_.size(), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      for (std::uint32_t t = tether_start_[i]; t < tether_start_[i + 1]; ++t) {
        // Without a branch: which tethers are taut changes every substep in a gusty wind.
        const Vec3 anchor = x_[tether_anchor_[t]], d = x_[i] - anchor;
        const double scale =
            std::min(1.0, tether_length_[t] / std::sqrt(length_squared(d) + 1e-300));
        x_[i] = anchor + d * scale;
      }
  });
}

// Strain limiting (Provot 1995): the tethers, then sequential sweeps over the structural springs
// that alternate direction (a correction travels the whole cloth in one sweep along the order,
// and back in the next), each over-long spring shortened by ω times its excess (ω = 1: to its
// limit; over-relaxed, a smooth stretch over a region goes faster). Sequential, so the result
// does not depend on the thread count; the caller turns the moves into velocities.
void Cloth::limit_strain() {
  apply_tethers();
  const size_t count = limited_springs_.size();
  const double omega = o_.strain_limit_relaxation;
  for (int pass = 0; pass < o_.strain_limit_passes; ++pass) {
    bool moved = false;
    for (size_t j = 0; j < count; ++j) {
      const LimitedSpring& s = limited_springs_[pass % 2 == 0 ? j : count - 1 - j];
      const Vec3 d = x_[s.b] - x_[s.a];
      const double length2 = length_squared(d);
      if (length2 <= s.longest_squared) continue;
      const double length = std::sqrt(length2);
      const Vec3 correction = d * (omega * (length - s.longest) / length);
      x_[s.a] += correction * s.share_a;
      x_[s.b] -= correction * s.share_b;
      moved = true;
    }
    if (!moved) break;
  }
}

ClothStepStats Cloth::step(double h, std::span<const Vec3> skin_positions) {
  if (!(h > 0) || !std::isfinite(h))
    throw Error({}, kPlace, "the step must be positive and finite");
  ClothStepStats stats;
  // Where the kinematic vertices go this step.
  for (std::uint32_t k : kinematic_) kinematic_from_[k] = x_[k];
  for (const ClothAttachment& a : o_.attachments) {
    if (a.skin_vertex >= skin_positions.size())
      throw Error({}, kPlace,
                  "attachment to skin vertex " + std::to_string(a.skin_vertex) +
                      " but the step has " + std::to_string(skin_positions.size()) +
                      " skin positions");
    const Vec3 target = skin_positions[a.skin_vertex] + a.offset;
    if (!is_finite(target))
      throw Error({}, kPlace, "skin vertex " + std::to_string(a.skin_vertex) + " is not finite");
    kinematic_to_[a.cloth_vertex] = target;
  }
  const int substeps = substeps_for(h);
  const double hs = h / substeps;
  build_self_candidates(h);
  std::vector<Vec3>& before = before_;
  for (int s = 0; s < substeps; ++s) {
    previous_ = x_;
    move_kinematic(double(s + 1) / substeps);
    switch (o_.solver) {
      case ClothSolver::SemiImplicit:
        substep_semi_implicit(hs);
        break;
      case ClothSolver::ImplicitEuler: {
        double residual = 0;
        stats.cg_iterations += substep_implicit(hs, residual);
        stats.cg_residual = residual;
        break;
      }
      case ClothSolver::Xpbd:
        substep_xpbd(hs);
        break;
    }
    // Contacts and the strain limit move positions; the velocities of the moved vertices follow
    // the move (XPBD: every vertex's velocity is its substep's displacement).
    before = x_;
    stats.collider_contacts += collide(previous_);
    stats.self_contacts += self_collide();
    if (!limited_springs_.empty()) {
      limit_strain();
      collide(previous_, false);  // the limit may have pulled particles back into a collider
    }
    const bool all = o_.solver == ClothSolver::Xpbd;
    for (size_t i = 0; i < x_.size(); ++i) {
      if (inverse_mass_[i] == 0) {
        v_[i] = (kinematic_to_[i] - kinematic_from_[i]) / h;
      } else if (all || !(x_[i] == before[i])) {
        v_[i] = (x_[i] - previous_[i]) / hs;
      }
    }
  }
  for (std::uint32_t k : kinematic_) x_[k] = kinematic_to_[k];
  time_ += h;
  stats.substeps = substeps;
  for (const Vec3& p : x_)
    if (!is_finite(p))
      throw Error({}, kPlace,
                  "the cloth blew up (a position is not finite) at t = " + std::to_string(time_) +
                      " s: lower the step or the stiffness, or use ImplicitEuler or Xpbd");
  return stats;
}

double Cloth::largest_stretch(ClothSpringKind kind) const {
  double worst = 0;
  for (const ClothSpring& s : springs_) {
    if (s.kind != kind) continue;
    worst = std::max(worst, (length(x_[s.b] - x_[s.a]) - s.rest_length) / s.rest_length);
  }
  return worst;
}

double Cloth::kinetic_energy() const {
  double e = 0;
  for (size_t i = 0; i < x_.size(); ++i)
    if (inverse_mass_[i] > 0) e += 0.5 * mass_[i] * length_squared(v_[i]);
  return e;
}

double Cloth::potential_energy() const {
  double e = 0;
  for (size_t s = 0; s < springs_.size(); ++s) {
    if (std::isinf(stiffness_[s])) continue;
    const double stretch = length(x_[springs_[s].b] - x_[springs_[s].a]) - springs_[s].rest_length;
    e += 0.5 * stiffness_[s] * stretch * stretch;
  }
  for (size_t i = 0; i < x_.size(); ++i)
    if (inverse_mass_[i] > 0) e -= mass_[i] * dot(o_.gravity, x_[i]);
  return e;
}

}  // namespace kinema
