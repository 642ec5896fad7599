// `kinema crowd` (kinema/pipeline/crowd.h): the scene reader, the walk, the point cache.
#include "kinema/pipeline/crowd.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numbers>
#include <random>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/crowd/crowd.h"
#include "kinema/io/particle_sidecar.h"
#include "kinema/io/point_cache.h"
#include "kinema/io/terrain.h"
#include "sim_scene_reader.h"

namespace kinema::pipeline {
namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxAgents = 1000000;
constexpr long kMaxCachePoints = 400'000'000;  // points × frames: 4.8 GB of PC2 at most

Vec2 read_vec2(const SceneReader& r, const json& v, const std::string& p) {
  if (!v.is_array() || v.size() != 2) r.fail(p, "must be an array of 2 numbers (x, z)");
  return {r.number(v[0], p + "/0"), r.number(v[1], p + "/1")};
}

struct Rectangle {
  Vec2 lo, hi;
};

// "lo" and "hi" of the object at p (which may hold other keys).
Rectangle read_corners(const SceneReader& r, const json& j, const std::string& p) {
  if (!j.contains("lo") || !j.contains("hi")) r.fail(p, "needs \"lo\" and \"hi\" ([x, z] each)");
  const Rectangle box{read_vec2(r, j["lo"], p + "/lo"), read_vec2(r, j["hi"], p + "/hi")};
  if (!(box.lo.x < box.hi.x) || !(box.lo.y < box.hi.y))
    r.fail(p, "lo must be below hi on both axes");
  return box;
}

Rectangle read_rectangle(const SceneReader& r, const json& j, const std::string& p) {
  r.only(j, p, {"lo", "hi"});
  return read_corners(r, j, p);
}

CrowdSettings read_settings(const SceneReader& r, const json& j, const std::string& p) {
  CrowdSettings s;
  r.only(j, p,
         {"neighbour_distance", "max_neighbours", "time_horizon", "radius", "max_speed",
          "waypoint_reach", "avoidance_margin", "obstacle_horizon", "keep_right"});
  auto positive = [&](const char* key, float& field) {
    if (j.contains(key)) field = float(r.at_least(j[key], p + "/" + key, 0, true));
  };
  positive("neighbour_distance", s.neighbour_distance);
  positive("time_horizon", s.time_horizon);
  positive("radius", s.radius);
  positive("max_speed", s.max_speed);
  positive("waypoint_reach", s.waypoint_reach);
  positive("obstacle_horizon", s.obstacle_horizon);
  if (j.contains("keep_right"))
    s.keep_right = float(r.at_least(j["keep_right"], p + "/keep_right", 0, false));
  if (j.contains("avoidance_margin"))
    s.avoidance_margin =
        float(r.at_least(j["avoidance_margin"], p + "/avoidance_margin", 0, false));
  if (j.contains("max_neighbours"))
    s.max_neighbours = r.whole(j["max_neighbours"], p + "/max_neighbours", 1, 64);
  return s;
}

// The navigation grid: sampled from a ground file, or flat over an area; obstacles closed.
std::shared_ptr<NavGrid> read_navigation(const SceneReader& r, const json& scene,
                                         const std::filesystem::path& folder, float radius) {
  const bool has_ground = scene.contains("ground"), has_area = scene.contains("area");
  if (has_ground && has_area) r.fail("/area", "give either \"ground\" or \"area\", not both");
  if (!has_ground && !has_area) {
    if (scene.contains("obstacles"))
      r.fail("/obstacles", "obstacles need an \"area\" or \"ground\"");
    return nullptr;
  }
  std::shared_ptr<NavGrid> grid;
  if (has_ground) {
    const json& g = scene["ground"];
    r.only(g, "/ground", {"file", "lo", "hi", "cell_size", "max_slope_degrees", "max_step"});
    if (!g.contains("file")) r.fail("/ground", "needs \"file\" (.obj or .png)");
    NavGridSettings settings;
    settings.clearance = radius;
    if (g.contains("cell_size"))
      settings.cell_size = r.at_least(g["cell_size"], "/ground/cell_size", 0, true);
    if (g.contains("max_step"))
      settings.max_step = r.at_least(g["max_step"], "/ground/max_step", 0, false);
    if (g.contains("max_slope_degrees")) {
      const double degrees =
          r.at_least(g["max_slope_degrees"], "/ground/max_slope_degrees", 0, false);
      if (degrees > 90) r.fail("/ground/max_slope_degrees", "must be at most 90");
      settings.max_slope = degrees * std::numbers::pi / 180;
    }
    std::filesystem::path file = r.text(g["file"], "/ground/file");
    if (file.is_relative()) file = folder / file;
    const GroundFile ground = load_ground(file.string());
    Vec2 lo{ground.lo.x, ground.lo.z}, hi{ground.hi.x, ground.hi.z};
    if (g.contains("lo")) lo = read_vec2(r, g["lo"], "/ground/lo");
    if (g.contains("hi")) hi = read_vec2(r, g["hi"], "/ground/hi");
    try {
      grid = std::make_shared<NavGrid>(NavGrid::from_ground(*ground.ground, lo, hi, settings));
    } catch (const Error& e) {
      r.fail("/ground", e.reason());
    }
  } else {
    const json& a = scene["area"];
    r.only(a, "/area", {"lo", "hi", "cell_size"});
    const Rectangle box = read_corners(r, a, "/area");
    const double cell =
        a.contains("cell_size") ? r.at_least(a["cell_size"], "/area/cell_size", 0, true) : 0.5;
    const double cells_x = std::ceil((box.hi.x - box.lo.x) / cell),
                 cells_z = std::ceil((box.hi.y - box.lo.y) / cell);
    if (cells_x * cells_z > double(1 << 26))
      r.fail("/area", "more than 2^26 cells: use a larger cell_size");
    grid = std::make_shared<NavGrid>(box.lo, cell, int(cells_x), int(cells_z));
  }
  if (scene.contains("obstacles")) {
    const json& list = scene["obstacles"];
    if (!list.is_array()) r.fail("/obstacles", "must be an array");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string p = "/obstacles/" + std::to_string(i);
      const json& o = list[i];
      r.only(o, p, {"box", "disc"});
      if (o.contains("box")) {
        const Rectangle box = read_rectangle(r, o["box"], p + "/box");
        grid->close_rectangle(box.lo, box.hi);
      } else if (o.contains("disc")) {
        r.only(o["disc"], p + "/disc", {"centre", "radius"});
        if (!o["disc"].contains("centre") || !o["disc"].contains("radius"))
          r.fail(p + "/disc", "needs \"centre\" and \"radius\"");
        grid->close_disc(read_vec2(r, o["disc"]["centre"], p + "/disc/centre"),
                         r.at_least(o["disc"]["radius"], p + "/disc/radius", 0, true));
      } else {
        r.fail(p, "needs \"box\" or \"disc\"");
      }
    }
  }
  if (has_area) grid->apply_clearance(radius);  // a ground's clearance came with its sampling
  return grid;
}

