// kinema/render/volume.h — smoke and fire drawn by ray marching a dense voxel volume on the CPU,
// composited over the renderer's frames in linear light.
//
// The optical model is emission–absorption with single scattering (Max, "Optical models for direct
// volume rendering", IEEE TVCG 1995, §§2–5): along a camera ray the radiance L obeys
//   dL/ds = −σ_t ρ L + σ_t ρ a c (E T_light p(θ) + L_sky T_up) + ε,
// with ρ the density, σ_t the extinction per unit density, a the single-scattering albedo, c the
// scattering colour, E the key light's irradiance, T_light the transmittance from the point towards
// the light, p the phase function (isotropic, or Henyey–Greenstein), L_sky a uniform sky's radiance
// (T_up: the transmittance straight up) and ε the emitted radiance per metre (fire). Transmittance
// follows Beer–Lambert, T = exp(−∫ σ_t ρ ds). As in Fedkiw, Stam and Jensen, "Visual Simulation of
// Smoke" (SIGGRAPH 2001, §5), the transmittance towards the light is computed once per voxel before
// the camera rays are marched: here by sweeping the grid slice by slice away from the light, each
// voxel's optical depth being its neighbour's one slice nearer the light (bilinear within that
// slice) plus the trapezoid of the density over the step between them. The camera ray is clipped to
// the volume's box and to the opaque surfaces' depth, sampled at the midpoints of equal steps
// (trilinear interpolation of the voxels), each step integrated exactly for its constant
// coefficients; empty 8³ blocks of voxels are stepped over and a ray stops once its transmittance
// is below 10⁻⁵. Each pixel is one ray through its centre, so the result does not depend on how the
// rows are shared out between threads (oneTBB).
//
// Conventions: metres, +Y up; colours linear RGB. Not modelled: multiple scattering, shadows of the
// volume on the meshes and the ground, and shadows of the meshes on the volume. The module does not
// depend on the fluid module: kinema::read_vdb's grids (kinema/fluid/volume_file.h) have this
// layout and move into a DenseVolume as they are.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kinema/math/vec3.h"
#include "kinema/render/clip_render.h"
#include "kinema/render/renderer.h"

namespace kinema {

/// A dense volume on a grid of nx × ny × nz cubic voxels. Voxel (i, j, k) has its centre at origin
/// + (i, j, k)·voxel_size and flat index i + nx·(j + ny·k) (kinema::VolumeGrid's layout). The
/// voxels fill the box bounds(); a value is constant out to the box from the outermost voxel
/// centres, and the volume is empty outside the box.
struct DenseVolume {
  int nx = 0, ny = 0, nz = 0;  ///< each ≥ 1
  Vec3f origin{0, 0, 0};       ///< the centre of voxel (0, 0, 0), metres
  float voxel_size = 1;        ///< side of a voxel, metres (finite, > 0)
  /// nx·ny·nz finite values (any unit: the extinction is per unit density); negatives count as 0.
  std::vector<float> density;
  /// Empty, or nx·ny·nz values: the temperature (VolumeEmission::Mode::Blackbody glows by it).
  std::vector<float> temperature;
  /// Empty, or nx·ny·nz values, 0…1 (Blender's "flame" grid: VolumeEmission::Mode::Flame).
  std::vector<float> flame;

