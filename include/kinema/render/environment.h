// kinema/render/environment.h — image-based lighting on the CPU: equirectangular radiance maps
// (light probes) loaded from Radiance .hdr, OpenEXR or PNG, a procedural default sky, their
// diffuse irradiance as nine spherical-harmonic coefficients, and a chain of specular maps
// prefiltered for increasing roughness. The renderer uploads what these functions compute.
//
// Conventions. kinema's world is right-handed, metres, +Y up, characters face +Z, and the
// default camera (kinema/render/renderer.h) stands in front of them at +Z looking towards −Z.
// A map is the sky as seen from inside the sphere (not mirrored), laid out so that this camera
// sees the middle of the image behind the character:
//   - u ∈ [0, 1] runs across the image from its left edge (0) to its right edge (1); longitude
//     φ = 2π(u − ½). The centre column (u = ½) looks towards −Z, u = ¾ towards +X, u = ¼
//     towards −X, and the left and right edges (the seam) both look towards +Z.
//   - v ∈ [0, 1] runs down the image from its top edge (0); polar angle θ = πv measured from +Y.
//     Row 0 is straight up (+Y), the middle of the image the horizon, the last row straight
//     down (−Y).
//   - direction(u, v) = (sin θ sin φ, cos θ, −sin θ cos φ).
// Texel (x, y) of a width × height map covers u ∈ [x/width, (x+1)/width] and
// v ∈ [y/height, (y+1)/height]; its centre is at ((x + ½)/width, (y + ½)/height).
//
// Values are linear Rec.709 RGB radiance in the file's own scale, unbounded above: a white
// Lambertian surface under an environment of constant radiance L has outgoing radiance L, and
// default_sky() is scaled so that surfaces come out as bright as under the renderer's fixed
// lights.
// Offline API: loading throws kinema::Error; lookups and projections never throw.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/composite/image.h"
#include "kinema/math/vec3.h"

namespace kinema {

/// An equirectangular radiance map: width = 2 · height (± 1 texel) linear RGB texels, row by row
/// from the top (row 0 looks straight up); see the file comment for the direction convention.
struct Environment {
  int width = 0, height = 0;
  std::vector<Vec3f> texels;  ///< width · height radiance values, row-major from the top-left

  Environment() = default;
  /// width × height texels, all `fill`.
  Environment(int width, int height, Vec3f fill = {});

  Vec3f& at(int x, int y) { return texels[std::size_t(y) * std::size_t(width) + std::size_t(x)]; }
  const Vec3f& at(int x, int y) const {
    return texels[std::size_t(y) * std::size_t(width) + std::size_t(x)];
  }

