// kinema/core/units.h — length units by name, for options people type ("cm", "0.01cm").
// kinema computes in metres; names are accepted only at the edges (command lines, requests).
#pragma once

#include <string>
#include <string_view>

namespace kinema {

/// Metres per unit for a unit name: "m", "cm", "mm", "inch" (or "in"), "cmu" (the CMU ASF length
/// unit, 1/0.45 inch = 5.644 cm). Throws kinema::UsageError for any other name.
double metres_per_unit(std::string_view name);

/// A length with its unit ("0.01cm", "0.1 mm", "3cm", "0.0001m") in metres. A unit is required:
/// a bare number would be ambiguous between the metres kinema computes in and the centimetres
/// people quote. `option` names the value in messages ("--error"). Throws kinema::UsageError for
/// text that is not a positive finite length with a known unit.
double parse_length(const std::string& text, const std::string& option);

}  // namespace kinema
