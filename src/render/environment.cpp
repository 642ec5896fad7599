// Image-based lighting environments (kinema/render/environment.h): equirectangular maps, the
// Radiance .hdr reader, the default sky, SH9 irradiance and the specular prefilter.
#include "kinema/render/environment.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "kinema/composite/exr_file.h"
#include "kinema/composite/image_file.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/math/simd4.h"

namespace kinema {

namespace {

constexpr int kMaxSide = 16384;

std::string size_text(long long width, long long height) {
  return std::to_string(width) + "×" + std::to_string(height);
}

/// Throws unless width × height is a size an environment may have: 1 … 16,384 a side, 2:1 ± 1.
void check_size(const std::string& name, const std::string& place, long long width,
                long long height) {
  if (width < 1 || height < 1 || width > kMaxSide || height > kMaxSide)
    throw Error(name, place,
                "image is " + size_text(width, height) +
                    " pixels; an environment has 1 … 16,384 pixels a side");
  if (std::llabs(width - 2 * height) > 1)
    throw Error(name, place,
                "image is " + size_text(width, height) +
                    " pixels, not an equirectangular (latitude-longitude) map: its width must be "
                    "twice its height (± 1 pixel)");
}

bool is_empty(const Environment& e) {
  return e.width < 1 || e.height < 1 ||
         e.texels.size() != std::size_t(e.width) * std::size_t(e.height);
}

/// Bilinear lookup at image coordinates (u, v): wraps in u, clamps in v.
Vec3f sample_uv(const Environment& e, float u, float v) {
  const float px = u * float(e.width) - 0.5f, py = v * float(e.height) - 0.5f;
  const float fx = std::floor(px), fy = std::floor(py);
  const float tx = px - fx, ty = py - fy;
  int x0 = int(fx) % e.width;
  if (x0 < 0) x0 += e.width;
  const int x1 = x0 + 1 == e.width ? 0 : x0 + 1;
  const int y0 = std::clamp(int(fy), 0, e.height - 1);
  const int y1 = std::clamp(int(fy) + 1, 0, e.height - 1);
  const Vec3f top = lerp(e.at(x0, y0), e.at(x1, y0), tx);
  const Vec3f bottom = lerp(e.at(x0, y1), e.at(x1, y1), tx);
  return lerp(top, bottom, ty);
}

/// The polar angle θ of the edge between rows y − 1 and y.
double row_edge_theta(int y, int height) { return kPi * double(y) / double(height); }

// ---- area resampling ----------------------------------------------------------------------------

struct Tap {
  int index = 0;
  float weight = 0;
};

/// For each of `to` cells, the `from` cells it overlaps and their normalised weights. Cells are
/// equal intervals; `measure(a, b)` is the weight of the interval [a, b] given in source cells.
template <class Measure>
std::vector<std::vector<Tap>> taps(int from, int to, Measure measure) {
  std::vector<std::vector<Tap>> result(static_cast<std::size_t>(to));
  const double scale = double(from) / double(to);
  for (int j = 0; j < to; ++j) {
    const double a = j * scale, b = (j + 1) * scale;
    const int first = std::clamp(int(std::floor(a)), 0, from - 1);
    const int last = std::clamp(int(std::ceil(b)) - 1, first, from - 1);
    double total = 0;
    std::vector<std::pair<int, double>> raw;
    for (int s = first; s <= last; ++s) {
      const double lo = std::max(a, double(s)), hi = std::min(b, double(s + 1));
      if (hi <= lo) continue;
      const double w = measure(lo, hi);
      if (w > 0) raw.emplace_back(s, w), total += w;
    }
    auto& out = result[std::size_t(j)];
    if (!(total > 0)) {
      out.push_back({first, 1.0f});
      continue;
    }
    for (const auto& [s, w] : raw) out.push_back({s, float(w / total)});
  }
  return result;
}

// ---- Radiance .hdr ------------------------------------------------------------------------------

std::string trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return std::string(s);
}

/// A non-negative decimal of at most 9 digits, or −1.
long long parse_count(const std::string& token) {
  if (token.empty() || token.size() > 9) return -1;
  long long v = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::vector<std::string> split_spaces(const std::string& s) {
  std::vector<std::string> tokens;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) tokens.push_back(s.substr(start, i - start));
  }
  return tokens;
}

