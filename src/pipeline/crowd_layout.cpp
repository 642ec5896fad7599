// A walked crowd as a glTF scene, and its obstacles as a mesh (crowd_layout.h).
#include "crowd_layout.h"

#include <cmath>
#include <cstdio>
#include <numbers>

namespace kinema::pipeline {
namespace {

constexpr float kTau = 2 * std::numbers::pi_v<float>;

// Appends a flat-shaded quad (a, b, c, d counter-clockwise seen from its front).
void quad(Mesh& m, Vec3f a, Vec3f b, Vec3f c, Vec3f d) {
  const Vec3f n = normalize(cross(b - a, c - a), Vec3f{0, 1, 0});
  const auto base = uint32_t(m.positions.size());
  for (const Vec3f& p : {a, b, c, d}) {
    m.positions.push_back(p);
    m.normals.push_back(n);
  }
  m.indices.insert(m.indices.end(), {base, base + 1, base + 2, base, base + 2, base + 3});
}

void triangle(Mesh& m, Vec3f a, Vec3f b, Vec3f c) {
  const Vec3f n = normalize(cross(b - a, c - a), Vec3f{0, 1, 0});
  const auto base = uint32_t(m.positions.size());
  for (const Vec3f& p : {a, b, c}) {
    m.positions.push_back(p);
    m.normals.push_back(n);
  }
  m.indices.insert(m.indices.end(), {base, base + 1, base + 2});
}

// A closed prism of `sides` around `centre` (ground x, z) from y0 to y1.
void prism(Mesh& m, Vec2 centre, float radius, float y0, float y1, int sides) {
  const auto at = [&](int k, float y) {
    const float a = kTau * float(k) / float(sides);
    return Vec3f{float(centre.x) + radius * std::sin(a), y, float(centre.y) + radius * std::cos(a)};
  };
  const Vec3f top{float(centre.x), y1, float(centre.y)},
      bottom{float(centre.x), y0, float(centre.y)};
  for (int k = 0; k < sides; ++k) {
    quad(m, at(k, y0), at(k + 1, y0), at(k + 1, y1), at(k, y1));
    triangle(m, top, at(k, y1), at(k + 1, y1));
    triangle(m, bottom, at(k + 1, y0), at(k, y0));
  }
}

void box(Mesh& m, Vec3f lo, Vec3f hi) {
  const auto p = [&](int x, int y, int z) {
    return Vec3f{x ? hi.x : lo.x, y ? hi.y : lo.y, z ? hi.z : lo.z};
  };
  quad(m, p(0, 0, 1), p(1, 0, 1), p(1, 1, 1), p(0, 1, 1));  // +z
  quad(m, p(1, 0, 0), p(0, 0, 0), p(0, 1, 0), p(1, 1, 0));  // −z
  quad(m, p(1, 0, 1), p(1, 0, 0), p(1, 1, 0), p(1, 1, 1));  // +x
  quad(m, p(0, 0, 0), p(0, 0, 1), p(0, 1, 1), p(0, 1, 0));  // −x
  quad(m, p(0, 1, 1), p(1, 1, 1), p(1, 1, 0), p(0, 1, 0));  // +y
  quad(m, p(0, 0, 0), p(1, 0, 0), p(1, 0, 1), p(0, 0, 1));  // −y
}

// A pawn standing on the origin facing +Z: an octagonal body 1.7 m tall of the agent's radius and
// a nose on its front at chest height, so its heading reads from any side.
Mesh pawn(float radius, const std::string& name, int node) {
  Mesh m;
  m.name = name;
  m.node = node;
  prism(m, {0, 0}, radius, 0, 1.7f, 8);
  box(m, {-0.25f * radius, 1.2f, 0.6f * radius}, {0.25f * radius, 1.45f, 1.5f * radius});
  return m;
}

}  // namespace

Mesh crowd_obstacle_mesh(std::span<const CrowdObstacle> obstacles, std::span<const float> bases,
                         float height) {
  Mesh m;
  m.name = "obstacles";
  for (std::size_t i = 0; i < obstacles.size(); ++i) {
    const CrowdObstacle& o = obstacles[i];
    const float y0 = i < bases.size() ? bases[i] : 0.0f, y1 = y0 + height;
    if (o.disc)
      prism(m, o.centre, float(o.radius), y0, y1, 24);
    else
      box(m, {float(o.lo.x), y0, float(o.lo.y)}, {float(o.hi.x), y1, float(o.hi.y)});
  }
  return m;
}

Asset crowd_layout_asset(const CrowdRecording& rec, std::span<const CrowdObstacle> obstacles,
                         Vec2 lo, Vec2 hi) {
  Asset asset;
  std::vector<Joint> joints;
  // Every node a root: a tool that draws bones (kinema render does, for an asset without a
  // skinned mesh) has none to draw across the square.
  for (const char* still : {"ground", "obstacles", "goals"})
    joints.push_back({still, kNoParent, {}, {}});
  constexpr int kFirstAgent = 3;
  const std::size_t frames = rec.agents ? rec.positions.size() / rec.agents : 0;
  for (std::size_t i = 0; i < rec.agents; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "agent_%05zu", i);
    Joint j{name, kNoParent, {}, {}};
    if (frames > 0) {
      j.rest.translation = Vec3(rec.positions[i]);
      j.rest.rotation = Quat::from_axis_angle({0, 1, 0}, double(rec.headings[i]));
    }
    joints.push_back(std::move(j));
  }
  asset.skeleton = Skeleton::build(std::move(joints));

