// The training targets of learned motion matching taken from a database: every frame's foot
// contacts and pose vector (kinema/match/learned.h). The controller plays the same numbers from
// a database, so a decompressor that rebuilds them plays what the exact search would.
#include <cmath>
#include <numbers>

#include "kinema/blend/root_motion.h"
#include "kinema/core/error.h"
#include "kinema/match/learned.h"
#include "kinema/math/mat4.h"

namespace kinema::match {

namespace {

double facing_yaw(const RootSample& r) { return std::atan2(r.facing_x, r.facing_z); }

double wrapped(double a) {
  while (a > std::numbers::pi) a -= 2 * std::numbers::pi;
  while (a < -std::numbers::pi) a += 2 * std::numbers::pi;
  return a;
}

void require_poses(const Database& db, const char* what) {
  if (!db.has_poses())
    throw Error("", "database",
                std::string(what) +
                    " needs the database's poses (built without "
                    "--features-only)");
}

}  // namespace

std::vector<uint8_t> database_foot_contacts(const Database& db, double contact_height,
                                            double contact_speed) {
  require_poses(db, "foot contact detection");
  const int joints = db.skeleton.joint_count();
  std::vector<uint8_t> contacts(2 * db.frames(), 0);
  std::vector<Transform> local(static_cast<size_t>(joints));
  std::vector<Mat4> model(static_cast<size_t>(joints));
  for (const DatabaseClip& c : db.clips) {
    if (c.frame_count < 2) continue;
    std::vector<Vec3> feet;
    for (uint32_t f = c.first_frame; f < c.first_frame + c.frame_count; ++f) {
      const std::span<const Transformf> pose = db.pose(f);
      for (size_t j = 0; j < local.size(); ++j) local[j] = Transform(pose[j]);
      local_to_model(db.skeleton.parents(), local, model);
      feet.push_back(model[size_t(db.joints.left_foot)].translation_part());
      feet.push_back(model[size_t(db.joints.right_foot)].translation_part());
    }
    const std::vector<uint8_t> flags =
        detect_foot_contacts(feet, 2, 1.0 / db.fps, {contact_height, contact_speed});
    std::copy(flags.begin(), flags.end(), contacts.begin() + 2 * std::ptrdiff_t(c.first_frame));
  }
  return contacts;
}

std::vector<float> database_pose_vectors(const Database& db, std::span<const uint8_t> contacts) {
  require_poses(db, "pose vectors");
  if (contacts.size() != 2 * db.frames())
    throw Error("", "contacts", "two flags per database frame are needed");
  const int joints = db.skeleton.joint_count();
  const size_t size = pose_vector_size(joints);
  std::vector<float> out(db.frames() * size);
  std::vector<Transformf> local(static_cast<size_t>(joints));
  for (const DatabaseClip& c : db.clips) {
    for (uint32_t f = c.first_frame; f < c.first_frame + c.frame_count; ++f) {
      const RootSample& r = db.roots[f];
      const Quatf unturn = Quatf(Quat::from_axis_angle({0, 1, 0}, -facing_yaw(r)));
      const std::span<const Transformf> pose = db.pose(f);
      for (int j = 0; j < joints; ++j) {
        Transformf t = pose[size_t(j)];
        if (db.skeleton.parent(j) == kNoParent) {
          t.translation = rotate(unturn, t.translation - Vec3f{r.x, 0, r.z});
          t.rotation = unturn * t.rotation;
        }
        local[size_t(j)] = t;
      }
      // The step into f within its clip; a clip's first frame takes the step out of it.
      const uint32_t from = f > c.first_frame ? f - 1 : f;
      const uint32_t to = from == f && f + 1 < c.first_frame + c.frame_count ? f + 1 : f;
      const RootSample &r0 = db.roots[from], &r1 = db.roots[to];
      const double dx = r1.x - r0.x, dz = r1.z - r0.z;
      RootStep step;
      step.x = float(dx * r0.facing_z - dz * r0.facing_x);
      step.z = float(dx * r0.facing_x + dz * r0.facing_z);
      step.turn = float(wrapped(facing_yaw(r1) - facing_yaw(r0)));
      const bool feet[2] = {contacts[2 * size_t(f)] != 0, contacts[2 * size_t(f) + 1] != 0};
      encode_pose(local, step, feet, std::span<float>(out).subspan(size_t(f) * size, size));
    }
  }
  return out;
}

}  // namespace kinema::match
