// The body surface arm clearance pushes arms out of, and the arms' radii: which vertices are
// body, outward normals, grid thinning, radii along the bone, the errors, and thread safety.
#include "kinema/retarget/body_surface.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/math/scalar.h"
#include "kinema/retarget/humanoid.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();
// The skinned humanoid in tests/data (the debug robot has no skinned mesh: it is the error case).
const std::vector<std::string> kCharacters = {"vrm/Godette_vrm_v4.vrm"};

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// The mapped bone at or above `joint` ("" when none).
std::string owner_bone(const Skeleton& skeleton, const Humanoid& map, int joint) {
  for (int j = joint; j >= 0; j = skeleton.parent(j))
    for (const auto& [bone, mapped] : map.bones)
      if (mapped == j) return bone;
  return "";
}

bool is_arm_bone(const std::string& bone) {
  for (const char* word : {"Shoulder", "Arm", "Hand", "Thumb", "Index", "Middle", "Ring", "Little"})
    if (bone.find(word) != std::string::npos) return true;
  return false;
}

/// A vertex's weight per skeleton joint.
std::map<int, float> joint_weights(const Asset& a, int mesh, int vertex) {
  const Mesh& m = a.meshes[size_t(mesh)];
  std::map<int, float> w;
  for (int k = 0; k < m.influences; ++k) {
    const size_t pair = size_t(vertex) * size_t(m.influences) + size_t(k);
    w[a.skins[size_t(m.skin)].joints[m.joints[pair]]] += m.weights[pair];
  }
  return w;
}

/// The rest pose with the upper arms lowered by `arm_deg` and the spine bent forward by
/// `bend_deg` (rotations in the parent's frame).
std::vector<Mat4> posed(const Skeleton& sk, const Humanoid& map, double arm_deg, double bend_deg) {
  std::vector<Transform> local = sk.rest_pose();
  auto turn = [&](const char* bone, const Vec3& axis, double deg) {
    const int j = map.find(bone);
    if (j >= 0)
      local[size_t(j)].rotation =
          Quat::from_axis_angle(axis, deg * kPi / 180) * local[size_t(j)].rotation;
  };
  turn("leftUpperArm", {0, 0, 1}, -arm_deg);
  turn("rightUpperArm", {0, 0, 1}, arm_deg);
  turn("spine", {1, 0, 0}, bend_deg);
  std::vector<Mat4> model(local.size());
  local_to_model(sk.parents(), local, model);
  return model;
}

struct Character {
  Asset asset;
  Humanoid map;
  explicit Character(const std::string& file)
      : asset(load_asset(kData + "/" + file)), map(require_humanoid(asset, file)) {}
};

TEST(BodySurface, KeepsNoVertexFollowingAnArmOrShoulder) {
  for (const std::string& file : kCharacters) {
    SCOPED_TRACE(file);
    const Character c(file);
    const BodySurfaceModel model(c.asset, c.map, {}, file);
    EXPECT_GT(model.vertex_count(), 200u);
    ASSERT_EQ(model.kept_vertices().size(), model.vertex_count());
    for (const auto& ref : model.kept_vertices()) {
      const std::map<int, float> w = joint_weights(c.asset, ref.mesh, ref.vertex);
      int dominant = -1;
      float arm = 0;
      for (const auto& [joint, weight] : w) {
        if (dominant < 0 || weight > w.at(dominant)) dominant = joint;
        if (is_arm_bone(owner_bone(c.asset.skeleton, c.map, joint))) arm += weight;
      }
      const std::string bone = owner_bone(c.asset.skeleton, c.map, dominant);
      EXPECT_FALSE(is_arm_bone(bone)) << bone;
      EXPECT_LT(arm, 0.15f);
      EXPECT_TRUE(std::set<std::string>({"hips", "spine", "chest", "upperChest", "neck", "head",
                                         "leftUpperLeg", "rightUpperLeg"})
                      .count(bone))
          << bone;
    }
  }
}

/// The axis a body vertex owned by `bone` is tested against, as body_surface.h documents it:
/// the next mapped bone up the torso chain, the lower leg for a thigh; for the head, a ray from
/// the head joint up the direction from the bone below it (returned as {from, below}, ray = true).
struct DocumentedAxis {
  int from = -1, to = -1;
  bool ray = false;
};

