// glTF materials and textures into Asset::materials / Asset::textures (kinema/character/
// material.h): metallic–roughness factors and textures, alpha mode, KHR_materials_unlit,
// KHR_texture_transform on every textureInfo, samplers, the images' encoded bytes, and VRM's
// MToon: VRMC_materials_mtoon 1.0 as stored, VRM 0.x `materialProperties` converted to 1.0's
// parameters as three-vrm's VRM 0.x compatibility plugin converts them (vrm_mtoon0 below).
//
// Indices, enums and numbers are checked: bad data is a kinema::Error naming the file and the
// JSON pointer. An image kinema does not decode (KTX2, WebP, a missing file) leaves its texture
// without bytes, with a warning naming the texture.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gltf_accessor.h"
#include "gltf_internal.h"
#include "kinema/core/error.h"

namespace kinema::gltf_detail {
namespace {

using Value = tinygltf::Value;

/// What every reading function needs: the document, the file (for errors) and the warnings.
struct Context {
  const tinygltf::Model& m;
  const std::string& file;
  std::vector<std::string>& warnings;

  [[noreturn]] void fail(const std::string& place, const std::string& reason) const {
    throw Error(file, place, reason);
  }
  int texture_count() const { return static_cast<int>(m.textures.size()); }
};

bool is_null(const Value& v) { return v.Type() == tinygltf::NULL_TYPE; }

/// `x` as a float, refused unless finite (as a double and as a float).
float finite(const Context& c, double x, const std::string& place) {
  if (!std::isfinite(x) || !std::isfinite(static_cast<float>(x)))
    c.fail(place, "non-finite number");
  return static_cast<float>(x);
}

/// The number a JSON value holds, refused when it is not a finite number.
float number(const Context& c, const Value& v, const std::string& place) {
  if (!v.IsNumber()) c.fail(place, "expected a number");
  return finite(c, v.GetNumberAsDouble(), place);
}

/// An integer JSON value (a number without a fraction).
int integer(const Context& c, const Value& v, const std::string& place) {
  if (!v.IsNumber()) c.fail(place, "expected an integer");
  const double x = v.GetNumberAsDouble();
  if (!(std::abs(x) < 2147483647.0) || x != std::floor(x)) c.fail(place, "expected an integer");
  return static_cast<int>(x);
}

/// `n` finite numbers from a JSON array of exactly `n` (glTF factors as tinygltf parsed them).
template <size_t N>
std::array<float, N> factors(const Context& c, const std::vector<double>& v,
                             const std::string& place) {
  if (v.size() != N) c.fail(place, "needs " + std::to_string(N) + " numbers");
  std::array<float, N> out{};
  for (size_t k = 0; k < N; ++k) out[k] = finite(c, v[k], place + "/" + std::to_string(k));
  return out;
}

/// A JSON array of `n` numbers.
template <size_t N>
std::array<float, N> numbers(const Context& c, const Value& v, const std::string& place) {
  if (!v.IsArray() || v.ArrayLen() != N) c.fail(place, "needs " + std::to_string(N) + " numbers");
  std::array<float, N> out{};
  for (size_t k = 0; k < N; ++k)
    out[k] = number(c, v.Get(static_cast<int>(k)), place + "/" + std::to_string(k));
  return out;
}

// ---- textures -------------------------------------------------------------------------------

/// The MIME type the bytes' signature says, or "" when unrecognized.
std::string sniff(const unsigned char* p, size_t n) {
  static const unsigned char png[] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  static const unsigned char ktx2[] = {0xAB, 'K', 'T', 'X', ' ', '2', '0', 0xBB};
  if (n >= 8 && std::memcmp(p, png, 8) == 0) return "image/png";
  if (n >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF) return "image/jpeg";
  if (n >= 8 && std::memcmp(p, ktx2, 8) == 0) return "image/ktx2";
  if (n >= 12 && std::memcmp(p, "RIFF", 4) == 0 && std::memcmp(p + 8, "WEBP", 4) == 0)
    return "image/webp";
  return "";
}

TextureWrap wrap_of(const Context& c, int mode, const std::string& place) {
  switch (mode) {
    case TINYGLTF_TEXTURE_WRAP_REPEAT:
      return TextureWrap::Repeat;
    case TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE:
      return TextureWrap::ClampToEdge;
    case TINYGLTF_TEXTURE_WRAP_MIRRORED_REPEAT:
      return TextureWrap::MirroredRepeat;
    default:
      c.fail(place, "unknown wrap mode " + std::to_string(mode));
  }
}

/// Image `k`'s bytes (from its bufferView, a data URI or an external file) when they are PNG or
/// JPEG; else nullptr and `why` says what they are.
std::shared_ptr<const std::vector<uint8_t>> image_bytes(const Context& c, const AccessorReader& r,
                                                        int k, std::string& mime,
                                                        std::string& why) {
  const auto& image = c.m.images[static_cast<size_t>(k)];
  const unsigned char* p = nullptr;
  size_t n = 0;
  if (image.bufferView >= 0) {
    std::tie(p, n) = r.view_bytes(image.bufferView, pointer("images", k) + "/bufferView");
  } else {
    p = image.image.data();
    n = image.image.size();
  }
  const std::string sniffed = sniff(p, n);
  mime = sniffed.empty() ? image.mimeType : sniffed;
  if (n == 0) {
    why = "image " + std::to_string(k) + " has no data" +
          (image.uri.empty() || image.uri.rfind("data:", 0) == 0
               ? std::string()
               : " (cannot read '" + image.uri + "')");
    return nullptr;
  }
  if (sniffed != "image/png" && sniffed != "image/jpeg") {
    why = "image " + std::to_string(k) + " is " +
          (mime.empty() ? std::string("in an unknown format") : mime) +
          ", which kinema does not decode (PNG and JPEG only)";
    return nullptr;
  }
  return std::make_shared<const std::vector<uint8_t>>(p, p + n);
}

/// One Texture per glTF texture. Textures sharing an image share its bytes.
std::vector<Texture> read_textures(const Context& c) {
  const AccessorReader r(c.m, c.file);
  const int images = static_cast<int>(c.m.images.size());
  std::map<int, std::shared_ptr<const std::vector<uint8_t>>> loaded;
  std::vector<Texture> out;
  for (int i = 0; i < c.texture_count(); ++i) {
    const auto& gt = c.m.textures[static_cast<size_t>(i)];
    const std::string place = pointer("textures", i);
    Texture t;
    if (gt.source < -1 || gt.source >= images)
      c.fail(place + "/source", "image " + std::to_string(gt.source) + " does not exist");
    std::string why = "it has no source image";
    for (const auto& [name, ext] : gt.extensions)  // EXT_texture_webp, KHR_texture_basisu, …
      if (const Value* s = member(ext, "source")) {
        const int k = integer(c, *s, place + "/extensions/" + name + "/source");
        if (k < 0 || k >= images)
          c.fail(place + "/extensions/" + name + "/source",
                 "image " + std::to_string(k) + " does not exist");
        why = "its only image is given by " + name + ", which kinema does not read";
      }
    if (gt.source >= 0) {
      const auto& image = c.m.images[static_cast<size_t>(gt.source)];
      t.name = image.name;
      auto it = loaded.find(gt.source);
      std::string mime;
      t.encoded = it != loaded.end() ? it->second : image_bytes(c, r, gt.source, mime, why);
      t.mime_type = it != loaded.end() ? sniff(it->second->data(), it->second->size()) : mime;
      if (t.encoded) loaded[gt.source] = t.encoded;
    }
    if (!gt.name.empty()) t.name = gt.name;
    if (!t.encoded)
      c.warnings.push_back(place + (t.name.empty() ? "" : " ('" + t.name + "')") +
                           ": texture has no image kinema can draw: " + why);
    if (gt.sampler < -1 || gt.sampler >= static_cast<int>(c.m.samplers.size()))
      c.fail(place + "/sampler", "sampler " + std::to_string(gt.sampler) + " does not exist");
    if (gt.sampler >= 0) {
      const auto& s = c.m.samplers[static_cast<size_t>(gt.sampler)];
      const std::string sp = pointer("samplers", gt.sampler);
      t.wrap_s = wrap_of(c, s.wrapS, sp + "/wrapS");
      t.wrap_t = wrap_of(c, s.wrapT, sp + "/wrapT");
      if (s.magFilter != -1 && s.magFilter != TINYGLTF_TEXTURE_FILTER_NEAREST &&
          s.magFilter != TINYGLTF_TEXTURE_FILTER_LINEAR)
        c.fail(sp + "/magFilter", "unknown magFilter " + std::to_string(s.magFilter));
      t.nearest = s.magFilter == TINYGLTF_TEXTURE_FILTER_NEAREST;
    }
    out.push_back(std::move(t));
  }
  return out;
}

// ---- texture references ---------------------------------------------------------------------

/// KHR_texture_transform of a textureInfo at `place` (the textureInfo's pointer) into `ref`.
void read_transform(const Context& c, const Value& ext, const std::string& place, TextureRef& ref) {
  const std::string at = place + "/extensions/KHR_texture_transform";
  if (!ext.IsObject()) c.fail(at, "expected an object");
  if (const Value* v = member(ext, "offset"))
    ref.transform.offset = numbers<2>(c, *v, at + "/offset");
  if (const Value* v = member(ext, "rotation"))
    ref.transform.rotation = number(c, *v, at + "/rotation");
  if (const Value* v = member(ext, "scale")) ref.transform.scale = numbers<2>(c, *v, at + "/scale");
  if (const Value* v = member(ext, "texCoord")) {
    ref.tex_coord = integer(c, *v, at + "/texCoord");
    if (ref.tex_coord < 0) c.fail(at + "/texCoord", "negative texCoord");
  }
}

/// A reference to texture `index` (checked) through TEXCOORD_`tex_coord`, with the textureInfo's
/// KHR_texture_transform `transform` (may be nullptr).
TextureRef make_ref(const Context& c, int index, int tex_coord, const Value* transform,
                    const std::string& place) {
  if (index < 0 || index >= c.texture_count())
    c.fail(place + "/index", "texture " + std::to_string(index) + " does not exist");
  if (tex_coord < 0) c.fail(place + "/texCoord", "negative texCoord");
  TextureRef ref;
  ref.texture = index;
  ref.tex_coord = tex_coord;
  if (transform) read_transform(c, *transform, place, ref);
  return ref;
}

/// A core textureInfo as tinygltf parsed it (index −1: none).
template <class Info>
TextureRef info_ref(const Context& c, const Info& info, const std::string& place) {
  if (info.index == -1) return {};
  auto it = info.extensions.find("KHR_texture_transform");
  return make_ref(c, info.index, info.texCoord, it == info.extensions.end() ? nullptr : &it->second,
                  place);
}

/// A textureInfo inside an extension (a JSON object), `key` of `parent`; none when absent.
TextureRef value_ref(const Context& c, const Value& parent, const char* key,
                     const std::string& parent_place) {
  const Value* v = member(parent, key);
  if (!v) return {};
  const std::string place = parent_place + "/" + key;
  if (!v->IsObject()) c.fail(place, "expected a textureInfo object");
  const Value* index = member(*v, "index");
  if (!index) c.fail(place + "/index", "textureInfo without index");
  const Value* tc = member(*v, "texCoord");
  const Value* ext = member(*v, "extensions");
  return make_ref(c, integer(c, *index, place + "/index"),
                  tc ? integer(c, *tc, place + "/texCoord") : 0,
                  ext ? member(*ext, "KHR_texture_transform") : nullptr, place);
}

// ---- VRMC_materials_mtoon 1.0 ---------------------------------------------------------------

/// The MToon extension `ext` of the material at `place`; nullopt (with a warning) for a spec
/// version three-vrm does not accept either.
std::optional<MToon> read_mtoon1(const Context& c, const Value& ext, const std::string& material) {
  const std::string place = material + "/extensions/VRMC_materials_mtoon";
  if (!ext.IsObject()) c.fail(place, "expected an object");
  const std::string version = str(member(ext, "specVersion"));
  if (version != "1.0" && version != "1.0-beta") {
    c.warnings.push_back(place + ": unknown specVersion '" + version + "'; MToon ignored");
    return std::nullopt;
  }
  auto get = [&](const char* key, float& out) {
    if (const Value* v = member(ext, key)) out = number(c, *v, place + "/" + key);
  };
  auto rgb = [&](const char* key, std::array<float, 3>& out) {
    if (const Value* v = member(ext, key)) out = numbers<3>(c, *v, place + "/" + key);
  };
  auto tex = [&](const char* key) { return value_ref(c, ext, key, place); };
  MToon t;
  if (const Value* v = member(ext, "transparentWithZWrite")) {
    if (!v->IsBool()) c.fail(place + "/transparentWithZWrite", "expected a boolean");
    t.transparent_with_z_write = v->Get<bool>();
  }
  if (const Value* v = member(ext, "renderQueueOffsetNumber"))
    t.render_queue_offset = std::clamp(integer(c, *v, place + "/renderQueueOffsetNumber"), -9, 9);
  rgb("shadeColorFactor", t.shade_color);
  t.shade_multiply_texture = tex("shadeMultiplyTexture");
  get("shadingShiftFactor", t.shading_shift);
  t.shading_shift_texture = tex("shadingShiftTexture");
  if (const Value* v = member(ext, "shadingShiftTexture"))
    if (const Value* s = member(*v, "scale"))
      t.shading_shift_scale = number(c, *s, place + "/shadingShiftTexture/scale");
  get("shadingToonyFactor", t.shading_toony);
  get("giEqualizationFactor", t.gi_equalization);
  rgb("matcapFactor", t.matcap_color);
  t.matcap_texture = tex("matcapTexture");
  rgb("parametricRimColorFactor", t.parametric_rim_color);
  get("parametricRimFresnelPowerFactor", t.parametric_rim_fresnel_power);
  get("parametricRimLiftFactor", t.parametric_rim_lift);
  t.rim_multiply_texture = tex("rimMultiplyTexture");
  get("rimLightingMixFactor", t.rim_lighting_mix);
  if (const Value* v = member(ext, "outlineWidthMode")) {
    const std::string mode = str(v);
    if (mode == "none")
      t.outline_width_mode = OutlineWidthMode::None;
    else if (mode == "worldCoordinates")
      t.outline_width_mode = OutlineWidthMode::WorldCoordinates;
    else if (mode == "screenCoordinates")
      t.outline_width_mode = OutlineWidthMode::ScreenCoordinates;
    else
      c.fail(place + "/outlineWidthMode", "unknown outlineWidthMode '" + mode + "'");
  }
  get("outlineWidthFactor", t.outline_width);
  t.outline_width_texture = tex("outlineWidthMultiplyTexture");
  rgb("outlineColorFactor", t.outline_color);
  get("outlineLightingMixFactor", t.outline_lighting_mix);
  t.uv_animation_mask_texture = tex("uvAnimationMaskTexture");
  get("uvAnimationScrollXSpeedFactor", t.uv_scroll_x);
  get("uvAnimationScrollYSpeedFactor", t.uv_scroll_y);
  get("uvAnimationRotationSpeedFactor", t.uv_rotation);
  return t;
}

// ---- core materials -------------------------------------------------------------------------

Material read_material(const Context& c, int i) {
  const auto& gm = c.m.materials[static_cast<size_t>(i)];
  const std::string place = pointer("materials", i);
  const std::string pbr = place + "/pbrMetallicRoughness";
  Material mat;
  mat.name = gm.name;
  mat.base_color = factors<4>(c, gm.pbrMetallicRoughness.baseColorFactor, pbr + "/baseColorFactor");
  mat.base_color_texture =
      info_ref(c, gm.pbrMetallicRoughness.baseColorTexture, pbr + "/baseColorTexture");
  mat.metallic = finite(c, gm.pbrMetallicRoughness.metallicFactor, pbr + "/metallicFactor");
  mat.roughness = finite(c, gm.pbrMetallicRoughness.roughnessFactor, pbr + "/roughnessFactor");
  mat.metallic_roughness_texture = info_ref(c, gm.pbrMetallicRoughness.metallicRoughnessTexture,
                                            pbr + "/metallicRoughnessTexture");
  mat.normal_texture = info_ref(c, gm.normalTexture, place + "/normalTexture");
  mat.normal_scale = finite(c, gm.normalTexture.scale, place + "/normalTexture/scale");
  mat.occlusion_texture = info_ref(c, gm.occlusionTexture, place + "/occlusionTexture");
  mat.occlusion_strength =
      finite(c, gm.occlusionTexture.strength, place + "/occlusionTexture/strength");
  if (!gm.emissiveFactor.empty())
    mat.emissive = factors<3>(c, gm.emissiveFactor, place + "/emissiveFactor");
  mat.emissive_texture = info_ref(c, gm.emissiveTexture, place + "/emissiveTexture");
  if (gm.alphaMode == "OPAQUE" || gm.alphaMode.empty())
    mat.alpha_mode = AlphaMode::Opaque;
  else if (gm.alphaMode == "MASK")
    mat.alpha_mode = AlphaMode::Mask;
  else if (gm.alphaMode == "BLEND")
    mat.alpha_mode = AlphaMode::Blend;
  else
    c.fail(place + "/alphaMode", "unknown alphaMode '" + gm.alphaMode + "'");
  mat.alpha_cutoff = finite(c, gm.alphaCutoff, place + "/alphaCutoff");
  mat.double_sided = gm.doubleSided;
  mat.unlit = gm.extensions.count("KHR_materials_unlit") > 0;
  if (auto it = gm.extensions.find("VRMC_materials_mtoon"); it != gm.extensions.end()) {
    mat.mtoon = read_mtoon1(c, it->second, place);
    if (mat.mtoon) mat.unlit = false;  // MToon takes precedence (three-vrm drops the unlit)
  }
  return mat;
}

// ---- VRM 0.x materialProperties → MToon 1.0 -------------------------------------------------
//
// Follows three-vrm's VRM 0.x compatibility plugin (VRMMaterialsV0CompatPlugin, three-vrm 3.x):
// materialProperties[k] describes materials[k] (matched by index, as three-vrm and UniVRM do);
// "VRM/MToon" and "VRM/Unlit*" entries replace the material's pbrMetallicRoughness (base colour
// factor and texture only), normal and emissive (MToon) and alpha settings, and drop its other
// extensions; "VRM_USE_GLTFSHADER" keeps the glTF material. Colours from vectorProperties are
// gamma 2.2 encoded (Unity's sRGB colour fields): c_linear = c^2.2 (alpha kept, except in
// VRM/Unlit* where three-vrm decodes all four components).

/// The properties of one materialProperties entry, read with checks.
struct V0Entry {
  const Context& c;
  const Value& v;
  std::string place;

