// BVH writer: one clip sampled at a fixed frame rate, channels laid out as the source had them
// (Asset::bvh_layout) or a conventional default, rest rotations folded into the rotation channels.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/bvh.h"
#include "kinema/math/euler.h"

namespace kinema {
namespace {

constexpr double kPiD = 3.14159265358979323846;
constexpr double kRadToDeg = 180.0 / kPiD;
constexpr std::string_view kChannelNames[6] = {"Xposition", "Yposition", "Zposition",
                                               "Xrotation", "Yrotation", "Zrotation"};

int channel_code(std::string_view name) {
  for (int i = 0; i < 6; ++i) {
    if (name.size() != kChannelNames[i].size()) continue;
    bool same = true;
    for (size_t k = 0; k < name.size(); ++k)
      if (std::tolower(static_cast<unsigned char>(name[k])) !=
          std::tolower(static_cast<unsigned char>(kChannelNames[i][k])))
        same = false;
    if (same) return i;
  }
  return -1;
}

/// The order whose first axes are the listed rotation axes (completed with the missing ones in
/// X, Y, Z order), so a joint with one or two rotation channels still decomposes.
EulerOrder order_of(const std::vector<int>& rotation_axes) {
  std::array<int, 3> axes{-1, -1, -1};
  size_t n = 0;
  for (int a : rotation_axes) axes[n++] = a;
  for (int a = 0; a < 3 && n < 3; ++a)
    if (std::find(axes.begin(), axes.begin() + static_cast<long>(n), a) ==
        axes.begin() + static_cast<long>(n))
      axes[n++] = a;
  for (int o = 0; o < 6; ++o)
    if (euler_axes(static_cast<EulerOrder>(o)) == axes) return static_cast<EulerOrder>(o);
  return EulerOrder::ZXY;
}

struct OutJoint {
  std::vector<int> channels;  // channel codes, file order
  std::vector<int> rotation_axes;
  EulerOrder order = EulerOrder::ZXY;
  Vec3 offset{0, 0, 0};  // metres
  bool has_end_site = false;
  Vec3 end_site{0, 0, 0};  // metres
  bool has_previous = false;
  Vec3 previous{0, 0, 0};  // last written angles (radians), for continuity
};

class NumberWriter {
 public:
  explicit NumberWriter(int precision) : precision_(precision) {}
  void append(std::string& out, double v) const {
    if (v == 0) {  // also turns -0 into 0
      out += '0';
      return;
    }
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, precision_);
    out.append(buf, r.ptr);
  }

 private:
  int precision_;
};

std::string sanitize_name(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 32 || c == '{' || c == '}') c = '_';
  }
  return s;
}

double wrap_near(double angle, double reference) {
  return angle + 2 * kPiD * std::round((reference - angle) / (2 * kPiD));
}

/// Euler angles for `q` in the joint's order, chosen close to the previous frame's angles (the
/// equivalent solution (a+π, π−b, c+π) and 2π wraps), so curves stay continuous.
Vec3 continuous_euler(OutJoint& oj, const Quat& q) {
  const auto [i, j, k] = euler_axes(oj.order);
  Vec3 e = euler_from_quat(q, oj.order);
  if (oj.has_previous) {
    const Vec3& p = oj.previous;
    auto unwrap = [&](Vec3 v) {
      for (int a = 0; a < 3; ++a) v[a] = wrap_near(v[a], p[a]);
      return v;
    };
    Vec3 best = unwrap(e);
    if (oj.rotation_axes.size() == 3) {
      Vec3 alt = e;
      alt[i] += kPiD;
      alt[j] = kPiD - alt[j];
      alt[k] += kPiD;
      alt = unwrap(alt);
      if (length_squared(alt - p) < length_squared(best - p)) best = alt;
    }
    e = best;
  }
  oj.previous = e;
  oj.has_previous = true;
  return e;
}

bool is_identity(const Quat& q) { return std::abs(std::abs(q.w) - 1.0) < 1e-12; }

