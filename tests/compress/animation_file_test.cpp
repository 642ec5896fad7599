// tests/compress/animation_file_test.cpp — .kmc files: round trip, decompress_clip against the
// decoder, load_asset / save_asset by extension, and hostile bytes (every truncation, byte flips,
// another version, mismatched clips) giving errors that name the byte.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "kinema/compress/compress.h"
#include "kinema/compress/compressed_animation.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/kmc.h"
#include "kinema/math/soa_transform.h"
#include "test_clips.h"

namespace kinema {
namespace {

CompressedAnimation small_animation(std::mt19937& rng, int joints = 6, double seconds = 0.5) {
  CompressedAnimation a;
  a.skeleton = test::random_skeleton(joints, rng);
  Clip c1 = test::random_clip(a.skeleton, seconds, 30, rng);
  c1.name = "first";
  Clip c2 = test::random_clip(a.skeleton, seconds * 0.6, 24, rng);
  c2.name = "second";
  a.clips.push_back(compress(c1, a.skeleton));
  a.clips.push_back(compress(c2, a.skeleton));
  a.source = "random.bvh";
  a.source_unit_in_meters = 0.01;
  a.source_unit_name = "cm";
  a.max_error = 1e-4;
  a.vertex_distance = 0.03;
  return a;
}

TEST(AnimationFile, RoundTripKeepsSkeletonClipsAndSettings) {
  std::mt19937 rng(1);
  const CompressedAnimation a = small_animation(rng);
  const std::string bytes = serialize_animation(a);
  const CompressedAnimation b = deserialize_animation(bytes, "a.kmc");
  ASSERT_EQ(b.skeleton.joint_count(), a.skeleton.joint_count());
  for (int j = 0; j < a.skeleton.joint_count(); ++j) {
    EXPECT_EQ(b.skeleton.joint(j).name, a.skeleton.joint(j).name);
    EXPECT_EQ(b.skeleton.parent(j), a.skeleton.parent(j));
    EXPECT_EQ(b.skeleton.joint(j).rest, a.skeleton.joint(j).rest);
  }
  ASSERT_EQ(b.clips.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(b.clips[i].bytes().size(), a.clips[i].bytes().size());
    EXPECT_EQ(std::memcmp(b.clips[i].bytes().data(), a.clips[i].bytes().data(),
                          a.clips[i].bytes().size()),
              0);
  }
  EXPECT_EQ(b.clips[1].name(), "second");
  EXPECT_EQ(b.source, "random.bvh");
  EXPECT_EQ(b.source_unit_name, "cm");
  EXPECT_EQ(b.source_unit_in_meters, 0.01);
  EXPECT_EQ(b.max_error, 1e-4);
  EXPECT_EQ(b.vertex_distance, 0.03);
  EXPECT_EQ(serialize_animation(b), bytes);  // bit-exact both ways
}

// decompress_clip keys every animated channel at every frame with exactly what the decoder
// gives, and holds constant channels with one key.
TEST(AnimationFile, DecompressedClipMatchesTheDecoderAtEveryFrame) {
  std::mt19937 rng(2);
  const CompressedAnimation a = small_animation(rng, 9, 1.0);
  const CompressedClip& c = a.clips[0];
  const Clip raw = decompress_clip(c, a.skeleton);
  EXPECT_EQ(raw.name, "first");
  EXPECT_FLOAT_EQ(float(raw.duration), c.duration());
  std::vector<SoaTransform> soa(size_t(c.soa_count()));
  std::vector<Transform> sampled(size_t(a.skeleton.joint_count()));
  for (int f = 0; f < c.frame_count(); ++f) {
    ASSERT_TRUE(sample_frame(c, f, 0.0f, soa));
    const double t = f + 1 == c.frame_count() ? raw.duration : f / double(c.sample_rate());
    ASSERT_TRUE(sample_pose(raw, a.skeleton, t, WrapMode::Clamp, sampled));
    for (int j = 0; j < a.skeleton.joint_count(); ++j) {
      const Transformf d = get_joint(soa, j);
      EXPECT_NEAR(distance(sampled[size_t(j)].translation, Vec3(d.translation)), 0, 1e-6);
      EXPECT_GT(std::abs(dot(sampled[size_t(j)].rotation, Quat(d.rotation))), 1 - 1e-6);
    }
  }
  for (int j = 0; j < a.skeleton.joint_count(); ++j)
    for (int ch = 0; ch < 3; ++ch) {
      const JointTrack& t = raw.tracks[size_t(j)];
      const size_t keys = ch == 0 ? t.translation.key_count()
                                  : (ch == 1 ? t.rotation.key_count() : t.scale.key_count());
      EXPECT_EQ(keys, c.kind(j, ch) == TrackKind::Animated ? size_t(c.frame_count()) : size_t(1));
    }
  EXPECT_THROW(decompress_clip(c, test::random_skeleton(4, rng)), Error);
}

TEST(AnimationFile, LoadAndSaveAssetByExtension) {
  std::mt19937 rng(3);
  Asset asset;
  asset.skeleton = test::random_skeleton(7, rng);
  asset.clips.push_back(test::random_clip(asset.skeleton, 0.8, 30, rng));
  asset.source.path = "mem.bvh";
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kinema_kmc_" + std::to_string(::getpid()) + ".kmc"))
                               .string();
  save_asset(asset, path);
  const Asset back = load_asset(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back.source.format, "kmc");
  ASSERT_EQ(back.clips.size(), 1u);
  // Within the default bound of the original at every frame.
  for (int f = 0; f < 24; ++f) {
    const double t = f / 30.0;
    const std::vector<Mat4> a = sample_model_pose(asset.clips[0], asset.skeleton, t);
    const std::vector<Mat4> b = sample_model_pose(back.clips[0], back.skeleton, t);
    for (size_t j = 0; j < a.size(); ++j)
      EXPECT_LT(distance(a[j].translation_part(), b[j].translation_part()), 1e-4) << f;
  }
}

// Every prefix of a file is an error that names a byte; so is every single-byte change (the
// checksum, or the header's own checks).
TEST(AnimationFile, TruncatedAndFlippedFilesGiveErrorsNamingTheByte) {
  std::mt19937 rng(4);
  const CompressedAnimation a = small_animation(rng, 4, 0.2);
  const std::string bytes = serialize_animation(a);
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      deserialize_animation(std::string_view(bytes).substr(0, n), "t.kmc");
      ADD_FAILURE() << "a " << n << "-byte prefix loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), "t.kmc");
      EXPECT_EQ(e.place().rfind("byte ", 0), 0u) << e.what();
    }
  }
  for (size_t i = 0; i < bytes.size(); i += 7) {
    std::string bad = bytes;
    bad[i] = char(bad[i] ^ 0x5A);
    EXPECT_THROW(deserialize_animation(bad, "f.kmc"), Error) << "byte " << i;
  }
}

