// src/pipeline/render_volume.h — smoke and fire volumes (OpenVDB files or frame patterns) drawn in
// `kinema render` frames (pipeline::render_file, kinema/pipeline/render.h): read with
// kinema::read_vdb (kinema/fluid/volume_file.h), ray-marched by the render module
// (kinema/render/volume.h) and composited over each frame against its opaque surfaces' depth.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kinema/render/clip_render.h"
#include "kinema/render/volume.h"

namespace kinema::pipeline {

/// True for a .vdb file or frame pattern (smoke_%04d.vdb).
bool is_volume_file(const std::string& path);

/// The density grid of an OpenVDB file and, when present, its "flame" and "temperature" grids
/// (another lattice's values moved onto the density's where they share voxels). Throws
/// kinema::Error naming the file: unreadable (read_vdb's errors), no "density" grid, a flame or
/// temperature grid of another voxel size or not on the density's lattice.
DenseVolume read_volume(const std::string& path);

/// One .vdb file (one frame) or a frame pattern: the files present from the lowest frame number
/// on disk upward, while consecutive, at `fps` frames a second (frame i at i / fps).
class VolumeSequence {
 public:
  /// Finds the frames; throws kinema::Error naming the path when the file is missing or no file
  /// matches the pattern (and for a malformed pattern).
  VolumeSequence(const std::string& path, double fps);

  const std::string& path() const { return path_; }
  int frames() const { return count_; }
  double fps() const { return fps_; }
  double duration() const { return double(count_ - 1) / fps_; }
  /// The frame shown at time t: the nearest, clamped to the sequence.
  int frame_at(double t) const;
  /// The file of frame i (0 … frames() − 1).
  std::string file(int i) const;
  /// The volume of frame i, read on demand (the last one read is kept).
  const DenseVolume& volume(int i);
  /// What frame i holds (voxels of density or flame > 0), else its whole box.
  Bounds3f bounds(int i);

 private:
  std::string path_;
  bool pattern_ = false;
  int first_ = 0, count_ = 1;
  double fps_ = 24;
  int loaded_ = -1;
  DenseVolume volume_;
  std::vector<std::optional<Bounds3f>> bounds_;
};

/// The union of the sequences' bounds at time t (nullopt without sequences).
std::optional<Bounds3f> volume_bounds(std::span<VolumeSequence> volumes, double t);

/// `shading` for one volume: emission Flame when it has a flame grid, else Blackbody when it has a
/// temperature grid, else none.
VolumeShading shading_for(const DenseVolume& volume, const VolumeShading& shading);

/// Draws every sequence's frame at time t over `frame`, which `renderer.frame(t, …)` just drew
/// (one after another, each against the meshes' depth — a depth pass of the current pose when the
/// asset has meshes — and the ground plane y = 0 when `ground`).
void draw_volumes(std::span<VolumeSequence> volumes, const VolumeShading& shading,
                  ClipRenderer& renderer, double t, bool ground, Image& frame);
/// The same over a frame's render passes (their depth, the linear beauty).
void draw_volumes(std::span<VolumeSequence> volumes, const VolumeShading& shading,
                  ClipRenderer& renderer, double t, bool ground, RenderPasses& passes);

}  // namespace kinema::pipeline
