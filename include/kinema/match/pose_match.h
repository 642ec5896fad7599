// kinema/match/pose_match.h — which frame of a set of clips looks most like a given pose, whatever
// way the character faces and wherever it stands: how a character lying after a ragdoll fall
// picks the get-up clip (and the frame in it) to continue from.
//
// Each candidate frame, and the query, becomes a feature vector in the root's *heading frame*:
// origin under the root joint on the ground (y = 0), turned about +Y so that the heading lies on
// +Z. The heading is the horizontal part of the root's body diagonal, root rotation · (rest up +
// rest forward): defined for a standing, a sitting and a lying body alike (a standing body's up
// has no horizontal part, a lying one's forward has none). Features, each group normalized by its
// spread over the candidates and weighted (kinema/match/database.h does the same):
//   the compared joints' positions relative to the root (3 each, m)   weight `weight_joints`
//   the root's height above the ground (1, m)                          weight `weight_height`
//   the root's rest up and rest forward axes (3 + 3, unit)             weight `weight_orientation`
// The nearest frame is found by kinema's exact motion-matching search (kinema/match/search.h).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/match/search.h"
#include "kinema/math/mat4.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema::match {

struct PoseMatchOptions {
  int root = 0;  ///< the root joint (the hips)
  std::vector<int>
      joints;  ///< joints compared; empty: every leaf joint and every joint with ≥ 2 children
  Vec3 rest_forward{0, 0, 1};  ///< the character's forward at rest (+Z in kinema)
  Vec3 rest_up{0, 1, 0};       ///< its up at rest
  double fps = 30;             ///< candidate frames a second of clip time
  float weight_joints = 1, weight_height = 1, weight_orientation = 1;
};

/// The best frame: clip index into the candidates, its time (s) and cost (normalized squared
/// distance), and the 2-D move (a turn about +Y by `yaw` radians, then `offset` on the ground)
/// that takes the candidate's root frame onto the query's: apply it to the clip's root to
/// continue from the query's place and facing.
struct PoseMatch {
  int clip = -1;
  double time = 0;
  float cost = INFINITY;
  double yaw = 0;
  Vec3 offset{0, 0, 0};
};

class PoseMatcher {
 public:
  /// Samples every candidate at `options.fps` (each clip's last frame included). Throws
  /// kinema::Error when there are no candidates, a candidate has no frames, a joint index is out
  /// of range, the rest axes are zero or parallel, or fps ≤ 0.
  PoseMatcher(const Skeleton& skeleton, std::span<const Clip> candidates,
              const PoseMatchOptions& options = {});

  /// The candidate frame nearest to `model_pose` (one model-space matrix per joint).
  /// Throws kinema::Error when the pose has the wrong size.
  PoseMatch find(std::span<const Mat4> model_pose) const;

  size_t frames() const { return where_.size(); }
  const std::vector<int>& joints() const { return options_.joints; }

 private:
  struct Where {
    int clip;
    double time;
    double yaw;     // the frame's heading (rad about +Y from +Z)
    Vec3 position;  // its root's ground point
  };
  void raw_features(std::span<const Mat4> pose, std::vector<float>& out, double& yaw,
                    Vec3& ground) const;

  size_t joint_count_ = 0;
  PoseMatchOptions options_;
  std::vector<Where> where_;
  std::vector<float> mean_, scale_;  // per dimension: subtract, then multiply
  BruteForceSearch search_;
};

}  // namespace kinema::match
