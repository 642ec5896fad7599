// tests/cli/compress_cli_test.cpp — `kinema compress`, `kinema decompress` and `kinema info` on
// .kc files, run as processes: the report (text and JSON), the files, the round trip back to
// BVH within the bound, usage errors (exit 1) and bad input (exit 2).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_process.h"
#include "kinema/compress/compress.h"
#include "kinema/io/bvh.h"
#include "kinema/io/file.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::sh_quote;

const std::string kData = KINEMA_TEST_DATA_DIR;
const std::string kWalk = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";
const std::string kCc3 = kData + "/bvh/cmu_iclone_cc3/007_12.bvh";

class CompressCli : public kinema::test::CliProcessTest {
 protected:
  CompressCli() : CliProcessTest("kinema_compress_") {}
};

kinema::CompressedClip load_kc(const std::string& path) {
  const std::string bytes = kinema::read_file(path);
  return kinema::CompressedClip::deserialize(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, path);
}

TEST_F(CompressCli, CompressesAndReportsJson) {
  const auto r = kinema("compress " + sh_quote(kWalk) + " " + sh_quote(kCc3) + " -o " +
                        sh_quote(path("out")) + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("clips").size(), 2u);
  size_t raw = 0, packed = 0;
  for (const auto& c : j.at("clips")) {
    EXPECT_LE(c.at("max_error_cm").get<double>(), 0.01);
    EXPECT_LE(c.at("p99_error_cm").get<double>(), c.at("max_error_cm").get<double>());
    EXPECT_GT(c.at("ratio").get<double>(), 8.0);
    EXPECT_EQ(c.at("raw_bytes").get<size_t>(),
              40u * c.at("joints").get<size_t>() * c.at("frames").get<size_t>());
    raw += c.at("raw_bytes").get<size_t>();
    packed += c.at("compressed_bytes").get<size_t>();
    const kinema::CompressedClip kc = load_kc(c.at("file").get<std::string>());
    EXPECT_EQ(kc.size_bytes(), c.at("compressed_bytes").get<size_t>());
  }
  EXPECT_EQ(j.at("clips")[0].at("name"), "02_01");
  EXPECT_EQ(j.at("clips")[0].at("joints"), 31);
  EXPECT_EQ(j.at("clips")[0].at("frames"), 343);
  EXPECT_EQ(j.at("total").at("raw_bytes").get<size_t>(), raw);
  EXPECT_EQ(j.at("total").at("compressed_bytes").get<size_t>(), packed);
  EXPECT_TRUE(fs::exists(path("out/02_01.kc")));
  EXPECT_TRUE(fs::exists(path("out/007_12.kc")));
}

