// kinema/pipeline/render.h — `kinema render` as a library call: a file's clip drawn headless
// (kinema/render/clip_render.h, docs/render.md) into one PNG, a contact sheet, numbered PNGs or
// an MP4 through the ffmpeg program. Particle point caches (.pc2, with their sidecar when one
// lies beside them, kinema/io/particle_sidecar.h) are drawn as billboards; a cache with an OBJ of
// `l` lines beside it and no sidecar (`kinema sim`'s hair) as strands. With a plate and a camera
// solve (`kinema solve`, kinema/matchmove/camera_solve.h), the character is drawn through each
// solved camera, bent through the solved lens and put over the live-action frames. Smoke and fire
// volumes (OpenVDB files or frame patterns, kinema/fluid/volume_file.h) are ray-marched
// (kinema/render/volume.h) and composited over the frames, against the meshes' depth.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kinema/io/asset_file.h"
#include "kinema/io/particle_sidecar.h"
#include "kinema/io/point_cache.h"
#include "kinema/math/mat4.h"
#include "kinema/math/vec3.h"
#include "kinema/pipeline/job.h"
#include "kinema/render/clip_render.h"
#include "kinema/render/volume.h"

namespace kinema::pipeline {

/// Where a character stands in a camera solve's world (`--place X,Y,Z[,YAW_DEG[,SCALE]]`): its
/// origin at `position`, turned `yaw_degrees` about the world's +Y, scaled uniformly by `scale`.
/// A solve is in its own units and axes unless it was aligned to known positions
/// (matchmove::align_to): `kinema solve` puts its initial pair's first camera at the origin with
/// OpenCV axes (+Y down that camera's image) and makes the pair's baseline one unit long.
struct Placement {
  Vec3 position{0, 0, 0};
  double yaw_degrees = 0;
  double scale = 1;
  /// The solve world's up direction (unit): where the character's +Y points. A solve that has
  /// not been aligned has +Y pointing down its first camera's image: up = (0, −1, 0) there.
  Vec3 up{0, 1, 0};
  /// T(position) · R(+Y → up) · R_y(yaw) · S(scale): the character's world (metres, +Y up, its
  /// ground on y = 0) in the solve's world. The character is drawn in its own world, through the
  /// solved cameras carried into it by the inverse, so its ground, shadow catcher and key light
  /// keep their meaning.
  Mat4 matrix() const;
  bool operator==(const Placement&) const = default;
};

/// "X,Y,Z", "X,Y,Z,YAW_DEG" or "X,Y,Z,YAW_DEG,SCALE" (finite numbers, SCALE > 0; spaces after the
/// commas allowed) → a Placement. Throws UsageError quoting the text otherwise.
Placement parse_placement(const std::string& text);
/// "X,Y,Z" → a unit vector (finite, not zero). Throws UsageError naming `option` and the text.
Vec3 parse_direction(const std::string& text, const std::string& option);
/// "X,Y,Z" → a point (three finite numbers, spaces after the commas allowed). Throws UsageError
/// naming `option` and the text otherwise.
Vec3 parse_point(const std::string& text, const std::string& option);
/// `kinema render --eye --target [--camera-up] [--fov]` → a fixed camera (texts as "X,Y,Z"; up
/// empty: +Y; no fov: the default). Throws UsageError naming the option at fault: a missing eye
/// or target, numbers that do not read, a fov outside (0, 180) degrees, an eye on the target,
/// an up along the view.
Camera fixed_camera(const std::string& eye, const std::string& target, const std::string& up,
                    std::optional<double> fov_y_degrees);

struct RenderRequest {
  /// A file kinema reads, or a particle point cache (.pc2): its points drawn as billboards, its
  /// samples the frames (at the sidecar's frame rate, else 30 fps); or a smoke or fire volume:
  /// an OpenVDB file (one frame) or a frame pattern such as smoke_%04d.vdb (the files present
  /// from the lowest frame number on disk upward while consecutive, at `fps`, default 24), drawn
  /// with the ground grid, the camera framing what the volumes hold.
  std::string in;
  /// More files drawn with `in`, each playing its first clip (the cloth `kinema sim` simulated
  /// around a character, a prop), a particle cache, or a Wavefront OBJ (triangles drawn still,
  /// flat-shaded: the ground a `kinema gait` walk climbs), or a volume (.vdb, or a pattern: smoke
  /// drawn around a character, volume frame round(t · fps) at time t); the frames follow `in`'s
  /// clip.
  std::vector<std::string> with;
  /// out.png (one frame, or a contact sheet), a pattern with one %d or %0Nd such as
  /// out_%04d.png (one PNG per frame), or out.mp4.
  std::string out;
  std::string clip;                       ///< by name or index; empty: the first
  std::optional<double> time;             ///< one frame at this time (seconds; default 0)
  int first_frame = -1, last_frame = -1;  ///< frames A:B at the clip's rate; -1: all
  int contact_sheet = 0;                  ///< tile this many frames into one PNG (0: none)
  ClipRenderOptions options;  ///< image (or tile) size, samples, camera, skinning, particle blend
  LoadOptions load;
  /// A particle is drawn this many metres wide times its size curve's value (> 0, finite).
  float particle_size = 0.03f;
  /// Hair strands (a cache drawn as strands): ribbon width in metres (> 0, finite; at least a
  /// pixel on screen) and linear RGB colour (≥ 0, finite).
  float strand_width = 0.002f;
  Vec3f strand_colour = Strands{}.colour;
  /// A light probe (.hdr, .exr or .png, equirectangular; kinema/render/environment.h) lighting
  /// the character instead of the default sky; empty: the default.
  std::string environment;
  /// How volumes are shaded (kinema/render/volume.h). Its light direction and irradiance are
  /// replaced by options' key light, its emission mode chosen per file: Flame with a "flame"
  /// grid, else Blackbody with a "temperature" grid, else none. Each volume is composited over
  /// the frame in turn (overlapping volumes do not mix); `environment` does not light them.
  VolumeShading volume;

