// Motion from functions (kinema/procedural/motion_functions.h).
#include "kinema/procedural/motion_functions.h"

#include <cmath>
#include <numbers>
#include <random>
#include <string>

#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr const char* kPlace = "procedural";

void require(bool ok, const std::string& reason) {
  if (!ok) throw Error({}, kPlace, reason);
}

/// The lattice cell of t: the integer below it (wrapped to the period) and where t is in it.
void cell(double t, std::size_t period, std::size_t& left, double& s) {
  const double floor_t = std::floor(t);
  s = t - floor_t;
  const double wrapped = std::fmod(floor_t, double(period));
  left = std::size_t(wrapped < 0 ? wrapped + double(period) : wrapped);
}

}  // namespace

double oscillate(double amplitude, double frequency_hz, double t, double phase) {
  return amplitude * std::sin(2 * std::numbers::pi * frequency_hz * t + phase);
}

double travelling_wave(double amplitude, double omega, double wavenumber, double t, double x) {
  return amplitude * std::sin(omega * t - wavenumber * x);
}

double wave_speed(double omega, double wavenumber) {
  require(wavenumber != 0 && std::isfinite(wavenumber) && std::isfinite(omega),
          "a wave's speed needs a finite, non-zero wavenumber");
  return omega / wavenumber;
}

ValueNoise::ValueNoise(std::uint32_t seed, int period) {
  require(period >= 2, "a noise's period must be at least 2");
  std::mt19937 generator(seed);
  lattice_.resize(std::size_t(period));
  // Drawn from the generator's raw output (the standard distributions may differ between
  // standard libraries; this does not).
  for (double& v : lattice_) v = double(generator()) / 4294967296.0;
}

ValueNoise::ValueNoise(std::vector<double> lattice) : lattice_(std::move(lattice)) {
  require(lattice_.size() >= 2, "a value noise needs at least two lattice values");
  for (std::size_t i = 0; i < lattice_.size(); ++i)
    require(std::isfinite(lattice_[i]), "lattice value " + std::to_string(i) + " is not finite");
}

double ValueNoise::operator()(double t) const {
  std::size_t left = 0;
  double s = 0;
  cell(t, lattice_.size(), left, s);
  const double a = lattice_[left], b = lattice_[(left + 1) % lattice_.size()];
  return a + (b - a) * (s * s * (3 - 2 * s));
}

GradientNoise::GradientNoise(std::uint32_t seed, int period) {
  require(period >= 2, "a noise's period must be at least 2");
  std::mt19937 generator(seed);
  slope_.resize(std::size_t(period));
  for (double& g : slope_) g = 2 * (double(generator()) / 4294967296.0) - 1;
}

double GradientNoise::operator()(double t) const {
  std::size_t left = 0;
  double s = 0;
  cell(t, slope_.size(), left, s);
  // Each end's line through 0 with its slope, blended by the quintic fade.
  const double from_left = slope_[left] * s;
  const double from_right = slope_[(left + 1) % slope_.size()] * (s - 1);
  const double fade = s * s * s * (s * (s * 6 - 15) + 10);
  return from_left + (from_right - from_left) * fade;
}

template <class Noise>
double fractal_noise(const Noise& noise, double t, int octaves, double lacunarity, double gain) {
  require(octaves >= 1, "fractal noise needs at least one octave");
  require(std::isfinite(t) && std::isfinite(lacunarity) && std::isfinite(gain) && gain > 0,
          "fractal noise needs finite numbers and a positive gain");
  double sum = 0, weight = 0, amplitude = 1, frequency = 1;
  for (int i = 0; i < octaves; ++i) {
    // Each octave shifted so that all of them do not pass through the lattice together at t = 0.
    sum += amplitude * noise(frequency * t + 17.23 * i);
    weight += amplitude;
    amplitude *= gain;
    frequency *= lacunarity;
  }
  return sum / weight;
}

template double fractal_noise<ValueNoise>(const ValueNoise&, double, int, double, double);
template double fractal_noise<GradientNoise>(const GradientNoise&, double, int, double, double);

double shake_offset(double amplitude, double value_noise) {
  return amplitude * (2 * value_noise - 1);
}

}  // namespace kinema