Vec3f rgbe_to_float(const std::uint8_t* p) {
  if (p[3] == 0) return {};
  const float f = std::ldexp(1.0f, int(p[3]) - 136);
  return {float(p[0]) * f, float(p[1]) * f, float(p[2]) * f};
}

class HdrReader {
 public:
  HdrReader(std::string_view bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  Environment read() {
    read_header();
    Environment env;
    env.width = width_, env.height = height_;
    // Grow with the data actually decoded: a lying header cannot make us allocate much.
    const std::size_t remaining = bytes_.size() - pos_;
    env.texels.reserve(
        std::min(std::size_t(width_) * std::size_t(height_), remaining * 16 + std::size_t(width_)));
    std::vector<std::uint8_t> scan(std::size_t(width_) * 4);
    for (int y = 0; y < height_; ++y) {
      read_scanline(y, scan);
      for (int x = 0; x < width_; ++x)
        env.texels.push_back(rgbe_to_float(&scan[std::size_t(x) * 4]));
    }
    return env;
  }

 private:
  std::string_view bytes_;
  const std::string& name_;
  std::size_t pos_ = 0;
  long line_ = 0;
  int width_ = 0, height_ = 0;

  /// The next header line without its newline; throws at the end of the file.
  std::string next_line() {
    const std::size_t end = bytes_.find('\n', pos_);
    ++line_;
    if (end == std::string_view::npos)
      throw Error(name_, at_line(line_),
                  "truncated header: the file ends before the resolution line and pixels");
    std::string line(bytes_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return line;
  }

  void read_header() {
    if (bytes_.substr(0, 2) != "#?")
      throw Error(name_, "line 1",
                  "not a Radiance .hdr image: it does not begin with #?RADIANCE or #?RGBE");
    const std::string magic = trim(next_line());
    if (magic != "#?RADIANCE" && magic != "#?RGBE")
      throw Error(name_, "line 1",
                  "not a Radiance .hdr image: the first line is '" + magic +
                      "', expected #?RADIANCE or #?RGBE");
    for (;;) {
      const std::string line = trim(next_line());
      if (line.empty()) break;
      if (line.rfind("FORMAT=", 0) != 0) continue;  // EXPOSURE, GAMMA, SOFTWARE, comments …
      const std::string format = trim(std::string_view(line).substr(7));
      if (format == "32-bit_rle_xyze")
        throw Error(name_, at_line(line_),
                    "XYZE pictures are not supported; convert the file to RGBE "
                    "(FORMAT=32-bit_rle_rgbe)");
      if (format != "32-bit_rle_rgbe")
        throw Error(name_, at_line(line_),
                    "unknown pixel format '" + format + "', expected 32-bit_rle_rgbe");
    }
    const std::string resolution = trim(next_line());
    const std::vector<std::string> t = split_spaces(resolution);
    const bool standard = t.size() == 4 && t[0] == "-Y" && t[2] == "+X";
    const bool other =
        t.size() == 4 && (t[0] == "+Y" || t[0] == "-Y" || t[0] == "+X" || t[0] == "-X");
    if (!standard && other)
      throw Error(name_, at_line(line_),
                  "unsupported orientation '" + resolution +
                      "': only '-Y height +X width' (rows from the top, left to right) is read");
    const long long h = standard ? parse_count(t[1]) : -1;
    const long long w = standard ? parse_count(t[3]) : -1;
    if (w < 0 || h < 0)
      throw Error(name_, at_line(line_),
                  "expected the resolution line '-Y height +X width', found '" + resolution + "'");
    check_size(name_, at_line(line_), w, h);
    width_ = int(w), height_ = int(h);
  }

  std::string at_byte(int y, std::size_t byte) const {
    return "scanline " + std::to_string(y) + ", byte " + std::to_string(byte);
  }

  [[noreturn]] void truncated(int y) const {
    throw Error(name_, at_byte(y, bytes_.size()),
                "truncated: the file ends inside scanline " + std::to_string(y) + " of " +
                    std::to_string(height_));
  }

  std::uint8_t byte(int y) {
    if (pos_ >= bytes_.size()) truncated(y);
    return static_cast<std::uint8_t>(bytes_[pos_++]);
  }

  bool new_rle_follows() const {
    if (width_ < 8 || width_ > 0x7fff || bytes_.size() - pos_ < 4) return false;
    const auto* p = reinterpret_cast<const std::uint8_t*>(bytes_.data() + pos_);
    return p[0] == 2 && p[1] == 2 && (p[2] & 0x80) == 0;
  }

  /// One scanline into `scan` as RGBE quadruples.
  void read_scanline(int y, std::vector<std::uint8_t>& scan) {
    const std::size_t w = std::size_t(width_);
    if (new_rle_follows()) {
      const std::size_t start = pos_;
      pos_ += 2;
      const int stated = (int(byte(y)) << 8) | int(byte(y));
      if (stated != width_)
        throw Error(name_, at_byte(y, start),
                    "run-length encoded scanline of " + std::to_string(stated) +
                        " pixels in an image " + std::to_string(width_) + " wide");
      for (std::size_t c = 0; c < 4; ++c) {
        std::size_t x = 0;
        while (x < w) {
          const std::size_t at = pos_;
          const std::size_t count = byte(y);
          if (count > 128) {
            const std::size_t run = count - 128;
            if (x + run > w)
              throw Error(name_, at_byte(y, at),
                          "a run of " + std::to_string(run) + " overruns the scanline");
            const std::uint8_t value = byte(y);
            for (std::size_t i = 0; i < run; ++i) scan[(x + i) * 4 + c] = value;
            x += run;
          } else {
            if (count == 0) throw Error(name_, at_byte(y, at), "a run of length 0");
            if (x + count > w)
              throw Error(name_, at_byte(y, at),
                          std::to_string(count) + " literal bytes overrun the scanline");
            if (bytes_.size() - pos_ < count) truncated(y);
            for (std::size_t i = 0; i < count; ++i)
              scan[(x + i) * 4 + c] = static_cast<std::uint8_t>(bytes_[pos_ + i]);
            pos_ += count;
            x += count;
          }
        }
      }
      return;
    }
    // Flat pixels, with Radiance's old-style repeats (1, 1, 1, n): n << shift more of the last.
    int shift = 0;
    for (std::size_t x = 0; x < w;) {
      const std::size_t at = pos_;
      if (bytes_.size() - pos_ < 4) truncated(y);
      const auto* p = reinterpret_cast<const std::uint8_t*>(bytes_.data() + pos_);
      pos_ += 4;
      if (x > 0 && p[0] == 1 && p[1] == 1 && p[2] == 1) {
        const std::size_t count = shift > 16 ? w + 1 : std::size_t(p[3]) << shift;
        if (x + count > w)
          throw Error(name_, at_byte(y, at),
                      "a repeat of the previous pixel overruns the scanline");
        for (std::size_t i = 0; i < count; ++i, ++x)
          std::copy_n(&scan[(x - 1) * 4], 4, &scan[x * 4]);
        shift += 8;
      } else {
        std::copy_n(p, 4, &scan[x * 4]);
        ++x;
        shift = 0;
      }
    }
  }
};

bool looks_like_png(std::string_view b) {
  return b.size() >= 8 && b.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8);
}

bool looks_like_exr(std::string_view b) {
  return b.size() >= 4 && b.substr(0, 4) == std::string_view("\x76\x2f\x31\x01", 4);
}

// ---- spherical harmonics ------------------------------------------------------------------------

std::array<double, 9> sh_basis(double x, double y, double z) {
  return {0.282095,
          0.488603 * y,
          0.488603 * z,
          0.488603 * x,
          1.092548 * x * y,
          1.092548 * y * z,
          0.315392 * (3 * z * z - 1),
          1.092548 * x * z,
          0.546274 * (x * x - y * y)};
}

double smoothstep(double edge0, double edge1, double x) {
  const double t = std::clamp((x - edge0) / (edge1 - edge0), 0.0, 1.0);
  return t * t * (3 - 2 * t);
}

/// The angle from R beyond which the GGX lobe (N = V = R, α = roughness²) has fallen below
/// 10⁻³ of its peak, at most π/2: D(h)/D(R) = (α² / q)², q = α² + (1 − cos)(1 − α²)/2.
double ggx_window(double alpha) {
  const double a2 = alpha * alpha, reach = a2 / std::sqrt(1e-3);
  return reach >= 1 ? kPi / 2 : std::acos(std::max(0.0, 2 * (1 - reach) / (1 - a2) - 1));
}

/// The GGX prefilter with N = V = R of `source` onto a width × height map: each texel R is
/// Σ L(d) w(R·d) Ω(d) / Σ w(R·d) Ω(d) over the source texels d, w(c) = c · D(h) / D(R) for
/// c > 0, where (R·h)² = (1 + c)/2. The window is cut where D has fallen below 10⁻³ of its peak
/// (never closer than 1.5 source texels); inside it the sum is exact.
Environment convolve_ggx(const Environment& source, int width, int height, double alpha) {
  const double a2 = alpha * alpha;
  const double d_theta = kPi / source.height;
  const double rho = std::max(ggx_window(alpha), std::min(kPi / 2, 1.5 * d_theta));
  const double cos_cut = std::max(0.0, std::cos(rho));

  // Source texels as structure-of-arrays rows: direction, radiance.
  const std::size_t sw = std::size_t(source.width), n = sw * std::size_t(source.height);
  std::vector<float> dx(n), dy(n), dz(n), lr(n), lg(n), lb(n), omega(std::size_t(source.height));
  for (int y = 0; y < source.height; ++y) {
    omega[std::size_t(y)] = environment_texel_solid_angle(source, y);
    for (int x = 0; x < source.width; ++x) {
      const std::size_t i = std::size_t(y) * sw + std::size_t(x);
      const Vec3f d = environment_texel_direction(source, x, y), l = source.at(x, y);
      dx[i] = d.x, dy[i] = d.y, dz[i] = d.z, lr[i] = l.x, lg[i] = l.y, lb[i] = l.z;
    }
  }
  const float fa2 = float(a2), fcut = float(cos_cut), half_span = float(0.5 * (1 - a2));

  Environment out(width, height);
  for (int y = 0; y < height; ++y) {
    const double theta = kPi * (y + 0.5) / height;
    // Source rows the cap [θ − ρ, θ + ρ] touches, and its half extent in longitude.
    const int row0 = std::max(0, int(std::floor((theta - rho) / d_theta)));
    const int row1 = std::min(source.height - 1, int(std::floor((theta + rho) / d_theta)));
    const bool pole = theta - rho <= d_theta || theta + rho >= kPi - d_theta;
    const double dphi = pole ? kPi : std::asin(std::min(1.0, std::sin(rho) / std::sin(theta)));
    const int reach_cols = int(std::ceil(dphi / (2 * kPi) * source.width)) + 1;
    const bool all_columns = pole || 2 * reach_cols + 1 >= source.width;
    for (int x = 0; x < width; ++x) {
      const Vec3f r = environment_texel_direction(out, x, y);
      double sr = 0, sg = 0, sb = 0, sw_total = 0;
      // Columns [c0, c1) of one row: w = c · (a2 / q)², q = a2 + (1 − c)(1 − a2)/2.
      auto span = [&](int row, int c0, int c1) {
        const std::size_t base = std::size_t(row) * sw;
        const std::size_t begin = base + std::size_t(c0), end = base + std::size_t(c1);
        std::size_t i = begin;
        simd::F4 ar = simd::zero(), ag = ar, ab = ar, aw = ar;
        const simd::F4 rx = simd::splat(r.x), ry = simd::splat(r.y), rz = simd::splat(r.z);
        const simd::F4 va2 = simd::splat(fa2), one = simd::splat(1.0f), cut = simd::splat(fcut);
        const simd::F4 span_v = simd::splat(half_span);
        for (; i + 4 <= end; i += 4) {
          const simd::F4 c =
              rx * simd::loadu(&dx[i]) + ry * simd::loadu(&dy[i]) + rz * simd::loadu(&dz[i]);
          const simd::F4 ratio = va2 / (va2 + (one - c) * span_v);
          const simd::F4 w = simd::select(simd::greater(c, cut), c * ratio * ratio, simd::zero());
          ar = ar + w * simd::loadu(&lr[i]), ag = ag + w * simd::loadu(&lg[i]);
          ab = ab + w * simd::loadu(&lb[i]), aw = aw + w;
        }
        float lanes[4][4];
        simd::storeu(lanes[0], ar), simd::storeu(lanes[1], ag), simd::storeu(lanes[2], ab);
        simd::storeu(lanes[3], aw);
        float acc[4] = {};
        for (int k = 0; k < 4; ++k)
          for (int lane = 0; lane < 4; ++lane) acc[k] += lanes[k][lane];
        for (; i < end; ++i) {
          const float c = r.x * dx[i] + r.y * dy[i] + r.z * dz[i];
          const float ratio = fa2 / (fa2 + (1 - c) * half_span);
          const float w = c > fcut ? c * ratio * ratio : 0.0f;
          acc[0] += w * lr[i], acc[1] += w * lg[i], acc[2] += w * lb[i], acc[3] += w;
        }
        const float ar_ = acc[0], ag_ = acc[1], ab_ = acc[2], aw_ = acc[3];
        const double o = omega[std::size_t(row)];
        sr += ar_ * o, sg += ag_ * o, sb += ab_ * o, sw_total += aw_ * o;
      };
      const int centre = int(std::floor((x + 0.5) * source.width / double(width)));
      for (int row = row0; row <= row1; ++row) {
        if (all_columns) {
          span(row, 0, source.width);
          continue;
        }
        int c0 = centre - reach_cols, c1 = centre + reach_cols + 1;  // may wrap
        if (c0 < 0) span(row, c0 + source.width, source.width), c0 = 0;
        if (c1 > source.width) span(row, 0, c1 - source.width), c1 = source.width;
        span(row, c0, c1);
      }
      out.at(x, y) = sw_total > 0 ? Vec3f(Vec3{sr, sg, sb} / sw_total)
                                  : source.radiance(r);  // no texel in reach: cannot happen
    }
  }
  return out;
}

}  // namespace

