// The crowd's characters: stride-matched gait phases, headings, LOD-tiered skeleton updates
// (crowd_animation.h).
#include "kinema/crowd/crowd_animation.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>

#include "kinema/blend/blend_space.h"
#include "kinema/blend/pose_ops.h"
#include "kinema/clip/runtime_clip.h"
#include "kinema/core/error.h"
#include "kinema/ik/two_bone.h"

namespace kinema {
namespace {

constexpr std::size_t kBlock = 64;  // agents a task
constexpr float kStanding = 0.05f;  // m/s: slower than this, the gait and heading hold

// Where the root joint is, in model space, at time t of the clip.
Vec3 root_position(const Clip& clip, const Skeleton& skeleton, int root, double t) {
  return sample_model_pose(clip, skeleton, t, WrapMode::Clamp)[std::size_t(root)].transform_point(
      {0, 0, 0});
}

// The clip's speed (m/s): the root's horizontal travel over the cycle.
float measured_speed(const Clip& clip, const Skeleton& skeleton, int root) {
  const Vec3 travel =
      root_position(clip, skeleton, root, clip.duration) - root_position(clip, skeleton, root, 0);
  return float(std::hypot(travel.x, travel.z) / clip.duration);
}

// The clip played in place: the root joint's mean horizontal travel (in model space, through its
// parent's rest transform) taken out of its translation keys, in proportion to time. Only the
// mean: the hips keep their sway and their speed's rise and fall within the cycle, so a planted
// foot moves back at exactly the mean speed, which the agent's own motion then cancels.
Clip in_place(const Clip& clip, const Skeleton& skeleton, int root) {
  Clip result = clip;
  if (std::size_t(root) >= result.tracks.size()) return result;
  Keyframes<Vec3>& keys = result.tracks[std::size_t(root)].translation;
  if (keys.empty()) return result;
  Mat4 parent = Mat4::identity();
  if (const int p = skeleton.parent(root); p != kNoParent) {
    std::vector<Mat4> rest(std::size_t(skeleton.joint_count()));
    const std::vector<Transform> local = skeleton.rest_pose();
    local_to_model(skeleton.parents(), std::span<const Transform>(local), std::span<Mat4>(rest));
    parent = rest[std::size_t(p)];
  }
  Mat4 to_local;
  if (!inverse(parent, to_local)) return result;
  Vec3 travel =
      root_position(clip, skeleton, root, clip.duration) - root_position(clip, skeleton, root, 0);
  travel.y = 0;
  const std::size_t per_key = keys.interpolation == Interpolation::CubicSpline ? 3 : 1;
  for (std::size_t k = 0; k < keys.values.size(); ++k) {
    const double t = keys.times[k / per_key] / clip.duration;
    if (per_key == 3 && k % 3 != 1) continue;  // tangents: a constant offset leaves them
    keys.values[k] = to_local.transform_point(parent.transform_point(keys.values[k]) - travel * t);
  }
  return result;
}

// The joints whose chain still reaches `min_reach` metres further down (rest pose), and the
// skeleton cut down to them: legs, spine, arms, hands and head stay; fingers, toes, end sites
// and joints hanging from nothing (cameras) go. A kept joint's parent reaches further still,
// so the cut skeleton is closed under parents.
struct Reduced {
  Skeleton skeleton;
  std::vector<int> joints;  // full index of each kept joint
};

Reduced reduce(const Skeleton& full, double min_reach, int root) {
  const int n = full.joint_count();
  std::vector<double> reach(std::size_t(n), 0.0);
  for (int j = n - 1; j >= 0; --j) {  // children after parents: accumulate upward
    const int p = full.parent(j);
    if (p != kNoParent) {
      reach[std::size_t(p)] = std::max(
          reach[std::size_t(p)], length(full.joint(j).rest.translation) + reach[std::size_t(j)]);
    }
  }
  Reduced r;
  std::vector<int> new_index(std::size_t(n), -1);
  std::vector<Joint> joints;
  for (int j = 0; j < n; ++j) {
    if (reach[std::size_t(j)] < min_reach && j != root) continue;
    Joint joint = full.joint(j);
    joint.parent = joint.parent == kNoParent ? kNoParent : new_index[std::size_t(joint.parent)];
    if (full.parent(j) != kNoParent && joint.parent == kNoParent) continue;  // parent cut
    new_index[std::size_t(j)] = int(joints.size());
    joints.push_back(std::move(joint));
    r.joints.push_back(j);
  }
  r.skeleton = Skeleton::build(std::move(joints));
  return r;
}

Clip reduce(const Clip& clip, std::span<const int> joints) {
  Clip result;
  result.name = clip.name;
  result.duration = clip.duration;
  result.sample_rate = clip.sample_rate;
  for (int j : joints) {
    result.tracks.push_back(std::size_t(j) < clip.tracks.size() ? clip.tracks[std::size_t(j)]
                                                                : JointTrack{});
  }
  return result;
}

// A leg of the full runtime skeleton for foot locking: its chain and the joints that move with
// each of its three joints (each joint of the hip's subtree, with the nearest of hip, knee and
// ankle at or above it: 0, 1 or 2).
struct LockLeg {
  int hip = -1, knee = -1, ankle = -1;
  float floor[2] = {0, 0};  // the ankle's lowest height in the walk and the run (root at origin)
  std::vector<std::pair<int, std::uint8_t>> moved;
};

// What foot locking keeps per agent and leg between frames.
struct LockState {
  Vec3f animated{0, 0, 0};  // last frame's animated ankle (world)
  Vec3f pinned{0, 0, 0};    // where the locked ankle stays
  float weight = 0;         // IK weight: 1 while locked, falling to 0 after
  bool locked = false, seen = false;
};

// One skeleton's runtime data: what a tier samples, blends and poses.
struct TierRig {
  RuntimeSkeleton skeleton;
  RuntimeClip walk, run;  // run empty when there is none
};

}  // namespace

struct CrowdAnimator::Impl {
  CrowdAnimationSettings settings;
  TierRig full, mid;
  std::vector<int> mid_joints;
  // Drawing a mid pose on the full skeleton: each full joint's mid index (-1: dropped), and for
  // a dropped joint the kept joint it follows (its nearest kept ancestor, else the root) with its
  // rest-pose offset from it.
  std::vector<int> mid_index, follows;
  std::vector<Mat4f> follow_offset;
  float walk_speed = 0, run_speed = 0, walk_duration = 1, run_duration = 1;
  bool has_run = false;
  PhaseSync sync;  // walk (and run): the shared phase → each clip's own time
  // Walk and run on a speed axis: the weights a speed selects, and the blend's stride.
  std::optional<BlendSpace1D> locomotion;
  CrowdLod lod;
  std::vector<float> phase, heading, distance;
  std::vector<Mat4f> poses;                // agents × full joint count
  std::vector<std::uint16_t> pose_joints;  // joints agent i's pose holds (0: none yet)
  std::vector<SoaTransform> scratch;       // 3 local poses per block of agents
  std::vector<LockLeg> legs;               // foot locking (empty: off)
  std::vector<LockState> locks;            // agents × legs
  tbb::task_arena arena;

