// tools/kinema/verb_boids.cpp — `kinema boids -o OUT.pc2 [--count N] [--seconds S] [--step H]
// [--dimensions 2|3] [--world M] [--unbounded] [--seed K] [--weights S,A,C] [--speed MIN,MAX]
// [--radius R] [--separation R] [--threads N] [--json]`.
//
// Parses the options and runs pipeline::run_boids (kinema/pipeline/boids.h, docs/procedural.md): a
// flock scattered with random headings, flown for S seconds, written as a PC2 point cache with its
// particle sidecar (.kpa) — `kinema render OUT.pc2` draws it. Prints how aligned the flock flies
// and how many groups it makes, at the start and the end.
//
// Exit codes: 1 for a command line that makes no sense (OUT not .pc2, a world narrower than
// twice the radius, weights or speeds out of range); 2 for a write failure.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/boids.h"

namespace kinema::cli {

namespace {

struct BoidsArgs {
  pipeline::BoidsRequest request;
  std::vector<double> weights{1.5, 1, 0.6}, speed{1.5, 3};
  bool unbounded = false, json = false;
};

int run_boids(BoidsArgs& a, const GlobalOptions& global) {
  pipeline::BoidsRequest& r = a.request;
  r.settings.separation_weight = a.weights[0];
  r.settings.alignment_weight = a.weights[1];
  r.settings.cohesion_weight = a.weights[2];
  r.settings.min_speed = a.speed[0];
  r.settings.max_speed = a.speed[1];
  r.periodic = !a.unbounded;
  JobProgress bars(global.progress_enabled());
  r.progress = bars.callback();
  const pipeline::BoidsReport report = pipeline::run_boids(r);
  bars.done();
  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = report.cache_path;
    j["sidecar"] = report.sidecar_path;
    j["boids"] = report.boids;
    j["dimensions"] = r.settings.dimensions;
    j["world_m"] = report.world;
    j["periodic"] = r.periodic;
    j["steps"] = report.steps;
    j["frames"] = report.frames;
    j["alignment_start"] = report.alignment_start;
    j["alignment_end"] = report.alignment_end;
    j["flocks_start"] = report.flocks_start;
    j["flocks_end"] = report.flocks_end;
    j["ms_per_step"] = 1e3 * report.seconds_per_step;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema boids: " << report.boids << " boids in "
              << (r.settings.dimensions == 2 ? "2-D" : "3-D") << ", a "
              << format_number(report.world) << " m " << (r.periodic ? "periodic " : "")
              << "world, " << report.steps << " steps of " << format_number(r.step) << " s ("
              << format_number(1e3 * report.seconds_per_step, 3) << " ms a step)\n"
              << "  alignment " << format_number(report.alignment_start, 3) << " → "
              << format_number(report.alignment_end, 3) << " (1: all one way), flocks "
              << report.flocks_start << " → " << report.flocks_end << '\n'
              << "  " << report.cache_path << " (" << report.frames << " frames), "
              << report.sidecar_path << '\n';
  }
  return kExitOk;
}

}  // namespace

VerbRun register_boids(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<BoidsArgs>();
  pipeline::BoidsRequest& r = args->request;
  CLI::App* boids = app.add_subcommand(
      "boids",
      "Fly a flock by Reynolds' rules (separation, alignment, cohesion) and write it as a PC2 "
      "point cache that kinema render draws");
  boids->add_option("-o,--out", r.out, "The point cache to write (.pc2; its .kpa beside it)")
      ->required();
  boids->add_option("--count", r.count, "Boids")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  boids->add_option("--seconds", r.seconds, "Seconds to fly")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 36000.0));
  boids->add_option("--step", r.step, "Seconds a step (one cache frame each)")
      ->capture_default_str()
      ->check(CLI::Range(0.0001, 1.0));
  boids->add_option("--dimensions", r.settings.dimensions, "2 (the xy-plane) or 3")
      ->capture_default_str()
      ->check(CLI::IsMember({2, 3}));
  boids->add_option("--world", r.world,
                    "Metres across the start square or cube, and the periodic world (default: 7 m "
                    "for 48 boids, the same density for other counts)");
  boids->add_flag("--unbounded", args->unbounded,
                  "No wrap-around: boids leaving the start area fly on");
  boids->add_option("--seed", r.seed, "Seed of the scatter")->capture_default_str();
  boids->add_option("--weights", args->weights, "Separation, alignment, cohesion")
      ->expected(3)
      ->delimiter(',')
      ->capture_default_str();
  boids->add_option("--speed", args->speed, "Least and greatest speed (m/s)")
      ->expected(2)
      ->delimiter(',')
      ->capture_default_str();
  boids->add_option("--radius", r.settings.neighbour_radius, "Metres within which mates are seen")
      ->capture_default_str();
  boids
      ->add_option("--separation", r.settings.separation_radius,
                   "Metres under which a mate is too close")
      ->capture_default_str();
  boids->add_option("--threads", r.settings.threads, "Threads (0: all cores; same result)")
      ->capture_default_str();
  boids->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global]() { return run_boids(*args, global); };
}

}  // namespace kinema::cli