// ---- the map ------------------------------------------------------------------------------------

Environment::Environment(int w, int h, Vec3f fill)
    : width(w),
      height(h),
      texels(std::size_t(std::max(w, 0)) * std::size_t(std::max(h, 0)), fill) {}

Vec3f Environment::radiance(const Vec3f& direction) const {
  if (is_empty(*this) || !is_finite(direction) || length_squared(direction) == 0.0f) return {};
  const auto [u, v] = environment_uv(direction);
  return sample_uv(*this, u, v);
}

Vec3f environment_direction(float u, float v) {
  const double phi = 2 * kPi * (double(u) - 0.5), theta = kPi * double(v);
  const double s = std::sin(theta);
  return {float(s * std::sin(phi)), float(std::cos(theta)), float(-s * std::cos(phi))};
}

std::array<float, 2> environment_uv(const Vec3f& d) {
  if (!is_finite(d) || length_squared(Vec3(d)) == 0.0) return {0.5f, 0.5f};
  const double phi = std::atan2(double(d.x), -double(d.z));
  const double theta = std::atan2(std::hypot(double(d.x), double(d.z)), double(d.y));
  return {float(std::clamp(0.5 + phi / (2 * kPi), 0.0, 1.0)),
          float(std::clamp(theta / kPi, 0.0, 1.0))};
}

