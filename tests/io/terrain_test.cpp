// tests/io/terrain_test.cpp — ground for foot placement from files: PNG height maps and OBJ
// meshes, including truncated, malformed and hostile input.
#include "kinema/io/terrain.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "test_paths.h"

namespace kinema {
namespace {

const std::string kDemo = test_paths::source_dir() + "/data/demo";

// ---- a minimal PNG encoder (stored deflate blocks), so tests can make any image ------------

uint32_t crc32(const std::string& bytes) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

void put32(std::string& s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::string chunk(const std::string& type, const std::string& data) {
  std::string s;
  put32(s, static_cast<uint32_t>(data.size()));
  const std::string body = type + data;
  s += body;
  put32(s, crc32(body));
  return s;
}

/// PNG of `w`×`h` samples (`channels` per pixel: 1 gray, 2 gray+alpha, 3 RGB) at `bits` 8 or 16.
std::string make_png(int w, int h, int bits, int channels, const std::vector<uint16_t>& samples,
                     uint32_t header_w = 0, uint32_t header_h = 0) {
  std::string raw;
  const int bytes = bits / 8;
  for (int y = 0; y < h; ++y) {
    raw += '\0';  // filter: none
    for (int x = 0; x < w * channels; ++x) {
      const uint16_t v = samples[static_cast<size_t>(y * w * channels + x)];
      if (bytes == 2) raw += static_cast<char>(v >> 8);
      raw += static_cast<char>(v & 0xff);
    }
  }
  // zlib stream of stored blocks.
  std::string z = "\x78\x01";
  size_t pos = 0;
  do {
    const size_t n = std::min<size_t>(65535, raw.size() - pos);
    const bool last = pos + n == raw.size();
    z += static_cast<char>(last ? 1 : 0);
    z += static_cast<char>(n & 0xff);
    z += static_cast<char>(n >> 8);
    z += static_cast<char>(~n & 0xff);
    z += static_cast<char>((~n >> 8) & 0xff);
    z += raw.substr(pos, n);
    pos += n;
  } while (pos < raw.size());
  uint32_t a = 1, b = 0;
  for (unsigned char c : raw) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  put32(z, (b << 16) | a);
  const int colour_type = channels == 1 ? 0 : channels == 2 ? 4 : 2;
  std::string ihdr;
  put32(ihdr, header_w ? header_w : static_cast<uint32_t>(w));
  put32(ihdr, header_h ? header_h : static_cast<uint32_t>(h));
  ihdr += static_cast<char>(bits);
  ihdr += static_cast<char>(colour_type);
  ihdr += std::string(3, '\0');
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", z) +
         chunk("IEND", "");
}

double height_at(const HeightField& f, double x, double z) {
  double h = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(f.height(x, z, h)) << x << ", " << z;
  return h;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// ---- PNG height maps ------------------------------------------------------------------------

TEST(TerrainPng, EightBitGrayIsCentredTopView) {
  // 3×2: row 0 = 0, 255, 51; row 1 = 102, 153, 204.
  const std::string png = make_png(3, 2, 8, 1, {0, 255, 51, 102, 153, 204});
  HeightMapOptions o;
  o.cell_size = 0.5;
  o.height_range = 2.0;
  HeightMapInfo info;
  const HeightField f = decode_height_map_png(png, "t.png", o, &info);
  EXPECT_EQ(info.width, 3);
  EXPECT_EQ(info.height, 2);
  EXPECT_EQ(info.bits, 8);
  EXPECT_EQ(f.width(), 3);
  EXPECT_EQ(f.depth(), 2);
  EXPECT_DOUBLE_EQ(f.origin_x(), -0.5);  // centred: x in [−0.5, 0.5], z in [−0.25, 0.25]
  EXPECT_DOUBLE_EQ(f.origin_z(), -0.25);
  EXPECT_DOUBLE_EQ(height_at(f, -0.5, -0.25), 0.0);
  EXPECT_DOUBLE_EQ(height_at(f, 0.0, -0.25), 2.0);              // column 1 → +X
  EXPECT_DOUBLE_EQ(height_at(f, -0.5, 0.25), 102.0 / 255 * 2);  // row 1 → +Z
  EXPECT_DOUBLE_EQ(height_at(f, 0.5, 0.25), 204.0 / 255 * 2);
}

TEST(TerrainPng, SixteenBitOriginBaseAndNegativeRange) {
  const std::string png = make_png(2, 2, 16, 1, {0, 65535, 32768, 1});
  HeightMapOptions o;
  o.cell_size = 0.5;
  o.height_range = -1.0;  // white is low
  o.base_height = 0.5;
  o.origin = std::array<double, 2>{10, -20};
  HeightMapInfo info;
  const HeightField f = decode_height_map_png(png, "t.png", o, &info);
  EXPECT_EQ(info.bits, 16);
  EXPECT_DOUBLE_EQ(f.origin_x(), 10);
  EXPECT_DOUBLE_EQ(f.origin_z(), -20);
  EXPECT_DOUBLE_EQ(height_at(f, 10, -20), 0.5);
  EXPECT_DOUBLE_EQ(height_at(f, 10.5, -20), -0.5);
  EXPECT_NEAR(height_at(f, 10, -19.5), 0.5 - 32768.0 / 65535, 1e-15);
  EXPECT_NEAR(height_at(f, 10.5, -19.5), 0.5 - 1.0 / 65535, 1e-15);  // 16 bits kept
}

TEST(TerrainPng, GrayAlphaAndGrayRgbAreAccepted) {
  const HeightField a = decode_height_map_png(
      make_png(2, 2, 8, 2, {255, 0, 0, 255, 0, 7, 255, 255}), "ga.png");  // alpha ignored
  EXPECT_DOUBLE_EQ(height_at(a, a.origin_x(), a.origin_z()), 1.0);
  const HeightField rgb = decode_height_map_png(
      make_png(2, 2, 8, 3, {10, 10, 10, 20, 20, 20, 30, 30, 30, 255, 255, 255}), "rgb.png");
  EXPECT_DOUBLE_EQ(height_at(rgb, rgb.origin_x(), rgb.origin_z()), 10.0 / 255);
}

TEST(TerrainPng, ColourPixelIsRefusedByName) {
  const std::string png = make_png(2, 2, 8, 3, {10, 10, 10, 20, 20, 20, 30, 31, 30, 0, 0, 0});
  const std::string msg = error_of([&] { decode_height_map_png(png, "c.png"); });
  EXPECT_NE(msg.find("c.png:pixel (0, 1)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not gray"), std::string::npos) << msg;
}

TEST(TerrainPng, BadFilesFailWithFileAndReason) {
  const std::string good = make_png(4, 4, 8, 1, std::vector<uint16_t>(16, 9));
  struct Case {
    std::string bytes, expect;
  };
  const std::vector<Case> cases = {
      {"", "is empty"},
      {"P6\n2 2\n255\n", "not a PNG"},
      {std::string("\x89PNG\r\n\x1a\n", 8), "no IHDR"},  // signature only
      // A header claiming 4294967295 × 4294967295.
      {make_png(2, 2, 8, 1, {0, 0, 0, 0}, 0xffffffffu, 0xffffffffu), "at most 16,777,216"},
      {good.substr(0, good.size() / 2), "cannot"},  // truncated inside IDAT
      {make_png(1, 5, 8, 1, std::vector<uint16_t>(5, 0)), "at least 2×2"},
      {make_png(2, 1, 8, 1, std::vector<uint16_t>(2, 0)), "at least 2×2"},
      // A header claiming 60000×60000 pixels over 16 bytes of data: refused from the header.
      {make_png(2, 2, 8, 1, {0, 0, 0, 0}, 60000, 60000), "at most 16,777,216"},
      // A header claiming 2000×2000 (allowed) with the data of 2×2: the decoder runs out.
      {make_png(2, 2, 8, 1, {0, 0, 0, 0}, 2000, 2000), "cannot decode"},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of([&] { decode_height_map_png(c.bytes, "bad.png"); });
    EXPECT_EQ(msg.rfind("bad.png", 0), 0u) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << "expected '" << c.expect << "': " << msg;
  }
  // Corrupt compressed data (the zlib header is damaged).
  std::string broken = good;
  const size_t idat = broken.find("IDAT");
  broken[idat + 4] = '\x7f';
  broken[idat + 5] = '\x7f';
  EXPECT_NE(error_of([&] { decode_height_map_png(broken, "z.png"); }).find("z.png"),
            std::string::npos);
}

TEST(TerrainPng, AChunkLongerThanTheFileIsRefusedBeforeDecoding) {
  // Found by fuzz_png: an IDAT stating 2,080,374,805 bytes in a 75-byte file made stb_image
  // reserve over 1 GiB for it before reading.
  std::string png = make_png(2, 2, 8, 1, {0, 0, 0, 0});
  const size_t idat = png.find("IDAT") - 4;
  png.replace(idat, 4, std::string("\x7c\x00\x00\x15", 4));
  try {
    decode_height_map_png(png, "long.png");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "long.png");
    EXPECT_EQ(e.place(), "byte " + std::to_string(idat));
    EXPECT_NE(e.reason().find("states 2080374805 bytes"), std::string::npos) << e.what();
  }
  // A chunk header cut short is refused the same way.
  const std::string good = make_png(2, 2, 8, 1, {0, 0, 0, 0});
  EXPECT_NE(error_of([&] {
              decode_height_map_png(good.substr(0, 8 + 25 + 6), "cut.png");
            }).find("too few for a chunk"),
            std::string::npos);
}

TEST(TerrainPng, EmptyImageDataChunksAreSkipped) {
  // Found by fuzz_png: an empty IDAT before any image data made stb_image copy from a null
  // buffer (undefined behaviour, reported by UBSan). Empty IDATs are legal and carry nothing: the
  // file decodes as without them.
  const std::string png = make_png(2, 2, 8, 1, {0, 64, 128, 255});
  const size_t idat = png.find("IDAT") - 4;
  std::string padded = png;
  padded.insert(idat, std::string("\0\0\0\0IDAT\x35\xaf\x06\x1e", 12));  // before the data
  padded.insert(padded.rfind("IEND") - 4, std::string("\0\0\0\0IDAT\x35\xaf\x06\x1e", 12));
  const HeightField a = decode_height_map_png(png, "plain.png");
  const HeightField b = decode_height_map_png(padded, "padded.png");
  ASSERT_EQ(b.width(), 2);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      const double x = a.origin_x() + i * a.cell_size(), z = a.origin_z() + j * a.cell_size();
      EXPECT_EQ(height_at(a, x, z), height_at(b, x, z)) << i << ", " << j;
    }
  EXPECT_NE(height_at(a, a.origin_x(), a.origin_z()),
            height_at(a, a.origin_x() + a.cell_size(), a.origin_z() + a.cell_size()));
  // With no image data at all it is refused, naming the file.
  std::string none = png;
  const uint32_t length = static_cast<unsigned char>(png[idat + 3]);
  none.replace(idat, 12 + length, std::string("\0\0\0\0IDAT\x35\xaf\x06\x1e", 12));
  EXPECT_NE(error_of([&] { decode_height_map_png(none, "none.png"); }).find("none.png"),
            std::string::npos);
}

TEST(TerrainPng, BadOptionsAreRefused) {
  const std::string png = make_png(2, 2, 8, 1, {0, 0, 0, 0});
  HeightMapOptions o;
  o.cell_size = 0;
  EXPECT_NE(error_of([&] { decode_height_map_png(png, "o.png", o); }).find("cell size"),
            std::string::npos);
  o = {};
  o.height_range = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(error_of([&] { decode_height_map_png(png, "o.png", o); }).find("height range"),
            std::string::npos);
  o = {};
  o.origin = std::array<double, 2>{0, std::numeric_limits<double>::infinity()};
  EXPECT_NE(error_of([&] { decode_height_map_png(png, "o.png", o); }).find("origin"),
            std::string::npos);
}

TEST(TerrainPng, MissingFileNamesIt) {
  const std::string msg = error_of([] { load_height_map_png("/nonexistent/x.png"); });
  EXPECT_NE(msg.find("/nonexistent/x.png"), std::string::npos) << msg;
}

TEST(TerrainPng, BundledSlope) {
  GroundFile g = load_ground(kDemo + "/slope.png");
  EXPECT_NE(g.description.find("81×121 16-bit"), std::string::npos) << g.description;
  EXPECT_NEAR(g.lo.x, -2, 1e-12);
  EXPECT_NEAR(g.hi.z, 3, 1e-12);
  EXPECT_NEAR(g.lo.y, 0, 1e-12);
  EXPECT_NEAR(g.hi.y, 0.25, 1e-4);
  GroundHit hit;
  ASSERT_TRUE(g.ground->ray_down({0.6, 2, 0}, 5, hit));
  EXPECT_NEAR(hit.point.y, 0.125, 1e-4);  // half-way up the ramp
  EXPECT_GT(hit.normal.z, -0.2);
  EXPECT_LT(hit.normal.z, -0.05);  // the ramp rises along +Z: its normal leans back
  // An offset moves it.
  GroundFileOptions o;
  o.offset = {1, 0.5, 2};
  g = load_ground(kDemo + "/slope.png", o);
  ASSERT_TRUE(g.ground->ray_down({1.6, 3, 2}, 5, hit));
  EXPECT_NEAR(hit.point.y, 0.625, 1e-4);
  EXPECT_NEAR(g.lo.x, -1, 1e-12);
}

// ---- OBJ meshes -------------------------------------------------------------------------------

TEST(TerrainObj, FacesOfEveryFormAreFanned) {
  const std::string text =
      "# a comment\n"
      "mtllib x.mtl\no thing\ng group\ns off\n"
      "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1  # trailing comment\n"
      "vt 0 0\nvt 1 0\nvn 0 1 0\n"
      "usemtl m\n"
      "f 1 2 3 4\n"               // quad → 2 triangles
      "f 1/1 2/2 3/1\r\n"         // CRLF, v/vt
      "f 1//1 3//1 4//1\n"        // v//vn
      "f -4/1/1 -3/2/1 -2/1/1\n"  // negative, v/vt/vn
      "l 1 2\n"
      "v 5 1 5 1.0 0.5 0.5 0.5\n"  // w and vertex colours ignored
      "f\t2 3 5\n";
  const ObjTriangles t = parse_obj_triangles(text, "m.obj");
  EXPECT_EQ(t.faces, 5);
  EXPECT_EQ(t.vertices.size(), 5u);
  EXPECT_EQ(t.dropped_degenerate, 0);
  const std::vector<int> expected{0, 1, 2, 0, 2, 3, 0, 1, 2, 0, 2, 3, 0, 1, 2, 1, 2, 4};
  EXPECT_EQ(t.indices, expected);
  EXPECT_EQ(t.vertices[4], (Vec3{5, 1, 5}));
}

TEST(TerrainObj, ScaleOffsetAndDegenerateTriangles) {
  ObjGroundOptions o;
  o.scale = 0.01;  // centimetres
  o.offset = {1, 2, 3};
  const ObjTriangles t = parse_obj_triangles(
      "v 0 0 0\nv 100 0 0\nv 100 0 100\nv 200 0 0\nf 1 2 3\nf 1 2 4\n", "cm.obj", o);
  EXPECT_EQ(t.faces, 2);
  EXPECT_EQ(t.dropped_degenerate, 1);  // 1 2 4 are collinear
  EXPECT_EQ(t.indices.size(), 3u);
  EXPECT_NEAR(length(t.vertices[2] - Vec3{2, 2, 4}), 0, 1e-12);
  const std::string msg =
      error_of([] { parse_obj_triangles("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", "flat.obj"); });
  EXPECT_NE(msg.find("every face is degenerate"), std::string::npos) << msg;
}

TEST(TerrainObj, MalformedLinesNameTheLine) {
  struct Case {
    std::string text, expect;
  };
  const std::string v3 = "v 0 0 0\nv 1 0 0\nv 0 0 1\n";
  const std::vector<Case> cases = {
      {"v 1 2\n", "line 1: a vertex needs three coordinates"},
      {"\n\nv 1 abc 3\n", "line 3: vertex coordinate 'abc' is not a number"},
      {"v 1 2 3x\n", "line 1: vertex coordinate '3x' is not a number"},
      {"v 1 nan 3\n", "line 1: vertex coordinate 'nan' is not finite"},
      {"v 1 inf 3\n", "line 1: vertex coordinate 'inf' is not finite"},
      {"v 1 1e999 3\n", "line 1: vertex coordinate '1e999' is not a number"},
      {v3 + "f 1 2\n", "line 4: a face needs at least three vertices"},
      {v3 + "f 0 1 2\n", "line 4: face vertex index 0"},
      {v3 + "f 1 2 4\n", "line 4: face vertex index 4 out of range (3 vertices defined so far)"},
      {v3 + "f -4 1 2\n", "line 4: face vertex index -4 out of range"},
      {"f 1 2 3\n" + v3, "line 1: face vertex index 1 out of range (0 vertices"},
      {v3 + "f 1 x 2\n", "line 4: face vertex 'x' is not an index"},
      {v3 + "f 1 /2 3\n", "line 4: face vertex '/2' is not an index"},
      {v3 + "f 1 99999999999999999999999 2\n", "is not an index"},
      {v3 + "f 1 2 2147483648\n", "out of range"},
      {"", "has no faces"},
      {v3 + "vt 0 0\n# f 1 2 3\n", "has no faces"},
      {std::string("\x00\x01\xff\xfe garbage\n\x89PNG", 18), "has no faces"},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of([&] { parse_obj_triangles(c.text, "bad.obj"); });
    EXPECT_EQ(msg.rfind("bad.obj", 0), 0u) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << "expected '" << c.expect << "': " << msg;
  }
  ObjGroundOptions o;
  o.scale = 0;
  EXPECT_NE(error_of([&] { parse_obj_triangles(v3 + "f 1 2 3\n", "s.obj", o); }).find("scale"),
            std::string::npos);
  o.scale = 1e308;  // finite, but the vertices overflow
  EXPECT_NE(error_of([&] {
              parse_obj_triangles("v 1e10 0 0\nf 1 1 1\n", "s.obj", o);
            }).find("not finite once scaled"),
            std::string::npos);
}

TEST(TerrainObj, HugeFaceIsFannedWithoutTrouble) {
  // One polygon of 20,000 vertices on a circle.
  std::string text;
  const int n = 20000;
  for (int i = 0; i < n; ++i)
    text += "v " + std::to_string(std::cos(2 * 3.141592653589793 * i / n)) + " 0 " +
            std::to_string(std::sin(2 * 3.141592653589793 * i / n)) + "\n";
  text += "f";
  for (int i = 1; i <= n; ++i) text += " " + std::to_string(i);
  text += "\n";
  const ObjTriangles t = parse_obj_triangles(text, "disc.obj");
  EXPECT_EQ(t.indices.size() / 3 + static_cast<size_t>(t.dropped_degenerate),
            static_cast<size_t>(n - 2));
  const TriangleMeshGround g(t.vertices, t.indices);
  GroundHit hit;
  EXPECT_TRUE(g.ray_down({0.1, 1, 0.2}, 2, hit));
  EXPECT_NEAR(hit.point.y, 0, 1e-12);
}

TEST(TerrainObj, BundledStairs) {
  ObjTriangles t;
  const TriangleMeshGround g = load_obj_ground(kDemo + "/stairs.obj", {}, &t);
  EXPECT_EQ(g.triangle_count(), 24u);
  EXPECT_EQ(t.dropped_degenerate, 0);
  // Treads: 0 before z = −0.9, then +0.15 every 0.30 m, the landing at 0.75 from z = 0.3.
  const double z[] = {-2, -0.75, -0.45, -0.15, 0.15, 0.45, 2};
  const double h[] = {0, 0.15, 0.30, 0.45, 0.60, 0.75, 0.75};
  for (int i = 0; i < 7; ++i) {
    GroundHit hit;
    ASSERT_TRUE(g.ray_down({0.6, 3, z[i]}, 5, hit)) << z[i];
    EXPECT_NEAR(hit.point.y, h[i], 1e-12) << z[i];
    EXPECT_NEAR(hit.normal.y, 1, 1e-12);
  }
  const GroundFile file = load_ground(kDemo + "/stairs.obj");
  EXPECT_EQ(file.description, "mesh, 24 triangles");
  EXPECT_NEAR(file.hi.y, 0.75, 1e-12);
}

TEST(TerrainFile, UnknownExtensionAndMissingFile) {
  EXPECT_NE(error_of([] { load_ground("ground.txt"); }).find("cannot read '.txt' as ground"),
            std::string::npos);
  const std::string msg = error_of([] { load_ground("/nonexistent/g.obj"); });
  EXPECT_NE(msg.find("/nonexistent/g.obj"), std::string::npos) << msg;
  GroundFileOptions o;
  o.offset.x = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(error_of([&] { load_ground(kDemo + "/stairs.obj", o); }).find("offset"),
            std::string::npos);
}

}  // namespace
}  // namespace kinema
