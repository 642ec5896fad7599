// The turtle of kinema/procedural/lsystem.h: modules to segments and leaves, at a time of a
// derivation (lengths, angles and sizes grown by age) or fully grown, then the pipe-model radii.
#include <algorithm>
#include <cmath>

#include "kinema/core/error.h"
#include "kinema/math/scalar.h"
#include "kinema/procedural/lsystem.h"
#include "lsystem_internal.h"

namespace kinema {

namespace {

struct Turtle {
  Vec3 position{0, 0, 0};
  Vec3 heading{0, 1, 0}, left{-1, 0, 0}, up{0, 0, 1};
  int last = -1;           ///< the last segment drawn in this branch (or before it)
  bool connected = false;  ///< no f since `last` ended
  bool on_axis = false;    ///< `last` is on this branch's axis (false right after '[')
};

/// a and b turned by `angle` in their plane, right-handed: a toward b.
void turn(Vec3& a, Vec3& b, double angle) {
  const double c = std::cos(angle), s = std::sin(angle);
  const Vec3 a2 = a * c + b * s;
  b = b * c - a * s;
  a = a2;
}

void rotate(Turtle& t, char symbol, double angle) {
  switch (symbol) {
    case '+':
      return turn(t.heading, t.left, angle);
    case '-':
      return turn(t.heading, t.left, -angle);
    case '&':
      return turn(t.up, t.heading, angle);  // H toward −U: down
    case '^':
      return turn(t.up, t.heading, -angle);
    case '\\':
      return turn(t.left, t.up, angle);
    case '/':
      return turn(t.left, t.up, -angle);
    case '|':
      return turn(t.heading, t.left, angle);
    default:
      return;
  }
}

/// The cross-section radii by the pipe model: going backwards through the modules, `carried`
/// holds the metres of segment after the current point in each open branch.
void pipe_radii(std::span<const LModule> modules, double pipe_radius, PlantSkeleton& plant) {
  std::vector<double> carried{0};
  std::size_t segment = plant.segments.size();
  for (std::size_t i = modules.size(); i-- > 0;) {
    const char c = modules[i].symbol;
    if (c == ']') {
      carried.push_back(0);
    } else if (c == '[') {
      const double branch = carried.back();
      carried.pop_back();
      carried.back() += branch;
    } else if (c == 'F') {
      BranchSegment& s = plant.segments[--segment];
      s.end_radius = pipe_radius * std::sqrt(carried.back());
      carried.back() += s.length();
      s.start_radius = pipe_radius * std::sqrt(carried.back());
    }
  }
}

/// The turtle over `modules`; `values` gives each module's length, angle and leaf size.
template <class Values>
PlantSkeleton run_turtle(const LSystem& system, std::span<const LModule> modules,
                         const Values& values) {
  PlantSkeleton plant;
  Turtle t;
  std::vector<Turtle> stack;
  for (std::size_t i = 0; i < modules.size(); ++i) {
    const LModule& m = modules[i];
    const char c = m.symbol;
    if (c == 'F') {
      BranchSegment s;
      s.start = t.position;
      t.position += t.heading * values.length(m);
      s.end = t.position;
      s.heading = t.heading;
      s.left = t.left;
      s.up = t.up;
      s.depth = int(stack.size());
      s.parent = t.last;
      s.continues = t.last >= 0 && t.connected && t.on_axis;
      s.module = i;
      t.last = int(plant.segments.size());
      t.connected = t.on_axis = true;
      plant.segments.push_back(s);
    } else if (c == 'f') {
      t.position += t.heading * values.length(m);
      t.connected = false;
    } else if (is_turn(c)) {
      rotate(t, c, values.angle(m, system.angle));
    } else if (c == '|') {
      rotate(t, c, values.angle(m, kPi));
    } else if (c == '[') {
      if (stack.size() >= std::size_t(kMaxBranchDepth))
        throw Error({}, "module " + std::to_string(i),
                    "brackets nested deeper than " + std::to_string(kMaxBranchDepth) + " levels");
      stack.push_back(t);
      t.on_axis = false;
    } else if (c == ']') {
      if (stack.empty()) throw Error({}, "module " + std::to_string(i), "']' closes no '['");
      t = stack.back();
      stack.pop_back();
    } else if (c == system.leaf_symbol && c != 0) {
      plant.leaves.push_back({t.position, t.heading, t.left, t.up, values.leaf(m), i});
    }
  }
  if (!stack.empty()) throw Error({}, "modules", "a '[' is never closed");
  pipe_radii(modules, system.pipe_radius, plant);
  return plant;
}

/// Values at time t of a derivation: each module grown for its age then, nothing before birth
/// (a split segment: its share of its ancestor's length then).
struct GrownAt {
  const LSystem& system;
  const Derivation& derivation;
  double t;

  double age(const LModule& m) const { return m.age - (derivation.time - t); }
  double length(const LModule& m) const {
    const double a = age(m);
    if (a >= 0) return grown(final_length_of(m, system.step), m.birth_fraction, a);
    double share = m.share;
    for (std::int32_t e = m.ancestor; e >= 0 && share > 0;) {
      const Derivation::Ancestor& up = derivation.ancestors[std::size_t(e)];
      if (t >= up.birth_time)
        return share * grown(up.final_length, up.birth_fraction, t - up.birth_time);
      share *= up.share;
      e = up.ancestor;
    }
    return 0;
  }
  double grown(double final_length, double birth_fraction, double a) const {
    return final_length *
           (birth_fraction +
            (1 - birth_fraction) * growth_fraction(system.curve, a / system.length_maturity));
  }
  double angle(const LModule& m, double fallback) const {
    const double a = age(m);
    if (a < 0) return 0;
    return (std::isnan(m.value) ? fallback : m.value) *
           growth_fraction(system.curve, a / system.angle_maturity);
  }
  double leaf(const LModule& m) const {
    const double a = age(m);
    if (a < 0) return 0;
    return (std::isnan(m.value) ? system.leaf_size : m.value) *
           growth_fraction(system.curve, a / system.leaf_maturity);
  }
};

/// Every module at its final value.
struct Grown {
  const LSystem& system;
  double length(const LModule& m) const { return final_length_of(m, system.step); }
  double angle(const LModule& m, double fallback) const {
    return std::isnan(m.value) ? fallback : m.value;
  }
  double leaf(const LModule& m) const { return std::isnan(m.value) ? system.leaf_size : m.value; }
};

}  // namespace

double PlantSkeleton::total_length() const {
  double sum = 0;
  for (const BranchSegment& s : segments) sum += s.length();
  return sum;
}

double PlantSkeleton::height() const {
  double top = 0;
  for (const BranchSegment& s : segments) top = std::max({top, s.start.y, s.end.y});
  for (const PlantLeaf& l : leaves)
    top = std::max({top, l.base.y, (l.base + l.heading * l.size).y});
  return top;
}

PlantSkeleton interpret(const LSystem& system, const Derivation& derivation, double t) {
  if (!(t >= 0) || !(t <= derivation.time))
    throw UsageError("interpret: t = " + std::to_string(t) + " s is outside the derivation's [0, " +
                     std::to_string(derivation.time) + "] s");
  return run_turtle(system, derivation.modules, GrownAt{system, derivation, t});
}

PlantSkeleton interpret_grown(const LSystem& system, std::span<const LModule> modules) {
  return run_turtle(system, modules, Grown{system});
}

}  // namespace kinema