Vec3f environment_texel_direction(const Environment& e, int x, int y) {
  return environment_direction((float(x) + 0.5f) / float(e.width),
                               (float(y) + 0.5f) / float(e.height));
}

float environment_texel_solid_angle(const Environment& e, int y) {
  if (e.width < 1 || e.height < 1) return 0;
  return float(2 * kPi / e.width *
               (std::cos(row_edge_theta(y, e.height)) - std::cos(row_edge_theta(y + 1, e.height))));
}

Vec3f mean_radiance(const Environment& e) {
  if (is_empty(e)) return {};
  Vec3 sum;
  for (int y = 0; y < e.height; ++y) {
    Vec3 row;
    for (int x = 0; x < e.width; ++x) row += Vec3(e.at(x, y));
    sum += row * double(environment_texel_solid_angle(e, y));
  }
  return Vec3f(sum / (4 * kPi));
}

Environment resample_environment(const Environment& e, int width, int height) {
  if (is_empty(e) || width < 1 || height < 1) return {};
  const auto columns = taps(e.width, width, [](double a, double b) { return b - a; });
  const double from_h = e.height;
  const auto rows = taps(e.height, height, [&](double a, double b) {
    return std::cos(kPi * a / from_h) - std::cos(kPi * b / from_h);
  });
  Environment across(width, e.height);
  for (int y = 0; y < e.height; ++y)
    for (int x = 0; x < width; ++x) {
      Vec3f sum;
      for (const Tap& t : columns[std::size_t(x)]) sum += e.at(t.index, y) * t.weight;
      across.at(x, y) = sum;
    }
  Environment out(width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      Vec3f sum;
      for (const Tap& t : rows[std::size_t(y)]) sum += across.at(x, t.index) * t.weight;
      out.at(x, y) = sum;
    }
  return out;
}

