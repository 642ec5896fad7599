// PC2 point caches and OBJ rest meshes: round trips, and truncated, malformed and hostile files
// refused with the place at fault.
#include "kinema/io/point_cache.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "kinema/core/error.h"
#include "kinema/core/file.h"

namespace kinema {
namespace {

namespace fs = std::filesystem;

class PointCacheFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kinema_pc2_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// A valid cache of 3 points over 2 samples.
  static PointCache small() {
    PointCache c;
    c.points = 3;
    c.start_frame = 1;
    c.sample_rate = 1;
    c.positions = {{0, 0, 0}, {1, 2, 3}, {-1, 0.5f, 7}, {0, 1, 0}, {1, 3, 3}, {-1, 1.5f, 7}};
    return c;
  }
  /// Writes `bytes` and expects read_pc2 to refuse it, its message containing `says`.
  void refuses(const std::string& bytes, const std::string& says) {
    const std::string p = path("bad.pc2");
    write_file_atomically(p, bytes);
    try {
      read_pc2(p);
      ADD_FAILURE() << "accepted; expected: " << says;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      EXPECT_EQ(e.file(), p);
    }
  }
  fs::path dir_;
};

TEST_F(PointCacheFile, RoundTripsBitForBit) {
  const PointCache c = small();
  write_pc2(path("a.pc2"), c);
  EXPECT_EQ(fs::file_size(path("a.pc2")), 32u + 6u * 12u);
  const PointCache back = read_pc2(path("a.pc2"));
  EXPECT_EQ(back.points, 3);
  EXPECT_EQ(back.samples(), 2);
  EXPECT_EQ(back.start_frame, 1.0f);
  EXPECT_EQ(back.sample_rate, 1.0f);
  ASSERT_EQ(back.positions.size(), c.positions.size());
  for (size_t i = 0; i < c.positions.size(); ++i) EXPECT_EQ(back.positions[i], c.positions[i]);
  EXPECT_EQ(back.at(1, 2), (Vec3f{-1, 1.5f, 7}));
}

TEST_F(PointCacheFile, RefusesTruncatedMalformedAndHostileFiles) {
  write_pc2(path("good.pc2"), small());
  const std::string good = read_file(path("good.pc2"));
  refuses(good.substr(0, 20), "truncated: 20 bytes");
  refuses(good.substr(0, good.size() - 1), "(truncated)");
  refuses(good + "x", "(trailing bytes)");
  std::string bad = good;
  bad[0] = 'Q';
  refuses(bad, "not a PC2 file");
  auto with_int = [&](size_t offset, std::int32_t v) {
    std::string b = good;
    std::memcpy(b.data() + offset, &v, 4);
    return b;
  };
  auto with_float = [&](size_t offset, float v) {
    std::string b = good;
    std::memcpy(b.data() + offset, &v, 4);
    return b;
  };
  refuses(with_int(12, 2), "version 2");
  refuses(with_int(16, 0), "0 points");
  refuses(with_int(16, -5), "-5 points");
  refuses(with_int(28, -1), "-1 samples");
  // Counts whose product would wrap a 32-bit size into something that matches.
  refuses(with_int(16, 0x40000000), "need");
  refuses(with_int(28, std::numeric_limits<std::int32_t>::max()), "need");
  refuses(with_float(24, 0), "sample rate");
  refuses(with_float(24, std::numeric_limits<float>::quiet_NaN()), "sample rate");
  refuses(with_float(20, std::numeric_limits<float>::infinity()), "start frame");
  refuses(with_float(32 + 4, std::numeric_limits<float>::quiet_NaN()), "sample 0, point 0");
  refuses("", "truncated: 0 bytes");
}

TEST_F(PointCacheFile, WriteRefusesWhatItCannotWriteAndLeavesNothing) {
  PointCache c = small();
  c.positions.pop_back();
  EXPECT_THROW(write_pc2(path("x.pc2"), c), Error);  // not whole samples
  c = small();
  c.positions[4].y = std::numeric_limits<float>::infinity();
  EXPECT_THROW(write_pc2(path("x.pc2"), c), Error);
  c = small();
  c.points = 0;
  EXPECT_THROW(write_pc2(path("x.pc2"), c), Error);
  EXPECT_FALSE(fs::exists(path("x.pc2")));
  EXPECT_THROW(write_pc2(path("no/such/folder/x.pc2"), small()), Error);
}

TEST_F(PointCacheFile, ObjKeepsTheVertexOrder) {
  write_obj_mesh(path("m.obj"), {{0, 0, 0}, {1, 0, 0}, {0, 1, 0.25}}, {{0, 1, 2}});
  EXPECT_EQ(read_file(path("m.obj")),
            "# kinema: 3 vertices, 1 triangles\nv 0 0 0\nv 1 0 0\nv 0 1 0.25\nf 1 2 3\n");
  EXPECT_THROW(write_obj_mesh(path("n.obj"), {{0, 0, 0}}, {{0, 1, 2}}), Error);
  EXPECT_FALSE(fs::exists(path("n.obj")));
}

}  // namespace
}  // namespace kinema
