// kinema/pipeline/demo.h — `kinema demo` as a library call: a tour of what kinema does, on the
// bundled data (a CMU walk, a skinned VRM character, the pab walk and run, stairs and a slope) or
// on a caller's MOTION [CHARACTER].
//
// Steps, in order: load both files; convert the motion to GLB and back to BVH and measure what
// the round trip moved (refused past 1 mm); retarget the motion onto the character by humanoid
// bone names (GLB, and VRM 1.0 for a VRM character); push the retargeted arms out of the
// character's body (the clean job: cleaned GLB, report, preview of the worst frames, depth plot);
// and with the bundled data, play the walk/run locomotion graph (the play job), build a
// motion-matching database and drive it along a scripted stick (the match jobs), place the walk's
// feet on stairs and a slope (the feet job), drop a cloth onto a sphere (the sim job); bake the
// character's spring bones into the retargeted walk (a VRM with spring bones); then compress the
// motion within 0.01 cm and render contact sheets of what was made. Every step reports to an
// observer as it starts and when it is done, so a caller can show it as it goes; the jobs never
// print.
#pragma once

#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "kinema/character/compare.h"
#include "kinema/compress/compress.h"
#include "kinema/pipeline/clean.h"
#include "kinema/pipeline/crowd.h"
#include "kinema/pipeline/feet.h"
#include "kinema/pipeline/gait.h"
#include "kinema/pipeline/match.h"
#include "kinema/pipeline/play.h"
#include "kinema/pipeline/ragdoll.h"
#include "kinema/pipeline/retarget.h"
#include "kinema/pipeline/sim.h"
#include "kinema/pipeline/spring_bones.h"

