// `kinema key` (kinema/pipeline/key.h).
#include "kinema/pipeline/key.h"

#include <array>
#include <chrono>
#include <optional>
#include <string_view>

#include "kinema/composite/image_file.h"
#include "kinema/composite/porter_duff.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"

namespace kinema::pipeline {

KeyReport run_key(const KeyRequest& r) {
  std::vector<NamedInput> inputs{{"the plate", r.plate}};
  if (!r.background.empty()) inputs.push_back({"the background", r.background});
  if (!r.garbage.empty()) inputs.push_back({"the garbage matte", r.garbage});
  static constexpr std::array<std::string_view, 2> kImages{"png", "exr"};
  check_output_file(r.out, inputs, kImages, "key writes .png or .exr");
  if (!r.matte_out.empty()) {
    check_output_file(r.matte_out, inputs, kImages, "key writes .png or .exr");
    if (same_file(r.matte_out, r.out))
      throw UsageError("the matte and the image would be the same file: " + r.out);
  }
  composite::validate(r.keyer);
  const composite::Image plate = composite::read_image(r.plate, r.linear);
  // A matte or background must be the plate's size.
  auto check_size = [&](const std::string& file, int width, int height) {
    if (width != plate.width || height != plate.height)
      throw Error(file, "",
                  std::to_string(width) + "×" + std::to_string(height) + " but the plate is " +
                      std::to_string(plate.width) + "×" + std::to_string(plate.height));
  };
  std::optional<composite::Matte> garbage;
  if (!r.garbage.empty()) {
    garbage = composite::read_matte(r.garbage);
    check_size(r.garbage, garbage->width, garbage->height);
  }
  std::optional<composite::Image> background;
  if (!r.background.empty()) {
    background = composite::read_image(r.background, r.linear);
    check_size(r.background, background->width, background->height);
  }
  const auto start = std::chrono::steady_clock::now();
  const composite::Image keyed = composite::key(plate, r.keyer, garbage);
  const composite::Image result =
      background ? composite::composite(composite::PorterDuff::Over, keyed, *background) : keyed;
  KeyReport report;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.width = plate.width;
  report.height = plate.height;
  long transparent = 0, opaque = 0;
  double sum = 0;
  for (const composite::Rgba& p : keyed.pixels) {
    sum += p.a;
    transparent += p.a == 0;
    opaque += p.a == 1;
  }
  const double n = double(keyed.pixels.size());
  report.mean_alpha = sum / n;
  report.transparent_fraction = double(transparent) / n;
  report.opaque_fraction = double(opaque) / n;
  // Encode everything before writing anything: a failure leaves no output.
  composite::ImageWriteOptions options;
  options.png.linear = r.linear;
  const std::string image_bytes =
      composite::encode_image(composite::image_format_for_path(r.out), result, options);
  std::string matte_bytes;
  if (!r.matte_out.empty())
    matte_bytes = composite::encode_matte(composite::image_format_for_path(r.matte_out),
                                          composite::alpha_of(keyed), options);
  write_file_atomically(r.out, image_bytes);
  report.written.push_back(r.out);
  if (!r.matte_out.empty()) {
    write_file_atomically(r.matte_out, matte_bytes);
    report.written.push_back(r.matte_out);
  }
  return report;
}

}  // namespace kinema::pipeline
