// The demo's stand-in location (demo_plate.h).
#include "demo_plate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kinema/composite/exr_file.h"
#include "kinema/composite/image_file.h"
#include "kinema/composite/plate_match.h"
#include "kinema/core/error.h"
#include "kinema/render/clip_render.h"

namespace kinema::pipeline {

namespace {

constexpr double kPi = 3.14159265358979323846;

std::uint32_t hash2(int x, int y) {
  std::uint32_t h = std::uint32_t(x) * 0x8da6b343u ^ std::uint32_t(y) * 0xd8163841u;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  return h ^ (h >> 15);
}

struct Basis {
  Vec3f eye, forward, right, up;
  float tan_half_fov = 0, aspect = 1;
};

Basis basis_of(const Camera& camera, int width, int height) {
  Basis b;
  b.eye = camera.eye;
  b.forward = normalize(camera.target - camera.eye);
  b.right = normalize(cross(b.forward, camera.up));
  b.up = cross(b.right, b.forward);
  b.tan_half_fov = float(std::tan(camera.fov_y_degrees * kPi / 360.0));
  b.aspect = float(width) / float(height);
  return b;
}

/// Linear colour of the location along one ray, and the shadow's darkening there (0: none).
void shade(const Basis& b, const Vec3f& dir, const Vec3f& centre, float rx, float rz, float rgb[3],
           float& shadow) {
  shadow = 0;
  if (dir.y >= -1e-4f) {  // sky: brighter and paler toward the horizon
    const float h = std::clamp(dir.y, 0.0f, 1.0f);
    rgb[0] = 0.55f - 0.35f * h, rgb[1] = 0.65f - 0.30f * h, rgb[2] = 0.80f - 0.10f * h;
    return;
  }
  const float t = -b.eye.y / dir.y;
  const float x = b.eye.x + t * dir.x, z = b.eye.z + t * dir.z;
  constexpr float kStone = 0.6f, kGrout = 0.025f;
  const int sx = int(std::floor(x / kStone)), sz = int(std::floor(z / kStone));
  const float fx = x / kStone - float(sx), fz = z / kStone - float(sz);
  const float tone = 0.75f + 0.5f * float(hash2(sx, sz) % 1000) / 1000.0f;
  const bool grout = fx < kGrout / kStone || fz < kGrout / kStone;
  const float base = grout ? 0.08f : 0.30f * tone;
  rgb[0] = base * 1.05f, rgb[1] = base, rgb[2] = base * 0.9f;
  // Haze: distant stones fade toward the horizon's colour.
  const float haze = 1 - std::exp(-t / 40.0f);
  rgb[0] += (0.55f - rgb[0]) * haze, rgb[1] += (0.65f - rgb[1]) * haze,
      rgb[2] += (0.80f - rgb[2]) * haze;
  const float dx = (x - centre.x) / rx, dz = (z - centre.z) / rz;
  shadow = 0.75f * std::exp(-1.5f * (dx * dx + dz * dz));
}

}  // namespace

StandIn render_stand_in(const Camera& camera, int width, int height,
                        const composite::BrownConrady& lens, const Vec3f& shadow_centre,
                        float shadow_radius_x, float shadow_radius_z) {
  const Basis b = basis_of(camera, width, height);
  const composite::LensIntrinsics intrinsics = intrinsics_of(camera, width, height);
  StandIn s{composite::Image(width, height), composite::Image(width, height)};
  for (int v = 0; v < height; ++v)
    for (int u = 0; u < width; ++u) {
      float without[3] = {0, 0, 0}, with[3] = {0, 0, 0};
      for (int sample = 0; sample < 4; ++sample) {
        const double su = u - 0.25 + 0.5 * (sample & 1), sv = v - 0.25 + 0.5 * (sample >> 1);
        float rgb[3] = {0.55f, 0.65f, 0.80f}, shadow = 0;
        try {
          // Where the real lens took this pixel's light from: the pinhole pixel, then its ray.
          const composite::PixelPoint p = composite::undistort_pixel({su, sv}, lens, intrinsics);
          const float nx = float((p.u - intrinsics.cx) / (width / 2.0));
          const float ny = float(-(p.v - intrinsics.cy) / (height / 2.0));
          const Vec3f dir = normalize(b.forward + b.right * (nx * b.tan_half_fov * b.aspect) +
                                      b.up * (ny * b.tan_half_fov));
          shade(b, dir, shadow_centre, shadow_radius_x, shadow_radius_z, rgb, shadow);
        } catch (const Error&) {
          // Past the lens's fold: no ray; the sky colour stands in.
        }
        for (int c = 0; c < 3; ++c) {
          without[c] += 0.25f * rgb[c];
          with[c] += 0.25f * rgb[c] * (1 - shadow);
        }
      }
      s.without_object.at(u, v) = {without[0], without[1], without[2], 1};
      s.with_object.at(u, v) = {with[0], with[1], with[2], 1};
    }
  return s;
}

CompositeShot composite_into_plate(const Asset& asset, const std::string& file, double k1,
                                   float grain_sigma) {
  ClipRenderOptions options;
  options.target.width = 640;
  options.target.height = 360;
  options.camera = CameraMode::Follow;
  options.ground = false;
  options.transparent_background = true;
  ClipRenderer renderer(asset, 0, options, file);
  const double t = 0.5 * renderer.duration();
  const Camera camera = renderer.camera_at(t);
  const Bounds3f bounds = renderer.bounds_at(t);
  const int w = options.target.width, h = options.target.height;
  CompositeShot shot;
  // The CG, rendered as a pinhole camera sees it, then bent through the real lens.
  const composite::BrownConrady lens{k1, 0.01, 0, 0, 0};
  const composite::StMap to_plate =
      composite::st_map_distort(lens, intrinsics_of(camera, w, h), w, h);
  composite::Image cg = composite::remap(to_linear(renderer.frame(t)), to_plate);
  shot.gl_renderer = renderer.renderer().gl_renderer();
  // The location through the lens, with and without the character's contact shadow: as wide as
  // the body's footprint plus a margin (a soft sky light: no direction; shadow maps come with the
  // renderer's materials). The plate is the location with film grain, as the camera recorded it.
  const float rx = 0.5f * std::max(bounds.max.x - bounds.min.x, 0.3f) + 0.25f;
  const float rz = 0.5f * std::max(bounds.max.z - bounds.min.z, 0.3f) + 0.25f;
  const StandIn stand_in = render_stand_in(camera, w, h, lens, bounds.center(), rx, rz);
  composite::Image plate = stand_in.without_object;
  composite::add_grain(plate, {grain_sigma, grain_sigma, grain_sigma}, 1998);
  // Match the plate: its grain measured and put on the CG, then the shadow and the CG added.
  const composite::Grain grain = composite::estimate_grain(plate);
  shot.grain_measured = grain.sigma_g;
  composite::add_grain(cg, grain, 2026);
  shot.png = composite::encode_png(
      composite::differential_composite(plate, stand_in.with_object, stand_in.without_object, &cg));
  shot.exr = composite::encode_exr(cg);
  return shot;
}

}  // namespace kinema::pipeline
