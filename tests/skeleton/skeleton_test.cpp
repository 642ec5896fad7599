// Skeleton: building, validation, lookup, FK and its inverse (docs/worked_examples.md,
// "Skeleton and forward kinematics").
#include <gtest/gtest.h>

#include <random>

#include "kinema/core/error.h"
#include "kinema/skeleton/skeleton.h"

namespace kinema {
namespace {

Joint make_joint(std::string name, int parent, Vec3 t = {}, Quat r = Quat::identity()) {
  Joint j;
  j.name = std::move(name);
  j.parent = parent;
  j.rest.translation = t;
  j.rest.rotation = r;
  return j;
}

Quat rot_z(double deg) { return Quat::from_axis_angle({0, 0, 1}, radians(deg)); }

// A four-node tree: A is the root, B is A's child, C and D are B's children.
Skeleton abcd_tree() {
  return Skeleton::build({make_joint("A", kNoParent, {0, 0, 0}), make_joint("B", 0, {1, 0, 0}),
                          make_joint("C", 1, {1, 0, 0}), make_joint("D", 1, {0, 1, 0})},
                         true);
}

TEST(Skeleton, MovingAParentCarriesItsChildren) {
  const Skeleton s = abcd_tree();
  std::vector<Transform> local = s.rest_pose();
  std::vector<Mat4> model(4);
  ASSERT_TRUE(local_to_model(s.parents(), local, model));
  EXPECT_NEAR(distance(model[2].translation_part(), Vec3{2, 0, 0}), 0, 1e-12);
  EXPECT_NEAR(distance(model[3].translation_part(), Vec3{1, 1, 0}), 0, 1e-12);

  // Rotate B by 90° about Z: C and D swing around B, B itself stays; relative placement kept.
  local[1].rotation = rot_z(90);
  ASSERT_TRUE(local_to_model(s.parents(), local, model));
  EXPECT_NEAR(distance(model[1].translation_part(), Vec3{1, 0, 0}), 0, 1e-12);
  EXPECT_NEAR(distance(model[2].translation_part(), Vec3{1, 1, 0}), 0, 1e-12);
  EXPECT_NEAR(distance(model[3].translation_part(), Vec3{0, 0, 0}), 0, 1e-12);

  // Moving A moves everything, and B's placement relative to A is unchanged.
  local[0].translation = {0, 0, 5};
  ASSERT_TRUE(local_to_model(s.parents(), local, model));
  EXPECT_NEAR(distance(model[2].translation_part(), Vec3{1, 1, 5}), 0, 1e-12);
}

TEST(Skeleton, LocalIsInverseParentModelTimesModel) {
  // Row vectors: G = L·P ⇒ L = G·P⁻¹. Column vectors: L = P⁻¹·G.
  const Skeleton s = abcd_tree();
  std::vector<Transform> local = s.rest_pose();
  local[0].rotation = rot_z(30);
  local[1].rotation = Quat::from_axis_angle({1, 1, 0}, 0.4);
  local[2].scale = {1, 1, 1};
  std::vector<Mat4> model(4), back(4);
  ASSERT_TRUE(local_to_model(s.parents(), local, model));
  ASSERT_TRUE(model_to_local(s.parents(), model, back));
  for (int j = 0; j < 4; ++j) {
    const Mat4 expected = local[static_cast<size_t>(j)].to_matrix();
    for (int k = 0; k < 16; ++k)
      EXPECT_NEAR(back[static_cast<size_t>(j)].m[k], expected.m[k], 1e-12);
  }
  // The row-vector form, checked literally with transposes: Lᵀ = Gᵀ·(Pᵀ)⁻¹.
  Mat4 pt_inv;
  ASSERT_TRUE(inverse(transpose(model[1]), pt_inv));
  const Mat4 lt = transpose(model[2]) * pt_inv;
  for (int k = 0; k < 16; ++k) EXPECT_NEAR(lt.m[k], transpose(back[2]).m[k], 1e-12);
}

TEST(Skeleton, FkMatchesHandComputedChain) {
  // Three-joint arm along X: shoulder at origin rotated 90° about Z, elbow 2 m out bent −90°,
  // wrist 1.5 m further. Shoulder → elbow goes up +Y, elbow → wrist goes +X.
  const Skeleton s = Skeleton::build(
      {make_joint("shoulder", kNoParent, {0, 0, 0}, rot_z(90)),
       make_joint("elbow", 0, {2, 0, 0}, rot_z(-90)), make_joint("wrist", 1, {1.5, 0, 0})},
      true);
  std::vector<Mat4> model(3);
  ASSERT_TRUE(local_to_model(s.parents(), s.rest_pose(), model));
  EXPECT_NEAR(distance(model[1].translation_part(), Vec3{0, 2, 0}), 0, 1e-12);
  EXPECT_NEAR(distance(model[2].translation_part(), Vec3{1.5, 2, 0}), 0, 1e-12);
  // With a root transform.
  ASSERT_TRUE(local_to_model(s.parents(), s.rest_pose(), model, Mat4::translation({10, 0, 0})));
  EXPECT_NEAR(distance(model[2].translation_part(), Vec3{11.5, 2, 0}), 0, 1e-12);
}

TEST(Skeleton, BuildReordersParentsFirstAndFinds) {
  // Children listed before parents.
  const Skeleton s = Skeleton::build(
      {make_joint("hand", 2), make_joint("root", kNoParent), make_joint("arm", 1)}, true);
  ASSERT_EQ(s.joint_count(), 3);
  EXPECT_EQ(s.joint(0).name, "root");
  EXPECT_EQ(s.joint(1).name, "arm");
  EXPECT_EQ(s.joint(2).name, "hand");
  EXPECT_EQ(s.parent(2), 1);
  EXPECT_EQ(s.find("hand"), 2);
  EXPECT_EQ(s.find("nope"), -1);
  EXPECT_EQ(s.build_order()[0], 2);  // input joint 0 ("hand") is now joint 2
  EXPECT_EQ(s.depth(2), 2);
  EXPECT_EQ(s.children(0), std::vector<int>{1});
  EXPECT_EQ(s.roots(), std::vector<int>{0});
}

TEST(Skeleton, AlreadySortedInputKeepsItsOrder) {
  const Skeleton s =
      Skeleton::build({make_joint("a", kNoParent), make_joint("b", 0), make_joint("c", kNoParent),
                       make_joint("d", 2), make_joint("e", 1)});
  const char* expected[] = {"a", "b", "c", "d", "e"};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.joint(i).name, expected[i]);
  EXPECT_EQ(s.roots().size(), 2u);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Skeleton, ValidationErrorsNameTheJoint) {
  EXPECT_NE(error_of([] {
              Skeleton::build({make_joint("a", 1), make_joint("b", 0)}, false, "f.bvh");
            }).find("cycle"),
            std::string::npos);
  const std::string unknown = error_of([] {
    Skeleton::build({make_joint("a", kNoParent), make_joint("b", 7)}, false, "x.gltf");
  });
  EXPECT_NE(unknown.find("x.gltf"), std::string::npos);
  EXPECT_NE(unknown.find("'b'"), std::string::npos);
  EXPECT_NE(unknown.find("unknown parent"), std::string::npos);
  EXPECT_NE(error_of([] { Skeleton::build({make_joint("a", 0)}); }).find("own parent"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              Skeleton::build({make_joint("a", kNoParent), make_joint("a", 0)});
            }).find("duplicate"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              Skeleton::build({make_joint("a", kNoParent), make_joint("b", kNoParent)}, true);
            }).find("2 root joints"),
            std::string::npos);
  EXPECT_NE(error_of([] { Skeleton::build({make_joint("", kNoParent)}); }).find("no name"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              Skeleton::build({make_joint("a", kNoParent, {NAN, 0, 0})});
            }).find("not finite"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              Joint j = make_joint("a", kNoParent);
              j.rest.rotation = {0, 0, 0, 0};
              Skeleton::build({j});
            }).find("zero quaternion"),
            std::string::npos);
  // A longer cycle that does not touch the root.
  EXPECT_NE(error_of([] {
              Skeleton::build({make_joint("r", kNoParent), make_joint("a", 3), make_joint("b", 1),
                               make_joint("c", 2)});
            }).find("cycle"),
            std::string::npos);
}

