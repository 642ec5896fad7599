// `kinema undistort` / `kinema distort` (kinema/pipeline/lens.h).
#include "kinema/pipeline/lens.h"

#include <array>
#include <chrono>
#include <optional>

#include "kinema/composite/image_file.h"
#include "kinema/composite/image_sequence.h"
#include "kinema/core/file.h"
#include "lens_reader.h"
#include "staged_outputs.h"

namespace kinema::pipeline {

composite::LensIntrinsics LensSpec::intrinsics(int width, int height) const {
  composite::LensIntrinsics i;
  i.fx = fx;
  i.fy = fy > 0 ? fy : fx;
  i.cx = has_centre ? cx : (width - 1) / 2.0;
  i.cy = has_centre ? cy : (height - 1) / 2.0;
  return i;
}

LensSpec read_lens_file(const std::string& path) {
  const SceneReader r{path};
  return read_lens(r, r.parse(read_file(path)), "");
}

LensReport run_lens(const LensRequest& request) {
  const bool sequence = composite::is_sequence_pattern(request.in);
  if (sequence != composite::is_sequence_pattern(request.out))
    throw UsageError(
        "the input and the output must both be sequences (#### or %04d) or both "
        "single files: " +
        request.in + ", " + request.out);
  // The frames to do, as (input, output) paths.
  std::vector<std::pair<std::string, std::string>> frames;
  if (sequence) {
    const auto in = composite::parse_sequence_pattern(request.in);
    const auto out = composite::parse_sequence_pattern(request.out);
    for (int f : composite::find_sequence_frames(in))
      frames.emplace_back(composite::sequence_frame_path(in, f),
                          composite::sequence_frame_path(out, f));
    if (frames.empty()) throw Error(request.in, "", "no frames of this sequence exist");
  } else {
    frames.emplace_back(request.in, request.out);
  }
  std::vector<NamedInput> inputs{{"the lens file", request.lens}};
  for (const auto& [in, out] : frames) inputs.push_back({"the plate", in});
  static constexpr std::array<std::string_view, 2> kImages{"png", "exr"};
  static constexpr std::array<std::string_view, 1> kExr{"exr"};
  const char* job =
      request.distort ? "distort writes .png or .exr" : "undistort writes .png or .exr";
  for (const auto& [in, out] : frames) check_output_file(out, inputs, kImages, job);
  if (!request.st_map_out.empty()) {
    check_output_file(request.st_map_out, inputs, kExr, "the ST-map is written as float .exr");
    for (const auto& [in, out] : frames)
      if (same_file(out, request.st_map_out))
        throw UsageError("the ST-map and an output would be the same file: " + out);
  }
  const LensSpec spec = read_lens_file(request.lens);
  composite::ImageWriteOptions options;
  options.png.linear = request.linear;
  LensReport result;
  std::optional<composite::StMap> map;
  StagedOutputs staged;
  const std::string stage = request.distort ? "distorting" : "undistorting";
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto& [in, out] = frames[i];
    const composite::Image plate = composite::read_image(in, request.linear);
    if (!map) {
      result.width = plate.width, result.height = plate.height;
      const composite::LensIntrinsics intrinsics = spec.intrinsics(plate.width, plate.height);
      const auto start = std::chrono::steady_clock::now();
      try {
        map = request.distort
                  ? composite::st_map_distort(spec.lens, intrinsics, plate.width, plate.height)
                  : composite::st_map_undistort(spec.lens, intrinsics, plate.width, plate.height);
      } catch (const Error& e) {
        throw Error(request.lens, e.place(), e.reason());
      }
      result.map_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (float s : map->s) result.pixels_without_source += s < 0;
      if (!request.st_map_out.empty()) {
        composite::ExrWriteOptions exr;
        exr.pixel_type = composite::ExrPixelType::float32;  // positions, not colours
        staged.add(request.st_map_out,
                   composite::encode_exr(composite::st_map_as_image(*map), exr));
      }
    } else if (plate.width != result.width || plate.height != result.height) {
      throw Error(in, "",
                  std::to_string(plate.width) + "×" + std::to_string(plate.height) +
                      " but the first frame is " + std::to_string(result.width) + "×" +
                      std::to_string(result.height));
    }
    const auto start = std::chrono::steady_clock::now();
    const composite::Image remapped = composite::remap(plate, *map);
    result.remap_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    staged.add(out,
               composite::encode_image(composite::image_format_for_path(out), remapped, options));
    ++result.frames;
    report(request.progress, stage, long(i) + 1, long(frames.size()));
  }
  result.written = staged.commit();
  return result;
}

}  // namespace kinema::pipeline
