// The fixed-step clock: the 50 Hz physics / 60 fps display table (its sixth frame exact), the
// listing's seven printed lines with the 100 ms spike capped, exact time, bad input.
#include "kinema/sim/fixed_step_clock.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "kinema/core/error.h"

namespace kinema {
namespace {

TEST(FixedStepClock, FiftyHertzPhysicsAtSixtyFpsMatchesTheTable) {
  FixedStepClock clock(Seconds::fraction(1, 50));  // h = 20 ms
  const int steps[] = {0, 1, 1, 1, 1, 1};
  const double left_ms[] = {16.67, 13.33, 10.00, 6.67, 3.33, 0.00};
  const double alpha[] = {0.83, 0.67, 0.50, 0.33, 0.17, 0};
  for (int f = 0; f < 6; ++f) {
    const FrameSteps r = clock.advance(Seconds::fraction(1, 60));
    EXPECT_EQ(r.steps, steps[f]) << "frame " << f + 1;
    EXPECT_NEAR(r.left.value() * 1000, left_ms[f], 0.005) << "frame " << f + 1;
    EXPECT_NEAR(r.alpha, alpha[f], 0.005) << "frame " << f + 1;
    EXPECT_FALSE(r.dropped);
  }
  // The sixth frame: exactly 20 ms accumulated, one step, nothing left.
  EXPECT_EQ(clock.accumulator(), (Seconds{0, 1}));
}

TEST(FixedStepClock, NaiveDoublesMissTheSixthFramesStep) {
  // What exact time is for: the same loop in doubles leaves 19.999… ms at frame 6.
  double accumulator = 0;
  int steps = 0;
  for (int f = 0; f < 6; ++f) {
    accumulator += 1 / 60.0;
    steps = 0;
    while (accumulator >= 0.020) {
      accumulator -= 0.020;
      ++steps;
    }
  }
  EXPECT_EQ(steps, 0);
  EXPECT_NEAR(accumulator, 0.020, 1e-15);
  FixedStepClock clock(Seconds::fraction(1, 50));
  FrameSteps last;
  for (int f = 0; f < 6; ++f) last = clock.advance(Seconds::fraction(1, 60));
  EXPECT_EQ(last.steps, 1);
  EXPECT_EQ(last.alpha, 0);
}

TEST(FixedStepClock, ListingPrintsItsSevenLinesWithTheSpikeCapped) {
  struct Ball {
    double y, v;
  };
  auto step = [](Ball s, double h) {  // semi-implicit Euler, g = 9.8
    const double v = s.v - 9.8 * h;
    return Ball{s.y + h * v, v};
  };
  const Seconds h = Seconds::fraction(1, 50);
  const Seconds sixtieth = Seconds::fraction(1, 60), spike = Seconds::fraction(1, 10);
  const Seconds frames[] = {sixtieth, sixtieth, sixtieth, sixtieth, sixtieth, spike, sixtieth};
  FixedStepClock clock(h, 4);
  Ball previous{10, 0}, current{10, 0};
  std::string printed;
  int frame = 0;
  for (const Seconds& t : frames) {
    const FrameSteps r = clock.advance(t);
    for (int i = 0; i < r.steps; ++i) {
      previous = current;
      current = step(current, h.value());
    }
    const double y = (1 - r.alpha) * previous.y + r.alpha * current.y;
    char line[80];
    std::snprintf(line, sizeof line, "frame %d: steps %d, alpha %.3f, draw y = %.4f\n", ++frame,
                  r.steps, r.alpha, y);
    printed += line;
    EXPECT_EQ(r.dropped, frame == 6);  // 103.3 ms would be 5 steps; 4 run, the rest is dropped
  }
  EXPECT_EQ(printed,
            "frame 1: steps 0, alpha 0.833, draw y = 10.0000\n"
            "frame 2: steps 1, alpha 0.667, draw y = 9.9974\n"
            "frame 3: steps 1, alpha 0.500, draw y = 9.9922\n"
            "frame 4: steps 1, alpha 0.333, draw y = 9.9843\n"
            "frame 5: steps 1, alpha 0.167, draw y = 9.9739\n"
            "frame 6: steps 4, alpha 0.000, draw y = 9.8902\n"
            "frame 7: steps 0, alpha 0.833, draw y = 9.8641\n");
}

TEST(FixedStepClock, HundredFramesOfASixtiethAreExactlyHundredSixtiethsWhateverTheOrder) {
  FixedStepClock clock(Seconds::fraction(1, 120), 1000);
  long total_steps = 0;
  for (int f = 0; f < 600; ++f) total_steps += clock.advance(Seconds::fraction(1, 60)).steps;
  EXPECT_EQ(total_steps, 1200);  // 10 s at 120 Hz, not one step lost
  EXPECT_EQ(clock.accumulator(), (Seconds{0, 1}));
  // Measured frame times in doubles are counted to the nanosecond.
  FixedStepClock measured(Seconds::fraction(1, 100), 1000);
  long steps = 0;
  for (int f = 0; f < 1000; ++f) steps += measured.advance(0.01).steps;
  EXPECT_EQ(steps, 1000);
}

TEST(FixedStepClock, RandomFramesNeverLoseTimeUnlessDropped) {
  FixedStepClock clock(Seconds::fraction(1, 90), 8);
  Seconds elapsed{0, 1}, stepped{0, 1}, dropped{0, 1};
  uint32_t seed = 5;
  for (int f = 0; f < 5000; ++f) {
    seed = seed * 1664525u + 1013904223u;
    const Seconds t = Seconds::fraction(int64_t(seed % 200) + 1, 6000);  // up to 33 ms
    const Seconds before = clock.accumulator();
    const FrameSteps r = clock.advance(t);
    elapsed = elapsed + t;
    for (int i = 0; i < r.steps; ++i) stepped = stepped + clock.step();
    if (r.dropped) {
      Seconds owed = before + t;
      for (int i = 0; i < r.steps; ++i) owed = owed - clock.step();
      dropped = dropped + owed;
    }
    EXPECT_GE(r.alpha, 0);
    EXPECT_LT(r.alpha, 1);
  }
  EXPECT_EQ(stepped + clock.accumulator() + dropped, elapsed);  // every tick accounted for
}

TEST(FixedStepClock, BadInputIsRefused) {
  EXPECT_THROW(FixedStepClock(Seconds{0, 1}), Error);
  EXPECT_THROW(FixedStepClock(Seconds::fraction(1, 60), 0), Error);
  EXPECT_THROW(Seconds::fraction(1, 0), Error);
  EXPECT_THROW(Seconds::from_double(std::numeric_limits<double>::quiet_NaN()), Error);
  FixedStepClock clock(Seconds::fraction(1, 60));
  EXPECT_THROW(clock.advance(Seconds::fraction(-1, 60)), Error);
  EXPECT_THROW(clock.advance(std::numeric_limits<double>::infinity()), Error);
}

}  // namespace
}  // namespace kinema
