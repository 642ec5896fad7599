// BVH writing: lossless read→write→read on real CMU files, world positions kept through a
// BVH→BVH round trip, rest rotations folded into the channels, default layouts, errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "kinema/math/euler.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();
const std::string kCmuWalk = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";
const std::string kCc3Walk = kData + "/bvh/cmu_iclone_cc3/007_12.bvh";

std::vector<Mat4> model_at(const Asset& a, double t) {
  return sample_model_pose(a.clips[0], a.skeleton, t);
}

/// Largest rotation angle and position difference between the keys of two clips on skeletons
/// with the same joints (the root's rest translation may differ: it is compared in world space
/// through the track, which holds the full local translation).
void expect_same_keys(const Asset& a, const Asset& b, double tol) {
  ASSERT_EQ(a.skeleton.joint_count(), b.skeleton.joint_count());
  const Clip& ca = a.clips[0];
  const Clip& cb = b.clips[0];
  EXPECT_NEAR(ca.sample_rate, cb.sample_rate, 1e-6 * ca.sample_rate);
  EXPECT_NEAR(ca.duration, cb.duration, 1e-9);
  double worst_angle = 0, worst_pos = 0;
  for (int j = 0; j < a.skeleton.joint_count(); ++j) {
    ASSERT_EQ(a.skeleton.joint(j).name, b.skeleton.joint(j).name);
    EXPECT_EQ(a.skeleton.parent(j), b.skeleton.parent(j));
    const JointTrack& ta = ca.tracks[static_cast<size_t>(j)];
    const JointTrack& tb = cb.tracks[static_cast<size_t>(j)];
    ASSERT_EQ(ta.rotation.key_count(), tb.rotation.key_count()) << j;
    ASSERT_EQ(ta.translation.key_count(), tb.translation.key_count()) << j;
    for (size_t k = 0; k < ta.rotation.key_count(); ++k) {
      EXPECT_NEAR(ta.rotation.times[k], tb.rotation.times[k], 1e-9);
      worst_angle =
          std::max(worst_angle, angle_between(ta.rotation.values[k], tb.rotation.values[k]));
    }
    for (size_t k = 0; k < ta.translation.key_count(); ++k)
      worst_pos = std::max(worst_pos, distance(ta.translation.values[k], tb.translation.values[k]));
    if (ta.translation.empty())
      worst_pos = std::max(worst_pos, distance(a.skeleton.joint(j).rest.translation,
                                               b.skeleton.joint(j).rest.translation));
  }
  EXPECT_LT(worst_angle, tol);
  EXPECT_LT(worst_pos, tol);
}

/// Largest world-position difference over every joint and frame.
double world_difference(const Asset& a, const Asset& b, int frames, double rate) {
  double worst = 0;
  for (int f = 0; f < frames; ++f) {
    const double t = f / rate;
    const auto ma = model_at(a, t), mb = model_at(b, t);
    for (size_t j = 0; j < ma.size(); ++j)
      worst = std::max(worst, distance(ma[j].translation_part(), mb[j].translation_part()));
  }
  return worst;
}

TEST(Bvh, RoundTripCmuWalkIsLossless) {
  const Asset a = read_bvh(kCmuWalk);
  const std::string text = format_bvh(a);
  const Asset b = parse_bvh(text, "02_01.bvh");
  EXPECT_EQ(b.source.unit_name, "cmu-asf");
  EXPECT_DOUBLE_EQ(b.source.unit_in_meters, a.source.unit_in_meters);
  EXPECT_EQ(b.clips[0].frame_count(), 343);
  expect_same_keys(a, b, 1e-6);
  // Layout and End Sites come back unchanged.
  for (size_t j = 0; j < a.bvh_layout.size(); ++j) {
    EXPECT_EQ(a.bvh_layout[j].channels, b.bvh_layout[j].channels);
    EXPECT_EQ(a.bvh_layout[j].has_end_site, b.bvh_layout[j].has_end_site);
    EXPECT_LT(distance(a.bvh_layout[j].end_site, b.bvh_layout[j].end_site), 1e-9);
  }
  // The header keeps the source's frame time, and roots get OFFSET 0 0 0.
  EXPECT_NE(text.find("Frame Time: 0.008333\n"), std::string::npos);
  EXPECT_NE(text.find("ROOT Hips\n{\n\tOFFSET 0 0 0\n"), std::string::npos);
  EXPECT_LT(world_difference(a, b, 343, a.clips[0].sample_rate), 1e-6);
}

