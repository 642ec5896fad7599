// src/render/volume.cpp — ray-marched smoke and fire (kinema/render/volume.h).
#include "kinema/render/volume.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>

#include "kinema/composite/image_file.h"
#include "kinema/core/error.h"

namespace kinema {

namespace {

constexpr int kBlock = 8;                    // voxels a side of an empty-space block
constexpr float kStopTransmittance = 1e-5f;  // a ray ends once this little light gets through
constexpr float kDeg = std::numbers::pi_v<float> / 180;

bool finite3(const Vec3f& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

void check(bool ok, const std::string& file, const std::string& option, const std::string& reason) {
  if (!ok) throw Error(file, "volume " + option, reason);
}

void check_colour(const Vec3f& v, float max, const std::string& file, const std::string& option) {
  bool ok = finite3(v);
  for (int c = 0; c < 3; ++c) ok = ok && v[c] >= 0 && v[c] <= max;
  check(ok, file, option,
        max < std::numeric_limits<float>::max() ? "must be three finite numbers in 0…1"
                                                : "must be three finite numbers ≥ 0");
}

/// Trilinear sampling: the eight voxels around voxel coordinates u (voxel centres at integers),
/// clamped to the grid (constant out to the box's faces).
struct Trilinear {
  size_t base = 0, dx = 0, dy = 0, dz = 0;
  float fx = 0, fy = 0, fz = 0;

  Trilinear(const DenseVolume& v, const Vec3f& u) {
    const int n[3] = {v.nx, v.ny, v.nz};
    int i0[3], step[3];
    float f[3];
    for (int a = 0; a < 3; ++a) {
      const float c = std::clamp(u[a], 0.0f, float(n[a] - 1));
      i0[a] = std::min(int(c), std::max(n[a] - 2, 0));
      f[a] = c - float(i0[a]);
      step[a] = n[a] > 1 ? 1 : 0;
    }
    const size_t sx = 1, sy = size_t(v.nx), sz = size_t(v.nx) * size_t(v.ny);
    base = size_t(i0[0]) * sx + size_t(i0[1]) * sy + size_t(i0[2]) * sz;
    dx = size_t(step[0]) * sx;
    dy = size_t(step[1]) * sy;
    dz = size_t(step[2]) * sz;
    fx = f[0];
    fy = f[1];
    fz = f[2];
  }
  float operator()(const float* g) const {
    const float* p = g + base;
    const float c00 = p[0] + (p[dx] - p[0]) * fx;
    const float c10 = p[dy] + (p[dy + dx] - p[dy]) * fx;
    const float c01 = p[dz] + (p[dz + dx] - p[dz]) * fx;
    const float c11 = p[dz + dy] + (p[dz + dy + dx] - p[dz + dy]) * fx;
    const float c0 = c00 + (c10 - c00) * fy, c1 = c01 + (c11 - c01) * fy;
    return c0 + (c1 - c0) * fz;
  }
};

/// The fire ramp: black, deep red, orange, yellow, yellow-white.
Vec3f flame_ramp(float f) {
  static constexpr std::array<Vec3f, 5> kRamp{Vec3f{0, 0, 0}, Vec3f{0.35f, 0.02f, 0.0f},
                                              Vec3f{1.0f, 0.25f, 0.02f}, Vec3f{1.0f, 0.55f, 0.12f},
                                              Vec3f{1.0f, 0.85f, 0.45f}};
  const float x = std::clamp(f, 0.0f, 1.0f) * float(kRamp.size() - 1);
  const int i = std::min(int(x), int(kRamp.size()) - 2);
  return lerp(kRamp[size_t(i)], kRamp[size_t(i) + 1], x - float(i));
}

/// Emitted radiance per metre, given the (interpolated) temperature or flame value.
struct Emitter {
  VolumeEmission e;
  const float* field = nullptr;  // temperature or flame; null: no emission
  float min4 = 0, inv_ref4 = 0;

  Emitter(const DenseVolume& v, const VolumeEmission& emission) : e(emission) {
    if (!(e.intensity > 0)) return;
    if (e.mode == VolumeEmission::Mode::Blackbody && !v.temperature.empty())
      field = v.temperature.data();
    else if (e.mode == VolumeEmission::Mode::Flame && !v.flame.empty())
      field = v.flame.data();
    const float m2 = e.min_kelvin * e.min_kelvin, r2 = e.reference_kelvin * e.reference_kelvin;
    min4 = m2 * m2;
    inv_ref4 = 1.0f / (r2 * r2);
  }
  /// True when the value gives off light (the test the empty-space blocks use: an interpolation of
  /// values that do not glow does not glow).
  bool glows(float value) const {
    if (e.mode == VolumeEmission::Mode::Flame) return value > 0;
    return e.temperature_offset + e.temperature_scale * value > e.min_kelvin;
  }
  Vec3f operator()(float value) const {
    if (!glows(value)) return {0, 0, 0};
    if (e.mode == VolumeEmission::Mode::Flame) return flame_ramp(value) * e.intensity;
    const float k = e.temperature_offset + e.temperature_scale * value, k2 = k * k;
    return blackbody_colour(k) * (e.intensity * (k2 * k2 - min4) * inv_ref4);
  }
};

/// Which 8³ blocks hold anything a ray through them could pick up (density under a positive
/// extinction, or emission), over every voxel their samples' trilinear stencils reach.
struct Blocks {
  int bx = 0, by = 0, bz = 0;
  std::vector<char> active;

  Blocks(const DenseVolume& v, const VolumeShading& s, const Emitter& emit) {
    bx = (v.nx + kBlock - 1) / kBlock;
    by = (v.ny + kBlock - 1) / kBlock;
    bz = (v.nz + kBlock - 1) / kBlock;
    active.assign(size_t(bx) * size_t(by) * size_t(bz), 0);
    const bool dense = s.extinction > 0;
    tbb::parallel_for(0, bz, [&](int kb) {
      for (int jb = 0; jb < by; ++jb)
        for (int ib = 0; ib < bx; ++ib) {
          bool any = false;
          const int k1 = std::min((kb + 1) * kBlock, v.nz - 1),
                    j1 = std::min((jb + 1) * kBlock, v.ny - 1),
                    i1 = std::min((ib + 1) * kBlock, v.nx - 1);
          for (int k = std::max(kb * kBlock - 1, 0); k <= k1 && !any; ++k)
            for (int j = std::max(jb * kBlock - 1, 0); j <= j1 && !any; ++j)
              for (int i = std::max(ib * kBlock - 1, 0); i <= i1 && !any; ++i) {
                const size_t at = size_t(i) + size_t(v.nx) * (size_t(j) + size_t(v.ny) * size_t(k));
                any = (dense && v.density[at] > 0) || (emit.field && emit.glows(emit.field[at]));
              }
          active[size_t(ib) + size_t(bx) * (size_t(jb) + size_t(by) * size_t(kb))] = any;
        }
    });
  }
};

/// 1 − e^(−x) for x ≥ 0, to float precision also where x is tiny (faster than expm1f).
float one_minus_exp(float x) {
  return x < 1e-3f ? x * (1 - x * (0.5f - x * (1.0f / 6))) : 1 - std::exp(-x);
}

/// Where a ray eye + t·dir enters and leaves the box [lo, hi] (t0 > t1: it misses).
void clip_to_box(const Vec3f& eye, const Vec3f& dir, const Vec3f& lo, const Vec3f& hi, float& t0,
                 float& t1) {
  for (int a = 0; a < 3; ++a) {
    if (dir[a] == 0) {
      if (eye[a] < lo[a] || eye[a] > hi[a]) t1 = -1;
      continue;
    }
    const float inv = 1.0f / dir[a];
    float ta = (lo[a] - eye[a]) * inv, tb = (hi[a] - eye[a]) * inv;
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
  }
}

}  // namespace

Bounds3f DenseVolume::bounds() const {
  const float h = voxel_size;
  return {origin - Vec3f{0.5f, 0.5f, 0.5f} * h,
          origin + Vec3f{float(nx) - 0.5f, float(ny) - 0.5f, float(nz) - 0.5f} * h};
}

void validate_volume_shading(const VolumeShading& s, const std::string& file) {
  check(std::isfinite(s.extinction) && s.extinction >= 0, file, "extinction",
        "must be a finite number ≥ 0 (1/m per unit density)");
  check(s.albedo >= 0 && s.albedo <= 1, file, "albedo", "must be in 0…1");
  check_colour(s.colour, 1, file, "colour");
  check(s.anisotropy >= -0.99f && s.anisotropy <= 0.99f, file, "anisotropy",
        "must be in −0.99…0.99 (Henyey–Greenstein g)");
  check(finite3(s.light_direction) && length(s.light_direction) > 0, file, "light direction",
        "must be three finite numbers, not all 0");
  check_colour(s.light_irradiance, std::numeric_limits<float>::max(), file, "light irradiance");
  check_colour(s.ambient, std::numeric_limits<float>::max(), file, "ambient");
  const VolumeEmission& e = s.emission;
  check(std::isfinite(e.intensity) && e.intensity >= 0, file, "emission intensity",
        "must be a finite number ≥ 0 (radiance per metre)");
  check(std::isfinite(e.temperature_scale) && std::isfinite(e.temperature_offset), file,
        "temperature scale and offset", "must be finite");
  check(std::isfinite(e.min_kelvin) && e.min_kelvin >= 0, file, "min kelvin",
        "must be a finite number ≥ 0");
  check(std::isfinite(e.reference_kelvin) && e.reference_kelvin > 0, file, "reference kelvin",
        "must be a finite number > 0");
  check(s.step >= 0.05f && s.step <= 4, file, "step", "must be 0.05…4 voxels");
}

void validate_volume(const DenseVolume& v, const std::string& file) {
  if (v.nx < 1 || v.ny < 1 || v.nz < 1)
    throw Error(file, "volume size",
                std::to_string(v.nx) + " × " + std::to_string(v.ny) + " × " + std::to_string(v.nz) +
                    " voxels: each must be ≥ 1");
  if (!(std::isfinite(v.voxel_size) && v.voxel_size > 0))
    throw Error(file, "voxel size", "must be a finite number > 0 (metres)");
  if (!finite3(v.origin)) throw Error(file, "origin", "must be three finite numbers");
  const size_t n = v.voxels();
  const auto field = [&](const std::vector<float>& values, const char* name, bool required) {
    if (values.empty() && !required) return;
    if (values.size() != n)
      throw Error(
          file, name,
          "has " + std::to_string(values.size()) + " values for " + std::to_string(n) + " voxels");
    for (size_t i = 0; i < n; ++i)
      if (!std::isfinite(values[i]))
        throw Error(file, std::string(name) + " voxel " + std::to_string(i), "is not finite");
  };
  field(v.density, "density", true);
  field(v.temperature, "temperature", false);
  field(v.flame, "flame", false);
}

Vec3f blackbody_colour(float kelvin) {
  // Krystek (1985): the Planckian locus in CIE 1960 (u, v), within 8·10⁻⁵ over 1000–15000 K.
  const double t = std::clamp(double(kelvin), 1000.0, 15000.0), t2 = t * t;
  const double u = (0.860117757 + 1.54118254e-4 * t + 1.28641212e-7 * t2) /
                   (1 + 8.42420235e-4 * t + 7.08145163e-7 * t2);
  const double v = (0.317398726 + 4.22806245e-5 * t + 4.20481691e-8 * t2) /
                   (1 - 2.89741816e-5 * t + 1.61456053e-7 * t2);
  const double d = 2 * u - 8 * v + 4, x = 3 * u / d, y = 2 * v / d;
  const double X = x / y, Y = 1, Z = (1 - x - y) / y;  // luminance 1
  const double r = 3.2406 * X - 1.5372 * Y - 0.4986 * Z, g = -0.9689 * X + 1.8758 * Y + 0.0415 * Z,
               b = 0.0557 * X - 0.2040 * Y + 1.0570 * Z;  // XYZ → linear sRGB (D65)
  const Vec3f rgb{float(std::max(r, 0.0)), float(std::max(g, 0.0)), float(std::max(b, 0.0))};
  return rgb / (0.2126f * rgb.x + 0.7152f * rgb.y + 0.0722f * rgb.z);  // Rec. 709 luminance 1
}

namespace {

/// The transmittance from each voxel's centre along `l` (unit) out of the volume: the header's
/// slice sweep.
std::vector<float> transmittance_towards(const DenseVolume& v, float extinction, const Vec3f& l) {
  const int n[3] = {v.nx, v.ny, v.nz};
  const size_t stride[3] = {1, size_t(v.nx), size_t(v.nx) * size_t(v.ny)};
  int a = 0;  // the axis most along the light: slices across it are swept away from the light
  for (int c = 1; c < 3; ++c)
    if (std::abs(l[c]) > std::abs(l[a])) a = c;
  const int b = (a + 1) % 3, c = (a + 2) % 3;
  const float la = std::abs(l[a]);
  const float ob = l[b] / la, oc = l[c] / la;  // one slice towards the light: this far across
  const float half_step = 0.5f * extinction * v.voxel_size / la;  // optical depth / density / 2
  const int towards = l[a] > 0 ? 1 : -1;  // the neighbour slice nearer the light: ia + towards
  const int first = towards > 0 ? n[a] - 1 : 0;
  std::vector<float> tau(v.voxels(), 0.0f);
  const float* rho = v.density.data();
  for (int ia = first; ia >= 0 && ia < n[a]; ia -= towards) {
    const bool edge = ia == first;
    const size_t slice = size_t(ia) * stride[a], prev = size_t(ia + towards) * stride[a];
    tbb::parallel_for(0, n[c], [&](int ic) {
      for (int ib = 0; ib < n[b]; ++ib) {
        const size_t at = slice + size_t(ib) * stride[b] + size_t(ic) * stride[c];
        const float here = std::max(rho[at], 0.0f);
        if (edge) {  // half a slice to the box's face, at this voxel's density
          tau[at] = half_step * here;
          continue;
        }
        // Bilinear in the slice nearer the light, nothing (no density, no optical depth) outside.
        const float pb = float(ib) + ob, pc = float(ic) + oc;
        const int b0 = int(std::floor(pb)), c0 = int(std::floor(pc));
        const float fb = pb - float(b0), fc = pc - float(c0);
        float t = 0, d = 0;
        for (int q = 0; q < 4; ++q) {
          const int jb = b0 + (q & 1), jc = c0 + (q >> 1);
          if (jb < 0 || jb >= n[b] || jc < 0 || jc >= n[c]) continue;
          const float w = ((q & 1) ? fb : 1 - fb) * ((q >> 1) ? fc : 1 - fc);
          const size_t from = prev + size_t(jb) * stride[b] + size_t(jc) * stride[c];
          t += w * tau[from];
          d += w * std::max(rho[from], 0.0f);
        }
        tau[at] = t + half_step * (here + d);
      }
    });
  }
  for (float& t : tau) t = std::exp(-t);
  return tau;
}

}  // namespace

std::vector<float> light_transmittance(const DenseVolume& v, const VolumeShading& s) {
  validate_volume(v, "volume");
  validate_volume_shading(s, "volume");
  return transmittance_towards(v, s.extinction, normalize(s.light_direction, Vec3f{0, 1, 0}));
}

Vec3f camera_ray(const Camera& camera, int width, int height, float px, float py) {
  const Vec3f f = normalize(camera.target - camera.eye, Vec3f{0, 0, -1});
  const Vec3f s = normalize(cross(f, camera.up), Vec3f{1, 0, 0});
  const Vec3f u = cross(s, f);
  const float g = 1.0f / std::tan(0.5f * camera.fov_y_degrees * kDeg);
  const float aspect = float(width) / float(height);
  const float x = (2 * px / float(width) - 1) * aspect / g, y = (1 - 2 * py / float(height)) / g;
  return f + s * x + u * y;
}

VolumeImage render_volume(const DenseVolume& v, const VolumeShading& s, const Camera& camera,
                          int width, int height, std::span<const float> depth) {
  if (width < 1 || height < 1 || width > 8192 || height > 8192)
    throw Error("volume", "image size",
                std::to_string(width) + "x" + std::to_string(height) + ": each must be 1…8192");
  if (!depth.empty() && depth.size() != size_t(width) * size_t(height))
    throw Error("volume", "depth",
                "has " + std::to_string(depth.size()) + " values for a " + std::to_string(width) +
                    "x" + std::to_string(height) + " image");
  const std::vector<float> light = light_transmittance(v, s);  // validates both
  const bool sky = s.ambient.x > 0 || s.ambient.y > 0 || s.ambient.z > 0;
  const std::vector<float> up =
      sky ? transmittance_towards(v, s.extinction, {0, 1, 0}) : std::vector<float>{};
  const Emitter emit(v, s.emission);
  const Blocks blocks(v, s, emit);
  const Bounds3f box = v.bounds();
  const float h = v.voxel_size, inv_h = 1.0f / h, g = s.anisotropy;
  const Vec3f l = normalize(s.light_direction, Vec3f{0, 1, 0});
  const Vec3f scatter = s.colour * s.albedo;
  VolumeImage out;
  out.width = width;
  out.height = height;
  out.rgba.assign(size_t(width) * size_t(height) * 4, 0.0f);

  tbb::parallel_for(tbb::blocked_range<int>(0, height), [&](const tbb::blocked_range<int>& rows) {
    for (int y = rows.begin(); y < rows.end(); ++y)
      for (int x = 0; x < width; ++x) {
        const size_t pixel = size_t(y) * size_t(width) + size_t(x);
        const Vec3f dir = camera_ray(camera, width, height, float(x) + 0.5f, float(y) + 0.5f);
        const float dir_length = length(dir);
        float t0 = camera.near_plane, t1 = std::numeric_limits<float>::infinity();
        if (!depth.empty() && !(depth[pixel] >= t1)) t1 = depth[pixel];
        clip_to_box(camera.eye, dir, box.min, box.max, t0, t1);
        if (!(t0 < t1)) continue;
        // Henyey–Greenstein with θ between the light's travel (−l) and the ray's towards the camera
        // (−dir): cos θ = l · dir / |dir|.
        const float cos_theta = dot(l, dir) / dir_length;
        const float phase = (1 - g * g) / (4 * std::numbers::pi_v<float> *
                                           std::pow(1 + g * g - 2 * g * cos_theta, 1.5f));
        const Vec3f direct = mul(s.light_irradiance, scatter) * phase,
                    ambient = mul(s.ambient, scatter);
        const float dt = s.step * h / dir_length;
        const long steps = long(std::ceil((t1 - t0) / dt));
        float transmittance = 1;
        Vec3f colour{0, 0, 0};
        for (long k = 0; k < steps;) {
          const float ta = t0 + float(k) * dt, tb = std::min(ta + dt, t1);
          const Vec3f p = camera.eye + dir * (0.5f * (ta + tb));
          const Vec3f u = (p - v.origin) * inv_h;
          const int ib = std::clamp(int(std::floor((u.x + 0.5f) / kBlock)), 0, blocks.bx - 1),
                    jb = std::clamp(int(std::floor((u.y + 0.5f) / kBlock)), 0, blocks.by - 1),
                    kb = std::clamp(int(std::floor((u.z + 0.5f) / kBlock)), 0, blocks.bz - 1);
          if (!blocks.active[size_t(ib) +
                             size_t(blocks.bx) * (size_t(jb) + size_t(blocks.by) * size_t(kb))]) {
            // Step over the empty block: on to the first step whose midpoint lies past it.
            const Vec3f lo = v.origin + Vec3f{float(ib), float(jb), float(kb)} * (kBlock * h) -
                             Vec3f{0.5f, 0.5f, 0.5f} * h;
            const Vec3f hi = lo + Vec3f{1, 1, 1} * (kBlock * h);
            float e0 = -std::numeric_limits<float>::infinity(),
                  e1 = std::numeric_limits<float>::infinity();
            clip_to_box(camera.eye, dir, lo, hi, e0, e1);
            const float next = std::ceil((e1 - t0) / dt - 0.5f);
            k = next > float(k + 1) ? long(next) : k + 1;
            continue;
          }
          ++k;
          const Trilinear at(v, u);
          const float sigma = s.extinction * std::max(at(v.density.data()), 0.0f);
          const Vec3f glow = emit.field ? emit(at(emit.field)) : Vec3f{0, 0, 0};
          const bool glowing = glow.x > 0 || glow.y > 0 || glow.z > 0;
          if (!(sigma > 0) && !glowing) continue;
          const float ds = (tb - ta) * dir_length;
          const float absorbed = one_minus_exp(sigma * ds);
          // Exact over the step for constant coefficients: ∫ T e^(−σs) (σ S + ε) ds.
          Vec3f source{0, 0, 0};
          if (sigma > 0)
            source =
                (direct * at(light.data()) + (sky ? ambient * at(up.data()) : ambient)) * absorbed;
          if (glowing) source += glow * (sigma > 0 ? absorbed / sigma : ds);
          colour += source * transmittance;
          transmittance *= 1 - absorbed;
          if (transmittance < kStopTransmittance) break;
        }
        float* o = &out.rgba[pixel * 4];
        o[0] = colour.x;
        o[1] = colour.y;
        o[2] = colour.z;
        o[3] = 1 - transmittance;
      }
  });
  return out;
}

void composite_volume(std::span<float> rgba, const VolumeImage& volume) {
  if (rgba.size() != volume.rgba.size())
    throw Error("volume", "composite",
                "the frame has " + std::to_string(rgba.size() / 4) + " pixels, the volume " +
                    std::to_string(volume.rgba.size() / 4));
  for (size_t i = 0; i < rgba.size(); i += 4) {
    const float* v = &volume.rgba[i];
    const float keep = 1 - v[3];
    for (int c = 0; c < 4; ++c) rgba[i + size_t(c)] = v[c] + keep * rgba[i + size_t(c)];
  }
}

void composite_volume(Image& frame, const VolumeImage& volume) {
  if (frame.width != volume.width || frame.height != volume.height ||
      volume.rgba.size() != frame.rgba.size())
    throw Error("volume", "composite",
                "the frame is " + std::to_string(frame.width) + "x" + std::to_string(frame.height) +
                    ", the volume " + std::to_string(volume.width) + "x" +
                    std::to_string(volume.height));
  std::array<float, 256> decode{};
  for (int i = 0; i < 256; ++i) decode[size_t(i)] = composite::srgb_to_linear(float(i) / 255.0f);
  const auto encode = [](float linear) {
    return uint8_t(std::lround(composite::linear_to_srgb(linear) * 255.0f));
  };
  tbb::parallel_for(tbb::blocked_range<size_t>(0, volume.rgba.size() / 4),
                    [&](const tbb::blocked_range<size_t>& r) {
                      for (size_t i = r.begin(); i < r.end(); ++i) {
                        const float* v = &volume.rgba[i * 4];
                        if (v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0) continue;
                        uint8_t* p = &frame.rgba[i * 4];
                        const float keep = 1 - v[3];
                        for (int c = 0; c < 3; ++c) p[c] = encode(v[c] + keep * decode[p[c]]);
                        p[3] = uint8_t(std::lround(
                            std::clamp(v[3] + keep * float(p[3]) / 255.0f, 0.0f, 1.0f) * 255.0f));
                      }
                    });
}

}  // namespace kinema