// Adds the agents of one entry of "agents"; an agent the crowd refuses is reported at the entry.
void add_agents(const SceneReader& r, const json& entry, const std::string& p, Crowd& crowd) {
  auto add = [&](Vec2 position, Vec2 goal, float radius, float speed) {
    if (crowd.size() >= kMaxAgents) r.fail(p, "more than 1,000,000 agents");
    try {
      crowd.add_agent(Vec2f(position), Vec2f(goal), radius, speed);
    } catch (const Error& e) {
      r.fail(p, e.place() + ": " + e.reason());
    }
  };
  r.only(entry, p, {"position", "goal", "radius", "speed", "block", "scatter"});
  const float radius =
      entry.contains("radius") ? float(r.at_least(entry["radius"], p + "/radius", 0, true)) : 0;
  const float speed =
      entry.contains("speed") ? float(r.at_least(entry["speed"], p + "/speed", 0, true)) : 0;
  const int forms = int(entry.contains("position")) + int(entry.contains("block")) +
                    int(entry.contains("scatter"));
  if (forms != 1) r.fail(p, "give one of \"position\" (with \"goal\"), \"block\" or \"scatter\"");
  if (entry.contains("position")) {
    if (!entry.contains("goal")) r.fail(p, "an agent at \"position\" needs a \"goal\"");
    add(read_vec2(r, entry["position"], p + "/position"), read_vec2(r, entry["goal"], p + "/goal"),
        radius, speed);
  } else if (entry.contains("block")) {
    // rows × columns agents `spacing` apart from `origin` (x along columns, z along rows), each
    // walking to its own place moved by `goal_offset`.
    const std::string q = p + "/block";
    const json& b = entry["block"];
    r.only(b, q, {"origin", "rows", "columns", "spacing", "goal_offset"});
    for (const char* key : {"origin", "rows", "columns", "goal_offset"})
      if (!b.contains(key)) r.fail(q, std::string("needs \"") + key + "\"");
    const Vec2 origin = read_vec2(r, b["origin"], q + "/origin");
    const int rows = r.whole(b["rows"], q + "/rows", 1, 100000);
    const int columns = r.whole(b["columns"], q + "/columns", 1, 100000);
    if (double(rows) * columns > double(kMaxAgents)) r.fail(q, "more than 1,000,000 agents");
    const double spacing =
        b.contains("spacing") ? r.at_least(b["spacing"], q + "/spacing", 0, true) : 1.0;
    const Vec2 offset = read_vec2(r, b["goal_offset"], q + "/goal_offset");
    for (int row = 0; row < rows; ++row) {
      for (int c = 0; c < columns; ++c) {
        const Vec2 at = origin + Vec2{c * spacing, row * spacing};
        add(at, at + offset, radius, speed);
      }
    }
  } else {
    // `count` agents at random open places of `from`, each walking to a random place of `to`.
    const std::string q = p + "/scatter";
    const json& s = entry["scatter"];
    r.only(s, q, {"count", "from", "to", "seed"});
    for (const char* key : {"count", "from", "to"})
      if (!s.contains(key)) r.fail(q, std::string("needs \"") + key + "\"");
    const int count = r.whole(s["count"], q + "/count", 1, int(kMaxAgents));
    const Rectangle from = read_rectangle(r, s["from"], q + "/from");
    const Rectangle to = read_rectangle(r, s["to"], q + "/to");
    std::mt19937 rng(s.contains("seed") ? unsigned(r.whole(s["seed"], q + "/seed", 0, 1 << 30))
                                        : 1u);
    auto in = [&](const Rectangle& box) {
      std::uniform_real_distribution<double> x(box.lo.x, box.hi.x), z(box.lo.y, box.hi.y);
      const double px = x(rng);
      return Vec2{px, z(rng)};
    };
    const NavGrid* nav = crowd.navigation();
    // Starts keep clear of each other (discs that begin overlapped can be pinned that way): a
    // hash of cells one diameter wide finds the agents already placed nearby.
    const double diameter = 2.0 * (radius > 0 ? radius : crowd.settings().radius) +
                            2.0 * crowd.settings().avoidance_margin;
    std::unordered_map<std::int64_t, std::vector<Vec2>> placed;
    auto cell_key = [&](double x, double z) {
      return (std::int64_t(std::floor(x / diameter)) << 32) ^
             (std::int64_t(std::floor(z / diameter)) & 0xffffffff);
    };
    auto free = [&](Vec2 p) {
      if (nav && !nav->walkable(p)) return false;
      for (int dz = -1; dz <= 1; ++dz)
        for (int dx = -1; dx <= 1; ++dx) {
          const auto it = placed.find(cell_key(p.x + dx * diameter, p.y + dz * diameter));
          if (it == placed.end()) continue;
          for (const Vec2& q : it->second)
            if (length_squared(q - p) < diameter * diameter) return false;
        }
      return true;
    };
    for (int k = 0; k < count; ++k) {
      Vec2 start = in(from), goal = in(to);
      // Draw again (a bounded number of times) for places taken or on closed cells.
      int tries = 0;
      for (; !free(start) && tries < 1000; ++tries) start = in(from);
      if (tries == 1000)
        r.fail(q + "/from", "no room for agent " + std::to_string(k) + " of " +
                                std::to_string(count) + " in this rectangle");
      for (tries = 0; nav && !nav->walkable(goal) && tries < 1000; ++tries) goal = in(to);
      placed[cell_key(start.x, start.y)].push_back(start);
      add(start, goal, radius, speed);
    }
  }
}

}  // namespace