TEST(Bvh, RoundTripIcloneCc3KeepsWorldPositions) {
  const Asset a = read_bvh(kCc3Walk);
  const Asset b = parse_bvh(format_bvh(a), "007_12.bvh");
  EXPECT_EQ(b.source.unit_name, "cm");
  expect_same_keys(a, b, 1e-6);
  // The root's OFFSET (105 cm) moved into its position channels: world positions are unchanged.
  EXPECT_NEAR(b.skeleton.joint(0).rest.translation.y, 0.0, 1e-12);
  EXPECT_LT(world_difference(a, b, 132, a.clips[0].sample_rate), 1e-6);
  // Writing the result again is a fixed point.
  EXPECT_EQ(format_bvh(b), format_bvh(parse_bvh(format_bvh(b), "again.bvh")));
}

TEST(Bvh, WriteBvhToFileAndReadBack) {
  const Asset a = read_bvh(kCmuWalk);
  const auto dir = std::filesystem::temp_directory_path() / "kinema_bvh_write_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "walk copy.bvh").string();
  write_bvh(a, path);
  const Asset b = read_bvh(path);
  EXPECT_EQ(b.clips[0].name, "walk copy");
  expect_same_keys(a, b, 1e-6);
  std::filesystem::remove_all(dir);
}

TEST(Bvh, WriteOptionsUnitAndFrameRate) {
  const Asset a = read_bvh(kCmuWalk);
  BvhWriteOptions o;
  o.unit_in_meters = 0.01;
  o.frame_rate = 30;
  const std::string text = format_bvh(a, o);
  EXPECT_NE(text.find("Frames: 86\n"), std::string::npos);  // round(342 · 0.008333 · 30) + 1
  BvhReadOptions ro;
  ro.unit_in_meters = 0.01;
  const Asset b = parse_bvh(text, "30fps.bvh", ro);
  EXPECT_NEAR(b.clips[0].sample_rate, 30, 1e-6);
  // Frame 10 of the 30 fps file is the source sampled at 1/3 s.
  const auto ma = model_at(a, 10.0 / 30), mb = model_at(b, 10.0 / 30);
  for (size_t j = 0; j < ma.size(); ++j)
    EXPECT_LT(distance(ma[j].translation_part(), mb[j].translation_part()), 1e-6);
}

// A glTF-like skeleton: rest rotations that BVH cannot hold in OFFSET, a joint animated only
// by its rest, two roots, translation animated on a child.
Asset gltf_like() {
  auto joint = [](std::string name, int parent, Vec3 t, Quat r) {
    Joint j;
    j.name = std::move(name);
    j.parent = parent;
    j.rest.translation = t;
    j.rest.rotation = r;
    return j;
  };
  const Quat rx = Quat::from_axis_angle({1, 0, 0}, 0.7);
  const Quat ry = Quat::from_axis_angle({0, 1, 0}, -1.1);
  Asset a;
  a.skeleton = Skeleton::build(
      {joint("hips", kNoParent, {0, 1, 0}, rx), joint("spine", 0, {0, 0.2, 0.05}, ry),
       joint("head", 1, {0.1, 0.3, 0}, rx * ry), joint("prop", kNoParent, {2, 0, 0}, ry)});
  Clip c;
  c.name = "wave";
  c.sample_rate = 10;
  c.duration = 1.0;
  c.tracks.resize(4);
  for (int k = 0; k <= 10; ++k) {
    const double t = k / 10.0;
    c.tracks[0].translation.times.push_back(t);
    c.tracks[0].translation.values.push_back({t, 1 + 0.1 * t, -t});
    c.tracks[0].rotation.times.push_back(t);
    c.tracks[0].rotation.values.push_back(quat_from_euler(Vec3{t, 2 * t, -t}, EulerOrder::XYZ));
    // spine: rotation keeps its rest (no track); head: translation only, on a child.
    c.tracks[2].translation.times.push_back(t);
    c.tracks[2].translation.values.push_back({0.1, 0.3 + 0.05 * t, 0});
    c.tracks[3].rotation.times.push_back(t);
    c.tracks[3].rotation.values.push_back(Quat::from_axis_angle({0, 0, 1}, 3 * t));
  }
  a.clips.push_back(c);
  a.source.format = "gltf";
  return a;
}

