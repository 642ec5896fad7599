// kinema/procedural/motion_functions.h — motion computed from functions of time: oscillators,
// travelling waves, and value and gradient noise sampled in time (with octaves) for motion that
// wanders smoothly and never repeats — a hand-held camera, a flame, an idle creature.
//
// Units: seconds, hertz, radians, and whatever unit the amplitude carries (metres for a buoy,
// radians for a swaying blade of grass). Noise values: ValueNoise in [0, 1], GradientNoise in
// about [−0.5, 0.5]; fractal sums are normalized back to those ranges.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kinema {

/// A·sin(2π·f·t + phase): a buoy bobbing on the sea. A = 0.2 m, f = 0.5 Hz gives 0.2 m at
/// t = 0.5 s, 0 at 1 s and −0.2 m at 1.5 s.
double oscillate(double amplitude, double frequency_hz, double t, double phase = 0);

/// A·sin(ω·t − k·x): every point x along a field of grass or a row of flags swings with a phase
/// that depends on where it is, so the swing travels as a wave at ω/k (wave_speed).
double travelling_wave(double amplitude, double omega, double wavenumber, double t, double x);

/// The speed (m/s) at which travelling_wave's crests move: ω/k (ω = 2 rad/s, k = 0.5 rad/m:
/// 4 m/s). Throws kinema::Error for k = 0 (a standing swing has no speed).
double wave_speed(double omega, double wavenumber);

/// 1-D value noise: a value in [0, 1] at every integer (the lattice), smoothstep-interpolated
/// between them (3s² − 2s³, so the motion has no kinks). The lattice repeats every `period`
/// integers. With 0.2 at 2 and 0.9 at 3, v(2.3) = 0.2 + 0.7·smoothstep(0.3) = 0.3512.
class ValueNoise {
 public:
  /// A lattice of `period` (≥ 2) values drawn from a seeded generator (the same seed, the same
  /// noise on every machine).
  explicit ValueNoise(std::uint32_t seed, int period = 256);
  /// A given lattice (each value finite; at least two). Throws kinema::Error otherwise.
  explicit ValueNoise(std::vector<double> lattice);

  double operator()(double t) const;
  std::span<const double> lattice() const { return lattice_; }

 private:
  std::vector<double> lattice_;
};

/// 1-D gradient (Perlin) noise: a slope in [−1, 1] at every integer, each lattice point's line
/// blended with the quintic fade 6s⁵ − 15s⁴ + 10s³; 0 at every integer, about [−0.5, 0.5]
/// between. Smoother than value noise (no value repeats at the lattice), the same cost.
class GradientNoise {
 public:
  explicit GradientNoise(std::uint32_t seed, int period = 256);
  double operator()(double t) const;

 private:
  std::vector<double> slope_;
};

/// Octaves of a noise: Σ gainⁱ·noise(lacunarityⁱ·t + i·17.23) for i < octaves, divided by
/// Σ gainⁱ so that it keeps the noise's range. Slow drift with fine tremor on top. Throws for
/// octaves < 1, a gain ≤ 0 or non-finite numbers. Defined for ValueNoise and GradientNoise.
template <class Noise>
double fractal_noise(const Noise& noise, double t, int octaves, double lacunarity = 2,
                     double gain = 0.5);

/// A camera shake offset from value noise: amplitude·(2·v − 1), centred on 0 (0.05 m and
/// v(2.3) = 0.3512 give −0.01488 m).
double shake_offset(double amplitude, double value_noise);

}  // namespace kinema