// ---- loading ------------------------------------------------------------------------------------

Environment environment_from_image(const composite::Image& image, const std::string& name) {
  check_size(name, "", image.width, image.height);
  if (image.pixels.size() != std::size_t(image.width) * std::size_t(image.height))
    throw Error(
        name, "",
        "image holds " + std::to_string(image.pixels.size()) + " pixels, not width × height");
  Environment env(image.width, image.height);
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      const composite::Rgba& p = image.at(x, y);
      const Vec3f c{p.r, p.g, p.b};
      if (!is_finite(c) || c.x < 0 || c.y < 0 || c.z < 0)
        throw Error(name, "pixel (" + std::to_string(x) + ", " + std::to_string(y) + ")",
                    "radiance (" + std::to_string(c.x) + ", " + std::to_string(c.y) + ", " +
                        std::to_string(c.z) + ") is negative or not finite");
      env.at(x, y) = c;
    }
  return env;
}

Environment decode_hdr(std::string_view bytes, const std::string& name) {
  return HdrReader(bytes, name).read();
}

Environment load_environment(const std::string& path) {
  const std::string bytes = read_file(path);
  if (bytes.starts_with("#?")) return decode_hdr(bytes, path);
  if (looks_like_png(bytes))
    return environment_from_image(composite::decode_png(bytes, path), path);
  if (looks_like_exr(bytes))
    return environment_from_image(composite::decode_exr(bytes, path), path);
  const std::string ext = extension_of(path);
  if (ext == "hdr" || ext == "pic" || ext == "rgbe") return decode_hdr(bytes, path);
  throw Error(path, bytes.empty() ? "" : "byte 0",
              bytes.empty() ? "is empty, not an environment image"
                            : "not a Radiance .hdr, OpenEXR or PNG image");
}

