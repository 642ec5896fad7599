// Smoke and fire volumes as OpenVDB files (kinema/fluid/volume_file.h).
#include "kinema/fluid/volume_file.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openvdb/io/File.h>
#include <openvdb/io/Stream.h>
#include <openvdb/openvdb.h>

#include "kinema/core/error.h"

namespace kinema {
namespace {

constexpr float kHalfMax = 65504.0f;                  // the largest finite 16-bit half
constexpr std::int64_t kMaxVoxels = 1ll << 30;        // read_vdb's dense limit (4 GiB of floats)
constexpr const char* kExtentMeta = "kinema_extent";  // (nx, ny, nz) as written

std::string grid_place(const VolumeGrid& g, std::size_t index) {
  return "grid " + std::to_string(index) + " '" + g.name + "'";
}

// Every check is done before anything touches the disk, so bad input leaves no file behind.
void validate(const std::string& path, std::span<const VolumeGrid> grids,
              const VdbWriteOptions& o) {
  if (grids.empty()) throw Error(path, "", "no grids to write");
  if (!(o.tolerance >= 0) || !std::isfinite(o.tolerance))
    throw Error(path, "options.tolerance", "must be ≥ 0 and finite");
  if (o.time && !std::isfinite(*o.time)) throw Error(path, "options.time", "is not finite");
  std::set<std::string> names;
  for (std::size_t n = 0; n < grids.size(); ++n) {
    const VolumeGrid& g = grids[n];
    const std::string place = grid_place(g, n);
    if (g.name.empty()) throw Error(path, place, "has an empty name");
    if (!names.insert(g.name).second) throw Error(path, place, "repeats the name of another grid");
    if (g.nx < 1 || g.ny < 1 || g.nz < 1)
      throw Error(path, place,
                  "dimensions " + std::to_string(g.nx) + "×" + std::to_string(g.ny) + "×" +
                      std::to_string(g.nz) + " must each be ≥ 1");
    const std::int64_t count = std::int64_t(g.nx) * g.ny * g.nz;
    if (std::int64_t(g.values.size()) != count)
      throw Error(path, place,
                  "has " + std::to_string(g.values.size()) + " values for " +
                      std::to_string(count) + " voxels");
    if (!(g.voxel_size > 0) || !std::isfinite(g.voxel_size))
      throw Error(path, place + ".voxel_size", "must be > 0 and finite");
    if (!std::isfinite(g.origin.x) || !std::isfinite(g.origin.y) || !std::isfinite(g.origin.z))
      throw Error(path, place + ".origin", "is not finite");
    for (std::int64_t v = 0; v < count; ++v) {
      const float x = g.values[std::size_t(v)];
      const bool bad = !std::isfinite(x) || (o.save_float_as_half && std::fabs(x) > kHalfMax);
      if (!bad) continue;
      const std::int64_t i = v % g.nx, j = (v / g.nx) % g.ny, k = v / (std::int64_t(g.nx) * g.ny);
      throw Error(path,
                  place + ", value " + std::to_string(v) + " (i, j, k) = (" + std::to_string(i) +
                      ", " + std::to_string(j) + ", " + std::to_string(k) + ")",
                  std::isfinite(x) ? "exceeds the half-float range ±65504" : "is not finite");
    }
  }
}

openvdb::FloatGrid::Ptr to_openvdb(const VolumeGrid& g, const VdbWriteOptions& o) {
  auto grid = openvdb::FloatGrid::create(0.0f);
  grid->setName(g.name);
  grid->setGridClass(openvdb::GRID_FOG_VOLUME);
  grid->setCreator("kinema");
  grid->setSaveFloatAsHalf(o.save_float_as_half);
  // Index (i, j, k) → world origin + (i, j, k)·voxel_size: OpenVDB's voxel centres are at
  // integer index coordinates, which is exactly the VolumeGrid convention.
  auto xform = openvdb::math::Transform::createLinearTransform(g.voxel_size);
  xform->postTranslate(openvdb::Vec3d(g.origin.x, g.origin.y, g.origin.z));
  grid->setTransform(xform);
  grid->insertMeta(kExtentMeta, openvdb::Vec3IMetadata(openvdb::Vec3i(g.nx, g.ny, g.nz)));
  auto acc = grid->getAccessor();
  std::size_t v = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i, ++v) {
        const float x = g.values[v];
        if (std::fabs(x) > o.tolerance) acc.setValue(openvdb::Coord(i, j, k), x);
      }
  grid->pruneGrid(0.0f);  // uniform active blocks become tiles
  return grid;
}

// A temporary file beside `path` (same folder, so the final rename is atomic); removed on
// destruction unless released.
class TempFile {
 public:
  explicit TempFile(const std::string& path) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Error(path, "", "folder does not exist: " + dir.string());
    name_ = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkstemp(name_.data());
    if (fd < 0)
      throw Error(path, "", std::string("cannot create a temporary file: ") + std::strerror(errno));
    ::close(fd);
    ::chmod(name_.c_str(), 0644);
  }
  ~TempFile() {
    if (!name_.empty()) ::unlink(name_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& name() const { return name_; }
  void release() { name_.clear(); }

 private:
  std::string name_;
};

// Walks the file's header and grid descriptors (the layout io::File writes: magic, versions, UUID,
// file metadata, then per grid its name, type, instance parent and file offsets, its data up to
// the end offset) and throws if a grid ends past the end of the file. OpenVDB reads a cut file's
// missing bytes as zeros or, stopped by an exception part-way through a tree, leaks the nodes it
// had made; a truncated file is refused here before it gets that far. Files without offsets
// (written by io::Stream) or older than version 219 are left to OpenVDB's own checks.
void check_complete(const std::string& path, std::ifstream& in) {
  in.seekg(0, std::ios::end);
  const std::uint64_t size = std::uint64_t(std::streamoff(in.tellg()));
  in.seekg(0);
  std::uint64_t at = 0;
  auto cut = [&](const std::string& what) {
    throw Error(path, "byte " + std::to_string(at),
                "truncated: the file (" + std::to_string(size) + " bytes) ends inside " + what);
  };
  auto raw = [&](void* dst, std::uint64_t n, const std::string& what) {
    if (size - at < n) cut(what);
    in.read(static_cast<char*>(dst), std::streamsize(n));
    at += n;
  };
  auto u32 = [&](const std::string& what) {
    std::uint32_t v = 0;
    raw(&v, 4, what);
    return v;
  };
  auto u64 = [&](const std::string& what) {
    std::uint64_t v = 0;
    raw(&v, 8, what);
    return v;
  };
  auto skip = [&](std::uint64_t n, const std::string& what) {
    if (size - at < n) cut(what);
    at += n;
    in.seekg(std::streamoff(at));
  };
  auto text = [&](const std::string& what) {
    const std::uint32_t n = u32(what);
    if (size - at < n) cut(what);
    std::string t(n, '\0');
    raw(t.data(), n, what);
    return t;
  };
  if (size < 8) return;  // not even a magic number: OpenVDB says what it is not
  if (u64("the header") != 0x56444220u) return;
  const std::uint32_t version = u32("the header");
  skip(8, "the header");  // library major and minor version
  char offsets = 0;
  raw(&offsets, 1, "the header");
  if (version < 219 || !offsets) return;
  skip(36, "the header");  // UUID, as text
  const std::uint32_t meta_count = u32("the file metadata");
  for (std::uint32_t m = 0; m < meta_count; ++m) {
    text("the file metadata");                            // name
    text("the file metadata");                            // type
    skip(u32("the file metadata"), "the file metadata");  // value, size-prefixed
  }
  const std::uint32_t grid_count = u32("the grid count");
  for (std::uint32_t n = 0; n < grid_count; ++n) {
    const std::string where = "grid " + std::to_string(n) + "'s descriptor";
    const std::string name = text(where);
    text(where);  // type
    text(where);  // instance parent
    u64(where);   // grid position
    u64(where);   // block position
    const std::uint64_t end = u64(where);
    if (end > size)
      throw Error(path, "grid " + std::to_string(n) + " '" + name + "'",
                  "truncated: the grid ends at byte " + std::to_string(end) + ", the file at " +
                      std::to_string(size));
    if (end < at) return;  // not the layout expected: leave the verdict to OpenVDB
    at = end;
    in.seekg(std::streamoff(at));
  }
}

bool is_axis_aligned_uniform(const openvdb::math::Transform& t, double* voxel_size) {
  if (!t.isLinear()) return false;
  const openvdb::Vec3d o = t.indexToWorld(openvdb::Coord(0, 0, 0));
  const double h = t.voxelSize()[0];  // the map's own scale: exact, no subtraction round-off
  if (!(h > 0) || !std::isfinite(h)) return false;
  for (int a = 0; a < 3; ++a) {
    openvdb::Coord c(0, 0, 0);
    c[a] = 1;
    const openvdb::Vec3d e = t.indexToWorld(c) - o;
    for (int b = 0; b < 3; ++b)
      if (std::fabs(e[b] - (a == b ? h : 0.0)) > 1e-6 * h) return false;
  }
  *voxel_size = h;
  return true;
}

VolumeGrid to_dense(const std::string& path, const openvdb::GridBase::Ptr& base,
                    std::size_t index) {
  VolumeGrid out;
  out.name = base->getName();
  const std::string place = "grid " + std::to_string(index) + " '" + out.name + "'";
  auto grid = openvdb::gridPtrCast<openvdb::FloatGrid>(base);
  if (!grid)
    throw Error(path, place,
                "holds " + base->valueType() + " values; only float grids can be read");
  if (!is_axis_aligned_uniform(grid->transform(), &out.voxel_size))
    throw Error(path, place,
                "has a transform other than a uniform, axis-aligned scale plus translation (" +
                    grid->transform().mapType() + ")");
  openvdb::CoordBBox box = grid->evalActiveVoxelBoundingBox();
  // kinema's own files keep their full extent, inactive (zero) borders included.
  if (auto e = grid->getMetadata<openvdb::Vec3IMetadata>(kExtentMeta)) {
    const openvdb::Vec3i d = e->value();
    if (d.x() >= 1 && d.y() >= 1 && d.z() >= 1) {
      const openvdb::CoordBBox written(openvdb::Coord(0, 0, 0),
                                       openvdb::Coord(d.x() - 1, d.y() - 1, d.z() - 1));
      if (box.empty() || written.isInside(box)) box = written;
    }
  }
  if (box.empty()) box = openvdb::CoordBBox(openvdb::Coord(0, 0, 0), openvdb::Coord(0, 0, 0));
  const openvdb::Coord dim = box.dim();
  const std::int64_t count = std::int64_t(dim.x()) * dim.y() * dim.z();
  if (dim.x() < 1 || dim.y() < 1 || dim.z() < 1 || count > kMaxVoxels)
    throw Error(path, place, "spans too many voxels to read densely");
  out.nx = dim.x(), out.ny = dim.y(), out.nz = dim.z();
  const openvdb::Vec3d o = grid->transform().indexToWorld(box.min());
  out.origin = Vec3(o.x(), o.y(), o.z());
  out.values.resize(std::size_t(count));
  auto acc = grid->getConstAccessor();
  std::size_t v = 0;
  for (int k = 0; k < out.nz; ++k)
    for (int j = 0; j < out.ny; ++j)
      for (int i = 0; i < out.nx; ++i, ++v) {
        const float x = acc.getValue(box.min().offsetBy(i, j, k));
        if (!std::isfinite(x))
          throw Error(path,
                      place + ", voxel (" + std::to_string(i) + ", " + std::to_string(j) + ", " +
                          std::to_string(k) + ")",
                      "is not finite");
        out.values[v] = x;
      }
  return out;
}

}  // namespace

void write_vdb(const std::string& path, std::span<const VolumeGrid> grids,
               const VdbWriteOptions& options) {
  validate(path, grids, options);
  openvdb::initialize();  // registers the grid and metadata types; idempotent and thread-safe
  TempFile tmp(path);
  try {
    openvdb::GridPtrVec vdb_grids;
    for (const VolumeGrid& g : grids) vdb_grids.push_back(to_openvdb(g, options));
    openvdb::MetaMap meta;
    meta.insertMeta("creator", openvdb::StringMetadata("kinema"));
    if (options.frame) meta.insertMeta("kinema_frame", openvdb::Int32Metadata(*options.frame));
    if (options.time) meta.insertMeta("kinema_time", openvdb::DoubleMetadata(*options.time));
    openvdb::io::File file(tmp.name());
    file.write(vdb_grids, meta);
    file.close();
  } catch (const std::exception& e) {
    throw Error(path, "", std::string("cannot write the VDB file: ") + e.what());
  }
  // On disk before it replaces the old file, as write_file_atomically does.
  const int fd = ::open(tmp.name().c_str(), O_RDONLY);
  const bool synced = fd >= 0 && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!synced) throw Error(path, "", std::string("write failed: ") + std::strerror(errno));
  if (std::rename(tmp.name().c_str(), path.c_str()) != 0)
    throw Error(path, "", std::string("cannot replace the file: ") + std::strerror(errno));
  tmp.release();
}

