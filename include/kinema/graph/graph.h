// kinema/graph/graph.h — the runtime animation graph: parameters, blend trees and state machines
// over runtime clips.
//
// An AnimGraph is the immutable, shareable definition that GraphInstances
// (kinema/graph/graph_instance.h) play: the runtime skeleton every clip plays on, the clips
// (RuntimeClips or CompressedClips, with their root motion already extracted), the named
// parameters and a tree of nodes — clip players, 1D/2D blend spaces, additive and layer blends,
// and state machines whose states hold any node (so machines nest). It holds only what playing
// needs: no raw skeleton, no asset, no clip files. Per character, a GraphInstance holds the time,
// parameter values and buffers; any number of instances, on any threads, may share one graph.
//
// Graphs are built offline from their JSON definition and the clip files it names
// (kinema/graph/graph_builder.h: build_graph; kinema/io/graph_file.h: load_anim_graph), which
// validate everything. The JSON format is documented in docs/graph.md.
//
// Definition types below are plain data, exposed read-only for tools and tests; indices refer to
// AnimGraph's arrays.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kinema/blend/blend_space.h"
#include "kinema/blend/root_motion.h"
#include "kinema/clip/runtime_clip.h"
#include "kinema/compress/compressed_clip.h"
#include "kinema/ik/locomotion_warp.h"
#include "kinema/math/soa_transform.h"
#include "kinema/skeleton/runtime_skeleton.h"

namespace kinema {

// ---- parameters --------------------------------------------------------------------------

enum class ParamType : std::uint8_t {
  Float,    ///< any finite number
  Bool,     ///< stored as 0 / 1
  Trigger,  ///< set by fire(), cleared when a transition that tests it is taken
};

struct GraphParameter {
  std::string name;
  ParamType type = ParamType::Float;
  float default_value = 0;  ///< bool: 0 or 1; trigger: 0 (not set)
};

/// A driver: a float or bool parameter set before every update from an expression over the
/// graph's float and bool parameters and `t` (seconds since the instance started) — a lean from
/// the turn rate, a speed that follows a curve. The graph keeps the text;
/// kinema/procedural/graph_drivers.h compiles it (muparser) and applies it to an instance.
struct GraphDriver {
  int parameter = -1;      ///< index in AnimGraph::parameters(): what the driver sets
  std::string expression;  ///< the expression's text
  std::string pointer;     ///< JSON pointer of the expression in the graph file (for errors)
};

/// A weight or similar input: a named float parameter, or a constant when parameter < 0.
struct GraphValue {
  int parameter = -1;
  float constant = 1;
};

// ---- clips and root motion ---------------------------------------------------------------

struct GraphClip {
  std::string name;     ///< the graph's name for it
  RuntimeClip runtime;  ///< on the graph's skeleton, in place when root motion is extracted
  /// The same clip compressed (kinema/compress), when the graph's "compression" member asks for
  /// it: nodes then sample it and `runtime` stays empty.
  std::optional<CompressedClip> compressed;
  RootMotion root;  ///< its extracted ground motion (empty without root motion)
  bool has_root_motion = false;
  /// Mean ground speed over the clip (whole-cycle displacement / duration), m/s; 0 without
  /// root motion.
  float root_speed = 0;

