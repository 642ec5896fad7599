#include "kinema/ik/chain.h"

namespace kinema {

bool ik_chain_valid(const IkChain& chain, std::span<const Quat> local) {
  const std::size_t n = chain.offsets.size();
  if (n == 0 || n > kMaxIkChainJoints || local.size() != n) return false;
  if (!is_finite(chain.base_position) || !is_finite(chain.base_rotation)) return false;
  if (!(length(chain.base_rotation) > 0)) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_finite(chain.offsets[i]) || !is_finite(local[i])) return false;
    if (!(length(local[i]) > 0)) return false;
  }
  return true;
}

bool ik_chain_fk(const IkChain& chain, std::span<const Quat> local, std::span<Quat> model,
                 std::span<Vec3> points) {
  const std::size_t n = chain.offsets.size();
  if (n == 0 || n > kMaxIkChainJoints || local.size() != n || model.size() != n ||
      points.size() != n + 1)
    return false;
  Quat r = normalize(chain.base_rotation);
  Vec3 p = chain.base_position;
  for (std::size_t i = 0; i < n; ++i) {
    r = normalize(r * local[i]);
    model[i] = r;
    points[i] = p;
    p = p + rotate(r, chain.offsets[i]);
  }
  points[n] = p;
  return true;
}

double ik_chain_reach(const IkChain& chain) {
  double sum = 0;
  for (const Vec3& o : chain.offsets) sum += length(o);
  return sum;
}

IkStatus ik_chain_status(const IkChain& chain, const Vec3& target, double error, double tolerance) {
  if (error <= tolerance) return IkStatus::kReached;
  if (distance(chain.base_position, target) > ik_chain_reach(chain)) return IkStatus::kUnreachable;
  return IkStatus::kMaxIterations;
}

}  // namespace kinema
