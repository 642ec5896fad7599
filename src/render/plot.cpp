// Line plots drawn on the CPU with a built-in 5×7 bitmap font (kinema/render/plot.h).
#include "kinema/render/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kinema/core/error.h"

namespace kinema {
namespace {

/// One glyph: 7 rows of 5 pixels, bit 4 the leftmost.
struct Glyph {
  char c;
  std::array<uint8_t, 7> rows;
};

// clang-format off
constexpr Glyph kGlyphs[] = {
    {' ', {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}}, {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}}, {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}}, {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}}, {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}}, {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'A', {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}}, {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
    {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}}, {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
    {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}}, {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
    {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}}, {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}}, {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}}, {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
    {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}}, {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}}, {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}}, {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
    {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}}, {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}}, {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}}, {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}}, {'Z', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}},
    {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}}, {',', {0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08}},
    {'-', {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00}}, {'+', {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00}},
    {':', {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00}}, {'/', {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00}},
    {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}}, {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}},
    {'[', {0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E}}, {']', {0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E}},
    {'%', {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}}, {'_', {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F}},
    {'=', {0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00}}, {'\'', {0x0C, 0x04, 0x08, 0x00, 0x00, 0x00, 0x00}},
    {'?', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}}, {'*', {0x00, 0x04, 0x15, 0x0E, 0x15, 0x04, 0x00}},
    {'>', {0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08}}, {'<', {0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02}},
};
// clang-format on

constexpr int kGlyphWidth = 5, kGlyphHeight = 7, kAdvance = 6;
constexpr int kTextScale = 2;  // tick labels, axis labels and the legend
constexpr int kTitleScale = 2;
constexpr int kPad = 12;

const std::array<uint8_t, 7>& glyph_rows(char c) {
  if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
  for (const Glyph& g : kGlyphs)
    if (g.c == c) return g.rows;
  for (const Glyph& g : kGlyphs)
    if (g.c == '?') return g.rows;
  return kGlyphs[0].rows;
}

/// Blends `color` over pixel (x, y) with coverage `alpha` ∈ [0, 1]; outside the image: nothing.
void blend(Image& image, int x, int y, const Rgb& color, double alpha) {
  if (x < 0 || y < 0 || x >= image.width || y >= image.height || alpha <= 0) return;
  uint8_t* p = image.pixel(x, y);
  const double a = std::min(alpha, 1.0);
  for (int k = 0; k < 3; ++k) p[k] = uint8_t(std::lround(p[k] + (color[size_t(k)] - p[k]) * a));
  p[3] = 255;
}

void fill_rect(Image& image, int x0, int y0, int x1, int y1, const Rgb& color) {
  for (int y = std::max(y0, 0); y <= std::min(y1, image.height - 1); ++y)
    for (int x = std::max(x0, 0); x <= std::min(x1, image.width - 1); ++x)
      blend(image, x, y, color, 1);
}

/// An anti-aliased segment of width `width` (pixel centres at integer coordinates), clipped to
/// the rectangle [cx0, cx1] × [cy0, cy1].
void draw_segment(Image& image, double x0, double y0, double x1, double y1, float width,
                  const Rgb& color, const std::array<int, 4>& clip) {
  const double half = width * 0.5;
  const int bx0 = std::max(clip[0], int(std::floor(std::min(x0, x1) - half - 1)));
  const int bx1 = std::min(clip[2], int(std::ceil(std::max(x0, x1) + half + 1)));
  const int by0 = std::max(clip[1], int(std::floor(std::min(y0, y1) - half - 1)));
  const int by1 = std::min(clip[3], int(std::ceil(std::max(y0, y1) + half + 1)));
  const double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
  for (int y = by0; y <= by1; ++y)
    for (int x = bx0; x <= bx1; ++x) {
      // Distance from the pixel centre to the segment.
      double t = len2 > 0 ? ((x - x0) * dx + (y - y0) * dy) / len2 : 0;
      t = std::clamp(t, 0.0, 1.0);
      const double ex = x - (x0 + t * dx), ey = y - (y0 + t * dy);
      blend(image, x, y, color, half + 0.5 - std::sqrt(ex * ex + ey * ey));
    }
}

