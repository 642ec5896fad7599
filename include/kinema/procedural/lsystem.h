// kinema/procedural/lsystem.h — plants that grow: bracketed L-systems (Prusinkiewicz & Lindenmayer,
// *The Algorithmic Beauty of Plants*, 1990 — "ABOP") made continuous in time after Prusinkiewicz,
// Hammel & Mjolsness, "Animation of Plant Development" (SIGGRAPH 1993): every module carries an
// age, a module with a production is rewritten when it reaches its symbol's terminal age (its
// successor's modules are born with the age left over, so time runs on), and a segment's length,
// a turn's angle and a leaf's size are smooth functions of age. Showing the generations one after
// another jumps; sampling this at any time t grows the plant continuously — old branches thicken
// while new ones sprout.
//
// Symbols are single printable ASCII characters; a module may carry one constant value in
// parentheses, ABOP's parametric notation (§1.10): F(0.5), +(30). The turtle reads (ABOP §1.3,
// §1.5, §1.6):
//   F  draw a segment forward (its final length: the value in metres, else LSystem::step)
//   f  move forward without drawing
//   +  −  turn left / right about the turtle's up U      (by the value in degrees, else `angle`)
//   &  ^  pitch down / up about its left L
//   \  /  roll left / right about its heading H
//   |  turn around (180° about U)
//   [  ]  push / pop the turtle (a branch)
//   the leaf symbol (LSystem::leaf_symbol, 'L' by default): a leaf
// Every other symbol (A, X, …) is an apex or a marker: rewritten, never drawn.
//
// Conventions: metres, seconds, radians (degrees only in the rule text, as ABOP writes them),
// +Y up. The turtle starts at the origin heading up (H = +Y) with its left L = −X and up U = +Z,
// so 2-D plants grow in the xy-plane facing +Z and "+" turns counter-clockwise seen from +Z.
// Rotations are right-handed about the named axis: + takes H toward L, & takes H toward −U
// (down), \ takes L toward U.
//
// Continuity (docs/procedural.md, "L-system growth"): a newborn segment starts at length 0 at its
// parent's tip, a newborn turn at angle 0 and a newborn leaf at size 0. A segment rewritten into
// segments (F → FF) hands its length to the segments on its own axis (outside brackets), in
// proportion to their final lengths, so the axis does not jump; they grow on from there. Positions
// are then continuous in time across every production firing, and with the smooth curves the
// total length never decreases (unless a successor's segments are shorter in total than the
// segment they replace, or a segment is rewritten into no segment: both shrink or jump, by the
// rules' own choice).
//
// Thickness follows the pipe model (Shinozaki, Yoda, Hozumi & Kira 1964): the cross-section
// at any point along a branch is proportional to the length of plant it carries, so
// radius = pipe_radius·√(W / 1 m) for W metres of segments above that point (the rest of the
// segment, everything after it on its axis and every branch from there). W grows as the plant
// grows, so old branches keep thickening; a tip carries nothing and comes to a point.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

/// Deeper bracket nesting than this is refused (in rule text and in a derivation).
inline constexpr int kMaxBranchDepth = 1000;
/// More generations than this (derivation time over the shortest terminal age) are refused.
inline constexpr int kMaxGenerations = 10000;

/// One module: a symbol with its optional value and, in a derivation, its age and lineage.
struct LModule {
  char symbol = 0;
  /// The value written in parentheses, else NaN. F and f: final length (m); + − & ^ \ /: turn
  /// (radians; degrees in the text); the leaf symbol: final size (m); other symbols: kept, unused.
  double value = std::numeric_limits<double>::quiet_NaN();
  /// Seconds since birth at the derivation's time (generations, from rewrite).
  double age = 0;
  /// F and f: the fraction of the final length the module is born with — 0 when new, more when
  /// split from a segment (F → FF: ½).
  double birth_fraction = 0;
  /// F and f split from a segment: their share of that segment's length before their birth, and
  /// that segment's entry in Derivation::ancestors; −1: born from nothing (length 0 before).
  double share = 0;
  std::int32_t ancestor = -1;
  /// Identity of this module in its derivation (a hash of its lineage): stochastic choices hash it
  /// with the seed, so a choice never depends on the time asked for or on evaluation order.
  std::uint64_t key = 0;
};

