// tools/kinema/cli.h — what the `kinema` verbs share: global options, exit codes, progress bars,
// the printers several verbs use, and small formatting helpers.
//
// Each verb lives in its own verb_<name>.cpp and registers itself with register_<name>(), which
// adds a CLI11 subcommand and returns the function that runs it after parsing: the function
// turns the options into a request, calls one library job (kinema/pipeline/*.h) and prints the
// result. Verbs report failures by throwing: kinema::Error (bad input, I/O: exit 2) or
// kinema::UsageError (exit 1); main() turns every exception into a message on stderr and an exit
// code.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "kinema/character/asset.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/pipeline/clean.h"
#include "kinema/pipeline/crowd.h"
#include "kinema/pipeline/demo.h"
#include "kinema/pipeline/feet.h"
#include "kinema/pipeline/format_number.h"
#include "kinema/pipeline/gait.h"
#include "kinema/pipeline/inspect.h"
#include "kinema/pipeline/job.h"
#include "kinema/pipeline/match.h"
#include "kinema/pipeline/play.h"

namespace CLI {
class App;
}

namespace kinema::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;
inline constexpr int kExitFailure = 2;

// A command line that parses but makes no sense (OUT equal to IN, a clip that does not exist
// given by the user…) throws kinema::UsageError (kinema/core/error.h): main() prints it and
// exits with 1.

/// Options every verb sees (set on the main app, accepted before or after the verb).
struct GlobalOptions {
  bool quiet = false;           ///< no summaries, no progress; errors only
  bool force_progress = false;  ///< progress bars even when stderr is not a terminal
  bool no_progress = false;     ///< never show progress bars
  /// How input files are read (--bvh-translation sets load.bvh.translation).
  LoadOptions load;
  /// True when progress bars should be drawn on stderr.
  bool progress_enabled() const;
};

/// The function a verb runs once the command line is parsed; returns the exit code.
using VerbRun = std::function<int()>;

VerbRun register_info(CLI::App& app, const GlobalOptions& global);
VerbRun register_convert(CLI::App& app, const GlobalOptions& global);
VerbRun register_demo(CLI::App& app, const GlobalOptions& global);
VerbRun register_play(CLI::App& app, const GlobalOptions& global);
VerbRun register_ik(CLI::App& app, const GlobalOptions& global);
VerbRun register_skin(CLI::App& app, const GlobalOptions& global);
VerbRun register_vat(CLI::App& app, const GlobalOptions& global);
VerbRun register_render(CLI::App& app, const GlobalOptions& global);
VerbRun register_match(CLI::App& app, const GlobalOptions& global);
VerbRun register_compress(CLI::App& app, const GlobalOptions& global);
VerbRun register_decompress(CLI::App& app, const GlobalOptions& global);
VerbRun register_retarget(CLI::App& app, const GlobalOptions& global);
VerbRun register_clean(CLI::App& app, const GlobalOptions& global);
VerbRun register_sim(CLI::App& app, const GlobalOptions& global);
VerbRun register_ragdoll(CLI::App& app, const GlobalOptions& global);
VerbRun register_boids(CLI::App& app, const GlobalOptions& global);
VerbRun register_drive(CLI::App& app, const GlobalOptions& global);
VerbRun register_grow(CLI::App& app, const GlobalOptions& global);
VerbRun register_crowd(CLI::App& app, const GlobalOptions& global);
VerbRun register_gait(CLI::App& app, const GlobalOptions& global);
VerbRun register_key(CLI::App& app, const GlobalOptions& global);
VerbRun register_comp(CLI::App& app, const GlobalOptions& global);
VerbRun register_undistort(CLI::App& app, const GlobalOptions& global);
VerbRun register_distort(CLI::App& app, const GlobalOptions& global);
VerbRun register_track(CLI::App& app, const GlobalOptions& global);
VerbRun register_solve(CLI::App& app, const GlobalOptions& global);
VerbRun register_view(CLI::App& app, const GlobalOptions& global);
VerbRun register_batch(CLI::App& app, const GlobalOptions& global);

/// A subcommand of a verb: its CLI app (to see whether it was given) and what it runs.
struct SubVerb {
  CLI::App* app = nullptr;
  VerbRun run;
};