  Mesh ground;
  ground.name = "ground";
  ground.node = 0;
  quad(ground, {float(lo.x), 0, float(hi.y)}, {float(hi.x), 0, float(hi.y)},
       {float(hi.x), 0, float(lo.y)}, {float(lo.x), 0, float(lo.y)});
  asset.meshes.push_back(std::move(ground));
  Mesh walls = crowd_obstacle_mesh(obstacles);
  walls.node = 1;
  if (!walls.positions.empty()) asset.meshes.push_back(std::move(walls));
  Mesh goals;  // a flat marker 20 cm across at each goal, just above the ground
  goals.name = "goals";
  goals.node = 2;
  for (const Vec2f& g : rec.goals)
    quad(goals, {g.x - 0.1f, 0.01f, g.y + 0.1f}, {g.x + 0.1f, 0.01f, g.y + 0.1f},
         {g.x + 0.1f, 0.01f, g.y - 0.1f}, {g.x - 0.1f, 0.01f, g.y - 0.1f});
  if (!goals.positions.empty()) asset.meshes.push_back(std::move(goals));
  for (std::size_t i = 0; i < rec.agents; ++i)
    asset.meshes.push_back(pawn(i < rec.radii.size() ? rec.radii[i] : 0.3f,
                                asset.skeleton.joint(int(kFirstAgent + i)).name,
                                int(kFirstAgent + i)));

  Clip clip;
  clip.name = "crowd";
  clip.duration = frames > 1 ? double(frames - 1) / rec.fps : 0;
  clip.sample_rate = rec.fps;
  clip.tracks.resize(std::size_t(asset.skeleton.joint_count()));
  for (std::size_t i = 0; i < rec.agents; ++i) {
    JointTrack& t = clip.tracks[kFirstAgent + i];
    t.translation.times.resize(frames);
    t.rotation.times.resize(frames);
    t.translation.values.resize(frames);
    t.rotation.values.resize(frames);
    Quat previous = Quat::identity();
    for (std::size_t f = 0; f < frames; ++f) {
      const double time = double(f) / rec.fps;
      t.translation.times[f] = t.rotation.times[f] = time;
      t.translation.values[f] = Vec3(rec.positions[f * rec.agents + i]);
      Quat q = Quat::from_axis_angle({0, 1, 0}, double(rec.headings[f * rec.agents + i]));
      if (f > 0 && dot(q, previous) < 0) q = -q;  // the short way round between keys
      t.rotation.values[f] = previous = q;
    }
  }
  if (frames > 1) asset.clips.push_back(std::move(clip));
  asset.source.format = "kinema crowd";
  return asset;
}

}  // namespace kinema::pipeline
