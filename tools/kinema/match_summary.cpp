// tools/kinema/match_summary.cpp — the summaries of a motion-matching database and of a learned
// model that `kinema match` and `kinema info` print (tools/kinema/match_summary.h), and the
// reports of `kinema match build`, `learn`, `run` and `evaluate` (declared in cli.h and
// match_summary.h).
#include "match_summary.h"

#include <numbers>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli.h"
#include "kinema/pipeline/match.h"
#include "skate_report.h"

namespace kinema::cli {

nlohmann::ordered_json database_json(const match::Database& db, size_t file_bytes) {
  size_t searchable = 0;
  for (const uint8_t s : db.features.searchable) searchable += s != 0;
  nlohmann::ordered_json j;
  j["variants"] = db.clips.size();
  j["frames"] = db.frames();
  j["searchable_frames"] = searchable;
  j["features"] = db.dims();
  j["fps"] = db.fps;
  j["trajectory_times"] = db.trajectory_times;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const match::FeatureGroup& g : db.groups)
    groups.push_back({{"name", g.name},
                      {"offset", g.offset},
                      {"dims", g.dims},
                      {"weight", g.weight},
                      {"scale", g.scale}});
  j["groups"] = std::move(groups);
  j["tags"] = db.tag_names;
  j["feature_bytes"] = db.feature_bytes();
  j["bytes_per_frame"] = db.frames() ? double(db.feature_bytes()) / double(db.frames()) : 0.0;
  j["poses"] = db.has_poses();
  j["joints"] = db.has_poses() ? db.skeleton.joint_count() : 0;
  j["file_bytes"] = file_bytes;
  nlohmann::ordered_json variants = nlohmann::ordered_json::array();
  for (const match::DatabaseClip& c : db.clips)
    variants.push_back({{"name", c.name},
                        {"mirrored", c.mirrored},
                        {"speed", c.speed},
                        {"start_time", c.start_time},
                        {"first_frame", c.first_frame},
                        {"frame_count", c.frame_count}});
  j["clip_variants"] = std::move(variants);
  return j;
}

void print_database(const match::Database& db, size_t file_bytes, bool clips, std::ostream& out) {
  size_t searchable = 0;
  for (const uint8_t s : db.features.searchable) searchable += s != 0;
  bool mirrored = false;
  for (const match::DatabaseClip& c : db.clips) mirrored = mirrored || c.mirrored;
  out << "  frames " << db.frames() << " (" << db.clips.size() << " variants"
      << (mirrored ? ", mirrored" : "") << ", " << format_number(db.fps) << " fps), " << searchable
      << " searchable\n"
      << "  features " << db.dims() << " a frame in " << db.groups.size() << " groups\n"
      << "  memory " << format_bytes(db.feature_bytes()) << " ("
      << format_number(db.frames() ? double(db.feature_bytes()) / double(db.frames()) : 0.0, 1)
      << " B a frame), file " << format_bytes(file_bytes) << "\n"
      << "  poses "
      << (db.has_poses() ? std::to_string(db.skeleton.joint_count()) + " joints a frame"
                         : std::string("not stored (--features-only)"))
      << "\n";
  if (!db.tag_names.empty()) {
    out << "  tags";
    for (const std::string& t : db.tag_names) out << ' ' << t;
    out << '\n';
  }
  if (!clips) return;
  for (const match::FeatureGroup& g : db.groups)
    out << "  group " << g.name << ": dimensions " << g.offset << "…" << g.offset + g.dims - 1
        << ", weight " << format_number(g.weight) << ", scale σ " << format_number(g.scale, 4)
        << '\n';
  out << "  clip variants: " << db.clips.size() << '\n';
  for (size_t i = 0; i < db.clips.size(); ++i) {
    const match::DatabaseClip& c = db.clips[i];
    out << "    [" << i << "] \"" << c.name << "\"" << (c.mirrored ? " mirrored" : "")
        << (c.speed != 1 ? " ×" + format_number(c.speed, 3) : std::string()) << ": frames "
        << c.first_frame << "…" << c.first_frame + c.frame_count - 1 << " (" << c.frame_count
        << ")\n";
  }
}

namespace {

constexpr const char* kNetworkNames[] = {"decompressor", "stepper", "projector"};

/// Inputs, then each layer's outputs.
std::vector<uint32_t> widths(const match::Mlp& mlp) {
  std::vector<uint32_t> w{mlp.inputs()};
  for (const match::DenseLayer& l : mlp.layers) w.push_back(l.outputs);
  return w;
}

}  // namespace

