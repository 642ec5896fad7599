// src/render/clip_render.cpp — cameras (view/projection, framing over a clip), ClipRenderer,
// contact sheets and PNG output.
#include "kinema/render/clip_render.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/clip/clip.h"
#include "kinema/composite/image_file.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/skeleton/skeleton.h"

// stb_image_write with internal linkage: tinygltf already compiles a public copy into kinema.
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include <stb/stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace kinema {

namespace {

constexpr float kDeg = std::numbers::pi_v<float> / 180.0f;

void expand(Bounds3f& b, bool& any, const Vec3f& p) {
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) return;
  if (!any) {
    b.min = b.max = p;
    any = true;
    return;
  }
  for (int c = 0; c < 3; ++c) {
    b.min[c] = std::min(b.min[c], p[c]);
    b.max[c] = std::max(b.max[c], p[c]);
  }
}

void expand(Bounds3f& b, bool& any, const Bounds3f& o) {
  expand(b, any, o.min);
  expand(b, any, o.max);
}

// Unit direction from the target towards the eye: yaw about +Y from +Z, pitch up.
Vec3f view_direction(float yaw_deg, float pitch_deg) {
  const float yaw = yaw_deg * kDeg, pitch = pitch_deg * kDeg;
  return {std::sin(yaw) * std::cos(pitch), std::sin(pitch), std::cos(yaw) * std::cos(pitch)};
}

// Why `c` defines no view (empty when it does): a fixed camera's checks.
std::string fixed_camera_problem(const Camera& c) {
  for (const Vec3f& v : {c.eye, c.target, c.up})
    if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z))
      return "its eye, target and up must be finite numbers";
  if (!(c.fov_y_degrees > 0 && c.fov_y_degrees < 180))
    return "its vertical field of view must lie strictly between 0 and 180 degrees";
  const Vec3f f = c.target - c.eye;
  if (!(length(f) > 1e-6f)) return "its eye and target are the same point";
  if (!(length(c.up) > 0) || length(cross(normalize(f), normalize(c.up))) < 1e-4f)
    return "its up direction is zero or lies along the view direction";
  return {};
}

// Smallest distance from `center` along `dir` at which all corners of `b` project inside 92%
// of the image.
float fit_distance(const Bounds3f& b, const Vec3f& center, const Vec3f& dir, float fov_y_deg,
                   float aspect) {
  const Vec3f right = normalize(cross(Vec3f{0, 1, 0}, dir), Vec3f{1, 0, 0});
  const Vec3f up = cross(dir, right);
  const float ty = std::tan(0.5f * fov_y_deg * kDeg) * 0.92f, tx = ty * aspect;
  float d = 0;
  float radius = 0;
  for (int i = 0; i < 8; ++i) {
    const Vec3f k{(i & 1) ? b.max.x : b.min.x, (i & 2) ? b.max.y : b.min.y,
                  (i & 4) ? b.max.z : b.min.z};
    const Vec3f r = k - center;
    const float x = dot(r, right), y = dot(r, up), z = dot(r, dir);
    d = std::max({d, z + std::abs(x) / tx, z + std::abs(y) / ty});
    radius = std::max(radius, length(r));
  }
  return std::max(d, 1.05f * radius + 0.05f);
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A left/right joint pair: humanoid upper legs or arms, else names with "left" / "right".
bool left_right_pair(const Asset& asset, int& left, int& right) {
  if (asset.humanoid)
    for (const char* side : {"UpperLeg", "UpperArm", "Shoulder"}) {
      left = asset.humanoid->find(std::string("left") + side);
      right = asset.humanoid->find(std::string("right") + side);
      if (left >= 0 && right >= 0) return true;
    }
  const Skeleton& s = asset.skeleton;
  for (int j = 0; j < s.joint_count(); ++j) {
    const std::string name = lower(s.joint(j).name);
    const size_t at = name.find("left");
    if (at == std::string::npos) continue;
    const std::string other = name.substr(0, at) + "right" + name.substr(at + 4);
    for (int k = 0; k < s.joint_count(); ++k)
      if (lower(s.joint(k).name) == other) {
        left = j;
        right = k;
        return true;
      }
  }
  return false;
}

}  // namespace

// ---- cameras ---------------------------------------------------------------------------------

