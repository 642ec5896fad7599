// kinema/pipeline/vat.h — `kinema vat` as a library call: a skinned clip baked into a vertex
// animation texture (RGBA16F DDS) with its JSON metadata (kinema/skin/vat.h, docs/faces.md).
#pragma once

#include <string>

#include "kinema/io/asset_file.h"
#include "kinema/pipeline/job.h"
#include "kinema/skin/vat.h"

namespace kinema::pipeline {

struct VatRequest {
  std::string in;
  std::string out;         ///< the JSON metadata; the texture goes beside it (vat_texture_path)
  std::string clip;        ///< by name or index; empty: the first
  VatBakeOptions options;  ///< its `clip` is set from `clip`
  LoadOptions load;
};

struct VatResult {
  VatBake bake;
  VatFiles files;
};

/// Reads IN, bakes every skinned mesh over the clip (bake_vat) and writes the texture and the
/// metadata, each atomically (write_vat). Throws UsageError for an OUT that is not .json, a folder,
/// or whose texture or itself is IN, and for an unknown clip; kinema::Error for unreadable input,
/// no clip or skinned mesh, a write failure.
VatResult bake_vat_file(const VatRequest& request);

}  // namespace kinema::pipeline