/// `kinema sim springbones` (verb_sim_springbones.cpp), added under `sim`.
SubVerb register_sim_springbones(CLI::App& sim, const GlobalOptions& global);

/// What `kinema demo` prints when one of its steps starts or ends (demo_printer.cpp).
void print_demo_event(const pipeline::DemoEvent& event, std::ostream& out);

/// The summary `kinema crowd` prints (verb_crowd.cpp): its first line continues what the caller
/// wrote, the others start with `indent`; `kinema demo` prints it too.
void print_crowd(const pipeline::CrowdReport& report, const std::string& indent, std::ostream& out);

/// The summary `kinema gait` prints (verb_gait.cpp): its first line continues what the caller
/// wrote, the others start with `indent`; `kinema demo` prints it too.
void print_gait(const pipeline::GaitReport& report, const std::string& indent, std::ostream& out);

/// The line `kinema play` prints (verb_play.cpp); `kinema demo` prints it too.
void print_play(const pipeline::PlayRequest& request, const pipeline::PlayResult& result,
                std::ostream& out);

/// What `kinema ik feet` prints (verb_ik.cpp); `kinema demo` prints it too: the metrics as text
/// with each line prefixed by `indent`, or as one JSON object when `json`. The note on stderr
/// says when planted feet stay below a ground that rises beyond a knee bend.
void print_feet(const pipeline::FeetRequest& request, const pipeline::FeetResult& result, bool json,
                const std::string& indent, std::ostream& out);
void note_feet_below_ground(const pipeline::FeetRequest& request,
                            const pipeline::FeetResult& result);

/// What `kinema clean` prints (verb_clean.cpp); `kinema demo` prints it too: what was written and
/// a before/after table per arm, each line prefixed by `indent`.
void print_clean(const pipeline::CleanRequest& request, const pipeline::CleanResult& result,
                 const std::string& indent, std::ostream& out);

/// What `kinema match build` and `kinema match run` print (verb_match.cpp); `kinema demo`
/// prints them too: the summary as text, or as one JSON object when `json`.
void print_match_build(const pipeline::MatchBuildRequest& request,
                       const pipeline::MatchBuildResult& result, bool json, std::ostream& out);
void print_match_learn(const pipeline::MatchLearnRequest& request,
                       const pipeline::MatchLearnResult& result, bool json, std::ostream& out);
void print_match_run(const pipeline::MatchRunRequest& request,
                     const pipeline::MatchRunResult& result, bool json, std::ostream& out);

/// A one-line progress bar on stderr ("label [#####.....]  50%"), drawn only when enabled,
/// redrawn at most ~20 times per second, and erased by done() (or the destructor).
class Progress {
 public:
  Progress(std::string label, long total, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(long done);
  void done();

 private:
  std::string label_;
  long total_;
  bool enabled_;
  bool drawn_ = false;
  int last_percent_ = -1;
  double last_draw_ = -1;
};

/// Progress bars for a pipeline job: one bar per stage the job reports, drawn only when
/// enabled; the bar of a stage is erased when the next stage starts or the job ends.
class JobProgress {
 public:
  explicit JobProgress(bool enabled) : enabled_(enabled) {}
  /// The callback to hand to the job (valid while this object lives).
  pipeline::Progress callback();
  void done();

 private:
  bool enabled_;
  std::string stage_;
  std::unique_ptr<Progress> bar_;
};

using pipeline::load_input;
using pipeline::same_file;

/// Prints the human-readable summary `kinema info` shows: counts, clips, source, humanoid, and
/// (when `show_tree`) the joint tree with humanoid-mapped joints marked.
void print_info(const Asset& asset, const std::string& file, std::ostream& out, bool show_tree);

/// "2.86", "0.5": a number with up to `digits` decimals, trailing zeros removed.
using pipeline::format_number;
/// A whole decimal number, all of `s`.
bool parse_int(const std::string& s, int& v);
/// "640x480" → (640, 480); throws UsageError.
void parse_size(const std::string& s, int& w, int& h);

/// "1.2 MB", "340 kB", "12 B".
std::string format_bytes(unsigned long long bytes);

/// Frames, duration and rate of a clip as "343 frames, 2.86 s at 120 fps".
std::string describe_clip(const Clip& clip);

}  // namespace kinema::cli
