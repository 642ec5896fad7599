// kinema/pipeline/render.h — `kinema render` as a library call: a file's clip drawn headless
// (kinema/render/clip_render.h, docs/render.md) into one PNG, a contact sheet, numbered PNGs or
// an MP4 through the ffmpeg program. Particle point caches (.pc2, with their sidecar when one
// lies beside them, kinema/io/particle_sidecar.h) are drawn as billboards; a cache with an OBJ of
// `l` lines beside it and no sidecar (`kinema sim`'s hair) as strands.
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
#include "kinema/pipeline/job.h"
#include "kinema/render/clip_render.h"

namespace kinema::pipeline {

struct RenderRequest {
  /// A file kinema reads, or a particle point cache (.pc2): its points drawn as billboards, its
  /// samples the frames (at the sidecar's frame rate, else 30 fps).
  std::string in;
  /// More files drawn with `in`, each playing its first clip (the cloth `kinema sim` simulated
  /// around a character, a prop), a particle cache, or a Wavefront OBJ (triangles drawn still,
  /// flat-shaded: the ground a `kinema gait` walk climbs); the frames follow `in`'s clip.
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
};

/// Checks the request before reading anything, renders every frame and writes the output: PNGs
/// atomically after every frame is encoded, an MP4 to a temporary file renamed at the end, so a
/// failure leaves no partial output. Progress stage: "render" (frames). Throws UsageError for a
/// request that makes no sense (an output kind and options that do not go together, frames or a
/// time outside the clip); kinema::Error for unreadable input, no OpenGL, a missing or failing
/// ffmpeg, a write failure.
RenderResult render_file(const RenderRequest& request, const Progress& progress = {});

}  // namespace kinema::pipeline
