// GraphInstance: construction (every allocation happens here), parameters, and the blend-tree
// nodes — clip players, 1D/2D blend spaces, additive and layer blends. State machines are in
// state_machine.cpp. See kinema/graph/graph_instance.h.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "graph_instance_internal.h"
#include "ground_motion.h"
#include "kinema/core/error.h"

namespace kinema {

// ---- construction --------------------------------------------------------------------------

GraphInstance::GraphInstance(const AnimGraph& graph) : graph_(&graph) {
  const int soa = graph.soa_count();
  int buffers = 0;
  const auto take = [&]() { return (buffers++) * soa; };

  nodes_.resize(graph.nodes().size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const GraphNode& def = graph.nodes()[i];
    NodeState& st = nodes_[i];
    st.pose = take();
    const auto samples = [&](const std::vector<int>& clips) {
      const size_t n = clips.size();
      st.weights.assign(n, 0.0f);
      st.scratch.assign(n, 0.0f);
      st.playbacks.assign(n, Playback{});
      st.blend.assign(n, BlendLayer{});
      for (size_t k = 0; k < n; ++k) {
        st.caches.emplace_back(graph.clips()[static_cast<size_t>(clips[k])]);
        st.sample_pose.push_back(take());
      }
    };
    switch (def.type) {
      case NodeType::Clip: {
        const ClipNode& c = std::get<ClipNode>(def.data);
        st.cache.reset(graph.clips()[static_cast<size_t>(c.clip)]);
        break;
      }
      case NodeType::Blend1D:
        samples(std::get<Blend1DNode>(def.data).clips);
        break;
      case NodeType::Blend2D:
        samples(std::get<Blend2DNode>(def.data).clips);
        break;
      case NodeType::Additive:
        st.delta = take();
        break;
      case NodeType::Layer: {
        const LayerNode& l = std::get<LayerNode>(def.data);
        st.layers.assign(l.layers.size(), PoseLayer{});
        for (const GraphLayer& layer : l.layers)
          st.layer_delta.push_back(layer.additive ? take() : -1);
        break;
      }
      case NodeType::StateMachine: {
        const StateMachineNode& m = std::get<StateMachineNode>(def.data);
        st.machine = static_cast<int>(machine_state_.size());
        Machine& ms = machine_state_.emplace_back();
        ms.node = static_cast<int>(i);
        ms.snapshot = take();
        if (m.has_inertialization) {
          ms.inert.reset(graph.joint_count());
          ms.history = take();
          ms.new_previous = take();
        }
        MachineStatus& status = status_.emplace_back();
        status.node = static_cast<int>(i);
        break;
      }
      case NodeType::LocomotionWarp:
        st.warp_local.assign(static_cast<size_t>(graph.joint_count()), Transform{});
        st.warp_model.assign(static_cast<size_t>(graph.joint_count()), Transform{});
        break;
    }
  }
  pool_.assign(static_cast<size_t>(buffers) * static_cast<size_t>(soa), SoaTransform::identity());
  params_.resize(graph.parameters().size());
  reset();
}

GraphInstance::~GraphInstance() = default;
GraphInstance::GraphInstance(GraphInstance&&) noexcept = default;
GraphInstance& GraphInstance::operator=(GraphInstance&&) noexcept = default;

void GraphInstance::reset() noexcept {
  for (size_t i = 0; i < params_.size(); ++i) params_[i] = graph_->parameters()[i].default_value;
  for (MachineStatus& s : status_) s = MachineStatus{s.node};
  time_ = 0;
  root_motion_ = RootDelta{};
  world_ = RootDelta{};
  if (graph_->root() >= 0) GraphEvaluator::restart(*this, graph_->root());
}

// ---- parameters ----------------------------------------------------------------------------

ParamHandle GraphInstance::find_parameter(std::string_view name) const noexcept {
  return ParamHandle{graph_->find_parameter(name)};
}

ParamHandle GraphInstance::parameter(std::string_view name) const {
  const ParamHandle p = find_parameter(name);
  if (!p.valid()) {
    std::string list;
    for (const GraphParameter& gp : graph_->parameters())
      list += (list.empty() ? "" : ", ") + gp.name;
    throw Error(graph_->file(), "",
                "no parameter '" + std::string(name) +
                    "' (parameters: " + (list.empty() ? std::string("none") : list) + ")");
  }
  return p;
}

namespace {

const char* kind(ParamType t) {
  return t == ParamType::Float ? "float" : t == ParamType::Bool ? "bool" : "trigger";
}

}  // namespace

void GraphInstance::set_float(std::string_view name, float value) {
  const ParamHandle p = parameter(name);
  const ParamType t = graph_->parameters()[static_cast<size_t>(p.index)].type;
  if (t != ParamType::Float)
    throw Error(graph_->file(), "",
                "parameter '" + std::string(name) + "' is a " + kind(t) + ", not a float");
  if (!std::isfinite(value))
    throw Error(graph_->file(), "", "parameter '" + std::string(name) + "': not a finite number");
  set_float(p, value);
}

void GraphInstance::set_bool(std::string_view name, bool value) {
  const ParamHandle p = parameter(name);
  if (!set_bool(p, value))
    throw Error(graph_->file(), "", "parameter '" + std::string(name) + "' is not a bool");
}

void GraphInstance::fire(std::string_view name) {
  const ParamHandle p = parameter(name);
  if (!fire(p))
    throw Error(graph_->file(), "", "parameter '" + std::string(name) + "' is not a trigger");
}

namespace {

bool is(const AnimGraph& g, ParamHandle p, ParamType t) {
  return p.index >= 0 && static_cast<size_t>(p.index) < g.parameters().size() &&
         g.parameters()[static_cast<size_t>(p.index)].type == t;
}

}  // namespace

bool GraphInstance::set_float(ParamHandle p, float value) noexcept {
  if (!is(*graph_, p, ParamType::Float) || !std::isfinite(value)) return false;
  params_[static_cast<size_t>(p.index)] = value;
  return true;
}

bool GraphInstance::set_bool(ParamHandle p, bool value) noexcept {
  if (!is(*graph_, p, ParamType::Bool)) return false;
  params_[static_cast<size_t>(p.index)] = value ? 1.0f : 0.0f;
  return true;
}

bool GraphInstance::fire(ParamHandle p) noexcept {
  if (!is(*graph_, p, ParamType::Trigger)) return false;
  params_[static_cast<size_t>(p.index)] = 1.0f;
  return true;
}

bool GraphInstance::reset_trigger(ParamHandle p) noexcept {
  if (!is(*graph_, p, ParamType::Trigger)) return false;
  params_[static_cast<size_t>(p.index)] = 0.0f;
  return true;
}

float GraphInstance::value(ParamHandle p) const noexcept {
  if (p.index < 0 || static_cast<size_t>(p.index) >= params_.size())
    return std::numeric_limits<float>::quiet_NaN();
  return params_[static_cast<size_t>(p.index)];
}

// ---- update / evaluate ---------------------------------------------------------------------

bool GraphInstance::update(float dt) noexcept {
  if (!std::isfinite(dt) || dt < 0) return false;
  for (MachineStatus& s : status_) {
    s.active = false;
    s.last_transition = -1;
  }
  root_motion_ = GraphEvaluator::advance(*this, graph_->root(), dt);
  apply_root_motion(root_motion_, world_.translation, world_.yaw);
  time_ += dt;
  return true;
}

bool GraphInstance::evaluate(std::span<SoaTransform> out) noexcept {
  if (out.size() != static_cast<size_t>(graph_->soa_count())) return false;
  const std::span<const SoaTransform> pose = GraphEvaluator::evaluate(*this, graph_->root(), true);
  std::memcpy(out.data(), pose.data(), pose.size_bytes());
  return true;
}

float GraphInstance::normalized_time(int node) const noexcept {
  if (node < 0 || static_cast<size_t>(node) >= nodes_.size()) return 0;
  return static_cast<float>(nodes_[static_cast<size_t>(node)].normalized);
}

// ---- the node types ------------------------------------------------------------------------

namespace {

float param_value(const std::vector<float>& params, const GraphValue& v) {
  return v.parameter >= 0 ? params[static_cast<size_t>(v.parameter)] : v.constant;
}

/// Ground motion of a clip played from t0 over `advance` seconds of clip time.
RootDelta clip_motion(const AnimGraph& graph, const GraphClip& clip, float t0, double advance,
                      bool loop) {
  RootDelta d;
  if (!clip.has_root_motion || advance == 0) return d;
  const double t1 = static_cast<double>(t0) + advance;
  const bool ok = graph.root_motion().rotation
                      ? clip.root.delta(t0, t1, loop ? WrapMode::Loop : WrapMode::Clamp, d)
                      : ground_translation(clip.root, t0, t1, loop, d);
  return ok ? d : RootDelta{};
}

}  // namespace

namespace {

/// Weights of a blend space for the current parameters into `out`; false keeps last frame's.
bool space_weights(const GraphNode& d, const std::vector<float>& params, std::span<float> out,
                   float& speed_scale) {
  speed_scale = 1;
  if (d.type == NodeType::Blend1D) {
    const Blend1DNode& b = std::get<Blend1DNode>(d.data);
    const float x = params[static_cast<size_t>(b.parameter)];
    if (b.speed_correction == SpeedCorrection::Weights)
      return b.space->speed_matched_weights(x, out);
    if (!b.space->weights(x, out)) return false;
    if (b.speed_correction == SpeedCorrection::Playback) {
      const std::optional<float> s = b.space->playback_scale(out, x);
      if (s && std::isfinite(*s) && *s > 0) speed_scale = *s;
    }
    return true;
  }
  const Blend2DNode& b = std::get<Blend2DNode>(d.data);
  const BlendPoint2D p{params[static_cast<size_t>(b.parameter_x)],
                       params[static_cast<size_t>(b.parameter_y)]};
  return b.space->weights(p, out);
}

const PhaseSync& sync_of(const GraphNode& d) {
  return d.type == NodeType::Blend1D ? std::get<Blend1DNode>(d.data).space->sync()
                                     : std::get<Blend2DNode>(d.data).space->sync();
}

bool synced(const GraphNode& d) {
  return d.type == NodeType::Blend1D ? std::get<Blend1DNode>(d.data).sync
                                     : std::get<Blend2DNode>(d.data).sync;
}

const std::vector<int>& clips_of(const GraphNode& d) {
  return d.type == NodeType::Blend1D ? std::get<Blend1DNode>(d.data).clips
                                     : std::get<Blend2DNode>(d.data).clips;
}

}  // namespace

void GraphEvaluator::restart(GraphInstance& g, int node) {
  GraphInstance::NodeState& st = state(g, node);
  const GraphNode& d = def(g, node);
  st.normalized = 0;
  switch (d.type) {
    case NodeType::Clip: {
      const ClipNode& c = std::get<ClipNode>(d.data);
      const float duration = g.graph_->clips()[static_cast<size_t>(c.clip)].duration();
      st.playback = Playback{c.rate < 0 ? duration : 0.0f, c.rate, c.loop};
      st.cache.invalidate();
      break;
    }
    case NodeType::Blend1D:
    case NodeType::Blend2D: {
      // Weights and sample times for the current parameters at phase 0, so the node can be
      // evaluated before its first advance (an inertialized switch samples it right away).
      st.phase = 0;
      for (Playback& p : st.playbacks) p = Playback{};
      for (GraphClipCache& c : st.caches) c.invalidate();
      float scale = 1;
      if (space_weights(d, g.params_, st.scratch, scale))
        std::copy(st.scratch.begin(), st.scratch.end(), st.weights.begin());
      else
        std::fill(st.weights.begin(), st.weights.end(), 0.0f);
      if (synced(d) && sync_of(d).local_times(0, st.scratch)) {
        const std::vector<int>& clips = clips_of(d);
        for (size_t k = 0; k < clips.size(); ++k) {
          const float duration = g.graph_->clips()[static_cast<size_t>(clips[k])].duration();
          st.playbacks[k].time = std::min(st.scratch[k] * duration, duration);
        }
      }
      break;
    }
    case NodeType::Additive: {
      const AdditiveNode& a = std::get<AdditiveNode>(d.data);
      restart(g, a.base);
      restart(g, a.additive.node);
      break;
    }
    case NodeType::Layer: {
      const LayerNode& l = std::get<LayerNode>(d.data);
      restart(g, l.base);
      for (const GraphLayer& layer : l.layers) restart(g, layer.node);
      break;
    }
    case NodeType::StateMachine:
      restart_machine(g, node);
      break;
    case NodeType::LocomotionWarp:
      restart(g, std::get<LocomotionWarpNode>(d.data).input);
      st.warp_state.reset();
      break;
  }
}

RootDelta GraphEvaluator::advance(GraphInstance& g, int node, float dt) {
  GraphInstance::NodeState& st = state(g, node);
  const GraphNode& d = def(g, node);
  const AnimGraph& graph = *g.graph_;
  switch (d.type) {
    case NodeType::Clip: {
      const ClipNode& c = std::get<ClipNode>(d.data);
      const GraphClip& clip = graph.clips()[static_cast<size_t>(c.clip)];
      const float duration = clip.duration();
      const float t0 = st.playback.time;
      const int wraps = st.playback.advance(dt, duration);
      const double advanced =
          static_cast<double>(st.playback.time) - t0 + static_cast<double>(wraps) * duration;
      if (c.loop)
        st.normalized += std::abs(advanced) / duration;
      else
        st.normalized =
            c.rate < 0 ? 1.0 - st.playback.time / duration : st.playback.time / duration;
      return clip_motion(graph, clip, t0, advanced, c.loop);
    }
    case NodeType::Blend1D:
    case NodeType::Blend2D: {
      const std::vector<int>& clips = clips_of(d);
      const size_t n = clips.size();
      float scale = 1;
      if (space_weights(d, g.params_, st.scratch, scale))
        std::copy(st.scratch.begin(), st.scratch.end(), st.weights.begin());
      const float step = dt * scale;
      RootDelta total;
      if (synced(d)) {
        // Advance the shared phase in chunks of at most half a cycle, so that each clip moves
        // less than one of its own cycles per chunk: a local time that went down wrapped once
        // (with sync markers a clip may wrap while the phase does not).
        const PhaseSync& sync = sync_of(d);
        const std::optional<float> cycle = sync.cycle_duration(st.weights);
        if (!cycle || !(*cycle > 0) || !(step > 0)) return total;
        const int chunks = std::clamp(static_cast<int>(std::ceil(2 * step / *cycle)), 1, 64);
        const float h = step / static_cast<float>(chunks);
        for (int c = 0; c < chunks; ++c) {
          const float before = st.phase;
          if (!sync.advance(st.weights, h, st.phase)) break;
          st.normalized += st.phase >= before ? st.phase - before : st.phase + 1.0 - before;
          sync.local_times(st.phase, st.scratch);
          for (size_t k = 0; k < n; ++k) {
            const GraphClip& clip = graph.clips()[static_cast<size_t>(clips[k])];
            const float duration = clip.duration();
            const float t0 = st.playbacks[k].time;
            const float t1 = std::min(st.scratch[k] * duration, duration);
            st.playbacks[k].time = t1;
            if (!(st.weights[k] > 0)) continue;
            double advanced = static_cast<double>(t1) - t0;
            if (advanced < 0) advanced += duration;
            const RootDelta m = clip_motion(graph, clip, t0, advanced, true);
            total.translation += m.translation * static_cast<double>(st.weights[k]);
            total.yaw += m.yaw * static_cast<double>(st.weights[k]);
          }
        }
      } else {
        double best = -1, best_cycles = 0;
        for (size_t k = 0; k < n; ++k) {
          const GraphClip& clip = graph.clips()[static_cast<size_t>(clips[k])];
          const float duration = clip.duration();
          const float t0 = st.playbacks[k].time;
          const int wraps = st.playbacks[k].advance(step, duration);
          const double advanced = static_cast<double>(st.playbacks[k].time) - t0 +
                                  static_cast<double>(wraps) * duration;
          const RootDelta m = clip_motion(graph, clip, t0, advanced, true);
          total.translation += m.translation * static_cast<double>(st.weights[k]);
          total.yaw += m.yaw * static_cast<double>(st.weights[k]);
          if (st.weights[k] > best) {
            best = st.weights[k];
            best_cycles = std::abs(advanced) / duration;
          }
        }
        st.normalized += best_cycles;
      }
      return total;
    }
    case NodeType::Additive: {
      const AdditiveNode& a = std::get<AdditiveNode>(d.data);
      const RootDelta motion = advance(g, a.base, dt);
      advance(g, a.additive.node, dt);
      st.normalized = state(g, a.base).normalized;
      return motion;
    }
    case NodeType::Layer: {
      const LayerNode& l = std::get<LayerNode>(d.data);
      const RootDelta motion = advance(g, l.base, dt);
      for (const GraphLayer& layer : l.layers) advance(g, layer.node, dt);
      st.normalized = state(g, l.base).normalized;
      return motion;
    }
    case NodeType::StateMachine:
      return advance_machine(g, node, dt);
    case NodeType::LocomotionWarp: {
      const int input = std::get<LocomotionWarpNode>(d.data).input;
      const RootDelta motion = advance(g, input, dt);
      st.normalized = state(g, input).normalized;
      return motion;
    }
  }
  return RootDelta{};
}

std::span<const SoaTransform> GraphEvaluator::evaluate(GraphInstance& g, int node, bool record) {
  GraphInstance::NodeState& st = state(g, node);
  const GraphNode& d = def(g, node);
  const AnimGraph& graph = *g.graph_;
  const std::span<SoaTransform> out = buffer(g, st.pose);
  const int joints = graph.joint_count();
  switch (d.type) {
    case NodeType::Clip: {
      const ClipNode& c = std::get<ClipNode>(d.data);
      const GraphClip& clip = graph.clips()[static_cast<size_t>(c.clip)];
      sample(clip, st.playback.time, st.cache, out);
      return out;
    }
    case NodeType::Blend1D:
    case NodeType::Blend2D: {
      const std::vector<int>& clips = clips_of(d);
      size_t active = 0;
      for (size_t k = 0; k < clips.size(); ++k) {
        if (!(st.weights[k] > 0)) continue;
        const GraphClip& clip = graph.clips()[static_cast<size_t>(clips[k])];
        const std::span<SoaTransform> pose = buffer(g, st.sample_pose[k]);
        sample(clip, st.playbacks[k].time, st.caches[k], pose);
        st.blend[active++] = BlendLayer{pose, st.weights[k], {}};
      }
      if (!blend(std::span<const BlendLayer>(st.blend.data(), active),
                 graph.runtime_skeleton().rest_pose(), joints, out))
        std::copy(graph.runtime_skeleton().rest_pose().begin(),
                  graph.runtime_skeleton().rest_pose().end(), out.begin());
      return out;
    }
    case NodeType::Additive: {
      const AdditiveNode& a = std::get<AdditiveNode>(d.data);
      const std::span<const SoaTransform> base = evaluate(g, a.base, record);
      const float w = std::max(0.0f, param_value(g.params_, a.weight));
      if (!(w > 0)) {
        std::copy(base.begin(), base.end(), out.begin());
        // The additive input keeps its own state current (machines inside it record history).
        evaluate(g, a.additive.node, record);
        return out;
      }
      const std::span<const SoaTransform> add = evaluate(g, a.additive.node, record);
      const std::span<SoaTransform> delta = buffer(g, st.delta);
      make_additive(add, a.additive.reference, delta);
      if (!apply_additive(base, delta, w, {}, joints, out))
        std::copy(base.begin(), base.end(), out.begin());
      return out;
    }
    case NodeType::Layer: {
      const LayerNode& l = std::get<LayerNode>(d.data);
      const std::span<const SoaTransform> base = evaluate(g, l.base, record);
      size_t active = 0;
      for (size_t k = 0; k < l.layers.size(); ++k) {
        const GraphLayer& layer = l.layers[k];
        const float w = std::clamp(param_value(g.params_, layer.weight), 0.0f, 1.0f);
        const std::span<const SoaTransform> pose = evaluate(g, layer.node, record);
        if (!(w > 0)) continue;
        PoseLayer& p = st.layers[active++];
        p.weight = w;
        p.joint_weights = layer.mask;
        if (layer.additive) {
          const std::span<SoaTransform> delta = buffer(g, st.layer_delta[k]);
          make_additive(pose, layer.reference, delta);
          p.mode = PoseLayer::Mode::Additive;
          p.pose = delta;
        } else {
          p.mode = PoseLayer::Mode::Override;
          p.pose = pose;
        }
      }
      if (!apply_layers(base, std::span<const PoseLayer>(st.layers.data(), active), joints, out))
        std::copy(base.begin(), base.end(), out.begin());
      return out;
    }
    case NodeType::StateMachine:
      return evaluate_machine(g, node, record);
    case NodeType::LocomotionWarp: {
      const LocomotionWarpNode& w = std::get<LocomotionWarpNode>(d.data);
      const std::span<const SoaTransform> input = evaluate(g, w.input, record);
      std::copy(input.begin(), input.end(), out.begin());
      warp_locomotion(w, param_value(g.params_, w.stride_scale),
                      param_value(g.params_, w.direction), st.warp_local, st.warp_model,
                      st.warp_state, out);
      return out;
    }
  }
  return out;
}

}  // namespace kinema
