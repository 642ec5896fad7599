// Learned motion matching trained in seconds on a small real database (CMU 07_12's walk and
// 06_11's turn on the Character Creator rig): the three networks learn (each beats the baseline
// of not learning), kinema's kernels reproduce libtorch's forward pass within 1e-5, training is
// reproducible bit for bit, the controller runs the model allocation-free, and bad input is
// refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/alloc_counter.h"
#include "common/cmu_locomotion.h"
#include "common/replace_global_new.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/learn/train.h"
#include "kinema/match/controller.h"
#include "kinema/match/learned.h"
#include "kinema/match/search.h"
#include "kinema/math/mat4.h"
#include "kinema/retarget/humanoid.h"

using namespace kinema;
using namespace kinema::match;

namespace {

const Database& locomotion() {
  static const Database db = test::build_cmu_locomotion({});
  return db;
}

/// Tiny networks: trained in a few seconds on two cores.
learn::TrainOptions tiny() {
  learn::TrainOptions o;
  o.latent_dims = 8;
  o.hidden = 64;
  o.epochs = 1;
  o.min_iterations = 600;
  o.batch = 32;
  o.learning_rate = 3e-3;
  o.stepper_window = 8;
  o.seed = 7;
  return o;
}

struct Trained {
  LearnedModel model;
  learn::TrainReport report;
};

const Trained& trained() {
  static const Trained t = [] {
    Trained r;
    r.model = learn::train_learned_model(locomotion(), tiny(), &r.report);
    return r;
  }();
  return t;
}

/// Model-space joint positions (metres, relative to the frame's root frame) of a pose vector.
std::vector<Vec3> joint_positions(const Skeleton& skeleton, std::span<const float> pose_vector) {
  std::vector<Transformf> local(size_t(skeleton.joint_count()));
  RootStep step;
  bool contacts[2];
  decode_pose(pose_vector, local, step, contacts);
  std::vector<Transform> l(local.size());
  for (size_t j = 0; j < l.size(); ++j) l[j] = Transform(local[j]);
  std::vector<Mat4> model(l.size());
  local_to_model(skeleton.parents(), l, model);
  std::vector<Vec3> out(l.size());
  for (size_t j = 0; j < l.size(); ++j) out[j] = model[j].translation_part();
  return out;
}

double mean_joint_distance_cm(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  double sum = 0;
  for (size_t j = 0; j < a.size(); ++j) sum += distance(a[j], b[j]);
  return 100 * sum / double(a.size());
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

}  // namespace

// (Tests that train the model share a process's cached model: few of them, each a process.)
TEST(LearnTrain, ReportsCurvesAndKernelsMatchLibtorchWithin1e5) {
  const Trained& t = trained();
  ASSERT_EQ(t.report.curves.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(t.report.iterations[i], tiny().min_iterations);
    EXPECT_GT(t.report.seconds[i], 0);
    ASSERT_GE(t.report.curves[size_t(i)].losses.size(), 10u);
    // Each network's loss falls: the last tenth of training well below the first.
    const std::vector<double>& l = t.report.curves[size_t(i)].losses;
    EXPECT_LT(l.back(), 0.6 * l.front()) << t.report.curves[size_t(i)].network;
  }
  EXPECT_EQ(t.report.latents.size(), locomotion().frames() * tiny().latent_dims);
  EXPECT_EQ(t.model.trained_frames, locomotion().frames());
  EXPECT_EQ(t.model.state_size(), locomotion().dims() + tiny().latent_dims);
  // kinema's kernels against libtorch's forward pass, on 256 training inputs per network.
  for (int i = 0; i < 3; ++i) EXPECT_LT(t.report.export_error[i], 1e-5) << i;
}

TEST(LearnTrain, SameSeedSameBits) {
  learn::TrainOptions o = tiny();
  o.min_iterations = 60;
  o.hidden = 16;
  const LearnedModel a = learn::train_learned_model(locomotion(), o);
  const LearnedModel b = learn::train_learned_model(locomotion(), o);
  EXPECT_EQ(serialize_learned_model(a), serialize_learned_model(b));
  o.seed = 8;
  const LearnedModel c = learn::train_learned_model(locomotion(), o);
  EXPECT_NE(serialize_learned_model(a), serialize_learned_model(c));
}

namespace {

void expect_decompressor_rebuilds_the_database_poses() {
  // Every frame's pose from its features and learned latent, against the database's pose: joint
  // positions relative to the root frame. Tiny networks after 600 steps: p50 under 4 cm, p99
  // under 12 cm, and far better than the mean pose.
  const Database& db = locomotion();
  const Trained& t = trained();
  const std::vector<uint8_t> contacts = database_foot_contacts(db);
  const std::vector<float> truth = database_pose_vectors(db, contacts);
  const size_t P = pose_vector_size(db.skeleton.joint_count()), D = db.dims(),
               L = t.model.latent_dims;
  std::vector<float> mean_pose(P, 0);
  for (size_t f = 0; f < db.frames(); ++f)
    for (size_t i = 0; i < P; ++i) mean_pose[i] += truth[f * P + i] / float(db.frames());
  std::vector<float> in(D + L), out(P), scratch(t.model.decompressor.scratch_floats());
  std::vector<double> errors, baseline;
  for (size_t f = 0; f < db.frames(); ++f) {
    std::copy_n(db.features.values.data() + f * D, D, in.data());
    std::copy_n(t.report.latents.data() + f * L, L, in.data() + D);
    t.model.decompressor.evaluate(in, out, scratch);
    const std::vector<Vec3> want =
        joint_positions(db.skeleton, std::span<const float>(truth).subspan(f * P, P));
    errors.push_back(mean_joint_distance_cm(joint_positions(db.skeleton, out), want));
    baseline.push_back(mean_joint_distance_cm(joint_positions(db.skeleton, mean_pose), want));
  }
  const double p50 = percentile(errors, 0.5), p99 = percentile(errors, 0.99);
  std::printf("decompressor: p50 %.2f cm, p99 %.2f cm (mean pose: p50 %.2f cm)\n", p50, p99,
              percentile(baseline, 0.5));
  EXPECT_LT(p50, 4.0);
  EXPECT_LT(p99, 12.0);
  EXPECT_LT(p50, 0.5 * percentile(baseline, 0.5));
}

void expect_stepper_follows_the_clip_better_than_standing_still() {
  // From a true state, 8 steps of the stepper against the database's next 8 states: closer than
  // holding the first state.
  const Database& db = locomotion();
  const Trained& t = trained();
  const size_t D = db.dims(), L = t.model.latent_dims;
  LearnedPlayer player(t.model);
  double stepped = 0, held = 0;
  std::vector<float> state(D + L);
  int windows = 0;
  for (const DatabaseClip& c : db.clips)
    for (uint32_t f = c.first_frame; f + 8 < c.first_frame + c.frame_count; f += 10) {
      const auto state_of = [&](uint32_t g) {
        std::copy_n(db.features.values.data() + size_t(g) * D, D, state.data());
        std::copy_n(t.report.latents.data() + size_t(g) * L, L, state.data() + D);
        return state;
      };
      player.set_state(state_of(f));
      const std::vector<float> start = state;
      for (int k = 0; k < 8; ++k) player.step();
      const std::vector<float> want = state_of(f + 8);
      for (size_t d = 0; d < D; ++d) {
        stepped += std::abs(player.features()[d] - want[d]);
        held += std::abs(start[d] - want[d]);
      }
      ++windows;
    }
  ASSERT_GT(windows, 10);
  EXPECT_LT(stepped, 0.5 * held);
}

void expect_projector_agrees_with_the_exact_search() {
  // Queries: database frames' features with a little noise. The projector's answer, snapped to
  // its nearest database frame, is the exact search's answer on most queries, and the cost of
  // the projected features is within a bound of the exact best.
  const Database& db = locomotion();
  const Trained& t = trained();
  const BruteForceSearch search(db.features);
  LearnedPlayer player(t.model);
  const size_t D = db.dims();
  std::vector<float> query(D);
  uint64_t s = 12345;
  const auto noise = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return (double((s >> 11) & 0xffff) / 65535.0 - 0.5) * 0.2;
  };
  int agree = 0, total = 0;
  std::vector<double> excess;
  for (uint32_t f = 0; f < db.frames(); f += 3) {
    if (!db.features.searchable[f]) continue;
    for (size_t d = 0; d < D; ++d)
      query[d] = db.features.values[size_t(f) * D + d] + float(noise());
    const SearchResult exact = search.search(query);
    const float projected_cost = player.project(query);
    const SearchResult snapped = search.search(player.candidate().first(D));
    agree += snapped.frame == exact.frame;
    ++total;
    excess.push_back(double(projected_cost) - double(exact.cost));
  }
  const double rate = double(agree) / total;
  std::printf(
      "projector: %d / %d queries answered with the exact frame (%.0f%%); cost excess "
      "p50 %.3f, p90 %.3f\n",
      agree, total, 100 * rate, percentile(excess, 0.5), percentile(excess, 0.9));
  EXPECT_GT(rate, 0.5);  // most queries
  EXPECT_LT(percentile(excess, 0.5), 1.0);
}

}  // namespace