  /// Seconds, whichever form holds the clip.
  float duration() const { return compressed ? compressed->duration() : runtime.duration(); }
};

/// Per-instance sampling state of one GraphClip, whichever form holds it (sized at reset; never
/// allocates while sampling).
struct GraphClipCache {
  SamplingCache runtime;
  CompressedSamplingCache compressed;
  GraphClipCache() = default;
  explicit GraphClipCache(const GraphClip& clip) { reset(clip); }
  void reset(const GraphClip& clip);
  void invalidate() {
    runtime.invalidate();
    compressed.invalidate();
  }
};

/// Samples a graph clip at `time` (kinema::sample of its runtime or compressed form).
bool sample(const GraphClip& clip, float time, GraphClipCache& cache, std::span<SoaTransform> out);
bool sample(const GraphClip& clip, float time, std::span<SoaTransform> out);

/// Root-motion extraction settings (the graph's "root_motion" member). The ground motion (x, z
/// translation and yaw about +Y) of one joint is taken out of every clip (kinema/blend/
/// root_motion.h: RootMotion::extract, make_in_place) and reported by the instance instead.
///
/// With `rotation` false only the ground translation is taken (the joint's heading stays in the
/// pose, and motions are model-space translations): the better choice for locomotion whose hips
/// sway in yaw, where blending per-frame headings with changing weights would make the path
/// drift; a turning clip needs `rotation` true.
struct RootMotionConfig {
  bool enabled = false;  ///< false: poses keep their motion and no root motion is reported
  int joint = -1;        ///< the root-motion joint (chosen when enabled)
  bool rotation = true;  ///< also extract the heading (yaw about +Y)
};

// ---- nodes -------------------------------------------------------------------------------

struct ClipNode {
  int clip = -1;
  float rate = 1;  ///< playback speed; negative plays backwards
  bool loop = true;
};

enum class SpeedCorrection : std::uint8_t {
  None,      ///< weights from the parameter as is
  Weights,   ///< weights whose blended root speed equals the parameter (m/s)
  Playback,  ///< playback scaled so the blended root speed equals the parameter
};

struct Blend1DNode {
  int parameter = -1;
  std::vector<int> clips;  ///< sample i plays clips[i]
  bool sync = true;        ///< phase-synchronized (else every clip plays at its own rate)
  SpeedCorrection speed_correction = SpeedCorrection::None;
  std::shared_ptr<const BlendSpace1D> space;
};

struct Blend2DNode {
  int parameter_x = -1, parameter_y = -1;
  std::vector<int> clips;
  bool sync = true;
  std::shared_ptr<const BlendSpace2D> space;
};

/// How an additive delta is made: pose (of the `additive` input) relative to a reference pose.
struct AdditiveSource {
  int node = -1;                        ///< the node whose pose becomes a delta
  std::vector<SoaTransform> reference;  ///< the reference pose (a clip frame or the rest pose)
};

struct AdditiveNode {
  int base = -1;
  AdditiveSource additive;
  GraphValue weight;  ///< ≥ 0 (clamped at run time)
};

struct GraphLayer {
  int node = -1;
  bool additive = false;
  std::vector<SoaTransform> reference;  ///< additive layers: the reference pose
  GraphValue weight;                    ///< clamped to [0, 1] at run time
  std::vector<float> mask;              ///< one weight per joint; empty = every joint
};

struct LayerNode {
  int base = -1;
  std::vector<GraphLayer> layers;
};

enum class CompareOp : std::uint8_t {
  Greater,       ///< >
  Less,          ///< <
  GreaterEqual,  ///< >=
  LessEqual,     ///< <=
  Equal,         ///< == (floats and bools)
  NotEqual,      ///< != (floats and bools)
  Triggered,     ///< a trigger is set
};

struct GraphCondition {
  int parameter = -1;
  CompareOp op = CompareOp::Triggered;
  float value = 0;  ///< bools: 0 / 1
};

enum class TransitionBlend : std::uint8_t {
  Crossfade,    ///< evaluates both states and blends them over the duration
  Inertialize,  ///< switches at once and decays the offset to zero (quintic, Bollo 2018)
};

/// State index of "any state" transitions.
inline constexpr int kAnyState = -1;

struct GraphTransition {
  int from = kAnyState;  ///< state index, or kAnyState
  int to = -1;
  std::vector<GraphCondition> conditions;  ///< all must hold
  TransitionBlend blend = TransitionBlend::Crossfade;
  float duration = 0.2f;  ///< seconds, ≥ 0 (0: instant switch)
  int priority = 0;       ///< higher first; ties by file order
  float exit_time = -1;   ///< normalized source-state time after which it may fire; < 0: none
  std::string pointer;    ///< JSON pointer of the transition, for messages and tools
};

struct GraphState {
  std::string name;
  int node = -1;
};

struct StateMachineNode {
  std::vector<GraphState> states;
  int initial = 0;
  std::vector<GraphTransition> transitions;  ///< in file order
  std::vector<int> order;                    ///< transition indices by priority, then file order
  bool has_inertialization = false;
};

/// Stride and orientation warping of its input's pose (kinema/ik/locomotion_warp.h): the lower
/// body turned towards the movement direction with the spine counter-rotating, then the stride
/// scaled along it, the pelvis lowered as needed and the legs re-solved. The graph plays poses
/// without foot contacts, so no plant is held here: the capture's own slide scales with the
/// stride (the motion-matching controller, which has contact labels, holds plants).
struct LocomotionWarpNode {
  int input = -1;
  int pelvis = -1;                     ///< joint turned by the orientation warp
  std::vector<StrideWarpJoints> legs;  ///< hip, knee, ankle of each leg (≤ kMaxStrideWarpLegs)
  std::vector<int> spine;              ///< pelvis's child upwards; empty: no orientation warp
  std::vector<int> parents;            ///< the skeleton's parents, for the ik functions
  GraphValue stride_scale;             ///< requested ÷ natural speed (> 0; constant 1)
  GraphValue direction{-1, 0};         ///< movement angle from the facing, degrees about +Y
  Vec3 facing{0, 0, 1};                ///< the character's forward axis in model space
  float max_angle = 90;                ///< orientation warp clamp, degrees
  StrideWarpSettings settings;         ///< max_extension, max_pelvis_drop
};

enum class NodeType : std::uint8_t {
  Clip,
  Blend1D,
  Blend2D,
  Additive,
  Layer,
  StateMachine,
  LocomotionWarp
};

struct GraphNode {
  NodeType type = NodeType::Clip;
  std::string name;     ///< the node's name, or the JSON pointer of an inline node
  std::string pointer;  ///< JSON pointer of its definition
  std::variant<ClipNode, Blend1DNode, Blend2DNode, AdditiveNode, LayerNode, StateMachineNode,
               LocomotionWarpNode>
      data;
};

// ---- the graph ---------------------------------------------------------------------------

/// The runtime graph (see the file comment). Built by build_graph (kinema/graph/graph_builder.h);
/// a default-constructed graph is empty (no clips, no nodes, root() −1).
class AnimGraph {
 public:
  AnimGraph() = default;

