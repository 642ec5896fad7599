// tests/common/cmu_locomotion.h — the motion-matching database several test programs build from
// the test data: CMU 06_11's turn-around and 07_12's brisk walk on the Character Creator rig
// (tests/data/bvh/cmu_iclone_cc3), the humanoid's hips, feet and legs as feature joints, frame 0
// of each iClone export skipped (it is broken).
#pragma once

#include <string>
#include <vector>

#include "kinema/io/asset_file.h"
#include "kinema/match/database.h"
#include "kinema/retarget/humanoid.h"
#include "test_paths.h"

namespace kinema::test {

inline match::Database build_cmu_locomotion(const match::DatabaseOptions& options) {
  static const Asset turn =
      load_asset(test_paths::data_dir() + "/bvh/cmu_iclone_cc3/006_11_turn_30fps.bvh");
  static const Asset walk = load_asset(test_paths::data_dir() + "/bvh/cmu_iclone_cc3/007_12.bvh");
  std::vector<match::ClipSource> clips;
  for (const Asset* a : {&turn, &walk}) {
    const Humanoid h = *humanoid_of(*a);
    match::ClipSource s;
    s.name = a == &turn ? "06_11" : "07_12";
    s.skeleton = &a->skeleton;
    s.clip = &a->clips[0];
    s.joints = {h.find("hips"),         h.find("leftFoot"),      h.find("rightFoot"),
                h.find("leftUpperLeg"), h.find("rightUpperLeg"), h.find("leftLowerLeg"),
                h.find("rightLowerLeg")};
    s.start_time = a == &turn ? 1 / 30.0 : 1 / 60.0;
    clips.push_back(s);
  }
  return match::build_database(clips, options);
}

}  // namespace kinema::test
