// `kinema render --plate --camera-solve` (render_plate.h, kinema/pipeline/render.h): the character
// drawn through each solved camera as a pinhole, bent through the solved lens and put over the
// live-action frames.
#include "render_plate.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "kinema/clip/clip.h"
#include "kinema/composite/image_file.h"
#include "kinema/composite/image_sequence.h"
#include "kinema/composite/porter_duff.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/matchmove/matchmove_json.h"
#include "kinema/math/quat.h"
#include "kinema/math/scalar.h"
#include "kinema/render/environment.h"
#include "mp4_writer.h"
#include "staged_outputs.h"

namespace kinema::pipeline {

namespace {

enum class PlateOut { Image, Sequence, Mp4 };

/// "2.5", "0.04": a number for messages.
std::string number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", value);
  return buf;
}

std::string size_text(int width, int height) {
  return std::to_string(width) + "×" + std::to_string(height);
}

/// What the output asks for over a plate; refuses what does not go with a plate, before anything
/// is read.
PlateOut check_plate_request(const RenderRequest& r) {
  if (r.camera_solve.empty())
    throw UsageError("--plate " + r.plate +
                     " needs --camera-solve SOLVE.json: the camera `kinema solve` recovered from "
                     "this plate");
  if (r.plate.empty())
    throw UsageError("--camera-solve " + r.camera_solve +
                     " needs --plate: the live-action frames the solve was tracked on "
                     "(plate.####.png, or one image)");
  if (!r.with.empty())
    throw UsageError(
        "--with is not drawn over a plate: only FILE is placed in the camera solve's world "
        "(render the others as their own layers)");
  if (r.contact_sheet > 0)
    throw UsageError(
        "--contact-sheet tiles a clip's frames; over a plate write the shot (-o out_%04d.png, "
        "out.mp4) or one frame (-o out.png --time T)");
  if (extension_of(r.in) == "pc2")
    throw UsageError(r.in +
                     ": a particle cache is not placed over a plate; draw a character (.glb "
                     ".gltf .vrm .fbx .dae .bvh)");
  if (r.plate_start && !composite::is_sequence_pattern(r.plate))
    throw UsageError("--plate-start numbers a sequence's frames, and " + r.plate +
                     " is one image (no #### or %04d)");
  if (r.fps && !(std::isfinite(*r.fps) && *r.fps > 0))
    throw UsageError("--fps must be a positive number of frames a second");
  const Placement& p = r.place;
  if (!std::isfinite(p.position.x) || !std::isfinite(p.position.y) ||
      !std::isfinite(p.position.z) || !std::isfinite(p.yaw_degrees) || !std::isfinite(p.scale) ||
      !(p.scale > 0))
    throw UsageError("--place: the position and yaw must be finite and the scale > 0");
  const std::string ext = extension_of(r.out);
  PlateOut kind = PlateOut::Image;
  if (ext == "mp4")
    kind = PlateOut::Mp4;
  else if (ext == "png" || ext == "exr")
    kind = composite::is_sequence_pattern(r.out) ? PlateOut::Sequence : PlateOut::Image;
  else
    throw UsageError("-o " + r.out +
                     ": over a plate write a .png or .exr (one frame), numbered frames such as "
                     "out_%04d.png or out.####.exr, or an .mp4");
  if (kind == PlateOut::Sequence) composite::parse_sequence_pattern(r.out);  // one placeholder
  if (kind == PlateOut::Image && r.out.find('%') != std::string::npos)
    throw UsageError("-o " + r.out + ": '%' is only for numbered frames (%04d)");
  if (kind == PlateOut::Image && r.first_frame >= 0)
    throw UsageError(
        "a single image holds one frame: use --time T, or out_%04d.png or out.mp4 for "
        "--frames");
  if (kind != PlateOut::Image && r.time)
    throw UsageError("--time renders one frame; use -o out.png, or --frames A:B for a sequence");
  if (r.time && !(std::isfinite(*r.time) && *r.time >= 0))
    throw UsageError("--time must be a finite number of seconds ≥ 0");
  if (r.first_frame >= 0 && r.last_frame < r.first_frame)
    throw UsageError("--frames " + std::to_string(r.first_frame) + ":" +
                     std::to_string(r.last_frame) + ": expected A:B with 0 ≤ A ≤ B, e.g. 0:120");
  return kind;
}

/// The pinhole render the solve's lens bends into the plate's frame: as the plate, grown where
/// the lens takes light from outside the pinhole frame (barrel distortion pulls the plate's edges
/// in from there), and the map that lays it over the plate.
struct PinholeLayer {
  int width = 0, height = 0;
  float fov_y_degrees = 0;
  composite::StMap to_plate;  ///< plate-sized: where each plate pixel samples the render
};

PinholeLayer pinhole_layer(const matchmove::CameraSolve& solve, const std::string& file) {
  const int w = solve.width, h = solve.height;
  composite::StMap lens;  // plate pixel → where its ray lands in the solve's own pinhole frame
  try {
    lens = composite::st_map_distort(solve.lens, solve.intrinsics, w, h);
  } catch (const Error& e) {
    throw Error(file, e.place(), e.reason());
  }
  // The rays as normalized coordinates (x right, y down: the tangents of their angles), and how
  // far from the centre the render must reach, in pixels of the solved focal length.
  const double f = solve.intrinsics.fy;
  std::vector<composite::NormalizedPoint> rays(lens.s.size());
  std::vector<char> has_ray(lens.s.size(), 0);
  double reach_x = 0, reach_y = 0;
  for (size_t i = 0; i < rays.size(); ++i) {
    if (lens.s[i] == -1.0f && lens.t[i] == -1.0f) continue;  // past the lens's fold
    const composite::PixelPoint p{double(lens.s[i]) * w - 0.5, (1.0 - double(lens.t[i])) * h - 0.5};
    rays[i] = composite::to_normalized(p, solve.intrinsics);
    has_ray[i] = 1;
    reach_x = std::max(reach_x, std::abs(rays[i].x) * f);
    reach_y = std::max(reach_y, std::abs(rays[i].y) * f);
  }
  // Pixel centres span ±(size − 1)/2 about the centre: grow by whole pixels on both sides (the
  // plate's pixel grid stays on the render's), at most to twice the plate (or the renderer's
  // 8192); rays beyond get no CG.
  auto grown = [](int size, double reach) {
    const double margin = std::ceil((2 * reach + 1 - size) / 2 - 1e-3);
    const int grow = margin > 0 ? int(std::min(margin, double(size / 2))) : 0;
    return std::max(size, std::min(size + 2 * grow, 8192));
  };
  PinholeLayer layer;
  layer.width = grown(w, reach_x);
  layer.height = grown(h, reach_y);
  layer.fov_y_degrees = float(2 * std::atan(0.5 * layer.height / f) * 180 / kPi);
  Camera camera;
  camera.fov_y_degrees = layer.fov_y_degrees;
  const composite::LensIntrinsics pinhole = intrinsics_of(camera, layer.width, layer.height);
  layer.to_plate.width = w, layer.to_plate.height = h;
  layer.to_plate.s.assign(rays.size(), -1.0f);
  layer.to_plate.t.assign(rays.size(), -1.0f);
  for (size_t i = 0; i < rays.size(); ++i) {
    if (!has_ray[i]) continue;
    const composite::PixelPoint q = composite::to_pixel(rays[i], pinhole);
    layer.to_plate.s[i] = float((q.u + 0.5) / layer.width);
    layer.to_plate.t[i] = float(1 - (q.v + 0.5) / layer.height);
  }
  return layer;
}

/// Solved camera → the renderer's camera, its near and far planes around the placed character
/// (a solve is in its own units: the renderer's metre defaults may not fit).
Camera render_camera(const matchmove::CameraSolve& solve, const matchmove::SolvedCamera& solved,
                     float fov_y_degrees, const Mat4& to_character, const Vec3& centre,
                     double radius) {
  const matchmove::LookAt look = matchmove::to_look_at(solve, solved);
  Camera camera;  // carried into the character's world
  const Vec3 eye = to_character.transform_point(look.eye);
  camera.eye = Vec3f(eye);
  camera.target = Vec3f(to_character.transform_point(look.target));
  camera.up = Vec3f(normalize(to_character.transform_vector(look.up), Vec3{0, 1, 0}));
  camera.fov_y_degrees = fov_y_degrees;
  const double distance = length(centre - eye), reach = 1.5 * radius + 1e-9;
  const double far_plane = (distance + reach) * 1.05;
  camera.far_plane = float(far_plane);
  camera.near_plane = float(std::max(0.25 * (distance - reach), far_plane * 1e-4));
  return camera;
}

/// A composite (opaque over the plate) as the RGBA8 sRGB frame the MP4 writer takes.
Image to_srgb8(const composite::Image& image) {
  Image out(image.width, image.height);
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      const composite::Rgba p = composite::unpremultiply(image.at(x, y));
      std::uint8_t* q = out.pixel(x, y);
      const float rgb[3] = {p.r, p.g, p.b};
      for (int c = 0; c < 3; ++c)
        q[c] = std::uint8_t(std::lround(composite::linear_to_srgb(rgb[c]) * 255.0f));
      q[3] = std::uint8_t(std::lround(std::clamp(p.a, 0.0f, 1.0f) * 255.0f));
    }
  return out;
}

}  // namespace

Mat4 Placement::matrix() const {
  // The shortest turn taking +Y onto `up` (half-way vector; exactly down: about +X).
  const Vec3 u = normalize(up, Vec3{0, 1, 0});
  Quat tilt = Quat::from_axis_angle(Vec3{1, 0, 0}, kPi);
  if (u.y > -1 + 1e-12) {
    const Vec3 half = normalize(Vec3{0, 1, 0} + u, Vec3{0, 1, 0});
    const Vec3 axis = cross(Vec3{0, 1, 0}, half);
    tilt = normalize(Quat{axis.x, axis.y, axis.z, dot(Vec3{0, 1, 0}, half)});
  }
  return Mat4::translation(position) * Mat4::rotation(tilt) *
         Mat4::rotation(Quat::from_axis_angle(Vec3{0, 1, 0}, yaw_degrees * kPi / 180)) *
         Mat4::scaling(Vec3{scale, scale, scale});
}

namespace {

/// "X,Y,Z" (spaces around the numbers allowed) → three finite numbers; false otherwise.
bool parse_three(const std::string& text, Vec3& out) {
  double v[3] = {0, 0, 0};
  size_t begin = 0;
  bool ok = true;
  for (int i = 0; i < 3 && ok; ++i) {
    const size_t comma = text.find(',', begin);
    ok = (i < 2) == (comma != std::string::npos);
    std::string_view part(text);
    part = part.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v[i]);
    ok = ok && !part.empty() && ec == std::errc() && end == part.data() + part.size() &&
         std::isfinite(v[i]);
    begin = comma + 1;
  }
  out = {v[0], v[1], v[2]};
  return ok;
}

}  // namespace

