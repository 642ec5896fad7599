// tools/kinema/verb_match.cpp — `kinema match build CLIPS... -o DB.kmm [--tags TAGS.json]
// [--fps N] [--mirror] [--speeds LIST] [--trajectory LIST] [--skip-frames N] [--features-only]
// [--json]`, `kinema match learn DB.kmm -o MODEL.kml [--epochs N] [--threads N] [options]
// [--json]` and `kinema match run DB.kmm|MODEL.kml --path PATH.json -o OUT [--compare DB.kmm]
// [options] [--json]`.
//
// Parses the options, runs the pipeline job (kinema/pipeline/match.h: build_match_database,
// learn_match_model, run_match_along_path; docs/match.md) and prints its summary. TAGS.json and
// PATH.json are described in kinema/match/inputs.h.
//
// Exit codes: 1 for a command line that makes no sense (OUT not .kmm, OUT one of the inputs,
// bad lists, an unknown tag); 2 for bad input (unreadable or broken files, no humanoid legs, bad
// tags or path) or a write failure — OUT is then left as it was.
#include <iostream>
#include <memory>
#include <numbers>
#include <string>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/pipeline/match.h"
#include "match_summary.h"

namespace kinema::cli {

VerbRun register_match(CLI::App& app, const GlobalOptions& global) {
  struct BuildArgs {
    pipeline::MatchBuildRequest request;
    bool features_only = false, json = false;
  };
  struct RunArgs {
    pipeline::MatchRunRequest request;
    double clamp_angle_degrees = 30;
    bool json = false;
  };
  auto args = std::make_shared<BuildArgs>();
  pipeline::MatchBuildRequest& b = args->request;
  CLI::App* match = app.add_subcommand("match", "Motion matching: feature databases and search");
  match->require_subcommand(1);
  CLI::App* build = match->add_subcommand(
      "build",
      "Build a motion-matching database: per-frame trajectory and foot/hip features of every "
      "clip, normalized, tagged, written as .kmm");
  build->add_option("CLIPS", b.inputs, "Clip files (.bvh .glb .gltf .vrm .fbx .dae)")->required();
  build->add_option("-o,--out", b.out, "The database to write (.kmm)")->required();
  build->add_option("--tags", b.tags,
                    "JSON: {\"tags\": [{\"clip\", \"start\", \"end\", \"tag\"}]} (seconds)");
  build->add_option("--fps", b.database.fps, "Database frames per second")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1000.0));
  build->add_flag("--mirror", b.database.mirror, "Also add every clip mirrored left ↔ right");
  build->add_option("--speeds", b.database.speeds, "Playback speeds of every clip, e.g. 0.8,1,1.2")
      ->delimiter(',')
      ->check(CLI::Range(0.05, 20.0));
  build
      ->add_option("--trajectory", b.database.trajectory_times,
                   "Future times of the trajectory features, seconds (increasing)")
      ->delimiter(',')
      ->check(CLI::Range(0.001, 60.0));
  build->add_option("--skip-frames", b.skip_frames,
                    "Source frames skipped at the start of every clip (e.g. 1 for an added "
                    "T-pose frame)");
  build->add_flag("--features-only", args->features_only,
                  "Store features but no poses (clips on different skeletons; search "
                  "benchmarks). Without it every clip must share one skeleton");
  build->add_flag("--json", args->json, "Print the summary as one JSON object");

  struct LearnArgs {
    pipeline::MatchLearnRequest request;
    bool json = false;
  };
  auto learn_args = std::make_shared<LearnArgs>();
  pipeline::MatchLearnRequest& l = learn_args->request;
  CLI::App* learn = match->add_subcommand(
      "learn",
      "Learned motion matching (Holden et al. 2020): train a decompressor (with a latent per "
      "frame), a stepper and a projector on a database with libtorch; writes the model (.kml, "
      "run by kinema's own kernels) and its loss curves as a PNG");
  learn->add_option("DB", l.database, "The database to learn (.kmm, built with poses)")->required();
  learn->add_option("-o,--out", l.out, "The model to write (.kml)")->required();
  learn->add_option("--plot", l.plot, "The loss curves' PNG (default: OUT's stem + .losses.png)");
  learn
      ->add_option("--epochs", l.train.epochs, "Passes over the database's frames for each network")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1e6));
  learn
      ->add_option("--min-iterations", l.train.min_iterations,
                   "Iterations each network trains at least")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000000));
  learn
      ->add_option("--threads", l.train.threads,
                   "libtorch threads (results are reproducible for a given count)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  learn->add_option("--latent", l.train.latent_dims, "Latent numbers per frame")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  learn->add_option("--hidden", l.train.hidden, "Hidden units per layer of every network")
      ->capture_default_str()
      ->check(CLI::Range(1, 8192));
  learn->add_option("--batch", l.train.batch, "Samples per training step")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  learn->add_option("--learning-rate", l.train.learning_rate, "AdamW's initial learning rate")
      ->capture_default_str()
      ->check(CLI::Range(1e-8, 1.0));
  learn->add_option("--seed", l.train.seed, "Seed of initialization and sampling")
      ->capture_default_str();
  learn->add_flag("--json", learn_args->json, "Print the summary as one JSON object");

  struct EvaluateArgs {
    pipeline::MatchEvaluateRequest request;
    bool json = false;
  };
  auto evaluate_args = std::make_shared<EvaluateArgs>();
  pipeline::MatchEvaluateRequest& e = evaluate_args->request;
  CLI::App* evaluate = match->add_subcommand(
      "evaluate",
      "Measure a learned model on a database (e.g. clips held back from training): pose error "
      "of projector + decompressor, and how often the projector answers what the exact "
      "search does");
  evaluate->add_option("MODEL", e.model, "The learned model (.kml)")->required();
  evaluate->add_option("DB", e.database, "A database on the model's skeleton (.kmm, with poses)")
      ->required();
  evaluate->add_option("--noise", e.noise, "σ of the queries' noise (normalized feature units)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  evaluate->add_flag("--json", evaluate_args->json, "Print the report as one JSON object");

  auto run_args = std::make_shared<RunArgs>();
  pipeline::MatchRunRequest& r = run_args->request;
  CLI::App* run = match->add_subcommand(
      "run",
      "Drive a character through a database along a scripted stick path: trajectory "
      "prediction, search, inertialized transitions, root motion; writes the animation and "
      "reports searches, transitions, foot sliding and trajectory error");
  run->add_option("DB", r.database,
                  "The database (.kmm, built with poses) or a learned model (.kml)")
      ->required();
  run->add_option("--compare", r.compare,
                  "With a .kml: also run this database (.kmm) along the same path and report "
                  "both and how far apart they are");
  run->add_option("--path", r.path,
                  "JSON: {\"duration\": S, \"keys\": [{\"time\", \"direction\": [x, z], "
                  "\"speed\", \"facing\": [x, z]}]}")
      ->required();
  run->add_option("-o,--out", r.out, "The animation to write (.glb .gltf .bvh)")->required();
  run->add_option("--search-interval", r.controller.search_interval, "Seconds between searches")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  run->add_option("--blend-time", r.controller.blend_time, "Inertialization time, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 5.0));
  run->add_option("--clamp-distance", r.controller.clamp_distance,
                  "Metres the character may stray from the stick's path (0: pure root motion)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  run->add_option("--clamp-angle", run_args->clamp_angle_degrees,
                  "Degrees the character's facing may stray from the stick's (0: no clamp)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 180.0));
  run->add_option("--tags", r.tags, "Only frames with one of these tags (a,b,…)");
  run->add_option("--exclude", r.exclude, "Never frames with these tags (a,b,…)");
  run->add_flag("--foot-locking", r.controller.foot_locking,
                "Hold each ankle where its contact began (two-bone IK on hip, knee, ankle)");
  run->add_flag("--warp", r.controller.locomotion_warping,
                "Locomotion warping: scale the stride and turn the lower body where the "
                "character moves unlike the frame playing; holds planted feet (includes "
                "--foot-locking)");
  run->add_flag("--json", run_args->json, "Print the report as one JSON object");

  return [args, run_args, learn_args, evaluate_args, run, learn, evaluate, &global]() {
    JobProgress progress(global.progress_enabled());
    if (evaluate->parsed()) {
      const match::LearnedEvaluation r = pipeline::evaluate_match_model(evaluate_args->request);
      if (evaluate_args->json || !global.quiet)
        print_match_evaluate(evaluate_args->request, r, evaluate_args->json, std::cout);
    } else if (learn->parsed()) {
      const pipeline::MatchLearnResult result =
          pipeline::learn_match_model(learn_args->request, progress.callback());
      progress.done();
      if (learn_args->json || !global.quiet)
        print_match_learn(learn_args->request, result, learn_args->json, std::cout);
    } else if (run->parsed()) {
      pipeline::MatchRunRequest request = run_args->request;
      request.controller.clamp_angle = run_args->clamp_angle_degrees * std::numbers::pi / 180;
      const pipeline::MatchRunResult result =
          pipeline::run_match_along_path(request, progress.callback());
      progress.done();
      if (run_args->json || !global.quiet)
        print_match_run(request, result, run_args->json, std::cout);
    } else {
      pipeline::MatchBuildRequest request = args->request;
      request.database.store_poses = !args->features_only;
      request.load = global.load;
      const pipeline::MatchBuildResult result =
          pipeline::build_match_database(request, progress.callback());
      progress.done();
      if (args->json || !global.quiet) print_match_build(request, result, args->json, std::cout);
    }
    return kExitOk;
  };
}

}  // namespace kinema::cli
