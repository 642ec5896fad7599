// OpenVDB volume files: round trips (values, names, origin, voxel size, inactive zeros kept as
// zeros, the written extent), half-float storage, sparseness, metadata, every bad input refused
// with no file written or touched, truncated and garbage files refused, foreign files (OpenVDB's
// own: active bounding box, vector grids and rotated transforms refused), the frame-path helper.
// Set KINEMA_VDB_KEEP=folder to keep the smoke blobs the Blender check reads (smoke_blob.vdb, and
// smoke_haze.vdb with every voxel active, smoke_half.vdb stored as halves).
#include "kinema/fluid/volume_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include <openvdb/io/File.h>
#include <openvdb/io/Stream.h>
#include <openvdb/openvdb.h>

#include "common/error_of.h"
#include "kinema/core/error.h"

namespace kinema {
namespace {

namespace fs = std::filesystem;
using test::error_of;

/// A folder of this process's own, removed when the tests end.
std::string scratch_dir() {
  struct Dir {
    fs::path path = fs::temp_directory_path() / ("kinema_vdb_test_" + std::to_string(::getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path.string();
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Files in `dir` other than `keep` (a failed write must leave no temporary behind).
int other_files(const std::string& dir, const std::string& keep) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != keep) ++n;
  return n;
}

VolumeGrid make_grid(const std::string& name, int nx, int ny, int nz, Vec3 origin, double h,
                     const std::function<float(int, int, int)>& f) {
  VolumeGrid g{name, nx, ny, nz, origin, h, {}};
  g.values.resize(std::size_t(nx) * ny * nz);
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) g.values[std::size_t(i + nx * (j + ny * k))] = f(i, j, k);
  return g;
}

/// A smoke-like blob: density falls off from the centre and is exactly 0 outside a radius;
/// temperature is hot in the core and ambient (0 here) elsewhere.
std::vector<VolumeGrid> smoke_blob(int nx, int ny, int nz, double h, Vec3 origin) {
  const double cx = (nx - 1) / 2.0, cy = (ny - 1) * 0.4, cz = (nz - 1) / 2.0;
  const double r = 0.4 * std::min({nx, ny, nz});
  auto density = [&](int i, int j, int k) {
    const double d = std::sqrt((i - cx) * (i - cx) + (j - cy) * (j - cy) + (k - cz) * (k - cz));
    return d >= r ? 0.0f : float(1 - (d / r) * (d / r));
  };
  std::vector<VolumeGrid> grids;
  grids.push_back(make_grid("density", nx, ny, nz, origin, h, density));
  grids.push_back(make_grid("temperature", nx, ny, nz, origin, h, [&](int i, int j, int k) {
    const float d = density(i, j, k);
    return d > 0.5f ? 300.0f * (d - 0.5f) : 0.0f;
  }));
  return grids;
}

void expect_same(const VolumeGrid& a, const VolumeGrid& b, float tol) {
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.nx, b.nx);
  ASSERT_EQ(a.ny, b.ny);
  ASSERT_EQ(a.nz, b.nz);
  EXPECT_NEAR(a.origin.x, b.origin.x, 1e-12);
  EXPECT_NEAR(a.origin.y, b.origin.y, 1e-12);
  EXPECT_NEAR(a.origin.z, b.origin.z, 1e-12);
  EXPECT_DOUBLE_EQ(a.voxel_size, b.voxel_size);
  ASSERT_EQ(a.values.size(), b.values.size());
  int bad = 0;
  for (std::size_t v = 0; v < a.values.size(); ++v)
    if (!(std::fabs(a.values[v] - b.values[v]) <= tol * std::max(1.0f, std::fabs(a.values[v]))))
      if (++bad < 5)
        ADD_FAILURE() << a.name << " value " << v << ": " << a.values[v] << " vs " << b.values[v];
  EXPECT_EQ(bad, 0);
}

TEST(VolumeFile, RoundTripKeepsValuesNamesOriginVoxelSizeAndZeros) {
  const std::string path = scratch_dir() + "/round.vdb";
  // Zeros on every border (inactive in the file) and a negative origin: the extent must survive.
  auto grids = smoke_blob(32, 48, 32, 0.05, Vec3{-0.8, 0.1, -0.775});
  grids.push_back(make_grid("flame", 5, 3, 2, Vec3{1, 2, 3}, 0.25, [](int i, int j, int k) {
    return float(i - 2) * 0.5f + float(j * 10 + k * 100);  // negatives and zeros inside
  }));
  write_vdb(path, grids);
  const auto back = read_vdb(path);
  ASSERT_EQ(back.size(), grids.size());
  for (std::size_t n = 0; n < grids.size(); ++n) expect_same(grids[n], back[n], 0);
  if (const char* keep = std::getenv("KINEMA_VDB_KEEP")) {
    VdbWriteOptions o;
    o.frame = 12, o.time = 0.5;
    write_vdb(std::string(keep) + "/smoke_blob.vdb", std::span<const VolumeGrid>(grids.data(), 2),
              o);
    // The same with a faint haze everywhere: every voxel is active, up to the grid's corners.
    std::vector<VolumeGrid> hazy(grids.begin(), grids.begin() + 2);
    for (VolumeGrid& g : hazy)
      for (float& v : g.values) v += 0.001f;
    write_vdb(std::string(keep) + "/smoke_haze.vdb", hazy, o);
    o.save_float_as_half = true;
    write_vdb(std::string(keep) + "/smoke_half.vdb", std::span<const VolumeGrid>(grids.data(), 2),
              o);
  }
}

TEST(VolumeFile, AllZeroGridReadsBackWithItsExtent) {
  const std::string path = scratch_dir() + "/zero.vdb";
  const VolumeGrid g =
      make_grid("density", 4, 5, 6, Vec3{0.5, 0, 0}, 0.1, [](int, int, int) { return 0.0f; });
  write_vdb(path, std::span<const VolumeGrid>(&g, 1));
  const auto back = read_vdb(path);
  ASSERT_EQ(back.size(), 1u);
  expect_same(g, back[0], 0);
}

TEST(VolumeFile, ToleranceDropsFaintValues) {
  const std::string path = scratch_dir() + "/tol.vdb";
  VolumeGrid g = make_grid("density", 8, 8, 8, Vec3{}, 0.1,
                           [](int i, int, int) { return i < 4 ? 1e-4f : -0.5f; });
  VdbWriteOptions o;
  o.tolerance = 1e-3f;
  write_vdb(path, std::span<const VolumeGrid>(&g, 1), o);
  const auto back = read_vdb(path);
  ASSERT_EQ(back.size(), 1u);
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    const float want = g.values[v] == 1e-4f ? 0.0f : -0.5f;  // negatives above tolerance stay
    ASSERT_EQ(back[0].values[v], want) << v;
  }
}

TEST(VolumeFile, HalfFloatStaysWithinHalfPrecisionAndIsSmaller) {
  const std::string dir = scratch_dir();
  // Distinct non-constant values everywhere, so the file size is about the stored precision.
  const VolumeGrid g =
      make_grid("density", 32, 32, 32, Vec3{0, 0, 0}, 0.02, [](int i, int j, int k) {
        return 0.001f + float(std::sin(0.3 * i + 0.7 * j + 1.1 * k) + 1.5) * float(1 + i);
      });
  VdbWriteOptions half;
  half.save_float_as_half = true;
  write_vdb(dir + "/half.vdb", std::span<const VolumeGrid>(&g, 1), half);
  write_vdb(dir + "/full.vdb", std::span<const VolumeGrid>(&g, 1));
  const auto back = read_vdb(dir + "/half.vdb");
  ASSERT_EQ(back.size(), 1u);
  expect_same(g, back[0], 1.0f / 1024);  // half: 10 fraction bits, round to nearest → 2^-11
  bool any_rounded = false;
  for (std::size_t v = 0; v < g.values.size(); ++v) any_rounded |= back[0].values[v] != g.values[v];
  EXPECT_TRUE(any_rounded) << "values came back exact: not stored as halves";
  EXPECT_LT(fs::file_size(dir + "/half.vdb"), fs::file_size(dir + "/full.vdb"));
}

TEST(VolumeFile, MostlyEmptyGridWritesASmallFile) {
  const std::string dir = scratch_dir();
  // 64³ voxels (1 MiB as dense floats), with only an 8³ puff and one lone voxel non-zero.
  const VolumeGrid g = make_grid("density", 64, 64, 64, Vec3{}, 0.01, [](int i, int j, int k) {
    if (i >= 20 && i < 28 && j >= 30 && j < 38 && k >= 40 && k < 48) return 0.25f + 0.01f * i;
    return (i == 63 && j == 0 && k == 5) ? 1.0f : 0.0f;
  });
  write_vdb(dir + "/sparse.vdb", std::span<const VolumeGrid>(&g, 1));
  const auto size = fs::file_size(dir + "/sparse.vdb");
  EXPECT_LT(size, 20u * 1024) << "a 64³ grid with 513 non-zero voxels";
  const auto back = read_vdb(dir + "/sparse.vdb");
  ASSERT_EQ(back.size(), 1u);
  expect_same(g, back[0], 0);
}

/// Writes grids made with OpenVDB itself (files kinema did not write).
void write_foreign(const std::string& path, openvdb::GridPtrVec grids) {
  openvdb::initialize();
  openvdb::io::File(path).write(grids);
}

TEST(VolumeFile, ReadsForeignFloatGridsByTheirActiveBoundingBox) {
  const std::string path = scratch_dir() + "/foreign.vdb";
  auto grid = openvdb::FloatGrid::create(0.0f);
  grid->setName("density");
  auto xform = openvdb::math::Transform::createLinearTransform(0.25);
  xform->postTranslate(openvdb::Vec3d(1, 2, 3));
  grid->setTransform(xform);
  grid->tree().setValue(openvdb::Coord(-2, 5, 7), 1.5f);
  grid->tree().setValue(openvdb::Coord(1, 5, 9), -0.5f);
  auto empty = openvdb::FloatGrid::create(0.0f);
  empty->setName("flame");
  write_foreign(path, {grid, empty});
  const auto back = read_vdb(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].name, "density");
  EXPECT_EQ(back[0].nx, 4);
  EXPECT_EQ(back[0].ny, 1);
  EXPECT_EQ(back[0].nz, 3);
  EXPECT_EQ(back[0].voxel_size, 0.25);
  EXPECT_EQ(back[0].origin, (Vec3{1 - 0.5, 2 + 1.25, 3 + 1.75}));
  ASSERT_EQ(back[0].values.size(), 12u);
  EXPECT_EQ(back[0].values[0], 1.5f);
  EXPECT_EQ(back[0].values[3 + 4 * 2], -0.5f);
  EXPECT_EQ(back[0].values[5], 0.0f);
  // No active voxel: one voxel at index (0, 0, 0) holding the background.
  EXPECT_EQ(back[1].name, "flame");
  EXPECT_EQ(back[1].nx * back[1].ny * back[1].nz, 1);
  EXPECT_EQ(back[1].values, std::vector<float>{0.0f});
}

