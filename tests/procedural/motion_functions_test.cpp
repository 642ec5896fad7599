// Motion from functions: the buoy's oscillation, the travelling wave's speed, value noise's
// v(2.3) = 0.3512 and the camera shake it gives, gradient noise's zeros and smoothness, octaves
// kept in range, drivers (the rolling wheel's θ = d / r) and their errors.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/procedural/driver.h"
#include "kinema/procedural/motion_functions.h"

namespace kinema {
namespace {

TEST(MotionFunctions, BuoyOf20CentimetresAtHalfAHertz) {
  // y(t) = A·sin(2πft), A = 0.2 m, f = 0.5 Hz: 0.2 m at 0.5 s, 0 at 1 s, −0.2 m at 1.5 s.
  EXPECT_NEAR(oscillate(0.2, 0.5, 0.5), 0.2, 1e-15);
  EXPECT_NEAR(oscillate(0.2, 0.5, 1.0), 0.0, 1e-15);
  EXPECT_NEAR(oscillate(0.2, 0.5, 1.5), -0.2, 1e-15);
}

TEST(MotionFunctions, TravellingWaveMovesAtOmegaOverK) {
  // θ(t, x) = A·sin(ωt − kx), ω = 2 rad/s, k = 0.5 rad/m: crests travel at 4 m/s — the value at
  // x + 4·Δt a time Δt later is the value now at x.
  EXPECT_DOUBLE_EQ(wave_speed(2, 0.5), 4);
  for (double x : {0.0, 0.7, 3.1})
    EXPECT_NEAR(travelling_wave(0.3, 2, 0.5, 1.25, x), travelling_wave(0.3, 2, 0.5, 1.0, x - 1.0),
                1e-14);
  EXPECT_THROW(wave_speed(2, 0), Error);
}

TEST(MotionFunctions, ValueNoiseGivesThe3512AndTheCameraShake) {
  // A lattice with 0.2 at 2 and 0.9 at 3, smoothstep between: v(2.3) = 0.2 + 0.7·0.216 = 0.3512;
  // a 0.05 m shake there is 0.05·(2·0.3512 − 1) = −0.01488 m.
  const ValueNoise v(std::vector<double>{0.5, 0.1, 0.2, 0.9, 0.4});
  EXPECT_NEAR(v(2.3), 0.3512, 1e-15);
  EXPECT_NEAR(shake_offset(0.05, v(2.3)), -0.01488, 1e-15);
  EXPECT_DOUBLE_EQ(v(2.0), 0.2);
  EXPECT_DOUBLE_EQ(v(3.0), 0.9);
  EXPECT_DOUBLE_EQ(v(7.0), 0.2);  // the lattice repeats every 5
  EXPECT_THROW(ValueNoise(std::vector<double>{0.5}), Error);
  EXPECT_THROW(ValueNoise(std::vector<double>{0.5, NAN}), Error);
}

TEST(MotionFunctions, NoiseIsSmoothBoundedAndTheSameForTheSameSeed) {
  // Both noises: within their ranges, continuous with a continuous slope (no kinks at the
  // lattice: the one-sided slopes at integers agree), the same for the same seed, different for
  // another. Gradient noise is 0 at every integer.
  const ValueNoise value(7);
  const GradientNoise gradient(7);
  const double eps = 1e-6;
  for (double t = -20; t < 20; t += 0.013) {
    EXPECT_GE(value(t), 0);
    EXPECT_LE(value(t), 1);
    EXPECT_LE(std::abs(gradient(t)), 0.5 + 1e-12);
  }
  for (int i = -5; i < 5; ++i) {
    EXPECT_NEAR(gradient(i), 0, 1e-15);
    for (auto noise : {+[](double t) { return ValueNoise(7)(t); },
                       +[](double t) { return GradientNoise(7)(t); }}) {
      const double left = (noise(i) - noise(i - eps)) / eps;
      const double right = (noise(i + eps) - noise(i)) / eps;
      EXPECT_NEAR(left, right, 1e-4) << "at " << i;
    }
  }
  EXPECT_EQ(ValueNoise(7)(3.7), value(3.7));
  EXPECT_NE(ValueNoise(8)(3.7), value(3.7));
}

TEST(MotionFunctions, OctavesAddTremorAndKeepTheRange) {
  // Five octaves stay within value noise's [0, 1]; they wander more between two close instants
  // than one octave does (the fine tremor on the slow drift).
  const ValueNoise v(3);
  double one = 0, five = 0;
  for (double t = 0; t < 50; t += 0.01) {
    const double f = fractal_noise(v, t, 5);
    EXPECT_GE(f, 0);
    EXPECT_LE(f, 1);
    one += std::abs(fractal_noise(v, t + 0.01, 1) - fractal_noise(v, t, 1));
    five += std::abs(fractal_noise(v, t + 0.01, 5) - f);
  }
  EXPECT_GT(five, 1.3 * one);
  EXPECT_DOUBLE_EQ(fractal_noise(v, 2.5, 1), v(2.5));
  EXPECT_THROW(fractal_noise(v, 1, 0), Error);
}

TEST(Driver, WheelTurnsTenRadiansOverThreeMetres) {
  // θ = d / r: a 0.3 m wheel on a car that travelled 3 m turns 10 rad, about 573° or 1.59 turns.
  Driver wheel("d / r", {"d", "r"});
  const double theta = wheel.evaluate(std::vector<double>{3, 0.3});
  EXPECT_NEAR(theta, 10, 1e-12);
  EXPECT_NEAR(theta * 180 / std::numbers::pi, 572.96, 0.01);
  EXPECT_NEAR(theta / (2 * std::numbers::pi), 1.59, 0.005);
  Driver copy = wheel;  // a copy parses again and owns its variables
  EXPECT_NEAR(copy.evaluate(std::vector<double>{0.6, 0.3}), 2, 1e-12);
  EXPECT_NEAR(wheel.evaluate(std::vector<double>{3, 0.3}), 10, 1e-12);
}

TEST(Driver, FunctionsConstantsAndConditions) {
  Driver d("t > 1 ? 0.2 * sin(2 * _pi * 0.5 * t) : max(a, b, 0)", {"t", "a", "b"});
  EXPECT_NEAR(d.evaluate(std::vector<double>{1.5, 0, 0}), -0.2, 1e-12);
  EXPECT_DOUBLE_EQ(d.evaluate(std::vector<double>{0.5, -1, 3}), 3);
}

TEST(Driver, ErrorsPointIntoTheText) {
  auto message = [](const std::string& expression, std::vector<std::string> variables) {
    try {
      Driver d(expression, variables);
    } catch (const Error& e) {
      return e.place() + ": " + e.reason();
    }
    return std::string("no error");
  };
  // An unknown name: the column where it starts, and a caret under it.
  const std::string unknown = message("d / radius", {"d", "r"});
  EXPECT_NE(unknown.find("column 5"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("d / radius\n      ^"), std::string::npos) << unknown;
  EXPECT_NE(message("d / (r", {"d", "r"}).find("column"), std::string::npos);
  EXPECT_NE(message("d r", {"d", "r"}).find("column 3"), std::string::npos);
  EXPECT_NE(message("2d", {"2d"}).find("not letters"), std::string::npos);
  EXPECT_NE(message("x", {"x", "x"}).find("named twice"), std::string::npos);
  Driver wheel("d / r", {"d", "r"});
  EXPECT_THROW(wheel.evaluate(std::vector<double>{3}), Error);
  EXPECT_THROW(wheel.evaluate(std::vector<double>{3, 0}), Error);  // not finite
}

}  // namespace
}  // namespace kinema
