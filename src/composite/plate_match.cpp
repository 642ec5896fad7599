// Differential rendering, grain and motion blur (kinema/composite/plate_match.h).
#include "kinema/composite/plate_match.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kinema/composite/porter_duff.h"
#include "kinema/core/error.h"

namespace kinema::composite {

namespace {

void require_same_size(const Image& a, const Image& b, const char* what) {
  if (a.width != b.width || a.height != b.height)
    throw Error({}, what,
                "images differ in size: " + std::to_string(a.width) + "×" +
                    std::to_string(a.height) + " and " + std::to_string(b.width) + "×" +
                    std::to_string(b.height));
}

/// Bilinear tap at (x, y) in pixel units (pixel i's centre at i); transparent outside.
Rgba sample(const Image& image, float x, float y) {
  const float fx = std::floor(x), fy = std::floor(y);
  const int x0 = int(fx), y0 = int(fy);
  const float tx = x - fx, ty = y - fy;
  Rgba sum;
  auto add = [&](int px, int py, float w) {
    if (w == 0 || px < 0 || py < 0 || px >= image.width || py >= image.height) return;
    const Rgba& p = image.at(px, py);
    sum.r += w * p.r, sum.g += w * p.g, sum.b += w * p.b, sum.a += w * p.a;
  };
  add(x0, y0, (1 - tx) * (1 - ty));
  add(x0 + 1, y0, tx * (1 - ty));
  add(x0, y0 + 1, (1 - tx) * ty);
  add(x0 + 1, y0 + 1, tx * ty);
  return sum;
}

/// The mean of `samples` taps along `motion`, centred on (x, y).
Rgba smear(const Image& image, int x, int y, float mx, float my, int samples) {
  Rgba sum;
  for (int s = 0; s < samples; ++s) {
    const float t = (float(s) + 0.5f) / float(samples) - 0.5f;
    const Rgba p = sample(image, float(x) + t * mx, float(y) + t * my);
    sum.r += p.r, sum.g += p.g, sum.b += p.b, sum.a += p.a;
  }
  return scaled(sum, 1.0f / float(samples));
}

std::uint64_t splitmix(std::uint64_t v) {
  v += 0x9E3779B97F4A7C15ull;
  v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ull;
  v = (v ^ (v >> 27)) * 0x94D049BB133111EBull;
  return v ^ (v >> 31);
}

/// Two independent standard normals from one 64-bit hash (Box–Muller).
void normals(std::uint64_t hash, float& n0, float& n1) {
  const double u0 = (double(hash >> 40) + 0.5) / double(1ull << 24);
  const double u1 = (double((hash >> 16) & 0xFFFFFF) + 0.5) / double(1ull << 24);
  const double radius = std::sqrt(-2 * std::log(u0)), angle = 6.283185307179586 * u1;
  n0 = float(radius * std::cos(angle)), n1 = float(radius * std::sin(angle));
}

}  // namespace

Image differential_composite(const Image& plate, const Image& with_object,
                             const Image& without_object, const Image* object) {
  require_same_size(plate, with_object, "differential render");
  require_same_size(plate, without_object, "differential render");
  if (object) require_same_size(plate, *object, "differential render, object");
  Image out(plate.width, plate.height);
  for (std::size_t i = 0; i < plate.pixels.size(); ++i) {
    const Rgba &p = plate.pixels[i], &w = with_object.pixels[i], &wo = without_object.pixels[i];
    Rgba v{differential_pixel(p.r, w.r, wo.r), differential_pixel(p.g, w.g, wo.g),
           differential_pixel(p.b, w.b, wo.b), p.a};
    out.pixels[i] = object ? over(object->pixels[i], v) : v;
  }
  return out;
}

Grain estimate_grain(const Image& plate) {
  if (plate.width < 3 || plate.height < 3)
    throw Error({}, "grain", "the plate must be at least 3×3 pixels to measure grain");
  const int w = plate.width, h = plate.height;
  auto value = [&](int x, int y, int c) {
    const Rgba& p = plate.at(x, y);
    return c == 0 ? p.r : c == 1 ? p.g : p.b;
  };
  float sigma[3] = {0, 0, 0};
  std::vector<float> residual, gradient, kept;
  for (int c = 0; c < 3; ++c) {
    residual.clear(), gradient.clear();
    for (int y = 1; y + 1 < h; ++y)
      for (int x = 1; x + 1 < w; ++x) {
        float n[3][3];
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) n[dy + 1][dx + 1] = value(x + dx, y + dy, c);
        // Immerkær's mask [1 −2 1; −2 4 −2; 1 −2 1]: zero on any linear ramp, 6σ on noise.
        const float r = n[0][0] + n[0][2] + n[2][0] + n[2][2] -
                        2 * (n[0][1] + n[1][0] + n[1][2] + n[2][1]) + 4 * n[1][1];
        // Sobel: √12·σ a component on noise, large across edges and texture.
        const float gx = (n[0][2] + 2 * n[1][2] + n[2][2]) - (n[0][0] + 2 * n[1][0] + n[2][0]);
        const float gy = (n[2][0] + 2 * n[2][1] + n[2][2]) - (n[0][0] + 2 * n[0][1] + n[0][2]);
        residual.push_back(std::abs(r));
        gradient.push_back(std::sqrt(gx * gx + gy * gy));
      }
    auto median_sigma = [](std::vector<float>& values) {
      auto middle = values.begin() + std::ptrdiff_t(values.size() / 2);
      std::nth_element(values.begin(), middle, values.end());
      return float(double(*middle) * 1.4826 / 6);  // a Gaussian's σ from its median |r|
    };
    kept = residual;
    float s = median_sigma(kept);
    // Leave out edges and texture: pixels whose gradient is past 2.5 Rayleigh scales of the
    // noise alone (4 % of pure-noise pixels). The masks are even and odd, so on noise the
    // residual is independent of the gradient and the gate does not bias it. Three rounds let
    // an estimate inflated by texture tighten its own gate.
    for (int round = 0; round < 3 && s > 0; ++round) {
      const float gate = 2.5f * std::sqrt(12.0f) * s;
      kept.clear();
      for (std::size_t i = 0; i < residual.size(); ++i)
        if (gradient[i] <= gate) kept.push_back(residual[i]);
      if (kept.size() < residual.size() / 20) break;  // too little flat plate to trust
      s = median_sigma(kept);
    }
    sigma[c] = s;
  }
  return {sigma[0], sigma[1], sigma[2]};
}