// ---- the default sky ----------------------------------------------------------------------------

Vec3f default_sun_direction() { return normalize(Vec3f{0.35f, 0.85f, 0.45f}); }

Environment default_sky(bool include_sun) {
  constexpr int kWidth = 256, kHeight = 128;
  // The renderer's fixed lighting (kShadeGlsl): outgoing radiance of a white surface is
  // 0.55 · mix(ground, sky, ½ n.y + ½) + 0.85 · sun · max(n · s, 0).
  const Vec3 sky_target = Vec3{0.55, 0.62, 0.75} * 0.55;
  const Vec3f ground{0.55f * 0.22f, 0.55f * 0.19f, 0.55f * 0.16f};
  const Vec3 sun_colour{1.0, 0.95, 0.88};
  constexpr double kSunTarget = 0.85;
  // The sky's shape before scaling: zenith blue, brightening to a pale horizon.
  const Vec3 zenith{0.44, 0.56, 0.80}, horizon{0.68, 0.75, 0.82};
  const Vec3 s(default_sun_direction());
  const double inner = std::cos(2.0 * kPi / 180), outer = std::cos(3.0 * kPi / 180);

  Environment sky(kWidth, kHeight);
  std::vector<float> sun_weight(sky.texels.size());
  Vec3 sky_e;        // E/π of the unscaled sky on an upward surface
  double sun_e = 0;  // E/π of the unit-radiance sun disc on a surface facing it
  for (int y = 0; y < kHeight; ++y) {
    const double omega = environment_texel_solid_angle(sky, y);
    for (int x = 0; x < kWidth; ++x) {
      const Vec3 d(environment_texel_direction(sky, x, y));
      const std::size_t i = std::size_t(y) * kWidth + std::size_t(x);
      if (d.y > 0) {
        const double t = std::pow(1 - d.y, 4);
        const Vec3 shape = lerp(zenith, horizon, t);
        sky.texels[i] = Vec3f(shape);
        sky_e += shape * (d.y * omega / kPi);
      } else {
        sky.texels[i] = ground;
      }
      const double cos_sun = dot(d, s);
      sun_weight[i] = float(smoothstep(outer, inner, cos_sun));
      sun_e += sun_weight[i] * std::max(cos_sun, 0.0) * omega / kPi;
    }
  }
  const Vec3f scale{float(sky_target.x / sky_e.x), float(sky_target.y / sky_e.y),
                    float(sky_target.z / sky_e.z)};
  const Vec3f sun = Vec3f(sun_colour * (kSunTarget / sun_e));
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      const std::size_t i = std::size_t(y) * kWidth + std::size_t(x);
      if (environment_texel_direction(sky, x, y).y > 0) sky.texels[i] = mul(sky.texels[i], scale);
      if (include_sun) sky.texels[i] += sun * sun_weight[i];
    }
  return sky;
}