nlohmann::ordered_json learned_model_json(const match::LearnedModel& m, size_t file_bytes) {
  const match::Mlp* mlps[] = {&m.decompressor, &m.stepper, &m.projector};
  nlohmann::ordered_json model;
  model["features"] = m.dims();
  model["latent"] = m.latent_dims;
  model["joints"] = m.skeleton.joint_count();
  model["fps"] = m.fps;
  model["trajectory_times"] = m.trajectory_times;
  model["trained_frames"] = m.trained_frames;
  model["model_bytes"] = m.model_bytes();
  model["file_bytes"] = file_bytes;
  nlohmann::ordered_json networks = nlohmann::ordered_json::array();
  for (int i = 0; i < 3; ++i)
    networks.push_back({{"name", kNetworkNames[i]},
                        {"widths", widths(*mlps[i])},
                        {"parameters", mlps[i]->parameter_count()}});
  model["networks"] = std::move(networks);
  return model;
}

void print_learned_model(const match::LearnedModel& m, size_t file_bytes, std::ostream& out) {
  const match::Mlp* mlps[] = {&m.decompressor, &m.stepper, &m.projector};
  out << "  features " << m.dims() << " + latent " << m.latent_dims << ", "
      << m.skeleton.joint_count() << " joints, " << format_number(m.fps) << " fps; trained on "
      << m.trained_frames << " database frames\n"
      << "  memory " << format_bytes(m.model_bytes()) << ", file " << format_bytes(file_bytes)
      << "\n";
  for (int i = 0; i < 3; ++i) {
    out << "  " << kNetworkNames[i] << ":";
    const std::vector<uint32_t> w = widths(*mlps[i]);
    for (size_t k = 0; k < w.size(); ++k) out << (k ? " → " : " ") << w[k];
    out << " (" << mlps[i]->parameter_count() << " parameters)\n";
  }
}

void print_match_evaluate(const pipeline::MatchEvaluateRequest& q,
                          const match::LearnedEvaluation& r, bool json, std::ostream& out) {
  if (json) {
    nlohmann::ordered_json j;
    j["model"] = q.model;
    j["database"] = q.database;
    j["frames"] = r.frames;
    j["pose_error_p50_cm"] = r.pose_error_p50_cm;
    j["pose_error_p90_cm"] = r.pose_error_p90_cm;
    j["pose_error_p99_cm"] = r.pose_error_p99_cm;
    j["noise"] = q.noise;
    j["projector_agreement"] = r.projector_agreement;
    j["cost_excess_p50"] = r.cost_excess_p50;
    j["cost_excess_p90"] = r.cost_excess_p90;
    j["exact_cost_p50"] = r.exact_cost_p50;
    out << j.dump(2) << '\n';
  } else {
    out << "kinema match evaluate: " << q.model << " on " << q.database << "\n"
        << "  frames " << r.frames << "\n"
        << "  pose error (projector + decompressor, joints in the root frame): p50 "
        << format_number(r.pose_error_p50_cm, 2) << " cm, p90 "
        << format_number(r.pose_error_p90_cm, 2) << " cm, p99 "
        << format_number(r.pose_error_p99_cm, 2) << " cm\n"
        << "  projector vs exact search (queries = features + N(0, " << format_number(q.noise)
        << "²)): same frame " << format_number(100 * r.projector_agreement, 1)
        << "%, cost excess p50 " << format_number(r.cost_excess_p50, 3) << ", p90 "
        << format_number(r.cost_excess_p90, 3) << " (exact best cost p50 "
        << format_number(r.exact_cost_p50, 3) << ")\n";
  }
}

void print_match_build(const pipeline::MatchBuildRequest& request,
                       const pipeline::MatchBuildResult& result, bool json, std::ostream& out) {
  if (json) {
    nlohmann::ordered_json j;
    j["out"] = request.out;
    j["clips"] = result.clip_count;
    j.update(database_json(result.database, result.file_bytes));
    out << j.dump(2) << '\n';
    return;
  }
  out << "kinema match build: " << result.clip_count << " clips from " << result.input_count
      << " files → " << request.out << "\n";
  print_database(result.database, result.file_bytes, false, out);
}

