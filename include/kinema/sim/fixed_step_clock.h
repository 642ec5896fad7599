// kinema/sim/fixed_step_clock.h — the fixed time step every kinema simulation runs on.
//
// A simulation steps by the same h whatever the frame rate; an accumulator gathers each frame's
// elapsed time and hands out as many steps as fit, and the frame is drawn between the last two
// states with α = accumulator / h:  x_draw = (1 − α)·x_previous + α·x_current.
// A frame that took very long would ask for ever more steps (the "spiral of death"): at most
// max_steps_per_frame run, and if time is still left over after them it is dropped.
//
// Time is counted exactly, as fractions of a second: with 20 ms steps and 60 fps frames the
// sixth frame has exactly 20 ms accumulated and takes one step with α = 0, where six additions of
// the double 1/60 leave 19.999… ms and take none.
#pragma once

#include <cstdint>

namespace kinema {

/// A duration in seconds as an exact fraction num/den (den > 0, reduced). Values past ±2⁶³ in
/// either part throw kinema::Error.
struct Seconds {
  std::int64_t num = 0, den = 1;

  /// num/den seconds, reduced. Throws kinema::Error for den ≤ 0.
  static Seconds fraction(std::int64_t num, std::int64_t den);
  /// s rounded to the nearest nanosecond (a measured clock's reading). Throws for non-finite s.
  static Seconds from_double(double seconds);
  double value() const { return double(num) / double(den); }

  friend Seconds operator+(const Seconds& a, const Seconds& b);
  friend Seconds operator-(const Seconds& a, const Seconds& b);
  friend bool operator==(const Seconds& a, const Seconds& b) = default;
  friend bool operator<(const Seconds& a, const Seconds& b);
  friend bool operator>=(const Seconds& a, const Seconds& b) { return !(a < b); }
  /// a / b as a double (α).
  friend double ratio(const Seconds& a, const Seconds& b);
};

/// What one frame asks of the simulation.
struct FrameSteps {
  int steps = 0;         ///< steps to run now, each of the clock's step
  bool dropped = false;  ///< the cap was hit and the time still left was dropped
  double alpha = 0;      ///< where to draw, between the previous (0) and the current (1) state
  Seconds left;          ///< the accumulator after the steps (< step)
};

class FixedStepClock {
 public:
  /// Steps of `step` seconds (> 0), at most max_steps_per_frame (≥ 1) per frame. Throws
  /// kinema::Error otherwise.
  explicit FixedStepClock(Seconds step, int max_steps_per_frame = 4);

  /// Adds a frame's elapsed time (≥ 0) and returns the steps to run and the α to draw at after
  /// running them. Throws kinema::Error for a negative frame time.
  FrameSteps advance(Seconds frame_time);
  /// The same for a measured time in seconds (rounded to the nearest nanosecond).
  FrameSteps advance(double frame_seconds) { return advance(Seconds::from_double(frame_seconds)); }

  Seconds step() const { return step_; }
  Seconds accumulator() const { return accumulator_; }
  int max_steps_per_frame() const { return max_steps_; }

 private:
  Seconds step_;
  int max_steps_;
  Seconds accumulator_;
};

}  // namespace kinema