  const Value* group(const char* name) const { return member(v, name); }
  /// floatProperties[key], when present.
  std::optional<double> flt(const char* key) const {
    const Value* g = group("floatProperties");
    const Value* x = g ? member(*g, key) : nullptr;
    if (!x || is_null(*x)) return std::nullopt;
    return number(c, *x, place + "/floatProperties/" + key);
  }
  double flt(const char* key, double fallback) const { return flt(key).value_or(fallback); }
  /// vectorProperties[key], when present (numbers, any length).
  std::optional<std::vector<double>> vec(const char* key) const {
    const Value* g = group("vectorProperties");
    const Value* x = g ? member(*g, key) : nullptr;
    if (!x || is_null(*x)) return std::nullopt;
    const std::string at = place + "/vectorProperties/" + key;
    if (!x->IsArray()) c.fail(at, "expected an array of numbers");
    std::vector<double> out;
    for (size_t k = 0; k < x->ArrayLen(); ++k)
      out.push_back(number(c, x->Get(static_cast<int>(k)), at + "/" + std::to_string(k)));
    return out;
  }
  /// A colour vectorProperty (at least RGB), gamma-decoded to linear (`alpha` too when asked).
  std::array<float, 4> colour(const char* key, std::array<double, 4> fallback,
                              bool decode_alpha = false) const {
    const auto v4 = vec(key);
    if (v4 && v4->size() < 3) c.fail(place + "/vectorProperties/" + key, "needs 3 or 4 numbers");
    std::array<float, 4> out{};
    for (size_t k = 0; k < 4; ++k) {
      const double x = v4 ? (k < v4->size() ? (*v4)[k] : 1.0) : fallback[k];
      out[k] = finite(c, k == 3 && !decode_alpha ? x : std::pow(x, 2.2),
                      place + "/vectorProperties/" + key);
    }
    return out;
  }
  /// textureProperties[key] as a texture index (checked), or −1.
  int texture(const char* key) const {
    const Value* g = group("textureProperties");
    const Value* x = g ? member(*g, key) : nullptr;
    if (!x || is_null(*x)) return -1;
    const std::string at = place + "/textureProperties/" + key;
    const int index = integer(c, *x, at);
    if (index < 0 || index >= c.texture_count())
      c.fail(at, "texture " + std::to_string(index) + " does not exist");
    return index;
  }
  /// keywordMap[key] is present (three-vrm's `!= undefined`).
  bool has_keyword(const char* key) const {
    const Value* g = group("keywordMap");
    const Value* x = g ? member(*g, key) : nullptr;
    return x && !is_null(*x);
  }
  /// keywordMap[key] is true.
  bool keyword(const char* key) const {
    const Value* g = group("keywordMap");
    const Value* x = g ? member(*g, key) : nullptr;
    if (!x) return false;
    if (x->IsBool()) return x->Get<bool>();
    return x->IsNumber() && x->GetNumberAsDouble() != 0;
  }
  std::string shader() const { return str(member(v, "shader")); }
  std::optional<double> render_queue() const {
    const Value* x = member(v, "renderQueue");
    if (!x || is_null(*x)) return std::nullopt;
    return number(c, *x, place + "/renderQueue");
  }
  /// Transparent for render-queue purposes, and writing depth (three-vrm's classification).
  bool queue_transparent() const {
    const std::string s = shader();
    return has_keyword("_ALPHABLEND_ON") || s == "VRM/UnlitTransparent" ||
           s == "VRM/UnlitTransparentZWrite";
  }
  bool queue_z_write() const {
    return flt("_ZWrite") == 1.0 || shader() == "VRM/UnlitTransparentZWrite";
  }
  /// The texture transform three-vrm derives from _MainTex's tiling/offset (Unity's _ST, whose
  /// v origin is at the bottom): offset_v = 1 − scale_v − offset_v.
  TextureTransform main_transform() const {
    TextureTransform t;
    const auto st = vec("_MainTex");
    if (!st) return t;
    auto at = [&](size_t k, double fallback) { return k < st->size() ? (*st)[k] : fallback; };
    t.scale = {static_cast<float>(at(2, 1.0)), static_cast<float>(at(3, 1.0))};
    t.offset = {static_cast<float>(at(0, 0.0)), static_cast<float>(1.0 - at(3, 1.0) - at(1, 0.0))};
    return t;
  }
  TextureRef ref(const char* key, bool transformed = true) const {
    TextureRef r;
    r.texture = texture(key);
    if (r.texture >= 0 && transformed) r.transform = main_transform();
    return r;
  }
};

/// The JavaScript string of a render queue number (three-vrm sorts them with Array.sort(),
/// which compares their decimal strings).
std::string js_string(double x) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

/// v0 render queue → v1 renderQueueOffsetNumber, for the transparent and the transparent
/// z-writing materials: the distinct queues in (string) order, the last at 0 going down to −9,
/// or the first at 0 going up to +9.
struct QueueOffsets {
  std::map<double, int> transparent, z_write;

