// tests/cli/compress_cli_test.cpp — `kinema compress`, `kinema decompress` and `kinema info` on
// .kmc files, run as a process: the per-clip report and its JSON, the files written (read back,
// within the bound), usage errors (exit 1), bad input (exit 2) with nothing written and the input
// untouched.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "kinema/compress/compress.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "kinema/io/kmc.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

using kinema::test::read_all;
using kinema::test::sh_quote;
using kinema::test::write_all;

const std::string kData = kinema::test_paths::data_dir();
const std::string kWalk = kData + "/bvh/cmu_cgspeed_mb/02_01.bvh";
const std::string kTurn = kData + "/bvh/cmu_iclone_cc3/006_11_turn_30fps.bvh";

class CompressCli : public kinema::test::CliProcessTest {
 protected:
  CompressCli() : CliProcessTest("kinema_compress_") {}
};

TEST_F(CompressCli, CompressesEveryInputAndReportsEveryClipAsJson) {
  const auto r = kinema("compress " + sh_quote(kWalk) + " " + sh_quote(kTurn) + " --json -o " +
                        sh_quote(path("out")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["clips"].size(), 2u);
  size_t raw = 0, compressed = 0;
  for (const auto& c : j["clips"]) {
    for (const char* key : {"name", "raw_bytes", "compressed_bytes", "ratio", "max_error_cm",
                            "p99_error_cm", "seconds"})
      EXPECT_TRUE(c.contains(key)) << key;
    EXPECT_LE(c["max_error_cm"].get<double>(), 0.01);  // the default bound, guaranteed
    EXPECT_LE(c["p99_error_cm"].get<double>(), c["max_error_cm"].get<double>());
    // raw = 10 floats × joints × frames.
    EXPECT_EQ(c["raw_bytes"].get<size_t>(),
              40 * c["joints"].get<size_t>() * c["frames"].get<size_t>());
    EXPECT_GT(c["ratio"].get<double>(), 5);
    raw += c["raw_bytes"].get<size_t>();
    compressed += c["compressed_bytes"].get<size_t>();
  }
  EXPECT_EQ(j["clips"][0]["name"], "02_01");
  EXPECT_EQ(j["total"]["raw_bytes"].get<size_t>(), raw);
  EXPECT_EQ(j["total"]["compressed_bytes"].get<size_t>(), compressed);
  EXPECT_NEAR(j["total"]["ratio"].get<double>(), double(raw) / double(compressed), 1e-9);
  ASSERT_TRUE(fs::exists(path("out/02_01.kmc")));
  ASSERT_TRUE(fs::exists(path("out/006_11_turn_30fps.kmc")));
  // The file holds the skeleton and the clip, within the bound of the original.
  const kinema::CompressedAnimation a = kinema::read_animation_file(path("out/02_01.kmc"));
  EXPECT_EQ(a.source, "02_01.bvh");
  EXPECT_EQ(a.source_unit_name, "cmu-asf");
  const kinema::Asset walk = kinema::read_bvh(kWalk);
  EXPECT_EQ(a.skeleton.joint_count(), walk.skeleton.joint_count());
  const kinema::ErrorStats e = kinema::measure_error(walk.clips[0], walk.skeleton, a.clips[0]);
  EXPECT_LE(e.max, 1e-4);
}

TEST_F(CompressCli, TextReportBoundAndUnits) {
  const auto r = kinema("compress " + sh_quote(kTurn) + " --error 0.5mm --vertex 5cm -o " +
                        sh_quote(path("out")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("within 0.05000 cm at virtual vertices 5 cm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("total"), std::string::npos);
  const auto a = kinema::read_animation_file(path("out/006_11_turn_30fps.kmc"));
  EXPECT_DOUBLE_EQ(a.max_error, 0.0005);
  EXPECT_DOUBLE_EQ(a.vertex_distance, 0.05);
  // A looser bound compresses more than the default.
  const auto d = kinema("compress " + sh_quote(kTurn) + " --json -o " + sh_quote(path("tight")));
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_LT(fs::file_size(path("out/006_11_turn_30fps.kmc")),
            fs::file_size(path("tight/006_11_turn_30fps.kmc")));
}

TEST_F(CompressCli, InfoAndDecompressReadTheFileBack) {
  ASSERT_EQ(kinema("compress " + sh_quote(kWalk) + " -o " + sh_quote(path("out"))).code, 0);
  const auto info = kinema("info " + sh_quote(path("out/02_01.kmc")) + " --json");
  ASSERT_EQ(info.code, 0) << info.err;
  const auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["format"], "kmc");
  EXPECT_EQ(j["joint_count"], 31);
  EXPECT_EQ(j["compressed"]["clips"][0]["frames"], 343);  // 2.85 s at 120 fps
  EXPECT_NEAR(j["compressed"]["error_bound_cm"].get<double>(), 0.01, 1e-12);
  EXPECT_GT(j["compressed"]["clips"][0]["ratio"].get<double>(), 5);
  const auto text = kinema("info " + sh_quote(path("out/02_01.kmc")) + " --no-tree");
  EXPECT_NE(text.out.find("compressed from 02_01.bvh (cmu-asf)"), std::string::npos) << text.out;

  for (const char* ext : {"bvh", "glb"}) {
    const std::string out = path(std::string("back.") + ext);
    const auto r = kinema("decompress " + sh_quote(path("out/02_01.kmc")) + " -o " + sh_quote(out));
    ASSERT_EQ(r.code, 0) << r.err;
    const kinema::Asset back = kinema::load_asset(out);
    const kinema::Asset walk = kinema::read_bvh(kWalk);
    ASSERT_EQ(back.skeleton.joint_count(), walk.skeleton.joint_count());
    // The written file still puts every joint within the bound (plus BVH's text rounding).
    for (const double t : {0.0, 0.5, 1.3, 2.8}) {
      const auto a = kinema::sample_model_pose(walk.clips[0], walk.skeleton, t);
      const auto b = kinema::sample_model_pose(back.clips[0], back.skeleton, t);
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_LT(distance(a[i].translation_part(), b[i].translation_part()), 2e-4)
            << ext << " t " << t << " joint " << i;
    }
  }
}

TEST_F(CompressCli, UsageErrorsExitOne) {
  EXPECT_EQ(kinema("compress " + sh_quote(kWalk) + " --error 0.01 -o " + sh_quote(path("o"))).code,
            1);  // no unit
  EXPECT_EQ(kinema("compress " + sh_quote(kWalk) + " --error -1cm -o " + sh_quote(path("o"))).code,
            1);
  EXPECT_EQ(
      kinema("compress " + sh_quote(kWalk) + " --error 1furlong -o " + sh_quote(path("o"))).code,
      1);
  write_all(path("file"), "x");
  EXPECT_EQ(kinema("compress " + sh_quote(kWalk) + " -o " + sh_quote(path("file"))).code, 1);
  // Two inputs with one stem would overwrite each other.
  fs::create_directories(path("a"));
  fs::copy_file(kWalk, path("a/02_01.bvh"));
  const auto twice = kinema("compress " + sh_quote(kWalk) + " " + sh_quote(path("a/02_01.bvh")) +
                            " -o " + sh_quote(path("o")));
  EXPECT_EQ(twice.code, 1);
  EXPECT_NE(twice.err.find("both write 02_01.kmc"), std::string::npos) << twice.err;
  EXPECT_EQ(kinema("decompress " + sh_quote(kWalk) + " -o " + sh_quote(path("x.bvh"))).code, 1);
  EXPECT_FALSE(fs::exists(path("o")));
}

// A bad input anywhere in the list: exit 2 naming it, and no output at all (not even for the
// good inputs before it); the bad file is left as it was.
TEST_F(CompressCli, BadInputExitsTwoAndWritesNothing) {
  write_all(path("broken.bvh"), "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n");
  const std::string before = read_all(path("broken.bvh"));
  const auto r = kinema("compress " + sh_quote(kWalk) + " " + sh_quote(path("broken.bvh")) +
                        " -o " + sh_quote(path("out")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("broken.bvh"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out")));
  EXPECT_EQ(read_all(path("broken.bvh")), before);
  // A corrupted .kmc: decompress and info exit 2 naming the byte.
  ASSERT_EQ(kinema("compress " + sh_quote(kTurn) + " -o " + sh_quote(path("k"))).code, 0);
  std::string bytes = read_all(path("k/006_11_turn_30fps.kmc"));
  bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x40);
  write_all(path("bad.kmc"), bytes);
  const auto d =
      kinema("decompress " + sh_quote(path("bad.kmc")) + " -o " + sh_quote(path("b.bvh")));
  EXPECT_EQ(d.code, 2);
  EXPECT_NE(d.err.find("checksum"), std::string::npos) << d.err;
  EXPECT_FALSE(fs::exists(path("b.bvh")));
  write_all(path("short.kmc"), bytes.substr(0, 20));
  const auto i = kinema("info " + sh_quote(path("short.kmc")));
  EXPECT_EQ(i.code, 2);
  EXPECT_NE(i.err.find("byte"), std::string::npos) << i.err;
}

}  // namespace