std::vector<VolumeGrid> read_vdb(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(
        path, "",
        std::filesystem::exists(path, ec) ? "is not a regular file" : "cannot open: no such file");
  openvdb::initialize();
  openvdb::GridPtrVecPtr vdb_grids;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "", std::string("cannot open: ") + std::strerror(errno));
  // io::Stream reads io::File's format front to back, in file order. A read past the end throws
  // at once (a backstop for files check_complete cannot vouch for): io::File would read a cut
  // file's missing bytes as zeros, silently, and a length field cut in two would otherwise reach
  // OpenVDB's decompressors as a garbage size.
  in.exceptions(std::ios::failbit | std::ios::badbit);
  try {
    check_complete(path, in);
    in.seekg(0);
    openvdb::io::Stream stream(in, /*delayLoad=*/false);
    vdb_grids = stream.getGrids();
  } catch (const Error&) {
    throw;
  } catch (const std::ios_base::failure&) {
    throw Error(path, "", "truncated: the file ends before its last grid does");
  } catch (const std::exception& e) {
    throw Error(path, "", std::string("not a readable VDB file: ") + e.what());
  }
  std::vector<VolumeGrid> out;
  if (!vdb_grids) return out;
  for (std::size_t n = 0; n < vdb_grids->size(); ++n)
    out.push_back(to_dense(path, (*vdb_grids)[n], n));
  return out;
}

