// Build-time check of a state machine: cycles of instant transitions.
//
// A zero-duration transition without an exit time or a trigger can fire on any update. When such
// transitions form a cycle (a → b → a, or an "any state" transition into a state that has an
// instant way out) and the conditions along the cycle can all hold at once, the machine would
// switch state on every update and never play anything. Triggers are consumed when a transition
// fires and an exit time needs the state to play first, so transitions with either break such
// a cycle. The check intersects the conditions along each cycle (float ranges, ==, !=, bools) and
// reports the first satisfiable one.
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "graph_builder_internal.h"

namespace kinema {

namespace {

struct Edge {
  int to;
  int transition;
};

/// The set of values one float parameter may take under a conjunction of comparisons.
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = true, hi_open = true;
  std::optional<double> eq;
  std::vector<double> ne;
  bool empty = false;

  void add(CompareOp op, double v) {
    switch (op) {
      case CompareOp::Greater:
        if (v > lo || (v == lo && !lo_open)) lo = v, lo_open = true;
        break;
      case CompareOp::GreaterEqual:
        if (v > lo) lo = v, lo_open = false;
        break;
      case CompareOp::Less:
        if (v < hi || (v == hi && !hi_open)) hi = v, hi_open = true;
        break;
      case CompareOp::LessEqual:
        if (v < hi) hi = v, hi_open = false;
        break;
      case CompareOp::Equal:
        if (eq && *eq != v) empty = true;
        eq = v;
        break;
      case CompareOp::NotEqual:
        ne.push_back(v);
        break;
      case CompareOp::Triggered:
        break;
    }
  }
  bool contains(double v) const {
    if (v < lo || (v == lo && lo_open) || v > hi || (v == hi && hi_open)) return false;
    for (double n : ne)
      if (n == v) return false;
    return true;
  }
  bool satisfiable() const {
    if (empty) return false;
    if (eq) return contains(*eq);
    if (lo < hi) return true;  // an interval with points to spare whatever != removes
    return lo == hi && contains(lo);
  }
};

bool satisfiable(const StateMachineNode& m, const std::vector<Edge>& path,
                 std::span<const GraphParameter> params) {
  std::map<int, Range> floats;
  std::map<int, bool> bools;
  for (const Edge& e : path) {
    for (const GraphCondition& c : m.transitions[static_cast<size_t>(e.transition)].conditions) {
      if (params[static_cast<size_t>(c.parameter)].type == ParamType::Bool) {
        const bool want = (c.op == CompareOp::Equal) == (c.value != 0);
        const auto [it, inserted] = bools.emplace(c.parameter, want);
        if (!inserted && it->second != want) return false;
      } else {
        floats[c.parameter].add(c.op, c.value);
      }
    }
  }
  for (const auto& [param, range] : floats)
    if (!range.satisfiable()) return false;
  return true;
}

bool instant(const GraphTransition& t) {
  if (t.duration > 0 || t.exit_time > 0) return false;
  for (const GraphCondition& c : t.conditions)
    if (c.op == CompareOp::Triggered) return false;
  return true;
}

}  // namespace

void GraphBuilder::check_instant_cycles(const StateMachineNode& m) const {
  const int n = static_cast<int>(m.states.size());
  std::vector<std::vector<Edge>> out(static_cast<size_t>(n));
  for (size_t i = 0; i < m.transitions.size(); ++i) {
    const GraphTransition& t = m.transitions[i];
    if (!instant(t)) continue;
    if (t.from == kAnyState) {
      for (int s = 0; s < n; ++s)
        if (s != t.to) out[static_cast<size_t>(s)].push_back({t.to, static_cast<int>(i)});
    } else {
      out[static_cast<size_t>(t.from)].push_back({t.to, static_cast<int>(i)});
    }
  }

  // Enumerate simple cycles through their smallest state (each cycle once), within a budget.
  long budget = 200000;
  std::vector<Edge> path;
  std::vector<char> on_path(static_cast<size_t>(n), 0);
  std::vector<Edge> found;
  const auto dfs = [&](auto&& self, int start, int v) -> bool {
    for (const Edge& e : out[static_cast<size_t>(v)]) {
      if (--budget < 0) return false;
      if (e.to < start) continue;
      path.push_back(e);
      if (e.to == start) {
        if (satisfiable(m, path, g_.parameters_)) {
          found = path;
          return true;
        }
      } else if (!on_path[static_cast<size_t>(e.to)]) {
        on_path[static_cast<size_t>(e.to)] = 1;
        if (self(self, start, e.to)) return true;
        on_path[static_cast<size_t>(e.to)] = 0;
      }
      path.pop_back();
    }
    return false;
  };
  for (int s = 0; s < n && found.empty() && budget > 0; ++s) {
    on_path.assign(static_cast<size_t>(n), 0);
    on_path[static_cast<size_t>(s)] = 1;
    path.clear();
    dfs(dfs, s, s);
  }
  if (found.empty()) return;

  // Report it from the state it starts at, naming the transitions' pointers.
  const GraphTransition& first = m.transitions[static_cast<size_t>(found.front().transition)];
  int from = first.from;
  if (from == kAnyState) from = found.back().to;
  std::string chain = m.states[static_cast<size_t>(from)].name;
  std::string pointers;
  for (const Edge& e : found) {
    chain += " → " + m.states[static_cast<size_t>(e.to)].name;
    pointers +=
        (pointers.empty() ? "" : ", ") + m.transitions[static_cast<size_t>(e.transition)].pointer;
  }
  fail(first.pointer, "zero-duration transitions form a cycle " + chain + " (" + pointers +
                          ") whose conditions can all hold at once: the machine would switch "
                          "state on every update. Give one a duration, an exit time, a trigger, "
                          "or conditions that exclude each other");
}

}  // namespace kinema
