#include "kinema/math/soa_transform.h"

namespace kinema {

bool to_soa(std::span<const Transformf> aos, std::span<SoaTransform> soa) {
  if (soa.size() != static_cast<size_t>(soa_count(static_cast<int>(aos.size())))) return false;
  for (SoaTransform& s : soa) s = SoaTransform::identity();
  for (size_t j = 0; j < aos.size(); ++j) set_joint(soa, static_cast<int>(j), aos[j]);
  return true;
}

bool to_aos(std::span<const SoaTransform> soa, std::span<Transformf> aos) {
  if (soa.size() < static_cast<size_t>(soa_count(static_cast<int>(aos.size())))) return false;
  for (size_t j = 0; j < aos.size(); ++j) aos[j] = get_joint(soa, static_cast<int>(j));
  return true;
}

}  // namespace kinema