Vec3 parse_direction(const std::string& text, const std::string& option) {
  Vec3 d;
  if (!parse_three(text, d) || !(length(d) > 0))
    throw UsageError(option + " '" + text +
                     "': expected a direction X,Y,Z of finite numbers, not all zero, e.g. 0,1,0");
  return normalize(d);
}

Camera fixed_camera(const std::string& eye, const std::string& target, const std::string& up,
                    std::optional<double> fov_y_degrees) {
  if (eye.empty() || target.empty())
    throw UsageError("a fixed camera needs both --eye X,Y,Z and --target X,Y,Z");
  Camera c;
  c.eye = Vec3f(pipeline::parse_point(eye, "--eye"));
  c.target = Vec3f(pipeline::parse_point(target, "--target"));
  if (!up.empty()) c.up = Vec3f(pipeline::parse_direction(up, "--camera-up"));
  if (fov_y_degrees) {
    if (!(*fov_y_degrees > 0 && *fov_y_degrees < 180))
      throw UsageError("--fov " + (std::ostringstream() << *fov_y_degrees).str() +
                       ": the vertical field of view is in degrees, strictly between 0 and 180");
    c.fov_y_degrees = *fov_y_degrees;
  }
  const Vec3f view = c.target - c.eye;
  if (!(length(view) > 1e-6f))
    throw UsageError("--eye " + eye + " --target " + target +
                     ": the camera must look at a point other than where it stands");
  if (length(cross(normalize(view), c.up)) < 1e-4f)
    throw UsageError(
        "--camera-up: the up direction lies along the view from --eye to --target; "
        "give another (default 0,1,0)");
  return c;
}