  QueueOffsets(const Context& c, const std::vector<V0Entry>& entries) {
    std::set<double> t, z;
    for (const V0Entry& e : entries)
      if (const auto q = e.render_queue(); q && e.queue_transparent())
        (e.queue_z_write() ? z : t).insert(*q);
    auto order = [](const std::set<double>& s) {
      std::vector<double> v(s.begin(), s.end());
      std::stable_sort(v.begin(), v.end(),
                       [](double a, double b) { return js_string(a) < js_string(b); });
      return v;
    };
    const std::vector<double> tv = order(t), zv = order(z);
    const int tn = static_cast<int>(tv.size());
    for (int i = 0; i < tn; ++i)
      transparent[tv[static_cast<size_t>(i)]] = std::clamp(i - tn + 1, -9, 0);
    for (size_t i = 0; i < zv.size(); ++i) z_write[zv[i]] = std::min(static_cast<int>(i), 9);
    if (tv.size() > 10 || zv.size() > 10)
      c.warnings.push_back(
          "/extensions/VRM/materialProperties: more than 10 render queues among "
          "transparent materials; VRM 1.0 orders at most 10");
  }
  int offset(const V0Entry& e) const {
    const auto q = e.render_queue();
    if (!q || !e.queue_transparent()) return 0;
    const auto& map = e.queue_z_write() ? z_write : transparent;
    auto it = map.find(*q);
    return it == map.end() ? 0 : it->second;
  }
};

/// A "VRM/MToon" entry as three-vrm converts it.
void vrm_mtoon0(const V0Entry& e, int queue_offset, Material& mat) {
  const bool transparent = e.keyword("_ALPHABLEND_ON");
  const bool cutoff = e.keyword("_ALPHATEST_ON");
  mat.alpha_mode = transparent ? AlphaMode::Blend : cutoff ? AlphaMode::Mask : AlphaMode::Opaque;
  mat.alpha_cutoff = cutoff ? static_cast<float>(e.flt("_Cutoff", 0.5)) : 0.5f;
  mat.double_sided = e.flt("_CullMode", 2) == 0;  // Unity's cull mode: 0 off, 1 front, 2 back
  mat.base_color = e.colour("_Color", {1, 1, 1, 1});
  mat.base_color_texture = e.ref("_MainTex");
  mat.metallic = mat.roughness = 1;
  mat.metallic_roughness_texture = {};
  mat.normal_texture = e.ref("_BumpMap");
  mat.normal_scale = mat.normal_texture.present() ? static_cast<float>(e.flt("_BumpScale", 1)) : 1;
  const auto emission = e.colour("_EmissionColor", {0, 0, 0, 1});
  mat.emissive = {emission[0], emission[1], emission[2]};
  mat.emissive_texture = e.ref("_EmissionMap");
  mat.unlit = false;

  MToon t;
  t.transparent_with_z_write = transparent && e.flt("_ZWrite") == 1.0;
  t.render_queue_offset = queue_offset;
  const auto shade = e.colour("_ShadeColor", {0.97, 0.81, 0.86, 1});
  t.shade_color = {shade[0], shade[1], shade[2]};
  t.shade_multiply_texture = e.ref("_ShadeTexture");
  // 0.x: lit = linearstep(shift0, lerp(1, shift0, toony0), N·L); 1.0: linearstep(−1 + toony −
  // shift, 1 − toony − shift, N·L). Equal when toony = lerp(toony0, 1, (1 + shift0) / 2) and shift
  // = −shift0 − (1 − toony).
  const double shift0 = e.flt("_ShadeShift", 0.0), toony0 = e.flt("_ShadeToony", 0.9);
  const double toony = toony0 + (1.0 - toony0) * (0.5 + 0.5 * shift0);
  t.shading_toony = static_cast<float>(toony);
  t.shading_shift = static_cast<float>(-shift0 - (1.0 - toony));
  // giEqualization = 1 − _IndirectLightIntensity (absent: 0.1); an intensity of 0 leaves the
  // 1.0 default of 0.9, as in three-vrm.
  const double gi = e.flt("_IndirectLightIntensity", 0.1);
  if (gi != 0) t.gi_equalization = static_cast<float>(1.0 - gi);
  t.matcap_texture = e.ref("_SphereAdd", false);
  t.matcap_color = {1, 1, 1};
  t.rim_lighting_mix = static_cast<float>(e.flt("_RimLightingMix", 0.0));
  t.rim_multiply_texture = e.ref("_RimTexture");
  const auto rim = e.colour("_RimColor", {0, 0, 0, 1});
  t.parametric_rim_color = {rim[0], rim[1], rim[2]};
  t.parametric_rim_fresnel_power = static_cast<float>(e.flt("_RimFresnelPower", 1.0));
  t.parametric_rim_lift = static_cast<float>(e.flt("_RimLift", 0.0));
  const double mode = e.flt("_OutlineWidthMode", 0);
  t.outline_width_mode = mode == 1   ? OutlineWidthMode::WorldCoordinates
                         : mode == 2 ? OutlineWidthMode::ScreenCoordinates
                                     : OutlineWidthMode::None;
  // 0.x's width is in centimetres in world mode and 1/100 of a clip-space offset in screen mode:
  // three-vrm scales both by 0.01.
  t.outline_width = static_cast<float>(0.01 * e.flt("_OutlineWidth", 0.0));
  t.outline_width_texture = e.ref("_OutlineWidthTexture");
  const auto outline = e.colour("_OutlineColor", {0, 0, 0, 1});
  t.outline_color = {outline[0], outline[1], outline[2]};
  t.outline_lighting_mix = e.flt("_OutlineColorMode", 0) == 1  // 0 fixed, 1 mixed
                               ? static_cast<float>(e.flt("_OutlineLightingMix", 1.0))
                               : 0.f;
  t.uv_animation_mask_texture = e.ref("_UvAnimMaskTexture");
  t.uv_scroll_x = static_cast<float>(e.flt("_UvAnimScrollX", 0.0));
  t.uv_scroll_y = static_cast<float>(-e.flt("_UvAnimScrollY", 0.0));  // 0.x's v points up
  t.uv_rotation = static_cast<float>(e.flt("_UvAnimRotation", 0.0));
  mat.mtoon = t;
}

/// A "VRM/Unlit*" entry as three-vrm converts it: MToon whose shade is the base colour.
void vrm_unlit0(const V0Entry& e, int queue_offset, Material& mat) {
  const std::string shader = e.shader();
  const bool z_write = shader == "VRM/UnlitTransparentZWrite";
  const bool transparent = shader == "VRM/UnlitTransparent" || z_write;
  const bool cutoff = shader == "VRM/UnlitCutout";
  mat.alpha_mode = transparent ? AlphaMode::Blend : cutoff ? AlphaMode::Mask : AlphaMode::Opaque;
  mat.alpha_cutoff = cutoff ? static_cast<float>(e.flt("_Cutoff", 0.5)) : 0.5f;
  mat.base_color = e.colour("_Color", {1, 1, 1, 1}, true);
  mat.base_color_texture = e.ref("_MainTex");
  mat.metallic = mat.roughness = 1;
  mat.metallic_roughness_texture = {};
  mat.unlit = false;
  MToon t;
  t.transparent_with_z_write = z_write;
  t.render_queue_offset = queue_offset;
  t.shade_color = {mat.base_color[0], mat.base_color[1], mat.base_color[2]};
  t.shade_multiply_texture = mat.base_color_texture;
  mat.mtoon = t;
}

void apply_vrm0(const Context& c, std::vector<Material>& materials) {
  auto it = c.m.extensions.find("VRM");
  if (it == c.m.extensions.end()) return;
  const Value* props = member(it->second, "materialProperties");
  if (!props || is_null(*props)) return;
  const std::string place = "/extensions/VRM/materialProperties";
  if (!props->IsArray()) c.fail(place, "expected an array");
  std::vector<V0Entry> entries;
  for (size_t k = 0; k < props->ArrayLen(); ++k) {
    const Value& v = props->Get(static_cast<int>(k));
    const std::string at = place + "/" + std::to_string(k);
    if (!v.IsObject()) c.fail(at, "expected an object");
    entries.push_back(V0Entry{c, v, at});
  }
  const QueueOffsets queues(c, entries);
  for (size_t k = 0; k < entries.size(); ++k) {
    const V0Entry& e = entries[k];
    const std::string shader = e.shader();
    if (k >= materials.size()) {
      c.warnings.push_back(e.place + ": no material " + std::to_string(k) + " to describe");
      continue;
    }
    Material& mat = materials[k];
    const std::string name = str(member(e.v, "name"));
    if (!name.empty() && name != mat.name)
      c.warnings.push_back(e.place + ": describes material " + std::to_string(k) + " ('" +
                           mat.name + "') but is named '" + name + "'");
    if (shader == "VRM/MToon")
      vrm_mtoon0(e, queues.offset(e), mat);
    else if (shader.rfind("VRM/Unlit", 0) == 0)
      vrm_unlit0(e, queues.offset(e), mat);
    else if (shader != "VRM_USE_GLTFSHADER")
      c.warnings.push_back(e.place + ": unknown shader '" + shader + "'; glTF material used");
  }
}

}  // namespace

void read_materials(const tinygltf::Model& model, Asset& asset, const std::string& file) {
  const Context c{model, file, asset.source.warnings};
  asset.textures = read_textures(c);
  asset.materials.clear();
  for (int i = 0; i < static_cast<int>(model.materials.size()); ++i)
    asset.materials.push_back(read_material(c, i));
  apply_vrm0(c, asset.materials);
}

}  // namespace kinema::gltf_detail
