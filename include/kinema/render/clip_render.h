// kinema/render/clip_render.h — rendering an asset's clip: camera framing over the clip, frames,
// contact sheets and PNG files. Built on kinema/render/renderer.h (same conventions: metres,
// +Y up, the character faces +Z; images RGBA8, top row first).
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kinema/render/renderer.h"

namespace kinema {

/// How the camera frames the character.
///  - Front: fixed, straight in front, framing the bounds over the whole time range. "Front" is
///    the side the character faces at the start of the range (from its humanoid's or its
///    left/right-named joints: forward = (left − right) × up), else +Z.
///  - Orbit: circles the centre of the whole range's bounds once over the range, starting 30°
///    to the character's left-front, framing those bounds from every side.
///  - Follow: a fixed 3/4 front view whose target follows the character's ground position
///    (smoothed over ±0.5 s), framing the bounds around the character.
///  - Above: fixed, looking down at 60° from the front, framing the bounds over the whole time
///    range (a crowd or a flock on the ground, seen as a plan with some depth).
///  - Fixed: ClipRenderOptions::fixed_camera as given (eye, target, up, vertical field of view,
///    world metres), whatever the character does; only its near and far planes are fitted to the
///    bounds over the time range, as the other modes' are.
enum class CameraMode { Orbit, Follow, Front, Above, Fixed };

struct ClipRenderOptions {
  RendererOptions target;  ///< size, MSAA, GPU preference
  CameraMode camera = CameraMode::Follow;
  /// With CameraMode::Fixed: the camera (its near_plane and far_plane are not used). The eye must
  /// differ from the target and `up` must not lie along the view direction (else the
  /// ClipRenderer constructor throws), fov_y_degrees in (0, 180).
  Camera fixed_camera;
  SkinningMethod skinning = SkinningMethod::Lbs;
  bool ground = true;
  /// When no mesh is skinned (a BVH, gizmos on joints), the bones are drawn as capsules
  /// (Renderer::set_asset); false leaves them out and draws only the meshes.
  bool skeleton = true;
  bool transparent_background = false;                     ///< DrawOptions::transparent_background
  BillboardBlend billboard_blend = BillboardBlend::Alpha;  ///< for frame(t, billboards)
  /// The look (DrawOptions' fields of the same names): the file's materials or flat colours,
  /// MToon outlines, the key light's shadows, the ground as a shadow catcher, the key light.
  bool materials = true, outlines = true, shadows = true, shadow_catcher = false;
  Vec3f light_direction = DrawOptions{}.light_direction;
  Vec3f light_irradiance = DrawOptions{}.light_irradiance;
};

/// Axis-aligned bounds, metres.
struct Bounds3f {
  Vec3f min{0, 0, 0}, max{0, 0, 0};
  Vec3f center() const { return (min + max) * 0.5f; }
};

/// Renders one clip of an asset (which must outlive it), morph targets blended by the clip's
/// weight tracks (or the meshes' default weights). Framing is computed once for the time
/// range: the character's bounds (skinned meshes on the CPU, or the capsules' joints) sampled
/// at up to 32 times.
class ClipRenderer {
 public:
  /// `clip`: index in asset.clips, or -1 for the rest pose. Throws kinema::Error (bad clip
  /// index, bad meshes naming `file`, no OpenGL), kinema::UsageError for a fixed camera that
  /// does not define a view (options.fixed_camera: eye on the target, up along the view, a field
  /// of view outside (0, 180), non-finite numbers).
  ClipRenderer(const Asset& asset, int clip, const ClipRenderOptions& options,
               const std::string& file = {});

