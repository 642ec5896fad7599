// Smoke and fire volumes in `kinema render` frames (render_volume.h).
#include "render_volume.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/fluid/volume_file.h"

namespace kinema::pipeline {

namespace {

/// `grid`'s values moved onto `density`'s lattice (zero where it has no voxel); nullopt when it
/// is not on that lattice.
std::optional<std::vector<float>> on_lattice(const VolumeGrid& density, VolumeGrid& grid) {
  if (grid.nx == density.nx && grid.ny == density.ny && grid.nz == density.nz &&
      grid.origin == density.origin && grid.voxel_size == density.voxel_size)
    return std::move(grid.values);
  const double h = density.voxel_size;
  if (std::abs(grid.voxel_size - h) > 1e-6 * h) return std::nullopt;
  int shift[3];
  for (int a = 0; a < 3; ++a) {
    const double s = (grid.origin[a] - density.origin[a]) / h;
    if (std::abs(s - std::round(s)) > 1e-3 || std::abs(s) > 1e9) return std::nullopt;
    shift[a] = int(std::round(s));
  }
  std::vector<float> out(size_t(density.nx) * size_t(density.ny) * size_t(density.nz), 0.0f);
  for (int k = 0; k < grid.nz; ++k)
    for (int j = 0; j < grid.ny; ++j)
      for (int i = 0; i < grid.nx; ++i) {
        const int x = i + shift[0], y = j + shift[1], z = k + shift[2];
        if (x < 0 || y < 0 || z < 0 || x >= density.nx || y >= density.ny || z >= density.nz)
          continue;
        out[size_t(x) + size_t(density.nx) * (size_t(y) + size_t(density.ny) * size_t(z))] =
            grid.values[size_t(i) + size_t(grid.nx) * (size_t(j) + size_t(grid.ny) * size_t(k))];
      }
  return out;
}

/// The frame numbers of the files in the pattern's folder that the pattern names.
std::set<int> frames_on_disk(const std::string& pattern) {
  const std::filesystem::path folder = std::filesystem::path(pattern).parent_path();
  std::set<int> frames;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(folder.empty() ? "." : folder.string(), ec)) {
    const std::string name = entry.path().filename().string();
    for (size_t i = 0; i < name.size();) {  // each run of digits may be the frame number
      if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
      if (j - i <= 9) {
        const int frame = std::stoi(name.substr(i, j - i));
        if (vdb_frame_path(pattern, frame) == (folder / name).string()) frames.insert(frame);
      }
      i = j;
    }
  }
  return frames;
}

/// Fills `depth` (view depths, +∞ where nothing is) with the nearer of it and the ground y = 0.
void add_ground(const Camera& camera, int width, int height, std::vector<float>& depth) {
  depth.resize(size_t(width) * size_t(height), std::numeric_limits<float>::infinity());
  if (!(camera.eye.y > 0)) return;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const Vec3f d = camera_ray(camera, width, height, float(x) + 0.5f, float(y) + 0.5f);
      if (d.y < 0) {
        float& z = depth[size_t(y) * size_t(width) + size_t(x)];
        z = std::min(z, -camera.eye.y / d.y);
      }
    }
}

bool has_meshes(Renderer& renderer) {
  for (size_t m = 0; m < renderer.mesh_count(); ++m)
    if (renderer.vertex_count(m) > 0) return true;
  return false;
}

template <class Composite>
void draw_each(std::span<VolumeSequence> volumes, const VolumeShading& shading, double t,
               const Camera& camera, int width, int height, const std::vector<float>& depth,
               Composite composite) {
  for (VolumeSequence& sequence : volumes) {
    const int frame = sequence.frame_at(t);
    const DenseVolume& volume = sequence.volume(frame);
    const VolumeShading s = shading_for(volume, shading);
    validate_volume_shading(s, sequence.file(frame));
    composite(render_volume(volume, s, camera, width, height, depth));
  }
}

}  // namespace

bool is_volume_file(const std::string& path) { return extension_of(path) == "vdb"; }

DenseVolume read_volume(const std::string& path) {
  std::vector<VolumeGrid> grids = read_vdb(path);
  const auto find = [&](const char* name) -> VolumeGrid* {
    for (VolumeGrid& g : grids)
      if (g.name == name) return &g;
    return nullptr;
  };
  VolumeGrid* density = find("density");
  if (!density) {
    std::string names;
    for (const VolumeGrid& g : grids) names += (names.empty() ? "" : ", ") + g.name;
    throw Error(
        path, "grid density",
        "has no \"density\" grid to draw (its grids: " + (names.empty() ? "none" : names) + ")");
  }
  DenseVolume v;
  v.nx = density->nx;
  v.ny = density->ny;
  v.nz = density->nz;
  v.origin = Vec3f(density->origin);
  v.voxel_size = float(density->voxel_size);
  for (const char* name : {"flame", "temperature"}) {
    VolumeGrid* grid = find(name);
    if (!grid) continue;
    std::optional<std::vector<float>> values = on_lattice(*density, *grid);
    if (!values)
      throw Error(path, std::string("grid ") + name,
                  "is not on the density grid's voxels (another voxel size or an origin between "
                  "its voxels)");
    (name[0] == 'f' ? v.flame : v.temperature) = std::move(*values);
  }
  v.density = std::move(density->values);
  validate_volume(v, path);
  return v;
}