TEST(VolumeFile, ReadsStreamWrittenFilesWithoutGridOffsets) {
  // io::Stream writes no grid offsets: the completeness walk steps aside, OpenVDB reads it.
  const std::string path = scratch_dir() + "/stream.vdb";
  auto grid = openvdb::FloatGrid::create(0.0f);
  grid->setName("temperature");
  grid->tree().setValue(openvdb::Coord(3, 4, 5), 7.0f);
  {
    std::ofstream out(path, std::ios::binary);
    openvdb::io::Stream(out).write(openvdb::GridPtrVec{grid});
  }
  const auto back = read_vdb(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, "temperature");
  EXPECT_EQ(back[0].values, std::vector<float>{7.0f});
  EXPECT_EQ(back[0].origin, (Vec3{3, 4, 5}));
  const std::string bytes = read_bytes(path);
  write_bytes(path, bytes.substr(0, bytes.size() - 3));
  EXPECT_NE(error_of([&] { read_vdb(path); }).reason().find("truncated"), std::string::npos);
}

TEST(VolumeFile, RefusesVectorGridsAndRotatedOrStretchedTransforms) {
  const std::string dir = scratch_dir();
  auto velocity = openvdb::Vec3SGrid::create();
  velocity->setName("velocity");
  velocity->tree().setValue(openvdb::Coord(0, 0, 0), openvdb::Vec3s(1, 0, 0));
  write_foreign(dir + "/vec.vdb", {velocity});
  const Error v = error_of([&] { read_vdb(dir + "/vec.vdb"); });
  EXPECT_EQ(v.place(), "grid 0 'velocity'");
  EXPECT_NE(v.reason().find("only float grids"), std::string::npos) << v.what();

  auto rotated = openvdb::FloatGrid::create(0.0f);
  rotated->setName("density");
  rotated->tree().setValue(openvdb::Coord(0, 0, 0), 1.0f);
  rotated->transform().postRotate(0.3, openvdb::math::Y_AXIS);
  write_foreign(dir + "/rot.vdb", {rotated});
  const Error r = error_of([&] { read_vdb(dir + "/rot.vdb"); });
  EXPECT_NE(r.reason().find("uniform, axis-aligned"), std::string::npos) << r.what();

  auto stretched = openvdb::FloatGrid::create(0.0f);
  stretched->setName("density");
  stretched->tree().setValue(openvdb::Coord(0, 0, 0), 1.0f);
  stretched->transform().postScale(openvdb::Vec3d(1, 2, 1));
  write_foreign(dir + "/scale.vdb", {stretched});
  const Error s = error_of([&] { read_vdb(dir + "/scale.vdb"); });
  EXPECT_NE(s.reason().find("uniform, axis-aligned"), std::string::npos) << s.what();
}