std::string vdb_frame_path(const std::string& pattern, int frame) {
  std::string out;
  int fields = 0;
  for (std::size_t p = 0; p < pattern.size(); ++p) {
    if (pattern[p] != '%') {
      out += pattern[p];
      continue;
    }
    const std::size_t start = p++;
    if (p < pattern.size() && pattern[p] == '%') {
      out += '%';
      continue;
    }
    const bool zero = p < pattern.size() && pattern[p] == '0';
    if (zero) ++p;
    int width = 0, digits = 0;
    while (p < pattern.size() && pattern[p] >= '0' && pattern[p] <= '9' && digits < 3)
      width = width * 10 + (pattern[p++] - '0'), ++digits;
    if (p >= pattern.size() || pattern[p] != 'd' || digits > 2)
      throw Error(pattern, "character " + std::to_string(start),
                  "only one integer field (%d, %4d, %04d) is allowed in a frame pattern");
    if (++fields > 1) throw Error(pattern, "", "has more than one %d field");
    // printf's rules: the sign comes first, zero padding after it, the width counts both.
    std::string digits_str = std::to_string(frame < 0 ? -std::int64_t(frame) : frame);
    const std::size_t len = digits_str.size() + (frame < 0 ? 1 : 0);
    const std::size_t pad = std::size_t(width) > len ? std::size_t(width) - len : 0;
    if (zero) digits_str.insert(0, pad, '0');
    if (frame < 0) digits_str.insert(0, 1, '-');
    if (!zero) digits_str.insert(0, pad, ' ');
    out += digits_str;
  }
  if (fields == 0) throw Error(pattern, "", "has no %d field for the frame number");
  return out;
}

}  // namespace kinema
