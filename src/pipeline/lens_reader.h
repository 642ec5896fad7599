// A lens's JSON object read into a LensSpec, each error at its JSON pointer (module-private:
// lens.cpp and comp.cpp).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kinema/pipeline/lens.h"
#include "sim_scene_reader.h"

namespace kinema::pipeline {

inline LensSpec read_lens(const SceneReader& r, const nlohmann::json& j, const std::string& p) {
  r.only(j, p, {"fx", "fy", "cx", "cy", "k1", "k2", "k3", "p1", "p2"});
  if (!j.contains("fx")) r.fail(p, "needs fx, the focal length in pixels");
  LensSpec spec;
  spec.fx = r.at_least(j["fx"], p + "/fx", 0, true);
  if (j.contains("fy")) spec.fy = r.at_least(j["fy"], p + "/fy", 0, true);
  if (j.contains("cx") != j.contains("cy")) r.fail(p, "give both cx and cy, or neither");
  if (j.contains("cx")) {
    spec.has_centre = true;
    spec.cx = r.number(j["cx"], p + "/cx");
    spec.cy = r.number(j["cy"], p + "/cy");
  }
  auto coefficient = [&](const char* key, double& out) {
    if (j.contains(key)) out = r.number(j[key], p + "/" + key);
  };
  coefficient("k1", spec.lens.k1);
  coefficient("k2", spec.lens.k2);
  coefficient("k3", spec.lens.k3);
  coefficient("p1", spec.lens.p1);
  coefficient("p2", spec.lens.p2);
  return spec;
}

}  // namespace kinema::pipeline
