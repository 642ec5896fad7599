// tests/graph/graph_test_util.h — tiny synthetic skeletons, clips and graphs for graph tests.
//
// Skeleton (parents first): 0 Hips (root, 1 m up), 1 Spine, 2 Chest, 3 Head, 4 LeftUpLeg,
// 5 LeftLeg. Clips are built from a function that fills the local pose at time t, keyed at a
// fixed rate. Graph JSON is built as "/virtual/test.graph.json" and its clip files are served
// from memory by name (GraphBuildOptions::load_file).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/graph/graph.h"
#include "kinema/graph/graph_builder.h"
#include "kinema/graph/graph_instance.h"
#include "kinema/math/scalar.h"

namespace kinema::graph_test {

enum Joint { kHips = 0, kSpine, kChest, kHead, kLeftUpLeg, kLeftLeg, kJointCount };

inline Skeleton make_skeleton(const std::string& extra_joint = "") {
  std::vector<kinema::Joint> j(kJointCount);
  const char* names[] = {"Hips", "Spine", "Chest", "Head", "LeftUpLeg", "LeftLeg"};
  const int parents[] = {-1, 0, 1, 2, 0, 4};
  const Vec3 offsets[] = {{0, 1, 0},   {0, 0.1, 0},     {0, 0.2, 0},
                          {0, 0.3, 0}, {0.1, -0.05, 0}, {0, -0.45, 0}};
  for (int i = 0; i < kJointCount; ++i) {
    j[static_cast<size_t>(i)].name = names[i];
    j[static_cast<size_t>(i)].parent = parents[i];
    j[static_cast<size_t>(i)].rest.translation = offsets[i];
  }
  if (!extra_joint.empty()) {
    kinema::Joint e;
    e.name = extra_joint;
    e.parent = kHead;
    e.rest.translation = {0, 0.1, 0};
    j.push_back(e);
  }
  return Skeleton::build(std::move(j));
}

inline Quat rot_x(double deg) { return Quat::from_axis_angle({1, 0, 0}, radians(deg)); }

/// Angle about +X (degrees) of a joint's local rotation in a pose.
inline double angle_x(std::span<const SoaTransform> pose, int joint) {
  const Quatf q = get_joint(pose, joint).rotation;
  return degrees(2.0 * std::atan2(double(q.x), double(q.w)));
}

using PoseFn = std::function<void(double t, std::vector<Transform>& local)>;

/// A clip keyed at `rate` on the skeleton from a function of time (starting from the rest pose).
inline Clip make_clip(const Skeleton& skeleton, const std::string& name, double duration,
                      const PoseFn& fill, double rate = 60) {
  Clip c;
  c.name = name;
  c.duration = duration;
  c.sample_rate = rate;
  c.tracks.resize(static_cast<size_t>(skeleton.joint_count()));
  const int frames = static_cast<int>(std::lround(duration * rate)) + 1;
  for (int f = 0; f < frames; ++f) {
    const double t = f == frames - 1 ? duration : f / rate;
    std::vector<Transform> local = skeleton.rest_pose();
    fill(t, local);
    for (size_t j = 0; j < local.size(); ++j) {
      c.tracks[j].translation.times.push_back(t);
      c.tracks[j].translation.values.push_back(local[j].translation);
      c.tracks[j].rotation.times.push_back(t);
      c.tracks[j].rotation.values.push_back(local[j].rotation);
    }
  }
  return c;
}

/// A clip holding joint `joint` at a constant angle about +X; the hips move forward (+Z) at
/// `speed` m/s.
inline Clip angle_clip(const Skeleton& s, const std::string& name, int joint, double deg,
                       double duration = 1, double speed = 0) {
  return make_clip(s, name, duration, [=](double t, std::vector<Transform>& p) {
    p[static_cast<size_t>(joint)].rotation = rot_x(deg);
    p[kHips].translation.z = speed * t;
  });
}

/// A clip turning `joint` about +X from deg0 at a constant rate (degrees per second).
inline Clip moving_clip(const Skeleton& s, const std::string& name, int joint, double deg0,
                        double deg_per_s, double duration = 2) {
  return make_clip(s, name, duration, [=](double t, std::vector<Transform>& p) {
    p[static_cast<size_t>(joint)].rotation = rot_x(deg0 + deg_per_s * t);
  });
}

inline Asset make_asset(const Skeleton& s, std::vector<Clip> clips) {
  Asset a;
  a.skeleton = s;
  a.clips = std::move(clips);
  return a;
}

inline const std::string kGraphFile = "/virtual/test.graph.json";

/// Builds graph JSON with clip files served from `files` (by file name).
inline BuiltGraph build_test_graph(const std::string& json, std::map<std::string, Asset> files) {
  GraphBuildOptions options;
  options.load_file = [files = std::move(files)](const std::string& path) {
    const std::string name = path.substr(path.find_last_of('/') + 1);
    const auto it = files.find(name);
    if (it == files.end()) throw Error(path, "", "no such file");
    return it->second;
  };
  return build_graph(json, kGraphFile, options);
}

/// The runtime graph of build_test_graph.
inline AnimGraph parse_graph(const std::string& json, std::map<std::string, Asset> files) {
  return build_test_graph(json, std::move(files)).graph;
}

/// Runs parse_graph and returns the error it throws (fails the test when it does not).
inline Error graph_error(const std::string& json, std::map<std::string, Asset> files) {
  try {
    parse_graph(json, std::move(files));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "the graph loaded, expected an error:\n" << json;
  return Error("", "", "");
}

/// One step of a frame loop: update, then evaluate into `pose`.
inline void step(GraphInstance& g, float dt, std::vector<SoaTransform>& pose) {
  ASSERT_TRUE(g.update(dt));
  ASSERT_TRUE(g.evaluate(pose));
}

/// A graph with one instance and its pose buffer, ticked frame by frame.
struct Player {
  AnimGraph graph;
  GraphInstance g{graph};
  std::vector<SoaTransform> pose =
      std::vector<SoaTransform>(static_cast<size_t>(graph.soa_count()));
  explicit Player(AnimGraph gr) : graph(std::move(gr)) {}
  void tick(float dt) { step(g, dt, pose); }

  /// The pose's model-space transforms (double precision).
  std::vector<Transform> model() const {
    std::vector<Transform> m(static_cast<size_t>(graph.joint_count()));
    const auto parents = graph.runtime_skeleton().parents();
    for (size_t j = 0; j < m.size(); ++j) {
      const Transform local(get_joint(pose, static_cast<int>(j)));
      m[j] = parents[j] < 0 ? local : m[static_cast<size_t>(parents[j])] * local;
    }
    return m;
  }
  int joint(const char* name) const { return graph.runtime_skeleton().find(name); }
};

/// Name of the current state of machine `m` (0: the first in AnimGraph::machines() order).
inline std::string state_of(const GraphInstance& g, size_t m = 0) {
  const MachineStatus& s = g.machines()[m];
  const auto& sm = std::get<StateMachineNode>(g.graph().nodes()[static_cast<size_t>(s.node)].data);
  return sm.states[static_cast<size_t>(s.state)].name;
}

}  // namespace kinema::graph_test
