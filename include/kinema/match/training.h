// kinema/match/training.h — what training a learned motion-matching model takes and reports
// (kinema/learn/train.h trains; the pipeline runs it through the `learn` plugin, so that programs
// which never train do not load libtorch). Types only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kinema::match {

struct Database;
struct LearnedModel;

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

/// learn::train_learned_model's type: what the `learn` plugin's entry point,
/// `kinema_learn_train_v1`, returns.
using TrainLearnedModel = LearnedModel (*)(const Database& db, const TrainOptions& options,
                                           TrainReport* report, const TrainProgress& progress);

}  // namespace kinema::match