  /// Frames the camera over [t0, t1] (default: the whole clip, [0, duration]).
  void set_time_range(double t0, double t1);
  /// What else the framing covers at time t besides the character (the particles drawn with
  /// it; nullopt: nothing then), at the times the framing samples; reframes at once. When the
  /// asset has no mesh, these bounds replace its joints' (a skeleton that only carries them).
  void set_extra_bounds(std::function<std::optional<Bounds3f>(double t)> bounds);
  /// Meshes (indices in asset.meshes) the framing leaves out, with the joints they hang from:
  /// still props such as the stairs a walk climbs are drawn, and the camera frames the rest.
  /// Reframes at once; out-of-range indices are ignored.
  void set_unframed_meshes(std::span<const int> meshes);
  double duration() const;
  /// The clip's frames per second (its sample rate, else 30).
  double frame_rate() const;

  /// Model-space matrices of every joint at time t (clamped to the clip).
  std::vector<Mat4> pose_at(double t) const;
  /// The camera used for time t.
  Camera camera_at(double t) const;
  /// Bounds of the character over the time range.
  const Bounds3f& bounds() const { return bounds_; }
  /// Bounds of the character at time t (same sampling as the framing).
  Bounds3f bounds_at(double t) const;

  /// The frame at time t, with `strands` (hair, DrawOptions::strands) and `billboards`
  /// (options.billboard_blend) drawn with the meshes.
  Image frame(double t, std::span<const Billboard> billboards = {}, const Strands& strands = {});

  /// The render passes of the frame at time t (Renderer::render_passes), motion measured from
  /// the pose and camera at `previous_t` (usually one frame earlier).
  RenderPasses passes(double t, double previous_t);

  Renderer& renderer() { return renderer_; }

 private:
  const Asset& asset_;
  int clip_;
  ClipRenderOptions options_;
  Renderer renderer_;
  double t0_ = 0, t1_ = 0;
  std::function<std::optional<Bounds3f>(double)> extra_bounds_;
  Bounds3f bounds_, relative_;  // relative_: bounds around the followed ground position
  std::array<int, 2> facing_joints_{-1, -1};  // a left/right pair, to find the front
  float facing_yaw_ = 0;                      // degrees about +Y from +Z
  Vec3f ground_at(double t) const;
  void frame_bounds();
  /// What every frame draws with: the options' look, the ground sized to the character.
  DrawOptions draw_options() const;
  /// Blends the morph targets of every uploaded mesh that has them for time t (the clip's
  /// morph-weight tracks, else the mesh's default weights) and hands them to the renderer.
  void apply_morphs(double t) const;
  std::vector<char> morphed_;  // per uploaded mesh: its vertices differ from the upload
  std::vector<char> unframed_mesh_, unframed_joint_;  // left out of the framing
};

/// Tiles equally sized images left to right, top to bottom, `columns` per row (0: ⌈√n⌉);
/// unused cells are left dark grey. Throws kinema::Error when the sizes differ or there are none.
Image contact_sheet(std::span<const Image> tiles, int columns = 0);

/// A frame drawn with a transparent background (colour premultiplied in linear light, then
/// sRGB-encoded, as the renderer's target stores it) as PNGs and most viewers expect it: straight
/// alpha, each channel decoded, divided by alpha and encoded again; no colour where alpha is 0.
/// Opaque pixels are unchanged.
Image straight_alpha(const Image& frame);

/// PNG bytes of an image (stb_image_write). Throws kinema::Error on an empty image.
std::string encode_png(const Image& image);

/// Writes a PNG atomically (temporary file, then rename). Throws kinema::Error.
void write_png(const Image& image, const std::string& path);

/// One call for "show me this clip": renders frame `time` (seconds) of `clip` (-1: rest pose)
/// and writes a PNG atomically. Returns the GL renderer's name (e.g. llvmpipe).
std::string render_clip_to_png(const Asset& asset, int clip, double time,
                               const ClipRenderOptions& options, const std::string& path);

/// A contact sheet of `count` frames evenly spaced over the clip (the first and last included),
/// written as a PNG atomically; each tile is options.target's size.
std::string render_contact_sheet_to_png(const Asset& asset, int clip, int count,
                                        const ClipRenderOptions& options, const std::string& path);

}  // namespace kinema