TEST(Bvh, RestRotationsAreFoldedIntoChannels) {
  const Asset a = gltf_like();
  const std::string text = format_bvh(a);  // no layout: defaults, centimetres
  EXPECT_NE(text.find("JOINT spine\n\t{\n\t\tOFFSET 0 20 5\n"), std::string::npos) << text;
  BvhReadOptions ro;
  ro.unit_in_meters = 0.01;
  const Asset b = parse_bvh(text, "folded.bvh", ro);
  ASSERT_EQ(b.skeleton.joint_count(), 4);
  EXPECT_EQ(b.skeleton.roots().size(), 2u);
  // Roots: 6 channels; spine: 3 rotation channels (its rest rotation); head: positions added.
  EXPECT_EQ(b.bvh_layout[0].channels.size(), 6u);
  EXPECT_EQ(b.bvh_layout[1].channels,
            (std::vector<std::string>{"Zrotation", "Xrotation", "Yrotation"}));
  EXPECT_EQ(b.bvh_layout[2].channels.size(), 6u);
  EXPECT_TRUE(b.bvh_layout[2].has_end_site);
  EXPECT_LT(world_difference(a, b, 11, 10.0), 1e-6);
  // Orientations too: every joint's world rotation matches.
  for (double t : {0.0, 0.35, 1.0}) {
    const auto ma = model_at(a, t), mb = model_at(b, t);
    for (size_t j = 0; j < ma.size(); ++j)
      EXPECT_LT(angle_between(Transform::from_matrix(ma[j]).rotation,
                              Transform::from_matrix(mb[j]).rotation),
                1e-6);
  }
}

TEST(Bvh, DefaultOrderOptionAndSkeletonWithoutClip) {
  Asset a = gltf_like();
  a.clips.clear();
  BvhWriteOptions o;
  o.default_order = EulerOrder::XYZ;
  o.unit_in_meters = 1.0;
  const std::string text = format_bvh(a, o);
  EXPECT_NE(text.find("CHANNELS 6 Xposition Yposition Zposition Xrotation Yrotation Zrotation"),
            std::string::npos);
  EXPECT_NE(text.find("Frames: 1\n"), std::string::npos);
  BvhReadOptions ro;
  ro.unit_in_meters = 1.0;
  const Asset b = parse_bvh(text, "rest.bvh", ro);
  const auto mb = model_at(b, 0);
  const auto ma = rest_model_matrices(a.skeleton);
  for (size_t j = 0; j < ma.size(); ++j)
    EXPECT_LT(distance(ma[j].translation_part(), mb[j].translation_part()), 1e-9);
}

