// kinema/procedural/driver.h — drivers: a small expression over named variables that sets a
// channel's value (Blender's drivers, Maya's expressions). The classic: a wheel that rolls without
// sliding turns θ = d / r radians for the distance d its car has travelled (d = 3 m, r = 0.3 m:
// 10 rad, about 1.59 turns), whatever path the animator gives the car.
//
// Expressions are parsed by muparser (Debian's libmuparser): + − * / ^, comparisons, `c ? a : b`,
// sin cos tan asin acos atan sinh cosh tanh, sqrt exp ln log10 log2 abs sign rint, min max sum avg
// of any count, the constants _pi and _e. Angles in radians.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace kinema {

class Driver {
 public:
  /// Parses `expression` over `variables` (names of letters, digits and underscores, not starting
  /// with a digit, each once). Throws kinema::Error whose place is the column in the text
  /// (1-based) and whose reason quotes the text with a caret under the fault: an expression
  /// that does not parse, an unknown name, a bad or repeated variable name.
  Driver(std::string expression, std::vector<std::string> variables);
  Driver(const Driver& other);
  Driver& operator=(const Driver& other);
  Driver(Driver&&) noexcept;
  Driver& operator=(Driver&&) noexcept;
  ~Driver();

  /// The value for these variable values (one per variable, in the constructor's order). Throws
  /// kinema::Error for the wrong count, or a result that is not finite (a division by zero).
  /// Not for concurrent calls on one driver: copy it per thread.
  double evaluate(std::span<const double> values);

  const std::string& expression() const;
  const std::vector<std::string>& variables() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinema
