// Rest-pose analysis for retargeting (see retarget_plan.h and kinema/retarget/retarget.h).
#include "retarget_plan.h"

#include <algorithm>
#include <cmath>

#include "kinema/core/error.h"

namespace kinema::retarget_detail {
namespace {

constexpr const char* kSides[] = {"left", "right"};

/// (bone, its humanoid child) pairs: the child's rest position gives the bone's rest direction.
/// The spine (hips … upperChest) is not here: it is aligned as one chain.
std::vector<std::pair<std::string, std::string>> child_bones(bool fingers) {
  std::vector<std::pair<std::string, std::string>> pairs{{"neck", "head"}};
  for (const std::string side : kSides) {
    for (const char* limb : {"Shoulder:UpperArm", "UpperArm:LowerArm", "LowerArm:Hand",
                             "UpperLeg:LowerLeg", "LowerLeg:Foot", "Foot:Toes"}) {
      const std::string s = limb;
      const size_t colon = s.find(':');
      pairs.emplace_back(side + s.substr(0, colon), side + s.substr(colon + 1));
    }
    if (!fingers) continue;
    pairs.emplace_back(side + "Hand", side + "MiddleProximal");
    pairs.emplace_back(side + "ThumbMetacarpal", side + "ThumbProximal");
    pairs.emplace_back(side + "ThumbProximal", side + "ThumbDistal");
    for (const std::string finger : {"Index", "Middle", "Ring", "Little"}) {
      pairs.emplace_back(side + finger + "Proximal", side + finger + "Intermediate");
      pairs.emplace_back(side + finger + "Intermediate", side + finger + "Distal");
    }
  }
  return pairs;
}

bool is_finger(const std::string& bone) {
  for (const char* f : {"Thumb", "Index", "Middle", "Ring", "Little"})
    if (bone.find(f) != std::string::npos) return true;
  return false;
}

/// The bones every retarget needs on both sides.
constexpr const char* kRequired[] = {"hips",          "leftUpperLeg",  "leftLowerLeg", "leftFoot",
                                     "rightUpperLeg", "rightLowerLeg", "rightFoot"};

void require_bones(const RestSide& side, const std::string& file, const char* which) {
  for (const char* bone : kRequired)
    if (side.joint(bone) < 0)
      throw Error(file, std::string(which) + " humanoid",
                  std::string("does not map '") + bone +
                      "': retargeting needs the hips and both legs (upper leg, lower leg, foot)");
}

/// Thigh + shin length at rest, averaged over both legs.
double leg_length(const RestSide& side) {
  double sum = 0;
  for (const std::string s : kSides)
    sum += distance(side.rest_pos[size_t(side.joint(s + "UpperLeg"))],
                    side.rest_pos[size_t(side.joint(s + "LowerLeg"))]) +
           distance(side.rest_pos[size_t(side.joint(s + "LowerLeg"))],
                    side.rest_pos[size_t(side.joint(s + "Foot"))]);
  return sum / 2;
}

/// The rig's facing at rest: forward = (left hip − right hip) × up, horizontal (zero when the
/// hips coincide horizontally).
Vec3 rest_forward(const RestSide& side) {
  Vec3 left = side.rest_pos[size_t(side.joint("leftUpperLeg"))] -
              side.rest_pos[size_t(side.joint("rightUpperLeg"))];
  left.y = 0;
  return cross(left, Vec3::unit_y());
}

/// The path of joints from `from` up to its ancestor `to`, listed from `to` down to `from`;
/// empty when `to` is not an ancestor.
std::vector<int> path_from_ancestor(const Skeleton& sk, int to, int from) {
  std::vector<int> path;
  for (int j = from; j >= 0; j = sk.parent(j)) {
    path.push_back(j);
    if (j == to) {
      std::reverse(path.begin(), path.end());
      return path;
    }
  }
  return {};
}

SpineChain spine_chain(const RestSide& side, int hips, int end, const std::string& file,
                       const char* which) {
  SpineChain c;
  c.joints = path_from_ancestor(side.skeleton, hips, end);
  if (c.joints.size() < 2)
    throw Error(file, std::string(which) + " humanoid",
                "the neck (or head) is not below the hips in the joint hierarchy");
  c.s.assign(c.joints.size(), 0.0);
  for (size_t i = 1; i < c.joints.size(); ++i)
    c.s[i] = c.s[i - 1] +
             distance(side.rest_pos[size_t(c.joints[i - 1])], side.rest_pos[size_t(c.joints[i])]);
  const double total = c.s.back();
  for (size_t i = 0; i < c.s.size(); ++i)
    c.s[i] = total > 1e-12 ? c.s[i] / total : double(i) / double(c.s.size() - 1);
  c.s.back() = 1.0;
  return c;
}

/// The rest position of the source spine polyline at parameter s.
Vec3 chain_rest_point(const RestSide& side, const SpineChain& chain, double s) {
  const auto [i, f] = chain_segment(chain, s);
  const Vec3 a = side.rest_pos[size_t(chain.joints[i])];
  if (f == 0.0) return a;
  return lerp(a, side.rest_pos[size_t(chain.joints[i + 1])], f);
}

Error zero_length(const std::string& file, const char* which, const RestSide& side,
                  const std::string& bone, const std::string& child) {
  return Error(file,
               std::string(which) + " joint '" + side.skeleton.joint(side.joint(bone)).name + "'",
               "humanoid bone " + bone + " has zero length at rest: its child " + child +
                   " (joint '" + side.skeleton.joint(side.joint(child)).name + "') sits on it");
}

/// Bone drives: a mapped bone on both sides, aligned by its rest direction where both sides
/// map its humanoid child.
void plan_bones(const RestSide& src, const RestSide& dst, const RetargetOptions& options,
                const std::pair<std::string, std::string>& files, double tiny, RetargetPlan& plan) {
  const auto children = child_bones(options.fingers);
  for (const auto& [bone, j] : dst.humanoid.bones) {
    const int sj = src.joint(bone);
    if (sj < 0 || dst.joint(bone) < 0) continue;
    if (!options.fingers && is_finger(bone)) continue;
    JointPlan& p = plan.joints[size_t(j)];
    if (p.drive == Drive::Chain && bone != "neck" && bone != "head") continue;
    p.drive = Drive::Bone;
    p.source = sj;
    for (const auto& [b, child] : children) {
      if (b != bone || src.joint(child) < 0 || dst.joint(child) < 0) continue;
      const Vec3 d_dst = dst.rest_pos[size_t(dst.joint(child))] - dst.rest_pos[size_t(j)];
      const Vec3 d_src = src.rest_pos[size_t(src.joint(child))] - src.rest_pos[size_t(sj)];
      if (length(d_dst) < tiny) throw zero_length(files.second, "target", dst, bone, child);
      if (length(d_src) < tiny) throw zero_length(files.first, "source", src, bone, child);
      p.align = from_to(d_dst, rotate(plan.yaw, d_src));
      p.rest_direction = normalize(d_dst);
      p.source_child = src.joint(child);
    }
  }
}

/// Chain drives for the target joints strictly inside its spine (hips … neck).
void plan_spine(const RestSide& src, const RestSide& dst, RetargetPlan& plan) {
  const SpineChain& tc = plan.target_spine;
  for (size_t i = 1; i + 1 < tc.joints.size(); ++i) {
    JointPlan& p = plan.joints[size_t(tc.joints[i])];
    p.drive = Drive::Chain;
    p.chain_s = tc.s[i];
    p.chain_next_s = tc.s[i + 1];
    const Vec3 d_dst = dst.rest_pos[size_t(tc.joints[i + 1])] - dst.rest_pos[size_t(tc.joints[i])];
    const Vec3 d_src = chain_rest_point(src, plan.source_spine, p.chain_next_s) -
                       chain_rest_point(src, plan.source_spine, p.chain_s);
    if (length(d_dst) > 0 && length(d_src) > 0) {
      p.align = from_to(d_dst, rotate(plan.yaw, d_src));
      p.rest_direction = normalize(d_dst);
    }
  }
}

/// A driven bone without a rest direction of its own (hand without fingers, head, toes) keeps
/// its rest relation to its parent bone: it takes the nearest driven ancestor's alignment.
void inherit_alignments(const Skeleton& target, RetargetPlan& plan) {
  for (int j = 0; j < target.joint_count(); ++j) {
    JointPlan& p = plan.joints[size_t(j)];
    if (p.drive == Drive::Rest || p.rest_direction != Vec3{0, 0, 0} || j == plan.target_hips)
      continue;
    for (int a = target.parent(j); a >= 0; a = target.parent(a))
      if (plan.joints[size_t(a)].drive != Drive::Rest) {
        p.align = plan.joints[size_t(a)].align;
        break;
      }
  }
}

/// Joints neither side maps but both have by name (the hip joints and clavicles of the same
/// mocap rig, helper bones of one vendor's rigs) copy the source's local rotation: between the
/// same skeletons that makes retargeting the identity, whatever the map leaves out.
void copy_same_names(const RestSide& src, const RestSide& dst, const RetargetOptions& options,
                     RetargetPlan& plan) {
  std::vector<bool> mapped(size_t(src.skeleton.joint_count()), false);
  for (const auto& [bone, j] : src.humanoid.bones)
    if (src.joint(bone) >= 0) mapped[size_t(j)] = true;
  for (int j = 0; j < dst.skeleton.joint_count(); ++j) {
    JointPlan& p = plan.joints[size_t(j)];
    if (p.drive != Drive::Rest || dst.skeleton.parent(j) < 0) continue;
    const int sj = src.skeleton.find(dst.skeleton.joint(j).name);
    if (sj < 0 || mapped[size_t(sj)] || src.skeleton.parent(sj) < 0) continue;
    if (!options.fingers && is_finger(dst.skeleton.joint(j).name)) continue;
    p.drive = Drive::Copy;
    p.source = sj;
  }
}

}  // namespace

RestSide::RestSide(const Skeleton& s, const Humanoid& h)
    : skeleton(s), humanoid(h), rest(rest_model_matrices(s)) {
  rest_q.reserve(rest.size());
  rest_pos.reserve(rest.size());
  for (const Mat4& m : rest) {
    rest_q.push_back(rotation_of(m));
    rest_pos.push_back(m.translation_part());
  }
}

int RestSide::joint(const std::string& bone) const {
  const int j = humanoid.find(bone);
  return j >= 0 && j < skeleton.joint_count() ? j : -1;
}

std::pair<size_t, double> chain_segment(const SpineChain& chain, double s) {
  // The last joint at or below s: where joints coincide (a zero-length LowerBack on the hips),
  // the later one's rotation is the one that shapes the chain above them.
  const size_t i = size_t(std::upper_bound(chain.s.begin(), chain.s.end(), s) - chain.s.begin());
  if (i == 0) return {0, 0.0};
  const size_t k = i - 1;
  if (k + 1 >= chain.s.size()) return {k, 0.0};
  return {k, (s - chain.s[k]) / (chain.s[k + 1] - chain.s[k])};
}

RetargetPlan plan_retarget(const RestSide& src, const RestSide& dst, const RetargetOptions& options,
                           const std::string& file, const std::string& target_file) {
  require_bones(src, file, "source");
  require_bones(dst, target_file, "target");
  RetargetPlan plan;
  plan.source_hips = src.joint("hips");
  plan.target_hips = dst.joint("hips");

  const double src_leg = leg_length(src), dst_leg = leg_length(dst);
  if (!(src_leg > 0) || !(dst_leg > 0))
    throw Error(src_leg > 0 ? target_file : file,
                src_leg > 0 ? "target humanoid" : "source humanoid",
                "the legs have zero length at rest");
  plan.scale = dst_leg / src_leg;
  const Vec3 fs = rest_forward(src), ft = rest_forward(dst);
  // Hips that coincide horizontally give no facing: the rigs are taken to face the same way.
  const double angle = length(fs) > 1e-9 * src_leg && length(ft) > 1e-9 * dst_leg
                           ? std::atan2(cross(fs, ft).y, dot(fs, ft))
                           : 0.0;
  plan.yaw = Quat::from_axis_angle(Vec3::unit_y(), angle);

  plan.source_ankles[0] = src.joint("leftFoot");
  plan.source_ankles[1] = src.joint("rightFoot");
  const double src_ankle = std::min(src.rest_pos[size_t(plan.source_ankles[0])].y,
                                    src.rest_pos[size_t(plan.source_ankles[1])].y);
  plan.target_ankle_height = std::min(dst.rest_pos[size_t(dst.joint("leftFoot"))].y,
                                      dst.rest_pos[size_t(dst.joint("rightFoot"))].y);
  // Only a target standing on y = 0 says where the floor is; two rigs that both hang from the
  // origin (BVH onto BVH) keep their heights, scaled.
  auto on_floor = [](double ankle, double leg) {
    return ankle >= -0.02 * leg && ankle <= 0.5 * leg;
  };
  plan.source_rest_on_floor =
      on_floor(src_ankle, src_leg) || !on_floor(plan.target_ankle_height, dst_leg);
  plan.source_hips_rest = src.rest_pos[size_t(plan.source_hips)];
  const double src_stand = plan.source_hips_rest.y - src_ankle;
  const double dst_stand = dst.rest_pos[size_t(plan.target_hips)].y - plan.target_ankle_height;
  // The target's rest pose is how the avatar stands. A source's says so only when its legs
  // hang down (a BVH's zero pose may be anything: Character Creator exports lift the feet 2 m);
  // else retarget_clip measures the source's stance on the clip.
  plan.target_stand_height = dst_stand;
  plan.source_rest_stands = src_stand >= 0.8 * src_leg;
  plan.vertical_scale = plan.source_rest_stands && src_stand > 0 && dst_stand > 0
                            ? dst_stand / src_stand
                            : plan.scale;
  plan.target_hips_rest = dst.rest_pos[size_t(plan.target_hips)];
  const int hp = dst.skeleton.parent(plan.target_hips);
  if (hp >= 0 && !inverse(dst.rest[size_t(hp)], plan.target_hips_parent_inv))
    plan.target_hips_parent_inv = Mat4::identity();

  // The spine runs to the neck when both sides map one, else to the head.
  const std::string top = src.joint("neck") >= 0 && dst.joint("neck") >= 0 ? "neck" : "head";
  if (src.joint(top) < 0 || dst.joint(top) < 0)
    throw Error(src.joint(top) < 0 ? file : target_file,
                src.joint(top) < 0 ? "source humanoid" : "target humanoid",
                "does not map 'head': retargeting needs the spine from the hips to the head");
  plan.source_spine = spine_chain(src, plan.source_hips, src.joint(top), file, "source");
  plan.target_spine = spine_chain(dst, plan.target_hips, dst.joint(top), target_file, "target");

  plan.joints.assign(size_t(dst.skeleton.joint_count()), JointPlan{});
  plan_spine(src, dst, plan);
  plan_bones(src, dst, options, {file, target_file}, 1e-6 * std::min(src_leg, dst_leg), plan);
  inherit_alignments(dst.skeleton, plan);
  copy_same_names(src, dst, options, plan);
  for (const std::string s : kSides) {
    const int lower = dst.joint(s + "LowerArm"), hand = dst.joint(s + "Hand");
    if (lower >= 0 && hand >= 0 && plan.joints[size_t(lower)].drive == Drive::Bone &&
        plan.joints[size_t(hand)].drive == Drive::Bone)
      plan.forearms.emplace_back(lower, hand);
  }
  return plan;
}

}  // namespace kinema::retarget_detail
