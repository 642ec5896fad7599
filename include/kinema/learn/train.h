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
#include "kinema/match/training.h"

namespace kinema::learn {

using match::LossCurve;
using match::TrainOptions;
using match::TrainProgress;
using match::TrainReport;

/// Trains the three networks on the database (which needs poses and trajectory features).
/// Throws kinema::Error for a database without poses, with fewer than two frames in every clip,
/// or bad options (zero sizes, epochs not > 0, threads < 1).
match::LearnedModel train_learned_model(const match::Database& db, const TrainOptions& options = {},
                                        TrainReport* report = nullptr,
                                        const TrainProgress& progress = {});

}  // namespace kinema::learn