// ---- diffuse ------------------------------------------------------------------------------------

std::array<Vec3f, 9> irradiance_sh9(const Environment& e) {
  std::array<Vec3f, 9> result{};
  if (is_empty(e)) return result;
  std::array<Vec3, 9> sum{};
  std::vector<double> sin_phi(std::size_t(e.width)), cos_phi(std::size_t(e.width));
  for (int x = 0; x < e.width; ++x) {
    const double phi = 2 * kPi * ((x + 0.5) / e.width - 0.5);
    sin_phi[std::size_t(x)] = std::sin(phi), cos_phi[std::size_t(x)] = std::cos(phi);
  }
  for (int y = 0; y < e.height; ++y) {
    const double theta = kPi * (y + 0.5) / e.height;
    const double st = std::sin(theta), ct = std::cos(theta);
    const double omega = environment_texel_solid_angle(e, y);
    std::array<Vec3, 9> row{};
    for (int x = 0; x < e.width; ++x) {
      const auto b = sh_basis(st * sin_phi[std::size_t(x)], ct, -st * cos_phi[std::size_t(x)]);
      const Vec3 l(e.at(x, y));
      for (std::size_t i = 0; i < 9; ++i) row[i] += l * b[i];
    }
    for (std::size_t i = 0; i < 9; ++i) sum[i] += row[i] * omega;
  }
  // Clamped-cosine convolution (Ramamoorthi & Hanrahan 2001): Â₀ = π, Â₁ = 2π/3, Â₂ = π/4.
  constexpr double kBand[9] = {kPi,     2 * kPi / 3, 2 * kPi / 3, 2 * kPi / 3, kPi / 4,
                               kPi / 4, kPi / 4,     kPi / 4,     kPi / 4};
  for (std::size_t i = 0; i < 9; ++i) result[i] = Vec3f(sum[i] * kBand[i]);
  return result;
}

