// Length units by name (kinema/core/units.h).
#include "kinema/core/units.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kinema/core/error.h"

namespace kinema {

double metres_per_unit(std::string_view name) {
  if (name == "m") return 1.0;
  if (name == "cm") return 0.01;
  if (name == "mm") return 0.001;
  if (name == "inch" || name == "in") return 0.0254;
  if (name == "cmu") return 0.0254 / 0.45;  // CMU ASF length unit: 1/0.45 inch
  throw UsageError("unknown unit '" + std::string(name) + "' (use m, cm, mm, inch or cmu)");
}

double parse_length(const std::string& text, const std::string& option) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw UsageError(option + " " + text + ": not a length (write e.g. 0.01cm or 0.1mm)");
  }
  std::string unit = text.substr(used);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  if (unit.empty())
    throw UsageError(option + " " + text + ": give a unit (m, cm, mm), e.g. " + text + "cm");
  if (!(value > 0) || !std::isfinite(value))
    throw UsageError(option + " " + text + ": must be a positive length");
  try {
    return value * metres_per_unit(unit);
  } catch (const UsageError& e) {
    throw UsageError(option + " " + text + ": " + e.what());
  }
}

}  // namespace kinema
