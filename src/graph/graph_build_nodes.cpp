// Building graph nodes (see graph_builder_internal.h and docs/graph.md): node references and
// named nodes, clip players, blend spaces, additive and layer blends with their reference poses
// and masks. State machines are built in graph_build_machines.cpp. Named nodes are instanced once
// per reference, so every use has its own playback state; a node that (indirectly) uses itself is
// an error.
#include <algorithm>

#include "graph_builder_internal.h"

namespace kinema {

// ---- references and named nodes ------------------------------------------------------------

void GraphBuilder::collect_named_nodes(const Json& j) {
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

int GraphBuilder::add_node(GraphNode node) {
  if (static_cast<int>(g_.nodes_.size()) >= opt_.max_nodes)
    fail(node.pointer, "the graph expands to more than " + std::to_string(opt_.max_nodes) +
                           " nodes (named nodes are instanced once per use)");
  g_.nodes_.push_back(std::move(node));
  return static_cast<int>(g_.nodes_.size()) - 1;
}

int GraphBuilder::build_ref(const Json& j) {
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

int GraphBuilder::build_inline(const Json& j, const std::string& name) {
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
  } else if (type == "locomotion_warp") {
    node.type = NodeType::LocomotionWarp;
    node.data = parse_locomotion_warp(j);
  } else {
    fail(j.at("type").ptr, "unknown node type '" + type +
                               "' (expected clip, blend1d, blend2d, additive, layer, "
                               "state_machine or locomotion_warp)");
  }
  return add_node(std::move(node));
}

// ---- clip and blend spaces -----------------------------------------------------------------

ClipNode GraphBuilder::parse_clip_node(const Json& j) {
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

std::vector<SyncMarker> GraphBuilder::parse_markers(const Json& j) const {
  expect_array(j);
  std::vector<SyncMarker> markers;
  for (size_t k = 0; k < j.v.size(); ++k) {
    const Json m = j.at(k);
    check_members(m, {"id", "time"});
    SyncMarker marker;
    marker.id = get_name(require(m, "id"));
    marker.time = get_float(require(m, "time"));
    markers.push_back(std::move(marker));
  }
  return markers;
}

Blend1DNode GraphBuilder::parse_blend1d(const Json& j) {
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
    if (s.has("markers")) sample.cycle.markers = parse_markers(s.at("markers"));
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

Blend2DNode GraphBuilder::parse_blend2d(const Json& j) {
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
    if (s.has("markers")) sample.cycle.markers = parse_markers(s.at("markers"));
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

std::vector<SoaTransform> GraphBuilder::parse_reference(const Json& j) const {
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

AdditiveNode GraphBuilder::parse_additive(const Json& j) {
  check_members(j, {"type", "name", "base", "additive", "reference", "weight"});
  AdditiveNode a;
  a.base = build_ref(require(j, "base"));
  a.additive.node = build_ref(require(j, "additive"));
  a.additive.reference = parse_reference(require(j, "reference"));
  if (j.has("weight")) a.weight = value_ref(j.at("weight"));
  return a;
}

std::vector<float> GraphBuilder::parse_mask(const Json& j) const {
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

LayerNode GraphBuilder::parse_layer(const Json& j) {
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

// ---- locomotion warping --------------------------------------------------------------------

int GraphBuilder::joint_ref(const Json& j) const {
  const std::string name = get_name(j);
  const int index = g_.runtime_skeleton_.find(name);
  if (index < 0) fail(j.ptr, "no joint '" + name + "' in the skeleton of " + skeleton_file_);
  return index;
}

LocomotionWarpNode GraphBuilder::parse_locomotion_warp(const Json& j) {
  check_members(j, {"type", "name", "input", "pelvis", "legs", "spine", "stride_scale", "direction",
                    "facing", "max_angle", "max_extension", "max_pelvis_drop"});
  LocomotionWarpNode w;
  w.input = build_ref(require(j, "input"));
  const RuntimeSkeleton& rs = g_.runtime_skeleton_;
  w.parents.assign(rs.parents().begin(), rs.parents().end());
  const auto below = [&](int ancestor, int joint) {
    for (int p = w.parents[static_cast<size_t>(joint)]; p >= 0;
         p = w.parents[static_cast<size_t>(p)])
      if (p == ancestor) return true;
    return false;
  };
  w.pelvis = joint_ref(require(j, "pelvis"));
  const Json legs = require(j, "legs");
  expect_array(legs);
  if (legs.v.empty() || legs.v.size() > static_cast<size_t>(kMaxStrideWarpLegs))
    fail(legs.ptr, "a locomotion warp has 1 to " + std::to_string(kMaxStrideWarpLegs) + " legs");
  for (size_t i = 0; i < legs.v.size(); ++i) {
    const Json leg = legs.at(i);
    check_members(leg, {"hip", "knee", "ankle"});
    StrideWarpJoints joints{joint_ref(require(leg, "hip")), joint_ref(require(leg, "knee")),
                            joint_ref(require(leg, "ankle"))};
    if (!below(joints.hip, joints.knee) || !below(joints.knee, joints.ankle))
      fail(leg.ptr, "a leg's knee must be below its hip and its ankle below its knee");
    if (!below(w.pelvis, joints.hip)) fail(leg.ptr, "a leg's hip must be below the pelvis");
    w.legs.push_back(joints);
  }
  if (j.has("spine")) {
    const Json spine = j.at("spine");
    expect_array(spine);
    int above = w.pelvis;
    for (size_t i = 0; i < spine.v.size(); ++i) {
      const int joint = joint_ref(spine.at(i));
      if (w.parents[static_cast<size_t>(joint)] != above)
        fail(spine.at(i).ptr,
             "the spine is a chain from the pelvis's child upwards: each joint's "
             "parent is the one before it");
      w.spine.push_back(joint);
      above = joint;
    }
  }
  if (j.has("stride_scale")) w.stride_scale = value_ref(j.at("stride_scale"));
  if (w.stride_scale.parameter < 0 && !(w.stride_scale.constant > 0))
    fail(j.at("stride_scale").ptr, "the stride scale is a positive number or a float parameter");
  if (j.has("direction")) w.direction = value_ref(j.at("direction"), true);
  if (j.has("facing")) {
    const Json f = j.at("facing");
    expect_array(f);
    if (f.v.size() != 3) fail(f.ptr, "facing is [x, y, z]");
    w.facing = {get_float(f.at(size_t{0})), get_float(f.at(size_t{1})), get_float(f.at(size_t{2}))};
    if (!(w.facing.x * w.facing.x + w.facing.z * w.facing.z > 1e-12))
      fail(f.ptr, "facing needs a horizontal part (x or z)");
  }
  const auto bounded = [&](const char* key, float lo, float hi, const char* what) {
    const Json v = j.at(key);
    const float x = get_float(v);
    if (!(x >= lo && x <= hi)) fail(v.ptr, what);
    return x;
  };
  if (j.has("max_angle"))
    w.max_angle = bounded("max_angle", 0, 180, "max_angle is in [0, 180] degrees");
  if (j.has("max_extension"))
    w.settings.max_extension =
        bounded("max_extension", 1e-3f, 1, "max_extension is a fraction of the leg in (0, 1]");
  if (j.has("max_pelvis_drop"))
    w.settings.max_pelvis_drop =
        bounded("max_pelvis_drop", 0, 10, "max_pelvis_drop is in [0, 10] metres");
  return w;
}

}  // namespace kinema
