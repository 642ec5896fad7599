// `kinema track` and `kinema solve` (kinema/pipeline/matchmove.h).
#include "kinema/pipeline/matchmove.h"

#include <array>
#include <chrono>
#include <cmath>

#include "kinema/composite/image_file.h"
#include "kinema/composite/image_sequence.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/matchmove/matchmove_json.h"

namespace kinema::pipeline {

namespace {

/// A colour per track, spread around the hue circle (golden-angle steps), linear.
composite::Rgba track_colour(int id) {
  const double h = std::fmod(id * 0.618033988749895, 1.0) * 6;
  const int sector = int(h);
  const float f = float(h - sector), q = 1 - f;
  const float rgb[6][3] = {{1, f, 0}, {q, 1, 0}, {0, 1, f}, {0, q, 1}, {f, 0, 1}, {1, 0, q}};
  const float* c = rgb[sector % 6];
  return {c[0], c[1], c[2], 1};
}

/// Draws a 1 px line from a to b (pixel centres at integers), anti-aliased by coverage.
void draw_line(composite::Image& image, double x0, double y0, double x1, double y1,
               const composite::Rgba& colour) {
  const double length = std::hypot(x1 - x0, y1 - y0);
  const int steps = std::max(1, int(std::ceil(length * 2)));
  for (int s = 0; s <= steps; ++s) {
    const double t = double(s) / steps;
    const double x = x0 + (x1 - x0) * t, y = y0 + (y1 - y0) * t;
    const int ix = int(std::lround(x)), iy = int(std::lround(y));
    if (ix < 0 || iy < 0 || ix >= image.width || iy >= image.height) continue;
    image.at(ix, iy) = colour;
  }
}

}  // namespace

TrackReport run_track(const TrackRequest& request) {
  if (!composite::is_sequence_pattern(request.plates))
    throw UsageError("'" + request.plates +
                     "' is not a sequence: tracking needs frames (plate.####.exr or %04d)");
  const auto pattern = composite::parse_sequence_pattern(request.plates);
  const std::vector<int> numbers = composite::find_sequence_frames(pattern);
  std::vector<NamedInput> inputs;
  for (int f : numbers) inputs.push_back({"a plate", composite::sequence_frame_path(pattern, f)});
  static constexpr std::array<std::string_view, 1> kJson{"json"}, kPng{"png"};
  check_output_file(request.out, inputs, kJson, "track writes .json");
  if (!request.preview.empty())
    check_output_file(request.preview, inputs, kPng, "the preview is .png");
  if (numbers.size() < 2)
    throw Error(request.plates, "",
                numbers.empty() ? "no frames of this sequence exist"
                                : "only one frame exists; tracking needs at least two");
  std::vector<composite::Image> frames;
  frames.reserve(numbers.size());
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    const std::string path = inputs[i].path;
    frames.push_back(composite::read_image(path, request.linear));
    if (frames.back().width != frames.front().width ||
        frames.back().height != frames.front().height)
      throw Error(path, "",
                  std::to_string(frames.back().width) + "×" + std::to_string(frames.back().height) +
                      " but the first frame is " + std::to_string(frames.front().width) + "×" +
                      std::to_string(frames.front().height));
    report(request.progress, "reading plates", long(i) + 1, long(numbers.size()));
  }
  const auto start = std::chrono::steady_clock::now();
  matchmove::TrackSet tracks;
  try {
    tracks = matchmove::track_features(frames, request.options);
  } catch (const Error& e) {
    throw Error(request.plates, e.place(), e.reason());
  }
  TrackReport result;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.frames = int(frames.size());
  result.width = tracks.width, result.height = tracks.height;
  result.first_frame = numbers.front();
  result.tracks = tracks.tracks.size();
  double lived = 0;
  for (const matchmove::Track& t : tracks.tracks) lived += double(t.observations.size());
  result.mean_length = tracks.tracks.empty() ? 0 : lived / double(tracks.tracks.size());
  // Encode everything before writing anything.
  const std::string json = matchmove::tracks_to_json(tracks, 1);
  std::string preview;
  if (!request.preview.empty()) {
    composite::Image picture = frames.back();
    for (composite::Rgba& p : picture.pixels) p = composite::scaled(p, 0.6f);  // dim the plate
    for (const matchmove::Track& t : tracks.tracks) {
      const composite::Rgba colour = track_colour(t.id);
      for (std::size_t k = 1; k < t.observations.size(); ++k)
        draw_line(picture, t.observations[k - 1].u, t.observations[k - 1].v, t.observations[k].u,
                  t.observations[k].v, colour);
    }
    preview = composite::encode_png(picture);
  }
  write_file_atomically(request.out, json);
  result.written.push_back(request.out);
  if (!preview.empty()) {
    write_file_atomically(request.preview, preview);
    result.written.push_back(request.preview);
  }
  return result;
}

SolveReport run_solve(const SolveRequest& request) {
  static constexpr std::array<std::string_view, 1> kJson{"json"};
  const std::vector<NamedInput> inputs{{"the tracks", request.tracks}};
  check_output_file(request.out, inputs, kJson, "solve writes .json");
  const matchmove::TrackSet tracks =
      matchmove::tracks_from_json(read_file(request.tracks), request.tracks);
  SolveReport result;
  try {
    result.solve = matchmove::solve_camera(tracks, request.options);
  } catch (const Error& e) {
    throw Error(request.tracks, e.place(), e.reason());
  }
  write_file_atomically(request.out, matchmove::camera_solve_to_json(result.solve));
  result.written.push_back(request.out);
  return result;
}

}  // namespace kinema::pipeline