/// 1, 2 or 5 times a power of ten, the smallest not below `raw`.
double nice_step(double raw) {
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw * (1 - 1e-9)) return m * p;
  return 10 * p;
}

/// A tick value with as many decimals as the step needs.
std::string tick_label(double value, double step) {
  const int decimals = std::max(0, int(std::ceil(-std::log10(step) - 1e-9)));
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, std::abs(value) < step * 1e-6 ? 0.0 : value);
  return text;
}

int text_height(int scale) { return kGlyphHeight * scale; }

}  // namespace

double PlotLayout::x_pixel(double x) const {
  return left + (x - x_min) / (x_max - x_min) * (right - left);
}

double PlotLayout::y_pixel(double y) const {
  return bottom - (y - y_min) / (y_max - y_min) * (bottom - top);
}

int text_width(const std::string& text, int scale) {
  if (text.empty()) return 0;
  return (int(text.size()) * kAdvance - (kAdvance - kGlyphWidth)) * scale;
}

void draw_text(Image& image, int x, int y, const std::string& text, const Rgb& color, int scale) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto& rows = glyph_rows(text[i]);
    const int gx = x + int(i) * kAdvance * scale;
    for (int r = 0; r < kGlyphHeight; ++r)
      for (int c = 0; c < kGlyphWidth; ++c)
        if (rows[size_t(r)] & (0x10 >> c))
          fill_rect(image, gx + c * scale, y + r * scale, gx + (c + 1) * scale - 1,
                    y + (r + 1) * scale - 1, color);
  }
}

PlotLayout plot_layout(std::span<const PlotSeries> series, const PlotOptions& options) {
  if (options.width < 160 || options.height < 160 || options.width > 8192 || options.height > 8192)
    throw Error("plot", "",
                "the size must be 160…8192 pixels each, not " + std::to_string(options.width) +
                    "×" + std::to_string(options.height));
  if (series.empty()) throw Error("plot", "", "there is no series to draw");
  double lo = options.y_includes_zero ? 0 : INFINITY, hi = options.y_includes_zero ? 0 : -INFINITY;
  size_t longest = 0;
  for (const PlotSeries& s : series) {
    if (s.values.empty()) throw Error("plot", s.name, "the series has no values");
    for (size_t i = 0; i < s.values.size(); ++i) {
      if (!std::isfinite(s.values[i]))
        throw Error("plot", s.name, "value " + std::to_string(i) + " is not finite");
      lo = std::min(lo, s.values[i]);
      hi = std::max(hi, s.values[i]);
    }
    longest = std::max(longest, s.values.size());
  }
  PlotLayout layout;
  if (hi - lo < 1e-12) hi = lo + 1;
  layout.y_tick = nice_step((hi - lo) / 5);
  layout.y_min = std::floor(lo / layout.y_tick + 1e-9) * layout.y_tick;
  layout.y_max = std::ceil(hi / layout.y_tick - 1e-9) * layout.y_tick;
  layout.x_max = std::max(double(longest) - 1, 1.0);

  int label_width = 0;
  for (double v = layout.y_min; v <= layout.y_max + layout.y_tick * 1e-6; v += layout.y_tick)
    label_width = std::max(label_width, text_width(tick_label(v, layout.y_tick), kTextScale));
  const int line = text_height(kTextScale) + 8;
  layout.left = kPad + label_width + 8;
  layout.right = options.width - 1 - kPad - 8;
  layout.top = kPad + (options.title.empty() ? 0 : text_height(kTitleScale) + 8) +
               (options.y_label.empty() ? 0 : line) + 4;
  layout.bottom = options.height - 1 - kPad - line - (options.x_label.empty() ? 0 : line);
  if (layout.right - layout.left < 40 || layout.bottom - layout.top < 40)
    throw Error("plot", "", "the image is too small for the labels");
  const double frames_per_tick = layout.x_max / std::max(1.0, (layout.right - layout.left) / 90.0);
  layout.x_tick = std::max(1.0, nice_step(frames_per_tick));
  return layout;
}