  // ---- Over a live-action plate: both of `plate` and `camera_solve`, or neither ----
  /// Plate frames: a sequence pattern (plate.####.png, plate_%04d.exr) or one image (a
  /// locked-off shot: the same image behind every frame). Output frame i is plate frame
  /// plate_start + i seen through solve camera i, the clip at i / fps; the size is the solve's
  /// (options' camera mode, ground and target width and height are not used; its MSAA samples
  /// and skinning are). `out` is then out.png or out.exr (one frame: `time`, default 0), a
  /// pattern of .png or .exr frames (every camera's, or first_frame:last_frame, numbered as the
  /// plate's frames) or out.mp4. Refused with `with`, `contact_sheet` and a particle cache as
  /// `in`.
  std::string plate;
  std::string camera_solve;        ///< the JSON `kinema solve` writes
  std::optional<int> plate_start;  ///< the plate frame of solve camera 0 (default: the first)
  /// The character's origin and up in the solve's world. options.light_direction is then given
  /// in the solve's world too; with options.shadows the ground under the character is a shadow
  /// catcher, so its shadow falls on the plate.
  Placement place;
  /// The plate's frames a second (default: the clip's, else 30), or a volume sequence's (default
  /// 24); finite and > 0.
  std::optional<double> fps;
};

/// A particle point cache and its sidecar (when one lies beside it), ready to draw.
struct ParticleCacheFile {
  std::string path;
  PointCache cache;
  std::optional<ParticleSidecar> sidecar;
  /// Without a sidecar, the segments of the OBJ beside the cache (same stem, .obj) when it has
  /// `l` lines (hair from `kinema sim`): the cache is drawn as these strands, not as billboards.
  std::vector<std::array<uint32_t, 2>> segments;
  bool strands() const { return !segments.empty(); }
  /// Samples a second: the sidecar's frame rate (else 30) over the PC2's frames per sample. The
  /// first sample is at t = 0 (the PC2's start frame is not used).
  double samples_per_second() const;
  /// The sample shown at time t: the nearest, clamped to the cache.
  int sample_at(double t) const;
};

/// Colour of every particle of a cache without a sidecar (linear RGB: a spark's orange).
inline constexpr Vec3f kDefaultParticleColour{1.0f, 0.45f, 0.1f};

/// Reads a PC2 and, when it exists, its sidecar (particle_sidecar_path), else the segments of the
/// OBJ beside it. Throws kinema::Error naming the file, the place and the reason for a bad cache,
/// sidecar or OBJ, naming the sidecar when its point or frame count differs from the cache's and
/// the OBJ when its vertex count differs from the cache's point count.
ParticleCacheFile read_particle_cache(const std::string& path);

/// The billboards of `sample` (appended to `out`): the points alive then (all of them without a
/// sidecar), each `size` metres wide times its size curve's value, coloured by the colour and
/// opacity curves at its age (without a sidecar: kDefaultParticleColour, opaque). Points whose
/// size or opacity comes out ≤ 0 are left out.
void particle_billboards(const ParticleCacheFile& particles, int sample, float size,
                         std::vector<Billboard>& out);

/// The strands of every cache in `caches` that is drawn as strands, at its sample for time t,
/// gathered into `positions` and `segments` (one vertex per cache point; scratch reused between
/// frames). The returned Strands views them, `width` metres wide, in `colour`.
Strands cache_strands(std::span<const ParticleCacheFile> caches, double t, float width,
                      const Vec3f& colour, std::vector<Vec3f>& positions,
                      std::vector<std::array<uint32_t, 2>>& segments);

struct RenderResult {
  size_t frames = 0;
  int width = 0, height = 0;  ///< of one frame (or tile)
  double seconds = 0;         ///< rendering and encoding, wall clock
  std::string gl_renderer;    ///< what drew it ("llvmpipe (LLVM 15.0.6, 256 bits)", a GPU…)
  /// Over a plate: the pinhole render's size — the plate's, grown where the lens takes pixels
  /// from outside the pinhole frame (barrel distortion; at most twice the plate's) — and the
  /// frames whose camera the solve left unsolved (written as the plate alone).
  int cg_width = 0, cg_height = 0;
  size_t unsolved_frames = 0;
};

/// Checks the request before reading anything, renders every frame and writes the output: PNGs
/// atomically after every frame is encoded, an MP4 to a temporary file renamed at the end, so a
/// failure leaves no partial output. Progress stage: "render" (frames). Throws UsageError for a
/// request that makes no sense (an output kind and options that do not go together, frames or a
/// time outside the clip); kinema::Error for unreadable input, no OpenGL, a missing or failing
/// ffmpeg, a write failure.
///
/// Over a plate: UsageError for only one of plate and camera_solve, with `with`, a contact sheet
/// or a particle cache, an output that is one of the inputs, frames or a time past the solve's
/// cameras, a plate_start with a single image; kinema::Error naming the file for a malformed
/// solve (and its JSON place), a plate frame missing for a camera, a plate whose size is not the
/// solve's.
///
/// Volumes: kinema::Error naming the file for a missing .vdb, a pattern no file matches, a file
/// without a "density" grid (or any read_vdb error), a shading option or `fps` out of range or
/// not finite — all before anything is written.
RenderResult render_file(const RenderRequest& request, const Progress& progress = {});

}  // namespace kinema::pipeline