TEST(VolumeFile, WritesFogVolumesWithMetadataAndSparseTrees) {
  const std::string path = scratch_dir() + "/meta.vdb";
  const auto grids = smoke_blob(32, 48, 32, 0.05, Vec3{0.1, 0.2, 0.3});
  VdbWriteOptions o;
  o.frame = 17;
  o.time = 0.7083;
  o.save_float_as_half = true;
  write_vdb(path, grids, o);
  openvdb::initialize();
  openvdb::io::File file(path);
  file.open(false);
  const auto meta = file.getMetadata();
  EXPECT_EQ(meta->metaValue<std::string>("creator"), "kinema");
  EXPECT_EQ(meta->metaValue<openvdb::Int32>("kinema_frame"), 17);
  EXPECT_EQ(meta->metaValue<double>("kinema_time"), 0.7083);
  const auto vdb = file.getGrids();
  file.close();
  ASSERT_EQ(vdb->size(), 2u);
  for (std::size_t n = 0; n < 2; ++n) {
    const auto& g = (*vdb)[n];
    EXPECT_EQ(g->getName(), grids[n].name);
    EXPECT_TRUE(g->isType<openvdb::FloatGrid>());
    EXPECT_EQ(g->getGridClass(), openvdb::GRID_FOG_VOLUME);
    EXPECT_EQ(g->getCreator(), "kinema");
    EXPECT_TRUE(g->saveFloatAsHalf());
    EXPECT_EQ(g->transform().voxelSize(), openvdb::Vec3d(0.05));
    EXPECT_TRUE(g->transform()
                    .indexToWorld(openvdb::Coord(2, 0, 0))
                    .eq(openvdb::Vec3d(0.2, 0.2, 0.3), 1e-12));
    std::size_t nonzero = 0;
    for (float x : grids[n].values) nonzero += x != 0.0f;
    EXPECT_EQ(g->activeVoxelCount(), nonzero) << g->getName();
    EXPECT_EQ(openvdb::gridPtrCast<openvdb::FloatGrid>(g)->background(), 0.0f);
  }
}

