// Vertex animation textures: bake (sample, FK, palette, blend shapes, skin), half-float
// encoding, DDS + JSON writing and a checking reader.
#include "kinema/skin/vat.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/skeleton/skeleton.h"
#include "kinema/skin/blend_shapes.h"
#include "kinema/skin/skinning.h"

namespace kinema {

// ---- half floats ------------------------------------------------------------------------------

uint16_t float_to_half(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t exp = (bits >> 23) & 0xffu;
  const uint32_t mant = bits & 0x7fffffu;
  if (exp == 0xffu)  // infinity or NaN (NaN keeps its top payload bits and becomes quiet)
    return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x0200u | (mant >> 13) : 0u));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {  // half subnormal (or zero): value = m · 2⁻²⁴
    const int shift = 14 - e;
    if (shift > 24) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    const uint32_t full = mant | 0x800000u;
    uint32_t h = full >> shift;
    const uint32_t rem = full & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry may reach infinity: right
  return static_cast<uint16_t>(sign | h);
}

float half_to_float(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exp = (half >> 10) & 0x1fu;
  const uint32_t mant = half & 0x3ffu;
  if (exp == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

const char* to_string(VatSkinning skinning) { return skinning == VatSkinning::Dqs ? "dqs" : "lbs"; }
const char* to_string(VatEncoding encoding) {
  return encoding == VatEncoding::Absolute ? "absolute" : "center_offset";
}

Vec3f VatBake::position(uint32_t frame, uint32_t vertex) const {
  const size_t i = (size_t(frame) * vertex_count + vertex) * 4;
  return Vec3f{half_to_float(texels[i]), half_to_float(texels[i + 1]),
               half_to_float(texels[i + 2])} +
         origin;
}

// ---- baking -----------------------------------------------------------------------------------

namespace {

constexpr size_t kMaxDataBytes = size_t(1) << 30;

/// One skinned mesh of the bake with its per-frame scratch: palettes, and with blend shapes the
/// targets, their weights and the morphed positions.
struct MeshWork {
  const Mesh* mesh = nullptr;
  const Skin* skin = nullptr;
  std::vector<Affine3x4f> palette;
  std::vector<DualQuatf> dual_quats;
  std::vector<Affine3x4f> prescale;
  std::vector<MorphTargetView> morphs;
  const MorphTrack* track = nullptr;
  std::vector<double> weights_d;
  std::vector<float> weights;
  std::vector<Vec3f> morphed;
  uint32_t first = 0;  ///< the mesh's first vertex in the texture
};

/// The clip to bake (options.clip), checked.
const Clip& bake_clip(const Asset& asset, const VatBakeOptions& options, const std::string& file) {
  if (asset.clips.empty()) throw Error(file, "", "no animation clip to bake");
  if (options.clip < 0 || static_cast<size_t>(options.clip) >= asset.clips.size())
    throw Error(file, "clip " + std::to_string(options.clip),
                "out of range (" + std::to_string(asset.clips.size()) + " clips)");
  return asset.clips[static_cast<size_t>(options.clip)];
}

/// Frames per second of the bake: options.fps, else the clip's rate, else 30.
double bake_fps(const Clip& clip, const VatBakeOptions& options, const std::string& file) {
  if (options.fps != 0 && !(options.fps > 0 && std::isfinite(options.fps)))
    throw Error(file, "fps", "must be positive and finite (0: the clip's rate)");
  if (options.fps > 0) return options.fps;
  const double rate = sample_rate_or(clip);
  return std::isfinite(rate) ? rate : kDefaultSampleRate;
}

/// The bake's work for mesh `mi` (skinned, with positions), its skin and blend shapes checked.
MeshWork mesh_work(const Asset& asset, size_t mi, const Clip& clip, const VatBakeOptions& options,
                   const std::string& file) {
  const Mesh& mesh = asset.meshes[mi];
  if (static_cast<size_t>(mesh.skin) >= asset.skins.size())
    throw Error(file, "mesh " + mesh.name, "skin index out of range");
  MeshWork w;
  w.mesh = &mesh;
  w.skin = &asset.skins[static_cast<size_t>(mesh.skin)];
  if (w.skin->inverse_bind.size() != w.skin->joints.size())
    throw Error(file, "skin " + w.skin->name, "inverse bind count differs from the joint count");
  for (int j : w.skin->joints)
    if (j < 0 || j >= asset.skeleton.joint_count())
      throw Error(file, "skin " + w.skin->name, "joint index out of range");
  const SkinMeshView view{mesh.positions, {}, {}, mesh.influences, mesh.joints, mesh.weights};
  validate_skin_mesh(view, w.skin->joints.size(), file, mesh.name);
  w.palette.resize(w.skin->joints.size());
  w.dual_quats.resize(w.skin->joints.size());
  w.prescale.resize(w.skin->joints.size());
  if (options.morphs && !mesh.morph_targets.empty()) {
    make_blend_shape_set(mesh, 0.0f, file);  // validates the targets (throws)
    w.morphs = morph_target_views(mesh);
    w.weights_d.assign(mesh.morph_targets.size(), 0.0);
    for (size_t k = 0; k < w.weights_d.size() && k < mesh.default_weights.size(); ++k)
      w.weights_d[k] = mesh.default_weights[k];
    for (const MorphTrack& t : clip.morph_tracks)
      if (t.mesh == static_cast<int>(mi) &&
          t.target_count == static_cast<int>(mesh.morph_targets.size()))
        w.track = &t;
    w.weights.resize(w.weights_d.size());
    w.morphed.resize(mesh.vertex_count());
  }
  return w;
}

/// The work of every skinned mesh of the asset, one after another in the texture (their ranges
/// recorded in bake.meshes, their total in bake.vertex_count).
std::vector<MeshWork> meshes_to_bake(const Asset& asset, const Clip& clip,
                                     const VatBakeOptions& options, const std::string& file,
                                     VatBake& bake) {
  std::vector<MeshWork> work;
  uint32_t total = 0;
  for (size_t mi = 0; mi < asset.meshes.size(); ++mi) {
    const Mesh& mesh = asset.meshes[mi];
    if (mesh.skin < 0 || mesh.influences <= 0 || mesh.positions.empty()) continue;
    MeshWork w = mesh_work(asset, mi, clip, options, file);
    w.first = total;
    if (mesh.vertex_count() > std::numeric_limits<uint32_t>::max() - total)
      throw Error(file, "mesh " + mesh.name, "too many vertices");
    total += static_cast<uint32_t>(mesh.vertex_count());
    bake.meshes.push_back({mesh.name, w.first, static_cast<uint32_t>(mesh.vertex_count())});
    work.push_back(std::move(w));
  }
  if (work.empty()) throw Error(file, "", "no skinned mesh to bake");
  bake.vertex_count = total;
  return work;
}

/// One mesh skinned at time t into `out`: blend shapes first (weights from its track, else its
/// defaults), then LBS or DQS with the palette of the model-space pose `model`.
void skin_mesh_at(MeshWork& w, std::span<const Mat4> model, double t, VatSkinning skinning,
                  std::span<Vec3f> out, const std::string& file) {
  const Mesh& mesh = *w.mesh;
  std::span<const Vec3f> positions = mesh.positions;
  if (!w.morphs.empty()) {
    if (w.track) sample(*w.track, t, w.weights_d);
    for (size_t k = 0; k < w.weights.size(); ++k) w.weights[k] = float(w.weights_d[k]);
    apply_blend_shapes(mesh.positions, {}, w.morphs, w.weights, w.morphed, {});
    positions = w.morphed;
  }
  const SkinMeshView view{positions, {}, {}, mesh.influences, mesh.joints, mesh.weights};
  bool ok = skinning_palette(model, w.skin->joints, w.skin->inverse_bind, w.palette);
  if (ok && skinning == VatSkinning::Dqs) {
    bool scaled = false;
    ok = dual_quat_palette(w.palette, w.dual_quats, w.prescale, &scaled) &&
         skin_dqs(view,
                  {w.dual_quats, scaled ? std::span<const Affine3x4f>(w.prescale)
                                        : std::span<const Affine3x4f>()},
                  {out, {}, {}});
  } else if (ok) {
    ok = skin_lbs(view, w.palette, {out, {}, {}});
  }
  if (!ok) throw Error(file, "mesh " + mesh.name, "skinning failed (sizes do not match)");
}

/// Every vertex's skinned position at every frame (frame-major, bake.vertex_count a frame), in
/// float: what the texture encodes.
std::vector<Vec3f> skin_frames(const Asset& asset, const Clip& clip, const VatBake& bake,
                               std::vector<MeshWork>& work, VatSkinning skinning,
                               const std::string& file) {
  const Skeleton& sk = asset.skeleton;
  const size_t joints = static_cast<size_t>(sk.joint_count());
  const uint32_t total = bake.vertex_count;
  std::vector<Transform> local(joints);
  std::vector<Mat4> model_d(joints);
  std::vector<Vec3f> exact(size_t(bake.frame_count) * total);
  for (uint32_t f = 0; f < bake.frame_count; ++f) {
    const double t = std::min(double(f) / bake.fps, clip.duration);
    if (!sample_pose(clip, sk, t, WrapMode::Clamp, local) ||
        !local_to_model(sk.parents(), local, model_d))
      throw Error(file, "clip " + clip.name, "cannot sample the pose");
    for (MeshWork& w : work)
      skin_mesh_at(
          w, model_d, t, skinning,
          std::span<Vec3f>(exact.data() + size_t(f) * total + w.first, w.mesh->vertex_count()),
          file);
  }
  return exact;
}

/// The bounds of the positions (each checked finite) into the bake, and the origin the texels
/// are relative to.
void set_bounds(const std::vector<Vec3f>& exact, VatEncoding encoding, const std::string& file,
                VatBake& bake) {
  const uint32_t total = bake.vertex_count;
  Vec3f lo{std::numeric_limits<float>::max(), std::numeric_limits<float>::max(),
           std::numeric_limits<float>::max()};
  Vec3f hi = -lo;
  for (size_t i = 0; i < exact.size(); ++i) {
    const Vec3f p = exact[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
      throw Error(file,
                  "frame " + std::to_string(i / total) + ", vertex " + std::to_string(i % total),
                  "skinned position is not finite");
    lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
    hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
  }
  bake.bounds_min = lo;
  bake.bounds_max = hi;
  bake.origin = encoding == VatEncoding::CenterOffset ? (lo + hi) * 0.5f : Vec3f{0, 0, 0};
}

/// The positions relative to bake.origin as half-float RGBA texels (alpha 1), and the error of
/// the encoding (max and RMS distance of the decoded positions from the exact ones).
void encode_texels(const std::vector<Vec3f>& exact, const std::string& file, VatBake& bake) {
  const uint32_t total = bake.vertex_count;
  bake.texels.resize(exact.size() * 4);
  double max_err = 0, sum2 = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    const Vec3f q = exact[i] - bake.origin;
    uint16_t* t = &bake.texels[i * 4];
    t[0] = float_to_half(q.x);
    t[1] = float_to_half(q.y);
    t[2] = float_to_half(q.z);
    t[3] = 0x3c00;  // 1.0
    for (int c = 0; c < 3; ++c)
      if ((t[c] & 0x7c00) == 0x7c00)
        throw Error(file, "vertex " + std::to_string(i % total),
                    "position does not fit a half float (|x| > 65504 m)");
    const double dx = double(half_to_float(t[0])) + bake.origin.x - exact[i].x;
    const double dy = double(half_to_float(t[1])) + bake.origin.y - exact[i].y;
    const double dz = double(half_to_float(t[2])) + bake.origin.z - exact[i].z;
    const double e2 = dx * dx + dy * dy + dz * dz;
    max_err = std::max(max_err, std::sqrt(e2));
    sum2 += e2;
  }
  bake.max_error_m = max_err;
  bake.rms_error_m = exact.empty() ? 0.0 : std::sqrt(sum2 / double(exact.size()));
}

}  // namespace

VatBake bake_vat(const Asset& asset, const VatBakeOptions& options, const std::string& file) {
  const Clip& clip = bake_clip(asset, options, file);
  const double fps = bake_fps(clip, options, file);
  if (!std::isfinite(clip.duration) || clip.duration < 0)
    throw Error(file, "clip " + clip.name, "duration is not valid");

  VatBake bake;
  bake.clip = clip.name;
  bake.fps = fps;
  bake.duration = clip.duration;
  bake.skinning = options.skinning;
  bake.encoding = options.encoding;
  std::vector<MeshWork> work = meshes_to_bake(asset, clip, options, file, bake);
  const double frames_d = std::round(clip.duration * fps) + 1.0;
  if (frames_d * double(bake.vertex_count) * 8.0 > double(kMaxDataBytes))
    throw Error(file, "",
                "the texture would exceed 1 GiB (" + std::to_string(bake.vertex_count) +
                    " vertices × " + std::to_string(frames_d) + " frames)");
  bake.frame_count = static_cast<uint32_t>(frames_d);

  const std::vector<Vec3f> exact = skin_frames(asset, clip, bake, work, options.skinning, file);
  set_bounds(exact, options.encoding, file, bake);
  encode_texels(exact, file, bake);
  return bake;
}

// ---- files ------------------------------------------------------------------------------------

namespace {

constexpr uint32_t kDdsMagic = 0x20534444u;  // "DDS "
constexpr uint32_t kFourCcRgba16f = 113u;    // D3DFMT_A16B16G16R16F
constexpr int kVersion = 1;

void put32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + size_t(i)] = static_cast<char>((v >> (8 * i)) & 0xffu);
}
uint32_t get32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(static_cast<unsigned char>(s[at + size_t(i)])) << (8 * i);
  return v;
}