TEST(Bvh, ContinuousEulerAnglesAcrossTheWrap) {
  // A root spinning 720° about Y: written angles must not jump by 360° between frames.
  Asset a;
  Joint j;
  j.name = "spinner";
  a.skeleton = Skeleton::build({j});
  Clip c;
  c.sample_rate = 10;
  c.duration = 2;
  c.tracks.resize(1);
  for (int k = 0; k <= 20; ++k) {
    c.tracks[0].rotation.times.push_back(k / 10.0);
    c.tracks[0].rotation.values.push_back(
        Quat::from_axis_angle({0, 1, 0}, 36.0 * k * 3.14159265358979 / 180));
  }
  a.clips.push_back(c);
  BvhWriteOptions o;
  o.unit_in_meters = 1;
  const std::string text = format_bvh(a, o);
  const Asset b = parse_bvh(text, "spin.bvh", BvhReadOptions{1.0});
  for (size_t k = 0; k < 21; ++k)
    EXPECT_LT(
        angle_between(c.tracks[0].rotation.values[k], b.clips[0].tracks[0].rotation.values[k]),
        1e-7);
  // Parse the Y channel back and check consecutive differences stay small.
  const size_t motion = text.find("Frame Time:");
  std::vector<double> ys;
  size_t pos = text.find('\n', motion) + 1;
  while (pos < text.size()) {
    const size_t end = text.find('\n', pos);
    double x = 0, y = 0, z = 0, px = 0, py = 0, pz = 0;
    ASSERT_EQ(std::sscanf(text.substr(pos, end - pos).c_str(), "%lf %lf %lf %lf %lf %lf", &px, &py,
                          &pz, &z, &x, &y),
              6);
    ys.push_back(y);
    pos = end + 1;
  }
  ASSERT_EQ(ys.size(), 21u);
  for (size_t k = 1; k < ys.size(); ++k) EXPECT_NEAR(ys[k] - ys[k - 1], 36, 1e-6) << k;
}

TEST(Bvh, EveryRotationOrderRoundTrips) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> angle(-3.14159265358979, 3.14159265358979);
  for (EulerOrder order : {EulerOrder::XYZ, EulerOrder::XZY, EulerOrder::YXZ, EulerOrder::YZX,
                           EulerOrder::ZXY, EulerOrder::ZYX}) {
    Asset a;
    Joint j;
    j.name = "j";
    a.skeleton = Skeleton::build({j});
    a.bvh_layout.resize(1);
    a.bvh_layout[0].channels = {"Yposition"};  // positions may come after or before rotations
    for (int ax : euler_axes(order))
      a.bvh_layout[0].channels.insert(a.bvh_layout[0].channels.begin(),
                                      std::string(1, char('X' + ax)) + "rotation");
    Clip c;
    c.sample_rate = 1;
    c.duration = 39;
    c.tracks.resize(1);
    for (int k = 0; k < 40; ++k) {
      c.tracks[0].rotation.times.push_back(k);
      // Include exact gimbal-lock poses (middle angle ±90°).
      Vec3 e{angle(rng), angle(rng), angle(rng)};
      if (k % 10 == 3) e[euler_axes(order)[1]] = (k % 20 == 3 ? 1 : -1) * 3.14159265358979 / 2;
      c.tracks[0].rotation.values.push_back(quat_from_euler(e, order));
    }
    a.clips.push_back(c);
    BvhWriteOptions o;
    o.unit_in_meters = 1;
    const Asset b = parse_bvh(format_bvh(a, o), "orders.bvh", BvhReadOptions{1.0});
    ASSERT_EQ(b.clips[0].tracks[0].rotation.key_count(), 40u);
    for (size_t k = 0; k < 40; ++k)
      EXPECT_LT(
          angle_between(c.tracks[0].rotation.values[k], b.clips[0].tracks[0].rotation.values[k]),
          1e-6)
          << to_string(order) << " key " << k;
  }
}

TEST(Bvh, WriteErrors) {
  Asset empty;
  EXPECT_THROW(format_bvh(empty), Error);
  Asset a = gltf_like();
  BvhWriteOptions o;
  o.clip = 1;
  EXPECT_THROW(format_bvh(a, o), Error);
  o.clip = -1;
  EXPECT_THROW(format_bvh(a, o), Error);
  o = {};
  o.unit_in_meters = 0;
  EXPECT_THROW(format_bvh(a, o), Error);
  o = {};
  o.frame_rate = -5;
  EXPECT_THROW(format_bvh(a, o), Error);
  o = {};
  o.precision = 0;
  EXPECT_THROW(format_bvh(a, o), Error);
  a.bvh_layout.resize(4);
  a.bvh_layout[1].channels = {"Qrotation"};
  EXPECT_THROW(format_bvh(a), Error);
  // A failed write leaves no file behind.
  const auto path = std::filesystem::temp_directory_path() / "kinema_bvh_failed.bvh";
  std::filesystem::remove(path);
  EXPECT_THROW(write_bvh(a, path.string()), Error);
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace kinema
