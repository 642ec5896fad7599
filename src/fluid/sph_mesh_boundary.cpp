// sph_mesh_boundary (kinema/fluid/sph.h): Akinci boundary particles sampling a closed mesh's
// solid to a few layers below its surface.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "kinema/fluid/mesh_sdf.h"
#include "kinema/fluid/sph.h"

namespace kinema {

std::vector<Vec3> sph_mesh_boundary(const MeshSdf& mesh, const Vec3& offset, double spacing,
                                    int layers, int dimensions) {
  const std::string place = "sph_mesh_boundary";
  const auto fail = [&](const std::string& reason) { throw Error("sph", place, reason); };
  if (dimensions != 2 && dimensions != 3)
    fail("dimensions must be 2 or 3, got " + std::to_string(dimensions));
  if (!(spacing > 0) || !std::isfinite(spacing)) fail("spacing must be positive and finite");
  if (layers < 0) fail("layers must be at least 0 (0: the whole solid)");
  if (!is_finite(offset)) fail("the offset must be finite");
  const Vec3 lo = mesh.lower() + offset, hi = mesh.upper() + offset;
  int n[3] = {1, 1, 1};
  double cells = 1;
  for (int a = 0; a < dimensions; ++a) {
    const double c = std::ceil((hi[a] - lo[a]) / spacing);
    cells *= std::max(1.0, c);
    if (cells > 64e6) fail("the mesh's box holds more than 64 million lattice points");
    n[a] = std::max(1, int(c));
  }
  if (dimensions == 2 && !(lo.z <= 0 && hi.z >= 0)) return {};  // the plane z = 0 misses it
  const double depth = layers > 0 ? layers * spacing : std::numeric_limits<double>::infinity();
  std::vector<Vec3> out;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const Vec3 p{lo.x + (i + 0.5) * spacing, lo.y + (j + 0.5) * spacing,
                     dimensions == 3 ? lo.z + (k + 0.5) * spacing : 0.0};
        const double d = mesh.distance(p - offset);
        if (d <= 0 && d > -depth) out.push_back(p);
      }
  return out;
}

}  // namespace kinema
