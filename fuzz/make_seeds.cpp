// fuzz/make_seeds.cpp — builds each fuzz target's seed folder: copies of the small files in
// tests/data (BVH cut to a few frames, so that each run stays fast), .kmc, .kmm and .kml files
// made from them by kinema itself, tiny PNG height maps, and the hand-made texts of seed_texts.h.
// Usage: fuzz_make_seeds TESTS_DATA_DIR OUT_DIR
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "kinema/core/file.h"
#include "kinema/io/bvh.h"
#include "kinema/io/kmc.h"
#include "kinema/match/database.h"
#include "kinema/match/inputs.h"
#include "kinema/match/learned.h"
#include "seed_texts.h"

namespace fs = std::filesystem;

namespace {

void put(const fs::path& folder, const std::string& name, const std::string& bytes) {
  fs::create_directories(folder);
  std::ofstream(folder / name, std::ios::binary) << bytes;
}

/// A learned model on a database's layout and skeleton with tiny networks (`hidden` units, fixed
/// weights): the .kml reader's seed, small enough for fast runs.
kinema::match::LearnedModel tiny_learned_model(const kinema::match::Database& db, uint32_t hidden,
                                               kinema::match::Activation activation) {
  using namespace kinema::match;
  LearnedModel m;
  m.fps = db.fps;
  m.trajectory_times = db.trajectory_times;
  m.groups = db.groups;
  m.mean = db.mean;
  m.joints = db.joints;
  m.skeleton = db.skeleton;
  m.latent_dims = 2;
  m.trained_frames = db.frames();
  const auto first = db.features.values.begin();
  m.start_state.assign(first, first + std::ptrdiff_t(db.dims()));
  m.start_state.resize(m.state_size(), 0.0f);
  const auto mlp = [&](uint32_t inputs, uint32_t outputs) {
    Mlp n;
    for (const auto& [in, out] : {std::pair{inputs, hidden}, std::pair{hidden, outputs}}) {
      DenseLayer l;
      l.inputs = in;
      l.outputs = out;
      l.activation = n.layers.empty() ? activation : Activation::none;
      for (size_t i = 0; i < size_t(in) * out; ++i) l.weights.push_back(0.1f * float(i % 7) - 0.3f);
      l.bias.assign(out, 0.01f);
      n.layers.push_back(std::move(l));
    }
    n.input_mean.assign(inputs, 0.0f);
    n.input_scale.assign(inputs, 1.0f);
    n.output_mean.assign(outputs, 0.0f);
    n.output_scale.assign(outputs, 0.5f);
    return n;
  };
  const auto state = uint32_t(m.state_size());
  m.decompressor = mlp(state, uint32_t(pose_vector_size(m.skeleton.joint_count())));
  m.stepper = mlp(state, state);
  m.projector = mlp(uint32_t(m.dims()), state);
  return m;
}

/// The hierarchy and the first `frames` frames of a BVH file, its frame count fixed.
std::string cut_bvh(const std::string& text, int frames) {
  std::istringstream in(text);
  std::ostringstream out;
  std::string line;
  int motion_lines = -1;  // lines after "Frame Time"
  while (std::getline(in, line)) {
    if (line.rfind("Frames:", 0) == 0) {
      out << "Frames: " << frames << "\n";
      continue;
    }
    if (motion_lines >= 0 && ++motion_lines > frames) break;
    out << line << "\n";
    if (line.rfind("Frame Time:", 0) == 0) motion_lines = 0;
  }
  return out.str();
}

uint32_t crc32(const std::string& bytes) {
  uint32_t c = 0xffffffffu;
  for (const unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

/// A PNG of w×h pixels, `channels` samples each at `bits` 8 or 16, in one stored deflate block.
std::string make_png(int w, int h, int bits, int channels) {
  const int color_types[] = {0, 0, 4, 2, 6};
  const int bytes_per_sample = bits / 8;
  std::string raw;
  for (int y = 0; y < h; ++y) {
    raw += '\0';  // filter: none
    for (int i = 0; i < w * channels * bytes_per_sample; ++i)
      raw += static_cast<char>((y * 37 + i * 11) & 0xff);
  }
  uint32_t a = 1, b = 0;
  for (const unsigned char c : raw) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  const auto len = static_cast<uint16_t>(raw.size());
  std::string z = "\x78\x01";
  z += '\x01';  // final stored block
  z += {static_cast<char>(len & 0xff), static_cast<char>(len >> 8), static_cast<char>(~len & 0xff),
        static_cast<char>((~len >> 8) & 0xff)};
  z += raw + be32((b << 16) | a);
  const auto chunk = [](const std::string& type, const std::string& data) {
    return be32(static_cast<uint32_t>(data.size())) + type + data + be32(crc32(type + data));
  };
  std::string ihdr = be32(static_cast<uint32_t>(w)) + be32(static_cast<uint32_t>(h));
  ihdr += {static_cast<char>(bits), static_cast<char>(color_types[channels]), 0, 0, 0};
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", z) +
         chunk("IEND", "");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: fuzz_make_seeds TESTS_DATA_DIR OUT_DIR\n";
    return 1;
  }
  const fs::path data = argv[1], out = argv[2];
  fs::remove_all(out);

  // BVH: every test file cut to its first frames, and the small hand-made character.
  std::vector<kinema::Asset> bvh_assets;
  for (const auto& entry : fs::recursive_directory_iterator(data / "bvh")) {
    if (entry.path().extension() != ".bvh") continue;
    const std::string cut = cut_bvh(kinema::read_file(entry.path().string()), 8);
    put(out / "bvh", entry.path().filename().string(), cut);
    bvh_assets.push_back(kinema::parse_bvh(cut, entry.path().string()));
  }
  put(out / "bvh", "small.bvh", kinema::fuzz::kSmallBvh);
  const kinema::Asset small = kinema::parse_bvh(kinema::fuzz::kSmallBvh, "small.bvh");

  // glTF, GLB, VRM and VRMA from tests/data, leaving out the largest files (slow runs).
  fs::create_directories(out / "gltf");
  fs::create_directories(out / "vrma");
  for (const char* folder : {"gltf", "vrm"}) {
    for (const auto& entry : fs::directory_iterator(data / folder)) {
      const std::string ext = entry.path().extension().string();
      if (entry.file_size() > 200'000) continue;
      if (ext == ".vrma")
        fs::copy_file(entry.path(), out / "vrma" / entry.path().filename());
      else if (ext == ".glb" || ext == ".gltf" || ext == ".vrm")
        fs::copy_file(entry.path(), out / "gltf" / entry.path().filename());
    }
  }

  // .kmc: the small character and a cut test file, compressed.
  put(out / "kmc", "small.kmc",
      kinema::serialize_animation(kinema::compress_asset(small, "small.bvh")));
  put(out / "kmc", "cut.kmc",
      kinema::serialize_animation(kinema::compress_asset(bvh_assets.at(0), "cut.bvh")));

  // .kmm: a database of a cut test clip (a full humanoid), with and without tags.
  {
    const kinema::Asset& walk = bvh_assets.at(0);
    kinema::match::ClipSource clip;
    clip.name = "walk";
    clip.skeleton = &walk.skeleton;
    clip.clip = &walk.clips.at(0);
    clip.joints = kinema::match::feature_joints_of(walk, "walk");
    const kinema::match::Database db = kinema::match::build_database(std::span(&clip, 1));
    put(out / "kmm", "plain.kmm", kinema::match::serialize_database(db));
    // .kml: tiny networks on that database's layout and skeleton.
    put(out / "kml", "relu.kml",
        kinema::match::serialize_learned_model(
            tiny_learned_model(db, 4, kinema::match::Activation::relu)));
    put(out / "kml", "elu.kml",
        kinema::match::serialize_learned_model(
            tiny_learned_model(db, 3, kinema::match::Activation::elu)));
    clip.tags.push_back({"idle", 0.0, 0.05});
    put(out / "kmm", "tagged.kmm",
        kinema::match::serialize_database(kinema::match::build_database(std::span(&clip, 1))));
  }

  // PNG height maps: 8- and 16-bit gray, gray + alpha, RGB (gray pixels), RGBA.
  put(out / "png", "gray8.png", make_png(3, 2, 8, 1));
  put(out / "png", "gray16.png", make_png(4, 3, 16, 1));
  put(out / "png", "gray_alpha.png", make_png(2, 2, 8, 2));
  put(out / "png", "rgb.png", make_png(2, 3, 8, 3));
  put(out / "png", "rgba16.png", make_png(2, 2, 16, 4));

  const auto texts = [&](const char* folder, std::span<const char* const> seeds) {
    for (size_t i = 0; i < seeds.size(); ++i)
      put(out / folder, "seed" + std::to_string(i), seeds[i]);
  };
  texts("graph", kinema::fuzz::kGraphSeeds);
  texts("stick_path", kinema::fuzz::kStickPathSeeds);
  texts("tags", kinema::fuzz::kTagSeeds);
  texts("scene", kinema::fuzz::kSceneSeeds);
  texts("obj", kinema::fuzz::kObjSeeds);
  return 0;
}
