// The demo's "filmed" location for compositing (module-private: demo.cpp): a paved square under a
// hazy sky as a real camera with a barrel lens would see it, and the same with a soft contact
// shadow — the two renders of a stand-in that differential rendering needs.
#pragma once

#include <string>

#include "kinema/character/asset.h"
#include "kinema/composite/image.h"
#include "kinema/composite/lens.h"
#include "kinema/math/vec3.h"
#include "kinema/render/renderer.h"
#include "render_plate.h"

namespace kinema::pipeline {

struct StandIn {
  composite::Image without_object;  ///< the location alone (linear, opaque)
  composite::Image with_object;     ///< the same with the object's soft contact shadow
};

/// Ray-casts each pixel through `lens` (undistorting it to the pinhole ray): a paved ground on
/// y = 0 (0.6 m stones, each its own tone, grout between, fading into haze with distance) and a
/// sky above the horizon; 2 × 2 samples a pixel. The shadow is a soft ellipse on the ground
/// around `shadow_centre` (y ignored) with half-axes `shadow_radius_x`, `shadow_radius_z`
/// (metres), darkening by up to 75 % at the centre. Pixels past the lens's fold are sky.
StandIn render_stand_in(const Camera& camera, int width, int height,
                        const composite::BrownConrady& lens, const Vec3f& shadow_centre,
                        float shadow_radius_x, float shadow_radius_z);

/// The demo's last shot, encoded: the walk's middle frame put into the stand-in plate.
struct CompositeShot {
  std::string png;           ///< the composite, 8-bit sRGB
  std::string exr;           ///< the CG layer after lens and grain (half, premultiplied)
  std::string gl_renderer;   ///< what drew the character
  float grain_measured = 0;  ///< estimate_grain() on the plate (green)
};

/// Renders the asset's first clip at its middle with a transparent background (640 × 360, the
/// follow camera), bends it through a lens (k1, k2 = 0.01), films the stand-in location through
/// the same lens with grain σ = `grain_sigma`, measures that grain and puts it on the CG, adds the
/// contact shadow by differential rendering and puts the CG over. Throws kinema::Error without
/// OpenGL (naming `file`).
CompositeShot composite_into_plate(const Asset& asset, const std::string& file, double k1,
                                   float grain_sigma);

}  // namespace kinema::pipeline
