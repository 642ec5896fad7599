// Pose matching (kinema/match/pose_match.h).
#include "kinema/match/pose_match.h"

#include <algorithm>
#include <cmath>

#include "kinema/core/error.h"

namespace kinema::match {

namespace {

Vec3 origin(const Mat4& m) { return m.transform_point({0, 0, 0}); }

}  // namespace

void PoseMatcher::raw_features(std::span<const Mat4> pose, std::vector<float>& out, double& yaw,
                               Vec3& ground) const {
  const Mat4& root = pose[size_t(options_.root)];
  const Vec3 root_at = origin(root);
  const Vec3 up = normalize(root.transform_vector(options_.rest_up));
  const Vec3 forward = normalize(root.transform_vector(options_.rest_forward));
  Vec3 heading = up + forward;
  heading.y = 0;
  if (!(length(heading) > 1e-6)) {  // the diagonal points straight up or down: use forward − up
    heading = forward - up;
    heading.y = 0;
  }
  yaw = std::atan2(heading.x, heading.z);
  ground = {root_at.x, 0, root_at.z};
  // Into the heading frame: turn by −yaw about +Y.
  const double c = std::cos(-yaw), s = std::sin(-yaw);
  auto turn = [&](const Vec3& v) { return Vec3{c * v.x + s * v.z, v.y, -s * v.x + c * v.z}; };
  out.clear();
  for (const int j : options_.joints) {
    const Vec3 p = turn(origin(pose[size_t(j)]) - root_at);
    out.insert(out.end(), {float(p.x), float(p.y), float(p.z)});
  }
  out.push_back(float(root_at.y));
  for (const Vec3& axis : {turn(up), turn(forward)})
    out.insert(out.end(), {float(axis.x), float(axis.y), float(axis.z)});
}

PoseMatcher::PoseMatcher(const Skeleton& skeleton, std::span<const Clip> candidates,
                         const PoseMatchOptions& options)
    : joint_count_(size_t(skeleton.joint_count())), options_(options) {
  const int n = skeleton.joint_count();
  if (candidates.empty()) throw Error({}, "pose match", "no candidate clips");
  if (options.root < 0 || options.root >= n)
    throw Error({}, "pose match",
                "the root joint " + std::to_string(options.root) + " of " + std::to_string(n) +
                    " does not exist");
  if (!(options.fps > 0)) throw Error({}, "pose match", "fps must be > 0");
  if (!(length(cross(options.rest_up, options.rest_forward)) > 1e-9))
    throw Error({}, "pose match", "the rest up and forward axes are zero or parallel");
  options_.rest_up = normalize(options.rest_up);
  options_.rest_forward = normalize(options.rest_forward);
  if (options_.joints.empty()) {
    std::vector<int> children(size_t(n), 0);
    for (int j = 0; j < n; ++j)
      if (skeleton.parents()[size_t(j)] >= 0) ++children[size_t(skeleton.parents()[size_t(j)])];
    for (int j = 0; j < n; ++j)
      if (j != options.root && (children[size_t(j)] == 0 || children[size_t(j)] >= 2))
        options_.joints.push_back(j);
  }
  for (const int j : options_.joints)
    if (j < 0 || j >= n)
      throw Error({}, "pose match",
                  "joint " + std::to_string(j) + " of " + std::to_string(n) + " does not exist");
  const size_t groups[3] = {3 * options_.joints.size(), 1, 6};
  const size_t dims = groups[0] + groups[1] + groups[2];
  FeatureMatrix features;
  features.dims = dims;
  std::vector<Transform> local(joint_count_);
  std::vector<Mat4> model(joint_count_);
  std::vector<float> row;
  for (size_t c = 0; c < candidates.size(); ++c) {
    const Clip& clip = candidates[c];
    const int frames = int(std::floor(clip.duration * options.fps + 1e-9)) + 1;
    for (int f = 0; f < frames; ++f) {
      const double t = std::min(f / options.fps, clip.duration);
      if (!sample_pose(clip, skeleton, t, WrapMode::Clamp, local))
        throw Error({}, clip.name, "the clip does not fit the skeleton");
      local_to_model(skeleton.parents(), std::span<const Transform>(local), std::span<Mat4>(model));
      Where w{int(c), t, 0, {}};
      raw_features(model, row, w.yaw, w.position);
      features.values.insert(features.values.end(), row.begin(), row.end());
      where_.push_back(w);
    }
  }
  // Normalize each group by the mean standard deviation of its dimensions, then weight it.
  const size_t frames = where_.size();
  mean_.assign(dims, 0);
  scale_.assign(dims, 1);
  for (size_t f = 0; f < frames; ++f)
    for (size_t d = 0; d < dims; ++d) mean_[d] += features.values[f * dims + d] / float(frames);
  const float weights[3] = {options.weight_joints, options.weight_height,
                            options.weight_orientation};
  size_t first = 0;
  for (int g = 0; g < 3; ++g) {
    double spread = 0;
    for (size_t d = first; d < first + groups[g]; ++d) {
      double variance = 0;
      for (size_t f = 0; f < frames; ++f) {
        const double e = features.values[f * dims + d] - mean_[d];
        variance += e * e / double(frames);
      }
      spread += std::sqrt(variance) / double(groups[g]);
    }
    const float scale = weights[g] / float(spread > 1e-6 ? spread : 1.0);
    for (size_t d = first; d < first + groups[g]; ++d) scale_[d] = scale;
    first += groups[g];
  }
  for (size_t f = 0; f < frames; ++f)
    for (size_t d = 0; d < dims; ++d)
      features.values[f * dims + d] = (features.values[f * dims + d] - mean_[d]) * scale_[d];
  search_ = BruteForceSearch(features);
}

PoseMatch PoseMatcher::find(std::span<const Mat4> model_pose) const {
  if (model_pose.size() != joint_count_)
    throw Error({}, "pose match",
                "the pose has " + std::to_string(model_pose.size()) + " matrices for " +
                    std::to_string(joint_count_) + " joints");
  std::vector<float> query;
  double yaw = 0;
  Vec3 ground;
  raw_features(model_pose, query, yaw, ground);
  for (size_t d = 0; d < query.size(); ++d) query[d] = (query[d] - mean_[d]) * scale_[d];
  const SearchResult r = search_.search(query);
  PoseMatch m;
  if (!r.found()) return m;  // a non-finite pose
  const Where& w = where_[r.frame];
  m.clip = w.clip;
  m.time = w.time;
  m.cost = r.cost;
  m.yaw = yaw - w.yaw;
  // The candidate's ground point, turned by m.yaw about the origin, lands on the query's.
  const double c = std::cos(m.yaw), s = std::sin(m.yaw);
  const Vec3 turned{c * w.position.x + s * w.position.z, 0, -s * w.position.x + c * w.position.z};
  m.offset = ground - turned;
  return m;
}

}  // namespace kinema::match