TEST(AnimationFile, HostileHeadersCountsAndClips) {
  std::mt19937 rng(5);
  const CompressedAnimation a = small_animation(rng, 4, 0.2);
  const std::string good = serialize_animation(a);
  const auto message = [](const std::string& bytes) {
    try {
      deserialize_animation(bytes, "h.kmc");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  std::string other = good;
  other[8] = 2;  // version 2
  EXPECT_NE(message(other).find("format version 2"), std::string::npos) << message(other);
  EXPECT_NE(message("KMMATCH" + std::string(40, '\0')).find("no KMCANIM magic"), std::string::npos);
  EXPECT_NE(message(good + "x").find("payload bytes"), std::string::npos);

  // A well-formed file whose payload asks for 2^40 joints: refused before allocating.
  const auto with_payload = [&](const std::string& payload) {
    CompressedAnimation empty;
    std::string head = serialize_animation(empty).substr(0, 16);
    uint64_t size = payload.size(), sum = 14695981039346656037ull;
    for (const char c : payload) sum = (sum ^ uint8_t(c)) * 1099511628211ull;
    head.append(reinterpret_cast<const char*>(&size), 8);
    head.append(reinterpret_cast<const char*>(&sum), 8);
    return head + payload;
  };
  std::string payload;
  const auto put_string = [&](const std::string& s) {
    const uint32_t n = uint32_t(s.size());
    payload.append(reinterpret_cast<const char*>(&n), 4);
    payload += s;
  };
  const auto put_f64 = [&](double v) { payload.append(reinterpret_cast<const char*>(&v), 8); };
  put_string("x.bvh");
  put_f64(1.0);
  put_string("m");
  put_f64(1e-4);
  put_f64(0.03);
  const uint64_t huge = uint64_t(1) << 40;
  payload.append(reinterpret_cast<const char*>(&huge), 8);
  EXPECT_NE(message(with_payload(payload)).find("joint count"), std::string::npos)
      << message(with_payload(payload));

  // A clip of another skeleton: named as such.
  CompressedAnimation mixed = a;
  std::mt19937 rng2(6);
  const Skeleton other_skeleton = test::random_skeleton(5, rng2);
  mixed.clips.push_back(compress(test::random_clip(other_skeleton, 0.2, 30, rng2), other_skeleton));
  EXPECT_THROW(serialize_animation(mixed), Error);
}

}  // namespace
}  // namespace kinema
