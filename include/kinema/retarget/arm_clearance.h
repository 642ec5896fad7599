// kinema/retarget/arm_clearance.h — pushing retargeted arms out of the character's body, choosing
// the side over the whole clip.
//
// A retargeted arm passes through a thicker character's body. Per frame, points sampled along the
// upper arm (only its outer part, t ∈ [upper_t_min, 1]: nearer the shoulder the arm is also body),
// the forearm and the hand are pushed out of the body surface (kinema/retarget/clearance_field.h)
// to their radius plus a margin. The wrist moves by the largest of the forearm and hand pushes,
// the elbow's pole by the largest of the forearm and upper-arm pushes (moving only the wrist, a
// forearm point a quarter from the elbow would need four times the wrist motion), the elbow is
// re-solved by two-bone IK with the bone lengths kept, and this repeats a few times.
//
// Which way to push is decided over the whole clip, not per frame: with a hand clasped behind the
// back the forearm wants out backwards 74 mm and the hand forwards 73 mm, and 1 mm of noise
// decides. Each frame keeps up to `keep` candidates of three kinds — pushed from the input arm;
// pushed from the neighbour frame's answer (one forward and one backward sweep, the carried
// offset decayed by `carry` so offsets the body no longer asks for fade); seeded past the body on
// the side the camera evidence prefers — and a Viterbi pass picks the path of least cost:
//   unary      = |dW|² + |dK|² + inside_weight · depth still inside + side
//   transition = transition_weight · (|ΔdW|² + |ΔdK|²)   (between consecutive frames' answers)
//   side       = side_weight · (seen · max(0, −a) + (1 − seen) · max(0, a)),  a = dW · toward
// dW, dK: wrist and elbow displacement (metres); toward: unit horizontal vector from the wrist to
// the camera; seen ∈ [0, 1]: the hand's visibility in the footage. The side term is a weak
// preference for the camera side when the hand was seen and the far side when it was not (which
// side is the camera's, not which is the body's front). The DP's answer is the best among the
// candidates made, not among all arm poses, and the inside penalty is finite: frames can stay
// inside.
//
// Two hands close together (clasped) are pushed apart by a round belly. They are coupled: both
// wrists move along the shared direction (the normalized sum of both pushes), each by its own
// distance, blended with its own push by an amount per frame — the largest that still leaves both
// hands out of the body, searched per frame, then eased (kinema/retarget/bound_smoothing.h). The
// fingers of clasped hands cannot interlace, so the hands part symmetrically along the wrist line
// until no fingertip passes the other wrist by more than finger_pass_limit_m (negative: a gap);
// that need is held (never below it) before it is applied.
//
// Last, the acceleration limit (limit_arm_accelerations): where the body asks for a large push
// within a few frames (a hand sweeping through a skirt), the pushed wrist would accelerate far
// harder than the input ever did. Each frame's wrist may accelerate at most max(the input's
// |second difference| there, the input's 99th percentile + acceleration_allowance_m); the
// displacement nearest the chosen one that meets every bound replaces it
// (kinema/retarget/acceleration_limit.h), and what it cannot clear in time stays inside.
//
// Every coefficient is in metres (costs mix m² and m: change units and they must be rescaled).
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/retarget/acceleration_limit.h"
#include "kinema/retarget/body_surface.h"
#include "kinema/retarget/clearance_field.h"

