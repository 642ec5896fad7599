#include "kinema/ik/limit_hook.h"

namespace kinema {
namespace {

Quat project_joint(const void* context, std::size_t joint, const Quat& local) {
  const auto& l = *static_cast<const IkJointLimits*>(context);
  if (joint >= l.limits.size()) return local;
  const Quat ref = joint < l.reference.size() ? normalize(l.reference[joint]) : Quat::identity();
  return normalize(ref * project(l.limits[joint], conjugate(ref) * local));
}

}  // namespace

IkLimitHook make_limit_hook(const IkJointLimits& limits) { return {project_joint, &limits}; }

}  // namespace kinema
