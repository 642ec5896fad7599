// .kmc files (kinema/compress/compressed_animation.h): the skeleton and its compressed clips.
#include "kinema/compress/compressed_animation.h"

#include <cstring>
#include <string>

#include "kinema/core/byte_io.h"
#include "kinema/core/error.h"
#include "kinema/math/soa_transform.h"
#include "kinema/skeleton/skeleton_bytes.h"

namespace kinema {

namespace {

constexpr char kMagic[8] = {'K', 'M', 'C', 'A', 'N', 'I', 'M', '\0'};
constexpr size_t kHeaderBytes = 32;

using detail::ByteReader;
using detail::ByteWriter;

}  // namespace

std::string serialize_animation(const CompressedAnimation& a) {
  ByteWriter w;
  w.put_string(a.source);
  w.put(a.source_unit_in_meters);
  w.put_string(a.source_unit_name);
  w.put(a.max_error);
  w.put(a.vertex_distance);
  w.put(uint64_t(a.skeleton.joint_count()));
  detail::put_skeleton_joints(w, a.skeleton);
  w.put(uint64_t(a.clips.size()));
  for (const CompressedClip& c : a.clips) {
    if (c.joint_count() != a.skeleton.joint_count())
      throw Error(a.source, "clip \"" + c.name() + "\"",
                  std::to_string(c.joint_count()) + " joints, the skeleton has " +
                      std::to_string(a.skeleton.joint_count()));
    const std::span<const std::byte> bytes = c.bytes();
    w.put(uint64_t(bytes.size()));
    w.out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  return detail::with_header(kMagic, animation_file_version, w.out);
}

CompressedAnimation deserialize_animation(std::string_view bytes, const std::string& file) {
  const std::string_view payload = detail::checked_payload(
      bytes, kMagic, animation_file_version, file, "kinema compressed animation (.kmc)");
  ByteReader r(payload, kHeaderBytes, file);
  CompressedAnimation a;
  a.source = r.get_string("source name");
  a.source_unit_in_meters = r.get<double>("source unit");
  if (!(a.source_unit_in_meters > 0) || !std::isfinite(a.source_unit_in_meters))
    r.fail("the source unit is not a positive number");
  a.source_unit_name = r.get_string("source unit name");
  a.max_error = r.get<double>("error bound");
  a.vertex_distance = r.get<double>("vertex distance");
  if (!(a.max_error >= 0) || !std::isfinite(a.max_error) || !(a.vertex_distance >= 0) ||
      !std::isfinite(a.vertex_distance))
    r.fail("the error bound or vertex distance is not a non-negative number");
  // A joint takes at least 4 + 4 + 80 bytes.
  const size_t joints = r.get_count("joint count", 88, 65535);
  a.skeleton = detail::get_skeleton_joints(r, joints, file);
  const size_t clips = r.get_count("clip count", 8, 1u << 20);
  for (size_t i = 0; i < clips; ++i) {
    const size_t n = r.get_count("clip bytes", 1, size_t(1) << 40);
    const size_t at = kHeaderBytes + r.offset();
    const std::string_view clip = r.get_bytes(n);
    try {
      a.clips.push_back(CompressedClip::deserialize(
          {reinterpret_cast<const std::byte*>(clip.data()), clip.size()}, file));
    } catch (const Error& e) {
      throw Error(file, "byte " + std::to_string(at),
                  "clip " + std::to_string(i) + " does not load: " + e.place() +
                      (e.place().empty() ? "" : " of the clip: ") + e.reason());
    }
    if (a.clips.back().joint_count() != int(joints))
      throw Error(file, "byte " + std::to_string(at),
                  "clip " + std::to_string(i) + " has " +
                      std::to_string(a.clips.back().joint_count()) + " joints, the skeleton has " +
                      std::to_string(joints));
  }
  if (r.left() != 0) r.fail(std::to_string(r.left()) + " bytes after the last clip");
  return a;
}

Clip decompress_clip(const CompressedClip& c, const Skeleton& skeleton) {
  const int n = skeleton.joint_count();
  if (c.joint_count() != n)
    throw Error(c.name(), "",
                "the compressed clip has " + std::to_string(c.joint_count()) +
                    " joints, the skeleton " + std::to_string(n));
  Clip clip;
  clip.name = c.name();
  clip.duration = c.duration();
  clip.sample_rate = c.sample_rate();
  clip.tracks.resize(size_t(n));
  std::vector<SoaTransform> soa(size_t(c.soa_count()));
  std::vector<Transformf> local(static_cast<size_t>(n));
  const int frames = c.frame_count();
  for (int f = 0; f < frames; ++f) {
    sample_frame(c, f, 0.0f, soa);
    to_aos(soa, local);
    // The last frame lands exactly on the duration.
    const double t = f + 1 == frames ? c.duration() : double(f) / c.sample_rate();
    for (int j = 0; j < n; ++j) {
      JointTrack& track = clip.tracks[size_t(j)];
      const Transform x(local[size_t(j)]);
      // Animated channels get every frame; constant and identity ones a single key.
      if (f == 0 || c.kind(j, 0) == TrackKind::Animated) {
        track.translation.times.push_back(t);
        track.translation.values.push_back(x.translation);
      }
      if (f == 0 || c.kind(j, 1) == TrackKind::Animated) {
        track.rotation.times.push_back(t);
        track.rotation.values.push_back(x.rotation);
      }
      if (f == 0 || c.kind(j, 2) == TrackKind::Animated) {
        track.scale.times.push_back(t);
        track.scale.values.push_back(x.scale);
      }
    }
  }
  return clip;
}

}  // namespace kinema