namespace kinema {

struct ArmClearanceOptions {
  double margin_m = 0.006;   ///< clearance beyond each part's radius, metres
  double upper_t_min = 0.7;  ///< the upper arm is tested on t ∈ [upper_t_min, 1] only
  int upper_samples = 2, fore_samples = 4, hand_samples = 2;  ///< points per segment
  /// The rounds stop when no forearm or hand sample needs more than this (metres), nor an
  /// upper-arm sample while any sample is still inside: the plane under a pushed point shifts a
  /// little as its neighbours change, and chasing micrometres costs rounds. The upper arm moves
  /// only through the elbow's pole, which barely moves a straight arm, and near the armpit a
  /// thick body always touches it: once the arm is out, its clearance alone is not worth rounds
  /// (without this, 70 % of the candidates on the 14,373-frame benchmark spent every round with
  /// only the upper arm still asking for ≥ 1 cm).
  double push_tolerance_m = 1e-4;
  int iterations = 5;  ///< push → re-solve rounds per candidate (at most)
  /// Move the elbow's pole by the largest forearm/upper-arm push. false keeps the pole where it
  /// is (the wrist alone clears the forearm: a lever; for comparison only).
  bool push_elbow_pole = true;
  ClearanceFieldOptions field;
  BodySurfaceOptions surface;
  int keep = 3;                         ///< candidates per frame
  double carry = 0.8;                   ///< decay of the offset carried from the neighbour frame
  double seed_past_m = 0.05;            ///< seeded candidate starts depth + this past the body, m
  double inside_weight = 10;            ///< cost per metre still inside
  double transition_weight = 2.0;       ///< cost per m² of change between frames
  double side_weight = 0.3;             ///< cost per metre of push towards the wrong side
  double inside_tolerance_m = 1e-4;     ///< a frame is "inside" when deeper than this (0.1 mm)
  int switch_window_frames = 10;        ///< a front/back switch reverting within this many frames
  bool couple_hands = true;             ///< couple clasped hands
  double couple_near_m = 0.12;          ///< wrists closer than this: fully clasped (amount 1)
  double couple_far_m = 0.20;           ///< wrists farther than this: not coupled (amount 0)
  int couple_search_steps = 8;          ///< amounts tried per frame: k / steps, k = steps … 0
  int ease_radius_frames = 4;           ///< smoothing of the coupling amount (upper bound)
  bool part_fingers = true;             ///< part clasped hands so fingertips do not interlace
  double finger_pass_limit_m = -0.035;  ///< fingertip past the other wrist, metres (−: a gap)
  int hold_radius_frames = 4;           ///< smoothing of the parting distance (lower bound)
  /// Smoothing of the chosen path where the body allows (smooth_arm_paths): blur radius in
  /// frames (0: off) and the amounts tried per frame.
  int smooth_radius_frames = 3;
  int smooth_search_steps = 8;
  /// The last stage: each arm's wrist (and elbow) displacement is limited so that the cleaned
  /// track accelerates no harder, frame by frame, than max(the input's |second difference| at
  /// that frame, its 99th percentile over the clip + acceleration_allowance_m) — metres per
  /// frame², at the clip's rate (kinema/retarget/acceleration_limit.h). A push the body asks for
  /// faster than that is spread over more frames, or left partly inside. false: off.
  bool limit_acceleration = true;
  double acceleration_allowance_m = 0.0005;
  int threads = 0;  ///< 0: all cores; results do not depend on it
  /// The frame rate the per-frame coefficients above are stated for (carry, transition_weight,
  /// switch_window_frames, ease/hold radii): clear_arms rescales them to the clip's rate with
  /// options_at_frame_rate, so a 120 fps take decays, smooths and counts like the same motion at
  /// 30 fps.
  double reference_rate = 30;
};

/// The options for frames at `rate` fps: carry^(reference_rate/rate) (the same decay per second),
/// transition_weight·(rate/reference_rate)² (the same cost for the same velocity change), and the
/// frame counts (switch window, ease, hold and smoothing radii) scaled by rate/reference_rate
/// (rounded, at least 1 where they were).
ArmClearanceOptions options_at_frame_rate(const ArmClearanceOptions& options, double rate);

/// One arm in one frame, model space, metres. fingertips: the tips of the fingers (may be empty).
struct ArmPose {
  Vec3 shoulder{0, 0, 0}, elbow{0, 0, 0}, wrist{0, 0, 0}, hand_tip{0, 0, 0};
  std::vector<Vec3> fingertips;
};

/// One candidate answer for one arm in one frame: the wrist and elbow displacement from the
/// input (metres), the depth still inside the body after pushing (metres) and the arm it gives.
struct ArmCandidate {
  Vec3 wrist_offset{0, 0, 0}, elbow_offset{0, 0, 0};
  double inside_m = 0;
  ArmPose pose;
};

/// The two-bone re-solve: the arm with the shoulder fixed, the bone lengths kept, the wrist as
/// near as it reaches to arm.wrist + wrist_offset and the elbow bending towards
/// arm.elbow + elbow_offset (its pole). The hand keeps its orientation: hand tip and fingertips
/// move with the wrist.
ArmPose resolve_arm(const ArmPose& arm, const Vec3& wrist_offset, const Vec3& elbow_offset);

/// The deepest sample's depth (metres) of an arm against a field.
double arm_depth(const ClearanceField& field, const ArmPose& arm, const ArmRadii& radii,
                 const ArmClearanceOptions& options);

/// Pushes one arm out of the body, starting from the given offsets (iterations rounds of sample →
/// push → two-bone re-solve).
ArmCandidate push_arm_out(const ClearanceField& field, const ArmPose& arm, const ArmRadii& radii,
                          const Vec3& start_wrist_offset, const Vec3& start_elbow_offset,
                          const ArmClearanceOptions& options);

/// The body field of frame i. Called from several threads at once: build into `scratch` and
/// return it, or return a field shared by every frame.
using ClearanceFieldAt = std::function<const ClearanceField&(long frame, ClearanceField& scratch)>;

/// One arm over a clip, for solve_arm_tracks.
struct ArmTrack {
  std::vector<ArmPose> frames;
  ArmRadii radii;
  std::vector<Vec3> toward;  ///< per frame unit vector wrist → camera (empty: no side term)
  std::vector<double> seen;  ///< per frame visibility of the hand, 0–1 (empty: no side term)
};

/// What the arm solve chose, per frame.
struct ArmTrackSolution {
  std::vector<ArmCandidate> chosen;     ///< the DP's path
  std::vector<ArmCandidate> per_frame;  ///< pushed from the input alone (the per-frame answer)
  std::vector<double> depth_before;     ///< the input's deepest sample, metres
  std::vector<int> candidates;          ///< candidates kept per frame
  double candidates_s = 0, path_s = 0;  ///< wall time of the candidates and of the Viterbi pass
};

/// Candidates per frame for each arm (in parallel over frames; the forward and backward sweeps
/// run in chunks, in parallel with each other; deterministic whatever the thread count) and the
/// Viterbi path through them. The arms share each frame's field, built once per chunk pass.
std::vector<ArmTrackSolution> solve_arm_tracks(const ClearanceFieldAt& field_at,
                                               std::span<const ArmTrack> tracks,
                                               const ArmClearanceOptions& options);

/// The Viterbi pass alone: per frame, the index of the chosen candidate. unary[i][c] is candidate
/// c's unary cost at frame i; the transition cost is transition_weight · (|ΔdW|² + |ΔdK|²).
std::vector<int> choose_candidate_path(std::span<const std::vector<ArmCandidate>> candidates,
                                       std::span<const std::vector<double>> unary,
                                       double transition_weight);

/// The unary cost of a candidate (see the file comment). `toward` null or seen < 0: no side term.
double candidate_unary_cost(const ArmCandidate& c, const Vec3* toward, double seen,
                            const ArmClearanceOptions& options);

/// Couples two hands' wrist pushes (metres): shared direction u = normalize(left + right); each
/// becomes push + amount · (u·|push| − push). amount ∈ [0, 1].
std::array<Vec3, 2> couple_pushes(const Vec3& left, const Vec3& right, double amount);

/// Couples clasped hands and parts interlacing fingers, in place on both solutions (see the file
/// comment). Returns per frame the coupling amount used.
std::vector<double> couple_hands(const ClearanceFieldAt& field_at,
                                 const std::array<const ArmTrack*, 2>& tracks,
                                 std::array<ArmTrackSolution*, 2> solutions,
                                 const ArmClearanceOptions& options);

/// Smooths each arm's chosen path where the body allows, in place. The path chooses among
/// candidates, so it jumps where the best candidate changes kind. Per arm, the wrist and elbow
/// offsets are box-blurred twice over ±smooth_radius_frames; each frame takes the largest share
/// a of the blurred offsets (offset + a·(blurred − offset), a searched from 1 down in
/// smooth_search_steps) that leaves the arm no deeper than its chosen answer (or 0.1 mm), and the
/// shares are eased (never above what the search allowed: kinema/retarget/bound_smoothing.h).
/// Returns per arm the share used per frame.
std::array<std::vector<double>, 2> smooth_arm_paths(const ClearanceFieldAt& field_at,
                                                    const std::array<const ArmTrack*, 2>& tracks,
                                                    std::array<ArmTrackSolution*, 2> solutions,
                                                    const ArmClearanceOptions& options);

/// What limit_arm_accelerations changed, per arm.
struct ArmAccelerationLimit {
  double bound_m = 0;  ///< the clip-wide acceleration allowed (input p99 + allowance), m/frame²
  long frames_changed = 0;     ///< frames whose wrist or elbow moved
  double max_violation_m = 0;  ///< bound left exceeded after the solve, m/frame² (wrist)
};

/// Limits each arm's chosen wrist and elbow displacement so that the cleaned joint accelerates no
/// harder at any frame than max(the input's |second difference| there, the input's 99th
/// percentile + acceleration_allowance_m) (the lower order statistic at rank 0.99·(n−3), so the
/// 99th percentile after is never above this bound), re-solves the arms on the changed frames and
/// measures their depth again. In place on both solutions.
std::array<ArmAccelerationLimit, 2> limit_arm_accelerations(
    const ClearanceFieldAt& field_at, const std::array<const ArmTrack*, 2>& tracks,
    std::array<ArmTrackSolution*, 2> solutions, const ArmClearanceOptions& options);

/// Front/back switches of an arm's wrist displacement that revert within `window` frames.
/// Only frames displaced by ≥ 1 cm along the forward axis (unit, horizontal) have a side: the sign
/// of displacement · forward (a sideways push has none). A switch is a
/// change of side between consecutive sided frames j < k; it reverts when the side changes back
/// at a sided frame m with m − k ≤ window. Each reverting switch counts once.
int count_reverting_switches(std::span<const Vec3> wrist_offsets, std::span<const Vec3> forward,
                             int window);

/// Per arm figures of a clean-up.
struct ArmClearanceMetrics {
  long frames_inside_before = 0, frames_inside_after = 0;  ///< deeper than inside_tolerance_m
  int switches_per_frame = 0;  ///< reverting switches of the per-frame answer (no DP)
  int switches = 0;            ///< reverting switches of the result
  ArmAccelerationLimit limit;  ///< what the acceleration limit changed
  double jerk_peak_before_mm = 0, jerk_p99_before_mm = 0;  ///< wrist |second difference|, mm/frame²
  double jerk_peak_after_mm = 0, jerk_p99_after_mm = 0;
  double added_mean_mm = 0, added_max_mm = 0;         ///< wrist displacement over all frames, mm
  std::vector<double> depth_before_m, depth_after_m;  ///< per frame, metres
};

/// Clasped hands: frames with the input wrists closer than couple_near_m, and their wrist
/// distance before and after (mean, metres).
struct ClaspedHandsMetrics {
  long frames = 0;
  double distance_before_m = 0, distance_after_m = 0;
  double max_change_m = 0;  ///< largest |after − before| over those frames
};

struct ArmClearanceTimings {
  double surface_s = 0, candidates_s = 0, path_s = 0, coupling_s = 0, smoothing_s = 0, limit_s = 0,
         write_s = 0, total_s = 0;
};

struct ArmClearanceResult {
  Clip clip;  ///< the input clip with the arms' rotations keyed at every frame
  double rate = 0;
  long frames = 0;
  std::array<ArmClearanceMetrics, 2> arms;  ///< left, right
  ClaspedHandsMetrics clasped;
  std::vector<double> coupling;  ///< per frame coupling amount used
  ArmClearanceTimings timings;
  size_t body_vertices = 0;  ///< body-surface vertices after thinning
};

/// Evidence of which side a hand is on, from the footage.
struct ArmClearanceInputs {
  /// Per frame visibility of each hand (left, right), 0–1; a hand's empty: no side term for it.
  std::array<std::vector<double>, 2> visibility;
  /// The camera position in the character's model space, metres. With visibility but no camera,
  /// the camera stands 3 m in front of the hips at the first frame (the character's forward from
  /// its upper legs).
  std::optional<Vec3> camera;
};

/// Progress: stage name and fraction done in [0, 1] (called from the calling thread).
using ArmClearanceProgress = std::function<void(const std::string& stage, double done)>;

/// Cleans the arms of `clip`, a clip on `character`'s skeleton (sampled at its sample rate, else
/// 30 fps). Throws kinema::Error naming `file` for: a character without skin or without weights
/// on the torso, a clip with tracks for more joints than the skeleton has, visibility whose
/// length is not the clip's frame count or whose values are outside [0, 1], a non-finite camera.
ArmClearanceResult clear_arms(const Asset& character, const Humanoid& map, const Clip& clip,
                              const ArmClearanceInputs& inputs, const ArmClearanceOptions& options,
                              const std::string& file, const ArmClearanceProgress& progress = {});

}  // namespace kinema
