// Particle sidecars (kinema/io/particle_sidecar.h).
#include "kinema/io/particle_sidecar.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>

#include "kinema/core/byte_io.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"

namespace kinema {

namespace {

static_assert(std::endian::native == std::endian::little, "the sidecar is little-endian");
constexpr char kMagic[8] = {'K', 'M', 'P', 'A', 'R', 'T', 'S', '\0'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 32;
constexpr size_t kPointBytes = 4 + 4 + 8 + 8;
constexpr const char* kCurveNames[5] = {"size curve", "red curve", "green curve", "blue curve",
                                        "opacity curve"};

std::array<const ParticleCurve*, 5> curves(const ParticleSidecar& s) {
  return {&s.size, &s.colour[0], &s.colour[1], &s.colour[2], &s.opacity};
}

// What is wrong with one point of a cache of `frames` frames ("": nothing).
std::string point_problem(const ParticleLife& l, int frames) {
  if (l.first_frame < 0 || l.last_frame < l.first_frame || l.last_frame >= frames)
    return "alive at frames " + std::to_string(l.first_frame) + "…" + std::to_string(l.last_frame) +
           ", outside the " + std::to_string(frames) + " frames or reversed";
  if (!std::isfinite(l.birth)) return "its birth time is not finite";
  if (!(l.lifetime > 0) || !std::isfinite(l.lifetime))
    return "its lifetime is not a positive number";
  return {};
}

// Every check of the reader, on the parsed data; `place` names where the problem is.
std::string problem(const ParticleSidecar& s, std::string& place) {
  if (!(s.frames_per_second > 0) || !std::isfinite(s.frames_per_second)) {
    place = "frames per second";
    return "must be a positive finite number";
  }
  if (s.frame_times.empty()) {
    place = "frame times";
    return "there are no frames";
  }
  for (size_t f = 0; f < s.frame_times.size(); ++f)
    if (!std::isfinite(s.frame_times[f]) || (f > 0 && s.frame_times[f] < s.frame_times[f - 1])) {
      place = "frame " + std::to_string(f);
      return "its time is not finite or goes back";
    }
  const auto all = curves(s);
  for (size_t c = 0; c < all.size(); ++c) {
    const ParticleCurve& k = *all[c];
    place = kCurveNames[c];
    if (k.u.size() != k.value.size())
      return std::to_string(k.u.size()) + " ages for " + std::to_string(k.value.size()) + " values";
    for (size_t i = 0; i < k.u.size(); ++i)
      if (!std::isfinite(k.u[i]) || !std::isfinite(k.value[i]) || (i > 0 && !(k.u[i] > k.u[i - 1])))
        return "key " + std::to_string(i) + " is not finite or its age does not ascend";
  }
  for (size_t p = 0; p < s.points.size(); ++p) {
    place = "point " + std::to_string(p);
    if (std::string reason = point_problem(s.points[p], s.frames()); !reason.empty()) return reason;
  }
  place.clear();
  return {};
}

}  // namespace

float ParticleSidecar::age_fraction(size_t point, int frame) const {
  const ParticleLife& l = points[point];
  const double u = (frame_times[size_t(frame)] - l.birth) / l.lifetime;
  return float(std::clamp(u, 0.0, 1.0));
}

std::string particle_sidecar_path(const std::string& cache_path) {
  return std::filesystem::path(cache_path).replace_extension(".kpa").string();
}

ParticleSidecar everlasting_particle_sidecar(std::size_t points, int frames, double step) {
  ParticleSidecar sidecar;
  sidecar.frames_per_second = 1 / step;
  for (int f = 0; f < frames; ++f) sidecar.frame_times.push_back(f * step);
  // A lifetime past the last frame: the age never reaches 1, so the curves' ends never apply.
  sidecar.points.assign(points, ParticleLife{0, frames - 1, 0, frames * step + 1});
  return sidecar;
}

void write_particle_sidecar(const std::string& path, const ParticleSidecar& s) {
  std::string place;
  if (const std::string reason = problem(s, place); !reason.empty())
    throw Error(path, "sidecar " + place, reason);
  detail::ByteWriter w;
  w.put(s.frames_per_second);
  w.put(uint64_t(s.frame_times.size()));
  w.put_array(s.frame_times);
  for (const ParticleCurve* c : curves(s)) {
    w.put(uint64_t(c->u.size()));
    w.put_array(c->u);
    w.put_array(c->value);
  }
  w.put(uint64_t(s.points.size()));
  for (const ParticleLife& l : s.points) {
    w.put(int32_t(l.first_frame));
    w.put(int32_t(l.last_frame));
    w.put(l.birth);
    w.put(l.lifetime);
  }
  write_file_atomically(path, detail::with_header(kMagic, kVersion, w.out));
}

ParticleSidecar read_particle_sidecar(const std::string& path) {
  const std::string bytes = read_file(path);
  const std::string_view payload =
      detail::checked_payload(bytes, kMagic, kVersion, path, "kinema particle sidecar");
  detail::ByteReader r(payload, kHeaderBytes, path);
  ParticleSidecar s;
  // Each value is checked where it is read, so that the message names its byte.
  auto check = [&](size_t at) {
    std::string place;
    if (const std::string reason = problem(s, place); !reason.empty())
      throw Error(path, "byte " + std::to_string(kHeaderBytes + at) + " (" + place + ")", reason);
  };
  const size_t fps_at = r.offset();
  s.frames_per_second = r.get<double>("frames per second");
  const size_t frames = r.get_count("frame count", 8, size_t(1) << 31);
  const size_t times_at = r.offset();
  r.get_array(s.frame_times, frames);
  if (!(s.frames_per_second > 0) || !std::isfinite(s.frames_per_second)) check(fps_at);
  check(times_at);
  for (ParticleCurve* c : {&s.size, &s.colour[0], &s.colour[1], &s.colour[2], &s.opacity}) {
    const size_t keys = r.get_count("curve key count", 8, 1 << 20);
    const size_t at = r.offset();
    r.get_array(c->u, keys);
    r.get_array(c->value, keys);
    check(at);
  }
  const size_t count = r.get_count("point count", kPointBytes, size_t(1) << 31);
  s.points.resize(count);
  for (ParticleLife& l : s.points) {
    const size_t at = r.offset();
    l.first_frame = r.get<int32_t>("first frame");
    l.last_frame = r.get<int32_t>("last frame");
    l.birth = r.get<double>("birth");
    l.lifetime = r.get<double>("lifetime");
    if (const std::string reason = point_problem(l, s.frames()); !reason.empty())
      throw Error(path,
                  "byte " + std::to_string(kHeaderBytes + at) + " (point " +
                      std::to_string(&l - s.points.data()) + ")",
                  reason);
  }
  if (r.left() != 0) r.fail(std::to_string(r.left()) + " bytes after the last point");
  return s;
}

}  // namespace kinema