DocumentedAxis documented_axis(const Humanoid& map, const std::string& bone) {
  const std::vector<std::string> chain = {"hips", "spine", "chest", "upperChest", "neck", "head"};
  const int from = map.find(bone);
  const auto at = std::find(chain.begin(), chain.end(), bone);
  if (at == chain.end()) {
    const std::string side = bone.substr(0, bone.find("Upper"));
    const int knee = map.find(side + "LowerLeg");
    return {from, knee >= 0 ? knee : from};
  }
  if (bone == "head") {
    for (auto below = at; below != chain.begin();)
      if (map.find(*--below) >= 0) return {from, map.find(*below), true};
  }
  for (auto next = at + 1; next != chain.end(); ++next)
    if (map.find(*next) >= 0) return {from, map.find(*next)};
  return {from, from};
}

/// `p` minus its closest point on the axis in `pose`.
Vec3 away_from_axis(const DocumentedAxis& axis, std::span<const Mat4> pose, const Vec3& p) {
  const Vec3 a = pose[size_t(axis.from)].translation_part();
  if (axis.ray) {
    const Vec3 up = normalize(a - pose[size_t(axis.to)].translation_part());
    return p - (a + up * std::max(0.0, dot(p - a, up)));
  }
  const Vec3 b = pose[size_t(axis.to)].translation_part();
  const double t =
      axis.from == axis.to ? 0.0 : std::clamp(dot(p - a, b - a) / length_squared(b - a), 0.0, 1.0);
  return p - (a + (b - a) * t);
}

/// Linear blend skinning of one mesh vertex, in double precision, written out here.
Vec3 skinned(const Asset& a, std::span<const Mat4> model, int mesh, int vertex) {
  const Mesh& m = a.meshes[size_t(mesh)];
  const Skin& skin = a.skins[size_t(m.skin)];
  Vec3 p{0, 0, 0};
  for (int k = 0; k < m.influences; ++k) {
    const size_t pair = size_t(vertex) * size_t(m.influences) + size_t(k);
    const size_t j = m.joints[pair];
    p += (model[size_t(skin.joints[j])] * skin.inverse_bind[j])
             .transform_point(Vec3(m.positions[size_t(vertex)])) *
         double(m.weights[pair]);
  }
  return p;
}

// Property: at rest and in a bent pose, the surface's points are the kept vertices in order
// (some left out), skinned; every normal is unit and points away from the axis of the bone the
// vertex follows most (cos ≥ −0.1, the documented tolerance); the points left out are few.
TEST(BodySurface, NormalsAreUnitAndPointOutward) {
  for (const std::string& file : kCharacters) {
    SCOPED_TRACE(file);
    const Character c(file);
    const BodySurfaceModel model(c.asset, c.map, {}, file);
    for (const auto& [arm, bend] : {std::pair{0.0, 0.0}, std::pair{70.0, 25.0}}) {
      const std::vector<Mat4> pose = posed(c.asset.skeleton, c.map, arm, bend);
      BodySurface s;
      model.surface(pose, s);
      ASSERT_EQ(s.points.size(), s.normals.size());
      EXPECT_GT(s.points.size(), model.vertex_count() * 85 / 100) << "arm " << arm;
      size_t next = 0;
      for (const auto& ref : model.kept_vertices()) {
        if (next == s.points.size()) break;
        const Vec3 p = skinned(c.asset, pose, ref.mesh, ref.vertex);
        if (distance(p, Vec3(s.points[next])) > 1e-4) continue;  // left out: inward
        const Vec3 n(s.normals[next++]);
        EXPECT_NEAR(length(n), 1.0, 1e-4);
        int dominant = -1;
        const std::map<int, float> w = joint_weights(c.asset, ref.mesh, ref.vertex);
        for (const auto& [joint, weight] : w)
          if (dominant < 0 || weight > w.at(dominant)) dominant = joint;
        const DocumentedAxis axis =
            documented_axis(c.map, owner_bone(c.asset.skeleton, c.map, dominant));
        const Vec3 away = away_from_axis(axis, pose, p);
        EXPECT_GE(dot(n, away), -0.1 * length(away) - 1e-6) << "arm " << arm;
      }
      EXPECT_EQ(next, s.points.size()) << "every point is a kept vertex, in order";
    }
  }
}