  Impl(const CrowdAnimationSettings& s, std::size_t agents)
      : settings(s),
        lod(s.lod, agents),
        phase(agents, 0.0f),
        heading(agents, 0.0f),
        distance(agents, 0.0f),
        pose_joints(agents, 0),
        arena(s.threads > 0 ? s.threads : tbb::task_arena::automatic) {}

  // Samples, blends and poses one agent on one rig into `out`.
  void pose_agent(const TierRig& rig, float agent_phase, float agent_heading, Vec3f root,
                  std::span<SoaTransform> walk, std::span<SoaTransform> run,
                  std::span<SoaTransform> blended, std::span<Mat4f> out, float run_weight) const {
    const int soa = rig.skeleton.soa_count();
    const auto w = walk.first(std::size_t(soa)), r = run.first(std::size_t(soa)),
               b = blended.first(std::size_t(soa));
    std::array<float, 2> local{agent_phase, agent_phase};
    sync.local_times(agent_phase, std::span(local).first(sync.clip_count()));
    sample(rig.walk, local[0] * rig.walk.duration(), w);
    const Mat4f placed = Mat4f::translation(root) *
                         Mat4f::rotation(Quatf::from_axis_angle({0, 1, 0}, agent_heading));
    if (has_run && run_weight > 0) {
      sample(rig.run, local[1] * rig.run.duration(), r);
      const BlendLayer layers[] = {{w, 1 - run_weight}, {r, run_weight}};
      blend(layers, rig.skeleton.rest_pose(), rig.skeleton.joint_count(), b);
      local_to_model(rig.skeleton, b, out, placed);
    } else {
      local_to_model(rig.skeleton, w, out, placed);
    }
  }

