// kinema/render/plot.h — line plots rendered on the CPU into an Image (kinema/render/renderer.h):
// several named series of one value per frame, axes with tick labels, a title, axis labels and a
// legend, drawn with a small built-in 5×7 bitmap font. No OpenGL: this works on machines without
// a driver. Write the result with write_png (kinema/render/clip_render.h).
//
// Conventions: x is the frame index (0 … n − 1) of each series' values; y is the value in the
// caller's unit (name it in y_label). Images are RGBA8, top row first, opaque.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kinema/render/renderer.h"

namespace kinema {

/// 8-bit sRGB colour.
using Rgb = std::array<uint8_t, 3>;

/// One line: values[i] is drawn at x = i.
struct PlotSeries {
  std::string name;  ///< shown in the legend
  std::vector<double> values;
  Rgb color{31, 119, 180};
  float width_px = 1.5f;  ///< line width, pixels
};

struct PlotOptions {
  int width = 960, height = 420;  ///< pixels, each 160…8192
  std::string title, x_label, y_label;
  /// The y axis always includes 0 (a depth of 0 is meaningful), then is widened to round ticks.
  bool y_includes_zero = true;
  Rgb background{255, 255, 255};
};

/// Where the data lands: the plot area in pixels and the data ranges it spans. Pixel centres:
/// x_pixel(x_min) = left, x_pixel(x_max) = right, y_pixel(y_max) = top, y_pixel(y_min) = bottom.
struct PlotLayout {
  int left = 0, top = 0, right = 0, bottom = 0;  ///< plot area, pixels (inclusive)
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;
  double y_tick = 1;  ///< spacing of the y ticks (data units)
  double x_tick = 1;  ///< spacing of the x ticks (frames)
  double x_pixel(double x) const;
  double y_pixel(double y) const;
};

/// The layout plot_lines uses for these series. Throws kinema::Error (file "plot", the series'
/// name as the place) when there is no series, a series has no values or a value is not finite,
/// or when the size is out of range.
PlotLayout plot_layout(std::span<const PlotSeries> series, const PlotOptions& options);

/// Draws the series (anti-aliased lines, in order, so later series are on top), the axes with
/// round tick values, the title, the axis labels and a legend (top right: a swatch of each
/// series' colour and its name). Throws as plot_layout does.
Image plot_lines(std::span<const PlotSeries> series, const PlotOptions& options);

/// Width in pixels of `text` in the built-in font at `scale` (6 pixels per character · scale,
/// less the last column's gap). Characters it lacks are drawn as '?'; lower case as upper case.
int text_width(const std::string& text, int scale = 1);

/// Draws `text` with its top-left corner at (x, y), `scale` pixels per font pixel, clipped to
/// the image.
void draw_text(Image& image, int x, int y, const std::string& text, const Rgb& color,
               int scale = 1);

}  // namespace kinema
