// tools/kinema/cli.h — what the `kinema` verbs share: global options, exit codes, progress
// reporting, humanoid lookup and small formatting helpers.
//
// Each verb lives in its own verb_<name>.cpp and registers itself with register_<name>(), which
// adds a CLI11 subcommand and returns the function that runs it after parsing. Verbs report
// failures by throwing: kinema::Error (bad input, I/O: exit 2) or UsageError (exit 1); main()
// turns every exception into a message on stderr and an exit code.
#pragma once

#include <cstdio>
#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kinema/character/asset.h"
#include "kinema/ik/foot_placement_clip.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/terrain.h"

namespace CLI {
class App;
}

namespace kinema::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;
inline constexpr int kExitFailure = 2;

/// A command line that parses but makes no sense (OUT equal to IN, a clip that does not exist
/// given by the user…): main() prints it and exits with 1.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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

/// What `kinema play` does once parsed (verb_play.cpp); `kinema demo` runs it too. Loads the
/// graph, plays it with the --param curves, writes OUT atomically, prints progress and a
/// one-line summary. Throws UsageError / kinema::Error like a verb.
struct PlayRequest {
  std::string graph, out;
  std::vector<std::string> params;  ///< NAME=SPEC, as given to --param
  double seconds = 6, fps = 30;
  bool in_place = false;  ///< --root-motion in-place
};
void run_play(const PlayRequest& request, const GlobalOptions& global);

/// What `kinema ik feet` does once parsed (verb_ik.cpp); `kinema demo` runs it too. Loads the
/// ground and the clip, finds the humanoid legs, runs place_feet_on_ground, writes OUT
/// atomically and prints the metrics (as text with each line prefixed by `indent`, or as JSON
/// when `json`; nothing when quiet). Throws UsageError / kinema::Error like a verb.
struct IkFeetRequest {
  std::string in, ground, out, clip;
  GroundFileOptions ground_options;
  /// fps 0: the clip's own rate (30 when it has none); ankle_heights may hold one value for all
  /// legs.
  ClipFootPlacementOptions options = [] {
    ClipFootPlacementOptions o;
    o.fps = 0;
    return o;
  }();
};
struct IkFeetResult {
  ClipFootPlacementReport report;
};
IkFeetResult run_ik_feet(const IkFeetRequest& request, const GlobalOptions& global, bool json,
                         const std::string& indent);

/// What `kinema match build` and `kinema match run` do once parsed (verb_match.cpp); `kinema
/// demo` runs them too. Both print their summary (nothing when quiet; JSON when `json`) and
/// throw UsageError / kinema::Error like a verb.
struct MatchBuildRequest {
  std::vector<std::string> inputs;
  std::string out, tags;
  double fps = 30;
  bool mirror = false, json = false, features_only = false;
  std::vector<double> speeds{1.0}, trajectory{0.33, 0.67, 1.0};
  int skip_frames = 0;
};
void run_match_build(const MatchBuildRequest& request, const GlobalOptions& global);
struct MatchRunRequest {
  std::string db, path, out, tags, exclude;
  double search_interval = 0.1, blend_time = 0.2, clamp_distance = 0.15, clamp_angle = 30;
  bool json = false, foot_locking = false;
};
void run_match_run(const MatchRunRequest& request, const GlobalOptions& global);

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

/// load_asset() with a clearer message for a folder given as a file.
Asset load_input(const std::string& path, const LoadOptions& options);

/// Prints the human-readable summary `kinema info` shows: counts, clips, source, humanoid, and
/// (when `show_tree`) the joint tree with humanoid-mapped joints marked.
void print_info(const Asset& asset, const std::string& file, std::ostream& out, bool show_tree);

/// The clip's frame rate: its sample_rate, else the rate of its keys when they are evenly spaced
/// (a glTF animation carries times, not a rate), else 0.
double frame_rate_of(const Clip& clip);

/// Metres per unit for a CLI unit name ("m", "cm", "mm", "inch", "cmu"); throws UsageError.
double unit_from_name(const std::string& name);

/// Index of a clip given by name or index; throws UsageError listing the clips when it is not
/// there.
int find_clip(const Asset& asset, const std::string& name_or_index, const std::string& file);

/// True when two paths name the same file (after resolving links, or lexically when neither
/// exists yet).
bool same_file(const std::string& a, const std::string& b);

/// "2.86", "0.5": a number with up to `digits` decimals, trailing zeros removed.
std::string format_number(double value, int digits = 3);

/// "1.2 MB", "340 kB", "12 B".
std::string format_bytes(unsigned long long bytes);

/// Frames, duration and rate of a clip as "343 frames, 2.86 s at 120 fps".
std::string describe_clip(const Clip& clip);

}  // namespace kinema::cli