TEST(Skeleton, FkRejectsMismatchedSpans) {
  const Skeleton s = abcd_tree();
  std::vector<Mat4> model(3);
  EXPECT_FALSE(local_to_model(s.parents(), s.rest_pose(), model));
  const int bad_parents[] = {kNoParent, 2, 0};  // child before parent
  std::vector<Transform> local(3);
  std::vector<Mat4> out(3);
  EXPECT_FALSE(local_to_model(bad_parents, local, out));
}

TEST(Skeleton, RandomTreesKeepBoneLengthsAndRoundTrip) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<Joint> joints;
    const int n = 2 + static_cast<int>(rng() % 80);
    for (int i = 0; i < n; ++i) {
      const int parent = i == 0 ? kNoParent : static_cast<int>(rng() % static_cast<unsigned>(i));
      joints.push_back(make_joint("j" + std::to_string(i), parent, {u(rng), u(rng), u(rng)}));
    }
    const Skeleton s = Skeleton::build(joints, true);
    std::vector<Transform> local = s.rest_pose();
    for (Transform& t : local) t.rotation = normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
    std::vector<Mat4> model(static_cast<size_t>(n)), back(static_cast<size_t>(n));
    ASSERT_TRUE(local_to_model(s.parents(), local, model));
    for (int j = 1; j < n; ++j) {
      const double bone = distance(model[static_cast<size_t>(j)].translation_part(),
                                   model[static_cast<size_t>(s.parent(j))].translation_part());
      EXPECT_NEAR(bone, length(s.joint(j).rest.translation), 1e-12);
    }
    ASSERT_TRUE(model_to_local(s.parents(), model, back));
    for (int j = 0; j < n; ++j) {
      const Mat4 expected = local[static_cast<size_t>(j)].to_matrix();
      for (int k = 0; k < 16; ++k)
        EXPECT_NEAR(back[static_cast<size_t>(j)].m[k], expected.m[k], 1e-9);
    }
  }
}

TEST(Skeleton, InverseBindFromRestGivesIdentitySkinning) {
  const Skeleton s = Skeleton::build(
      {make_joint("a", kNoParent, {0, 1, 0}, rot_z(20)),
       make_joint("b", 0, {0, 0.5, 0}, rot_z(-45)), make_joint("c", 1, {0.3, 0.2, 0.1})},
      true);
  const std::vector<Mat4> model = rest_model_matrices(s);
  const std::vector<Mat4> ibm = inverse_bind_from_rest(s);
  std::vector<Mat4> skin(3);
  ASSERT_TRUE(skinning_matrices(model, ibm, skin));
  for (const Mat4& m : skin)
    for (int k = 0; k < 16; ++k) EXPECT_NEAR(m.m[k], Mat4::identity().m[k], 1e-12);
}

TEST(Skeleton, RenameKeepsLookupCoherent) {
  Skeleton s = abcd_tree();
  s.rename(2, "C2");
  EXPECT_EQ(s.find("C2"), 2);
  EXPECT_EQ(s.find("C"), -1);
  EXPECT_THROW(s.rename(3, "B"), Error);
}

}  // namespace
}  // namespace kinema
