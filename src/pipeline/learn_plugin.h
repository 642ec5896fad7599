// The learn plugin (libkinema_learn_torch.so, tools/learn_plugin/entry.cpp) opened at run time:
// training through the pipeline without linking libtorch into every program.
#pragma once

#include "kinema/match/database.h"
#include "kinema/match/learned.h"
#include "kinema/match/training.h"

namespace kinema::pipeline {

/// learn::train_learned_model, run from the plugin. It is looked for in $KINEMA_LEARN_PLUGIN (a
/// file: then nowhere else), or beside the running program, beside the library or module that holds
/// this code (the Python module), in the build tree it was built in, and in the install prefix's
/// library folder; opened once per process. Throws kinema::Error naming the places tried when none
/// opens, and whatever training throws.
match::LearnedModel train_with_plugin(const match::Database& db, const match::TrainOptions& options,
                                      match::TrainReport* report,
                                      const match::TrainProgress& progress);

}  // namespace kinema::pipeline