TEST(VolumeFile, BadInputIsRefusedAndNothingIsWritten) {
  const std::string dir = scratch_dir() + "/bad";
  fs::create_directories(dir);
  const std::string path = dir + "/out.vdb";
  write_bytes(path, "previous contents");
  const VolumeGrid good = make_grid("density", 2, 3, 4, Vec3{}, 0.1,
                                    [](int i, int j, int k) { return float(i + j + k); });
  auto check = [&](const std::vector<VolumeGrid>& grids, const VdbWriteOptions& o,
                   const std::string& place_part, const std::string& reason_part) {
    const Error e = error_of([&] { write_vdb(path, grids, o); });
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(e.place().find(place_part), std::string::npos) << e.what();
    EXPECT_NE(e.reason().find(reason_part), std::string::npos) << e.what();
    EXPECT_EQ(read_bytes(path), "previous contents") << e.what();
    EXPECT_EQ(other_files(dir, "out.vdb"), 0) << e.what();
  };
  const VdbWriteOptions none;
  check({}, none, "", "no grids");
  auto g = good;
  g.name = "";
  check({g}, none, "grid 0", "empty name");
  g = good;
  g.name = "temperature";
  check({good, g, good}, none, "grid 2 'density'", "repeats");
  for (int axis = 0; axis < 3; ++axis) {
    g = good;
    (axis == 0 ? g.nx : axis == 1 ? g.ny : g.nz) = 0;
    check({g}, none, "grid 0 'density'", "must each be ≥ 1");
  }
  g = good;
  g.values.pop_back();
  check({g}, none, "grid 0", "23 values for 24 voxels");
  g = good;
  g.name = "smoke";
  g.values[1 + 2 * (2 + 3 * 3)] = std::numeric_limits<float>::quiet_NaN();
  check({good, g}, none, "grid 1 'smoke', value 23 (i, j, k) = (1, 2, 3)", "not finite");
  g.name = "heat";
  g.values[23] = std::numeric_limits<float>::infinity();
  check({good, g}, none, "grid 1 'heat', value 23", "not finite");
  g = good;
  g.values[5] = 1e6f;
  VdbWriteOptions half;
  half.save_float_as_half = true;
  check({g}, half, "value 5 (i, j, k) = (1, 2, 0)", "half-float range");
  for (const double h : {0.0, -0.1, std::numeric_limits<double>::infinity(),
                         std::numeric_limits<double>::quiet_NaN()}) {
    g = good;
    g.voxel_size = h;
    check({g}, none, "grid 0 'density'.voxel_size", "> 0 and finite");
  }
  g = good;
  g.origin.y = std::numeric_limits<double>::quiet_NaN();
  check({g}, none, ".origin", "not finite");
  VdbWriteOptions o;
  o.tolerance = -1;
  check({good}, o, "options.tolerance", "≥ 0");
  o = {};
  o.time = std::numeric_limits<double>::infinity();
  check({good}, o, "options.time", "not finite");
  // A missing folder: refused, and nothing created.
  const std::string nowhere = dir + "/missing/out.vdb";
  const Error e = error_of([&] { write_vdb(nowhere, {&good, 1}); });
  EXPECT_NE(e.reason().find("folder does not exist"), std::string::npos) << e.what();
  EXPECT_FALSE(fs::exists(dir + "/missing"));
  // A bad input with no file there before: none after.
  fs::remove(path);
  g = good;
  g.nz = -1;
  error_of([&] { write_vdb(path, {&g, 1}); });
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(other_files(dir, ""), 0);
}