  /// The radiance arriving from `direction` (towards the sky; any length but zero), bilinear
  /// between the four nearest texel centres, wrapping across the left/right seam and clamping
  /// at the top and bottom rows. Zero for an empty map or a zero or non-finite direction.
  Vec3f radiance(const Vec3f& direction) const;
};

/// The unit direction at image coordinates (u, v) (u across from the left edge, v down from the
/// top edge, both in [0, 1]): (sin θ sin φ, cos θ, −sin θ cos φ), φ = 2π(u − ½), θ = πv.
Vec3f environment_direction(float u, float v);

/// The image coordinates {u, v} of a direction (any length): the inverse of
/// environment_direction, with u ∈ [0, 1] (−π < φ ≤ π) and v ∈ [0, 1]. A zero or non-finite
/// direction gives {½, ½}.
std::array<float, 2> environment_uv(const Vec3f& direction);

/// The unit direction through the centre of texel (x, y).
Vec3f environment_texel_direction(const Environment& environment, int x, int y);

/// The solid angle of one texel of row y, steradians: (2π / width) · (cos θ₀ − cos θ₁) for the
/// row's polar angles θ₀ = πy/height and θ₁ = π(y+1)/height (the exact ∫ sin θ dθ dφ). All
/// texels together cover 4π.
float environment_texel_solid_angle(const Environment& environment, int y);

/// The mean radiance over the sphere, (1/4π) Σ L · Ω over all texels (solid-angle weighted):
/// what a filter that conserves energy keeps. Zero for an empty map.
Vec3f mean_radiance(const Environment& environment);

/// An area (box) resampling to width × height (each ≥ 1): every new texel is the solid-angle-
/// weighted mean of the old texels it overlaps, so mean_radiance is kept exactly. Meant for
/// reducing a map; enlarging one repeats texels. An empty map gives an empty map.
Environment resample_environment(const Environment& environment, int width, int height);

// ---- loading ---------------------------------------------------------------------------------

/// An environment from a premultiplied linear image (kinema/composite/image.h): the colour
/// channels as stored — the image seen over black; alpha is dropped. `name` is what errors call
/// it. Throws kinema::Error naming `name`: an image that is not 2:1 (width = 2 · height ± 1),
/// more than 16,384 pixels a side, or a pixel (named as the place) that is negative or not
/// finite.
Environment environment_from_image(const composite::Image& image, const std::string& name);

/// Decodes a Radiance RGBE picture (.hdr / .pic) held in memory; `name` is what errors call it.
/// Accepts the header `#?RADIANCE` or `#?RGBE`, FORMAT=32-bit_rle_rgbe (or no FORMAT line; other
/// header lines such as EXPOSURE are ignored, values are kept as stored), the resolution line
/// `-Y height +X width` (rows from the top, left to right), and scanlines that are new-style
/// run-length encoded, flat (four bytes a pixel), or flat with old-style (1, 1, 1, n) repeats.
/// A texel with exponent e > 0 and mantissas (r, g, b) is (r, g, b) · 2^(e − 136), as Radiance's
/// rgbe.c and stb_image decode it; e = 0 is black. Throws kinema::Error naming `name` and the
/// place (a header line, or "scanline y, byte b"): a wrong first line, an XYZE or unknown format,
/// a missing or unsupported resolution line, sizes outside 1 … 16,384 or not 2:1, a truncated or
/// malformed scanline.
Environment decode_hdr(std::string_view bytes, const std::string& name);

/// Reads a light probe, told apart by the file's first bytes: Radiance .hdr (decode_hdr),
/// OpenEXR (R, G, B as stored) or PNG (sRGB decoded to linear), the latter two through
/// composite::read_image's decoders and environment_from_image. A file that is none of these is
/// read as .hdr when its extension is hdr, pic or rgbe. Throws kinema::Error naming the path: a
/// missing or unreadable file, an unknown format, and everything decode_hdr, the EXR/PNG
/// decoders and environment_from_image refuse.
Environment load_environment(const std::string& path);

// ---- the default sky -------------------------------------------------------------------------

/// The direction towards the default sky's sun: normalize(0.35, 0.85, 0.45), the renderer's key
/// light (unit, world space).
Vec3f default_sun_direction();

/// A procedural 256 × 128 sky that lights a character as the renderer's fixed lighting does
/// (kShadeGlsl in src/render/shaders.cpp, where a white Lambertian surface's radiance is
/// 0.55 · mix(ground, sky, ½ n.y + ½) + 0.85 · sun colour · max(n · sun, 0)):
///   - above the horizon a gradient from zenith blue to a paler, brighter horizon, scaled per
///     channel so that a surface facing up receives exactly E/π = 0.55 · (0.55, 0.62, 0.75) from
///     the sky (vertical surfaces get up to 7 % more than under the fixed lighting);
///   - below the horizon uniform brown ground, radiance 0.55 · (0.22, 0.19, 0.16);
///   - unless `include_sun` is false, a sun disc of radius 2° (soft to 3°) around
///     default_sun_direction(), colour (1, 0.95, 0.88), bright enough that a surface facing it
///     receives exactly E/π = 0.85 · (1, 0.95, 0.88) from it (peak radiance ≈ 420). Leave it
///     out when the renderer keeps the sun as a directional light (sharp shadows, and no ringing
///     from a point-like source in the nine SH coefficients).
Environment default_sky(bool include_sun = true);

// ---- diffuse: irradiance as spherical harmonics ----------------------------------------------

/// The irradiance of an environment as nine spherical-harmonic coefficients (bands l = 0, 1, 2),
/// after Ramamoorthi & Hanrahan 2001, "An Efficient Representation for Irradiance Environment
/// Maps" (SIGGRAPH): the radiance is projected onto the real SH basis, each texel weighted by its
/// solid angle (sin θ Δθ Δφ, integrated exactly per row), and each band is multiplied by the
/// clamped cosine's coefficients Â₀ = π, Â₁ = 2π/3, Â₂ = π/4. The result is the coefficients of
/// E itself: E(n) = Σᵢ cᵢ Yᵢ(n) (see irradiance()). Order-2 truncation error: at most about 9 %
/// of a point light's peak irradiance, far less for smooth skies.
///
/// Basis: the real SH basis in Ramamoorthi & Hanrahan's order, index i = l(l + 1) + m, taken in
/// kinema's world axes as they are (x, y, z of a unit direction; +Y up):
///   Y₀ = 0.282095                    Y₄ = 1.092548 · x y
///   Y₁ = 0.488603 · y                Y₅ = 1.092548 · y z
///   Y₂ = 0.488603 · z                Y₆ = 0.315392 · (3z² − 1)
///   Y₃ = 0.488603 · x                Y₇ = 1.092548 · x z
///                                     Y₈ = 0.546274 · (x² − y²)
/// An empty map gives zeros.
std::array<Vec3f, 9> irradiance_sh9(const Environment& environment);

/// The irradiance E(n) = Σᵢ cᵢ Yᵢ(n) on a surface with (unit) normal n from coefficients made by
/// irradiance_sh9: incident radiance · cos integrated over the hemisphere, W/m² per unit of
/// radiance. A white Lambertian surface's outgoing radiance is E/π; a constant environment L
/// gives E = π L for every n. A normal of another length is normalised (zero: +Y).
Vec3f irradiance(const std::array<Vec3f, 9>& coefficients, const Vec3f& normal);

// ---- specular: prefiltered radiance for the split-sum approximation --------------------------

/// The roughness (perceptual, as in Karis 2013: GGX α = roughness²) that level `level` of a
/// `levels`-level chain from prefilter_specular is filtered for: level / (levels − 1), and 0
/// when levels is 1.
float specular_level_roughness(int level, int levels);

/// A chain of `levels` maps for the split-sum approximation (Karis 2013, "Real Shading in
/// Unreal Engine 4"), to be sampled with the reflected direction and a level chosen from the
/// surface's roughness:
///   - level 0 is the map itself, area-reduced (resample_environment) to at most 512 × 256;
///   - level k ≥ 1 is max(1, width₀ >> k) × max(1, height₀ >> k), an OpenGL mip chain's sizes
///     (so a chain of at most ⌊log₂ width₀⌋ + 1 levels uploads as one texture's mip levels and
///     textureLod(…, roughness · (levels − 1)) picks between them), and holds for each texel
///     direction R the GGX-weighted mean radiance with N = V = R (the split sum's assumption):
///       Σ L(d) w(R·d) Ω(d) / Σ w(R·d) Ω(d),  w(c) = max(c, 0) · D_GGX(h),  (R·h)² = (1 + c)/2,
///     α = specular_level_roughness(k, levels)², summed exactly over the texels d of a
///     box-filtered copy of level 0 (resample_environment) inside the cone where D is above
///     10⁻³ of its peak (the GGX tail beyond, about 3 % of the lobe, is dropped and the rest
///     renormalised). That copy has, ideally, texels an eighth of the lobe's half width (the
///     angle at which GGX falls to half its peak): it is finer than level k only where that
///     costs under 2²⁴ texel pairs, and coarser where level k's own would cost more, but then
///     with texels under half the half width.
/// Cost: for each level, output texels × source texels in the cone, dominated by level 1:
/// measured ≈ 30–40 ms for the default sky at 5 levels and ≈ 0.3 s for a 512 × 256 level 0, on
/// one core. Mean radiance (mean_radiance) stays within 0.3 % of level 0's at every level of
/// 16 × 8 texels or more.
/// Throws kinema::UsageError for an empty map or levels outside 1 … 16.
std::vector<Environment> prefilter_specular(const Environment& environment, int levels);

}  // namespace kinema
