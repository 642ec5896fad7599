// Hostile compressed files: every corruption gives a kinema::Error naming the byte offset.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "../../src/compress/format.h"
#include "kinema/compress/compress.h"
#include "kinema/core/error.h"
#include "test_clips.h"

namespace kinema {
namespace {

std::vector<std::byte> small_file() {
  std::mt19937 rng(42);
  const Skeleton sk = test::random_skeleton(5, rng);
  const Clip clip = test::random_clip(sk, 0.4, 30, rng, true);
  const CompressedClip c = compress(clip, sk);
  return {c.bytes().begin(), c.bytes().end()};
}

// Rewrites the checksum so that only the field under test is wrong.
void reseal(std::vector<std::byte>& b) {
  const uint32_t h =
      compress_format::fnv1a(reinterpret_cast<const uint8_t*>(b.data()) + 16, b.size() - 16);
  for (int i = 0; i < 4; ++i) b[size_t(12 + i)] = std::byte(h >> (8 * i));
}
void put32(std::vector<std::byte>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + size_t(i)] = std::byte(v >> (8 * i));
}

std::string error_of(const std::vector<std::byte>& b) {
  try {
    CompressedClip::deserialize(b, "clip.kc");
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "clip.kc");
    EXPECT_EQ(e.place().rfind("byte ", 0), 0u) << e.place();
    return e.what();
  }
  return "";
}

TEST(CompressFormat, LoadsWhatItWrites) {
  const std::vector<std::byte> b = small_file();
  const CompressedClip c = CompressedClip::deserialize(b);
  EXPECT_EQ(c.size_bytes(), b.size());
  EXPECT_EQ(c.joint_count(), 5);
}

TEST(CompressFormat, EveryTruncationIsAnError) {
  const std::vector<std::byte> b = small_file();
  for (size_t n = 0; n < b.size(); ++n)
    EXPECT_NE(error_of({b.begin(), b.begin() + std::ptrdiff_t(n)}), "") << n;
  std::vector<std::byte> longer = b;
  longer.push_back(std::byte{0});
  EXPECT_NE(error_of(longer), "");
}

TEST(CompressFormat, EveryByteFlipIsAnError) {
  const std::vector<std::byte> b = small_file();
  for (size_t i = 0; i < b.size(); ++i)
    for (uint8_t mask : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xFF)}) {
      std::vector<std::byte> x = b;
      x[i] ^= std::byte(mask);
      EXPECT_NE(error_of(x), "") << i;
    }
}

TEST(CompressFormat, HostileFieldsWithAValidChecksum) {
  const std::vector<std::byte> b = small_file();
  auto with = [&](size_t at, uint32_t v) {
    std::vector<std::byte> x = b;
    put32(x, at, v);
    reseal(x);
    return error_of(x);
  };
  EXPECT_NE(with(16, 0x7FFFFFFF).find("joint count"), std::string::npos);  // huge joint count
  EXPECT_NE(with(20, 0xFFFFFFFF).find("frame count"), std::string::npos);  // huge frame count
  EXPECT_NE(with(20, 1).find("frame count"), std::string::npos);
  EXPECT_NE(with(24, 0x7FC00000).find("not finite"), std::string::npos);  // NaN rate
  EXPECT_NE(with(28, 0xFF800000).find("not finite"), std::string::npos);  // −Inf duration
  EXPECT_NE(with(36, 1000).find("animated"), std::string::npos);
  // Version 1 (one bit rate per track and segment, 7-byte segment headers) is refused by name,
  // as is any later version.
  EXPECT_EQ(compress_format::kVersion, 2);
  EXPECT_NE(with(4, 1).find("unsupported version 1 (this build reads 2)"), std::string::npos);
  EXPECT_NE(with(4, 3).find("unsupported version 3"), std::string::npos);
  EXPECT_NE(with(0, 0x4B4E4D44).find("magic"), std::string::npos);
  EXPECT_NE(with(8, 0xFFFFFFF0).find("bytes"), std::string::npos);
  // The name's length pointing past the end.
  {
    std::vector<std::byte> x = b;
    x[34] = std::byte{0xFF}, x[35] = std::byte{0xFF};
    reseal(x);
    EXPECT_NE(error_of(x), "");
  }
  // Every byte after the header set to a hostile value, resealed: an error or a clip that
  // samples finite values, never a crash.
  const CompressedClip good = CompressedClip::deserialize(b);
  const size_t after = compress_format::kHeaderBytes;
  for (size_t i = after; i < b.size(); ++i)
    for (uint8_t v : {uint8_t(0xFF), uint8_t(0x7F), uint8_t(0x00), uint8_t(0xC0)}) {
      std::vector<std::byte> x = b;
      x[i] = std::byte(v);
      reseal(x);
      try {
        const CompressedClip c = CompressedClip::deserialize(x);
        std::vector<SoaTransform> soa(size_t(c.soa_count()));
        for (float t : {0.0f, 0.13f, 0.4f}) {
          ASSERT_TRUE(sample(c, t, soa));
          for (const SoaTransform& s : soa)
            for (int k = 0; k < 40; ++k)
              ASSERT_TRUE(std::isfinite((&s.tx[0])[k])) << "byte " << i << " = " << int(v);
        }
      } catch (const Error&) {
      }
    }
}

TEST(CompressFormat, NanRangeIsRejected) {
  std::vector<std::byte> b = small_file();
  const CompressedClip c = CompressedClip::deserialize(b);
  ASSERT_GT(c.animated_track_count(), 0);
  // The clip ranges follow the header, name, kinds and constants: find the first range by
  // writing NaN over each float-aligned slot after the kinds until the loader names a range.
  bool found = false;
  const size_t start = compress_format::kHeaderBytes + c.name().size() + size_t(c.joint_count());
  for (size_t at = start; at + 4 <= b.size() && !found; at += 4) {
    std::vector<std::byte> x = b;
    put32(x, at, 0x7FC00000);
    reseal(x);
    const std::string e = error_of(x);
    EXPECT_NE(e, "") << at;
    found = e.find("range") != std::string::npos;
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace kinema