CrowdReport run_crowd(const CrowdRequest& request) {
  static constexpr std::string_view kExtensions[] = {"pc2"};
  const NamedInput inputs[] = {{"SCENE", request.scene}};
  check_output_file(request.out, inputs, kExtensions, "crowd writes .pc2");
  if (request.seconds < 0 || !std::isfinite(request.seconds))
    throw UsageError("crowd: --seconds must be positive");

  const SceneReader r{request.scene};
  const json scene = r.parse(read_file(request.scene));
  r.only(scene, "", {"seconds", "step", "settings", "ground", "area", "obstacles", "agents"});
  const double step = scene.contains("step") ? r.at_least(scene["step"], "/step", 0, true)
                                             : 1.0 / 60;  // ORCA overlaps near walls at 1/30
  if (step > 1) r.fail("/step", "must be at most 1 s");
  double seconds =
      scene.contains("seconds") ? r.at_least(scene["seconds"], "/seconds", 0, true) : 30;
  if (request.seconds > 0) seconds = request.seconds;
  const int steps = int(std::ceil(seconds / step - 1e-9));
  if (steps > 1000000) r.fail("/seconds", "more than a million steps");
  CrowdSettings settings = scene.contains("settings")
                               ? read_settings(r, scene["settings"], "/settings")
                               : CrowdSettings{};
  settings.threads = request.threads;
  const std::filesystem::path folder = std::filesystem::path(request.scene).parent_path();
  std::shared_ptr<const NavGrid> nav = read_navigation(r, scene, folder, settings.radius);
  Crowd crowd(settings, nav);
  if (!scene.contains("agents") || !scene["agents"].is_array() || scene["agents"].empty())
    r.fail("/agents", "needs a non-empty array of agents");
  for (std::size_t i = 0; i < scene["agents"].size(); ++i) {
    add_agents(r, scene["agents"][i], "/agents/" + std::to_string(i), crowd);
    report(request.progress, "planning paths", long(i + 1), long(scene["agents"].size()));
  }
  const std::size_t n = crowd.size();
  if (double(n) * double(steps + 1) > double(kMaxCachePoints))
    r.fail("/seconds",
           "agents × frames exceeds 400 million cached points: fewer seconds or agents");

  CrowdReport result;
  result.agents = n;
  result.step = step;
  result.steps = steps;
  result.frames = steps + 1;
  if (nav) {
    result.open_cells = nav->open_cell_count();
    result.cells = std::size_t(nav->width()) * std::size_t(nav->depth());
  }
  PointCache cache;
  cache.points = int(n);
  cache.sample_rate = 1;
  cache.positions.reserve(std::size_t(result.frames) * n);
  auto record = [&] {
    for (const Vec2f& p : crowd.positions()) {
      const float y = nav ? float(nav->height(Vec2(p))) : 0.0f;
      cache.positions.push_back({p.x, y, p.y});
    }
  };
  record();
  double stepping = 0;
  for (int s = 0; s < steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    crowd.step(float(step));
    stepping += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.max_overlap = std::max(result.max_overlap, double(crowd.max_overlap()));
    if (result.seconds_all_arrived < 0 && crowd.arrived_count() == n)
      result.seconds_all_arrived = (s + 1) * step;
    record();
    if (s % 16 == 0 || s + 1 == steps) report(request.progress, "walking", s + 1, steps);
  }
  result.seconds_per_step = stepping / steps;
  result.arrived = crowd.arrived_count();

  result.cache_path = request.out;
  result.sidecar_path = particle_sidecar_path(request.out);
  write_particle_sidecar(result.sidecar_path, everlasting_particle_sidecar(n, result.frames, step));
  write_pc2(result.cache_path, cache);
  return result;
}

}  // namespace kinema::pipeline