Vec3f irradiance(const std::array<Vec3f, 9>& c, const Vec3f& normal) {
  const Vec3f n = normalize(normal, Vec3f::unit_y());
  const auto b = sh_basis(n.x, n.y, n.z);
  Vec3f e;
  for (std::size_t i = 0; i < 9; ++i) e += c[i] * float(b[i]);
  return e;
}

// ---- specular -----------------------------------------------------------------------------------

float specular_level_roughness(int level, int levels) {
  return levels <= 1 ? 0.0f : float(level) / float(levels - 1);
}

std::vector<Environment> prefilter_specular(const Environment& environment, int levels) {
  if (is_empty(environment)) throw UsageError("prefilter_specular: the environment is empty");
  if (levels < 1 || levels > 16)
    throw UsageError("prefilter_specular: levels must be 1 … 16, not " + std::to_string(levels));
  const int w0 = std::min(environment.width, 512), h0 = std::min(environment.height, 256);
  std::vector<Environment> chain;
  chain.push_back(w0 == environment.width && h0 == environment.height
                      ? environment
                      : resample_environment(environment, w0, h0));
  if (levels == 1) return chain;

  // A box-filtered pyramid of level 0 with an OpenGL mip chain's sizes, down to 1 × 1: level k
  // has pyramid[k]'s size.
  std::vector<Environment> pyramid{chain[0]};
  while (pyramid.back().width > 1 || pyramid.back().height > 1) {
    const Environment& p = pyramid.back();
    pyramid.push_back(resample_environment(p, std::max(1, p.width / 2), std::max(1, p.height / 2)));
  }
  const int last = int(pyramid.size()) - 1;
  constexpr double kBudget = double(1 << 24);
  for (int k = 1; k < levels; ++k) {
    const double r = specular_level_roughness(k, levels), alpha = r * r;
    // The source, by its texels' angle against the lobe's half width (the angle from R at which
    // GGX falls to half its peak): ideally at most an eighth of it. Start from level k's own
    // pyramid map; go finer while that is too coarse and costs at most kBudget texel pairs in
    // the window; go coarser while the next is still fine enough, or while over budget and the
    // next keeps its texels within half the half width.
    const double half_width = 2 * std::asin(std::min(1.0, 0.64 * alpha));
    const double fine_enough = half_width / 8, coarsest = half_width / 2;
    const double window = (1 - std::cos(ggx_window(alpha))) / 2;  // share of the sphere
    const Environment& target = pyramid[std::size_t(std::min(k, last))];
    auto texel_angle = [&](int j) { return kPi / pyramid[std::size_t(j)].height; };
    auto pairs = [&](int j) {
      return double(target.texels.size()) * double(pyramid[std::size_t(j)].texels.size()) * window;
    };
    int source = std::min(k, last);
    while (source > 0 && texel_angle(source) > fine_enough && pairs(source - 1) <= kBudget)
      --source;
    while (source < last && (texel_angle(source + 1) <= fine_enough ||
                             (pairs(source) > kBudget && texel_angle(source + 1) <= coarsest)))
      ++source;
    chain.push_back(convolve_ggx(pyramid[std::size_t(source)], target.width, target.height, alpha));
  }
  return chain;
}

}  // namespace kinema