Image plot_lines(std::span<const PlotSeries> series, const PlotOptions& options) {
  const PlotLayout L = plot_layout(series, options);
  Image image(options.width, options.height);
  fill_rect(image, 0, 0, image.width - 1, image.height - 1, options.background);
  const Rgb grid{225, 225, 225}, ink{40, 40, 40};
  const int th = text_height(kTextScale);

  for (double v = L.y_min; v <= L.y_max + L.y_tick * 1e-6; v += L.y_tick) {
    const int y = int(std::lround(L.y_pixel(v)));
    fill_rect(image, L.left, y, L.right, y, grid);
    const std::string label = tick_label(v, L.y_tick);
    draw_text(image, L.left - 8 - text_width(label, kTextScale), y - th / 2, label, ink,
              kTextScale);
  }
  for (double v = L.x_min; v <= L.x_max + 1e-9; v += L.x_tick) {
    const int x = int(std::lround(L.x_pixel(v)));
    fill_rect(image, x, L.top, x, L.bottom, grid);
    fill_rect(image, x, L.bottom, x, L.bottom + 4, ink);
    const std::string label = tick_label(v, L.x_tick);
    draw_text(image, x - text_width(label, kTextScale) / 2, L.bottom + 8, label, ink, kTextScale);
  }
  fill_rect(image, L.left, L.top, L.left, L.bottom, ink);
  fill_rect(image, L.left, L.bottom, L.right, L.bottom, ink);

  const std::array<int, 4> clip{L.left, L.top, L.right, L.bottom};
  for (const PlotSeries& s : series) {
    if (s.values.size() == 1) {
      const double x = L.x_pixel(0), y = L.y_pixel(s.values[0]);
      draw_segment(image, x - 2, y, x + 2, y, s.width_px, s.color, clip);
    }
    for (size_t i = 1; i < s.values.size(); ++i)
      draw_segment(image, L.x_pixel(double(i - 1)), L.y_pixel(s.values[i - 1]),
                   L.x_pixel(double(i)), L.y_pixel(s.values[i]), s.width_px, s.color, clip);
  }

  // Legend, top right inside the plot area: a swatch and the name per series.
  int legend_width = 0;
  for (const PlotSeries& s : series)
    legend_width = std::max(legend_width, text_width(s.name, kTextScale));
  legend_width += 24 + 8 + 16;
  const int row = th + 6;
  const int lx = L.right - 8 - legend_width, ly = L.top + 8;
  fill_rect(image, lx, ly, lx + legend_width, ly + row * int(series.size()) + 8, {250, 250, 250});
  for (size_t i = 0; i < series.size(); ++i) {
    const int y = ly + 8 + row * int(i);
    fill_rect(image, lx + 8, y + th / 2 - 2, lx + 8 + 23, y + th / 2 + 2, series[i].color);
    draw_text(image, lx + 8 + 24 + 8, y, series[i].name, ink, kTextScale);
  }

  if (!options.title.empty())
    draw_text(image, (options.width - text_width(options.title, kTitleScale)) / 2, kPad,
              options.title, ink, kTitleScale);
  if (!options.y_label.empty())
    draw_text(image, kPad, L.top - 4 - th - 6, options.y_label, ink, kTextScale);
  if (!options.x_label.empty())
    draw_text(image, (L.left + L.right - text_width(options.x_label, kTextScale)) / 2,
              L.bottom + 8 + th + 8, options.x_label, ink, kTextScale);
  return image;
}

}  // namespace kinema
