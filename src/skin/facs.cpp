// FACS rigs: combination shapes weighted by the product of their drivers.
#include "kinema/skin/facs.h"

#include <algorithm>
#include <cmath>

#include "kinema/core/error.h"

namespace kinema {

float combination_weight(std::span<const float> base_weights, const CombinationShape& shape) {
  if (shape.driver_count < 1 || shape.driver_count > 3) return 0.0f;
  float w = 1.0f;
  for (int i = 0; i < shape.driver_count; ++i) {
    const int d = shape.drivers[static_cast<size_t>(i)];
    if (d < 0 || static_cast<size_t>(d) >= base_weights.size()) return 0.0f;
    const float x = base_weights[static_cast<size_t>(d)];
    if (!(x > 0.0f)) return 0.0f;  // ≤ 0 or NaN
    w *= std::min(x, 1.0f);
  }
  return w;
}

FacsRig::FacsRig(std::vector<std::string> base_names) : base_names_(std::move(base_names)) {
  for (size_t i = 0; i < base_names_.size(); ++i) {
    if (base_names_[i].empty())
      throw Error({}, "base shape " + std::to_string(i), "the name is empty");
    for (size_t j = 0; j < i; ++j)
      if (base_names_[j] == base_names_[i])
        throw Error({}, "base shape " + std::to_string(i),
                    "name '" + base_names_[i] + "' is used twice");
  }
}

int FacsRig::find(std::string_view name) const {
  for (size_t i = 0; i < base_names_.size(); ++i)
    if (base_names_[i] == name) return static_cast<int>(i);
  for (size_t i = 0; i < combinations_.size(); ++i)
    if (combinations_[i].name == name) return static_cast<int>(base_names_.size() + i);
  return -1;
}

int FacsRig::add_combination(const std::string& name, const std::vector<std::string>& drivers) {
  const std::string place = "combination shape '" + name + "'";
  if (name.empty()) throw Error({}, "combination shape", "the name is empty");
  if (find(name) >= 0) throw Error({}, place, "the name is already used");
  if (drivers.size() < 2 || drivers.size() > 3)
    throw Error({}, place, std::to_string(drivers.size()) + " drivers (a combination has 2 or 3)");
  CombinationShape shape;
  shape.name = name;
  shape.driver_count = static_cast<int>(drivers.size());
  for (size_t i = 0; i < drivers.size(); ++i) {
    const int d = find(drivers[i]);
    if (d < 0 || static_cast<size_t>(d) >= base_names_.size())
      throw Error({}, place, "driver '" + drivers[i] + "' is not a base shape");
    for (size_t j = 0; j < i; ++j)
      if (shape.drivers[j] == d) throw Error({}, place, "driver '" + drivers[i] + "' is repeated");
    shape.drivers[i] = d;
  }
  combinations_.push_back(std::move(shape));
  return static_cast<int>(combinations_.size() - 1);
}

bool FacsRig::evaluate(std::span<const float> base_weights, std::span<float> out) const {
  if (base_weights.size() != base_count() || out.size() != shape_count()) return false;
  std::copy(base_weights.begin(), base_weights.end(), out.begin());
  for (size_t i = 0; i < combinations_.size(); ++i)
    out[base_count() + i] = combination_weight(base_weights, combinations_[i]);
  return true;
}

std::vector<float> FacsRig::evaluate(std::span<const std::pair<std::string, float>> named) const {
  std::vector<float> base(base_count(), 0.0f);
  for (const auto& [name, weight] : named) {
    const int i = find(name);
    if (i < 0 || static_cast<size_t>(i) >= base_count())
      throw Error({}, "weight '" + name + "'", "not a base shape of the rig");
    if (!std::isfinite(weight)) throw Error({}, "weight '" + name + "'", "not finite");
    base[static_cast<size_t>(i)] = weight;
  }
  std::vector<float> out(shape_count());
  evaluate(base, out);
  return out;
}

}  // namespace kinema