namespace kinema::pipeline {

struct DemoRequest {
  std::string motion;     ///< any file with a clip
  std::string character;  ///< a character to retarget onto, or empty
  /// The bundled data folder when the demo runs on it (enables the graph, motion-matching and
  /// foot-placement steps, whose files are there); empty for a caller's files.
  std::string bundled_data;
  std::string out_dir = "kinema-demo-out";  ///< created when missing
  LoadOptions load;
};

/// The request for the bundled data in `folder`: walk.bvh and the first of character.glb,
/// character.vrm, character.gltf. Throws kinema::Error when walk.bvh is not there.
DemoRequest demo_on_bundled_data(const std::string& folder);

// ---- what the demo reports, step by step -------------------------------------------------

/// The demo runs on the bundled data (reported first, only then).
struct DemoBundledData {
  std::string folder;
};
/// A file loaded: "motion" or "character".
struct DemoLoad {
  std::string role, path;
  const Asset* asset = nullptr;  ///< when done; valid during the report
};
/// MOTION → GLB → BVH, and the largest joint movement each leg of the trip caused.
struct DemoRoundTrip {
  std::string motion, glb, bvh;
  JointDistance glb_error, bvh_error;  ///< when done
  double tolerance = 1e-3;             ///< metres: past it the demo stops with an error
};
/// The motion retargeted onto the character.
struct DemoRetarget {
  std::string motion, character;  ///< character empty: skipped, none given
  std::string skipped;            ///< why it was skipped (no humanoid), else empty
  size_t motion_bones = 0, character_bones = 0;
  bool motion_guessed = false, character_guessed = false;  ///< maps guessed from joint names
  std::string glb, vrm, vrma;     ///< written (vrm and vrma only for a VRM character)
  std::string preview;            ///< source and result side by side (PNG)
  RetargetResult job;             ///< the retarget job's report: metrics before/after grounding
  const Asset* result = nullptr;  ///< the character with the motion; valid during the report
};
/// The retargeted clip's arms pushed out of the character's body (the clean job), when the
/// retarget step wrote a clip.
struct DemoClean {
  std::string
      skipped;  ///< why there is no result (the character has no skinned torso…), else empty
  CleanRequest request;
  CleanResult result;  ///< when done and not skipped
};
/// The locomotion graph played (bundled data).
struct DemoGraph {
  std::string skipped_folder;  ///< the graph is missing from this folder: skipped
  PlayRequest request;
  PlayResult result;  ///< when done
};
struct DemoMatchBuild {
  MatchBuildRequest request;
  MatchBuildResult result;  ///< when done
};
struct DemoMatchRun {
  MatchRunRequest request;
  MatchRunResult result;  ///< when done
};
/// Learned motion matching on the same database: a small model trained (reported as it starts),
/// then run along the same stick beside the database (when done).
struct DemoMatchLearn {
  MatchLearnRequest learn;
  MatchLearnResult learned;  ///< when done
  MatchRunRequest run;       ///< the model's run, `compare` the database
  MatchRunResult result;     ///< when done
};
/// The walk's feet placed on one ground (bundled data).
struct DemoFeet {
  std::string ground_file;     ///< its name in the bundled data
  std::string description;     ///< what the ground is
  std::string skipped_folder;  ///< the ground is missing from this folder: skipped
  FeetRequest request;
  FeetResult result;  ///< when done
};
struct DemoCompression {
  std::string motion, kmc;
  CompressionStats stats;  ///< when done
};
/// A bundled cloth scene run by `kinema sim` into a glTF: cloth.json (a sheet onto a sphere), and
/// cape.json (a cape on the retargeted walk, with the character's spring bones).
struct DemoCloth {
  std::string what;  ///< one line on what the scene is
  SimRequest request;
  SimResult result;  ///< when done
};
/// The character's spring bones (hair, ribbons) simulated over the retargeted walk and baked into
/// it by `kinema sim springbones`; only for a character that has spring bones.
struct DemoSpringBones {
  SpringBakeRequest request;
  SpringBakeResult result;  ///< when done
};
/// A hit reaction: the retargeted walk hit in the face, falling as a powered ragdoll (`kinema
/// ragdoll`); only for a skinned character.
struct DemoRagdoll {
  RagdollRequest request;
  RagdollResult result;  ///< when done
};
/// A crowd crossing a square (`kinema crowd` on the bundled crowd_square.json): 1,000 agents
/// round a fountain and four pillars, written as a point cache and drawn from above.
struct DemoCrowd {
  std::string skipped_folder;  ///< the scene is missing from this folder: skipped
  CrowdRequest request;
  CrowdReport result;  ///< when done
};
/// Procedural gaits up the bundled stairs (`kinema gait`): a spider and the character (when it
/// has humanoid legs) walk by themselves, no clip; each drawn on the stairs.
struct DemoGait {
  std::string skipped_folder;  ///< stairs.obj is missing from this folder: skipped
  std::vector<GaitRequest> requests;
  std::vector<GaitReport> results;  ///< when done, one per request
};
/// One contact sheet (6 frames, 320×240 each): written, or skipped without OpenGL.
struct DemoSheet {
  std::string png, what;
  std::string gl_renderer;  ///< what drew it
  std::string skipped;      ///< why there is no picture (no EGL driver), else empty
};
/// The walking character composited into a plate: a stand-in location "filmed" through a barrel
/// lens with film grain (kinema draws the plate: no footage ships), the character rendered with a
/// transparent background, distorted through the same lens, the plate's grain measured and
/// matched, a contact shadow added by differential rendering, then over the plate.
struct DemoComposite {
  std::string png;           ///< the composite, 8-bit sRGB
  std::string exr;           ///< the CG layer after lens and grain (half EXR, premultiplied)
  std::string gl_renderer;   ///< what drew the character
  std::string skipped;       ///< why there is no composite (no EGL driver), else empty
  double k1 = 0;             ///< the lens's barrel coefficient
  float grain_sigma = 0;     ///< the grain put on the plate (linear)
  float grain_measured = 0;  ///< what estimate_grain() found on the plate (green)
  double seconds = 0;
};
/// What was written, in order.
struct DemoProduced {
  std::string out_dir;
  std::vector<std::string> files;
};

struct DemoEvent {
  enum class Phase { Started, Done };
  Phase phase = Phase::Done;
  /// DemoSheet with Phase::Started announces the render step (before its first sheet).
  std::variant<DemoBundledData, DemoLoad, DemoRoundTrip, DemoRetarget, DemoClean, DemoGraph,
               DemoMatchBuild, DemoMatchRun, DemoMatchLearn, DemoFeet, DemoCloth, DemoSpringBones,
               DemoRagdoll, DemoCrowd, DemoGait, DemoCompression, DemoSheet, DemoComposite,
               DemoProduced>
      step;
};

/// Runs the demo, calling `observer` as each step starts and ends, and `progress` for the long
/// ones. Returns the files written. Throws UsageError for a request that would write over an
/// input; kinema::Error for unreadable files, a motion without a clip, a round trip that loses
/// joints or moves one past the tolerance, and the errors of the jobs it runs.
std::vector<std::string> run_demo(const DemoRequest& request,
                                  const std::function<void(const DemoEvent&)>& observer,
                                  const Progress& progress = {});

}  // namespace kinema::pipeline