Mat4f camera_view(const Camera& camera) {
  const Vec3f f = normalize(camera.target - camera.eye, Vec3f{0, 0, -1});
  const Vec3f s = normalize(cross(f, camera.up), Vec3f{1, 0, 0});
  const Vec3f u = cross(s, f);
  Mat4f view;
  const Vec3f rows[3] = {s, u, -f};
  for (int r = 0; r < 3; ++r) {
    view(r, 0) = rows[r].x;
    view(r, 1) = rows[r].y;
    view(r, 2) = rows[r].z;
    view(r, 3) = -dot(rows[r], camera.eye);
  }
  return view;
}

Mat4f camera_view_projection(const Camera& camera, float aspect) {
  const Mat4f view = camera_view(camera);
  const float g = 1.0f / std::tan(0.5f * camera.fov_y_degrees * kDeg);
  const float n = camera.near_plane, fa = camera.far_plane;
  Mat4f proj;
  proj.m.fill(0);
  proj(0, 0) = g / aspect;
  proj(1, 1) = g;
  proj(2, 2) = (fa + n) / (n - fa);
  proj(2, 3) = 2 * fa * n / (n - fa);
  proj(3, 2) = -1;
  return proj * view;
}

bool project_to_pixel(const Camera& camera, int width, int height, const Vec3f& p, float& x,
                      float& y) {
  const Mat4f m = camera_view_projection(camera, float(width) / float(height));
  float clip[4];
  for (int r = 0; r < 4; ++r) clip[r] = m(r, 0) * p.x + m(r, 1) * p.y + m(r, 2) * p.z + m(r, 3);
  if (!(clip[3] > 1e-6f)) return false;
  x = (clip[0] / clip[3] * 0.5f + 0.5f) * float(width);
  y = (0.5f - clip[1] / clip[3] * 0.5f) * float(height);
  return true;
}

// ---- ClipRenderer ----------------------------------------------------------------------------

ClipRenderer::ClipRenderer(const Asset& asset, int clip, const ClipRenderOptions& options,
                           const std::string& file)
    : asset_(asset), clip_(clip), options_(options), renderer_(options.target) {
  if (clip < -1 || clip >= int(asset.clips.size()))
    throw Error(file, "clip " + std::to_string(clip),
                "the file has " + std::to_string(asset.clips.size()) + " clips");
  if (asset.skeleton.empty()) throw Error(file, "", "there is no skeleton to draw");
  if (clip >= 0) asset.clips[size_t(clip)].validate(asset.skeleton.joint_count(), file);
  if (options.camera == CameraMode::Fixed)
    if (const std::string problem = fixed_camera_problem(options.fixed_camera); !problem.empty())
      throw UsageError("fixed camera: " + problem);
  CapsuleDetail capsules;
  if (!options.skeleton)  // every bone is "too short" for a capsule: none is built
    capsules.min_bone_fraction = std::numeric_limits<float>::infinity();
  renderer_.set_asset(asset, file, capsules);
  int left = -1, right = -1;
  if (left_right_pair(asset, left, right)) facing_joints_ = {left, right};
  t1_ = duration();
  frame_bounds();
}

double ClipRenderer::duration() const {
  return clip_ < 0 ? 0.0 : std::max(0.0, asset_.clips[size_t(clip_)].duration);
}

double ClipRenderer::frame_rate() const {
  if (clip_ < 0) return 30;
  const double rate = asset_.clips[size_t(clip_)].sample_rate;
  return rate > 0 && std::isfinite(rate) ? rate : 30;
}

void ClipRenderer::set_extra_bounds(std::function<std::optional<Bounds3f>(double t)> bounds) {
  extra_bounds_ = std::move(bounds);
  frame_bounds();
}

void ClipRenderer::set_unframed_meshes(std::span<const int> meshes) {
  unframed_mesh_.assign(asset_.meshes.size(), 0);
  unframed_joint_.assign(size_t(asset_.skeleton.joint_count()), 0);
  for (const int m : meshes) {
    if (m < 0 || size_t(m) >= asset_.meshes.size()) continue;
    unframed_mesh_[size_t(m)] = 1;
    const int node = asset_.meshes[size_t(m)].node;
    if (node >= 0 && node < asset_.skeleton.joint_count()) unframed_joint_[size_t(node)] = 1;
  }
  frame_bounds();
}

void ClipRenderer::set_time_range(double t0, double t1) {
  t0_ = std::min(t0, t1);
  t1_ = std::max(t0, t1);
  frame_bounds();
}

std::vector<Mat4> ClipRenderer::pose_at(double t) const {
  if (clip_ < 0) return rest_model_matrices(asset_.skeleton);
  return sample_model_pose(asset_.clips[size_t(clip_)], asset_.skeleton, t, WrapMode::Clamp);
}

