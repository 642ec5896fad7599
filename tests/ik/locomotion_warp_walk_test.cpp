// Stride warping on a captured walk (CMU 02_01): the character is moved 0.7–1.4 times as far
// along its path as the capture moved it, and the stride is warped by the same factor. The feet
// must skate no more than the capture's own feet do at its natural speed; without the warp they
// skate at about |factor − 1| times the walking speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kinema/blend/foot_contact.h"
#include "kinema/clip/clip.h"
#include "kinema/ik/locomotion_warp.h"
#include "kinema/io/asset_file.h"
#include "kinema/skeleton/skeleton.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kData = test_paths::data_dir();

struct WalkFeet {
  std::vector<Vec3> ankles, toes;  // frame-major, left then right
  int legs_solved = 0, legs_reached = 0;
  double deepest_drop = 0;  // metres
};

struct Walk {
  Asset asset = load_asset(kData + "/bvh/cmu_cgspeed_mb/02_01.bvh");
  const Skeleton& sk = asset.skeleton;
  const Clip& clip = asset.clips.at(0);
  int hips = sk.find("Hips");
  std::array<StrideWarpJoints, 2> legs{
      StrideWarpJoints{sk.find("LeftUpLeg"), sk.find("LeftLeg"), sk.find("LeftFoot")},
      StrideWarpJoints{sk.find("RightUpLeg"), sk.find("RightLeg"), sk.find("RightFoot")}};
  std::array<int, 2> toes{sk.find("LeftToeBase"), sk.find("RightToeBase")};
  double rate = infer_frame_rate(clip);
  int frames = clip.frame_count();

  std::vector<Transform> model_of(const std::vector<Transform>& local) const {
    std::vector<Transform> model(local.size());
    for (std::size_t j = 0; j < local.size(); ++j) {
      const int p = sk.parents()[j];
      model[j] = p < 0 ? local[j] : model[static_cast<std::size_t>(p)] * local[j];
    }
    return model;
  }

  // The hips' horizontal travel direction over the clip.
  Vec3 direction() const {
    std::vector<Transform> local(static_cast<std::size_t>(sk.joint_count()));
    EXPECT_TRUE(sample_pose(clip, sk, 0, WrapMode::Clamp, local));
    const Vec3 start = local[static_cast<std::size_t>(hips)].translation;
    EXPECT_TRUE(sample_pose(clip, sk, clip.duration, WrapMode::Clamp, local));
    const Vec3 travel = local[static_cast<std::size_t>(hips)].translation - start;
    return normalize(Vec3{travel.x, 0, travel.z});
  }

