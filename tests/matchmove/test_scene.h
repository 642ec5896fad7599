// A synthetic plate for the matchmove tests: a textured room (floor and three walls) seen by a
// pinhole camera on a known dolly-and-pan path, rendered through a Brown–Conrady lens with sensor
// noise. Ground truth (camera path, focal length, distortion, the 3D point under any pixel)
// comes with it.
//
// World: metres, y up; the floor is y = 0, the back wall z = 0, the side walls x = ±4. Cameras
// follow the solve's convention: x_c = R·(X − C), camera x right, y down, looking down +z.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "kinema/composite/image.h"
#include "kinema/composite/lens.h"
#include "kinema/matchmove/tracking.h"
#include "kinema/math/vec3.h"

namespace kinema::matchmove::test {

struct TrueCamera {
  Vec3 centre;
  Vec3 rows[3];  // R's rows: camera right, down, forward, in world coordinates
  Vec3 to_camera(const Vec3& x) const {
    const Vec3 d = x - centre;
    return {dot(rows[0], d), dot(rows[1], d), dot(rows[2], d)};
  }
  Vec3 to_world_direction(const Vec3& d) const {
    return rows[0] * d.x + rows[1] * d.y + rows[2] * d.z;
  }
};

inline TrueCamera look_at(const Vec3& eye, const Vec3& target) {
  TrueCamera c;
  c.centre = eye;
  const Vec3 forward = normalize(target - eye);
  const Vec3 right = normalize(cross(forward, Vec3(0, 1, 0)));
  c.rows[0] = right;
  c.rows[1] = cross(forward, right);  // down: right × down = forward
  c.rows[2] = forward;
  return c;
}

struct SceneSpec {
  int width = 640, height = 360, frames = 40;
  double focal = 560;  // px
  composite::BrownConrady lens{-0.1, 0.015, 0, 0, 0};
  double noise_sigma = 0.005;  // linear units, Gaussian, per channel
  unsigned seed = 7;           // of the noise
};

/// Hash-based value noise: a random value in [0, 1) per integer lattice point.
inline double lattice(std::int64_t i, std::int64_t j, std::uint32_t seed) {
  std::uint64_t h = std::uint64_t(i) * 0x9E3779B97F4A7C15ull ^
                    std::uint64_t(j) * 0xC2B2AE3D27D4EB4Full ^
                    std::uint64_t(seed) * 0x165667B19E3779F9ull;
  h ^= h >> 31, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 27, h *= 0x94D049BB133111EBull, h ^= h >> 31;
  return double(h >> 11) * (1.0 / 9007199254740992.0);
}

/// Bilinear value noise at (a, b) in lattice units, smoothstepped between lattice points.
inline double value_noise(double a, double b, std::uint32_t seed) {
  const double fa = std::floor(a), fb = std::floor(b);
  const std::int64_t i = std::int64_t(fa), j = std::int64_t(fb);
  double s = a - fa, t = b - fb;
  s = s * s * (3 - 2 * s), t = t * t * (3 - 2 * t);
  const double v00 = lattice(i, j, seed), v10 = lattice(i + 1, j, seed);
  const double v01 = lattice(i, j + 1, seed), v11 = lattice(i + 1, j + 1, seed);
  return (v00 * (1 - s) + v10 * s) * (1 - t) + (v01 * (1 - s) + v11 * s) * t;
}

/// High-contrast blobs: two octaves, pushed towards black and white.
inline double texture(double a, double b, std::uint32_t seed) {
  const double n = 0.65 * value_noise(a / 0.09, b / 0.09, seed) +
                   0.35 * value_noise(a / 0.31, b / 0.31, seed + 101);
  const double c = std::clamp((n - 0.5) * 8.0 + 0.5, 0.0, 1.0);
  return 0.03 + 0.75 * c * c * (3 - 2 * c);
}

class Scene {
 public:
  explicit Scene(const SceneSpec& spec = {}) : spec_(spec) {
    for (int f = 0; f < spec.frames; ++f) {
      const double t = spec.frames == 1 ? 0 : double(f) / (spec.frames - 1);
      // Dolly right on an arc towards the back wall while panning back towards the left,
      // craning up and tilting down.
      const double arc = std::sin(3.14159265358979 * t);
      const Vec3 eye(-1.2 + 2.4 * t, 1.4 + 0.6 * t + 0.2 * arc, 5.5 - 0.8 * t - 0.8 * arc);
      const Vec3 target(0.6 - 1.2 * t, 1.3 - 0.6 * t, 0);
      cameras_.push_back(look_at(eye, target));
    }
  }

  const SceneSpec& spec() const { return spec_; }
  const std::vector<TrueCamera>& cameras() const { return cameras_; }
  composite::LensIntrinsics intrinsics() const {
    return {spec_.focal, spec_.focal, (spec_.width - 1) / 2.0, (spec_.height - 1) / 2.0};
  }
  double path_length() const {
    double l = 0;
    for (std::size_t i = 1; i < cameras_.size(); ++i)
      l += length(cameras_[i].centre - cameras_[i - 1].centre);
    return l;
  }
  std::vector<Vec3> positions() const {
    std::vector<Vec3> p;
    for (const TrueCamera& c : cameras_) p.push_back(c.centre);
    return p;
  }