std::string dds_header(uint32_t width, uint32_t height) {
  std::string h(kVatDdsHeaderBytes, '\0');
  put32(h, 0, kDdsMagic);
  put32(h, 4, 124);                                  // dwSize
  put32(h, 8, 0x1u | 0x2u | 0x4u | 0x8u | 0x1000u);  // CAPS | HEIGHT | WIDTH | PITCH | PIXELFORMAT
  put32(h, 12, height);
  put32(h, 16, width);
  put32(h, 20, width * 8u);  // pitch
  put32(h, 76, 32);          // ddspf.dwSize
  put32(h, 80, 0x4u);        // DDPF_FOURCC
  put32(h, 84, kFourCcRgba16f);
  put32(h, 108, 0x1000u);  // DDSCAPS_TEXTURE
  return h;
}

nlohmann::ordered_json vec_json(const Vec3f& v) { return {v.x, v.y, v.z}; }

}  // namespace

std::string vat_texture_path(const std::string& json_path) {
  std::filesystem::path p(json_path);
  p.replace_extension(".dds");
  return p.string();
}

VatFiles write_vat(const VatBake& bake, const std::string& json_path) {
  if (bake.texels.size() != size_t(bake.vertex_count) * bake.frame_count * 4 ||
      bake.vertex_count == 0 || bake.frame_count == 0)
    throw Error(json_path, "", "the VAT's texel count does not match its size");
  VatFiles files;
  files.json_path = json_path;
  files.texture_path = vat_texture_path(json_path);
  if (files.texture_path == json_path)
    throw Error(json_path, "", "the metadata file must not end in .dds");
  std::string bytes = dds_header(bake.vertex_count, bake.frame_count);
  const size_t data = bake.data_bytes();
  bytes.resize(kVatDdsHeaderBytes + data);
  for (size_t i = 0; i < bake.texels.size(); ++i) {
    bytes[kVatDdsHeaderBytes + 2 * i] = static_cast<char>(bake.texels[i] & 0xffu);
    bytes[kVatDdsHeaderBytes + 2 * i + 1] = static_cast<char>(bake.texels[i] >> 8);
  }
  files.texture_bytes = bytes.size();

  nlohmann::ordered_json j;
  j["format"] = "kinema-vat";
  j["version"] = kVersion;
  j["texture"] = std::filesystem::path(files.texture_path).filename().string();
  j["container"] = "dds";
  j["pixel_format"] = "RGBA16F";
  j["texture_bytes"] = files.texture_bytes;
  j["data_offset"] = kVatDdsHeaderBytes;
  j["data_bytes"] = data;
  j["width"] = bake.vertex_count;
  j["height"] = bake.frame_count;
  j["layout"] =
      "row = frame (row 0 = t 0, top), texel x = vertex; RGB = model-space position - origin "
      "(metres, +Y up), A = 1; little-endian half floats";
  j["vertex_count"] = bake.vertex_count;
  j["frame_count"] = bake.frame_count;
  j["fps"] = bake.fps;
  j["duration"] = bake.duration;
  j["clip"] = bake.clip;
  j["skinning"] = to_string(bake.skinning);
  j["encoding"] = to_string(bake.encoding);
  j["origin"] = vec_json(bake.origin);
  j["bounds"] = {{"min", vec_json(bake.bounds_min)}, {"max", vec_json(bake.bounds_max)}};
  nlohmann::ordered_json meshes = nlohmann::ordered_json::array();
  for (const VatMeshRange& m : bake.meshes)
    meshes.push_back(
        {{"name", m.name}, {"first_vertex", m.first_vertex}, {"vertex_count", m.vertex_count}});
  j["meshes"] = meshes;
  j["max_error_m"] = bake.max_error_m;
  j["rms_error_m"] = bake.rms_error_m;

  write_file_atomically(files.texture_path, bytes);
  try {
    write_file_atomically(json_path, j.dump(2) + "\n");
  } catch (...) {
    // No texture without its metadata: take back the one just written.
    std::error_code ec;
    std::filesystem::remove(files.texture_path, ec);
    throw;
  }
  return files;
}