TEST(VolumeFile, TruncatedAndGarbageFilesAreRefused) {
  const std::string dir = scratch_dir();
  const auto grids = smoke_blob(32, 48, 32, 0.05, Vec3{});
  write_vdb(dir + "/whole.vdb", grids);
  const std::string bytes = read_bytes(dir + "/whole.vdb");
  ASSERT_GT(bytes.size(), 1000u);
  // Cut anywhere — in the header, the metadata, a descriptor, a grid's topology or its values —
  // the file is refused, never read as zeros (and, under the sanitizers, nothing leaks).
  const std::string path = dir + "/cut.vdb";
  for (std::size_t keep = 0; keep < bytes.size(); keep += 1 + keep / 50) {
    write_bytes(path, bytes.substr(0, keep));
    const Error e = error_of([&] { read_vdb(path); });
    EXPECT_EQ(e.file(), path) << keep << " bytes: " << e.what();
    EXPECT_FALSE(e.reason().empty()) << keep;
  }
  write_bytes(path, bytes.substr(0, bytes.size() / 2));  // inside the first grid, "density"
  const Error half = error_of([&] { read_vdb(path); });
  EXPECT_EQ(half.place(), "grid 0 'density'") << half.what();
  EXPECT_NE(half.reason().find("truncated"), std::string::npos) << half.what();
  write_bytes(path, bytes.substr(0, bytes.size() - 1));
  EXPECT_NE(error_of([&] { read_vdb(path); }).reason().find("truncated"), std::string::npos);
  std::string garbage(4096, '\0');
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = char((i * 2654435761u) >> 13);
  write_bytes(dir + "/garbage.vdb", garbage);
  const Error g = error_of([&] { read_vdb(dir + "/garbage.vdb"); });
  EXPECT_EQ(g.file(), dir + "/garbage.vdb");
  EXPECT_NE(g.reason().find("not a readable VDB file"), std::string::npos) << g.what();
  // Garbage past a valid header: the magic number and version are right, the rest is noise.
  write_bytes(dir + "/noise.vdb", bytes.substr(0, 64) + garbage);
  const Error n = error_of([&] { read_vdb(dir + "/noise.vdb"); });
  EXPECT_EQ(n.file(), dir + "/noise.vdb") << n.what();
  const Error m = error_of([&] { read_vdb(dir + "/no_such.vdb"); });
  EXPECT_NE(m.reason().find("no such file"), std::string::npos) << m.what();
}

