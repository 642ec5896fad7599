// The solver rigs of a humanoid character (kinema/retarget/rig.h).
#include "kinema/retarget/rig.h"

#include <optional>

#include "kinema/core/error.h"
#include "kinema/retarget/humanoid.h"

namespace kinema {

HumanoidLegs humanoid_legs(const Asset& character, const std::string& file) {
  const std::optional<Humanoid> humanoid = humanoid_of(character);
  HumanoidLegs legs;
  legs.names.clear();
  if (humanoid) {
    legs.rig.pelvis = humanoid->find("hips");
    for (const std::string side : {"left", "right"}) {
      const FootPlacementJoints j{humanoid->find(side + "UpperLeg"),
                                  humanoid->find(side + "LowerLeg"), humanoid->find(side + "Foot")};
      if (j.hip < 0 || j.knee < 0 || j.ankle < 0) continue;
      legs.rig.legs.push_back(j);
      legs.rig.toes.push_back(humanoid->find(side + "Toes"));
      legs.names.push_back(side);
    }
  }
  if (!humanoid || legs.rig.pelvis < 0 || legs.rig.legs.size() != 2)
    throw Error(
        file, "",
        "cannot find the legs: foot placement needs a humanoid (hips, upper leg, lower leg and "
        "foot on both sides), from a VRM bone map or recognizable joint names (run "
        "kinema info --tree on it)" +
            (humanoid ? std::string()
                      : ": " + describe_missing(recognize_humanoid(character.skeleton))));
  return legs;
}

}  // namespace kinema