void print_match_learn(const pipeline::MatchLearnRequest& request,
                       const pipeline::MatchLearnResult& result, bool json, std::ostream& out) {
  static constexpr const char* kNetworks[] = {"decompressor", "stepper", "projector"};
  const match::LearnedModel& m = result.model;
  const auto final_loss = [&](int i) {
    for (const match::LossCurve& c : result.report.curves)
      if (c.network == kNetworks[i] && !c.losses.empty()) return c.losses.back();
    return 0.0;
  };
  if (json) {
    nlohmann::ordered_json j;
    j["out"] = request.out;
    j["plot"] = result.plot;
    j["database_frames"] = result.frames;
    j["database_bytes"] = result.database_bytes;
    j["model_bytes"] = m.model_bytes();
    j["file_bytes"] = result.file_bytes;
    j["features"] = m.dims();
    j["latent"] = m.latent_dims;
    j["joints"] = m.skeleton.joint_count();
    nlohmann::ordered_json networks = nlohmann::ordered_json::array();
    const match::Mlp* mlps[] = {&m.decompressor, &m.stepper, &m.projector};
    for (int i = 0; i < 3; ++i)
      networks.push_back({{"name", kNetworks[i]},
                          {"parameters", mlps[i]->parameter_count()},
                          {"iterations", result.report.iterations[i]},
                          {"seconds", result.report.seconds[i]},
                          {"final_loss", final_loss(i)}});
    j["networks"] = std::move(networks);
    out << j.dump(2) << '\n';
    return;
  }
  out << "kinema match learn: " << request.database << " → " << request.out << "\n"
      << "  database " << result.frames << " frames, " << format_bytes(result.database_bytes)
      << "; model " << format_bytes(m.model_bytes()) << " (file " << format_bytes(result.file_bytes)
      << "), " << m.dims() << " features + " << m.latent_dims << " latent, "
      << m.skeleton.joint_count() << " joints\n";
  const match::Mlp* mlps[] = {&m.decompressor, &m.stepper, &m.projector};
  for (int i = 0; i < 3; ++i)
    out << "  " << kNetworks[i] << ": " << mlps[i]->parameter_count() << " parameters, "
        << result.report.iterations[i] << " iterations in "
        << format_number(result.report.seconds[i], 1) << " s, final loss "
        << format_number(final_loss(i), 4) << "\n";
  out << "  loss curves → " << result.plot << "\n";
}

namespace {

nlohmann::ordered_json run_json(const match::PathRun& r,
                                const std::optional<HumanoidFootSkate>& skate) {
  nlohmann::ordered_json j;
  j["frames"] = r.frames;
  j["searches"] = r.searches;
  j["transitions"] = r.transitions;
  j["foot_skate"] = skate_json(skate);
  j["trajectory_error_mean_m"] = r.trajectory_error_mean;
  j["trajectory_error_max_m"] = r.trajectory_error_max;
  j["speed_error_mean_m_per_s"] = r.speed_error_mean;
  return j;
}

void print_run_lines(const match::PathRun& r, const std::optional<HumanoidFootSkate>& skate,
                     double fps, const std::string& indent, std::ostream& out) {
  out << indent << "frames " << r.frames << " at " << format_number(fps) << " fps, " << r.searches
      << " searches, " << r.transitions << " transitions\n"
      << indent << (skate ? skate_text(*skate) : "foot skate: no humanoid feet") << "\n"
      << indent << "trajectory error " << format_number(r.trajectory_error_mean, 3) << " m mean, "
      << format_number(r.trajectory_error_max, 3) << " m max (against the stick's path)\n";
}

}  // namespace

void print_match_run(const pipeline::MatchRunRequest& request,
                     const pipeline::MatchRunResult& result, bool json, std::ostream& out) {
  const match::PathRun& r = result.run;
  if (json) {
    nlohmann::ordered_json j;
    j["out"] = request.out;
    j["backend"] = result.learned ? "learned" : "database";
    j["fps"] = result.fps;
    j.update(run_json(r, result.foot_skate));
    if (result.comparison) {
      const pipeline::MatchComparison& c = *result.comparison;
      nlohmann::ordered_json e = run_json(c.exact, c.foot_skate);
      e["database"] = request.compare;
      j["exact"] = std::move(e);
      j["root_distance_mean_m"] = c.root_distance_mean;
      j["root_distance_max_m"] = c.root_distance_max;
      j["pose_distance_mean_cm"] = c.pose_distance_mean_cm;
      j["pose_distance_max_cm"] = c.pose_distance_max_cm;
    }
    out << j.dump(2) << '\n';
    return;
  }
  out << "kinema match run: " << request.database << (result.learned ? " (learned)" : "")
      << " along " << request.path << " → " << request.out << "\n";
  if (!result.comparison) {
    print_run_lines(r, result.foot_skate, result.fps, "  ", out);
    return;
  }
  const pipeline::MatchComparison& c = *result.comparison;
  out << "  learned (" << request.database << "):\n";
  print_run_lines(r, result.foot_skate, result.fps, "    ", out);
  out << "  exact search (" << request.compare << "):\n";
  print_run_lines(c.exact, c.foot_skate, result.fps, "    ", out);
  out << "  learned vs exact: roots " << format_number(c.root_distance_mean, 3) << " m apart mean, "
      << format_number(c.root_distance_max, 3) << " m max; poses "
      << format_number(c.pose_distance_mean_cm, 2) << " cm apart mean, "
      << format_number(c.pose_distance_max_cm, 2) << " cm max (joints in the hips' frame)\n";
}

}  // namespace kinema::cli
