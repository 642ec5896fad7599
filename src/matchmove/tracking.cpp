// Corner detection and pyramidal Lucas–Kanade tracking with a forward–backward check
// (kinema/matchmove/tracking.h).
#include "kinema/matchmove/tracking.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>
#include <string>

#include "kinema/core/error.h"

namespace kinema::matchmove {

namespace {

unsigned char encode_srgb(float linear) {
  const float c = std::clamp(linear, 0.0f, 1.0f);
  const float e = c <= 0.0031308f ? 12.92f * c : 1.055f * std::pow(c, 1 / 2.4f) - 0.055f;
  return static_cast<unsigned char>(std::lround(e * 255));
}

cv::Mat luma_mat(const composite::Image& image) {
  std::vector<unsigned char> bytes = tracking_luma(image);
  cv::Mat mat(image.height, image.width, CV_8UC1);
  std::copy(bytes.begin(), bytes.end(), mat.ptr<unsigned char>());
  return mat;
}

void check_options(const TrackOptions& o) {
  const auto fail = [](const char* option, const std::string& reason) {
    throw Error({}, std::string("TrackOptions.") + option, reason);
  };
  if (o.max_corners < 1) fail("max_corners", "must be at least 1");
  if (!(o.quality_level > 0 && o.quality_level < 1)) fail("quality_level", "must be in (0, 1)");
  if (!(o.min_distance >= 0)) fail("min_distance", "must be ≥ 0");
  if (o.block_size < 3 || o.block_size % 2 == 0) fail("block_size", "must be odd and ≥ 3");
  if (o.window_size < 5 || o.window_size % 2 == 0) fail("window_size", "must be odd and ≥ 5");
  if (o.pyramid_levels < 0 || o.pyramid_levels > 8) fail("pyramid_levels", "must be in [0, 8]");
  if (!std::isfinite(o.forward_backward_threshold))
    fail("forward_backward_threshold", "must be finite");
  if (!(o.redetect_fraction >= 0 && o.redetect_fraction <= 1))
    fail("redetect_fraction", "must be in [0, 1]");
  if (!(o.border >= 0)) fail("border", "must be ≥ 0");
  if (o.min_track_length < 1) fail("min_track_length", "must be at least 1");
}

void check_frames(std::span<const composite::Image> frames) {
  if (frames.size() < 2)
    throw Error({}, {}, "tracking needs at least 2 frames, got " + std::to_string(frames.size()));
  const composite::Image& first = frames[0];
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const composite::Image& f = frames[i];
    const std::string place = "frame " + std::to_string(i);
    if (f.width <= 0 || f.height <= 0)
      throw Error(
          {}, place,
          "the frame is empty (" + std::to_string(f.width) + "×" + std::to_string(f.height) + ")");
    if (f.pixels.size() != std::size_t(f.width) * std::size_t(f.height))
      throw Error(
          {}, place,
          "the frame holds " + std::to_string(f.pixels.size()) + " pixels, not width × height");
    if (f.width != first.width || f.height != first.height)
      throw Error({}, place,
                  "the frame is " + std::to_string(f.width) + "×" + std::to_string(f.height) +
                      " but frame 0 is " + std::to_string(first.width) + "×" +
                      std::to_string(first.height) + "; all frames of a plate must be one size");
  }
}

}  // namespace

std::vector<unsigned char> tracking_luma(const composite::Image& image) {
  std::vector<unsigned char> bytes(image.pixels.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const composite::Rgba& p = image.pixels[i];
    bytes[i] = encode_srgb(0.2126f * p.r + 0.7152f * p.g + 0.0722f * p.b);
  }
  return bytes;
}