/// `predecessor → successor`, taken with `probability` when the symbol has several (stochastic,
/// ABOP §1.7); the probabilities of one symbol's productions sum to 1.
struct LProduction {
  char predecessor = 0;
  std::vector<LModule> successor;
  double probability = 1;
  std::string text;  ///< as written, for messages
};

/// How a grown quantity approaches its final value over its maturity time: g(0) = 0, g(1) = 1,
/// non-decreasing, constant beyond 1.
enum class GrowthCurve {
  Smoothstep,  ///< 3x² − 2x³: starts and ends with zero rate (default)
  Logistic,  ///< the logistic 1/(1 + e^(−10(x − ½))) rescaled to pass through (0, 0) and (1, 1)
  Linear,    ///< x: a constant rate
};

/// g(x) of `curve`, clamped to [0, 1] outside 0 ≤ x ≤ 1.
double growth_fraction(GrowthCurve curve, double x);

struct LSystem {
  std::vector<LModule> axiom;  ///< born at t = 0
  std::vector<LProduction> productions;
  double angle = 0.3926990816987241;  ///< rad: default turn of + − & ^ \ / (22.5°)
  double step = 0.1;                  ///< m: final length of F and f without a value
  /// Seconds from birth to rewriting for a symbol that has productions (> 0); per symbol in
  /// `terminal_ages`, else `terminal_age`.
  double terminal_age = 1;
  std::map<char, double> terminal_ages;
  GrowthCurve curve = GrowthCurve::Smoothstep;
  double length_maturity = 1;  ///< s from birth to a segment's final length (> 0)
  double angle_maturity = 1;   ///< s from birth to a turn's final angle (> 0)
  double leaf_maturity = 1;    ///< s from birth to a leaf's final size (> 0)
  double pipe_radius = 0.01;   ///< m: radius where a branch carries 1 m of plant (≥ 0)
  char leaf_symbol = 'L';      ///< 0: no leaves
  double leaf_size = 0.1;      ///< m: final length of a leaf without a value
  std::uint64_t seed = 0;      ///< of the stochastic choices
  /// A derivation with more modules than this is refused (memory: ~56 bytes a module).
  std::size_t max_modules = 2'000'000;

  double terminal_age_of(char symbol) const;
};

/// Parses modules (an axiom, a successor): symbols with optional values, whitespace ignored.
/// Throws kinema::Error whose place is `place` + ", column N" (1-based) and whose reason quotes
/// the text with a caret under the fault: a character that is not a symbol (non-ASCII, control,
/// ( ) < > :), a value that is not a finite number or not closed, a negative length, a ']'
/// without its '[', a '[' never closed, nesting deeper than kMaxBranchDepth.
std::vector<LModule> parse_modules(std::string_view text, const std::string& place = "axiom");

/// Parses `A -> successor` or, stochastic, `A -> successor : probability` (0 < p ≤ 1). Errors
/// as parse_modules, naming `place` and the column: no "->", a predecessor that is not one
/// symbol (context-sensitive and parametric predecessors are not supported), a bracket or turn
/// symbol as predecessor, a bad probability.
LProduction parse_production(std::string_view text, const std::string& place = "rule");

/// A system from an axiom and rules ("axiom", "rule 1", "rule 2", … in errors), checked.
LSystem make_lsystem(std::string_view axiom, const std::vector<std::string>& rules);

/// Throws kinema::Error (place "rules", or the field's name) for a system derive cannot run:
/// one symbol's probabilities not summing to 1 (±1e-6), a terminal age or maturity that is not
/// positive and finite, a negative or non-finite step, angle, radius or leaf size, a zero limit,
/// a leaf symbol that is a turtle symbol or has productions (its leaf would vanish when rewritten).
void check_lsystem(const LSystem& system);

/// The modules at a continuous time, and the segments they were split from.
struct Derivation {
  /// One segment that was rewritten: enough to say how long it was at any time before that.
  struct Ancestor {
    double birth_time = 0, final_length = 0, birth_fraction = 0, share = 0;
    std::int32_t ancestor = -1;
  };
  double time = 0;  ///< s
  std::vector<LModule> modules;
  std::vector<Ancestor> ancestors;
  std::size_t rewrites = 0;  ///< productions fired to get here
};

