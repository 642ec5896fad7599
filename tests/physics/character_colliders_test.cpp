// Colliders from a character: a skinned cylinder gives a capsule of its radius along its bone that
// turns with the joint; Godette gets capsules of plausible sizes on her skinned bones.
#include "kinema/physics/character_colliders.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

/// A 1 m bone up +Y (joint "root" at the origin, "tip" at y = 1) with a cylinder of radius 0.1
/// around it skinned wholly to the root.
Asset skinned_cylinder() {
  Asset a;
  Joint tip{"tip", 0, {}, {}};
  tip.rest.translation = {0, 1, 0};
  a.skeleton = Skeleton::build({Joint{"root", kNoParent, {}, {}}, tip});
  Mesh m;
  m.name = "cylinder";
  m.skin = 0;
  m.influences = 4;
  for (int ring = 0; ring <= 4; ++ring)
    for (int k = 0; k < 16; ++k) {
      const double angle = 2 * std::numbers::pi * k / 16;
      m.positions.push_back(Vec3f(Vec3{0.1 * std::cos(angle), 0.25 * ring, 0.1 * std::sin(angle)}));
      m.joints.insert(m.joints.end(), {0, 0, 0, 0});
      m.weights.insert(m.weights.end(), {1, 0, 0, 0});
    }
  a.meshes.push_back(m);
  a.skins.push_back(Skin{"skin", {0, 1}, {Mat4::identity(), Mat4::identity()}, 0});
  return a;
}

TEST(CharacterColliders, ASkinnedCylinderGivesACapsuleOfItsRadiusThatTurnsWithTheJoint) {
  const Asset a = skinned_cylinder();
  const std::vector<CharacterCollider> colliders = character_colliders(a);
  ASSERT_EQ(colliders.size(), 1u);  // the tip has no vertices of its own
  const CharacterCollider& c = colliders[0];
  EXPECT_EQ(c.joint, 0);
  EXPECT_EQ(c.shape.shape, ColliderShape::Capsule);
  EXPECT_NEAR(c.shape.radius, 0.1, 1e-6);
  EXPECT_NEAR(length(c.shape.b - Vec3{0, 1, 0}), 0, 1e-12);
  // Turn the root 90° about z: the capsule now points along −x.
  std::vector<Mat4> pose = rest_model_matrices(a.skeleton);
  Transform turned;
  turned.rotation = from_rotation_vector(Vec3{0, 0, std::numbers::pi / 2});
  pose[0] = turned.to_matrix();
  std::vector<Collider> placed;
  pose_character_colliders(colliders, pose, placed);
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_NEAR(length(placed[0].b - Vec3{-1, 0, 0}), 0, 1e-12);
  EXPECT_NEAR(length(placed[0].a), 0, 1e-12);
  EXPECT_THROW(pose_character_colliders(colliders, std::span<const Mat4>(pose).first(0), placed),
               Error);
}

TEST(CharacterColliders, GodetteGetsCapsulesOfPlausibleSizes) {
  const Asset godette = load_asset(test_paths::data_dir() + "/vrm/Godette_vrm_v4.vrm");
  const std::vector<CharacterCollider> colliders = character_colliders(godette);
  EXPECT_GE(colliders.size(), 10u);
  auto radius_of = [&](const std::string& joint) {
    for (const CharacterCollider& c : colliders)
      if (godette.skeleton.joint(c.joint).name == joint) return c.shape.radius;
    ADD_FAILURE() << "no collider on " << joint;
    return 0.0;
  };
  // A low-poly chibi: thin arms, a skirt around the thighs, a big head.
  EXPECT_NEAR(radius_of("upper_arm.l_Armature"), 0.064, 0.01);
  EXPECT_NEAR(radius_of("lowerarm.r_Armature"), 0.045, 0.01);
  EXPECT_NEAR(radius_of("shin.l_Armature"), 0.067, 0.01);
  EXPECT_NEAR(radius_of("chest_Armature"), 0.131, 0.02);
  EXPECT_NEAR(radius_of("head_Armature"), 0.259, 0.03);
  for (const CharacterCollider& c : colliders) EXPECT_GT(c.shape.radius, 0.005);
  EXPECT_THROW(character_colliders(skinned_cylinder(), {.min_weight = 0}), Error);
  Asset bare = skinned_cylinder();
  bare.meshes.clear();
  EXPECT_THROW(character_colliders(bare), Error);
}

}  // namespace
}  // namespace kinema