void ClipRenderer::apply_morphs(double t) const {
  auto& r = const_cast<Renderer&>(renderer_);
  auto& morphed = const_cast<std::vector<char>&>(morphed_);
  morphed.resize(r.mesh_count(), 0);
  std::vector<double> weights;
  std::vector<Vec3f> positions, normals;
  for (size_t m = 0; m < r.mesh_count(); ++m) {
    const int source = r.source_mesh(m);
    if (source < 0) continue;
    const Mesh& mesh = asset_.meshes[size_t(source)];
    const size_t targets = mesh.morph_targets.size();
    if (targets == 0 || r.vertex_count(m) != mesh.positions.size()) continue;
    weights.assign(mesh.default_weights.begin(), mesh.default_weights.end());
    weights.resize(targets, 0.0);
    if (clip_ >= 0)
      for (const MorphTrack& track : asset_.clips[size_t(clip_)].morph_tracks)
        if (track.mesh == source && size_t(track.target_count) == targets)
          sample(track, wrap_time(t, asset_.clips[size_t(clip_)].duration, WrapMode::Clamp),
                 weights);
    bool any = false;
    for (double w : weights) any = any || w != 0;
    if (!any && !morphed[m]) continue;  // drawn from the upload as it is
    const std::span<const Vec3f> base = r.bind_positions(m), base_normals = r.bind_normals(m);
    positions.assign(base.begin(), base.end());
    normals.assign(base_normals.begin(), base_normals.end());
    for (size_t k = 0; k < targets; ++k) {
      const float w = float(weights[k]);
      if (w == 0) continue;
      const MorphTarget& target = mesh.morph_targets[k];
      for (size_t v = 0; v < positions.size(); ++v) positions[v] += target.position_deltas[v] * w;
      if (target.normal_deltas.size() == normals.size())
        for (size_t v = 0; v < normals.size(); ++v) normals[v] += target.normal_deltas[v] * w;
    }
    for (Vec3f& n : normals)
      if (length(n) > 0) n = normalize(n);
    r.set_vertices(m, positions, normals);
    morphed[m] = any;
  }
}

Bounds3f ClipRenderer::bounds_at(double t) const {
  const std::vector<Mat4> pose = pose_at(t);
  apply_morphs(t);
  Bounds3f b;
  bool any = false;
  std::vector<Vec3f> skinned;
  auto& r = const_cast<Renderer&>(renderer_);
  for (size_t m = 0; m < r.mesh_count(); ++m) {
    if (m < unframed_mesh_.size() && unframed_mesh_[m]) continue;
    skinned.resize(r.vertex_count(m));
    if (r.gpu_skin(m, pose, options_.skinning, skinned, {}))
      for (const Vec3f& p : skinned) expand(b, any, p);
  }
  const bool meshes = any;
  if (extra_bounds_)
    if (const std::optional<Bounds3f> extra = extra_bounds_(t)) expand(b, any, *extra);
  if (!meshes && !extra_bounds_)
    for (size_t j = 0; j < pose.size(); ++j)
      if (j >= unframed_joint_.size() || !unframed_joint_[j])
        expand(b, any, Vec3f(pose[j].translation_part()));
  if (!any) b = {{-0.5f, 0, -0.5f}, {0.5f, 1.8f, 0.5f}};
  return b;
}

Vec3f ClipRenderer::ground_at(double t) const {
  // Mean joint position (x, z) over ±0.5 s: steady, yet it keeps up with root motion.
  double x = 0, z = 0;
  int count = 0;
  for (int i = -2; i <= 2; ++i) {
    const double ti = std::clamp(t + 0.25 * i, t0_, t1_);
    const std::vector<Mat4> pose = pose_at(ti);
    for (size_t j = 0; j < pose.size(); ++j) {
      if (j < unframed_joint_.size() && unframed_joint_[j]) continue;
      const Vec3 p = pose[j].translation_part();
      if (!std::isfinite(p.x) || !std::isfinite(p.z)) continue;
      x += p.x;
      z += p.z;
      ++count;
    }
  }
  return count ? Vec3f{float(x / count), 0, float(z / count)} : Vec3f{0, 0, 0};
}

