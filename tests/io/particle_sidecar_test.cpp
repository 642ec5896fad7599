// Particle sidecars: round trips, the curves evaluated as the particle system evaluates them, and
// truncated, damaged and hostile (well checksummed, wrong inside) files refused with the byte and
// the reason.
#include "kinema/io/particle_sidecar.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "kinema/core/byte_io.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/physics/particles.h"

namespace kinema {
namespace {

namespace fs = std::filesystem;

class ParticleSidecarFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kinema_kpa_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  /// The error reading `bytes` as a sidecar ("" when it reads).
  std::string error_of(const std::string& bytes) {
    write_file_atomically(path("x.kpa"), bytes);
    try {
      read_particle_sidecar(path("x.kpa"));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

ParticleSidecar sample() {
  ParticleSidecar s;
  s.frames_per_second = 24;
  s.frame_times = {0, 1.0 / 24, 2.0 / 24, 3.0 / 24};
  s.size = {{0, 0.5f, 1}, {1, 2, 0}};
  s.colour[0] = {{0}, {0.9f}};
  s.colour[2] = {{0, 1}, {1, 0}};
  s.opacity = {{0.8f, 1}, {1, 0}};
  s.points = {{1, 3, 0.02, 0.1}, {0, 0, -0.5, 2}, {2, 3, 0.07, 1e-3}};
  return s;
}

// The payload of a file of `s` with its values as written (for hostile edits).
struct Payload {
  detail::ByteWriter w;
  std::string file() const {
    constexpr char magic[8] = {'K', 'M', 'P', 'A', 'R', 'T', 'S', '\0'};
    return detail::with_header(magic, 1, w.out);
  }
};

// fps, frames, then five curves with `keys` keys each, then the points.
Payload payload(double fps, const std::vector<double>& times, const std::vector<float>& u,
                const std::vector<float>& v, const std::vector<ParticleLife>& points) {
  Payload p;
  p.w.put(fps);
  p.w.put(uint64_t(times.size()));
  p.w.put_array(times);
  for (int c = 0; c < 5; ++c) {
    p.w.put(uint64_t(u.size()));
    p.w.put_array(u);
    p.w.put_array(v);
  }
  p.w.put(uint64_t(points.size()));
  for (const ParticleLife& l : points) {
    p.w.put(int32_t(l.first_frame));
    p.w.put(int32_t(l.last_frame));
    p.w.put(l.birth);
    p.w.put(l.lifetime);
  }
  return p;
}

TEST_F(ParticleSidecarFile, RoundTripsExactly) {
  const ParticleSidecar s = sample();
  write_particle_sidecar(path("a.kpa"), s);
  const ParticleSidecar r = read_particle_sidecar(path("a.kpa"));
  EXPECT_EQ(r.frames_per_second, 24);
  EXPECT_EQ(r.frame_times, s.frame_times);
  EXPECT_EQ(r.size.u, s.size.u);
  EXPECT_EQ(r.size.value, s.size.value);
  EXPECT_EQ(r.colour[0].value, s.colour[0].value);
  EXPECT_TRUE(r.colour[1].u.empty());
  EXPECT_EQ(r.colour[2].u, s.colour[2].u);
  EXPECT_EQ(r.opacity.value, s.opacity.value);
  ASSERT_EQ(r.points.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.points[i].first_frame, s.points[i].first_frame);
    EXPECT_EQ(r.points[i].last_frame, s.points[i].last_frame);
    EXPECT_EQ(r.points[i].birth, s.points[i].birth);
    EXPECT_EQ(r.points[i].lifetime, s.points[i].lifetime);
  }
  EXPECT_FALSE(r.alive(0, 0));
  EXPECT_TRUE(r.alive(0, 1));
  EXPECT_TRUE(r.alive(0, 3));
  EXPECT_TRUE(r.alive(1, 0));
  EXPECT_FALSE(r.alive(1, 1));
  // u = (t − birth) / lifetime, clamped: (2/24 − 0.02) / 0.1.
  EXPECT_NEAR(r.age_fraction(0, 2), (2.0 / 24 - 0.02) / 0.1, 1e-6);
  EXPECT_EQ(r.age_fraction(0, 3), 1.0f);
  EXPECT_EQ(r.age_fraction(2, 0), 0.0f);
  EXPECT_EQ(particle_sidecar_path("out/sparks.pc2"), "out/sparks.kpa");
  EXPECT_EQ(particle_sidecar_path("scene_particles.pc2"), "scene_particles.kpa");
}

TEST(ParticleCurve, EvaluatesAsTheParticleSystemsAgeCurve) {
  const ParticleCurve c{{0, 0.25f, 1}, {2, 0.5f, 1.5f}};
  const AgeCurve a{{0, 0.25f, 1}, {2, 0.5f, 1.5f}};
  for (const float u : {-1.0f, 0.0f, 0.1f, 0.25f, 0.3f, 0.99f, 1.0f, 3.0f})
    EXPECT_EQ(c.at(u, 7), a.at(u, 7)) << u;
  EXPECT_EQ(ParticleCurve{}.at(0.5f, 7), 7);
  EXPECT_EQ(c.at(0.625f, 0), 1.0f);
}

TEST_F(ParticleSidecarFile, TruncatedOrDamagedFilesAreRefused) {
  write_particle_sidecar(path("a.kpa"), sample());
  const std::string good = read_file(path("a.kpa"));
  EXPECT_EQ(error_of(good), "");
  std::string e = error_of(good.substr(0, good.size() - 5));
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  EXPECT_NE(e.find("x.kpa"), std::string::npos) << e;
  e = error_of(good.substr(0, 20));
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  std::string flipped = good;
  flipped[60] = char(flipped[60] ^ 0x10);
  e = error_of(flipped);
  EXPECT_NE(e.find("checksum"), std::string::npos) << e;
  std::string other = good;
  other[0] = 'X';
  e = error_of(other);
  EXPECT_NE(e.find("not a kinema particle sidecar"), std::string::npos) << e;
  e = error_of("");
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  std::string newer = good;
  newer[8] = 2;
  e = error_of(newer);
  EXPECT_NE(e.find("version 2"), std::string::npos) << e;
}

TEST_F(ParticleSidecarFile, HostileContentIsRefusedWithTheByte) {
  const std::vector<double> t = {0, 0.1, 0.2};
  const std::vector<float> u = {0, 1}, v = {1, 0};
  const ParticleLife ok{0, 2, 0, 1};
  EXPECT_EQ(error_of(payload(10, t, u, v, {ok}).file()), "");
  struct Case {
    std::string bytes, expect;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Payload huge;
  huge.w.put(10.0);
  huge.w.put(uint64_t(1) << 60);  // frames that cannot fit
  Payload trailing = payload(10, t, u, v, {ok});
  trailing.w.put(uint32_t(0));
  const Case cases[] = {
      {payload(nan, t, u, v, {ok}).file(), "frames per second"},
      {payload(0, t, u, v, {ok}).file(), "frames per second"},
      {payload(10, {}, u, v, {ok}).file(), "no frames"},
      {payload(10, {0, 0.2, 0.1}, u, v, {ok}).file(), "frame 2"},
      {payload(10, {0, nan, 0.2}, u, v, {ok}).file(), "frame 1"},
      {payload(10, t, {0.5f, 0.5f}, v, {ok}).file(), "does not ascend"},
      {payload(10, t, {0, float(nan)}, v, {ok}).file(), "not finite"},
      {payload(10, t, u, v, {{0, 3, 0, 1}}).file(), "outside the 3 frames"},
      {payload(10, t, u, v, {{2, 1, 0, 1}}).file(), "reversed"},
      {payload(10, t, u, v, {{-1, 1, 0, 1}}).file(), "point 0"},
      {payload(10, t, u, v, {ok, {0, 1, 0, 0}}).file(), "point 1"},
      {payload(10, t, u, v, {{0, 1, nan, 1}}).file(), "birth"},
      {payload(10, t, u, v, {{0, 1, 0, -2}}).file(), "lifetime"},
      {huge.file(), "does not fit"},
      {trailing.file(), "after the last point"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of(c.bytes);
    EXPECT_NE(e.find(c.expect), std::string::npos) << "expected \"" << c.expect << "\": " << e;
    EXPECT_NE(e.find("byte "), std::string::npos) << e;
  }
  // The writer refuses what the reader would.
  ParticleSidecar bad = sample();
  bad.points[1].lifetime = 0;
  EXPECT_THROW(write_particle_sidecar(path("b.kpa"), bad), Error);
  EXPECT_FALSE(fs::exists(path("b.kpa")));
}

}  // namespace
}  // namespace kinema