/// The timed derivation at time t ≥ 0 (s): the axiom born at 0, every module with a production
/// rewritten when its age reaches its terminal age, its successor born then with the age left
/// over — so derive(t) for any t is one history, and with every terminal age 1 s, derive(n) is
/// n parallel rewriting steps. Throws kinema::Error for a bad system (check_lsystem), t
/// negative or not finite, more than kMaxGenerations generations, more than max_modules
/// modules (refused before they are made), or nesting deeper than kMaxBranchDepth.
Derivation derive(const LSystem& system, double time);

/// Classic parallel rewriting (ABOP §1.2): the axiom rewritten `generations` times, every module
/// with a production each time whatever the terminal ages; ages counted in generations. The
/// same stochastic choices as derive with every terminal age 1. Throws as derive.
std::vector<LModule> rewrite(const LSystem& system, int generations);

/// The modules as text ("F[+X]F"); values written back in parentheses (turns in degrees).
std::string module_string(std::span<const LModule> modules);

/// One drawn segment (an F). Its turtle frame is kept even when it has no length.
struct BranchSegment {
  Vec3 start, end;          ///< m
  Vec3 heading, left, up;   ///< the turtle's H, L, U (unit) while drawing it
  double start_radius = 0;  ///< m, pipe model
  double end_radius = 0;    ///< m
  int depth = 0;            ///< branch order: brackets around it
  int parent = -1;          ///< the segment it grows from (−1: none)
  bool continues = false;   ///< starts where `parent` ends, on the same axis (not a branch)
  std::size_t module = 0;   ///< index of its F in the modules interpreted
  double length() const { return kinema::length(end - start); }
};

/// A leaf at the leaf symbol: it lies along the turtle's heading in the plane of H and L.
struct PlantLeaf {
  Vec3 base, heading, left, up;  ///< m; the turtle's frame (unit)
  double size = 0;               ///< m, from base to tip
  std::size_t module = 0;
};

struct PlantSkeleton {
  std::vector<BranchSegment> segments;
  std::vector<PlantLeaf> leaves;
  double total_length() const;  ///< m, all segments
  double height() const;        ///< m, the highest point of any segment or leaf above y = 0
};

/// The turtle on a derivation at time t (0 ≤ t ≤ derivation.time): every F of the derivation
/// gives a segment and every leaf symbol a leaf — modules not yet born at t have length (size)
/// 0 and sit where they will sprout, and segments split later share out their ancestor's
/// length — so all times give the same segments and leaves, continuously: a fixed topology.
/// Throws kinema::UsageError for t outside [0, derivation.time]; kinema::Error for brackets
/// that do not balance or nest deeper than kMaxBranchDepth.
PlantSkeleton interpret(const LSystem& system, const Derivation& derivation, double t);

/// The classic turtle (ABOP §1.5): every module at its final value (F at its full length, turns
/// at their full angle), whatever its age. Throws kinema::Error as interpret.
PlantSkeleton interpret_grown(const LSystem& system, std::span<const LModule> modules);

struct PlantMeshOptions {
  int ring = 8;  ///< vertices around a branch (3 … 64)
  /// true: every segment and leaf, collapsed ones too, so that every time of a growth gives
  /// the same vertices and triangles (a point cache can play it); false: segments of no length
  /// and leaves of no size left out.
  bool fixed_topology = true;
  bool leaves = true;
};

/// A triangle mesh (counter-clockwise seen from outside) with per-vertex unit normals.
struct PlantMesh {
  std::vector<Vec3> positions, normals;
  std::vector<std::array<std::uint32_t, 3>> triangles;
};

/// Generalized cylinders: a ring of `ring` vertices at each end of a segment (tapered by the pipe
/// radii), a segment that continues its parent's axis sharing the parent's end ring (turned to
/// bisect the two headings, carried along the axis without the turtle's roll so it never
/// twists), a fan cap where an axis ends; normals point away from the axis. Leaves are
/// two-sided diamonds, as long as their size and 0.6 of it wide. Throws kinema::UsageError for
/// a ring outside 3 … 64.
PlantMesh build_plant_mesh(const PlantSkeleton& plant, const PlantMeshOptions& options = {});

}  // namespace kinema