TEST(LearnTrain, DecompressorStepperAndProjectorLearnTheirJobs) {
  expect_decompressor_rebuilds_the_database_poses();
  expect_stepper_follows_the_clip_better_than_standing_still();
  expect_projector_agrees_with_the_exact_search();
}

TEST(LearnTrain, ControllerRunsTheModelWithoutAllocating) {
  ControllerOptions options;
  options.foot_locking = true;
  Controller controller(trained().model, options);
  EXPECT_TRUE(controller.learned());
  controller.reset(0);
  ControllerInput input;
  input.velocity = {0, 0, 1.3};
  for (int f = 0; f < 10; ++f) controller.update(input);
  test::start_counting_allocations();
  for (int f = 0; f < 90; ++f) controller.update(input);
  EXPECT_EQ(test::stop_counting_allocations(), 0);
  EXPECT_GT(controller.searches(), 5u);
  // It walks along +Z at about the asked speed (root motion pulled towards the stick).
  EXPECT_GT(controller.root_position().z, 0.8 * 1.3 * 3);
  for (const Transformf& t : controller.pose()) {
    EXPECT_TRUE(std::isfinite(t.translation.x) && std::isfinite(t.rotation.w));
  }
}

TEST(LearnTrain, RefusesBadOptionsAndDatabases) {
  learn::TrainOptions o = tiny();
  o.epochs = 0;
  EXPECT_THROW(learn::train_learned_model(locomotion(), o), Error);
  o = tiny();
  o.threads = 0;
  EXPECT_THROW(learn::train_learned_model(locomotion(), o), Error);
  o = tiny();
  o.latent_dims = 0;
  EXPECT_THROW(learn::train_learned_model(locomotion(), o), Error);
  Database features_only = locomotion();
  features_only.poses.clear();
  try {
    learn::train_learned_model(features_only, tiny());
    FAIL() << "a database without poses was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("poses"), std::string::npos) << e.what();
  }
}