void add_grain(Image& image, const Grain& grain, std::uint64_t seed) {
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      Rgba& p = image.at(x, y);
      if (p.a <= 0) continue;
      const std::uint64_t key = splitmix(seed ^ splitmix((std::uint64_t(y) << 32) | unsigned(x)));
      float n0, n1, n2, unused;
      normals(key, n0, n1);
      normals(splitmix(key), n2, unused);
      p.r += p.a * grain.sigma_r * n0;
      p.g += p.a * grain.sigma_g * n1;
      p.b += p.a * grain.sigma_b * n2;
    }
}

Image motion_blur(const Image& image, Vec2 motion_px, int samples) {
  samples = std::max(samples, 1);
  Image out(image.width, image.height);
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      out.at(x, y) = smear(image, x, y, float(motion_px.x), float(motion_px.y), samples);
  return out;
}

Image vector_blur(const Image& image, std::span<const Vec2f> motion, int samples) {
  if (motion.size() != image.pixels.size())
    throw Error({}, "vector blur",
                std::to_string(motion.size()) + " motion vectors for " +
                    std::to_string(image.pixels.size()) + " pixels");
  samples = std::max(samples, 1);
  Image out(image.width, image.height);
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      const Vec2f m = motion[std::size_t(y) * std::size_t(image.width) + std::size_t(x)];
      out.at(x, y) = smear(image, x, y, m.x, m.y, samples);
    }
  return out;
}

}  // namespace kinema::composite
