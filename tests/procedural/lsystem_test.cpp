// L-systems, the discrete half: Lindenmayer's algae (string lengths are Fibonacci numbers), the
// bracketed plants of ABOP Fig. 1.24 (string lengths after their derivation lengths, checked
// against an independent rewriting), the Koch curve (string length and the end 3ⁿ steps away),
// the 3-D turtle's turns, stochastic choices, rule errors with their column, and the limits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/error_of.h"
#include "kinema/core/error.h"
#include "kinema/procedural/lsystem.h"

namespace kinema {
namespace {

using test::error_of;

void expect_near(const Vec3& a, const Vec3& b, double tolerance = 1e-12) {
  EXPECT_NEAR(a.x, b.x, tolerance);
  EXPECT_NEAR(a.y, b.y, tolerance);
  EXPECT_NEAR(a.z, b.z, tolerance);
}

TEST(LSystem, AlgaeStringLengthsAreFibonacciNumbers) {
  // Lindenmayer (1968), ABOP §1.2: a → ab, b → a.
  const LSystem algae = make_lsystem("A", {"A -> AB", "B -> A"});
  EXPECT_EQ(module_string(rewrite(algae, 4)), "ABAABABA");
  std::size_t a = 1, b = 2;  // Fibonacci numbers F(n + 2), F(n + 3)
  for (int n = 0; n <= 25; ++n) {
    EXPECT_EQ(rewrite(algae, n).size(), a) << n;
    const std::size_t next = a + b;
    a = b;
    b = next;
  }
  EXPECT_EQ(rewrite(algae, 25).size(), 196418u);  // F(27)
}

TEST(LSystem, AbopFigure124PlantStringsHaveTheirLengthsAfterTheirDerivationLengths) {
  struct Plant {
    const char* axiom;
    std::vector<std::string> rules;
    int n;
    std::size_t length, segments;
  };
  // ABOP Fig. 1.24 a–f with their n; lengths from a separate string-replacing rewriter.
  const Plant plants[] = {
      {"F", {"F -> F[+F]F[-F]F"}, 5, 7811, 3125},
      {"F", {"F -> F[+F]F[-F][F]"}, 5, 9373, 3125},
      {"F", {"F -> FF-[-F+F+F]+[+F-F-F]"}, 4, 11116, 4096},
      {"X", {"X -> F[+X]F[-X]+X", "F -> FF"}, 7, 13956, 4118},
      {"X", {"X -> F[+X][-X]FX", "F -> FF"}, 7, 12863, 4118},
      {"X", {"X -> F-[[X]+X]+F[+X]-X", "F -> FF"}, 5, 5767, 992},
  };
  for (const Plant& p : plants) {
    const LSystem system = make_lsystem(p.axiom, p.rules);
    const std::vector<LModule> modules = rewrite(system, p.n);
    EXPECT_EQ(modules.size(), p.length) << p.rules[0];
    EXPECT_EQ(interpret_grown(system, modules).segments.size(), p.segments) << p.rules[0];
  }
  const LSystem d = make_lsystem("X", {"X -> F[+X]F[-X]+X", "F -> FF"});
  EXPECT_EQ(module_string(rewrite(d, 2)), "FF[+F[+X]F[-X]+X]FF[-F[+X]F[-X]+X]+F[+X]F[-X]+X");
}

TEST(LSystem, KochCurveHasItsLengthAndEndsThreeToTheNStepsAway) {
  // F → F+F−−F+F, δ = 60° (ABOP §1.3): 4ⁿ segments, the string 1 + 7(4ⁿ − 1)/3 long; each
  // segment becomes four spanning three of its length, so with a fixed step the curve ends 3ⁿ
  // steps along the first heading.
  LSystem koch = make_lsystem("F", {"F -> F+F--F+F"});
  koch.angle = kPi / 3;
  koch.step = 0.5;
  double span = 0.5;
  std::size_t four = 1;
  for (int n = 0; n <= 5; ++n) {
    const std::vector<LModule> modules = rewrite(koch, n);
    EXPECT_EQ(modules.size(), 1 + 7 * (four - 1) / 3);
    const PlantSkeleton curve = interpret_grown(koch, modules);
    EXPECT_EQ(curve.segments.size(), four);
    expect_near(curve.segments.back().end, {0, span, 0}, 1e-9 * span);
    span *= 3;
    four *= 4;
  }
}

TEST(LSystem, TurtleTurnsAboutItsOwnAxesInKinemasFrame) {
  // H = +Y, L = −X, U = +Z; 90° turns, 1 m steps.
  LSystem system = make_lsystem("F", {});
  system.angle = kPi / 2;
  system.step = 1;
  auto end_of = [&](const char* text) {
    return interpret_grown(system, parse_modules(text)).segments.back().end;
  };
  expect_near(end_of("F+F"), {-1, 1, 0});  // left: toward L
  expect_near(end_of("F-F"), {1, 1, 0});
  expect_near(end_of("F^F"), {0, 1, 1});     // pitch up: toward U
  expect_near(end_of("F&F"), {0, 1, -1});    // pitch down
  expect_near(end_of("F/F"), {0, 2, 0});     // a roll keeps the heading
  expect_near(end_of("F\\&F"), {-1, 1, 0});  // roll left puts U on +X; down is then −X
  expect_near(end_of("F/&F"), {1, 1, 0});
  expect_near(end_of("F|F"), {0, 0, 0});  // turn around
  expect_near(end_of("F+F+F+F"), {0, 0, 0});
  expect_near(end_of("F[+F]F"), {0, 2, 0});  // the branch returns the turtle
  expect_near(end_of("F+(45)F"), {-std::sqrt(0.5), 1 + std::sqrt(0.5), 0});
  expect_near(end_of("F(2)f(3)F"), {0, 6, 0});
  const PlantSkeleton plant = interpret_grown(system, parse_modules("F[+F]F"));
  EXPECT_EQ(plant.segments[1].parent, 0);
  EXPECT_FALSE(plant.segments[1].continues);  // a branch
  EXPECT_EQ(plant.segments[1].depth, 1);
  EXPECT_EQ(plant.segments[2].parent, 0);
  EXPECT_TRUE(plant.segments[2].continues);  // the same axis
}

TEST(LSystem, StochasticChoicesFollowTheProbabilitiesAndTheSeed) {
  LSystem system = make_lsystem(std::string(20000, 'A'), {"A -> B : 0.3", "A -> C : 0.7"});
  system.seed = 11;
  const std::vector<LModule> once = rewrite(system, 1);
  const std::string text = module_string(once);
  const double bs = double(std::count(text.begin(), text.end(), 'B')) / 20000;
  EXPECT_NEAR(bs, 0.3, 0.015);
  EXPECT_EQ(module_string(rewrite(system, 1)), text);  // same seed, same choices
  system.seed = 12;
  EXPECT_NE(module_string(rewrite(system, 1)), text);
}

TEST(LSystem, RuleErrorsNameTheRuleAndColumnWithACaret) {
  struct Case {
    const char* rule;
    const char* place;
    const char* reason;
  };
  const Case cases[] = {
      {"A -> F[+A", "rule 1, column 7", "'[' is never closed"},
      {"A -> F]", "rule 1, column 7", "']' closes no '['"},
      {"A F[+A]", "rule 1, column 8", "expected 'A -> successor'"},
      {"AB -> F", "rule 1, column 2", "the predecessor is one symbol"},
      {"A(1) -> F", "rule 1, column 2", "parametric predecessors"},
      {" -> F", "rule 1, column 2", "no predecessor"},
      {"[ -> F", "rule 1, column 1", "a bracket cannot be rewritten"},
      {"A -> F(x)", "rule 1, column 8", "not a finite number"},
      {"A -> F(1", "rule 1, column 7", "'(' is never closed"},
      {"A -> F(-1)", "rule 1, column 8", "a length must be ≥ 0"},
      {"A -> F->F", "rule 1, column 8", "'>' is not a module symbol"},
      {"A -> F : 1.5", "rule 1, column 9", "a probability is a number in (0, 1]"},
      {"A -> F\xc3\xa9", "rule 1, column 7", "not a printable ASCII symbol"},
  };
  for (const Case& c : cases) {
    const Error e = error_of([&] { make_lsystem("A", {c.rule}); });
    EXPECT_EQ(e.place(), c.place) << c.rule;
    EXPECT_NE(e.reason().find(c.reason), std::string::npos) << c.rule << ": " << e.reason();
    EXPECT_NE(e.reason().find(std::string("\n  ") + c.rule + "\n"), std::string::npos) << c.rule;
  }
  const Error caret = error_of([] { make_lsystem("A", {"A -> F]"}); });
  EXPECT_NE(caret.reason().find("\n  A -> F]\n        ^"), std::string::npos) << caret.reason();
  EXPECT_EQ(error_of([] { make_lsystem("A]", {}); }).place(), "axiom, column 2");
  EXPECT_EQ(error_of([] { make_lsystem("A", {"B -> A", "A -> ["}); }).place(), "rule 2, column 6");
}

TEST(LSystem, ProbabilitiesOfOneSymbolMustSumToOne) {
  EXPECT_NE(error_of([] {
              make_lsystem("A", {"A -> B", "A -> C"});
            })
                .reason()
                .find("has 2 rules"),
            std::string::npos);
  const Error e = error_of([] { make_lsystem("A", {"A -> B : 0.5", "A -> C : 0.4"}); });
  EXPECT_EQ(e.place(), "rules");
  EXPECT_NE(e.reason().find("sum to 0.9"), std::string::npos) << e.reason();
  EXPECT_NO_THROW(make_lsystem("A", {"A -> B : 0.5", "A -> C : 0.5", "B -> A"}));
}

TEST(LSystem, DeepNestingIsRefusedWithItsLimit) {
  const std::string deep = std::string(1001, '[') + std::string(1001, ']');
  const Error text = error_of([&] { make_lsystem(deep, {}); });
  EXPECT_EQ(text.place(), "axiom, column 1001");
  EXPECT_NE(text.reason().find("deeper than 1000"), std::string::npos);
  // A → [A] nests one level a generation: refused when the derivation passes 1000.
  const LSystem nest = make_lsystem("A", {"A -> [A]"});
  EXPECT_NO_THROW(derive(nest, 1000));
  const Error derived = error_of([&] { derive(nest, 1001); });
  EXPECT_NE(derived.reason().find("deeper than 1000"), std::string::npos) << derived.reason();
}

TEST(LSystem, HugeGenerationCountsAreRefusedBeforeMemoryIsSpent) {
  LSystem algae = make_lsystem("A", {"A -> AB", "B -> A"});
  const Error modules = error_of([&] { derive(algae, 100); });  // F(101) ≈ 5.7e20 modules
  EXPECT_EQ(modules.place(), "derivation");
  EXPECT_NE(modules.reason().find("more than 2000000 modules"), std::string::npos);
  algae.max_modules = 100;
  EXPECT_EQ(derive(algae, 9).modules.size(), 89u);
  EXPECT_THROW(derive(algae, 10), Error);  // 144
  const Error generations = error_of([&] { derive(algae, 1e9); });
  EXPECT_NE(generations.reason().find("at most 10000"), std::string::npos);
  EXPECT_THROW(rewrite(algae, 1000000), Error);
  EXPECT_THROW(rewrite(algae, -1), Error);
  EXPECT_THROW(derive(algae, -1), Error);
  EXPECT_THROW(derive(algae, std::nan("")), Error);
  LSystem flip = make_lsystem("A", {"A -> B", "B -> A"});  // no growth: only the count limits
  flip.terminal_age = 1e-3;
  EXPECT_EQ(module_string(derive(flip, 9.9995).modules), "B");  // 9999 flips
  EXPECT_THROW(derive(flip, 11), Error);
}

TEST(LSystem, BadSettingsAreRefused) {
  LSystem s = make_lsystem("F", {"F -> FF"});
  s.terminal_age = 0;
  EXPECT_EQ(error_of([&] { derive(s, 1); }).place(), "terminal_age");
  s.terminal_age = 1;
  s.terminal_ages['F'] = -1;
  EXPECT_EQ(error_of([&] { derive(s, 1); }).place(), "terminal_ages");
  s.terminal_ages.clear();
  s.length_maturity = 0;
  EXPECT_EQ(error_of([&] { derive(s, 1); }).place(), "length_maturity");
  s.length_maturity = 1;
  s.leaf_symbol = '+';
  EXPECT_EQ(error_of([&] { derive(s, 1); }).place(), "leaf_symbol");
  s.leaf_symbol = 'L';
  s.productions.push_back(parse_production("L -> FL"));  // rewritten: its leaf would vanish
  EXPECT_NE(error_of([&] { derive(s, 1); }).reason().find("'L' has rules"), std::string::npos);
}

}  // namespace
}  // namespace kinema
