// L-systems (kinema/procedural/lsystem.h): rule text, checks, the timed derivation and classic
// rewriting. The turtle is in lsystem_turtle.cpp, the mesh in plant_mesh.cpp.
#include "kinema/procedural/lsystem.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <string>

#include "kinema/core/error.h"
#include "kinema/math/scalar.h"
#include "lsystem_internal.h"

namespace kinema {

namespace {

constexpr std::string_view kNotSymbols = "()<>:";

/// The text with a caret under byte `column`, for an error's reason.
std::string pointing_at(std::string_view text, std::size_t column) {
  return "\n  " + std::string(text) + "\n  " + std::string(std::min(column, text.size()), ' ') +
         "^";
}

[[noreturn]] void fail_at(const std::string& place, std::string_view text, std::size_t column,
                          const std::string& what) {
  throw Error({}, place + ", column " + std::to_string(column + 1),
              what + pointing_at(text, column));
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// A finite number filling text[begin, end) but for spaces around it; false when there is none.
bool parse_number(std::string_view text, std::size_t begin, std::size_t end, double& value) {
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  if (begin == end) return false;
  const char* first = text.data() + begin;
  const char* last = text.data() + end;
  if (*first == '+') ++first;  // from_chars takes no leading plus
  const auto [ptr, ec] = std::from_chars(first, last, value);
  return ec == std::errc() && ptr == last && std::isfinite(value);
}

/// Modules of text[begin, end); errors name columns of the whole text.
std::vector<LModule> parse_range(std::string_view text, std::size_t begin, std::size_t end,
                                 const std::string& place) {
  std::vector<LModule> out;
  std::vector<std::size_t> open;  // columns of the unclosed '['
  for (std::size_t i = begin; i < end; ++i) {
    const char c = text[i];
    if (is_space(c)) continue;
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 33 || byte > 126 || kNotSymbols.find(c) != std::string_view::npos)
      fail_at(place, text, i,
              byte < 33 || byte > 126 ? std::string("a byte that is not a printable ASCII symbol")
                                      : "'" + std::string(1, c) +
                                            "' is not a module symbol (a value goes in "
                                            "parentheses right after its symbol: F(0.5))");
    LModule m;
    m.symbol = c;
    if (c == '[') {
      open.push_back(i);
      if (open.size() > std::size_t(kMaxBranchDepth))
        fail_at(place, text, i,
                "brackets nested deeper than " + std::to_string(kMaxBranchDepth) + " levels");
    } else if (c == ']') {
      if (open.empty()) fail_at(place, text, i, "']' closes no '['");
      open.pop_back();
    }
    if (i + 1 < end && text[i + 1] == '(') {
      if (c == '[' || c == ']') fail_at(place, text, i + 1, "a bracket takes no value");
      const std::size_t close = text.find(')', i + 2);
      if (close == std::string_view::npos || close >= end)
        fail_at(place, text, i + 1, "'(' is never closed");
      if (!parse_number(text, i + 2, close, m.value))
        fail_at(place, text, i + 2, "not a finite number");
      if (is_move(c) && m.value < 0) fail_at(place, text, i + 2, "a length must be ≥ 0");
      if (is_turn(c) || c == '|') m.value = radians(m.value);
      i = close;
    }
    out.push_back(m);
  }
  if (!open.empty()) fail_at(place, text, open.back(), "'[' is never closed");
  return out;
}

[[noreturn]] void fail(const std::string& place, const std::string& reason) {
  throw Error({}, place, reason);
}

/// "0.9", "60", "1e+09": a number for a message.
std::string number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

/// splitmix64: a well-mixed 64-bit hash.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t child_key(std::uint64_t parent, std::size_t index) {
  return mix(parent ^ mix(std::uint64_t(index) + 1));
}

/// True when the brackets of `modules` balance.
bool balanced(std::span<const LModule> modules) {
  long depth = 0;
  for (const LModule& m : modules) {
    depth += m.symbol == '[' ? 1 : m.symbol == ']' ? -1 : 0;
    if (depth < 0) return false;
  }
  return depth == 0;
}

}  // namespace

