// Opening the learn plugin (src/pipeline/learn_plugin.h).
#include "learn_plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "kinema/core/error.h"
#include "learn_plugin_paths.h"

namespace kinema::pipeline {

namespace {

namespace fs = std::filesystem;

constexpr const char* kPluginFile = "libkinema_learn_torch.so";

/// The folder of the file (program or shared object) this code was loaded from.
std::string folder_of_this_code() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&folder_of_this_code), &info) == 0 || !info.dli_fname)
    return {};
  std::error_code ec;
  const fs::path file = fs::weakly_canonical(info.dli_fname, ec);
  return ec ? std::string() : file.parent_path().string();
}

std::vector<std::string> candidates() {
  // $KINEMA_LEARN_PLUGIN, when set, is the only place looked at.
  if (const char* env = std::getenv("KINEMA_LEARN_PLUGIN"); env && *env) return {env};
  std::vector<std::string> out;
  std::error_code ec;
  if (const fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec)
    out.push_back((exe.parent_path() / kPluginFile).string());
  if (const std::string here = folder_of_this_code(); !here.empty())
    out.push_back((fs::path(here) / kPluginFile).string());
  out.emplace_back(learn_plugin_build_path());
  out.emplace_back(learn_plugin_install_path());
  return out;
}

match::TrainLearnedModel open_plugin() {
  static std::mutex mutex;
  static match::TrainLearnedModel train = nullptr;
  const std::lock_guard lock(mutex);
  if (train) return train;
  std::string tried;
  for (const std::string& path : candidates()) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      tried += "\n  " + path + ": not there";
      continue;
    }
    // Kept open for the process's life: the trained model's code lives there while it runs.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      tried += "\n  " + path + ": " + (why ? why : "does not open");
      continue;
    }
    using Entry = match::TrainLearnedModel (*)();
    const auto entry = reinterpret_cast<Entry>(dlsym(handle, "kinema_learn_train_v1"));
    if (!entry) {
      tried += "\n  " + path + ": no kinema_learn_train_v1 (another version of kinema?)";
      dlclose(handle);
      continue;
    }
    train = entry();
    return train;
  }
  throw Error("", "training",
              std::string("the learn plugin (") + kPluginFile +
                  ", built with kinema; it links libtorch) did not open:" + tried);
}

}  // namespace

match::LearnedModel train_with_plugin(const match::Database& db, const match::TrainOptions& options,
                                      match::TrainReport* report,
                                      const match::TrainProgress& progress) {
  return open_plugin()(db, options, report, progress);
}

}  // namespace kinema::pipeline
