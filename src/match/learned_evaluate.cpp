// Measuring a learned model against a database (kinema/match/learned.h): the decompressor's pose
// error through the projector, and how often the projector answers what the exact search does.
#include <algorithm>
#include <cmath>
#include <random>

#include "kinema/core/error.h"
#include "kinema/match/learned.h"
#include "kinema/match/search.h"
#include "kinema/math/mat4.h"

namespace kinema::match {

namespace {

double percentile_of(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

/// Model-space joint positions (metres, in the root frame) of a pose vector.
void pose_positions(const Skeleton& skeleton, std::span<const float> pose_vector,
                    std::vector<Transformf>& local_f, std::vector<Transform>& local,
                    std::vector<Mat4>& model, std::vector<Vec3>& out) {
  RootStep step;
  bool contacts[2];
  decode_pose(pose_vector, local_f, step, contacts);
  for (size_t j = 0; j < local.size(); ++j) local[j] = Transform(local_f[j]);
  local_to_model(skeleton.parents(), local, model);
  for (size_t j = 0; j < local.size(); ++j) out[j] = model[j].translation_part();
}

}  // namespace

LearnedEvaluation evaluate_learned_model(const LearnedModel& model, const Database& db,
                                         double noise, uint64_t seed) {
  if (!db.has_poses()) throw Error("", "database", "evaluation needs the database's poses");
  if (db.dims() != model.dims())
    throw Error("", "database",
                "the database has " + std::to_string(db.dims()) + " features a frame, the model " +
                    std::to_string(model.dims()));
  if (db.skeleton.joint_count() != model.skeleton.joint_count())
    throw Error("", "database", "the database's skeleton is not the model's");
  const std::vector<uint8_t> contacts = database_foot_contacts(db);
  const std::vector<float> truth = database_pose_vectors(db, contacts);
  const size_t J = size_t(db.skeleton.joint_count()), P = pose_vector_size(int(J)), D = db.dims();
  const BoundedTreeSearch search(db.features);
  LearnedPlayer player(model);
  std::vector<Transformf> local_f(J);
  std::vector<Transform> local(J);
  std::vector<Mat4> model_space(J);
  std::vector<Vec3> got(J), want(J);
  std::vector<double> pose_errors, excess, exact_costs;
  std::vector<float> query(D);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0, noise);
  size_t agree = 0;
  LearnedEvaluation e;
  for (uint32_t f = 0; f < db.frames(); ++f) {
    if (!db.features.searchable.empty() && !db.features.searchable[f]) continue;
    ++e.frames;
    const std::span<const float> x(db.features.values.data() + size_t(f) * D, D);
    player.project(x);
    player.jump_to_candidate();
    pose_positions(model.skeleton, player.decompress(), local_f, local, model_space, got);
    pose_positions(db.skeleton, std::span<const float>(truth).subspan(size_t(f) * P, P), local_f,
                   local, model_space, want);
    double sum = 0;
    for (size_t j = 0; j < J; ++j) sum += distance(got[j], want[j]);
    pose_errors.push_back(100 * sum / double(J));
    for (size_t d = 0; d < D; ++d) query[d] = x[d] + float(gauss(rng));
    const SearchResult exact = search.search(query);
    const float projected = player.project(query);
    const SearchResult snapped = search.search(player.candidate().first(D));
    agree += snapped.frame == exact.frame;
    excess.push_back(double(projected) - double(exact.cost));
    exact_costs.push_back(exact.cost);
  }
  if (e.frames == 0) throw Error("", "database", "no searchable frame to evaluate on");
  e.pose_error_p50_cm = percentile_of(pose_errors, 0.5);
  e.pose_error_p90_cm = percentile_of(pose_errors, 0.9);
  e.pose_error_p99_cm = percentile_of(pose_errors, 0.99);
  e.projector_agreement = double(agree) / double(e.frames);
  e.cost_excess_p50 = percentile_of(excess, 0.5);
  e.cost_excess_p90 = percentile_of(excess, 0.9);
  e.exact_cost_p50 = percentile_of(exact_costs, 0.5);
  return e;
}

}  // namespace kinema::match