double growth_fraction(GrowthCurve curve, double x) {
  x = std::clamp(x, 0.0, 1.0);
  switch (curve) {
    case GrowthCurve::Linear:
      return x;
    case GrowthCurve::Logistic: {
      auto sigma = [](double y) { return 1 / (1 + std::exp(-10 * (y - 0.5))); };
      return (sigma(x) - sigma(0)) / (sigma(1) - sigma(0));
    }
    case GrowthCurve::Smoothstep:
      break;
  }
  return x * x * (3 - 2 * x);
}

double LSystem::terminal_age_of(char symbol) const {
  const auto it = terminal_ages.find(symbol);
  return it != terminal_ages.end() ? it->second : terminal_age;
}

std::vector<LModule> parse_modules(std::string_view text, const std::string& place) {
  return parse_range(text, 0, text.size(), place);
}

LProduction parse_production(std::string_view text, const std::string& place) {
  LProduction p;
  p.text = std::string(text);
  const std::size_t arrow = text.find("->");
  if (arrow == std::string_view::npos)
    fail_at(place, text, text.size(), "expected 'A -> successor'");
  std::size_t first = 0;
  while (first < arrow && is_space(text[first])) ++first;
  if (first == arrow) fail_at(place, text, arrow, "no predecessor before '->'");
  for (std::size_t i = first + 1; i < arrow; ++i) {
    if (is_space(text[i])) continue;
    fail_at(place, text, i,
            text[i] == '('
                ? "parametric predecessors are not supported (a value is a constant of a module "
                  "on the right)"
                : "the predecessor is one symbol (context-sensitive rules are not supported)");
  }
  if (text[first] == '[' || text[first] == ']')
    fail_at(place, text, first, "a bracket cannot be rewritten");
  p.predecessor = parse_range(text, first, first + 1, place).front().symbol;
  const std::size_t colon = text.find(':', arrow + 2);
  const std::size_t end = colon == std::string_view::npos ? text.size() : colon;
  p.successor = parse_range(text, arrow + 2, end, place);
  if (colon != std::string_view::npos &&
      (!parse_number(text, colon + 1, text.size(), p.probability) || !(p.probability > 0) ||
       p.probability > 1))
    fail_at(place, text, colon + 1, "a probability is a number in (0, 1]");
  return p;
}

LSystem make_lsystem(std::string_view axiom, const std::vector<std::string>& rules) {
  LSystem system;
  system.axiom = parse_modules(axiom, "axiom");
  for (std::size_t i = 0; i < rules.size(); ++i)
    system.productions.push_back(parse_production(rules[i], "rule " + std::to_string(i + 1)));
  check_lsystem(system);
  return system;
}

