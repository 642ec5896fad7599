// src/pipeline/crowd_layout.h — a walked crowd as a glTF scene for other tools (internal to
// `kinema crowd`): each agent a node keyed every frame (position on the ground, heading) carrying
// a pawn — a low cylinder-and-nose figure of the agent's radius — plus the obstacles, the goals
// and the ground as still meshes.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/math/vec2.h"
#include "kinema/math/vec3.h"

namespace kinema::pipeline {

/// An obstacle of the scene: a disc (`centre`, `radius`) or a box (`lo`, `hi`), ground (x, z).
struct CrowdObstacle {
  bool disc = true;
  Vec2 centre{0, 0}, lo{0, 0}, hi{0, 0};
  double radius = 0;
};

/// The obstacles as one still mesh with flat normals: discs as 24-sided prisms, boxes as boxes,
/// `height` metres tall, obstacle i standing on bases[i] (the ground's height under it, metres;
/// empty: 0). What the glTF scene holds and the pictures draw.
Mesh crowd_obstacle_mesh(std::span<const CrowdObstacle> obstacles,
                         std::span<const float> bases = {}, float height = 1.2f);

/// What the walk recorded: frame f of agent i at positions[f · agents + i] (world metres) facing
/// headings[f · agents + i] (radians about +Y, 0 = +Z), frames `1 / fps` apart.
struct CrowdRecording {
  std::size_t agents = 0;
  double fps = 30;
  std::vector<Vec3f> positions;
  std::vector<float> headings;
  std::vector<float> radii;  ///< per agent, metres
  std::vector<Vec2f> goals;  ///< per agent
};

/// The scene as an asset: root joints "ground", "obstacles", "goals" and one "agent_NNNNN" per
/// agent; clip "crowd" keys every agent's translation and rotation (linear, every recorded
/// frame); meshes hang rigidly from their joints. `lo`, `hi`: the ground's corners.
Asset crowd_layout_asset(const CrowdRecording& recording, std::span<const CrowdObstacle> obstacles,
                         Vec2 lo, Vec2 hi);

}  // namespace kinema::pipeline
