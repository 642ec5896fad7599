// The demo's steps (module-private): the Demo class that demo.cpp runs step by step, and whose
// pictures (contact sheets of the steps' outputs) demo_render.cpp draws.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/pipeline/demo.h"
#include "kinema/pipeline/render.h"

namespace kinema::pipeline::demo_detail {

namespace fs = std::filesystem;

/// What one demo run shares between its steps.
class Demo {
 public:
  Demo(const DemoRequest& request, const std::function<void(const DemoEvent&)>& observer,
       const Progress& progress)
      : rq_(request), observer_(observer), progress_(progress), out_dir_(request.out_dir) {}

  std::vector<std::string> run();

 private:
  template <class Step>
  void report(DemoEvent::Phase phase, const Step& step) const {
    if (observer_) observer_(DemoEvent{phase, step});
  }
  /// `name` in the output folder, refused when it is an input (kinema demo walk.glb -o . would).
  std::string output(const std::string& name) const;
  /// Marks `path` written.
  void produced(const std::string& path) { produced_.push_back(path); }
  bool bundled() const { return !rq_.bundled_data.empty(); }
  fs::path bundled_file(const char* name) const { return fs::path(rq_.bundled_data) / name; }

  Asset load(const std::string& role, const std::string& path);
  void round_trip();
  void retarget();
  void clean(const std::string& retargeted_file);
  void graph();
  void motion_matching();
  void feet();
  void cloth();
  std::optional<DemoCloth> bundled_scene(const char* scene_file, const char* out, std::string what,
                                         const std::string& character_file = {});
  void liquid();
  void smoke();
  void spring_bones();
  void ragdoll();
  std::optional<DemoCloth> walk_scene(const char* scene_file, const char* out, std::string what);
  void cape();
  void bodies();
  void crowd();
  void gaits();
  void compression();
  void render();
  /// Renders `request` (a contact sheet) and reports it; without OpenGL the step says why and
  /// the demo goes on. `name`: the PNG's name in the output folder.
  void render_sheet(const RenderRequest& request, const std::string& name, std::string what);
  void composite_shot();

  const DemoRequest& rq_;
  const std::function<void(const DemoEvent&)>& observer_;
  const Progress& progress_;
  fs::path out_dir_;
  std::string stem_;
  Asset motion_;
  std::optional<Asset> character_, retargeted_;
  std::string retargeted_file_;  // the retarget step's GLB, when written
  std::vector<std::string> produced_;
};

}  // namespace kinema::pipeline::demo_detail