void check_lsystem(const LSystem& s) {
  auto positive = [](double v) { return v > 0 && std::isfinite(v); };
  auto non_negative = [](double v) { return v >= 0 && std::isfinite(v); };
  if (!balanced(s.axiom)) fail("axiom", "brackets do not balance");
  std::map<char, std::vector<const LProduction*>> by_symbol;
  for (const LProduction& p : s.productions) {
    if (p.predecessor == '[' || p.predecessor == ']' || p.predecessor == 0)
      fail("rules", "'" + p.text + "': a bracket cannot be rewritten");
    if (!balanced(p.successor)) fail("rules", "'" + p.text + "': brackets do not balance");
    if (!(p.probability > 0) || p.probability > 1)
      fail("rules", "'" + p.text + "': a probability is a number in (0, 1]");
    by_symbol[p.predecessor].push_back(&p);
  }
  for (const auto& [symbol, rules] : by_symbol) {
    double sum = 0;
    std::string list;
    for (const LProduction* p : rules) {
      sum += p->probability;
      list += "\n  " + p->text;
    }
    if (std::abs(sum - 1) <= 1e-6) continue;
    const std::string name = "'" + std::string(1, symbol) + "'";
    if (rules.size() > 1 && sum == double(rules.size()))
      fail("rules", name + " has " + std::to_string(rules.size()) +
                        " rules: give each its probability ('A -> F : 0.5'), summing to 1" + list);
    fail("rules", "the probabilities of the rules for " + name + " sum to " + number(sum) +
                      ", not 1" + list);
  }
  if (!positive(s.terminal_age)) fail("terminal_age", "must be > 0 and finite");
  for (const auto& [symbol, age] : s.terminal_ages)
    if (!positive(age))
      fail("terminal_ages", "'" + std::string(1, symbol) + "': must be > 0 and finite");
  if (!positive(s.length_maturity)) fail("length_maturity", "must be > 0 and finite");
  if (!positive(s.angle_maturity)) fail("angle_maturity", "must be > 0 and finite");
  if (!positive(s.leaf_maturity)) fail("leaf_maturity", "must be > 0 and finite");
  if (!non_negative(s.step)) fail("step", "must be ≥ 0 and finite");
  if (!std::isfinite(s.angle)) fail("angle", "must be finite");
  if (!non_negative(s.pipe_radius)) fail("pipe_radius", "must be ≥ 0 and finite");
  if (!non_negative(s.leaf_size)) fail("leaf_size", "must be ≥ 0 and finite");
  if (s.leaf_symbol != 0 && (is_move(s.leaf_symbol) || is_turn(s.leaf_symbol) ||
                             s.leaf_symbol == '|' || s.leaf_symbol == '[' || s.leaf_symbol == ']'))
    fail("leaf_symbol", "'" + std::string(1, s.leaf_symbol) + "' is a turtle symbol");
  for (const LProduction& p : s.productions)
    if (s.leaf_symbol != 0 && p.predecessor == s.leaf_symbol)
      fail("leaf_symbol",
           "'" + std::string(1, s.leaf_symbol) +
               "' has rules: a leaf rewritten would vanish when its rule fires; give "
               "leaves a symbol of their own");
  if (s.max_modules == 0) fail("max_modules", "must be at least 1");
}