TEST_F(CompressCli, TextReportOptionsAndInfo) {
  const auto r = kinema("compress " + sh_quote(kWalk) + " -o " + sh_quote(path("out")) +
                        " --error 0.05mm --vertex 10cm");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("02_01"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("total"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bound 0.005 cm on vertices 10 cm"), std::string::npos) << r.out;
  const auto info = kinema("info " + sh_quote(path("out/02_01.kc")));
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_NE(info.out.find("kinema compressed clip \"02_01\""), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("joints 31, 343 frames"), std::string::npos) << info.out;
  const auto ij = kinema("info --json " + sh_quote(path("out/02_01.kc")));
  ASSERT_EQ(ij.code, 0) << ij.err;
  const auto j = nlohmann::json::parse(ij.out);
  EXPECT_EQ(j.at("joint_count"), 31);
  EXPECT_EQ(j.at("raw_bytes"), 425320);
  // Two inputs with one stem: the second gets its folder's name in front.
  const std::string copy = path("cmu_cgspeed_mb");
  fs::create_directories(copy);
  fs::copy_file(kWalk, copy + "/02_01.bvh");
  const auto twice = kinema("compress " + sh_quote(kWalk) + " " + sh_quote(copy + "/02_01.bvh") +
                            " -o " + sh_quote(path("twice")) + " --json");
  ASSERT_EQ(twice.code, 0) << twice.err;
  EXPECT_TRUE(fs::exists(path("twice/02_01.kc")));
  EXPECT_TRUE(fs::exists(path("twice/cmu_cgspeed_mb_02_01.kc")));
}

TEST_F(CompressCli, DecompressesBackToBvhWithinTheBound) {
  ASSERT_EQ(kinema("compress " + sh_quote(kWalk) + " -o " + sh_quote(path("out"))).code, 0);
  const auto r = kinema("decompress " + sh_quote(path("out/02_01.kc")) + " --skeleton " +
                        sh_quote(kWalk) + " -o " + sh_quote(path("back.bvh")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("343 frames"), std::string::npos) << r.out;
  const kinema::Asset a = kinema::read_bvh(kWalk), b = kinema::read_bvh(path("back.bvh"));
  ASSERT_EQ(b.skeleton.joint_count(), 31);
  const size_t n = 31;
  std::vector<kinema::Transform> pa(n), pb(n);
  for (int f = 0; f < 343; f += 5) {
    const double t = f * (a.clips[0].duration / 342);
    kinema::sample_pose(a.clips[0], a.skeleton, t, kinema::WrapMode::Clamp, pa);
    kinema::sample_pose(b.clips[0], b.skeleton, t, kinema::WrapMode::Clamp, pb);
    // The BVH writer moves the root's offset into its channels; compare model-space poses.
    std::vector<kinema::Mat4> ma(n), mb(n);
    kinema::local_to_model(a.skeleton.parents(), pa, ma);
    kinema::local_to_model(b.skeleton.parents(), pb, mb);
    for (size_t j = 0; j < n; ++j)
      EXPECT_LT(kinema::distance(ma[j].translation_part(), mb[j].translation_part()), 1.01e-4)
          << f << " " << j;
  }
}

TEST_F(CompressCli, ErrorsAreReported) {
  // Usage errors: exit 1.
  EXPECT_EQ(
      kinema("compress " + sh_quote(kWalk) + " -o " + sh_quote(path("o")) + " --error abc").code,
      1);
  EXPECT_EQ(
      kinema("compress " + sh_quote(kWalk) + " -o " + sh_quote(path("o")) + " --error 1km").code,
      1);
  EXPECT_EQ(kinema("compress " + sh_quote(kWalk)).code, 1);  // no -o
  // Bad input: exit 2, with the file and the byte offset.
  EXPECT_EQ(kinema("compress " + sh_quote(path("missing.bvh")) + " -o " + sh_quote(path("o"))).code,
            2);
  ASSERT_EQ(kinema("compress " + sh_quote(kWalk) + " -o " + sh_quote(path("out"))).code, 0);
  std::string bytes = kinema::test::read_all(path("out/02_01.kc"));
  bytes[bytes.size() / 2] ^= 0x20;
  kinema::test::write_all(path("bad.kc"), bytes);
  const auto bad = kinema("decompress " + sh_quote(path("bad.kc")) + " --skeleton " +
                          sh_quote(kWalk) + " -o " + sh_quote(path("bad.bvh")));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("checksum"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(path("bad.bvh")));
  EXPECT_EQ(kinema("info " + sh_quote(path("bad.kc"))).code, 2);
  kinema::test::write_all(path("short.kc"), bytes.substr(0, 30));
  const auto trunc = kinema("info " + sh_quote(path("short.kc")));
  EXPECT_EQ(trunc.code, 2);
  EXPECT_NE(trunc.err.find("byte"), std::string::npos) << trunc.err;
  // A skeleton with other joints.
  const auto other = kinema("decompress " + sh_quote(path("out/02_01.kc")) + " --skeleton " +
                            sh_quote(kCc3) + " -o " + sh_quote(path("x.bvh")));
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.err.find("joints"), std::string::npos) << other.err;
}

}  // namespace