TEST(BodySurface, ThinningLeavesAtMostOnePointPerCellAtRest) {
  for (const std::string& file : kCharacters) {
    SCOPED_TRACE(file);
    const Character c(file);
    size_t coarse_count = 0;
    for (const double grid : {0.025, 0.05}) {
      BodySurfaceOptions options;
      options.grid_m = grid;
      const BodySurfaceModel model(c.asset, c.map, options, file);
      BodySurface s;
      model.surface(rest_model_matrices(c.asset.skeleton), s);
      std::set<std::tuple<long, long, long>> cells;
      for (const Vec3f& p : s.points)
        EXPECT_TRUE(cells
                        .insert({std::lround(std::floor(double(p.x) / grid)),
                                 std::lround(std::floor(double(p.y) / grid)),
                                 std::lround(std::floor(double(p.z) / grid))})
                        .second)
            << "two points in one " << grid << " m cell";
      if (grid > 0.03) {
        EXPECT_LT(model.vertex_count(), coarse_count) << "a coarser grid keeps fewer";
      }
      coarse_count = model.vertex_count();
    }
  }
}

TEST(BodySurface, RadiiArePositiveAndPlausible) {
  for (const std::string& file : kCharacters) {
    SCOPED_TRACE(file);
    const Character c(file);
    const BodySurfaceModel model(c.asset, c.map, {}, file);
    for (const ArmRadii& arm : model.arm_radii())
      for (const RadiusProfile* p : {&arm.upper, &arm.fore, &arm.hand}) {
        ASSERT_FALSE(p->radius_m.empty());
        for (const double r : p->radius_m) {
          EXPECT_GE(r, 0.01);
          EXPECT_LE(r, 0.08);
        }
      }
  }
}

// Godette's upper arm is thickest at the shoulder (its sleeve) and thin at the elbow. (Her
// forearm is not a test of thinning towards the wrist: a glove cuff makes it 4.5 cm there
// against 3.8 cm below the elbow; the tapered synthetic forearm below is.)
TEST(BodySurface, GodettesRadiiVaryAlongTheBone) {
  const Character c("vrm/Godette_vrm_v4.vrm");
  const BodySurfaceModel model(c.asset, c.map, {}, "Godette_vrm_v4.vrm");
  for (const ArmRadii& arm : model.arm_radii()) {
    EXPECT_EQ(arm.upper.radius_m.size(), 8u);
    EXPECT_EQ(arm.fore.radius_m.size(), 8u);
    EXPECT_LT(arm.upper.at(1.0), arm.upper.at(0.0) - 0.01);
    EXPECT_GT(arm.fore.at(1.0), arm.fore.at(0.0)) << "the cuff";
  }
}

TEST(BodySurface, RadiusProfileInterpolatesAndClamps) {
  const RadiusProfile p{{0.04, 0.02, 0.03}};
  EXPECT_DOUBLE_EQ(p.at(-1), 0.04);
  EXPECT_DOUBLE_EQ(p.at(0.25), 0.03);
  EXPECT_DOUBLE_EQ(p.at(0.5), 0.02);
  EXPECT_DOUBLE_EQ(p.at(0.75), 0.025);
  EXPECT_DOUBLE_EQ(p.at(2), 0.03);
  EXPECT_DOUBLE_EQ(RadiusProfile{{0.05}}.at(0.3), 0.05);
}

TEST(BodySurface, GodettesArmsEndAtTheMiddleFingerWithAFingertipPerFinger) {
  const Character c("vrm/Godette_vrm_v4.vrm");
  const auto arms = humanoid_arms(c.asset.skeleton, c.map, "Godette_vrm_v4.vrm");
  for (int side = 0; side < 2; ++side) {
    const std::string s = side == 0 ? "left" : "right";
    const ArmJoints& arm = arms[size_t(side)];
    EXPECT_EQ(arm.shoulder, c.map.find(s + "UpperArm"));
    EXPECT_EQ(arm.elbow, c.map.find(s + "LowerArm"));
    EXPECT_EQ(arm.wrist, c.map.find(s + "Hand"));
    EXPECT_EQ(arm.hand_tip_joint, c.map.find(s + "MiddleProximal"));
    EXPECT_GT(arm.hand_length_m, 0.04);
    EXPECT_LT(arm.hand_length_m, 0.15);
    // Godette has four fingers: no ring finger.
    ASSERT_EQ(arm.fingertip_joints.size(), 4u);
    ASSERT_EQ(arm.fingertip_offsets.size(), 4u);
    EXPECT_EQ(arm.fingertip_joints[0], c.map.find(s + "ThumbDistal"));
    EXPECT_EQ(arm.fingertip_joints[1], c.map.find(s + "IndexDistal"));
    EXPECT_EQ(arm.fingertip_joints[2], c.map.find(s + "MiddleDistal"));
    EXPECT_EQ(arm.fingertip_joints[3], c.map.find(s + "LittleDistal"));
    for (const Vec3& offset : arm.fingertip_offsets) {
      EXPECT_GT(length(offset), 0.005);
      EXPECT_LT(length(offset), 0.06);
    }
  }
}