  /// The graph file it was built from, as given to the builder: what errors name.
  const std::string& file() const { return file_; }
  /// The skeleton every clip plays on (built from that of the first clip's file).
  const RuntimeSkeleton& runtime_skeleton() const { return runtime_skeleton_; }
  int joint_count() const { return runtime_skeleton_.joint_count(); }
  int soa_count() const { return runtime_skeleton_.soa_count(); }

  std::span<const GraphParameter> parameters() const { return parameters_; }
  /// Index of a parameter, or -1.
  int find_parameter(std::string_view name) const;
  std::span<const GraphClip> clips() const { return clips_; }
  /// Every node, children before the nodes that use them; named nodes appear once per use.
  std::span<const GraphNode> nodes() const { return nodes_; }
  /// The node whose pose is the graph's output.
  int root() const { return root_; }
  const RootMotionConfig& root_motion() const { return root_motion_; }
  /// Indices of the state-machine nodes (in nodes() order).
  std::span<const int> machines() const { return machines_; }
  /// The file's drivers, in its order (each parameter driven at most once).
  std::span<const GraphDriver> drivers() const { return drivers_; }

 private:
  friend class GraphBuilder;
  std::string file_;
  RuntimeSkeleton runtime_skeleton_;
  std::vector<GraphParameter> parameters_;
  std::vector<GraphClip> clips_;
  std::vector<GraphNode> nodes_;
  int root_ = -1;
  RootMotionConfig root_motion_;
  std::vector<int> machines_;
  std::vector<GraphDriver> drivers_;
};

}  // namespace kinema
