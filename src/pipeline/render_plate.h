// The renderer's frames as compositing layers, and `kinema render --plate --camera-solve`
// (module-private: render.cpp, render_plate.cpp, demo_plate.cpp).
#pragma once

#include "kinema/composite/image.h"
#include "kinema/composite/lens.h"
#include "kinema/pipeline/render.h"
#include "kinema/render/renderer.h"

namespace kinema::pipeline {

/// The lens intrinsics of a render camera's pinhole for a width × height image (square pixels,
/// the principal point at the centre), in the OpenCV convention of composite/lens.h.
composite::LensIntrinsics intrinsics_of(const Camera& camera, int width, int height);

/// The renderer's RGBA8 frame as a linear premultiplied compositing image. The renderer's sRGB
/// target stores the sRGB encoding of premultiplied linear colour (alpha as is), so each colour
/// channel decodes on its own.
composite::Image to_linear(const Image& frame);

/// render_file() for a request with a plate or a camera solve (RenderRequest::plate).
RenderResult render_over_plate(const RenderRequest& request, const Progress& progress);

}  // namespace kinema::pipeline