TEST(BodySurface, MissingArmBoneIsAnErrorNamingTheFileAndBone) {
  const Character c("vrm/debug_robot.vrm");
  Humanoid map = c.map;
  std::erase_if(map.bones, [](const auto& b) { return b.first == "rightLowerArm"; });
  const std::string e = error_of([&] { humanoid_arms(c.asset.skeleton, map, "robot.vrm"); });
  EXPECT_NE(e.find("robot.vrm"), std::string::npos) << e;
  EXPECT_NE(e.find("rightLowerArm"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { BodySurfaceModel(c.asset, map, {}, "robot.vrm"); }), "");
  Humanoid no_spine = c.map;
  std::erase_if(no_spine.bones, [](const auto& b) { return b.first == "spine"; });
  const std::string s = error_of([&] { BodySurfaceModel(c.asset, no_spine, {}, "robot.vrm"); });
  EXPECT_NE(s.find("spine"), std::string::npos) << s;
}

// The debug robot is a skeleton with axis gizmos (rigid meshes), and Godette without her skin.
TEST(BodySurface, CharacterWithoutSkinIsAnError) {
  const Character robot("vrm/debug_robot.vrm");
  const std::string e =
      error_of([&] { BodySurfaceModel(robot.asset, robot.map, {}, "robot.vrm"); });
  EXPECT_NE(e.find("robot.vrm"), std::string::npos) << e;
  EXPECT_NE(e.find("no skinned mesh"), std::string::npos) << e;
  Character godette("vrm/Godette_vrm_v4.vrm");
  for (Mesh& m : godette.asset.meshes) m.skin = -1;
  EXPECT_NE(error_of([&] {
              BodySurfaceModel(godette.asset, godette.map, {}, "g.vrm");
            }).find("no skinned mesh"),
            std::string::npos);
}

// Every weight on the torso (hips … upper chest and the joints hanging from them) moved to the
// head: no vertex is torso any more.
TEST(BodySurface, CharacterWithoutTorsoWeightsIsAnError) {
  Character c("vrm/Godette_vrm_v4.vrm");
  for (Mesh& m : c.asset.meshes) {
    if (m.skin < 0) continue;
    const Skin& skin = c.asset.skins[size_t(m.skin)];
    const auto head = std::find(skin.joints.begin(), skin.joints.end(), c.map.find("head"));
    ASSERT_NE(head, skin.joints.end());
    for (uint16_t& j : m.joints) {
      const std::string bone = owner_bone(c.asset.skeleton, c.map, skin.joints[j]);
      if (bone == "hips" || bone == "spine" || bone == "chest" || bone == "upperChest")
        j = uint16_t(head - skin.joints.begin());
    }
  }
  const std::string e = error_of([&] { BodySurfaceModel(c.asset, c.map, {}, "godette.vrm"); });
  EXPECT_NE(e.find("godette.vrm"), std::string::npos) << e;
  EXPECT_NE(e.find("torso"), std::string::npos) << e;
}

/// A cylinder torso (radius 0.15 m, around the spine) with an inner layer 2 cm inside it whose
/// normals face inward (clothing's inner faces), all weighted to the spine, plus two outer
/// vertices that follow the left upper arm by 20 % and by 10 %, and a left forearm tapering from
/// 4 cm at the elbow to 2.5 cm at the wrist.
struct CylinderBody {
  Asset asset;
  Humanoid map;
  size_t outer = 0, inner = 0;
  int twenty_percent = -1, ten_percent = -1;

