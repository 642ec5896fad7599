// `kinema render` as a library call (kinema/pipeline/render.h).
#include "kinema/pipeline/render.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "kinema/character/merge.h"
#include "kinema/clip/clip.h"
#include "kinema/composite/exr_file.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/terrain.h"
#include "kinema/pipeline/format_number.h"
#include "kinema/render/environment.h"
#include "mp4_writer.h"
#include "render_plate.h"
#include "render_volume.h"

namespace kinema::pipeline {

namespace {

enum class OutKind { Png, Sequence, Mp4 };

/// A frame-number pattern: exactly one %d or %0Nd, and nothing else with a '%'.
bool valid_pattern(const std::string& s) {
  const size_t p = s.find('%');
  if (p == std::string::npos || s.find('%', p + 1) != std::string::npos) return false;
  size_t i = p + 1;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  return i < s.size() && s[i] == 'd' && i - p <= 3;
}

std::string frame_name(const std::string& pattern, int index) {
  std::vector<char> buf(pattern.size() + 32);
  std::snprintf(buf.data(), buf.size(), pattern.c_str(), index);
  return buf.data();
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// One frame's render passes as a multi-channel EXR: the beauty as R, G, B, A (what other
/// programs show), depth.Z, N.X/Y/Z, motion.U/V (pixels) and shadow.A; depth and motion in 32-bit
/// float, the rest half.
std::string encode_passes(const RenderPasses& p) {
  const size_t n = size_t(p.width) * size_t(p.height);
  std::vector<composite::ExrChannel> channels;
  const auto add = [&](const char* name, const std::vector<float>& from, size_t stride, size_t at,
                       composite::ExrPixelType type) {
    composite::ExrChannel c{name, std::vector<float>(n), type};
    for (size_t i = 0; i < n; ++i) c.values[i] = from[i * stride + at];
    channels.push_back(std::move(c));
  };
  const auto half = composite::ExrPixelType::half, full = composite::ExrPixelType::float32;
  add("R", p.beauty, 4, 0, half);
  add("G", p.beauty, 4, 1, half);
  add("B", p.beauty, 4, 2, half);
  add("A", p.beauty, 4, 3, half);
  add("depth.Z", p.depth, 1, 0, full);
  add("N.X", p.normal, 3, 0, half);
  add("N.Y", p.normal, 3, 1, half);
  add("N.Z", p.normal, 3, 2, half);
  add("motion.U", p.motion, 2, 0, full);
  add("motion.V", p.motion, 2, 1, full);
  add("shadow.A", p.shadow, 1, 0, half);
  return composite::encode_exr_channels(p.width, p.height, channels);
}

/// What the output path asks for; refuses combinations that make no sense, before any reading.
OutKind check_request(const RenderRequest& r) {
  const std::string ext = extension_of(r.out);
  OutKind kind = OutKind::Png;
  if (ext == "mp4")
    kind = OutKind::Mp4;
  else if (ext == "png" || ext == "exr")
    kind = r.out.find('%') != std::string::npos ? OutKind::Sequence : OutKind::Png;
  else
    throw UsageError("-o " + r.out +
                     ": write a .png (one frame or a contact sheet), an .exr (one frame's render "
                     "passes), a numbered sequence such as out_%04d.png or out_%04d.exr, or an "
                     ".mp4");
  if (ext == "exr" && r.contact_sheet > 0)
    throw UsageError("--contact-sheet writes one PNG; give -o sheet.png");
  if (kind == OutKind::Sequence && !valid_pattern(r.out))
    throw UsageError("-o " + r.out +
                     ": a sequence needs exactly one %d or %0Nd, e.g. out_%04d.png");
  if (kind == OutKind::Png && r.out.find('%') != std::string::npos)
    throw UsageError("-o " + r.out + ": '%' is only for numbered sequences");
  std::error_code ec;
  if (kind != OutKind::Sequence && std::filesystem::is_directory(r.out, ec))
    throw UsageError("-o " + r.out + " is a folder; give a file name");
  const bool frames_given = r.first_frame >= 0;
  if (r.contact_sheet > 0 && kind != OutKind::Png)
    throw UsageError("--contact-sheet writes one PNG; give -o sheet.png");
  if (r.contact_sheet > 0 && r.time)
    throw UsageError("--contact-sheet spreads frames over the clip (or --frames); drop --time");
  if (kind == OutKind::Png && r.contact_sheet == 0 && frames_given)
    throw UsageError(
        "a single PNG holds one frame: use --time T, --contact-sheet N, "
        "out_%04d.png or out.mp4 for --frames");
  if (kind != OutKind::Png && r.time)
    throw UsageError("--time renders one frame; use -o out.png, or --frames A:B for a sequence");
  if (r.time && !(std::isfinite(*r.time) && *r.time >= 0))
    throw UsageError("--time must be a finite number of seconds ≥ 0");
  const int width = r.options.target.width, height = r.options.target.height;
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  if (r.contact_sheet > 0) {
    const int columns = int(std::ceil(std::sqrt(double(r.contact_sheet))));
    const int rows = (r.contact_sheet + columns - 1) / columns;
    if (long(columns) * width > 16384 || long(rows) * height > 16384)
      throw UsageError("--contact-sheet " + std::to_string(r.contact_sheet) + " at --size " + size +
                       " would exceed 16384 pixels a side; use a smaller --size");
  }
  if (frames_given && (r.last_frame < r.first_frame))
    throw UsageError("--frames " + std::to_string(r.first_frame) + ":" +
                     std::to_string(r.last_frame) + ": expected A:B with 0 ≤ A ≤ B, e.g. 0:120");
  if (kind == OutKind::Mp4 && r.options.transparent_background)
    throw UsageError(
        "--transparent: an MP4 (yuv420p) has no alpha; write PNGs (out.png, "
        "out_%04d.png)");
  if (kind == OutKind::Mp4 && ((width % 2) != 0 || (height % 2) != 0))
    throw UsageError("--size " + size + ": MP4 (yuv420p) needs an even width and height");
  return kind;
}

/// The times to draw: one, spread for a contact sheet, or every frame from first to last.
std::vector<double> frame_times(const RenderRequest& r, OutKind kind, double duration, double rate,
                                int first, int last) {
  std::vector<double> times;
  if (kind == OutKind::Png && r.contact_sheet == 0) {
    times.push_back(r.time.value_or(0.0));
  } else if (r.contact_sheet > 0) {
    for (int i = 0; i < r.contact_sheet; ++i) {
      const double f =
          r.contact_sheet == 1 ? first : first + (last - first) * double(i) / (r.contact_sheet - 1);
      times.push_back(std::min(duration, f / rate));
    }
  } else {
    for (int f = first; f <= last; ++f) times.push_back(std::min(duration, f / rate));
  }
  return times;
}

bool is_particle_cache(const std::string& path) { return extension_of(path) == "pc2"; }

/// An OBJ drawn beside a clip (the stairs a creature climbs, a ramp): one joint at the origin and
/// the triangles as a rigid mesh with flat normals (each triangle its own three vertices, so edges
/// and treads read as such). The clip carries nothing for it: it stands still.
Asset obj_prop(const std::string& path) {
  const ObjTriangles obj = parse_obj_triangles(read_file(path), path);
  if (obj.indices.empty()) throw Error(path, "", "has no triangles to draw");
  Asset asset;
  Joint joint;
  joint.name = std::filesystem::path(path).stem().string();
  asset.skeleton = Skeleton::build({joint}, false, path);
  Mesh mesh;
  mesh.name = joint.name;
  mesh.node = 0;
  for (size_t t = 0; t + 2 < obj.indices.size(); t += 3) {
    const Vec3 a = obj.vertices[size_t(obj.indices[t])],
               b = obj.vertices[size_t(obj.indices[t + 1])],
               c = obj.vertices[size_t(obj.indices[t + 2])];
    Vec3 n = normalize(cross(b - a, c - a), Vec3{0, 1, 0});
    if (n.y < 0) n = -n;  // OBJ windings vary; a ground faces up
    for (const Vec3& p : {a, b, c}) {
      mesh.indices.push_back(std::uint32_t(mesh.positions.size()));
      mesh.positions.push_back(Vec3f(p));
      mesh.normals.push_back(Vec3f(n));
    }
  }
  asset.meshes.push_back(std::move(mesh));
  return asset;
}

/// What carries a particle cache or a volume sequence through the clip renderer: one joint at the
/// origin (not drawn) and a clip without tracks `samples` frames long at `rate`.
Asset carrier(const std::string& name, const std::string& path, double rate, int samples) {
  Asset asset;
  Joint joint;
  joint.name = name;
  asset.skeleton = Skeleton::build({joint}, false, path);
  Clip clip;
  clip.name = name;
  clip.sample_rate = rate;
  clip.duration = double(std::max(samples - 1, 0)) / clip.sample_rate;
  asset.clips.push_back(std::move(clip));
  asset.source.path = path;
  return asset;
}

/// Bounds of the caches' points at time t: the living ones, else all of them (where they will be
/// or were); nullopt without points.
std::optional<Bounds3f> particle_bounds(std::span<const ParticleCacheFile> caches, double t) {
  Bounds3f b;
  bool any = false;
  auto add = [&](const Vec3f& p) {
    if (!any) b.min = b.max = p;
    for (int c = 0; c < 3; ++c) {
      b.min[c] = std::min(b.min[c], p[c]);
      b.max[c] = std::max(b.max[c], p[c]);
    }
    any = true;
  };
  for (const bool living_only : {true, false}) {
    for (const ParticleCacheFile& f : caches) {
      if (f.cache.samples() == 0) continue;
      const int sample = f.sample_at(t);
      for (int i = 0; i < f.cache.points; ++i)
        if (!living_only || !f.sidecar || f.sidecar->alive(size_t(i), sample))
          add(f.cache.at(sample, i));
    }
    if (any) break;
  }
  return any ? std::optional<Bounds3f>(b) : std::nullopt;
}

}  // namespace

double ParticleCacheFile::samples_per_second() const {
  return (sidecar ? sidecar->frames_per_second : kDefaultSampleRate) / double(cache.sample_rate);
}

int ParticleCacheFile::sample_at(double t) const {
  const double s = std::round(t * samples_per_second());
  return int(std::clamp(s, 0.0, double(std::max(cache.samples() - 1, 0))));
}

ParticleCacheFile read_particle_cache(const std::string& path) {
  ParticleCacheFile f;
  f.path = path;
  f.cache = read_pc2(path);
  const std::string sidecar = particle_sidecar_path(path);
  std::error_code ec;
  if (!std::filesystem::exists(sidecar, ec)) {
    const std::string obj = std::filesystem::path(path).replace_extension(".obj").string();
    if (!std::filesystem::exists(obj, ec)) return f;
    ObjSegments lines = parse_obj_segments(read_file(obj), obj);
    if (lines.segments.empty()) return f;  // a cloth's rest mesh: the points are particles
    if (lines.vertices != size_t(f.cache.points))
      throw Error(obj, "vertex count",
                  "has " + std::to_string(lines.vertices) + " vertices, " + path + " holds " +
                      std::to_string(f.cache.points) +
                      " points (an OBJ from another run? the strands need one vertex per point)");
    f.segments = std::move(lines.segments);
    return f;
  }
  f.sidecar = read_particle_sidecar(sidecar);
  if (size_t(f.cache.points) != f.sidecar->points.size() ||
      f.cache.samples() != f.sidecar->frames())
    throw Error(sidecar, "point and frame counts",
                "describes " + std::to_string(f.sidecar->points.size()) + " points over " +
                    std::to_string(f.sidecar->frames()) + " frames, " + path + " holds " +
                    std::to_string(f.cache.points) + " points over " +
                    std::to_string(f.cache.samples()) +
                    " samples (a sidecar from another run? remove it to draw every point)");
  return f;
}

Strands cache_strands(std::span<const ParticleCacheFile> caches, double t, float width,
                      const Vec3f& colour, std::vector<Vec3f>& positions,
                      std::vector<std::array<uint32_t, 2>>& segments) {
  positions.clear();
  segments.clear();
  for (const ParticleCacheFile& f : caches) {
    if (!f.strands() || f.cache.samples() == 0) continue;
    const auto base = uint32_t(positions.size());
    const auto first =
        f.cache.positions.begin() + std::ptrdiff_t(size_t(f.sample_at(t)) * size_t(f.cache.points));
    positions.insert(positions.end(), first, first + f.cache.points);
    for (const auto& s : f.segments) segments.push_back({base + s[0], base + s[1]});
  }
  Strands strands;
  strands.positions = positions;
  strands.segments = segments;
  strands.width = width;
  strands.colour = colour;
  return strands;
}

void particle_billboards(const ParticleCacheFile& particles, int sample, float size,
                         std::vector<Billboard>& out) {
  const PointCache& cache = particles.cache;
  if (particles.strands() || sample < 0 || sample >= cache.samples()) return;
  const ParticleSidecar* s = particles.sidecar ? &*particles.sidecar : nullptr;
  for (int i = 0; i < cache.points; ++i) {
    Billboard b;
    b.position = cache.at(sample, i);
    b.size = size;
    b.colour = kDefaultParticleColour;
    if (s) {
      if (!s->alive(size_t(i), sample)) continue;
      const float u = s->age_fraction(size_t(i), sample);
      b.size = size * s->size.at(u, 1);
      b.colour = {s->colour[0].at(u, 1), s->colour[1].at(u, 1), s->colour[2].at(u, 1)};
      b.opacity = s->opacity.at(u, 1);
      for (int c = 0; c < 3; ++c) b.colour[c] = std::max(b.colour[c], 0.0f);
      b.opacity = std::min(b.opacity, 1.0f);
      if (!(b.size > 0) || !(b.opacity > 0)) continue;
    }
    out.push_back(b);
  }
}

RenderResult render_file(const RenderRequest& request, const Progress& progress) {
  const bool volumes_in = is_volume_file(request.in) ||
                          std::any_of(request.with.begin(), request.with.end(), is_volume_file);
  if (volumes_in && (!request.plate.empty() || !request.camera_solve.empty()))
    throw UsageError("volumes (.vdb) are not drawn over a plate: drop --plate and --camera-solve");
  if (!request.plate.empty() || !request.camera_solve.empty())
    return render_over_plate(request, progress);
  if (request.plate_start || (request.fps && !volumes_in) || request.place != Placement{})
    throw UsageError(
        "--place, --plate-start and --fps go with --plate and --camera-solve (--fps also with "
        "volumes, .vdb)");
  const OutKind kind = check_request(request);
  std::string ffmpeg;
  if (kind == OutKind::Mp4) {
    ffmpeg = require_ffmpeg(request.out);
  }

  if (!(request.particle_size > 0) || !std::isfinite(request.particle_size))
    throw UsageError("--particle-size must be a positive number of metres");
  if (!(request.strand_width > 0) || !std::isfinite(request.strand_width))
    throw UsageError("--strand-width must be a positive number of metres");
  for (int c = 0; c < 3; ++c)
    if (!(request.strand_colour[c] >= 0) || !std::isfinite(request.strand_colour[c]))
      throw UsageError("--strand-colour must be three finite numbers ≥ 0 (linear RGB)");

  if (!volumes_in && (request.volume.extinction != VolumeShading{}.extinction ||
                      request.volume.emission.intensity != VolumeEmission{}.intensity))
    throw UsageError("--extinction and --fire shade volumes: give a .vdb (FILE or --with)");
  VolumeShading shading = request.volume;  // lit by the frame's key light
  shading.light_direction = request.options.light_direction;
  shading.light_irradiance = request.options.light_irradiance;
  if (volumes_in)  // named by the first volume
    validate_volume_shading(
        shading, is_volume_file(request.in)
                     ? request.in
                     : *std::find_if(request.with.begin(), request.with.end(), is_volume_file));

  // ---- the asset, the particles, the volumes and the frames ----
  std::vector<ParticleCacheFile> particles;
  std::vector<VolumeSequence> volumes;
  const double volume_fps = request.fps.value_or(24);
  std::vector<int> props;  // meshes of OBJ props: drawn, not framed
  Asset asset;
  const bool carried = is_particle_cache(request.in) || is_volume_file(request.in);
  if (is_particle_cache(request.in)) {
    particles.push_back(read_particle_cache(request.in));
    const ParticleCacheFile& p = particles.front();
    asset = carrier("particles", p.path, p.samples_per_second(), p.cache.samples());
  } else if (is_volume_file(request.in)) {
    volumes.emplace_back(request.in, volume_fps);
    asset = carrier("volume", request.in, volume_fps, volumes.front().frames());
  } else {
    asset = load_asset(request.in, request.load);
  }
  int clip = !request.clip.empty() ? find_clip(asset, request.clip, request.in)
             : asset.clips.empty() ? -1
                                   : 0;
  const double in_duration = clip >= 0 ? asset.clips[size_t(clip)].duration : 0.0;
  const double in_rate = clip >= 0 ? asset.clips[size_t(clip)].sample_rate : 0.0;
  for (const std::string& other : request.with) {
    if (is_particle_cache(other)) {
      particles.push_back(read_particle_cache(other));
      continue;
    }
    if (is_volume_file(other)) {
      volumes.emplace_back(other, volume_fps);
      continue;
    }
    const bool prop = extension_of(other) == "obj";
    const Asset extra = prop ? obj_prop(other) : load_asset(other, request.load);
    if (prop)  // merge_assets appends the extra's meshes after the asset's
      for (size_t m = 0; m < extra.meshes.size(); ++m)
        props.push_back(int(asset.meshes.size() + m));
    asset = merge_assets(asset, clip, extra, extra.clips.empty() ? -1 : 0);
    clip = 0;
  }
  if (carried && clip >= 0) {  // the frames follow the cache or the volume
    asset.clips[size_t(clip)].duration = in_duration;
    asset.clips[size_t(clip)].sample_rate = in_rate;
  }
  const double duration = clip >= 0 ? asset.clips[size_t(clip)].duration : 0.0;
  double rate = clip >= 0 ? infer_frame_rate(asset.clips[size_t(clip)]) : 0.0;
  if (!(rate > 0)) rate = 30;
  const int last_frame = int(std::llround(duration * rate));
  int first = request.first_frame, last = request.last_frame;
  if (first >= 0 && last > last_frame)
    throw UsageError("--frames " + std::to_string(first) + ":" + std::to_string(last) +
                     ": the clip has frames 0:" + std::to_string(last_frame) + " (" +
                     format_number(duration) + " s at " + format_number(rate) + " fps)");
  if (first < 0) {
    first = 0;
    last = last_frame;
  }
  if (request.time && *request.time > duration + 1e-9)
    throw UsageError("--time " + format_number(*request.time) + ": the clip lasts " +
                     format_number(duration) + " s");
  const std::vector<double> times = frame_times(request, kind, duration, rate, first, last);

  ClipRenderer renderer(asset, clip, request.options, request.in);
  if (!request.environment.empty())
    renderer.renderer().set_environment(load_environment(request.environment));
  if (!props.empty()) renderer.set_unframed_meshes(props);
  if (!particles.empty() || !volumes.empty())
    renderer.set_extra_bounds([&particles, &volumes](double t) {
      std::optional<Bounds3f> b = particle_bounds(particles, t);
      if (const std::optional<Bounds3f> v = volume_bounds(volumes, t); v && b)
        b = Bounds3f{{std::min(b->min.x, v->min.x), std::min(b->min.y, v->min.y),
                      std::min(b->min.z, v->min.z)},
                     {std::max(b->max.x, v->max.x), std::max(b->max.y, v->max.y),
                      std::max(b->max.z, v->max.z)}};
      else if (v)
        b = v;
      return b;
    });
  if (request.first_frame >= 0 || request.contact_sheet > 0)
    renderer.set_time_range(times.front(), times.back());
  const int width = request.options.target.width, height = request.options.target.height;

  const double start = now();
  const bool exr = extension_of(request.out) == "exr";
  const bool ground = request.options.ground || request.options.shadow_catcher;
  std::vector<std::string> pngs;  // encoded frames (PNG, or EXR passes)
  std::vector<Image> tiles;
  std::optional<Mp4Writer> mp4;
  if (kind == OutKind::Mp4) mp4.emplace(ffmpeg, request.out, width, height, rate);
  std::vector<Billboard> billboards;
  std::vector<Vec3f> strand_positions;
  std::vector<std::array<uint32_t, 2>> strand_segments;
  for (size_t i = 0; i < times.size(); ++i) {
    billboards.clear();
    for (const ParticleCacheFile& f : particles)
      particle_billboards(f, f.sample_at(times[i]), request.particle_size, billboards);
    const Strands strands = cache_strands(particles, times[i], request.strand_width,
                                          request.strand_colour, strand_positions, strand_segments);
    if (exr) {  // the render passes, motion from one frame earlier
      RenderPasses passes = renderer.passes(times[i], times[i] - 1.0 / rate);
      draw_volumes(volumes, shading, renderer, times[i], ground, passes);
      pngs.push_back(encode_passes(passes));
      if (times.size() > 1) report(progress, "render", long(i + 1), long(times.size()));
      continue;
    }
    Image image = renderer.frame(times[i], billboards, strands);
    draw_volumes(volumes, shading, renderer, times[i], ground, image);
    if (request.options.transparent_background) image = straight_alpha(image);  // as PNGs want
    if (mp4)
      mp4->write(image);
    else if (request.contact_sheet > 0)
      tiles.push_back(std::move(image));
    else
      pngs.push_back(encode_png(image));
    if (times.size() > 1) report(progress, "render", long(i + 1), long(times.size()));
  }
  if (mp4) mp4->finish();
  if (request.contact_sheet > 0) pngs.push_back(encode_png(contact_sheet(tiles)));

  // ---- write ----
  if (kind == OutKind::Sequence)
    for (size_t i = 0; i < pngs.size(); ++i)
      write_file_atomically(
          frame_name(request.out, request.first_frame < 0 ? int(i) : first + int(i)), pngs[i]);
  else if (kind == OutKind::Png)
    write_file_atomically(request.out, pngs.front());
  RenderResult result;
  result.frames = times.size();
  result.width = width;
  result.height = height;
  result.seconds = now() - start;
  result.gl_renderer = renderer.renderer().gl_renderer();
  return result;
}

}  // namespace kinema::pipeline