  size_t voxels() const { return size_t(nx) * size_t(ny) * size_t(nz); }
  /// The box the voxels fill: origin − ½·voxel_size … origin + (n − ½)·voxel_size on each axis.
  Bounds3f bounds() const;
};

/// Light the volume gives off (fire).
struct VolumeEmission {
  enum class Mode {
    None,
    /// The temperature as a black body: kelvin = temperature_offset + temperature_scale ·
    /// temperature; colour blackbody_colour(kelvin); emitted radiance per metre intensity · colour
    /// · (K⁴ − min_kelvin⁴) / reference_kelvin⁴ above min_kelvin (Stefan–Boltzmann's fourth power,
    /// starting from 0), none below.
    Blackbody,
    /// The flame field through a fire ramp (black at 0, deep red, orange, yellow-white at 1):
    /// emitted radiance per metre intensity · ramp(flame).
    Flame,
  };
  Mode mode = Mode::None;
  float intensity = 10;  ///< emitted radiance per metre at the reference (≥ 0, finite)
  float temperature_scale = 1,
        temperature_offset = 0;   ///< Blackbody: the grid to kelvin
  float min_kelvin = 798;         ///< Blackbody: no glow below (the Draper point), K (≥ 0)
  float reference_kelvin = 1500;  ///< Blackbody: the temperature glowing at `intensity`, K (> 0)
};

/// How a volume is lit and shaded. Every number must be finite.
struct VolumeShading {
  /// σ_t: extinction per unit density, 1/m (≥ 0). A slab of density d and thickness L lets
  /// exp(−σ_t·d·L) of the light behind it through.
  float extinction = 5;
  float albedo = 0.9f;    ///< single-scattering albedo σ_s/σ_t, 0…1
  Vec3f colour{1, 1, 1};  ///< scattering colour, linear RGB, each 0…1
  float anisotropy = 0;   ///< Henyey–Greenstein g, −0.99…0.99 (0: isotropic; > 0: forward)
  /// The key light: the direction towards it (any length > 0) and its irradiance (linear RGB ≥ 0),
  /// as DrawOptions' (a white Lambertian surface facing it shows irradiance / π).
  Vec3f light_direction = DrawOptions{}.light_direction;
  Vec3f light_irradiance = DrawOptions{}.light_irradiance;
  /// Radiance of a uniform sky around the volume (linear RGB ≥ 0), scattered in after passing
  /// through the volume straight down from above (the transmittance towards +Y, swept as the
  /// light's: a one-direction stand-in for the sky's occlusion). The default is the renderer's
  /// default hemisphere sky averaged over all directions.
  Vec3f ambient{0.212f, 0.223f, 0.250f};
  VolumeEmission emission;
  /// The march step along a camera ray, as a fraction of a voxel (0.05…4).
  float step = 0.5f;
};

/// Throws kinema::Error(file, "volume " + option name, reason) for a shading option out of range or
/// not finite.
void validate_volume_shading(const VolumeShading& shading, const std::string& file = {});
/// Throws kinema::Error(file, place, reason) for a volume that cannot be drawn: a dimension < 1, a
/// voxel size not finite and > 0, a non-finite origin, a field of the wrong size, a value that is
/// not finite (the field and the voxel named).
void validate_volume(const DenseVolume& volume, const std::string& file = {});

/// The transmittance from each voxel's centre towards the key light (Beer–Lambert, the slice sweep
/// described above), one per voxel in the volume's layout, each 0…1.
std::vector<float> light_transmittance(const DenseVolume& volume, const VolumeShading& shading);

/// Premultiplied linear RGBA, rows top first: colour the radiance the volume sends to the camera,
/// alpha 1 − the transmittance through it.
struct VolumeImage {
  int width = 0, height = 0;
  std::vector<float> rgba;  ///< 4 per pixel
};

/// The direction of the ray through pixel (px, py) of a width × height image (x right, y down, the
/// top-left pixel's top-left corner at 0, 0; its centre at 0.5, 0.5), scaled so that one unit along
/// it is one metre along the camera's view axis: the point eye + t·ray has view depth t
/// (RenderPasses::depth's measure). Matches camera_view_projection.
Vec3f camera_ray(const Camera& camera, int width, int height, float px, float py);

/// Ray-marches `volume` seen by `camera` into a width × height image (each 1…8192). `depth`: empty,
/// or width·height view depths in metres (RenderPasses::depth, +∞ where nothing was drawn; rows top
/// first) of the opaque surfaces: each ray stops there. Rays start at the camera's near plane.
/// Throws kinema::Error (file "volume") for an invalid volume or shading, a size out of range or a
/// depth of the wrong size. Deterministic whatever the number of threads.
VolumeImage render_volume(const DenseVolume& volume, const VolumeShading& shading,
                          const Camera& camera, int width, int height,
                          std::span<const float> depth = {});

/// `volume` over `frame` (an RGBA8 frame as the renderer draws it: each colour byte the sRGB
/// encoding of premultiplied linear colour, alpha linear), in linear light: colour = volume + (1 −
/// α_volume)·frame, alpha = α_volume + (1 − α_volume)·α_frame, encoded back with rounding. Pixels
/// the volume leaves untouched (all four values 0) keep their bytes. Throws kinema::Error when the
/// sizes differ.
void composite_volume(Image& frame, const VolumeImage& volume);
/// The same over linear premultiplied RGBA floats (RenderPasses::beauty), 4 per pixel.
void composite_volume(std::span<float> rgba, const VolumeImage& volume);

/// The linear sRGB colour of a black body at `kelvin` (clamped to 1000…15000 K): its chromaticity
/// on the Planckian locus (Krystek's 1985 rational fit in CIE 1960 u, v, within 8·10⁻⁵ over that
/// range) converted to linear sRGB (D65), negative components clamped to 0, scaled to luminance 1
/// (0.2126 R + 0.7152 G + 0.0722 B).
Vec3f blackbody_colour(float kelvin);

}  // namespace kinema