  CylinderBody() {
    const std::vector<std::tuple<const char*, int, Vec3>> joints = {
        {"hips", -1, {0, 1.0, 0}},
        {"spine", 0, {0, 0.15, 0}},
        {"chest", 1, {0, 0.15, 0}},
        {"neck", 2, {0, 0.2, 0}},
        {"head", 3, {0, 0.1, 0}},
        {"leftUpperArm", 2, {0.2, 0.15, 0}},
        {"leftLowerArm", 5, {0.25, 0, 0}},
        {"leftHand", 6, {0.25, 0, 0}},
        {"rightUpperArm", 2, {-0.2, 0.15, 0}},
        {"rightLowerArm", 8, {-0.25, 0, 0}},
        {"rightHand", 9, {-0.25, 0, 0}}};
    std::vector<Joint> list;
    for (const auto& [name, parent, offset] : joints) {
      Joint j;
      j.name = name;
      j.parent = parent;
      j.rest.translation = offset;
      list.push_back(j);
      map.bones.push_back({name, int(list.size()) - 1});
    }
    asset.skeleton = Skeleton::build(list);
    Skin skin;
    for (int j = 0; j < int(list.size()); ++j) skin.joints.push_back(j);
    skin.inverse_bind = inverse_bind_from_rest(asset.skeleton);
    asset.skins.push_back(skin);
    Mesh mesh;
    mesh.skin = 0;
    mesh.influences = 4;
    auto add = [&](const Vec3f& p, const Vec3f& n, float arm_weight) {
      mesh.positions.push_back(p);
      mesh.normals.push_back(n);
      for (const uint16_t j : {uint16_t(1), uint16_t(5), uint16_t(0), uint16_t(0)})
        mesh.joints.push_back(j);
      for (const float w : {1 - arm_weight, arm_weight, 0.0f, 0.0f}) mesh.weights.push_back(w);
    };
    for (int row = 0; row <= 10; ++row)
      for (int k = 0; k < 24; ++k) {
        const float a = float(k) * float(kPi) / 12, y = 0.95f + 0.05f * float(row);
        const Vec3f radial{std::cos(a), 0, std::sin(a)};
        add(Vec3f{0, y, 0} + radial * 0.15f, radial, 0), ++outer;
        add(Vec3f{0, y, 0} + radial * 0.13f, -radial, 0), ++inner;
      }
    const Vec3f radial{std::cos(0.13f), 0, std::sin(0.13f)};
    twenty_percent = int(mesh.positions.size());
    add(Vec3f{0, 1.225f, 0} + radial * 0.15f, radial, 0.2f);
    ten_percent = int(mesh.positions.size());
    add(Vec3f{0, 1.275f, 0} + radial * 0.15f, radial, 0.1f);
    for (int ring = 0; ring <= 10; ++ring)
      for (int k = 0; k < 12; ++k) {
        const float a = float(k) * float(kPi) / 6, t = 0.1f * float(ring);
        const Vec3f radial{0, std::cos(a), std::sin(a)};
        const Vec3f elbow{0.45f, 1.45f, 0}, wrist{0.7f, 1.45f, 0};
        add(lerp(elbow, wrist, t) + radial * (0.04f - 0.015f * t), radial, 0);
        for (size_t i = mesh.joints.size() - 4; i < mesh.joints.size(); ++i)
          mesh.joints[i] = 6, mesh.weights[i] = i + 4 == mesh.joints.size() ? 1.0f : 0.0f;
      }
    asset.meshes.push_back(mesh);
  }
};