/// Sets the position channels of a joint about to be written (`channels`: codes in file order,
/// rotations kept where they are; `moves[a]`: the clip moves the joint away from its rest along
/// axis a). Roots keep the layout's position channels (a BVH root conventionally has them) and
/// get all three when an axis without a channel moves or has a non-zero rest translation
/// (Blender reads such an axis as 0, not as the OFFSET). Other joints get all three when the clip
/// moves them and none otherwise: then the rest translation is the OFFSET and every reader
/// agrees.
void place_position_channels(std::vector<int>& channels, bool is_root, const bool moves[3],
                             const Vec3& rest) {
  bool has[3] = {false, false, false};
  for (int c : channels)
    if (c < 3) has[c] = true;
  bool want_all = false, want_none = false;
  if (is_root) {
    for (int a = 0; a < 3; ++a) want_all = want_all || (!has[a] && (moves[a] || rest[a] != 0));
    // A root without position channels and without motion keeps its rest as the OFFSET.
    if (!has[0] && !has[1] && !has[2] && !moves[0] && !moves[1] && !moves[2]) return;
  } else {
    want_all = moves[0] || moves[1] || moves[2];
    want_none = !want_all;
  }
  if (!want_all && !want_none) return;
  // Rebuild: the position channels first (existing ones in their order, then the missing ones).
  std::vector<int> positions, rotations;
  for (int c : channels) (c < 3 ? positions : rotations).push_back(c);
  if (want_none) positions.clear();
  for (int a = 0; a < 3 && want_all; ++a)
    if (!has[a]) positions.push_back(a);
  channels = positions;
  channels.insert(channels.end(), rotations.begin(), rotations.end());
}

/// The clip options.clip names (null when the asset has none and clip 0 is asked for).
const Clip* chosen_clip(const Asset& asset, int index, const std::string& file) {
  if (index < 0 ||
      (static_cast<size_t>(index) >= asset.clips.size() && !(asset.clips.empty() && index == 0)))
    throw Error(file, "",
                "cannot write BVH: clip " + std::to_string(index) +
                    " out of range (the asset has " + std::to_string(asset.clips.size()) + ")");
  return asset.clips.empty() ? nullptr : &asset.clips[static_cast<size_t>(index)];
}

/// The file's length unit in metres: the requested one, else a BVH source's own, else cm.
double output_unit(const Asset& asset, const BvhWriteOptions& options, const std::string& file) {
  const double unit = options.unit_in_meters
                          ? *options.unit_in_meters
                          : (asset.source.format == "bvh" ? asset.source.unit_in_meters : 0.01);
  if (!std::isfinite(unit) || !(unit > 0))
    throw Error(file, "", "BVH unit must be a positive finite number of metres");
  return unit;
}

/// The frames written: `frames` at `rate` frames per second over the clip's `duration`.
struct FrameGrid {
  double rate = kDefaultSampleRate;
  double duration = 0;
  long frames = 1;
};

/// The requested rate, else the clip's, else 30 fps; round(duration · rate) + 1 frames.
FrameGrid frame_grid(const Clip* clip, double requested_rate, const std::string& file) {
  FrameGrid grid;
  grid.rate = requested_rate;
  if (grid.rate == 0) grid.rate = clip ? sample_rate_or(*clip) : kDefaultSampleRate;
  if (!std::isfinite(grid.rate) || !(grid.rate > 0))
    throw Error(file, "", "BVH frame rate must be positive");
  grid.duration = clip ? clip->duration : 0.0;
  if (!std::isfinite(grid.duration) || grid.duration < 0)
    throw Error(file, "", "clip duration must be finite and non-negative");
  const double frame_count = std::round(grid.duration * grid.rate) + 1;
  if (frame_count > 1e8) throw Error(file, "", "BVH would have more than 10^8 frames");
  grid.frames = static_cast<long>(frame_count);
  return grid;
}

std::vector<std::vector<int>> children_of(const Skeleton& skeleton) {
  std::vector<std::vector<int>> children(static_cast<size_t>(skeleton.joint_count()));
  for (int j = 0; j < skeleton.joint_count(); ++j)
    if (skeleton.parent(j) != kNoParent)
      children[static_cast<size_t>(skeleton.parent(j))].push_back(j);
  return children;
}

