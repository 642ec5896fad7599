// Line plots (kinema/render/plot.h): values land on the pixels the layout gives, the legend shows
// each series' colour, text is drawn from the built-in font, bad series are refused.
#include "kinema/render/plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "kinema/core/error.h"

namespace kinema {
namespace {

bool near_color(const uint8_t* p, const Rgb& c, int tolerance = 8) {
  for (int k = 0; k < 3; ++k)
    if (std::abs(int(p[k]) - int(c[size_t(k)])) > tolerance) return false;
  return true;
}

/// Rows of column x (between y0 and y1) whose pixel is the colour.
std::vector<int> rows_with(const Image& image, int x, int y0, int y1, const Rgb& c) {
  std::vector<int> rows;
  for (int y = y0; y <= y1; ++y)
    if (near_color(image.pixel(x, y), c)) rows.push_back(y);
  return rows;
}

long count_color(const Image& image, const Rgb& c) {
  long n = 0;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) n += near_color(image.pixel(x, y), c);
  return n;
}

constexpr Rgb kRed{220, 30, 30}, kBlue{20, 60, 210};

TEST(Plot, ConstantSeriesLandsOnItsRowAndRampOnItsDiagonal) {
  PlotSeries flat{"flat", std::vector<double>(101, 2.0), kRed, 2.0f};
  PlotSeries ramp{"ramp", {}, kBlue, 2.0f};
  for (int i = 0; i <= 100; ++i) ramp.values.push_back(i * 0.1);  // 0 … 10
  const std::vector<PlotSeries> series{flat, ramp};
  // Aggregate initialization: assigning short literals trips GCC 12's -Wmaybe-uninitialized.
  const PlotOptions options{960, 420, "depth", "frame", "mm"};
  const PlotLayout layout = plot_layout(series, options);
  EXPECT_LE(layout.y_min, 0.0);
  EXPECT_GE(layout.y_max, 10.0);
  EXPECT_DOUBLE_EQ(layout.x_max, 100.0);
  EXPECT_DOUBLE_EQ(layout.x_pixel(0), layout.left);
  EXPECT_DOUBLE_EQ(layout.y_pixel(layout.y_min), layout.bottom);

  const Image image = plot_lines(series, options);
  ASSERT_EQ(image.width, options.width);
  ASSERT_EQ(image.height, options.height);
  // Frame 30 of the flat line (left of the legend): its colour sits on y_pixel(2) ± 1.
  const int x30 = int(std::lround(layout.x_pixel(30)));
  const auto red = rows_with(image, x30, layout.top, layout.bottom, kRed);
  ASSERT_FALSE(red.empty());
  const double y2 = layout.y_pixel(2.0);
  for (int y : red) EXPECT_NEAR(y, y2, 1.5);
  // Frame 20 of the ramp is 2.0 too; frame 60 of the ramp is 6.0.
  const int x60 = int(std::lround(layout.x_pixel(60)));
  const auto blue = rows_with(image, x60, layout.top, layout.bottom, kBlue);
  ASSERT_FALSE(blue.empty());
  for (int y : blue) EXPECT_NEAR(y, layout.y_pixel(6.0), 2.0);
  // Nothing of the flat line's colour far from its row in that column.
  EXPECT_TRUE(rows_with(image, x60, layout.top, int(y2) - 4, kRed).empty());
}

TEST(Plot, LegendShowsEachSeriesColourOutsideTheLines) {
  const Rgb green{30, 170, 60};
  PlotSeries a{"left before", std::vector<double>(50, 1.0), kRed};
  PlotSeries b{"left after", std::vector<double>(50, 0.5), green};
  PlotOptions options;
  const PlotLayout layout = plot_layout(std::vector<PlotSeries>{a, b}, options);
  // Lines alone draw the colour on one row per column; the swatch adds a solid block above
  // the lines (the legend sits at the top of the plot area, the values near the bottom).
  const Image image = plot_lines(std::vector<PlotSeries>{a, b}, options);
  const int limit = int(layout.y_pixel(layout.y_max * 0.75));
  long in_legend = 0;
  for (int y = layout.top; y < limit; ++y)
    for (int x = layout.left; x <= layout.right; ++x)
      in_legend += near_color(image.pixel(x, y), green, 2);
  EXPECT_GE(in_legend, 20 * 4);
}

TEST(Plot, TextIsDrawnInTheFontAndLowerCaseLikeUpper) {
  Image a(100, 20), b(100, 20);
  draw_text(a, 2, 2, "Depth 12", {255, 255, 255});
  draw_text(b, 2, 2, "DEPTH 12", {255, 255, 255});
  EXPECT_EQ(a.rgba, b.rgba);
  EXPECT_GT(count_color(a, {255, 255, 255}), 30);
  EXPECT_EQ(text_width("ab", 1), 11);
  EXPECT_EQ(text_width("ab", 2), 22);
  Image one(10, 10), seven(10, 10);
  draw_text(one, 0, 0, "1", {255, 255, 255});
  draw_text(seven, 0, 0, "7", {255, 255, 255});
  EXPECT_NE(one.rgba, seven.rgba);
}

TEST(Plot, EmptyOrNonFiniteSeriesAreRefused) {
  PlotOptions options;
  EXPECT_THROW(plot_lines(std::vector<PlotSeries>{}, options), Error);
  PlotSeries empty{"right after", {}, kRed};
  try {
    plot_lines(std::vector<PlotSeries>{empty}, options);
    FAIL() << "an empty series was drawn";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "right after");
  }
  PlotSeries nan{"nan", {1.0, std::nan(""), 2.0}, kRed};
  EXPECT_THROW(plot_lines(std::vector<PlotSeries>{nan}, options), Error);
  PlotSeries fine{"fine", {1.0}, kRed};
  options.width = 20;
  EXPECT_THROW(plot_lines(std::vector<PlotSeries>{fine}, options), Error);
}

TEST(Plot, ASingleValueStillGetsARange) {
  PlotSeries one{"one", {0.0}, kRed};
  PlotOptions options;
  options.y_includes_zero = true;
  const PlotLayout layout = plot_layout(std::vector<PlotSeries>{one}, options);
  EXPECT_GT(layout.y_max, layout.y_min);
  EXPECT_GT(layout.x_max, layout.x_min);
  EXPECT_GT(count_color(plot_lines(std::vector<PlotSeries>{one}, options), kRed), 0);
}

}  // namespace
}  // namespace kinema
