// kinema/physics/hair.h — hair: guide strands simulated as Cosserat rods, and child strands
// interpolated from them.
//
// A guide is a chain of points from its root on the scalp; each segment carries an orientation
// (a quaternion whose third axis d₃ runs along the segment; d₁, d₂ are the material frame, so a
// strand can twist). Each substep (position-and-orientation based dynamics, Kugelstadt & Schömer,
// "Position and Orientation Based Cosserat Rods", SCA 2016):
//   stretch–shear: (p_{i+1} − p_i)/l − d₃(q_i) = 0 ties each segment's points to its frame and
//                  keeps its length;
//   bend–twist:    the Darboux vector q_iᶜ·q_{i+1} between neighbouring frames is pulled toward
//                  its rest value with `bend_stiffness` (about d₁, d₂) and `twist_stiffness`
//                  (about d₃), each in [0, 1] per sweep.
// After the sweeps each point is put back at its segment's rest length from the one before it,
// root to tip ("follow the leader", Müller, Kim & Chentanez 2012): hair does not stretch (this
// adds a little damping along the strand). Frames carry no angular momentum; they turn only as
// the constraints turn them. Roots are clamped: the first point and the first segment's frame
// follow the head
// (`set_head`). A person has about 100,000 hairs: a simulator moves a few hundred guides and
// interpolates the rest (`HairChildren`). Units: metres, seconds, kilograms.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "kinema/math/quat.h"
#include "kinema/math/vec3.h"
#include "kinema/physics/collider.h"

namespace kinema {

struct HairOptions {
  double mass_per_length = 0.01;  ///< kg/m of each guide (a guide stands for a tuft)
  double bend_stiffness = 0.1;    ///< [0, 1]: how much of the bend is undone per sweep
  double twist_stiffness = 0.1;   ///< [0, 1]: how much of the twist is undone per sweep
  double air_drag = 1;            ///< 1/s
  Vec3 gravity{0, -9.8, 0};       ///< m/s²
  int substeps = 8;
  int iterations = 2;  ///< constraint sweeps per substep
  std::vector<Collider> colliders;
  double thickness = 0.002;  ///< m kept from the colliders
};

class HairSystem {
 public:
  /// `guides`: each a polyline of ≥ 2 points from its root (m), in the head's rest placement.
  /// Throws kinema::Error naming the guide for fewer than two points, a non-finite point, a
  /// zero-length segment; and for options out of range.
  HairSystem(std::vector<std::vector<Vec3>> guides, HairOptions options);

  /// Where the head is: its rotation and translation from the rest placement. Roots and root
  /// segments follow it over the next step (in a straight line, the rotation by slerp).
  void set_head(const Quat& rotation, const Vec3& translation);

  /// Advances by h seconds; returns the point–collider contacts summed over the substeps.
  size_t step(double h);

  /// Replaces the colliders (a character's, posed for the next step). Throws kinema::Error for a
  /// bad one.
  void set_colliders(std::vector<Collider> colliders);

  size_t guide_count() const { return start_.size() - 1; }
  /// The head's placement at the end of the last step (identity and zero at rest).
  const Quat& head_rotation() const { return head_to_; }
  const Vec3& head_translation() const { return head_to_t_; }
  /// The rest points of guide g (as given), root first.
  std::span<const Vec3> rest_guide(size_t g) const {
    return std::span<const Vec3>(rest_x_).subspan(start_[g], start_[g + 1] - start_[g]);
  }
  /// The points of guide g, root first.
  std::span<const Vec3> guide(size_t g) const {
    return std::span<const Vec3>(x_).subspan(start_[g], start_[g + 1] - start_[g]);
  }
  /// The frame of segment s of guide g (d₃ = rotate(q, {0, 0, 1}) along the segment).
  const Quat& frame(size_t g, size_t s) const { return q_[start_[g] - g + s]; }
  /// The rest length of segment s of guide g (m).
  double rest_length(size_t g, size_t s) const { return rest_[start_[g] - g + s]; }

 private:
  HairOptions o_;
  std::vector<size_t> start_;  ///< guide g's points are [start_[g], start_[g + 1])
  std::vector<Vec3> x_, v_, previous_, rest_x_;
  std::vector<double> inverse_mass_;     ///< 0 at roots
  std::vector<Quat> q_, rest_q_;         ///< per segment (point i to i + 1)
  std::vector<double> rest_;             ///< per segment
  std::vector<Quat> rest_darboux_;       ///< per segment joint (between segment s and s + 1)
  std::vector<double> inverse_inertia_;  ///< per segment, 0 for root segments
  Quat head_from_{0, 0, 0, 1}, head_to_{0, 0, 0, 1};
  Vec3 head_from_t_{0, 0, 0}, head_to_t_{0, 0, 0};
};

/// Child strands interpolated from the guides: each child has a root and up to three guides
/// (the nearest roots) with inverse-distance weights summing to 1; its point j is its root plus
/// the weighted sum of each guide's point j minus that guide's root (guides resampled to the
/// child's point count by arc length).
struct HairChildren {
  std::vector<Vec3> roots;
  std::vector<std::array<std::uint32_t, 3>> guides;
  std::vector<std::array<double, 3>> weights;
  int points = 0;  ///< points per child strand
};

/// Children at `roots` (m) from the rest roots of `system`'s guides, `points` points each (≥ 2).
HairChildren make_hair_children(const HairSystem& system, std::span<const Vec3> roots, int points);

/// The children's points now: children × points, child-major. Roots follow the head like the
/// guides' roots do (the offset of each child root from its nearest guide root is carried along
/// by that guide's root frame).
std::vector<Vec3> interpolate_hair(const HairSystem& system, const HairChildren& children);

}  // namespace kinema