VolumeSequence::VolumeSequence(const std::string& path, double fps)
    : path_(path), pattern_(path.find('%') != std::string::npos), fps_(fps) {
  if (!(std::isfinite(fps) && fps > 0))
    throw Error(path, "--fps", "the volume frames' rate must be a finite number > 0");
  std::error_code ec;
  if (!pattern_) {
    if (!std::filesystem::is_regular_file(path, ec))
      throw Error(path, "", "no such file (a smoke or fire volume, .vdb)");
  } else {
    vdb_frame_path(path, 0);  // a malformed pattern throws, naming it
    const std::set<int> frames = frames_on_disk(path);
    if (frames.empty())
      throw Error(path, "frames",
                  "no file matches the pattern in " +
                      (std::filesystem::path(path).parent_path().empty()
                           ? std::string("the current folder")
                           : std::filesystem::path(path).parent_path().string()));
    first_ = *frames.begin();
    count_ = 1;
    while (frames.count(first_ + count_)) ++count_;
  }
  bounds_.resize(size_t(count_));
}

int VolumeSequence::frame_at(double t) const {
  const double f = std::round(t * fps_);
  return int(std::clamp(std::isfinite(f) ? f : 0.0, 0.0, double(count_ - 1)));
}

std::string VolumeSequence::file(int i) const {
  return pattern_ ? vdb_frame_path(path_, first_ + i) : path_;
}

const DenseVolume& VolumeSequence::volume(int i) {
  if (i != loaded_) {
    loaded_ = -1;
    volume_ = read_volume(file(i));
    loaded_ = i;
  }
  return volume_;
}

Bounds3f VolumeSequence::bounds(int i) {
  std::optional<Bounds3f>& b = bounds_[size_t(i)];
  if (b) return *b;
  const DenseVolume& v = volume(i);
  int lo[3] = {v.nx, v.ny, v.nz}, hi[3] = {-1, -1, -1};
  for (int k = 0; k < v.nz; ++k)
    for (int j = 0; j < v.ny; ++j)
      for (int x = 0; x < v.nx; ++x) {
        const size_t at = size_t(x) + size_t(v.nx) * (size_t(j) + size_t(v.ny) * size_t(k));
        if (!(v.density[at] > 0) && !(!v.flame.empty() && v.flame[at] > 0)) continue;
        const int c[3] = {x, j, k};
        for (int a = 0; a < 3; ++a) {
          lo[a] = std::min(lo[a], c[a]);
          hi[a] = std::max(hi[a], c[a]);
        }
      }
  if (hi[0] < 0) {
    b = v.bounds();
  } else {
    Bounds3f box;
    for (int a = 0; a < 3; ++a) {
      box.min[a] = v.origin[a] + (float(lo[a]) - 0.5f) * v.voxel_size;
      box.max[a] = v.origin[a] + (float(hi[a]) + 0.5f) * v.voxel_size;
    }
    b = box;
  }
  return *b;
}

std::optional<Bounds3f> volume_bounds(std::span<VolumeSequence> volumes, double t) {
  std::optional<Bounds3f> out;
  for (VolumeSequence& s : volumes) {
    const Bounds3f b = s.bounds(s.frame_at(t));
    if (!out) {
      out = b;
      continue;
    }
    for (int a = 0; a < 3; ++a) {
      out->min[a] = std::min(out->min[a], b.min[a]);
      out->max[a] = std::max(out->max[a], b.max[a]);
    }
  }
  return out;
}

VolumeShading shading_for(const DenseVolume& volume, const VolumeShading& shading) {
  VolumeShading s = shading;
  s.emission.mode = !volume.flame.empty()         ? VolumeEmission::Mode::Flame
                    : !volume.temperature.empty() ? VolumeEmission::Mode::Blackbody
                                                  : VolumeEmission::Mode::None;
  return s;
}

void draw_volumes(std::span<VolumeSequence> volumes, const VolumeShading& shading,
                  ClipRenderer& renderer, double t, bool ground, Image& frame) {
  if (volumes.empty()) return;
  const Camera camera = renderer.camera_at(t);
  std::vector<float> depth;
  if (has_meshes(renderer.renderer())) {  // the meshes' depth in this frame's pose
    DrawOptions plain;
    plain.ground = plain.materials = plain.outlines = plain.shadows = false;
    depth = renderer.renderer().render_passes(renderer.pose_at(t), camera, plain).depth;
  }
  if (ground) add_ground(camera, frame.width, frame.height, depth);
  draw_each(volumes, shading, t, camera, frame.width, frame.height, depth,
            [&](const VolumeImage& v) { composite_volume(frame, v); });
}

void draw_volumes(std::span<VolumeSequence> volumes, const VolumeShading& shading,
                  ClipRenderer& renderer, double t, bool ground, RenderPasses& passes) {
  if (volumes.empty()) return;
  const Camera camera = renderer.camera_at(t);
  std::vector<float> depth = passes.depth;
  if (ground) add_ground(camera, passes.width, passes.height, depth);
  draw_each(volumes, shading, t, camera, passes.width, passes.height, depth,
            [&](const VolumeImage& v) { composite_volume(passes.beauty, v); });
}

}  // namespace kinema::pipeline
