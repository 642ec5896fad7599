// kinema/fluid/volume_file.h — smoke and fire volumes as OpenVDB files (.vdb), the format Blender,
// Houdini and most renderers import.
//
// A VolumeGrid is one dense scalar field on a regular grid of nx × ny × nz cubic voxels of side
// voxel_size (metres). Voxel (i, j, k) has its centre at origin + (i, j, k)·voxel_size and flat
// index i + nx·(j + ny·k) — the layout of grid_fluid.h's cell-centred scalars, whose origin here
// is the fluid's origin + ½·dx on each axis. OpenVDB puts voxel centres at integer index
// coordinates, so the file's transform is a uniform scale by voxel_size followed by a translation
// by `origin`, and voxel (i, j, k) keeps its index.
//
// write_vdb stores each grid as an openvdb::FloatGrid with grid class "fog volume" (a density-like
// field, 0 outside) and background 0. Voxels whose |value| ≤ tolerance are left inactive, so empty
// space costs nothing and the file stays sparse; regions of one constant value collapse into
// tiles. Blender (3.x) imports such a file as a Volume object, one attribute per grid: its
// Principled Volume shader reads "density" (and "temperature" as its Temperature Attribute), and
// the grid names Blender's own smoke/fire simulation writes, and its smoke material reads, are
// "density", "flame", "heat" and "temperature" — name grids that way to render without
// re-wiring the material. Coordinates are stored as given: kinema is +Y up, Blender +Z up, so
// in Blender the volume needs the usual +90° rotation about X (as its glTF importer applies).
//
// read_vdb reads the float grids of a file back into the dense form, for tests and the renderer.
// Errors (bad input, unreadable or truncated files, OpenVDB's own exceptions) are kinema::Error
// naming the file, the place (a grid, a voxel) and the reason. A write goes to a temporary file in
// the same folder that is renamed over the target, so a failure never leaves a partial file.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kinema/math/vec3.h"

namespace kinema {

/// One dense scalar grid (density, temperature, flame, …).
struct VolumeGrid {
  std::string name;            ///< the grid's name in the file; unique within a file, not empty
  int nx = 0, ny = 0, nz = 0;  ///< voxels along x, y, z; each ≥ 1 to be written
  Vec3 origin{0, 0, 0};        ///< the centre of voxel (0, 0, 0), m
  double voxel_size = 1;       ///< side of a (cubic) voxel, m; finite and > 0
  std::vector<float> values;   ///< nx·ny·nz values, voxel (i, j, k) at i + nx·(j + ny·k)
};

struct VdbWriteOptions {
  /// Voxels with |value| ≤ tolerance are not stored (inactive, read back as 0). The default keeps
  /// every non-zero value; a small positive tolerance drops faint wisps and shrinks the file.
  float tolerance = 0;
  /// Store values as 16-bit halves (about 3 significant digits, |value| up to 65504): half the
  /// size on disk; readers get floats back.
  bool save_float_as_half = false;
  /// Recorded as file metadata "kinema_frame" (int) and "kinema_time" (double, s) when given.
  std::optional<int> frame;
  std::optional<double> time;
};

/// Writes `grids` to the OpenVDB file `path` (replacing it), each as a float fog-volume grid of
/// its name with metadata creator = "kinema". Throws kinema::Error — and writes nothing — if the
/// list is empty, a name is empty or repeated, a dimension is < 1, values.size() ≠ nx·ny·nz, a
/// value is not finite (the grid, flat index and (i, j, k) named) or, with save_float_as_half,
/// beyond ±65504, voxel_size is not finite and positive, the origin or options.time is not finite,
/// options.tolerance is negative or not finite, or the file cannot be written.
void write_vdb(const std::string& path, std::span<const VolumeGrid> grids,
               const VdbWriteOptions& options = {});

/// Reads every grid of the OpenVDB file `path`, in file order (write_vdb's order), into the dense
/// form. A grid written by write_vdb comes back with its nx, ny, nz and origin (kept in metadata
/// "kinema_extent"); any other grid covers the bounding box of its active voxels (1 × 1 × 1 at
/// index (0, 0, 0) when it has none), with inactive voxels read as their stored value (the
/// background, 0 for fog volumes). Throws kinema::Error if the file cannot be opened, is not a
/// VDB file or is truncated or corrupt, holds a grid that is not of float type (a vector velocity
/// grid, say), whose transform is not a uniform axis-aligned scale plus translation, that holds
/// a non-finite value, or that is too large to hold densely (over 2^30 voxels). A file cut short
/// anywhere is refused before OpenVDB reads it; a file whose compressed blocks were corrupted in
/// place (bytes changed, length intact) is beyond that check, and OpenVDB 10's own reader can
/// overrun a buffer on some of those: read files written by kinema or other VDB tools, not
/// hostile ones.
std::vector<VolumeGrid> read_vdb(const std::string& path);

/// The path of frame `frame` of a sequence: `pattern` with its one printf-style integer field
/// (%d, %4d or %04d — a width of at most 2 digits, the '0' flag optional; "%%" is a literal %)
/// replaced, as printf would: vdb_frame_path("smoke_%04d.vdb", 7) == "smoke_0007.vdb". Throws
/// kinema::Error (file = the pattern) if it has no such field, more than one, or any other %
/// conversion.
std::string vdb_frame_path(const std::string& pattern, int frame);

}  // namespace kinema