  // The feet when the hips travel `factor` times as far along the path, warped or not; with
  // `plants`, the planted feet are held (the capture's own plants and toe supports).
  WalkFeet feet(double factor, bool warp, const FootPlants* plants = nullptr) const {
    WalkFeet f;
    const Vec3 d = direction();
    std::vector<Transform> local(static_cast<std::size_t>(sk.joint_count()));
    Vec3 start;
    StrideWarpState state;
    for (int i = 0; i < frames; ++i) {
      EXPECT_TRUE(sample_pose(clip, sk, i / rate, WrapMode::Clamp, local));
      Vec3& hip_position = local[static_cast<std::size_t>(hips)].translation;
      if (i == 0) start = hip_position;
      hip_position += d * ((factor - 1) * dot(hip_position - start, d));
      if (warp) {
        const std::vector<Transform> model = model_of(local);
        std::array<StrideWarpLeg, 2> in;
        for (std::size_t l = 0; l < 2; ++l) {
          const StrideWarpJoints& j = legs[l];
          in[l] = {model[static_cast<std::size_t>(j.hip)].translation,
                   model[static_cast<std::size_t>(j.knee)].translation,
                   model[static_cast<std::size_t>(j.ankle)].translation,
                   model[static_cast<std::size_t>(j.ankle)].rotation};
          if (plants) {
            in[l].planted = plants->is_planted(i, int(l));
            in[l].on_toe = plants->toe_support[static_cast<std::size_t>(i) * 2 + l] != 0;
            in[l].toe = model[static_cast<std::size_t>(toes[l])].translation;
          }
        }
        StrideWarpSettings s;
        s.stride_scale = factor;
        s.direction = s.forward = d;
        s.pelvis = model[static_cast<std::size_t>(hips)].translation;
        std::array<StrideWarpLegResult, 2> out;
        const StrideWarpResult r = solve_stride_warp(in, s, 1 / rate, state, out);
        EXPECT_EQ(r.status, StrideWarpStatus::kOk);
        f.deepest_drop = std::max(f.deepest_drop, -r.pelvis_offset);
        for (const StrideWarpLegResult& o : out) f.legs_solved++, f.legs_reached += o.ik.reached;
        EXPECT_TRUE(apply_stride_warp(r, out, legs, hips, sk.parents(), local));
      }
      const std::vector<Transform> model = model_of(local);
      for (std::size_t l = 0; l < 2; ++l) {
        f.ankles.push_back(model[static_cast<std::size_t>(legs[l].ankle)].translation);
        f.toes.push_back(model[static_cast<std::size_t>(toes[l])].translation);
      }
    }
    return f;
  }
};

TEST(StrideWarpWalk, FeetSkateNoMoreAtOtherSpeedsThanTheCaptureAtItsOwn) {
  const Walk walk;
  ASSERT_GE(walk.hips, 0);
  for (const StrideWarpJoints& j : walk.legs)
    ASSERT_TRUE(j.hip >= 0 && j.knee >= 0 && j.ankle >= 0);
  const double dt = 1 / walk.rate;
  const WalkFeet natural = walk.feet(1.0, false);
  // The capture's plants, used for every version so that all are judged on the same frames.
  const FootPlants plants = detect_foot_plants(natural.ankles, natural.toes, 2, dt);
  const FootSkateReport own = measure_foot_skate(natural.ankles, natural.toes, 2, dt, plants);
  ASSERT_TRUE(own.total.speed.has_value());
  ASSERT_GT(own.total.planted_frames, walk.frames / 2);
  const SkateSpeeds base = *own.total.speed;
  for (const double factor : {0.7, 0.85, 1.2, 1.4}) {
    const WalkFeet held = walk.feet(factor, true, &plants);
    const WalkFeet warped = walk.feet(factor, true);
    const WalkFeet slid = walk.feet(factor, false);
    auto skate = [&](const WalkFeet& f) {
      return *measure_foot_skate(f.ankles, f.toes, 2, dt, plants).total.speed;
    };
    const SkateSpeeds h = skate(held), w = skate(warped), s = skate(slid);
    std::printf(
        "factor %.2f, skate median / p90 cm/s: capture at 1x %.2f / %.2f; warped, plants "
        "held %.2f / %.2f; warped %.2f / %.2f; not warped %.2f / %.2f\n",
        factor, base.median, base.p90, h.median, h.p90, w.median, w.p90, s.median, s.p90);
    std::printf("  legs reached %d of %d, deepest pelvis drop %.1f cm\n", held.legs_reached,
                held.legs_solved, 100 * held.deepest_drop);
    EXPECT_EQ(held.legs_reached, held.legs_solved) << factor;
    EXPECT_LE(h.median, base.median) << factor;
    EXPECT_LE(h.p90, base.p90) << factor;
    // Warping alone scales the capture's own slide by the factor; not warping slides the planted
    // feet at about |factor − 1| of the walking speed (1.2–1.3 m/s here).
    EXPECT_NEAR(w.median, factor * base.median, 0.35 * factor * base.median) << factor;
    EXPECT_GT(s.median, h.median + 30 * std::abs(factor - 1)) << factor;
  }
}

}  // namespace
}  // namespace kinema
