// The motion-matching feature database: per-frame features of every clip variant (speed,
// mirror), the root frame they are expressed in, normalization and tags. See
// kinema/match/database.h for the layout and docs/match.md for the choices.
#include "kinema/match/database.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kinema/core/error.h"
#include "kinema/match/mirror.h"
#include "kinema/math/mat4.h"

namespace kinema::match {

namespace {

constexpr size_t kMaxTags = 64;

/// Model-space positions (and the hips' rotation) of the joints features read, one frame.
struct JointFrame {
  Vec3 hips, left_foot, right_foot, left_upper_leg, right_upper_leg;
  Vec3 hips_forward;  ///< the hips' rest-relative rotation applied to +Z
};

/// The character's frame on the ground: position (y = 0) and unit horizontal facing.
struct RootFrame {
  Vec3 position;
  Vec3 facing;
};

Vec3 mirror_x(const Vec3& v) { return {-v.x, v.y, v.z}; }

/// v in the root frame: x along the character's left (up × facing), y up, z along the facing.
Vec3 to_root(const RootFrame& root, const Vec3& v) {
  const Vec3 left{root.facing.z, 0, -root.facing.x};
  return {dot(v, left), v.y, dot(v, root.facing)};
}

Vec3 horizontal_unit(const Vec3& v, const Vec3& fallback) {
  const Vec3 h{v.x, 0, v.z};
  const double len = length(h);
  return len > 1e-9 ? h / len : fallback;
}

std::string clip_place(const DatabaseClip& c) {
  std::string s = "clip \"" + c.name + "\"";
  if (c.mirrored) s += " (mirrored)";
  if (c.speed != 1.0f) s += " at speed " + std::to_string(c.speed);
  return s;
}

void check_options(const DatabaseOptions& o) {
  const auto bad = [](const std::string& what) { throw Error("", "options", what); };
  if (!(o.fps > 0) || !std::isfinite(o.fps)) bad("fps must be > 0");
  if (o.trajectory_times.empty()) bad("at least one trajectory time is needed");
  double previous = 0;
  for (const double t : o.trajectory_times) {
    if (!(t > previous) || !std::isfinite(t))
      bad("trajectory times must be finite, > 0 and increasing");
    previous = t;
  }
  if (!std::isfinite(o.end_exclusion)) bad("end_exclusion must be finite");
  if (!(o.root_smoothing >= 0) || !std::isfinite(o.root_smoothing))
    bad("root_smoothing must be ≥ 0");
  if (o.speeds.empty()) bad("at least one speed is needed");
  for (const double s : o.speeds)
    if (!(s > 0) || !std::isfinite(s)) bad("speeds must be finite and > 0");
  for (const float w : {o.weight_foot_position, o.weight_foot_velocity, o.weight_hip_velocity,
                        o.weight_trajectory_position, o.weight_trajectory_direction})
    if (!(w >= 0) || !std::isfinite(w)) bad("feature weights must be finite and ≥ 0");
  for (const ExtraFeature& e : o.extra) {
    if (e.dims <= 0 || !e.compute)
      bad("extra feature \"" + e.name + "\" needs dims > 0 and a function");
    if (!(e.weight >= 0) || !std::isfinite(e.weight))
      bad("extra feature \"" + e.name + "\" needs a finite weight ≥ 0");
  }
}

void check_source(const ClipSource& s, size_t index) {
  const std::string place = "clip " + std::to_string(index) + " \"" + s.name + "\"";
  if (!s.skeleton || !s.clip) throw Error("", place, "no skeleton or clip");
  const int n = s.skeleton->joint_count();
  const FeatureJoints& j = s.joints;
  const auto need = [&](int joint, const char* what) {
    if (joint < 0 || joint >= n)
      throw Error(
          "", place,
          std::string("the ") + what + " joint is " +
              (joint < 0 ? "not known" : "outside the skeleton (" + std::to_string(joint) + ")"));
  };
  need(j.hips, "hips");
  need(j.left_foot, "left foot");
  need(j.right_foot, "right foot");
  if ((j.left_upper_leg < 0) != (j.right_upper_leg < 0))
    throw Error("", place, "give both upper legs or neither");
  if (j.left_upper_leg >= 0) {
    need(j.left_upper_leg, "left upper leg");
    need(j.right_upper_leg, "right upper leg");
  }
  for (const int knee : {j.left_lower_leg, j.right_lower_leg})
    if (knee >= n) need(knee, "lower leg");
  if (!(s.start_time >= 0) || !(s.start_time < s.clip->duration || s.clip->duration == 0))
    throw Error("", place,
                "start time " + std::to_string(s.start_time) + " s is outside the clip (" +
                    std::to_string(s.clip->duration) + " s)");
  for (const TagRange& t : s.tags) {
    if (t.tag.empty()) throw Error("", place, "a tag without a name");
    if (!(t.start <= t.end) || !std::isfinite(t.start) || !std::isfinite(t.end))
      throw Error("", place, "tag \"" + t.tag + "\" has a bad range");
  }
}

/// Gaussian smoothing of a per-frame sequence (σ in frames), renormalized at the ends.
template <class T>
std::vector<T> smooth(const std::vector<T>& values, double sigma_frames) {
  if (sigma_frames <= 0 || values.size() < 2) return values;
  const int radius = int(std::ceil(3 * sigma_frames));
  std::vector<double> kernel(size_t(2 * radius + 1));
  for (int i = -radius; i <= radius; ++i)
    kernel[size_t(i + radius)] = std::exp(-0.5 * (i * i) / (sigma_frames * sigma_frames));
  std::vector<T> out(values.size());
  const int n = int(values.size());
  for (int k = 0; k < n; ++k) {
    T sum{};
    double total = 0;
    for (int i = std::max(-radius, -k); i <= std::min(radius, n - 1 - k); ++i) {
      sum = sum + values[size_t(k + i)] * kernel[size_t(i + radius)];
      total += kernel[size_t(i + radius)];
    }
    out[size_t(k)] = sum / total;
  }
  return out;
}

/// Source-clip time of database frame k of a variant (clamped to the clip).
double source_time_of(const ClipSource& src, const DatabaseClip& variant, uint32_t k, double fps) {
  return std::min(variant.start_time + k * variant.speed / fps, src.clip->duration);
}

/// Joint positions of one clip variant at its database frames; with `poses`, also appends every
/// frame's local pose (mirrored through `mirror` for a mirrored variant) from the same samples.
std::vector<JointFrame> sample_joints(const ClipSource& src, const DatabaseClip& variant,
                                      double fps, const std::vector<int>& mirror,
                                      std::vector<Transformf>* poses) {
  const Skeleton& sk = *src.skeleton;
  const FeatureJoints& j = src.joints;
  std::vector<Transform> local(size_t(sk.joint_count())), mirrored(local.size());
  std::vector<Mat4> model(local.size()), rest_model(local.size());
  const std::vector<Transform> rest = sk.rest_pose();
  local_to_model(sk.parents(), rest, rest_model);
  const Quat hips_rest = rotation_of(rest_model[size_t(j.hips)]);
  std::vector<JointFrame> frames(variant.frame_count);
  for (uint32_t k = 0; k < variant.frame_count; ++k) {
    sample_pose(*src.clip, sk, source_time_of(src, variant, k, fps), WrapMode::Clamp, local);
    local_to_model(sk.parents(), local, model);
    if (poses) {
      if (variant.mirrored) mirror_pose(sk, mirror, local, mirrored);
      for (const Transform& x : variant.mirrored ? mirrored : local)
        poses->push_back(Transformf(x));
    }
    const auto at = [&](int joint) { return model[size_t(joint)].translation_part(); };
    JointFrame f;
    f.hips = at(j.hips);
    f.left_foot = at(j.left_foot);
    f.right_foot = at(j.right_foot);
    if (j.left_upper_leg >= 0) {
      f.left_upper_leg = at(j.left_upper_leg);
      f.right_upper_leg = at(j.right_upper_leg);
    }
    const Quat turn = rotation_of(model[size_t(j.hips)]) * conjugate(hips_rest);
    f.hips_forward = rotate(turn, Vec3{0, 0, 1});
    if (variant.mirrored) {  // reflect x → −x and swap the sides
      f.hips = mirror_x(f.hips);
      f.hips_forward = mirror_x(f.hips_forward);
      const Vec3 lf = f.left_foot, lu = f.left_upper_leg;
      f.left_foot = mirror_x(f.right_foot);
      f.right_foot = mirror_x(lf);
      f.left_upper_leg = mirror_x(f.right_upper_leg);
      f.right_upper_leg = mirror_x(lu);
    }
    frames[k] = f;
  }
  return frames;
}

std::vector<RootFrame> root_frames(const std::vector<JointFrame>& joints, bool use_legs,
                                   double sigma_frames) {
  std::vector<Vec3> position(joints.size()), facing(joints.size());
  Vec3 previous{0, 0, 1};
  for (size_t k = 0; k < joints.size(); ++k) {
    const JointFrame& f = joints[k];
    position[k] = {f.hips.x, 0, f.hips.z};
    Vec3 forward = f.hips_forward;
    if (use_legs) {
      const Vec3 across = f.left_upper_leg - f.right_upper_leg;
      forward = {-across.z, 0, across.x};  // across × up
    }
    facing[k] = previous = horizontal_unit(forward, previous);
  }
  position = smooth(position, sigma_frames);
  facing = smooth(facing, sigma_frames);
  std::vector<RootFrame> roots(joints.size());
  previous = {0, 0, 1};
  for (size_t k = 0; k < joints.size(); ++k)
    roots[k] = {position[k], previous = horizontal_unit(facing[k], previous)};
  return roots;
}

/// Root frame at fractional database frame `x` (clamped to the clip).
RootFrame root_at(const std::vector<RootFrame>& roots, double x) {
  const double last = double(roots.size() - 1);
  x = std::clamp(x, 0.0, last);
  const size_t i = size_t(std::floor(x));
  if (i + 1 >= roots.size()) return roots.back();
  const double a = x - double(i);
  const RootFrame &r0 = roots[i], &r1 = roots[i + 1];
  return {r0.position * (1 - a) + r1.position * a,
          horizontal_unit(r0.facing * (1 - a) + r1.facing * a, r0.facing)};
}

Vec3 velocity(const std::vector<JointFrame>& f, size_t k, Vec3 JointFrame::*joint, double fps) {
  const size_t a = k > 0 ? k - 1 : k, b = k + 1 < f.size() ? k + 1 : k;
  if (a == b) return {0, 0, 0};
  return (f[b].*joint - f[a].*joint) * (fps / double(b - a));
}

/// Whether two skeletons have the same joints (names and parents, in order).
bool same_skeleton(const Skeleton& a, const Skeleton& b) {
  if (a.joint_count() != b.joint_count()) return false;
  for (int j = 0; j < a.joint_count(); ++j)
    if (a.joint(j).name != b.joint(j).name || a.parent(j) != b.parent(j)) return false;
  return true;
}

/// The feature groups of the layout (kinema/match/database.h) with their options' weights, in
/// order, scale 1 until normalization. Returns the dimensions of a frame.
uint32_t feature_groups(const DatabaseOptions& options, std::vector<FeatureGroup>& groups) {
  const uint32_t T = uint32_t(options.trajectory_times.size());
  uint32_t offset = 0;
  const auto group = [&](const std::string& name, uint32_t dims, float weight) {
    groups.push_back({name, offset, dims, weight, 1});
    offset += dims;
  };
  group("left_foot_position", 3, options.weight_foot_position);
  group("right_foot_position", 3, options.weight_foot_position);
  group("left_foot_velocity", 3, options.weight_foot_velocity);
  group("right_foot_velocity", 3, options.weight_foot_velocity);
  group("hip_velocity", 3, options.weight_hip_velocity);
  group("trajectory_position", 2 * T, options.weight_trajectory_position);
  group("trajectory_direction", 2 * T, options.weight_trajectory_direction);
  for (const ExtraFeature& e : options.extra) group(e.name, uint32_t(e.dims), e.weight);
  return offset;
}

/// The clips' tag names in order of first appearance; throws past 64 (one bit each).
std::vector<std::string> tag_names_of(std::span<const ClipSource> clips) {
  std::vector<std::string> names;
  for (const ClipSource& s : clips)
    for (const TagRange& t : s.tags)
      if (std::find(names.begin(), names.end(), t.tag) == names.end()) names.push_back(t.tag);
  if (names.size() > kMaxTags)
    throw Error("", "tags", std::to_string(names.size()) + " tag names; at most 64");
  return names;
}

/// For stored poses: checks that every clip is on the first clip's skeleton with the same
/// feature joints, and keeps that skeleton and those joints in `db`. Returns the mirror map of
/// the skeleton's joints when the clips are also mirrored, else nothing.
std::vector<int> pose_skeleton(std::span<const ClipSource> clips, const DatabaseOptions& options,
                               Database& db) {
  for (size_t i = 1; i < clips.size(); ++i)
    if (!same_skeleton(*clips[i].skeleton, *clips[0].skeleton))
      throw Error("", "clip " + std::to_string(i) + " \"" + clips[i].name + "\"",
                  "its skeleton differs from clip \"" + clips[0].name +
                      "\"'s (joint names or parents): poses can be stored for one skeleton "
                      "only (retarget the clips onto one skeleton, or store features only)");
  db.skeleton = *clips[0].skeleton;
  db.joints = clips[0].joints;
  for (size_t i = 1; i < clips.size(); ++i) {
    const FeatureJoints& a = clips[i].joints;
    if (a.hips != db.joints.hips || a.left_foot != db.joints.left_foot ||
        a.right_foot != db.joints.right_foot)
      throw Error("", "clip " + std::to_string(i) + " \"" + clips[i].name + "\"",
                  "its feature joints differ from the first clip's on the same skeleton");
  }
  return options.mirror ? mirror_joints(db.skeleton) : std::vector<int>{};
}

/// Clip `source` played at `speed`, mirrored or not, as database frames from `first_frame` on:
/// one frame every 1/fps seconds of scaled time from the start time to the clip's end.
DatabaseClip clip_variant(const ClipSource& src, size_t source, bool mirrored, double speed,
                          uint32_t first_frame, double fps) {
  DatabaseClip c;
  c.name = src.name;
  c.source = uint32_t(source);
  c.mirrored = mirrored;
  c.speed = float(speed);
  c.start_time = src.start_time;
  c.first_frame = first_frame;
  const double span = (src.clip->duration - src.start_time) * fps / c.speed;
  c.frame_count = uint32_t(std::floor(span + 1e-6)) + 1;
  return c;
}

/// The built-in features of frame k (the layout's first 15 + 4·T numbers, raw units) into `f`:
/// feet positions and velocities and the hips' velocity in the frame's root frame, then the
/// future root positions and facings at the trajectory times.
void put_motion_features(const std::vector<JointFrame>& joints, const std::vector<RootFrame>& roots,
                         uint32_t k, const DatabaseOptions& options, float* f) {
  const uint32_t T = uint32_t(options.trajectory_times.size());
  const RootFrame& root = roots[k];
  const auto put3 = [&](size_t at, const Vec3& v) {
    f[at] = float(v.x), f[at + 1] = float(v.y), f[at + 2] = float(v.z);
  };
  put3(0, to_root(root, joints[k].left_foot - root.position));
  put3(3, to_root(root, joints[k].right_foot - root.position));
  put3(6, to_root(root, velocity(joints, k, &JointFrame::left_foot, options.fps)));
  put3(9, to_root(root, velocity(joints, k, &JointFrame::right_foot, options.fps)));
  put3(12, to_root(root, velocity(joints, k, &JointFrame::hips, options.fps)));
  for (uint32_t i = 0; i < T; ++i) {
    const RootFrame future = root_at(roots, k + options.trajectory_times[i] * options.fps);
    const Vec3 p = to_root(root, future.position - root.position);
    const Vec3 d = to_root(root, future.facing);
    f[15 + 2 * i] = float(p.x), f[16 + 2 * i] = float(p.z);
    f[15 + 2 * T + 2 * i] = float(d.x), f[16 + 2 * T + 2 * i] = float(d.z);
  }
}

/// The tags whose ranges hold source time t, as bits of `tag_names`.
uint64_t tags_at(const ClipSource& src, const std::vector<std::string>& tag_names, double t) {
  uint64_t tags = 0;
  for (const TagRange& tr : src.tags)
    if (t >= tr.start - 1e-9 && t <= tr.end + 1e-9)
      tags |= uint64_t(1) << (std::find(tag_names.begin(), tag_names.end(), tr.tag) -
                              tag_names.begin());
  return tags;
}

/// Adds clip variant `c` of `src` to the database: its frames' raw features (appended to `raw`,
/// D numbers a frame), tags and searchable flags, its root frames, its poses (with
/// options.store_poses) and the clip itself. Throws on a feature that is not finite.
void add_clip_variant(const ClipSource& src, const DatabaseClip& c, const DatabaseOptions& options,
                      const std::vector<int>& mirror, double exclusion, size_t D,
                      std::vector<float>& raw, Database& db) {
  const std::vector<JointFrame> joints =
      sample_joints(src, c, options.fps, mirror, options.store_poses ? &db.poses : nullptr);
  const std::vector<RootFrame> roots =
      root_frames(joints, src.joints.left_upper_leg >= 0, options.root_smoothing * options.fps);
  const size_t base = raw.size();
  raw.resize(base + size_t(c.frame_count) * D);
  for (uint32_t k = 0; k < c.frame_count; ++k) {
    float* f = raw.data() + base + size_t(k) * D;
    put_motion_features(joints, roots, k, options, f);
    size_t at = 15 + 4 * options.trajectory_times.size();
    const double t = source_time_of(src, c, k, options.fps);
    for (const ExtraFeature& e : options.extra) {
      e.compute(*src.skeleton, *src.clip, t, c.mirrored, std::span<float>(f + at, size_t(e.dims)));
      at += size_t(e.dims);
    }
    for (size_t d = 0; d < D; ++d)
      if (!std::isfinite(f[d]))
        throw Error("", clip_place(c) + ", frame " + std::to_string(k),
                    "feature " + std::to_string(d) + " is not a finite number");
    db.features.tags.push_back(tags_at(src, db.tag_names, t));
    const double remaining = (c.frame_count - 1 - k) / options.fps;
    db.features.searchable.push_back(remaining + 1e-9 >= exclusion ? 1 : 0);
  }
  for (const RootFrame& r : roots)
    db.roots.push_back(
        {float(r.position.x), float(r.position.z), float(r.facing.x), float(r.facing.z)});
  db.clips.push_back(c);
}

/// The database's normalized, weighted features from the raw ones (D numbers a frame): the
/// per-dimension mean, one scale per group (the mean of its dimensions' standard deviations).
void normalize_features(const std::vector<float>& raw, size_t D, Database& db) {
  const size_t n = raw.size() / D;
  std::vector<double> mean(D, 0), var(D, 0);
  for (size_t k = 0; k < n; ++k)
    for (size_t d = 0; d < D; ++d) mean[d] += raw[k * D + d];
  for (double& m : mean) m /= double(n);
  for (size_t k = 0; k < n; ++k)
    for (size_t d = 0; d < D; ++d) {
      const double e = raw[k * D + d] - mean[d];
      var[d] += e * e;
    }
  db.mean.assign(mean.begin(), mean.end());
  for (FeatureGroup& g : db.groups) {
    double sum = 0;
    for (uint32_t d = g.offset; d < g.offset + g.dims; ++d) sum += std::sqrt(var[d] / double(n));
    const double scale = sum / g.dims;
    g.scale = scale > 1e-12 ? float(scale) : 1.0f;
  }
  db.features.values.resize(raw.size());
  for (size_t k = 0; k < n; ++k)
    db.normalize(std::span<const float>(raw.data() + k * D, D),
                 std::span<float>(db.features.values.data() + k * D, D));
}

}  // namespace

std::span<const Transformf> Database::pose(uint32_t frame) const {
  if (poses.empty()) return {};
  const size_t n = size_t(skeleton.joint_count());
  return std::span<const Transformf>(poses).subspan(size_t(frame) * n, n);
}

const DatabaseClip& Database::clip_of(uint32_t frame) const {
  const auto it =
      std::upper_bound(clips.begin(), clips.end(), frame,
                       [](uint32_t f, const DatabaseClip& c) { return f < c.first_frame; });
  return *(it - 1);
}

double Database::source_time(uint32_t frame) const {
  const DatabaseClip& c = clip_of(frame);
  return c.start_time + double(frame - c.first_frame) * c.speed / fps;
}

size_t Database::feature_bytes() const {
  return features.values.size() * sizeof(float) + features.tags.size() * sizeof(uint64_t) +
         features.searchable.size();
}

bool Database::normalize(std::span<const float> raw, std::span<float> out) const {
  if (raw.size() != dims() || out.size() != dims() || mean.size() != dims()) return false;
  for (const FeatureGroup& g : groups)
    for (uint32_t d = g.offset; d < g.offset + g.dims; ++d)
      out[d] = (raw[d] - mean[d]) / g.scale * g.weight;
  return true;
}

uint64_t Database::tag_mask(std::string_view tag) const {
  for (size_t i = 0; i < tag_names.size(); ++i)
    if (tag_names[i] == tag) return uint64_t(1) << i;
  return 0;
}

Database build_database(std::span<const ClipSource> clips, const DatabaseOptions& options,
                        const std::function<void(size_t)>& progress) {
  check_options(options);
  if (clips.empty()) throw Error("", "", "no clips to build a motion-matching database from");
  for (size_t i = 0; i < clips.size(); ++i) check_source(clips[i], i);

  Database db;
  db.fps = options.fps;
  db.trajectory_times = options.trajectory_times;
  const size_t D = feature_groups(options, db.groups);
  db.features.dims = D;
  db.tag_names = tag_names_of(clips);
  const std::vector<int> mirror =
      options.store_poses ? pose_skeleton(clips, options, db) : std::vector<int>{};
  const double exclusion =
      options.end_exclusion < 0 ? options.trajectory_times.back() : options.end_exclusion;
  std::vector<float> raw;
  for (size_t si = 0; si < clips.size(); ++si) {
    for (const bool mirrored : {false, true}) {
      if (mirrored && !options.mirror) continue;
      for (const double speed : options.speeds) {
        const uint32_t first_frame =
            db.clips.empty() ? 0 : db.clips.back().first_frame + db.clips.back().frame_count;
        const DatabaseClip c =
            clip_variant(clips[si], si, mirrored, speed, first_frame, options.fps);
        add_clip_variant(clips[si], c, options, mirror, exclusion, D, raw, db);
      }
    }
    if (progress) progress(si + 1);
  }
  if (db.tag_names.empty()) db.features.tags.clear();
  normalize_features(raw, D, db);
  return db;
}

}  // namespace kinema::match