  /// The first surface a world ray hits, and the texture seed and coordinates there.
  struct Hit {
    Vec3 point;
    double a = 0, b = 0;
    std::uint32_t seed = 0;
    double albedo = 1;
  };
  static std::optional<Hit> cast(const Vec3& o, const Vec3& d) {
    Hit best;
    double nearest = 1e30;
    const auto consider = [&](double t, int surface) {
      if (!(t > 1e-6 && t < nearest)) return;
      const Vec3 p = o + d * t;
      Hit h;
      h.point = p;
      switch (surface) {
        case 0:  // floor
          if (std::abs(p.x) > 4 || p.z < 0 || p.z > 12) return;
          h.a = p.x, h.b = p.z, h.seed = 11, h.albedo = 1.0;
          break;
        case 1:  // back wall
          if (std::abs(p.x) > 4 || p.y < 0 || p.y > 5) return;
          h.a = p.x, h.b = p.y, h.seed = 23, h.albedo = 0.8;
          break;
        default:                                                  // side walls
          if (p.y < 0 || p.y > 5 || p.z < 0 || p.z > 12) return;  // the room is open at +z
          h.a = p.z, h.b = p.y, h.seed = surface == 2 ? 37 : 53, h.albedo = 0.65;
          break;
      }
      nearest = t, best = h;
    };
    if (d.y < 0) consider(-o.y / d.y, 0);
    if (d.z < 0) consider(-o.z / d.z, 1);
    if (d.x < 0) consider((-4 - o.x) / d.x, 2);
    if (d.x > 0) consider((4 - o.x) / d.x, 3);
    if (nearest >= 1e30) return std::nullopt;
    return best;
  }

  /// The scene point under distorted pixel (u, v) on frame f (nullopt where the ray escapes).
  std::optional<Vec3> point_under(int f, double u, double v) const {
    const composite::PixelPoint ideal =
        composite::undistort_pixel({u, v}, spec_.lens, intrinsics());
    const composite::LensIntrinsics k = intrinsics();
    const Vec3 d = normalize(cameras_[std::size_t(f)].to_world_direction(
        Vec3((ideal.u - k.cx) / k.fx, (ideal.v - k.cy) / k.fy, 1)));
    const auto h = cast(cameras_[std::size_t(f)].centre, d);
    if (!h) return std::nullopt;
    return h->point;
  }

  /// Where world point x lands on frame f (distorted pixels); false behind the camera.
  bool project(int f, const Vec3& x, composite::PixelPoint& pixel) const {
    const Vec3 c = cameras_[std::size_t(f)].to_camera(x);
    if (!(c.z > 0)) return false;
    pixel =
        composite::to_pixel(composite::distort({c.x / c.z, c.y / c.z}, spec_.lens), intrinsics());
    return true;
  }

  /// Renders every frame: 2 × 2 samples per pixel, each through the exact inverse lens.
  std::vector<composite::Image> render() const {
    const int w = spec_.width, h = spec_.height;
    const composite::LensIntrinsics k = intrinsics();
    // Camera-space sample directions, shared by every frame.
    std::vector<Vec3> directions(std::size_t(w) * std::size_t(h) * 4);
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i)
        for (int s = 0; s < 4; ++s) {
          const double u = i - 0.25 + 0.5 * (s & 1), v = j - 0.25 + 0.5 * (s >> 1);
          const composite::NormalizedPoint n = composite::undistort(
              composite::NormalizedPoint{(u - k.cx) / k.fx, (v - k.cy) / k.fy}, spec_.lens);
          directions[(std::size_t(j) * std::size_t(w) + std::size_t(i)) * 4 + std::size_t(s)] =
              normalize(Vec3(n.x, n.y, 1));
        }
    std::vector<composite::Image> frames(std::size_t(spec_.frames));
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (int f = int(t); f < spec_.frames; f += int(threads)) {
          std::mt19937 random(spec_.seed + unsigned(f) * 7919u);
          std::normal_distribution<float> noise(0, float(spec_.noise_sigma));
          composite::Image image(w, h);
          const TrueCamera& cam = cameras_[std::size_t(f)];
          for (std::size_t p = 0; p < image.pixels.size(); ++p) {
            double sum = 0;
            for (int s = 0; s < 4; ++s) {
              const Vec3 d = cam.to_world_direction(directions[p * 4 + std::size_t(s)]);
              const auto hit = cast(cam.centre, d);
              sum += hit ? hit->albedo * texture(hit->a, hit->b, hit->seed) : 0.1;
            }
            const float value = float(sum / 4);
            // A little colour so luma matters; the noise is per channel like a sensor's.
            image.pixels[p] = {value * 0.9f + noise(random), value + noise(random),
                               value * 1.1f + noise(random), 1};
          }
          frames[std::size_t(f)] = std::move(image);
        }
      });
    for (std::thread& t : pool) t.join();
    return frames;
  }

 private:
  SceneSpec spec_;
  std::vector<TrueCamera> cameras_;
};

/// The default scene rendered and tracked once for the whole test binary.
struct Plate {
  Scene scene;
  std::vector<composite::Image> frames;
  TrackSet tracks;
  double render_seconds = 0, track_seconds = 0;
};

inline const Plate& plate() {
  static const Plate p = [] {
    Plate q;
    auto t0 = std::chrono::steady_clock::now();
    q.frames = q.scene.render();
    auto t1 = std::chrono::steady_clock::now();
    q.tracks = track_features(q.frames);
    auto t2 = std::chrono::steady_clock::now();
    q.render_seconds = std::chrono::duration<double>(t1 - t0).count();
    q.track_seconds = std::chrono::duration<double>(t2 - t1).count();
    return q;
  }();
  return p;
}

}  // namespace kinema::matchmove::test