  void prepare_foot_locking(const CrowdGait& gait, const Clip& walk, const Clip& run);

  void prepare_follows(const Skeleton& skeleton, int root) {
    const std::size_t n = std::size_t(skeleton.joint_count());
    mid_index.assign(n, -1);
    follows.assign(n, root);
    follow_offset.assign(n, Mat4f::identity());
    for (std::size_t k = 0; k < mid_joints.size(); ++k)
      mid_index[std::size_t(mid_joints[k])] = int(k);
    const std::vector<Mat4> rest = rest_model_matrices(skeleton);
    for (std::size_t j = 0; j < n; ++j) {
      if (mid_index[j] >= 0) continue;
      int a = skeleton.parent(int(j));
      while (a != kNoParent && mid_index[std::size_t(a)] < 0) a = skeleton.parent(a);
      if (a == kNoParent) a = mid_joints.empty() ? root : mid_joints[0];
      follows[j] = a;
      Mat4 to_a;
      if (!inverse(rest[std::size_t(a)], to_a)) to_a = Mat4::identity();
      const Mat4 offset = to_a * rest[j];
      follow_offset[j] = Mat4f::from_column_major(offset.m.data());
    }
  }

  // Foot locking on agent i's full pose `out` (world space), standing at height `ground`.
  void lock_feet(std::size_t i, float ground, float run_weight, float dt, std::span<Mat4f> out) {
    const Vec3 forward{std::sin(double(heading[i])), 0, std::cos(double(heading[i]))};
    for (std::size_t l = 0; l < legs.size(); ++l) {
      const LockLeg& leg = legs[l];
      LockState& state = locks[i * legs.size() + l];
      const Vec3f ankle = out[std::size_t(leg.ankle)].translation_part();
      const float moved =
          state.seen ? std::hypot(ankle.x - state.animated.x, ankle.z - state.animated.z) : 1e9f;
      const float floor = (1 - run_weight) * leg.floor[0] + run_weight * leg.floor[1];
      const bool contact = ankle.y - ground - floor < settings.lock_contact_height &&
                           moved < settings.lock_contact_speed * dt;
      state.animated = ankle;
      state.seen = true;
      if (contact && !state.locked) {  // touch-down: pin the ankle where it is
        state.locked = true;
        state.pinned = ankle;
        state.weight = 1;
      } else if (!contact && state.locked) {
        state.locked = false;
      }
      if (!state.locked) {
        state.weight = settings.lock_release > 0
                           ? std::max(0.0f, state.weight - dt / settings.lock_release)
                           : 0.0f;
      }
      if (!(state.weight > 0)) continue;
      TwoBoneInput in;
      in.root = Vec3(out[std::size_t(leg.hip)].translation_part());
      in.mid = Vec3(out[std::size_t(leg.knee)].translation_part());
      in.end = Vec3(ankle);
      in.target = Vec3(state.pinned);
      in.pole = in.mid + forward;
      in.weight = double(state.weight);
      const TwoBoneResult r = solve_two_bone(in);
      if (r.status == TwoBoneStatus::kDegenerate || r.status == TwoBoneStatus::kInvalidInput)
        continue;
      // Each joint of the leg turns with its chain joint about where that joint was, and goes
      // where the chain joint went.
      const Quat deltas[3] = {r.root_delta, r.mid_delta, r.end_delta};
      const Vec3 from[3] = {in.root, in.mid, in.end};
      const Vec3 to[3] = {in.root, r.mid_position, r.end_position};
      Mat4f moves[3];
      for (int k = 0; k < 3; ++k) {
        const Quat& q = deltas[k];
        moves[k] = Mat4f::translation(Vec3f(to[k])) *
                   Mat4f::rotation(Quatf{float(q.x), float(q.y), float(q.z), float(q.w)}) *
                   Mat4f::translation(Vec3f(-from[k]));
      }
      for (const auto& [joint, by] : leg.moved)
        out[std::size_t(joint)] = moves[by] * out[std::size_t(joint)];
    }
  }
};

CrowdAnimator::CrowdAnimator(const CrowdGait& gait, const CrowdAnimationSettings& settings,
                             std::size_t agents) {
  const Skeleton& skeleton = gait.skeleton;
  if (skeleton.empty()) throw Error("", "crowd gait", "the skeleton has no joints");
  if (gait.root_joint < 0 || gait.root_joint >= skeleton.joint_count()) {
    throw Error(
        "", "crowd gait",
        "root_joint " + std::to_string(gait.root_joint) + " is not a joint of the skeleton");
  }
  if (!(gait.walk.duration > 0)) throw Error("", "crowd gait", "the walk clip is empty");
  gait.walk.validate(skeleton.joint_count(), "walk");
  const bool has_run = gait.run.duration > 0;
  if (has_run) gait.run.validate(skeleton.joint_count(), "run");
  if (!(settings.mid_min_reach >= 0) || !std::isfinite(settings.mid_min_reach) ||
      !(settings.turn_rate > 0) || !std::isfinite(settings.turn_rate)) {
    throw Error("", "crowd animation settings", "mid_min_reach must be ≥ 0 and turn_rate > 0");
  }
  if (agents > 1000000) throw Error("", "crowd animation", "more than 1,000,000 agents");
  impl_ = std::make_unique<Impl>(settings, agents);
  Impl& m = *impl_;
  m.has_run = has_run;
  const int root = gait.root_joint;
  m.walk_speed = gait.walk_speed > 0 ? gait.walk_speed : measured_speed(gait.walk, skeleton, root);
  m.run_speed = !has_run             ? 0.0f
                : gait.run_speed > 0 ? gait.run_speed
                                     : measured_speed(gait.run, skeleton, root);
  if (!(m.walk_speed > 1e-3f) || !std::isfinite(m.walk_speed)) {
    throw Error("", "crowd gait", "the walk's root does not travel: give walk_speed");
  }
  if (has_run && !(m.run_speed > m.walk_speed)) {
    throw Error("", "crowd gait", "the run must be faster than the walk (give run_speed)");
  }
  const Clip walk = in_place(gait.walk, skeleton, root);
  const Clip run = has_run ? in_place(gait.run, skeleton, root) : Clip{};
  m.full.skeleton = RuntimeSkeleton::build(skeleton);
  m.full.walk = RuntimeClip::build(walk, skeleton);
  if (has_run) m.full.run = RuntimeClip::build(run, skeleton);
  const Reduced reduced = reduce(skeleton, settings.mid_min_reach, root);
  m.mid_joints = reduced.joints;
  m.prepare_follows(skeleton, root);
  m.mid.skeleton = RuntimeSkeleton::build(reduced.skeleton);
  m.mid.walk = RuntimeClip::build(reduce(walk, reduced.joints), reduced.skeleton);
  if (has_run) m.mid.run = RuntimeClip::build(reduce(run, reduced.joints), reduced.skeleton);
  // Walk and run share the normalized phase. (Syncing them at their foot-downs was tried: with
  // the pab clips, whose stance lasts 60 % of the walk's cycle and 30 % of the run's, warping
  // between markers doubled the blend's skate; docs/crowds.md.)
  std::vector<ClipCycle> cycles{ClipCycle{float(gait.walk.duration), {}}};
  if (has_run) cycles.push_back(ClipCycle{float(gait.run.duration), {}});
  m.sync = PhaseSync(cycles);
  if (has_run) {
    m.locomotion.emplace(std::vector<BlendSample1D>{{"walk", m.walk_speed, cycles[0], m.walk_speed},
                                                    {"run", m.run_speed, cycles[1], m.run_speed}});
  }
  // The LOD accounting counts the joints the tiers really evaluate.
  CrowdLodSettings lod = settings.lod;
  lod.tiers[0].joints = m.full.skeleton.joint_count();
  lod.tiers[1].joints = m.mid.skeleton.joint_count();
  m.lod = CrowdLod(lod, agents);
  m.walk_duration = m.full.walk.duration();
  m.run_duration = has_run ? m.full.run.duration() : 1.0f;
  m.poses.resize(agents * std::size_t(m.full.skeleton.joint_count()));
  if (settings.foot_locking && !gait.legs.empty()) m.prepare_foot_locking(gait, walk, run);
  m.scratch.resize((agents + kBlock - 1) / kBlock * 3 * std::size_t(m.full.skeleton.soa_count()));
}

// The legs on the full runtime skeleton (found by name), their floors and moved joints.
void CrowdAnimator::Impl::prepare_foot_locking(const CrowdGait& gait, const Clip& walk,
                                               const Clip& run) {
  Impl& m = *this;
  const Skeleton& skeleton = gait.skeleton;
  const RuntimeSkeleton& rt = m.full.skeleton;
  const int n = skeleton.joint_count();
  const auto below = [&](int joint, int ancestor) {
    for (int j = skeleton.parent(joint); j != kNoParent; j = skeleton.parent(j))
      if (j == ancestor) return true;
    return false;
  };
  for (std::size_t l = 0; l < gait.legs.size(); ++l) {
    const FootPlacementJoints& g = gait.legs[l];
    const bool in_range =
        g.hip >= 0 && g.hip < n && g.knee >= 0 && g.knee < n && g.ankle >= 0 && g.ankle < n;
    if (!in_range || !below(g.knee, g.hip) || !below(g.ankle, g.knee)) {
      throw Error("", "crowd gait",
                  "leg " + std::to_string(l) +
                      ": hip, knee and ankle must be joints of the skeleton, each below the last");
    }
    LockLeg leg;
    leg.hip = rt.find(skeleton.joint(g.hip).name);
    leg.knee = rt.find(skeleton.joint(g.knee).name);
    leg.ankle = rt.find(skeleton.joint(g.ankle).name);
    // The floor: the ankle's lowest height over 64 samples of each clip.
    for (int c = 0; c < 2; ++c) {
      const Clip* clip = c == 0 ? &walk : &run;
      float& floor = leg.floor[c];
      floor = c == 0 ? std::numeric_limits<float>::infinity() : leg.floor[0];
      if (!(clip->duration > 0)) continue;
      floor = std::numeric_limits<float>::infinity();
      for (int k = 0; k < 64; ++k) {
        const double t = clip->duration * k / 63;
        floor = std::min(
            floor,
            float(
                sample_model_pose(*clip, skeleton, t)[std::size_t(g.ankle)].translation_part().y));
      }
    }
    // Runtime joints are parents-first: one pass finds each joint's nearest chain joint.
    std::vector<int> by(std::size_t(rt.joint_count()), -1);
    const std::span<const int16_t> parents = rt.parents();
    for (int j = 0; j < rt.joint_count(); ++j) {
      if (j == leg.hip)
        by[std::size_t(j)] = 0;
      else if (j == leg.knee)
        by[std::size_t(j)] = 1;
      else if (j == leg.ankle)
        by[std::size_t(j)] = 2;
      else if (parents[std::size_t(j)] >= 0)
        by[std::size_t(j)] = by[std::size_t(parents[std::size_t(j)])];
      if (by[std::size_t(j)] >= 0) leg.moved.emplace_back(j, std::uint8_t(by[std::size_t(j)]));
    }
    m.legs.push_back(std::move(leg));
  }
  m.locks.assign(m.phase.size() * m.legs.size(), LockState{});
}

CrowdAnimator::~CrowdAnimator() = default;
CrowdAnimator::CrowdAnimator(CrowdAnimator&&) noexcept = default;
CrowdAnimator& CrowdAnimator::operator=(CrowdAnimator&&) noexcept = default;

void CrowdAnimator::update(float dt, std::span<const Vec2f> positions,
                           std::span<const Vec2f> velocities, std::span<const float> heights,
                           const Vec3f& camera) {
  Impl& m = *impl_;
  if (!(dt > 0) || !std::isfinite(dt)) return;
  const std::size_t n = std::min({size(), positions.size(), velocities.size()});
  for (std::size_t i = 0; i < n; ++i) {
    m.distance[i] = std::hypot(positions[i].x - camera.x, positions[i].y - camera.z);
  }
  m.lod.update(std::span<const float>(m.distance).first(n));
  const std::size_t joints = std::size_t(m.full.skeleton.joint_count());
  const std::size_t soa = std::size_t(m.full.skeleton.soa_count());
  auto run_block = [&](std::size_t block) {
    // The block's own local-pose buffers (made at construction: an update never allocates).
    SoaTransform* scratch = m.scratch.data() + block * 3 * soa;
    const std::span<SoaTransform> walk(scratch, soa), run(scratch + soa, soa),
        blended(scratch + 2 * soa, soa);
    const std::size_t end = std::min(n, (block + 1) * kBlock);
    for (std::size_t i = block * kBlock; i < end; ++i) {
      const float speed = length(velocities[i]);
      // The clips the speed selects: walk and run on a 1-D blend space (linear between their
      // speeds, the nearer one alone outside).
      std::array<float, 2> weights{1, 0};
      if (m.locomotion) m.locomotion->weights(speed, weights);
      const float run_weight = weights[1];
      if (speed > kStanding) {
        // Stride matching: one cycle per stride of the blended gait, Σ wᵢ·speedᵢ·Tᵢ. PhaseSync
        // plays a cycle in T = Σ wᵢTᵢ seconds (segment by segment between foot-downs); the agent
        // covers a stride in stride/speed, so the blend's clock runs T·speed/stride times as fast.
        const float stride = m.locomotion ? m.locomotion->stride(weights).value_or(1.0f)
                                          : m.walk_speed * m.walk_duration;
        const float cycle = (1 - run_weight) * m.walk_duration + run_weight * m.run_duration;
        m.sync.advance(std::span(weights).first(m.sync.clip_count()), dt * cycle * speed / stride,
                       m.phase[i]);
        const float target = std::atan2(velocities[i].x, velocities[i].y);
        float turn = std::remainder(target - m.heading[i], 2 * std::numbers::pi_v<float>);
        const float most = m.settings.turn_rate * dt;
        turn = std::clamp(turn, -most, most);
        m.heading[i] = std::remainder(m.heading[i] + turn, 2 * std::numbers::pi_v<float>);
      }
      if (!m.lod.updates_skeleton(i)) continue;
      const CrowdTier tier = m.lod.tier(i) == CrowdTier::Near || m.lod.tier(i) == CrowdTier::Mid
                                 ? m.lod.tier(i)
                                 : m.lod.fading_from(i);
      const TierRig& rig = tier == CrowdTier::Near ? m.full : m.mid;
      const Vec3f root{positions[i].x, i < heights.size() ? heights[i] : 0.0f, positions[i].y};
      const std::span<Mat4f> out(m.poses.data() + i * joints,
                                 std::size_t(rig.skeleton.joint_count()));
      m.pose_agent(rig, m.phase[i], m.heading[i], root, walk, run, blended, out, run_weight);
      m.pose_joints[i] = std::uint16_t(rig.skeleton.joint_count());
      if (!m.legs.empty()) {
        if (tier == CrowdTier::Near) {
          m.lock_feet(i, root.y, run_weight, dt, out);
        } else {  // out of the near tier: forget the locks
          for (std::size_t l = 0; l < m.legs.size(); ++l) m.locks[i * m.legs.size() + l] = {};
        }
      }
    }
  };
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  if (blocks <= 1) {
    if (blocks == 1) run_block(0);
  } else {
    m.arena.execute(
        [&] { tbb::parallel_for(std::size_t(0), blocks, [&](std::size_t b) { run_block(b); }); });
  }
}

std::size_t CrowdAnimator::size() const noexcept { return impl_->phase.size(); }
const CrowdLod& CrowdAnimator::lod() const noexcept { return impl_->lod; }
std::span<const Mat4f> CrowdAnimator::pose(std::size_t agent) const noexcept {
  const std::size_t joints = std::size_t(impl_->full.skeleton.joint_count());
  return {impl_->poses.data() + agent * joints, impl_->pose_joints[agent]};
}
const RuntimeSkeleton& CrowdAnimator::full_skeleton() const noexcept {
  return impl_->full.skeleton;
}
const RuntimeSkeleton& CrowdAnimator::mid_skeleton() const noexcept { return impl_->mid.skeleton; }
std::span<const int> CrowdAnimator::mid_joints() const noexcept { return impl_->mid_joints; }
float CrowdAnimator::phase(std::size_t agent) const noexcept { return impl_->phase[agent]; }
float CrowdAnimator::cycle_time(std::size_t agent) const noexcept {
  return impl_->sync.local_time(0, impl_->phase[agent]).value_or(0.0f) * impl_->walk_duration;
}
float CrowdAnimator::heading(std::size_t agent) const noexcept { return impl_->heading[agent]; }
float CrowdAnimator::walk_duration() const noexcept { return impl_->walk_duration; }
float CrowdAnimator::run_duration() const noexcept {
  return impl_->has_run ? impl_->run_duration : 0.0f;
}
float CrowdAnimator::walk_speed() const noexcept { return impl_->walk_speed; }
float CrowdAnimator::run_speed() const noexcept { return impl_->run_speed; }
bool CrowdAnimator::full_pose(std::size_t agent, std::span<Mat4f> out) const noexcept {
  const Impl& m = *impl_;
  const std::size_t joints = std::size_t(m.full.skeleton.joint_count());
  if (agent >= m.phase.size() || out.size() != joints) return false;
  const std::span<const Mat4f> held = pose(agent);
  if (held.empty()) return false;
  if (held.size() == joints) {
    std::copy(held.begin(), held.end(), out.begin());
    return true;
  }
  for (std::size_t j = 0; j < joints; ++j) {  // parents first: a followed joint is set before
    const int k = m.mid_index[j];
    out[j] = k >= 0 ? held[std::size_t(k)] : out[std::size_t(m.follows[j])] * m.follow_offset[j];
  }
  return true;
}

void CrowdAnimator::sample_in_place(float phase, float run_weight, std::span<Mat4f> out) const {
  const Impl& m = *impl_;
  const std::size_t soa = std::size_t(m.full.skeleton.soa_count());
  if (out.size() != std::size_t(m.full.skeleton.joint_count())) {
    throw Error("", "crowd pose",
                "the output holds " + std::to_string(out.size()) + " joints, the skeleton " +
                    std::to_string(m.full.skeleton.joint_count()));
  }
  std::vector<SoaTransform> scratch(3 * soa);
  const std::span<SoaTransform> all(scratch);
  const float p = phase - std::floor(phase);
  m.pose_agent(m.full, p, 0.0f, {0, 0, 0}, all.subspan(0, soa), all.subspan(soa, soa),
               all.subspan(2 * soa, soa), out,
               m.has_run ? std::clamp(run_weight, 0.0f, 1.0f) : 0.0f);
}

bool CrowdAnimator::foot_locked(std::size_t agent, std::size_t leg) const noexcept {
  const Impl& m = *impl_;
  if (leg >= m.legs.size() || agent >= m.phase.size()) return false;
  return m.locks[agent * m.legs.size() + leg].locked;
}

}  // namespace kinema
