// Parsing graph nodes: clip players, blend spaces, additive and layer blends, state machines
// (see docs/graph.md). Named nodes are instanced once per reference, so every use has its own
// playback state; a node that (indirectly) uses itself is an error.
#include <algorithm>
#include <cmath>

#include "graph_loader.h"
#include "kinema/core/file.h"

namespace kinema {

namespace {

template <class Map>
std::string names_of(const Map& m) {
  std::string s;
  for (const auto& entry : m) s += (s.empty() ? "" : ", ") + entry.first;
  return s.empty() ? "none" : s;
}

}  // namespace

AnimGraph AnimGraph::load(const std::string& path, const GraphLoadOptions& options) {
  const std::string text = read_file(path);
  return parse(text, path, options);
}

AnimGraph AnimGraph::parse(std::string_view json_text, const std::string& file,
                           const GraphLoadOptions& options) {
  AnimGraph graph;
  graph.file_ = file;
  GraphLoader(graph, options).run(json_text);
  return graph;
}

int AnimGraph::find_parameter(std::string_view name) const {
  for (size_t i = 0; i < parameters_.size(); ++i)
    if (parameters_[i].name == name) return static_cast<int>(i);
  return -1;
}

// ---- references and named nodes ------------------------------------------------------------

void GraphLoader::collect_named_nodes(const Json& j) {
  expect_array(j);
  for (size_t i = 0; i < j.v.size(); ++i) {
    const Json n = j.at(i);
    expect_object(n);
    const Json name = require(n, "name");
    const std::string s = get_name(name);
    if (const auto it = named_.find(s); it != named_.end())
      fail(name.ptr, "duplicate node '" + s + "' (first defined at " + it->second.ptr + ")");
    if (const auto it = clip_ptr_.find(s); it != clip_ptr_.end())
      fail(name.ptr, "node name '" + s + "' is already a clip's (" + it->second +
                         "); names of nodes and clips must differ");
    named_[s] = NamedNode{&n.v, n.ptr};
  }
}

int GraphLoader::add_node(GraphNode node) {
  if (static_cast<int>(g_.nodes_.size()) >= opt_.max_nodes)
    fail(node.pointer, "the graph expands to more than " + std::to_string(opt_.max_nodes) +
                           " nodes (named nodes are instanced once per use)");
  g_.nodes_.push_back(std::move(node));
  return static_cast<int>(g_.nodes_.size()) - 1;
}

int GraphLoader::build_ref(const Json& j) {
  if (j.v.is_object()) return build_inline(j, j.ptr);
  if (!j.v.is_string())
    fail(j.ptr, std::string("expected a node (a node or clip name, or a node object), got ") +
                    json_kind(j.v));
  const std::string name = get_name(j);
  if (const auto it = named_.find(name); it != named_.end()) {
    if (std::find(expanding_.begin(), expanding_.end(), name) != expanding_.end()) {
      std::string chain;
      for (const std::string& n : expanding_) chain += n + " → ";
      fail(j.ptr, "node '" + name + "' uses itself (" + chain + name + ")");
    }
    expanding_.push_back(name);
    const int index = build_inline(Json{*it->second.v, it->second.ptr}, name);
    expanding_.pop_back();
    return index;
  }
  if (clip_ptr_.count(name)) {  // a clip name stands for a looping clip node at rate 1
    GraphNode node;
    node.type = NodeType::Clip;
    node.name = name;
    node.pointer = j.ptr;
    ClipNode clip;
    clip.clip = clip_ref(j);
    node.data = clip;
    return add_node(std::move(node));
  }
  fail(j.ptr, "unknown node '" + name + "' (nodes: " + names_of(named_) +
                  "; clips: " + names_of(clip_ptr_) + ")");
}

int GraphLoader::build_inline(const Json& j, const std::string& name) {
  expect_object(j);
  const std::string type = get_string(require(j, "type"));
  GraphNode node;
  node.name = name;
  node.pointer = j.ptr;
  if (type == "clip") {
    node.type = NodeType::Clip;
    node.data = parse_clip_node(j);
  } else if (type == "blend1d") {
    node.type = NodeType::Blend1D;
    node.data = parse_blend1d(j);
  } else if (type == "blend2d") {
    node.type = NodeType::Blend2D;
    node.data = parse_blend2d(j);
  } else if (type == "additive") {
    node.type = NodeType::Additive;
    node.data = parse_additive(j);
  } else if (type == "layer") {
    node.type = NodeType::Layer;
    node.data = parse_layer(j);
  } else if (type == "state_machine") {
    node.type = NodeType::StateMachine;
    node.data = parse_machine(j);
  } else {
    fail(j.at("type").ptr, "unknown node type '" + type +
                               "' (expected clip, blend1d, blend2d, additive, layer or "
                               "state_machine)");
  }
  return add_node(std::move(node));
}

// ---- clip and blend spaces -----------------------------------------------------------------

ClipNode GraphLoader::parse_clip_node(const Json& j) {
  check_members(j, {"type", "name", "clip", "rate", "loop"});
  ClipNode c;
  c.clip = clip_ref(require(j, "clip"));
  if (j.has("rate")) c.rate = get_float(j.at("rate"));
  if (j.has("loop")) c.loop = get_bool(j.at("loop"));
  return c;
}

namespace {

ClipCycle cycle_of(const GraphClip& clip) {
  ClipCycle c;
  c.duration = clip.duration();
  return c;
}

}  // namespace

Blend1DNode GraphLoader::parse_blend1d(const Json& j) {
  check_members(j, {"type", "name", "parameter", "samples", "sync", "speed_correction"});
  Blend1DNode b;
  b.parameter = parameter_ref(require(j, "parameter"), static_cast<int>(ParamType::Float));
  if (j.has("sync")) b.sync = get_bool(j.at("sync"));
  if (j.has("speed_correction")) {
    const Json sc = j.at("speed_correction");
    const std::string s = get_string(sc);
    if (s == "none")
      b.speed_correction = SpeedCorrection::None;
    else if (s == "weights")
      b.speed_correction = SpeedCorrection::Weights;
    else if (s == "playback")
      b.speed_correction = SpeedCorrection::Playback;
    else
      fail(sc.ptr, "unknown speed_correction '" + s + "' (expected none, weights or playback)");
  }
  const Json samples = require(j, "samples");
  expect_array(samples);
  if (samples.v.size() < 2) fail(samples.ptr, "a blend1d needs at least 2 samples");
  std::vector<BlendSample1D> list;
  for (size_t i = 0; i < samples.v.size(); ++i) {
    const Json s = samples.at(i);
    check_members(s, {"clip", "position", "markers", "root_speed"});
    const int clip = clip_ref(require(s, "clip"));
    const GraphClip& gc = g_.clips_[static_cast<size_t>(clip)];
    BlendSample1D sample;
    sample.name = gc.name;
    sample.position = get_float(require(s, "position"));
    sample.cycle = cycle_of(gc);
    if (s.has("markers")) {
      const Json markers = s.at("markers");
      expect_array(markers);
      for (size_t k = 0; k < markers.v.size(); ++k) {
        const Json m = markers.at(k);
        check_members(m, {"id", "time"});
        SyncMarker marker;
        marker.id = get_name(require(m, "id"));
        marker.time = get_float(require(m, "time"));
        sample.cycle.markers.push_back(std::move(marker));
      }
    }
    if (s.has("root_speed")) {
      const Json rs = s.at("root_speed");
      sample.root_speed = get_float(rs);
      if (*sample.root_speed < 0) fail(rs.ptr, "root_speed must not be negative");
    } else if (gc.has_root_motion) {
      sample.root_speed = gc.root_speed;
    }
    if (b.speed_correction != SpeedCorrection::None && !sample.root_speed)
      fail(s.ptr,
           "speed_correction needs the sample's root speed: give \"root_speed\" or "
           "enable the graph's root_motion");
    b.clips.push_back(clip);
    list.push_back(std::move(sample));
  }
  try {
    b.space = std::make_shared<const BlendSpace1D>(std::move(list));
  } catch (const Error& e) {
    fail(samples.ptr, e.what());
  }
  return b;
}

Blend2DNode GraphLoader::parse_blend2d(const Json& j) {
  check_members(j, {"type", "name", "parameters", "samples", "sync"});
  Blend2DNode b;
  const Json params = require(j, "parameters");
  expect_array(params);
  if (params.v.size() != 2) fail(params.ptr, "a blend2d takes two parameters [x, y]");
  b.parameter_x = parameter_ref(params.at(size_t{0}), static_cast<int>(ParamType::Float));
  b.parameter_y = parameter_ref(params.at(size_t{1}), static_cast<int>(ParamType::Float));
  if (j.has("sync")) b.sync = get_bool(j.at("sync"));
  const Json samples = require(j, "samples");
  expect_array(samples);
  if (samples.v.size() < 3) fail(samples.ptr, "a blend2d needs at least 3 samples");
  std::vector<BlendSample2D> list;
  for (size_t i = 0; i < samples.v.size(); ++i) {
    const Json s = samples.at(i);
    check_members(s, {"clip", "position", "markers"});
    const int clip = clip_ref(require(s, "clip"));
    const GraphClip& gc = g_.clips_[static_cast<size_t>(clip)];
    BlendSample2D sample;
    sample.name = gc.name;
    const Json pos = require(s, "position");
    expect_array(pos);
    if (pos.v.size() != 2) fail(pos.ptr, "a position is [x, y]");
    sample.position.x = get_float(pos.at(size_t{0}));
    sample.position.y = get_float(pos.at(size_t{1}));
    sample.cycle = cycle_of(gc);
    if (s.has("markers")) {
      const Json markers = s.at("markers");
      expect_array(markers);
      for (size_t k = 0; k < markers.v.size(); ++k) {
        const Json m = markers.at(k);
        check_members(m, {"id", "time"});
        SyncMarker marker;
        marker.id = get_name(require(m, "id"));
        marker.time = get_float(require(m, "time"));
        sample.cycle.markers.push_back(std::move(marker));
      }
    }
    b.clips.push_back(clip);
    list.push_back(std::move(sample));
  }
  try {
    b.space = std::make_shared<const BlendSpace2D>(std::move(list));
  } catch (const Error& e) {
    fail(samples.ptr, e.what());
  }
  return b;
}

// ---- additive and layers -------------------------------------------------------------------

std::vector<SoaTransform> GraphLoader::parse_reference(const Json& j) const {
  const RuntimeSkeleton& rs = g_.runtime_skeleton_;
  std::vector<SoaTransform> pose(rs.rest_pose().begin(), rs.rest_pose().end());
  if (j.v.is_string()) {
    if (get_string(j) != "rest")
      fail(j.ptr, "a reference is \"rest\" or {\"clip\": NAME, \"time\": SECONDS}");
    return pose;
  }
  check_members(j, {"clip", "time"});
  const GraphClip& clip = g_.clips_[static_cast<size_t>(clip_ref(require(j, "clip")))];
  float time = 0;
  if (j.has("time")) {
    const Json t = j.at("time");
    time = get_float(t);
    if (time < 0 || time > clip.duration())
      fail(t.ptr, "time outside the clip (0 to " + std::to_string(clip.duration()) + " s)");
  }
  if (!sample(clip, time, pose)) fail(j.ptr, "cannot sample the reference pose");
  return pose;
}

AdditiveNode GraphLoader::parse_additive(const Json& j) {
  check_members(j, {"type", "name", "base", "additive", "reference", "weight"});
  AdditiveNode a;
  a.base = build_ref(require(j, "base"));
  a.additive.node = build_ref(require(j, "additive"));
  a.additive.reference = parse_reference(require(j, "reference"));
  if (j.has("weight")) a.weight = value_ref(j.at("weight"));
  return a;
}

std::vector<float> GraphLoader::parse_mask(const Json& j) const {
  check_members(j, {"joint", "ramp", "weight"});
  const Json joint = require(j, "joint");
  const std::string name = get_name(joint);
  const int index = g_.runtime_skeleton_.find(name);
  if (index < 0) fail(joint.ptr, "no joint '" + name + "' in the skeleton of " + skeleton_file_);
  std::vector<float> ramp;
  if (j.has("ramp")) {
    const Json r = j.at("ramp");
    expect_array(r);
    for (size_t i = 0; i < r.v.size(); ++i) {
      const float w = get_float(r.at(i));
      if (w < 0 || w > 1) fail(r.at(i).ptr, "a mask weight is in [0, 1]");
      ramp.push_back(w);
    }
  }
  float weight = 1;
  if (j.has("weight")) {
    const Json w = j.at("weight");
    weight = get_float(w);
    if (weight < 0 || weight > 1) fail(w.ptr, "a mask weight is in [0, 1]");
  }
  return subtree_mask(g_.runtime_skeleton_, index, ramp, weight);
}

LayerNode GraphLoader::parse_layer(const Json& j) {
  check_members(j, {"type", "name", "base", "layers"});
  LayerNode l;
  l.base = build_ref(require(j, "base"));
  const Json layers = require(j, "layers");
  expect_array(layers);
  for (size_t i = 0; i < layers.v.size(); ++i) {
    const Json e = layers.at(i);
    check_members(e, {"node", "weight", "mode", "reference", "mask"});
    GraphLayer layer;
    layer.node = build_ref(require(e, "node"));
    if (e.has("weight")) layer.weight = value_ref(e.at("weight"));
    if (e.has("mode")) {
      const Json m = e.at("mode");
      const std::string mode = get_string(m);
      if (mode == "additive")
        layer.additive = true;
      else if (mode != "override")
        fail(m.ptr, "unknown layer mode '" + mode + "' (expected override or additive)");
    }
    if (layer.additive)
      layer.reference = parse_reference(require(e, "reference"));
    else if (e.has("reference"))
      fail(e.at("reference").ptr, "only an additive layer has a reference pose");
    if (e.has("mask")) layer.mask = parse_mask(e.at("mask"));
    l.layers.push_back(std::move(layer));
  }
  return l;
}

// ---- state machines ------------------------------------------------------------------------

StateMachineNode GraphLoader::parse_machine(const Json& j) {
  check_members(j, {"type", "name", "initial", "states", "transitions"});
  StateMachineNode m;
  const Json states = require(j, "states");
  expect_array(states);
  if (states.v.empty()) fail(states.ptr, "a state machine needs at least one state");
  std::map<std::string, std::string> seen;
  for (size_t i = 0; i < states.v.size(); ++i) {
    const Json s = states.at(i);
    check_members(s, {"name", "node"});
    const Json name = require(s, "name");
    GraphState state;
    state.name = get_name(name);
    if (state.name == "*") fail(name.ptr, "'*' is reserved for \"any state\" transitions");
    if (const auto it = seen.find(state.name); it != seen.end())
      fail(name.ptr, "duplicate state '" + state.name + "' (first defined at " + it->second + ")");
    seen[state.name] = s.ptr;
    m.states.push_back(std::move(state));
  }
  // States' nodes are built after every name is known (their order in nodes() is file order).
  for (size_t i = 0; i < states.v.size(); ++i)
    m.states[i].node = build_ref(require(states.at(i), "node"));
  if (j.has("initial")) {
    const Json init = j.at("initial");
    const std::string name = get_name(init);
    const auto it = std::find_if(m.states.begin(), m.states.end(),
                                 [&](const GraphState& s) { return s.name == name; });
    if (it == m.states.end())
      fail(init.ptr, "unknown state '" + name + "' (states: " + names_of(seen) + ")");
    m.initial = static_cast<int>(it - m.states.begin());
  }
  if (j.has("transitions")) {
    const Json transitions = j.at("transitions");
    expect_array(transitions);
    for (size_t i = 0; i < transitions.v.size(); ++i) {
      m.transitions.push_back(parse_transition(transitions.at(i), m));
      if (m.transitions.back().blend == TransitionBlend::Inertialize) m.has_inertialization = true;
    }
  }
  m.order.resize(m.transitions.size());
  for (size_t i = 0; i < m.order.size(); ++i) m.order[i] = static_cast<int>(i);
  std::stable_sort(m.order.begin(), m.order.end(), [&](int a, int b) {
    return m.transitions[static_cast<size_t>(a)].priority >
           m.transitions[static_cast<size_t>(b)].priority;
  });
  check_instant_cycles(m);
  return m;
}

GraphTransition GraphLoader::parse_transition(const Json& j, const StateMachineNode& m) const {
  check_members(j, {"from", "to", "conditions", "blend", "duration", "priority", "exit_time"});
  GraphTransition t;
  t.pointer = j.ptr;
  const auto state_ref = [&](const Json& s, bool any_ok) {
    const std::string name = get_name(s);
    if (any_ok && name == "*") return kAnyState;
    for (size_t i = 0; i < m.states.size(); ++i)
      if (m.states[i].name == name) return static_cast<int>(i);
    std::string list;
    for (const GraphState& st : m.states) list += (list.empty() ? "" : ", ") + st.name;
    fail(s.ptr, "unknown state '" + name + "' (states: " + list +
                    (any_ok ? "; \"*\" for any state)" : ")"));
  };
  t.from = state_ref(require(j, "from"), true);
  t.to = state_ref(require(j, "to"), false);
  if (j.has("blend")) {
    const Json b = j.at("blend");
    const std::string s = get_string(b);
    if (s == "crossfade")
      t.blend = TransitionBlend::Crossfade;
    else if (s == "inertialize")
      t.blend = TransitionBlend::Inertialize;
    else
      fail(b.ptr, "unknown blend '" + s + "' (expected crossfade or inertialize)");
  }
  if (j.has("duration")) {
    const Json d = j.at("duration");
    t.duration = get_float(d);
    if (t.duration < 0) fail(d.ptr, "a duration must not be negative");
  }
  if (j.has("priority")) t.priority = get_int(j.at("priority"));
  if (j.has("exit_time")) {
    const Json e = j.at("exit_time");
    t.exit_time = get_float(e);
    if (t.exit_time < 0) fail(e.ptr, "exit_time must not be negative");
  }
  if (j.has("conditions")) {
    const Json cs = j.at("conditions");
    expect_array(cs);
    for (size_t i = 0; i < cs.v.size(); ++i) t.conditions.push_back(parse_condition(cs.at(i)));
  }
  return t;
}

GraphCondition GraphLoader::parse_condition(const Json& j) const {
  check_members(j, {"parameter", "op", "value"});
  GraphCondition c;
  c.parameter = parameter_ref(require(j, "parameter"));
  const ParamType type = g_.parameters_[static_cast<size_t>(c.parameter)].type;
  std::string op;
  if (j.has("op")) op = get_string(j.at("op"));
  switch (type) {
    case ParamType::Trigger:
      if (j.has("op") || j.has("value"))
        fail((j.has("op") ? j.at("op") : j.at("value")).ptr,
             "a trigger is tested by name alone ({\"parameter\": NAME})");
      c.op = CompareOp::Triggered;
      return c;
    case ParamType::Bool: {
      bool value = true;
      if (j.has("value")) value = get_bool(j.at("value"));
      if (op.empty() || op == "==")
        c.op = CompareOp::Equal;
      else if (op == "!=")
        c.op = CompareOp::NotEqual;
      else
        fail(j.at("op").ptr, "a bool is compared with == or != only");
      c.value = value ? 1.0f : 0.0f;
      return c;
    }
    case ParamType::Float:
      break;
  }
  const Json op_json = require(j, "op");
  if (op == ">")
    c.op = CompareOp::Greater;
  else if (op == "<")
    c.op = CompareOp::Less;
  else if (op == ">=")
    c.op = CompareOp::GreaterEqual;
  else if (op == "<=")
    c.op = CompareOp::LessEqual;
  else if (op == "==")
    c.op = CompareOp::Equal;
  else if (op == "!=")
    c.op = CompareOp::NotEqual;
  else
    fail(op_json.ptr, "unknown comparison '" + op + "' (expected >, <, >=, <=, == or !=)");
  c.value = get_float(require(j, "value"));
  return c;
}

}  // namespace kinema
