// `kinema vat` as a library call (kinema/pipeline/vat.h).
#include "kinema/pipeline/vat.h"

#include "kinema/core/error.h"

namespace kinema::pipeline {

VatResult bake_vat_file(const VatRequest& request) {
  static constexpr std::string_view kJson[] = {"json"};
  const NamedInput inputs[] = {{"IN", request.in}};
  check_output_file(request.out, inputs, kJson, "vat");
  if (same_file(request.in, vat_texture_path(request.out)))
    throw UsageError("OUT's .dds texture is the same file as IN (" + request.in + ")");

  const Asset asset = load_asset(request.in, request.load);
  VatBakeOptions options = request.options;
  if (!request.clip.empty())
    options.clip = find_clip(asset, request.clip, request.in);
  else if (asset.clips.empty())
    throw Error(request.in, "", "no animation clip to bake");
  VatResult result;
  result.bake = bake_vat(asset, options, request.in);
  result.files = write_vat(result.bake, request.out);
  return result;
}

}  // namespace kinema::pipeline