Derivation derive(const LSystem& system, double time) {
  check_lsystem(system);
  if (!(time >= 0) || !std::isfinite(time)) fail("derivation", "time must be ≥ 0 and finite");
  // Rules and terminal ages by symbol (ASCII), and the shortest terminal age for the limit.
  std::array<std::vector<const LProduction*>, 128> rules;
  std::array<double, 128> terminal{};
  double shortest = std::numeric_limits<double>::infinity();
  char shortest_symbol = 0;
  for (const LProduction& p : system.productions) {
    const auto c = std::size_t(static_cast<unsigned char>(p.predecessor) & 127);
    rules[c].push_back(&p);
    terminal[c] = system.terminal_age_of(p.predecessor);
    if (terminal[c] < shortest) shortest = terminal[c], shortest_symbol = p.predecessor;
  }
  if (time / shortest > kMaxGenerations)
    fail("derivation",
         "t = " + number(time) + " s is " + std::to_string(std::llround(time / shortest)) +
             " generations of the shortest terminal age (" + number(shortest) + " s, '" +
             std::string(1, shortest_symbol) + "'); at most " + std::to_string(kMaxGenerations));

  Derivation d;
  d.time = time;
  // Depth first with an explicit stack: a module is written out once it is not due, so memory
  // is bounded by what is written plus one successor per generation.
  std::vector<LModule> pending;
  for (std::size_t i = system.axiom.size(); i-- > 0;) {
    LModule m = system.axiom[i];
    m.age = time;
    m.birth_fraction = 0;
    m.share = 0;
    m.ancestor = -1;
    m.key = child_key(0, i);
    pending.push_back(m);
  }
  std::vector<LModule> born;
  long depth = 0;
  const std::size_t max_rewrites = 64 * system.max_modules;
  while (!pending.empty()) {
    const LModule m = pending.back();
    pending.pop_back();
    const auto c = std::size_t(static_cast<unsigned char>(m.symbol) & 127);
    if (rules[c].empty() || m.age < terminal[c]) {
      depth += m.symbol == '[' ? 1 : m.symbol == ']' ? -1 : 0;
      if (depth > kMaxBranchDepth)
        fail("derivation", "brackets nested deeper than " + std::to_string(kMaxBranchDepth) +
                               " levels by t = " + number(time) + " s");
      d.modules.push_back(m);
      continue;
    }
    if (++d.rewrites > max_rewrites)
      fail("derivation",
           "more than " + std::to_string(max_rewrites) + " rewrites by t = " + number(time) + " s");
    const LProduction* p = rules[c].front();
    if (rules[c].size() > 1) {
      const double u = double(mix(m.key ^ mix(system.seed)) >> 11) * 0x1.0p-53;
      double sum = 0;
      for (const LProduction* q : rules[c]) {
        p = q;
        sum += q->probability;
        if (u < sum) break;
      }
    }
    if (d.modules.size() + pending.size() + p->successor.size() > system.max_modules)
      fail("derivation", "more than " + std::to_string(system.max_modules) + " modules by t = " +
                             number(time) + " s (fewer seconds or generations)");
    // A segment rewritten hands its length at its terminal age to the segments of its axis.
    std::int32_t entry = -1;
    double handed = 0, total = 0;
    if (is_move(m.symbol)) {
      const double final_length = final_length_of(m, system.step);
      handed =
          final_length * (m.birth_fraction +
                          (1 - m.birth_fraction) *
                              growth_fraction(system.curve, terminal[c] / system.length_maturity));
      entry = std::int32_t(d.ancestors.size());
      d.ancestors.push_back({time - m.age, final_length, m.birth_fraction, m.share, m.ancestor});
      long level = 0;
      for (const LModule& s : p->successor) {
        level += s.symbol == '[' ? 1 : s.symbol == ']' ? -1 : 0;
        if (level == 0 && is_move(s.symbol)) total += final_length_of(s, system.step);
      }
    }
    born.clear();
    long level = 0;
    for (std::size_t k = 0; k < p->successor.size(); ++k) {
      LModule s = p->successor[k];
      level += s.symbol == '[' ? 1 : s.symbol == ']' ? -1 : 0;
      s.age = m.age - terminal[c];
      s.key = child_key(m.key, k);
      s.birth_fraction = s.share = 0;
      s.ancestor = -1;
      if (entry >= 0 && level == 0 && is_move(s.symbol) && total > 0) {
        s.share = final_length_of(s, system.step) / total;
        s.birth_fraction = s.share > 0 ? handed / total : 1;
        s.ancestor = entry;
      }
      born.push_back(s);
    }
    pending.insert(pending.end(), born.rbegin(), born.rend());
  }
  return d;
}

std::vector<LModule> rewrite(const LSystem& system, int generations) {
  if (generations < 0 || generations > kMaxGenerations)
    fail("derivation", std::to_string(generations) + " generations: at least 0, at most " +
                           std::to_string(kMaxGenerations));
  LSystem steps = system;
  steps.terminal_age = 1;
  steps.terminal_ages.clear();
  return derive(steps, generations).modules;
}

std::string module_string(std::span<const LModule> modules) {
  std::string out;
  out.reserve(modules.size());
  for (const LModule& m : modules) {
    out += m.symbol;
    if (std::isnan(m.value)) continue;
    char buffer[32];
    const double v = is_turn(m.symbol) || m.symbol == '|' ? degrees(m.value) : m.value;
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
    out += "(" + std::string(buffer, ec == std::errc() ? end : buffer) + ")";
  }
  return out;
}

}  // namespace kinema