/// Joint j's channels: those of its recorded `layout` (null when the asset has no layout: roots
/// get 6 channels, others 3, and leaves an End Site), with position channels placed as
/// place_position_channels says and rotation channels added when the joint rotates. Position
/// channels hold the whole local translation over OFFSET 0 on their axes, so that readers that
/// add them to the OFFSET and readers that replace it agree.
OutJoint out_joint(const Joint& joint, const JointTrack* track, const BvhJointLayout* layout,
                   bool is_leaf, EulerOrder default_order, const std::string& file) {
  OutJoint oj;
  const bool is_root = joint.parent == kNoParent;
  if (layout) {
    for (const std::string& name : layout->channels) {
      const int code = channel_code(name);
      if (code < 0)
        throw Error(file, "joint '" + joint.name + "'", "unknown BVH channel '" + name + "'");
      if (std::find(oj.channels.begin(), oj.channels.end(), code) != oj.channels.end())
        throw Error(file, "joint '" + joint.name + "'", "BVH channel '" + name + "' repeated");
      oj.channels.push_back(code);
    }
    oj.has_end_site = layout->has_end_site;
    oj.end_site = layout->end_site;
  } else {
    if (is_root) oj.channels = {0, 1, 2};
    for (int a : euler_axes(default_order)) oj.channels.push_back(3 + a);
    oj.has_end_site = is_leaf;
  }
  // Channels the data needs but the layout lacks are added (the motion must not be lost).
  bool moves[3] = {false, false, false};
  if (track)
    for (size_t k = 0; k < track->translation.key_count(); ++k)
      for (int a = 0; a < 3; ++a)
        moves[a] = moves[a] ||
                   std::abs(track->translation.key_value(k)[a] - joint.rest.translation[a]) > 1e-12;
  const bool needs_rot = (track && !track->rotation.empty()) || !is_identity(joint.rest.rotation);
  place_position_channels(oj.channels, is_root, moves, joint.rest.translation);
  bool has_rot = false;
  for (int c : oj.channels) has_rot = has_rot || c >= 3;
  if (needs_rot && !has_rot)
    for (int a : euler_axes(default_order)) oj.channels.push_back(3 + a);
  for (int c : oj.channels)
    if (c >= 3) oj.rotation_axes.push_back(c - 3);
  oj.order = order_of(oj.rotation_axes);
  oj.offset = joint.rest.translation;
  for (int c : oj.channels)
    if (c < 3) oj.offset[c] = 0;
  return oj;
}

/// The joints in depth-first pre-order from each root, and each joint's depth (iterative: no
/// recursion on hostile depths).
std::vector<int> depth_first_order(const Skeleton& skeleton,
                                   const std::vector<std::vector<int>>& children,
                                   std::vector<int>& depth) {
  std::vector<int> order;
  order.reserve(static_cast<size_t>(skeleton.joint_count()));
  depth.assign(static_cast<size_t>(skeleton.joint_count()), 0);
  std::vector<int> stack;
  for (int r : skeleton.roots()) {
    stack.push_back(r);
    while (!stack.empty()) {
      const int j = stack.back();
      stack.pop_back();
      order.push_back(j);
      const auto& ch = children[static_cast<size_t>(j)];
      for (auto it = ch.rbegin(); it != ch.rend(); ++it) {
        depth[static_cast<size_t>(*it)] = depth[static_cast<size_t>(j)] + 1;
        stack.push_back(*it);
      }
    }
  }
  return order;
}

/// The HIERARCHY section: joints in `order` (depth-first) at their `depth`, OFFSETs and End
/// Sites in file units (metres / `unit`).
void append_hierarchy(std::string& s, const Skeleton& skeleton, const std::vector<OutJoint>& out,
                      const std::vector<int>& order, const std::vector<int>& depth,
                      const NumberWriter& num, double unit) {
  auto indent = [&](int d) { s.append(static_cast<size_t>(std::min(d, 64)), '\t'); };
  auto vec = [&](const Vec3& v) {
    for (int a = 0; a < 3; ++a) {
      s += ' ';
      num.append(s, v[a] / unit);
    }
  };
  std::vector<int> open;
  auto close = [&]() {
    const int j = open.back();
    open.pop_back();
    const int d = depth[static_cast<size_t>(j)];
    const OutJoint& oj = out[static_cast<size_t>(j)];
    if (oj.has_end_site) {
      indent(d + 1), s += "End Site\n";
      indent(d + 1), s += "{\n";
      indent(d + 2), s += "OFFSET";
      vec(oj.end_site);
      s += '\n';
      indent(d + 1), s += "}\n";
    }
    indent(d), s += "}\n";
  };
  s += "HIERARCHY\n";
  for (int j : order) {
    const int d = depth[static_cast<size_t>(j)];
    while (static_cast<int>(open.size()) > d) close();
    const OutJoint& oj = out[static_cast<size_t>(j)];
    indent(d);
    s += d == 0 ? "ROOT " : "JOINT ";
    s += sanitize_name(skeleton.joint(j).name);
    s += '\n';
    indent(d), s += "{\n";
    indent(d + 1), s += "OFFSET";
    vec(oj.offset);
    s += '\n';
    indent(d + 1), s += "CHANNELS ";
    s += std::to_string(oj.channels.size());
    for (int c : oj.channels) (s += ' ') += kChannelNames[c];
    s += '\n';
    open.push_back(j);
  }
  while (!open.empty()) close();
}

