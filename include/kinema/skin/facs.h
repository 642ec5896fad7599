// kinema/skin/facs.h — FACS-based face rigs: combination (corrective) shapes driven by the product
// of their drivers' weights (FACS: Ekman & Friesen 1978).
//
// A FACS rig has roughly one base shape per action unit (AU12 lip corner puller, AU26 jaw drop…).
// Real faces do not add linearly, so the rig adds combination shapes: correctives sculpted for a
// pair or a triplet of base shapes, whose weight is the product of the drivers' weights. With
// AU12 at 0.8 and AU26 at 0.5 the AU12+AU26 combination is at 0.8·0.5 = 0.4; it is 0 when either
// driver is off and 1 when both are full. Driver weights are clamped to [0, 1] before the product
// (so two negative weights never give a positive corrective).
//
// Weight layout. A FacsRig has N base shapes and M combination shapes; the full weight vector
// that drives the mesh is [base weights (N) | combination weights (M)], in that order — the order
// of the morph targets of a mesh built for the rig (or remap by name with find()).
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kinema {

/// A corrective shape driven by 2 or 3 base shapes.
struct CombinationShape {
  std::string name;
  std::array<int, 3> drivers{-1, -1, -1};  ///< base-shape indices; unused slots are -1
  int driver_count = 0;                    ///< 2 (pair) or 3 (triplet)
};

/// The product of the drivers' weights, each clamped to [0, 1]; 0 when a driver index is outside
/// `base_weights` or a weight is NaN.
float combination_weight(std::span<const float> base_weights, const CombinationShape& shape);

/// Base shapes by name plus their combination shapes.
class FacsRig {
 public:
  FacsRig() = default;
  /// Throws kinema::Error when a name is empty or repeated.
  explicit FacsRig(std::vector<std::string> base_names);

  /// Adds a combination shape driven by 2 or 3 distinct base shapes given by name; returns its
  /// index among the combinations. Throws kinema::Error for an unknown or repeated driver, a
  /// count other than 2 or 3, or a name already used by a base or combination shape.
  int add_combination(const std::string& name, const std::vector<std::string>& drivers);

  size_t base_count() const { return base_names_.size(); }
  size_t combination_count() const { return combinations_.size(); }
  /// base_count() + combination_count(): the length of the full weight vector.
  size_t shape_count() const { return base_count() + combination_count(); }
  const std::vector<std::string>& base_names() const { return base_names_; }
  const std::vector<CombinationShape>& combinations() const { return combinations_; }
  /// Index of a shape in the full weight vector (bases first, then combinations), or -1.
  int find(std::string_view name) const;

  /// Runtime: writes the full weight vector [base | combinations] from the base weights.
  /// Base weights are copied as given (not clamped); combination weights are products of the
  /// clamped drivers. Returns false (writing nothing) when base_weights.size() != base_count() or
  /// out.size() != shape_count(). Never allocates.
  bool evaluate(std::span<const float> base_weights, std::span<float> out) const;

  /// Offline convenience: the full weight vector from (name, weight) pairs; bases not named are 0.
  /// Throws kinema::Error for a name that is not a base shape or a weight that is not finite.
  std::vector<float> evaluate(std::span<const std::pair<std::string, float>> named) const;

 private:
  std::vector<std::string> base_names_;
  std::vector<CombinationShape> combinations_;
};

}  // namespace kinema
