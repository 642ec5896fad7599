// The fixed-step clock with exact time (kinema/sim/fixed_step_clock.h).
#include "kinema/sim/fixed_step_clock.h"

#include <cmath>
#include <numeric>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "fixed-step clock";

// 128-bit products keep the fractions exact; __extension__ tells -Wpedantic this is on purpose.
__extension__ typedef __int128 Wide;

std::int64_t narrow(Wide v) {
  if (v > INT64_MAX || v < INT64_MIN)
    throw Error({}, kPlace, "time overflows 64-bit fractions of a second");
  return std::int64_t(v);
}

/// (a·d + sign·c·b) / (b·d), reduced, computed in 128 bits.
Seconds combine(const Seconds& x, const Seconds& y, int sign) {
  const std::int64_t g = std::gcd(x.den, y.den);
  const Wide den = Wide(x.den / g) * y.den;
  const Wide num = Wide(x.num) * (y.den / g) + sign * (Wide(y.num) * (x.den / g));
  Wide a = num < 0 ? -num : num, b = den;
  while (b != 0) {
    const Wide r = a % b;
    a = b;
    b = r;
  }
  const Wide divisor = a == 0 ? 1 : a;
  return {narrow(num / divisor), narrow(den / divisor)};
}

}  // namespace

Seconds Seconds::fraction(std::int64_t num, std::int64_t den) {
  if (den <= 0) throw Error({}, kPlace, "a duration's denominator must be positive");
  const std::int64_t g = std::gcd(num, den);
  return {num / (g == 0 ? 1 : g), den / (g == 0 ? 1 : g)};
}

Seconds Seconds::from_double(double seconds) {
  if (!std::isfinite(seconds) || std::abs(seconds) > 9e9)
    throw Error({}, kPlace, "a frame time must be finite (got " + std::to_string(seconds) + ")");
  return fraction(std::llround(seconds * 1e9), 1000000000);
}

Seconds operator+(const Seconds& a, const Seconds& b) { return combine(a, b, +1); }
Seconds operator-(const Seconds& a, const Seconds& b) { return combine(a, b, -1); }
bool operator<(const Seconds& a, const Seconds& b) {
  return Wide(a.num) * b.den < Wide(b.num) * a.den;
}
double ratio(const Seconds& a, const Seconds& b) {
  // (a.num·b.den) / (a.den·b.num), exact until the one rounding to double.
  return double(Wide(a.num) * b.den) / double(Wide(a.den) * b.num);
}

FixedStepClock::FixedStepClock(Seconds step, int max_steps_per_frame)
    : step_(step), max_steps_(max_steps_per_frame) {
  if (!(Seconds{0, 1} < step)) throw Error({}, kPlace, "the step must be positive");
  if (max_steps_per_frame < 1) throw Error({}, kPlace, "at least one step per frame");
}

FrameSteps FixedStepClock::advance(Seconds frame_time) {
  if (frame_time < Seconds{0, 1}) throw Error({}, kPlace, "a frame time cannot be negative");
  accumulator_ = accumulator_ + frame_time;
  FrameSteps out;
  while (accumulator_ >= step_ && out.steps < max_steps_) {
    accumulator_ = accumulator_ - step_;
    ++out.steps;
  }
  if (out.steps == max_steps_ && accumulator_ >= step_) {
    accumulator_ = Seconds{0, 1};  // too far behind: drop the rest
    out.dropped = true;
  }
  out.alpha = ratio(accumulator_, step_);
  out.left = accumulator_;
  return out;
}

}  // namespace kinema
