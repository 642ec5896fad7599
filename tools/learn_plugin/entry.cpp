// libkinema_learn_torch.so: the `learn` module (training with libtorch) as a plugin. The pipeline
// opens it at run time when a model is trained (src/pipeline/learn_plugin.cpp), so the programs
// and the Python module that never train do not load libtorch (its start-up costs ~0.7 s of
// loading and operator registration per process). One C entry point, versioned by its name.
#include "kinema/learn/train.h"

extern "C" __attribute__((visibility("default"))) kinema::match::TrainLearnedModel
kinema_learn_train_v1() {
  return &kinema::learn::train_learned_model;
}