TEST(BodySurface, SyntheticTorsoDropsInnerFacesAndVerticesFollowingAnArm) {
  const CylinderBody body;
  BodySurfaceOptions options;
  options.grid_m = 0.001;  // keep every vertex: only the other steps remove any
  const BodySurfaceModel model(body.asset, body.map, options, "cylinder");
  EXPECT_EQ(model.vertex_count(), body.outer + body.inner + 1)
      << "the 20 % arm vertex and the forearm are not body";
  std::set<int> kept;
  for (const auto& ref : model.kept_vertices()) kept.insert(ref.vertex);
  EXPECT_EQ(kept.count(body.twenty_percent), 0u);
  EXPECT_EQ(kept.count(body.ten_percent), 1u);
  for (const auto& [arm, bend] : {std::pair{0.0, 0.0}, std::pair{0.0, 30.0}}) {
    const std::vector<Mat4> pose = posed(body.asset.skeleton, body.map, arm, bend);
    BodySurface s;
    model.surface(pose, s);
    EXPECT_EQ(s.points.size(), body.outer + 1) << "the inner faces are dropped";
    // In the spine's frame every point is on the outer cylinder with a radial normal.
    Mat4 to_spine;
    ASSERT_TRUE(inverse(pose[1], to_spine));
    for (size_t i = 0; i < s.points.size(); ++i) {
      const Vec3 p = to_spine.transform_point(Vec3(s.points[i]));
      const Vec3 n = to_spine.transform_vector(Vec3(s.normals[i]));
      EXPECT_NEAR(std::hypot(p.x, p.z), 0.15, 1e-4);
      EXPECT_GT(dot(n, normalize(Vec3{p.x, 0, p.z})), 0.999);
    }
  }
  // The default grid thins the cylinder (3.9 cm around, 5 cm up: about one vertex per cell).
  const BodySurfaceModel thinned(body.asset, body.map, {}, "cylinder");
  EXPECT_LT(thinned.vertex_count(), model.vertex_count());
}

TEST(BodySurface, SyntheticArmsWithoutFingersExtendTheForearm) {
  const CylinderBody body;
  const auto arms = humanoid_arms(body.asset.skeleton, body.map, "cylinder");
  for (const ArmJoints& arm : arms) {
    EXPECT_EQ(arm.hand_tip_joint, -1);
    EXPECT_NEAR(arm.hand_length_m, 0.4 * 0.25, 1e-9);
    EXPECT_TRUE(arm.fingertip_joints.empty());
  }
  const BodySurfaceModel model(body.asset, body.map, {}, "cylinder");
  // No vertex on the other bones: every radius is 4 % of its bone (the hand: of the forearm).
  EXPECT_NEAR(model.arm_radii()[0].upper.at(0.5), 0.04 * 0.25, 1e-9);
  EXPECT_NEAR(model.arm_radii()[1].fore.at(0.5), 0.04 * 0.25, 1e-9);
  EXPECT_NEAR(model.arm_radii()[1].hand.at(0.5), 0.04 * 0.25, 1e-9);
}

TEST(BodySurface, TaperedForearmIsThinnerAtTheWristThanAtTheElbow) {
  const CylinderBody body;
  const BodySurfaceModel model(body.asset, body.map, {}, "cylinder");
  const RadiusProfile& fore = model.arm_radii()[0].fore;
  ASSERT_EQ(fore.radius_m.size(), 8u);
  for (const double t : {0.0, 0.3, 0.5, 1.0}) EXPECT_NEAR(fore.at(t), 0.04 - 0.015 * t, 2e-3) << t;
  for (size_t k = 1; k < fore.radius_m.size(); ++k)
    EXPECT_LE(fore.radius_m[k], fore.radius_m[k - 1] + 1e-9);
}

TEST(BodySurface, SurfaceIsTheSameFromSeveralThreads) {
  const Character c("vrm/Godette_vrm_v4.vrm");
  const BodySurfaceModel model(c.asset, c.map, {}, "Godette_vrm_v4.vrm");
  std::vector<std::vector<Mat4>> poses;
  for (int k = 0; k < 16; ++k)
    poses.push_back(posed(c.asset.skeleton, c.map, 5.0 * k, 2.0 * k - 10));
  std::vector<BodySurface> serial(poses.size());
  for (size_t k = 0; k < poses.size(); ++k) model.surface(poses[k], serial[k]);
  std::vector<std::vector<BodySurface>> threaded(4, std::vector<BodySurface>(poses.size()));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < threaded.size(); ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round)
        for (size_t k = 0; k < poses.size(); ++k) model.surface(poses[k], threaded[t][k]);
    });
  for (std::thread& t : threads) t.join();
  for (const auto& results : threaded)
    for (size_t k = 0; k < poses.size(); ++k) {
      EXPECT_EQ(results[k].points, serial[k].points);
      EXPECT_EQ(results[k].normals, serial[k].normals);
    }
  BodySurface wrong_size;
  model.surface(std::span<const Mat4>(poses[0]).first(3), wrong_size);
  EXPECT_TRUE(wrong_size.points.empty());
}

}  // namespace
}  // namespace kinema