VatBake read_vat(const std::string& json_path) {
  using json = nlohmann::json;
  const std::string text = read_file(json_path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(json_path, "", std::string("not valid JSON: ") + e.what());
  }
  auto field = [&](const char* name) -> const json& {
    if (!j.is_object() || !j.contains(name))
      throw Error(json_path, std::string("/") + name, "missing");
    return j.at(name);
  };
  VatBake bake;
  try {
    if (field("format") != "kinema-vat")
      throw Error(json_path, "/format", "not a kinema VAT (expected \"kinema-vat\")");
    if (field("version") != kVersion)
      throw Error(json_path, "/version", "unsupported version " + field("version").dump());
    const auto count = [&](const char* name) -> uint32_t {
      const json& v = field(name);
      if (!v.is_number_unsigned() || v.get<uint64_t>() == 0 ||
          v.get<uint64_t>() > std::numeric_limits<uint32_t>::max())
        throw Error(json_path, std::string("/") + name, "not a positive count");
      return v.get<uint32_t>();
    };
    bake.vertex_count = count("vertex_count");
    bake.frame_count = count("frame_count");
    if (count("width") != bake.vertex_count || count("height") != bake.frame_count)
      throw Error(json_path, "/width", "width/height differ from vertex_count/frame_count");
    if (field("data_bytes") != bake.data_bytes())
      throw Error(json_path, "/data_bytes", "does not equal vertices × frames × 8");
    if (bake.data_bytes() > kMaxDataBytes) throw Error(json_path, "/data_bytes", "too large");
    bake.fps = field("fps").get<double>();
    bake.duration = field("duration").get<double>();
    if (!(bake.fps > 0) || !std::isfinite(bake.fps)) throw Error(json_path, "/fps", "not positive");
    bake.clip = field("clip").get<std::string>();
    const std::string skinning = field("skinning").get<std::string>();
    if (skinning != "lbs" && skinning != "dqs") throw Error(json_path, "/skinning", "unknown");
    bake.skinning = skinning == "dqs" ? VatSkinning::Dqs : VatSkinning::Lbs;
    const std::string encoding = field("encoding").get<std::string>();
    if (encoding != "center_offset" && encoding != "absolute")
      throw Error(json_path, "/encoding", "unknown");
    bake.encoding = encoding == "absolute" ? VatEncoding::Absolute : VatEncoding::CenterOffset;
    auto vec = [&](const json& v, const std::string& place) {
      if (!v.is_array() || v.size() != 3) throw Error(json_path, place, "not 3 numbers");
      return Vec3f{v[0].get<float>(), v[1].get<float>(), v[2].get<float>()};
    };
    bake.origin = vec(field("origin"), "/origin");
    bake.bounds_min = vec(field("bounds").at("min"), "/bounds/min");
    bake.bounds_max = vec(field("bounds").at("max"), "/bounds/max");
    for (const json& m : field("meshes")) {
      const json& first = m.at("first_vertex");
      const json& count = m.at("vertex_count");
      if (!first.is_number_unsigned() || !count.is_number_unsigned() ||
          first.get<uint64_t>() > bake.vertex_count ||
          count.get<uint64_t>() > bake.vertex_count - first.get<uint64_t>())
        throw Error(json_path, "/meshes", "a mesh range lies outside the texture row");
      bake.meshes.push_back(
          {m.at("name").get<std::string>(), first.get<uint32_t>(), count.get<uint32_t>()});
    }
    bake.max_error_m = field("max_error_m").get<double>();
    bake.rms_error_m = field("rms_error_m").get<double>();
    const std::string texture = field("texture").get<std::string>();
    if (texture.empty() || std::filesystem::path(texture).has_parent_path())
      throw Error(json_path, "/texture", "must be a file name in the same folder");
    const std::string tex_path =
        (std::filesystem::path(json_path).parent_path() / texture).string();
    const std::string bytes = read_file(tex_path);
    const size_t expected = kVatDdsHeaderBytes + bake.data_bytes();
    if (field("texture_bytes") != expected)
      throw Error(json_path, "/texture_bytes", "does not equal header + data");
    if (bytes.size() != expected)
      throw Error(tex_path, "",
                  (bytes.size() < expected ? "truncated: " : "trailing bytes: ") +
                      std::to_string(bytes.size()) + " bytes, expected " +
                      std::to_string(expected));
    if (get32(bytes, 0) != kDdsMagic || get32(bytes, 4) != 124 || get32(bytes, 76) != 32)
      throw Error(tex_path, "byte 0", "not a DDS file");
    if ((get32(bytes, 80) & 0x4u) == 0 || get32(bytes, 84) != kFourCcRgba16f)
      throw Error(tex_path, "byte 84", "pixel format is not RGBA16F (FourCC 113)");
    if (get32(bytes, 16) != bake.vertex_count || get32(bytes, 12) != bake.frame_count)
      throw Error(tex_path, "byte 12", "image size differs from the metadata");
    bake.texels.resize(bake.data_bytes() / 2);
    for (size_t i = 0; i < bake.texels.size(); ++i) {
      const uint16_t h = static_cast<uint16_t>(
          static_cast<unsigned char>(bytes[kVatDdsHeaderBytes + 2 * i]) |
          (static_cast<unsigned char>(bytes[kVatDdsHeaderBytes + 2 * i + 1]) << 8));
      if ((i % 4 == 3 && h != 0x3c00) || (h & 0x7c00) == 0x7c00)
        throw Error(tex_path, "byte " + std::to_string(kVatDdsHeaderBytes + 2 * i),
                    "corrupted texel (not finite, or A ≠ 1)");
      bake.texels[i] = h;
    }
  } catch (const json::exception& e) {
    throw Error(json_path, "", std::string("bad field: ") + e.what());
  }
  return bake;
}

}  // namespace kinema