void ClipRenderer::frame_bounds() {
  // Which way the character faces at the start: forward = (left − right) × up, on the ground.
  facing_yaw_ = 0;
  if (facing_joints_[0] >= 0) {
    const std::vector<Mat4> pose = pose_at(t0_);
    const Vec3 a = pose[size_t(facing_joints_[0])].translation_part() -
                   pose[size_t(facing_joints_[1])].translation_part();
    if (std::hypot(a.x, a.z) > 1e-6) facing_yaw_ = float(std::atan2(-a.z, a.x)) / kDeg;
  }
  const double span = t1_ - t0_;
  const int samples = span > 0 ? std::clamp(int(span * frame_rate()) + 1, 2, 32) : 1;
  bool any = false, any_relative = false;
  for (int i = 0; i < samples; ++i) {
    const double t = samples == 1 ? t0_ : t0_ + span * i / (samples - 1);
    const Bounds3f b = bounds_at(t);
    expand(bounds_, any, b);
    const Vec3f g = ground_at(t);
    expand(relative_, any_relative, Bounds3f{b.min - g, b.max - g});
  }
}

Camera ClipRenderer::camera_at(double t) const {
  const float aspect = float(renderer_.width()) / float(renderer_.height());
  if (options_.camera == CameraMode::Fixed) {
    // As given; near and far around the bounds over the range as seen from the eye.
    Camera cam = options_.fixed_camera;
    const Vec3f c = bounds_.center();
    const float radius = 0.5f * length(bounds_.max - bounds_.min);
    const Vec3f forward = normalize(cam.target - cam.eye, Vec3f{0, 0, -1});
    const float depth = dot(c - cam.eye, forward);  // of the centre, along the view axis
    const float reach = std::max(radius, 0.5f);
    cam.near_plane = std::max({0.01f, 0.5f * (depth - radius), 1e-4f * (depth + reach)});
    cam.far_plane = std::max(depth, 0.0f) + radius + 60.0f * reach;
    return cam;
  }
  Camera cam;
  Bounds3f frame = bounds_;
  Vec3f dir;
  float distance = 0;
  switch (options_.camera) {
    case CameraMode::Fixed:  // returned above
    case CameraMode::Front:
      dir = view_direction(facing_yaw_, 8);
      distance = fit_distance(frame, frame.center(), dir, cam.fov_y_degrees, aspect);
      break;
    case CameraMode::Above:
      dir = view_direction(facing_yaw_, 60);
      distance = fit_distance(frame, frame.center(), dir, cam.fov_y_degrees, aspect);
      break;
    case CameraMode::Orbit: {
      const double span = t1_ - t0_;
      const float turn = span > 0 ? float((std::clamp(t, t0_, t1_) - t0_) / span) : 0.0f;
      dir = view_direction(facing_yaw_ + 30 + 360 * turn, 15);
      for (int k = 0; k < 24; ++k)  // the same distance all the way round
        distance =
            std::max(distance, fit_distance(frame, frame.center(), view_direction(15.0f * k, 15),
                                            cam.fov_y_degrees, aspect));
      break;
    }
    case CameraMode::Follow: {
      const Vec3f g = ground_at(t);
      frame = {relative_.min + g, relative_.max + g};
      dir = view_direction(facing_yaw_ + 30, 12);
      distance = fit_distance(frame, frame.center(), dir, cam.fov_y_degrees, aspect);
      break;
    }
  }
  cam.target = frame.center();
  cam.eye = cam.target + dir * distance;
  const float radius = 0.5f * length(frame.max - frame.min);
  cam.near_plane = std::max(0.01f, 0.5f * (distance - radius));
  cam.far_plane = distance + radius + 60.0f * std::max(radius, 0.5f);
  return cam;
}

DrawOptions ClipRenderer::draw_options() const {
  DrawOptions draw;
  draw.billboard_blend = options_.billboard_blend;
  draw.skinning = options_.skinning;
  draw.ground = options_.ground;
  draw.transparent_background = options_.transparent_background;
  draw.materials = options_.materials;
  draw.outlines = options_.outlines;
  draw.shadows = options_.shadows;
  draw.shadow_catcher = options_.shadow_catcher;
  draw.light_direction = options_.light_direction;
  draw.light_irradiance = options_.light_irradiance;
  const Vec3f c = bounds_.center();
  const float height = std::max(bounds_.max.y - bounds_.min.y, 0.05f);
  const float extent = std::max(bounds_.max.x - bounds_.min.x, bounds_.max.z - bounds_.min.z);
  draw.ground_center_x = c.x;
  draw.ground_center_z = c.z;
  draw.ground_half_size = 0.5f * extent + 3.0f * height;
  // Grid spacing: 1, 2.5 or 5 × a power of ten, nearest to a quarter of the character's size
  // (0.5 m for a 1.7 m human).
  const float target = 0.25f * std::max(height, extent);
  const float decade = std::pow(10.0f, std::floor(std::log10(target)));
  float spacing = decade;
  for (const float step : {2.5f, 5.0f, 10.0f})
    if (std::abs(std::log(step * decade / target)) < std::abs(std::log(spacing / target)))
      spacing = step * decade;
  draw.grid_spacing = spacing;
  return draw;
}