/// The MOTION section: `clip` (the rest pose when null) sampled at every frame of `grid`, one
/// line per frame with the joints' channels in `order`: positions in file units, angles in
/// degrees, continuous from frame to frame (continuous_euler updates `out`).
void append_motion(std::string& s, const Skeleton& skeleton, const Clip* clip,
                   const FrameGrid& grid, std::vector<OutJoint>& out, const std::vector<int>& order,
                   const NumberWriter& num, double unit, const std::string& file) {
  s += "MOTION\nFrames: " + std::to_string(grid.frames) + "\nFrame Time: ";
  num.append(s, 1.0 / grid.rate);
  s += '\n';
  std::vector<Transform> pose(static_cast<size_t>(skeleton.joint_count()));
  const std::vector<Transform> rest = skeleton.rest_pose();
  for (long f = 0; f < grid.frames; ++f) {
    if (clip) {
      const double t = std::min(static_cast<double>(f) / grid.rate, grid.duration);
      if (!sample_pose(*clip, skeleton, t, WrapMode::Clamp, pose))
        throw Error(file, "", "clip does not match the skeleton");
    } else {
      pose = rest;
    }
    bool first = true;
    for (int j : order) {
      OutJoint& oj = out[static_cast<size_t>(j)];
      const Transform& local = pose[static_cast<size_t>(j)];
      Vec3 angles{0, 0, 0};
      if (!oj.rotation_axes.empty()) angles = continuous_euler(oj, local.rotation);
      for (int c : oj.channels) {
        if (!first) s += ' ';
        first = false;
        if (c < 3)
          num.append(s, (local.translation[c] - oj.offset[c]) / unit);
        else
          num.append(s, angles[c - 3] * kRadToDeg);
      }
    }
    s += '\n';
  }
}

}  // namespace

std::string format_bvh(const Asset& asset, const BvhWriteOptions& options) {
  const std::string& file = asset.source.path;
  const Skeleton& skeleton = asset.skeleton;
  const int n = skeleton.joint_count();
  if (n == 0) throw Error(file, "", "cannot write BVH: the asset has no joints");
  const Clip* clip = chosen_clip(asset, options.clip, file);
  if (options.precision < 1 || options.precision > 17)
    throw Error(file, "", "BVH precision must be 1 to 17 significant digits");
  const double unit = output_unit(asset, options, file);
  const FrameGrid grid = frame_grid(clip, options.frame_rate, file);

  const bool have_layout = asset.bvh_layout.size() == static_cast<size_t>(n);
  const std::vector<std::vector<int>> children = children_of(skeleton);
  std::vector<OutJoint> out;
  out.reserve(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    const JointTrack* track = clip && static_cast<size_t>(j) < clip->tracks.size()
                                  ? &clip->tracks[static_cast<size_t>(j)]
                                  : nullptr;
    out.push_back(out_joint(skeleton.joint(j), track,
                            have_layout ? &asset.bvh_layout[static_cast<size_t>(j)] : nullptr,
                            children[static_cast<size_t>(j)].empty(), options.default_order, file));
  }
  std::vector<int> depth;
  const std::vector<int> order = depth_first_order(skeleton, children, depth);

  const NumberWriter num(options.precision);
  std::string s;
  append_hierarchy(s, skeleton, out, order, depth, num, unit);
  append_motion(s, skeleton, clip, grid, out, order, num, unit, file);
  return s;
}

void write_bvh(const Asset& asset, const std::string& path, const BvhWriteOptions& options) {
  write_file_atomically(path, format_bvh(asset, options));
}

}  // namespace kinema