TrackSet track_features(std::span<const composite::Image> frames, const TrackOptions& options) {
  check_options(options);
  check_frames(frames);
  const int width = frames[0].width, height = frames[0].height;
  TrackSet result;
  result.width = width, result.height = height, result.frame_count = int(frames.size());

  const cv::Size window(options.window_size, options.window_size);
  const cv::TermCriteria criteria(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, 30, 0.01);
  const double border = options.border;
  const auto inside = [&](const cv::Point2f& p) {
    return p.x >= border && p.y >= border && p.x <= width - 1 - border &&
           p.y <= height - 1 - border;
  };
  const bool check_back = options.forward_backward_threshold > 0;
  const double back_limit2 =
      options.forward_backward_threshold * options.forward_backward_threshold;

  std::vector<Track> tracks;
  std::vector<int> live;  // index into `tracks` of each live point
  std::vector<cv::Point2f> points;

  cv::Mat grey = luma_mat(frames[0]);
  std::vector<cv::Mat> pyramid, next_pyramid;
  cv::buildOpticalFlowPyramid(grey, pyramid, window, options.pyramid_levels);

  for (int n = 0; n + 1 < int(frames.size()); ++n) {
    // Top up: new corners on frame n, kept min_distance away from the live tracks.
    if (double(live.size()) < options.redetect_fraction * options.max_corners || n == 0) {
      const int want = options.max_corners - int(live.size());
      if (want > 0) {
        cv::Mat mask(height, width, CV_8UC1, cv::Scalar(0));
        const int b = int(std::ceil(border));
        if (width - 2 * b > 0 && height - 2 * b > 0)
          mask(cv::Rect(b, b, width - 2 * b, height - 2 * b)).setTo(255);
        const int radius = int(std::ceil(options.min_distance));
        for (const cv::Point2f& p : points)
          cv::circle(mask, cv::Point(int(std::lround(p.x)), int(std::lround(p.y))), radius,
                     cv::Scalar(0), cv::FILLED);
        std::vector<cv::Point2f> corners;
        cv::goodFeaturesToTrack(grey, corners, want, options.quality_level, options.min_distance,
                                mask, options.block_size);
        if (!corners.empty()) {
          // To the corner's saddle point, off the pixel grid: a window centred on the corner
          // itself stays centred on it as perspective scales and shears the patch.
          // One that wanders out of its half-block window found no saddle there: dropped.
          const int half = (options.block_size - 1) / 2;
          const std::vector<cv::Point2f> grid = corners;
          cv::cornerSubPix(
              grey, corners, cv::Size(half, half), cv::Size(-1, -1),
              cv::TermCriteria(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, 20, 0.01));
          std::vector<cv::Point2f> refined;
          for (std::size_t i = 0; i < corners.size(); ++i) {
            const cv::Point2f d = corners[i] - grid[i];
            if (inside(corners[i]) && std::max(std::abs(d.x), std::abs(d.y)) <= half)
              refined.push_back(corners[i]);
          }
          corners = std::move(refined);
        }
        for (const cv::Point2f& c : corners) {
          Track t;
          t.id = int(tracks.size());
          t.observations.push_back({n, c.x, c.y});
          live.push_back(int(tracks.size()));
          tracks.push_back(std::move(t));
          points.push_back(c);
        }
      }
    }

    cv::Mat next_grey = luma_mat(frames[std::size_t(n) + 1]);
    cv::buildOpticalFlowPyramid(next_grey, next_pyramid, window, options.pyramid_levels);
    std::vector<cv::Point2f> forward, backward;
    std::vector<unsigned char> status, back_status;
    std::vector<float> error;
    if (!points.empty()) {
      cv::calcOpticalFlowPyrLK(pyramid, next_pyramid, points, forward, status, error, window,
                               options.pyramid_levels, criteria);
      if (check_back) {
        backward = points;  // a start for the backward search: the answer if all is well
        cv::calcOpticalFlowPyrLK(next_pyramid, pyramid, forward, backward, back_status, error,
                                 window, options.pyramid_levels, criteria,
                                 cv::OPTFLOW_USE_INITIAL_FLOW);
      }
    }
    std::vector<bool> keep(points.size(), false);
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!status[i] || !inside(forward[i])) continue;
      if (check_back) {
        const cv::Point2f d = backward[i] - points[i];
        if (!back_status[i] || double(d.x) * d.x + double(d.y) * d.y > back_limit2) continue;
      }
      keep[i] = true;
    }
    std::vector<int> kept_live;
    std::vector<cv::Point2f> kept_points;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!keep[i]) continue;
      tracks[std::size_t(live[i])].observations.push_back({n + 1, forward[i].x, forward[i].y});
      kept_live.push_back(live[i]);
      kept_points.push_back(forward[i]);
    }
    live = std::move(kept_live), points = std::move(kept_points);
    grey = next_grey;
    std::swap(pyramid, next_pyramid);
  }

  for (Track& t : tracks)
    if (int(t.observations.size()) >= options.min_track_length)
      result.tracks.push_back(std::move(t));
  return result;
}

}  // namespace kinema::matchmove