TEST(VolumeFile, FramePathPattern) {
  EXPECT_EQ(vdb_frame_path("smoke_%04d.vdb", 7), "smoke_0007.vdb");
  EXPECT_EQ(vdb_frame_path("smoke_%04d.vdb", 12345), "smoke_12345.vdb");
  EXPECT_EQ(vdb_frame_path("/cache/fire_%d.vdb", 42), "/cache/fire_42.vdb");
  EXPECT_EQ(vdb_frame_path("f%3d.vdb", 5), "f  5.vdb");
  EXPECT_EQ(vdb_frame_path("f%04d.vdb", -3), "f-003.vdb");
  EXPECT_EQ(vdb_frame_path("100%%_%02d.vdb", 1), "100%_01.vdb");
  for (const char* bad :
       {"smoke.vdb", "smoke_%04d_%d.vdb", "smoke_%s.vdb", "smoke_%04x.vdb", "smoke_%.vdb",
        "smoke_%", "smoke_%-4d.vdb", "smoke_%123d.vdb", "%%d.vdb"}) {
    const Error e = error_of([&] { vdb_frame_path(bad, 1); });
    EXPECT_EQ(e.file(), bad);
    EXPECT_FALSE(e.reason().empty()) << bad;
  }
}

}  // namespace
}  // namespace kinema