Vec3 parse_point(const std::string& text, const std::string& option) {
  Vec3 p;
  if (!parse_three(text, p))
    throw UsageError(option + " '" + text +
                     "': expected a point X,Y,Z of three finite numbers (metres), e.g. 0,1.4,3");
  return p;
}

Placement parse_placement(const std::string& text) {
  std::vector<double> values;
  bool ok = true;
  for (size_t begin = 0; ok;) {
    const size_t comma = text.find(',', begin);
    std::string_view part(text);
    part = part.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    double v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    ok = !part.empty() && ec == std::errc() && end == part.data() + part.size() && std::isfinite(v);
    values.push_back(v);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  ok = ok && values.size() >= 3 && values.size() <= 5 && (values.size() < 5 || values[4] > 0);
  if (!ok)
    throw UsageError("--place '" + text +
                     "': expected X,Y,Z[,YAW_DEG[,SCALE]] — the character's origin in the camera "
                     "solve's world, its turn about +Y in degrees and a scale > 0, e.g. 0,0,0 or "
                     "1.5,0,-2,90,0.5");
  Placement p;
  p.position = {values[0], values[1], values[2]};
  if (values.size() > 3) p.yaw_degrees = values[3];
  if (values.size() > 4) p.scale = values[4];
  return p;
}

composite::LensIntrinsics intrinsics_of(const Camera& camera, int width, int height) {
  composite::LensIntrinsics i;
  i.fy = (height / 2.0) / std::tan(camera.fov_y_degrees * kPi / 360.0);
  i.fx = i.fy;
  i.cx = (width - 1) / 2.0;
  i.cy = (height - 1) / 2.0;
  return i;
}

composite::Image to_linear(const Image& frame) {
  composite::Image out(frame.width, frame.height);
  for (int y = 0; y < frame.height; ++y)
    for (int x = 0; x < frame.width; ++x) {
      const std::uint8_t* p = frame.pixel(x, y);
      if (p[3] == 0) continue;
      // The target stores encode(premultiplied linear): each channel decodes on its own.
      auto channel = [&](int c) { return composite::srgb_to_linear(float(p[c]) / 255.0f); };
      out.at(x, y) = {channel(0), channel(1), channel(2), float(p[3]) / 255.0f};
    }
  return out;
}

RenderResult render_over_plate(const RenderRequest& request, const Progress& progress) {
  const PlateOut kind = check_plate_request(request);
  const std::string ffmpeg = kind == PlateOut::Mp4 ? require_ffmpeg(request.out) : std::string();

  // ---- the plate's frames on disk (names only) ----
  const bool sequence = composite::is_sequence_pattern(request.plate);
  std::optional<composite::SequencePattern> plate_pattern;
  std::vector<int> on_disk;
  if (sequence) {
    plate_pattern = composite::parse_sequence_pattern(request.plate);
    on_disk = composite::find_sequence_frames(*plate_pattern);
    if (on_disk.empty()) throw Error(request.plate, "", "no frames of this sequence exist");
  }
  const int start = request.plate_start.value_or(sequence ? on_disk.front() : 0);
  // Camera i sees plate frame start + i; outputs are numbered as the plate's frames (a single
  // image: by camera).
  auto plate_path = [&](int i) {
    return sequence ? composite::sequence_frame_path(*plate_pattern, start + i) : request.plate;
  };

  // ---- the solve and the character ----
  const matchmove::CameraSolve solve =
      matchmove::camera_solve_from_json(read_file(request.camera_solve), request.camera_solve);
  const int cameras = int(solve.cameras.size());
  if (cameras == 0)
    throw Error(request.camera_solve, "/cameras", "holds no camera to draw through");
  const Asset asset = load_asset(request.in, request.load);
  const int clip = !request.clip.empty() ? find_clip(asset, request.clip, request.in)
                   : asset.clips.empty() ? -1
                                         : 0;
  double fps = request.fps.value_or(clip >= 0 ? infer_frame_rate(asset.clips[size_t(clip)]) : 0);
  if (!(fps > 0)) fps = 30;

  // ---- the frames: cameras first..last ----
  int first = 0, last = cameras - 1;
  const std::string solve_range =
      "the camera solve " + request.camera_solve + " has cameras 0:" + std::to_string(cameras - 1);
  if (request.first_frame >= 0) {
    if (request.last_frame >= cameras)
      throw UsageError("--frames " + std::to_string(request.first_frame) + ":" +
                       std::to_string(request.last_frame) + ": " + solve_range);
    first = request.first_frame, last = request.last_frame;
  } else if (kind == PlateOut::Image) {
    const double t = request.time.value_or(0.0);
    first = last = int(std::llround(std::min(t * fps, 1e9)));
    if (first >= cameras)
      throw UsageError("--time " + number(t) + " is frame " + std::to_string(first) + " at " +
                       number(fps) + " fps; " + solve_range);
  }

  // ---- outputs: never an input (FILE, the solve, any plate frame on disk) ----
  // Plate frames are compared by their resolved paths, in a set: a shot's thousand frames
  // against a thousand outputs stay quick.
  auto resolved = [](const std::string& path) {
    std::error_code ec;
    return std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec)
        .lexically_normal();
  };
  std::set<std::filesystem::path> plate_files;
  if (sequence)
    for (int f : on_disk)
      plate_files.insert(resolved(composite::sequence_frame_path(*plate_pattern, f)));
  else
    plate_files.insert(resolved(request.plate));
  const std::vector<NamedInput> inputs{{"FILE", request.in},
                                       {"the camera solve", request.camera_solve}};
  std::optional<composite::SequencePattern> out_pattern;
  if (kind == PlateOut::Sequence) out_pattern = composite::parse_sequence_pattern(request.out);
  auto out_path = [&](int i) {
    return out_pattern ? composite::sequence_frame_path(*out_pattern, sequence ? start + i : i)
                       : request.out;
  };
  static constexpr std::array<std::string_view, 2> kImages{"png", "exr"};
  static constexpr std::array<std::string_view, 1> kMp4{"mp4"};
  const std::span<const std::string_view> extensions =
      kind == PlateOut::Mp4 ? std::span<const std::string_view>(kMp4) : kImages;
  for (int i = first; i <= (out_pattern ? last : first); ++i) {
    const std::string out = out_path(i);
    check_output_file(out, inputs, extensions, "render over a plate writes .png, .exr or .mp4");
    if (plate_files.count(resolved(out)) > 0)
      throw UsageError("OUT is the same file as a plate frame (" + out +
                       "); kinema never overwrites its input — choose another OUT");
  }

  // ---- the plate frames exist, at the solve's size ----
  for (int i = first; i <= last; ++i) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(plate_path(i), ec))
      throw Error(plate_path(i), "",
                  sequence
                      ? "missing: camera " + std::to_string(i) + " of " + request.camera_solve +
                            " is drawn over plate frame " + std::to_string(start + i) +
                            " (the sequence has frames " + std::to_string(on_disk.front()) +
                            " to " + std::to_string(on_disk.back()) +
                            " on disk; --plate-start sets the frame of camera 0)"
                      : "does not exist");
  }
  auto check_size = [&](const std::string& path, int width, int height) {
    if (width != solve.width || height != solve.height)
      throw Error(path, "",
                  "is " + size_text(width, height) + " but the camera solve " +
                      request.camera_solve + " is " + size_text(solve.width, solve.height) +
                      ": the solve must come from this plate at this size");
  };
  {
    const composite::ImageInfo info = composite::read_image_info(plate_path(first));
    check_size(plate_path(first), info.width, info.height);
  }
  if (kind == PlateOut::Mp4 && (solve.width % 2 != 0 || solve.height % 2 != 0))
    throw Error(request.camera_solve, "",
                size_text(solve.width, solve.height) +
                    ": MP4 (yuv420p) needs an even width and height; write PNG or EXR frames");

  // ---- the renderer: a pinhole with the lens's overscan, the character placed ----
  const PinholeLayer layer = pinhole_layer(solve, request.camera_solve);
  ClipRenderOptions options = request.options;
  options.target.width = layer.width;
  options.target.height = layer.height;
  options.ground = false;
  options.transparent_background = true;
  ClipRenderer renderer(asset, clip, options, request.in);
  if (!request.environment.empty())
    renderer.renderer().set_environment(load_environment(request.environment));
  const Mat4 place = request.place.matrix();
  Mat4 to_character;  // the solve's world → the character's
  if (!inverse(place, to_character))
    throw UsageError("--place: the placement cannot be inverted (scale > 0, up not zero)");
  const Bounds3f& bounds = renderer.bounds();  // over the whole clip, model space
  const Vec3 centre(bounds.center());
  const double radius = 0.5 * length(Vec3(bounds.max - bounds.min));
  DrawOptions draw;
  draw.skinning = request.options.skinning;
  draw.ground = false;
  draw.transparent_background = true;
  draw.materials = request.options.materials;
  draw.outlines = request.options.outlines;
  draw.shadows = request.options.shadows;
  // The character's shadow on the plate: its ground is a shadow catcher.
  draw.shadow_catcher = request.options.shadows;
  draw.light_direction = Vec3f(normalize(
      to_character.transform_vector(Vec3(request.options.light_direction)), Vec3{0, 1, 0}));
  draw.light_irradiance = request.options.light_irradiance;
  // The catcher spans what the camera can see of the ground around the character.
  draw.ground_center_x = float(centre.x);
  draw.ground_center_z = float(centre.z);
  draw.ground_half_size = float(std::max(20 * radius, 10.0));

  const auto started = std::chrono::steady_clock::now();
  RenderResult result;
  StagedOutputs staged;
  std::string single;
  std::optional<Mp4Writer> mp4;
  if (kind == PlateOut::Mp4) mp4.emplace(ffmpeg, request.out, solve.width, solve.height, fps);
  std::optional<composite::Image> plate;  // a single image is read once
  const long total = long(last - first + 1);
  for (int i = first; i <= last; ++i) {
    if (!plate || sequence) {
      plate = composite::read_image(plate_path(i));
      check_size(plate_path(i), plate->width, plate->height);
    }
    composite::Image frame;
    const matchmove::SolvedCamera& solved = solve.cameras[size_t(i)];
    if (solved.solved) {
      const std::vector<Mat4> pose = renderer.pose_at(double(i) / fps);
      const Camera camera =
          render_camera(solve, solved, layer.fov_y_degrees, to_character, centre, radius);
      // Character and shadow (premultiplied black from the catcher) in one layer, over.
      const composite::Image cg = composite::remap(
          to_linear(renderer.renderer().render(pose, camera, draw)), layer.to_plate);
      frame = composite::composite(composite::PorterDuff::Over, cg, *plate);
    } else {
      frame = *plate;  // no camera for this frame: nothing to draw through
      ++result.unsolved_frames;
    }
    if (mp4)
      mp4->write(to_srgb8(frame));
    else if (out_pattern)
      staged.add(out_path(i),
                 composite::encode_image(composite::image_format_for_path(request.out), frame));
    else
      single = composite::encode_image(composite::image_format_for_path(request.out), frame);
    if (total > 1) report(progress, "render", long(i - first + 1), total);
  }

  // ---- write: nothing lands until every frame has been drawn ----
  if (mp4) mp4->finish();
  if (out_pattern) staged.commit();
  if (kind == PlateOut::Image) write_file_atomically(request.out, single);
  result.frames = size_t(total);
  result.width = solve.width;
  result.height = solve.height;
  result.cg_width = layer.width;
  result.cg_height = layer.height;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.gl_renderer = renderer.renderer().gl_renderer();
  return result;
}

}  // namespace kinema::pipeline
