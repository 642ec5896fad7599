// kinema/learn/train.h — training learned motion matching (Holden, Kanoun, Perepichka and Popa,
// "Learned Motion Matching", SIGGRAPH 2020) from a motion-matching database, offline.
//
// The only module that links a training library (libtorch, Debian's libtorch-dev); what it
// produces is a kinema::match::LearnedModel that runs on kinema's own kernels
// (kinema/match/learned.h). Three stages, as in the paper:
//   1. decompressor, with a compressor that learns a latent z per frame: the compressor maps a
//      frame's pose vector to z, the decompressor maps [x, z] back to the pose vector. Losses: the
//      pose vector (local translations, rotation columns, root step, contacts), the joints'
//      model-space positions and rotations through forward kinematics, their velocities over a
//      frame (pairs of consecutive frames), and a small L1 + L2 penalty and a smoothness
//      penalty on z. Afterwards every frame's z is the compressor's output;
//   2. stepper, on windows of `stepper_window` consecutive frames, rolled out from the window's
//      first true state: losses on the states and on their changes per frame;
//   3. projector, on noisy queries (a database frame's features plus Gaussian noise of a random
//      scale) whose target is the exact nearest frame (kinema's search): losses on x, z and on the
//      query-to-answer distance.
// Sampling and initialization come from `seed`: the same database, options and thread count
// give the same model, bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kinema/match/database.h"
#include "kinema/match/learned.h"

namespace kinema::learn {

struct TrainOptions {
  uint32_t latent_dims = 32;
  /// Hidden units of each network's layers (the paper uses 512 throughout).
  uint32_t hidden = 512;
  /// Hidden layers: compressor 3 (fixed), decompressor 1, stepper 2, projector 4 (the paper's).
  uint32_t decompressor_layers = 1, stepper_layers = 2, projector_layers = 4;
  /// Passes over the database's frames for each network: iterations = ⌈epochs · frames / batch⌉,
  /// at least `min_iterations`.
  double epochs = 20;
  uint32_t min_iterations = 500;
  uint32_t batch = 32;
  double learning_rate = 1e-3;   ///< AdamW, decayed ×0.1 over each network's training
  uint32_t stepper_window = 16;  ///< frames rolled out per stepper sample
  /// Foot contacts, the decompressor's last two outputs (database_foot_contacts).
  double contact_height = 0.05, contact_speed = 0.5;
  uint64_t seed = 1;
  int threads = 1;  ///< libtorch intra-op threads (results are reproducible per thread count)
};

/// One network's loss during training, averaged over `every` iterations.
struct LossCurve {
  std::string network;  ///< "decompressor", "stepper", "projector"
  uint32_t every = 1;
  std::vector<double> losses;
};

struct TrainReport {
  std::vector<LossCurve> curves;
  double seconds[3] = {0, 0, 0};  ///< decompressor (with compressor), stepper, projector
  uint32_t iterations[3] = {0, 0, 0};
  /// How far kinema's kernels (match::Mlp::evaluate) are from libtorch's forward pass on 256
  /// training inputs of each network: the largest |kinema − libtorch| / max(1, |libtorch|).
  double export_error[3] = {0, 0, 0};
  /// Every database frame's latent z (frames × latent_dims), the compressor's output: with the
  /// features, the state the stepper and projector were trained on.
  std::vector<float> latents;
};

/// Progress: network (0, 1, 2), iterations done of total.
using TrainProgress = std::function<void(int network, uint32_t done, uint32_t total)>;

/// Trains the three networks on the database (which needs poses and trajectory features).
/// Throws kinema::Error for a database without poses, with fewer than two frames in every clip,
/// or bad options (zero sizes, epochs not > 0, threads < 1).
match::LearnedModel train_learned_model(const match::Database& db, const TrainOptions& options = {},
                                        TrainReport* report = nullptr,
                                        const TrainProgress& progress = {});

}  // namespace kinema::learn