Image ClipRenderer::frame(double t, std::span<const Billboard> billboards, const Strands& strands) {
  DrawOptions draw = draw_options();
  draw.billboards = billboards;
  draw.strands = strands;
  apply_morphs(t);
  return renderer_.render(pose_at(t), camera_at(t), draw);
}

RenderPasses ClipRenderer::passes(double t, double previous_t) {
  apply_morphs(t);
  const Camera previous_camera = camera_at(previous_t);
  return renderer_.render_passes(pose_at(t), camera_at(t), draw_options(), pose_at(previous_t),
                                 &previous_camera);
}

// ---- images ----------------------------------------------------------------------------------

Image contact_sheet(std::span<const Image> tiles, int columns) {
  if (tiles.empty()) throw Error("", "contact sheet", "no frames to tile");
  const int w = tiles[0].width, h = tiles[0].height;
  for (const Image& t : tiles)
    if (t.width != w || t.height != h || t.rgba.size() != size_t(w) * size_t(h) * 4)
      throw Error("", "contact sheet", "the frames differ in size");
  const int n = int(tiles.size());
  if (columns <= 0) columns = int(std::ceil(std::sqrt(double(n))));
  columns = std::min(columns, n);
  const int rows = (n + columns - 1) / columns;
  if (long(w) * columns > 16384 || long(h) * rows > 16384)
    throw Error("", "contact sheet", "the sheet would exceed 16384 pixels a side");
  Image sheet(w * columns, h * rows);
  for (size_t i = 0; i < sheet.rgba.size(); i += 4) {
    sheet.rgba[i] = sheet.rgba[i + 1] = sheet.rgba[i + 2] = 48;
    sheet.rgba[i + 3] = 255;
  }
  for (int i = 0; i < n; ++i) {
    const int x0 = (i % columns) * w, y0 = (i / columns) * h;
    for (int y = 0; y < h; ++y)
      std::copy_n(tiles[size_t(i)].pixel(0, y), size_t(w) * 4, sheet.pixel(x0, y0 + y));
  }
  return sheet;
}

Image straight_alpha(const Image& frame) {
  std::array<float, 256> decoded{};
  for (int i = 0; i < 256; ++i) decoded[size_t(i)] = composite::srgb_to_linear(float(i) / 255.0f);
  Image out = frame;
  for (size_t i = 0; i + 3 < out.rgba.size(); i += 4) {
    uint8_t* p = &out.rgba[i];
    if (p[3] == 255) continue;
    const float alpha = float(p[3]) / 255.0f;
    for (int c = 0; c < 3; ++c) {  // premultiplied linear → straight linear → encoded
      const float straight = p[3] == 0 ? 0.0f : std::min(1.0f, decoded[p[c]] / alpha);
      p[c] = uint8_t(std::lround(composite::linear_to_srgb(straight) * 255.0f));
    }
  }
  return out;
}

std::string encode_png(const Image& image) {
  if (image.width < 1 || image.height < 1 ||
      image.rgba.size() != size_t(image.width) * size_t(image.height) * 4)
    throw Error("", "PNG", "the image is empty or its pixel count is wrong");
  std::string bytes;
  auto sink = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), size_t(size));
  };
  if (!stbi_write_png_to_func(sink, &bytes, image.width, image.height, 4, image.rgba.data(),
                              image.width * 4))
    throw Error("", "PNG", "the encoder failed");
  return bytes;
}

void write_png(const Image& image, const std::string& path) {
  write_file_atomically(path, encode_png(image));
}

std::string render_clip_to_png(const Asset& asset, int clip, double time,
                               const ClipRenderOptions& options, const std::string& path) {
  ClipRenderer r(asset, clip, options, asset.source.path);
  write_png(r.frame(time), path);
  return r.renderer().gl_renderer();
}

std::string render_contact_sheet_to_png(const Asset& asset, int clip, int count,
                                        const ClipRenderOptions& options, const std::string& path) {
  if (count < 1) throw Error(path, "contact sheet", "the frame count must be at least 1");
  ClipRenderer r(asset, clip, options, asset.source.path);
  std::vector<Image> tiles;
  for (int i = 0; i < count; ++i)
    tiles.push_back(r.frame(count == 1 ? 0.0 : r.duration() * i / (count - 1)));
  write_png(contact_sheet(tiles), path);
  return r.renderer().gl_renderer();
}

}  // namespace kinema
