// `kinema crowd` (kinema/pipeline/crowd.h): the scene reader, the walk, the point cache.
#include "kinema/pipeline/crowd.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numbers>
#include <optional>
#include <random>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "crowd_layout.h"
#include "kinema/character/asset.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/crowd/crowd.h"
#include "kinema/crowd/crowd_animation.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/gltf.h"
#include "kinema/io/particle_sidecar.h"
#include "kinema/io/point_cache.h"
#include "kinema/io/terrain.h"
#include "kinema/pipeline/crowd_draw.h"
#include "kinema/render/clip_render.h"
#include "mp4_writer.h"
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

// The navigation grid: sampled from a ground file (its path goes to ground_file), or flat over
// an area; obstacles closed.
std::shared_ptr<NavGrid> read_navigation(const SceneReader& r, const json& scene,
                                         const std::filesystem::path& folder, float radius,
                                         std::vector<CrowdObstacle>& shapes,
                                         std::string& ground_file) {
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
    ground_file = file.string();
    const GroundFile ground = load_ground(ground_file);
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
        CrowdObstacle shape;
        shape.disc = false;
        shape.lo = box.lo;
        shape.hi = box.hi;
        shapes.push_back(shape);
      } else if (o.contains("disc")) {
        r.only(o["disc"], p + "/disc", {"centre", "radius"});
        if (!o["disc"].contains("centre") || !o["disc"].contains("radius"))
          r.fail(p + "/disc", "needs \"centre\" and \"radius\"");
        CrowdObstacle shape;
        shape.centre = read_vec2(r, o["disc"]["centre"], p + "/disc/centre");
        shape.radius = r.at_least(o["disc"]["radius"], p + "/disc/radius", 0, true);
        grid->close_disc(shape.centre, shape.radius);
        shapes.push_back(shape);
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

// The characters the crowd plays: "characters" {walk, run, root, legs, lod}.
struct SceneCharacters {
  Asset character;  // the walk's file: its skeleton and meshes are what is drawn
  CrowdGait gait;
  CrowdAnimationSettings animation;
};

SceneCharacters read_characters(const SceneReader& r, const json& j,
                                const std::filesystem::path& folder) {
  const std::string p = "/characters";
  r.only(j, p, {"walk", "run", "root", "legs", "lod"});
  if (!j.contains("walk"))
    r.fail(p, "needs \"walk\" (a file with the walk cycle: .glb, .fbx, .bvh …)");
  const auto load = [&](const char* key) {
    std::filesystem::path file = r.text(j[key], p + "/" + key);
    if (file.is_relative()) file = folder / file;
    Asset asset = load_asset(file.string());  // its errors name the file
    if (asset.clips.empty() || !(asset.clips[0].duration > 0))
      r.fail(p + "/" + key, file.string() + " has no animation");
    return asset;
  };
  SceneCharacters c;
  c.character = load("walk");
  const Skeleton& skeleton = c.character.skeleton;
  c.gait.skeleton = skeleton;
  c.gait.walk = c.character.clips[0];
  if (j.contains("run")) {
    const Asset run = load("run");
    bool same = run.skeleton.joint_count() == skeleton.joint_count();
    for (int k = 0; same && k < skeleton.joint_count(); ++k)
      same = run.skeleton.joint(k).name == skeleton.joint(k).name;
    if (!same) r.fail(p + "/run", "its skeleton is not the walk's (the same joints in order)");
    c.gait.run = run.clips[0];
  }
  const auto joint = [&](const json& v, const std::string& q) {
    const std::string name = r.text(v, q);
    const int index = skeleton.find(name);
    if (index < 0) r.fail(q, "the walk's skeleton has no joint \"" + name + "\"");
    return index;
  };
  c.gait.root_joint =
      j.contains("root") ? joint(j["root"], p + "/root") : std::max(0, skeleton.find("Hips"));
  if (j.contains("legs")) {
    const json& legs = j["legs"];
    if (!legs.is_array()) r.fail(p + "/legs", "must be an array of [hip, knee, ankle] joint names");
    for (std::size_t l = 0; l < legs.size(); ++l) {
      const std::string q = p + "/legs/" + std::to_string(l);
      if (!legs[l].is_array() || legs[l].size() != 3)
        r.fail(q, "must be [hip, knee, ankle] joint names");
      c.gait.legs.push_back(
          {joint(legs[l][0], q + "/0"), joint(legs[l][1], q + "/1"), joint(legs[l][2], q + "/2")});
    }
  } else {  // a Mixamo / ProAnimationBank naming, when it is there
    for (const std::string side : {"Left", "Right"}) {
      const int hip = skeleton.find(side + "UpLeg"), knee = skeleton.find(side + "Leg"),
                ankle = skeleton.find(side + "Foot");
      if (hip >= 0 && knee >= 0 && ankle >= 0) c.gait.legs.push_back({hip, knee, ankle});
    }
  }
  if (j.contains("lod")) {
    const json& lod = j["lod"];
    const std::string q = p + "/lod";
    r.only(lod, q, {"mid", "far", "farthest", "mid_hz", "fade_seconds", "hysteresis"});
    auto& tiers = c.animation.lod.tiers;
    if (lod.contains("mid"))
      tiers[1].min_distance = float(r.at_least(lod["mid"], q + "/mid", 0, false));
    if (lod.contains("far"))
      tiers[2].min_distance = float(r.at_least(lod["far"], q + "/far", 0, false));
    if (lod.contains("farthest"))
      tiers[3].min_distance = float(r.at_least(lod["farthest"], q + "/farthest", 0, false));
    if (!(tiers[1].min_distance <= tiers[2].min_distance &&
          tiers[2].min_distance <= tiers[3].min_distance))
      r.fail(q, "the tiers' distances must not decrease: mid ≤ far ≤ farthest");
    if (lod.contains("mid_hz"))
      tiers[1].update_hz = float(r.at_least(lod["mid_hz"], q + "/mid_hz", 0, true));
    if (lod.contains("fade_seconds"))
      c.animation.lod.fade_seconds =
          float(r.at_least(lod["fade_seconds"], q + "/fade_seconds", 0, false));
    if (lod.contains("hysteresis"))
      c.animation.lod.hysteresis =
          float(r.at_least(lod["hysteresis"], q + "/hysteresis", 0, false));
  }
  return c;
}

// "camera" {eye, target, fov_degrees}; without it, a raised view of the whole ground from its
// +z side.
Camera read_camera(const SceneReader& r, const json& scene, Vec2 lo, Vec2 hi) {
  Camera camera;
  const Vec2 centre = (lo + hi) * 0.5;
  const double extent = std::max({hi.x - lo.x, hi.y - lo.y, 2.0});
  camera.target = {float(centre.x), 0, float(centre.y)};
  camera.eye = camera.target + Vec3f{0, float(0.4 * extent), float(0.9 * extent)};
  camera.far_plane = float(4 * extent + 100);
  if (!scene.contains("camera")) return camera;
  const json& c = scene["camera"];
  r.only(c, "/camera", {"eye", "target", "fov_degrees"});
  if (c.contains("eye")) camera.eye = Vec3f(r.vec3(c["eye"], "/camera/eye"));
  if (c.contains("target")) camera.target = Vec3f(r.vec3(c["target"], "/camera/target"));
  if (c.contains("fov_degrees")) {
    const double fov = r.at_least(c["fov_degrees"], "/camera/fov_degrees", 0, true);
    if (fov >= 170) r.fail("/camera/fov_degrees", "must be below 170");
    camera.fov_y_degrees = float(fov);
  }
  if (length(camera.target - camera.eye) < 1e-3f)
    r.fail("/camera", "the eye and the target are the same point");
  return camera;
}

void check_picture_request(const CrowdRequest& rq, const std::string& ext) {
  if (rq.width < 16 || rq.height < 16 || rq.width > 4096 || rq.height > 4096)
    throw UsageError("crowd: --size must be 16…4096 pixels each way");
  if (ext == "mp4" && (rq.width % 2 != 0 || rq.height % 2 != 0))
    throw UsageError("crowd: an .mp4 (yuv420p) needs an even width and height");
  if (!(rq.fps > 0 && rq.fps <= 240)) throw UsageError("crowd: --fps must be in (0, 240]");
  if (rq.sheet_frames < 1 || rq.sheet_frames > 64)
    throw UsageError("crowd: --contact-sheet must be 1…64 frames");
}

}  // namespace

CrowdReport run_crowd(const CrowdRequest& request) {
  static constexpr std::string_view kExtensions[] = {"pc2", "mp4", "png", "glb", "gltf"};
  const NamedInput inputs[] = {{"SCENE", request.scene}};
  check_output_file(request.out, inputs, kExtensions, "crowd writes .pc2 .mp4 .png .glb .gltf");
  if (request.seconds < 0 || !std::isfinite(request.seconds))
    throw UsageError("crowd: --seconds must be positive");
  const std::string ext = extension_of(request.out);
  const bool layout = ext == "glb" || ext == "gltf";
  const bool pictures = ext == "mp4" || ext == "png";
  if (pictures) check_picture_request(request, ext);
  if (layout && !(request.fps > 0 && request.fps <= 240))
    throw UsageError("crowd: --fps must be in (0, 240]");
  const std::string ffmpeg = ext == "mp4" ? require_ffmpeg(request.out) : std::string();

  const SceneReader r{request.scene};
  const json scene = r.parse(read_file(request.scene));
  r.only(scene, "",
         {"seconds", "step", "settings", "ground", "area", "obstacles", "agents", "characters",
          "camera"});
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
  std::vector<CrowdObstacle> obstacles;
  std::string ground_file;
  std::shared_ptr<const NavGrid> nav =
      read_navigation(r, scene, folder, settings.radius, obstacles, ground_file);
  Crowd crowd(settings, nav);
  if (!scene.contains("agents") || !scene["agents"].is_array() || scene["agents"].empty())
    r.fail("/agents", "needs a non-empty array of agents");
  for (std::size_t i = 0; i < scene["agents"].size(); ++i) {
    add_agents(r, scene["agents"][i], "/agents/" + std::to_string(i), crowd);
    report(request.progress, "planning paths", long(i + 1), long(scene["agents"].size()));
  }
  const std::size_t n = crowd.size();
  if (ext == "pc2" && double(n) * double(steps + 1) > double(kMaxCachePoints))
    r.fail("/seconds",
           "agents × frames exceeds 400 million cached points: fewer seconds or agents");
  std::optional<SceneCharacters> characters;
  if (scene.contains("characters"))
    characters = read_characters(r, scene["characters"], folder);
  else if (pictures)
    r.fail("/characters",
           "a picture of the crowd (.mp4, .png) needs \"characters\": the walk (and run) they "
           "play");

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
  if (!pictures) cache.positions.reserve(std::size_t(result.frames) * n);
  std::vector<float> heights(n, 0.0f);
  auto measure_heights = [&] {
    if (!nav) return;
    const auto positions = crowd.positions();
    for (std::size_t i = 0; i < n; ++i) heights[i] = float(nav->height(Vec2(positions[i])));
  };
  auto record = [&] {
    measure_heights();
    const auto positions = crowd.positions();
    for (std::size_t i = 0; i < n; ++i)
      cache.positions.push_back({positions[i].x, heights[i], positions[i].y});
  };

  // Pictures: the characters animated every drawn frame, drawn on the frames written.
  struct Drawing {
    int every = 1;  // steps a frame
    double frame_dt = 0;
    Camera camera;
    DrawOptions options;
    std::optional<CrowdAnimator> animator;
    std::optional<Renderer> renderer;
    std::optional<CrowdDrawer> drawer;
    std::optional<Mp4Writer> mp4;
    Mesh obstacles;  // still props: the obstacles, a ground mesh
    std::vector<Vec3f> ground_positions;
    std::vector<uint32_t> ground_indices;
    std::vector<PropMesh> props;
    std::vector<int> sheet_frames;  // frame indices of the sheet's tiles, increasing
    std::vector<Image> tiles;
    double animating = 0, drawing = 0;
    std::array<double, 4> tier_agents{};
    int animated = 0;
  } draw;
  if (pictures) {
    draw.every = std::max(1, int(std::lround(1.0 / (request.fps * step))));
    draw.frame_dt = draw.every * step;
    const int frames = steps / draw.every + 1;
    Vec2 lo{1e30, 1e30}, hi{-1e30, -1e30};
    if (nav) {
      lo = nav->origin();
      hi = lo + Vec2{nav->width() * nav->cell_size(), nav->depth() * nav->cell_size()};
    } else {
      for (const Vec2f& q : crowd.positions()) {
        lo = {std::min(lo.x, double(q.x)), std::min(lo.y, double(q.y))};
        hi = {std::max(hi.x, double(q.x)), std::max(hi.y, double(q.y))};
      }
    }
    draw.camera = read_camera(r, scene, lo, hi);
    const Vec2 centre = (lo + hi) * 0.5;
    draw.options.ground_center_x = float(centre.x);
    draw.options.ground_center_z = float(centre.y);
    draw.options.ground_half_size = float(0.75 * std::max(hi.x - lo.x, hi.y - lo.y) + 10);
    draw.options.grid_spacing = 1.0f;
    // The obstacles standing on the ground and an .obj ground, drawn in stone colours.
    std::vector<float> bases;
    for (const CrowdObstacle& o : obstacles)
      bases.push_back(float(nav->height(o.disc ? o.centre : (o.lo + o.hi) * 0.5)));
    draw.obstacles = crowd_obstacle_mesh(obstacles, bases);
    if (!draw.obstacles.indices.empty())
      draw.props.push_back({draw.obstacles.positions, draw.obstacles.indices,
                            CrowdDrawer::obstacle_colour(), "obstacles"});
    if (extension_of(ground_file) == "obj") {
      const ObjTriangles ground = parse_obj_triangles(read_file(ground_file), ground_file);
      for (const Vec3& v : ground.vertices) draw.ground_positions.push_back(Vec3f(v));
      for (const int i : ground.indices) draw.ground_indices.push_back(uint32_t(i));
      draw.props.push_back(
          {draw.ground_positions, draw.ground_indices, CrowdDrawer::ground_colour(), "ground"});
    }
    draw.options.props = draw.props;
    CrowdAnimationSettings animation = characters->animation;
    animation.threads = request.threads;
    animation.lod.frame_hz = float(1.0 / draw.frame_dt);
    try {
      draw.animator.emplace(characters->gait, animation, n);
    } catch (const Error& e) {
      r.fail("/characters", e.place() + ": " + e.reason());
    }
    RendererOptions target;
    target.width = request.width;
    target.height = request.height;
    report(request.progress, "baking VATs and impostors", 0, 1);
    draw.renderer.emplace(target);
    CrowdDrawSettings settings;
    settings.lod_colours = request.lod_colours;
    draw.drawer.emplace(*draw.renderer, characters->character, *draw.animator, settings);
    result.gl_renderer = draw.renderer->gl_renderer();
    result.bake_seconds = draw.drawer->bake_seconds();
    for (const CrowdBakeInfo& b : draw.drawer->vats()) result.vat_bytes += b.bytes;
    for (const CrowdBakeInfo& b : draw.drawer->impostors()) result.impostor_bytes += b.bytes;
    result.joints = std::size_t(draw.animator->full_skeleton().joint_count());
    result.fps = 1.0 / draw.frame_dt;
    if (ext == "mp4") {
      draw.mp4.emplace(ffmpeg, request.out, request.width, request.height, result.fps);
    } else {
      const int tiles = std::min(request.sheet_frames, frames);
      for (int i = 0; i < tiles; ++i)
        draw.sheet_frames.push_back(
            tiles == 1 ? 0 : int(std::lround(double(i) * (frames - 1) / (tiles - 1))));
    }
  }
  // A glTF scene: every agent's place and heading keyed at --fps.
  CrowdRecording recording;
  int layout_every = 1;
  std::vector<float> headings(n, 0.0f);
  if (layout) {
    layout_every = std::max(1, int(std::lround(1.0 / (request.fps * step))));
    recording.agents = n;
    recording.fps = 1.0 / (layout_every * step);
    const double keys = double(n) * double(steps / layout_every + 1);
    if (keys > 2e7)
      r.fail("/seconds",
             "agents × keyed frames exceeds 20 million for a glTF scene: fewer "
             "seconds or agents, or a lower --fps");
    recording.radii.assign(crowd.radii().begin(), crowd.radii().end());
    for (std::size_t i = 0; i < n; ++i) {
      recording.goals.push_back(crowd.goal(i));
      const Vec2f to_goal = crowd.goal(i) - crowd.positions()[i];
      headings[i] = length(to_goal) > 1e-3f ? std::atan2(to_goal.x, to_goal.y) : 0.0f;
    }
  }
  auto key_layout = [&] {
    measure_heights();
    const auto positions = crowd.positions(), velocities = crowd.velocities();
    const float most = 6.0f * float(layout_every * step);  // the characters' turn rate, rad/s
    for (std::size_t i = 0; i < n; ++i) {
      if (length(velocities[i]) > 0.05f) {  // turn toward the velocity, as a body would
        const float target = std::atan2(velocities[i].x, velocities[i].y);
        const float turn = std::remainder(target - headings[i], 2 * std::numbers::pi_v<float>);
        headings[i] = std::remainder(headings[i] + std::clamp(turn, -most, most),
                                     2 * std::numbers::pi_v<float>);
      }
      recording.positions.push_back({positions[i].x, heights[i], positions[i].y});
      recording.headings.push_back(headings[i]);
    }
  };
  auto display = [&](int frame) {
    measure_heights();
    auto t0 = std::chrono::steady_clock::now();
    draw.animator->update(float(draw.frame_dt), crowd.positions(), crowd.velocities(), heights,
                          draw.camera.eye);
    auto t1 = std::chrono::steady_clock::now();
    draw.animating += std::chrono::duration<double>(t1 - t0).count();
    ++draw.animated;
    const bool wanted =
        draw.mp4 || std::binary_search(draw.sheet_frames.begin(), draw.sheet_frames.end(), frame);
    if (!wanted) return;
    t0 = std::chrono::steady_clock::now();
    Image image = draw.drawer->draw(crowd.positions(), crowd.velocities(), heights, draw.camera,
                                    draw.options);
    t1 = std::chrono::steady_clock::now();
    draw.drawing += std::chrono::duration<double>(t1 - t0).count();
    ++result.frames_drawn;
    const auto counts = draw.animator->lod().counts();
    for (int t = 0; t < kCrowdTierCount; ++t)
      draw.tier_agents[std::size_t(t)] += double(counts[std::size_t(t)]);
    if (draw.mp4)
      draw.mp4->write(image);
    else
      draw.tiles.push_back(std::move(image));
  };
  if (pictures)
    display(0);
  else if (layout)
    key_layout();
  else
    record();
  double stepping = 0;
  for (int s = 0; s < steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    crowd.step(float(step));
    stepping += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.max_overlap = std::max(result.max_overlap, double(crowd.max_overlap()));
    if (result.seconds_all_arrived < 0 && crowd.arrived_count() == n)
      result.seconds_all_arrived = (s + 1) * step;
    if (pictures) {
      if ((s + 1) % draw.every == 0) display((s + 1) / draw.every);
    } else if (layout) {
      if ((s + 1) % layout_every == 0) key_layout();
    } else {
      record();
    }
    if (s % 16 == 0 || s + 1 == steps)
      report(request.progress, pictures ? "walking and drawing" : "walking", s + 1, steps);
  }
  result.seconds_per_step = stepping / steps;
  result.arrived = crowd.arrived_count();

  if (pictures) {
    result.picture_path = request.out;
    result.seconds_per_animate = draw.animating / std::max(1, draw.animated);
    result.seconds_per_draw = draw.drawing / std::max(1, result.frames_drawn);
    for (int t = 0; t < kCrowdTierCount; ++t)
      result.mean_tier_agents[std::size_t(t)] =
          draw.tier_agents[std::size_t(t)] / std::max(1, result.frames_drawn);
    result.joint_updates_per_second = double(draw.animator->lod().joint_updates_total()) /
                                      (std::max(1, draw.animated) * draw.frame_dt);
    if (draw.mp4)
      draw.mp4->finish();
    else
      write_png(contact_sheet(draw.tiles), request.out);
    return result;
  }
  if (layout) {
    Vec2 lo{1e30, 1e30}, hi{-1e30, -1e30};
    if (nav) {
      lo = nav->origin();
      hi = lo + Vec2{nav->width() * nav->cell_size(), nav->depth() * nav->cell_size()};
    } else {
      for (const Vec3f& q : recording.positions) {
        lo = {std::min(lo.x, double(q.x) - 2), std::min(lo.y, double(q.z) - 2)};
        hi = {std::max(hi.x, double(q.x) + 2), std::max(hi.y, double(q.z) + 2)};
      }
    }
    const Asset scene_asset = crowd_layout_asset(recording, obstacles, lo, hi);
    GltfWriteOptions options;
    options.binary = ext == "glb";
    write_gltf(scene_asset, request.out, options);
    result.layout_path = request.out;
    result.fps = recording.fps;
    result.frames_keyed = int(recording.positions.size() / std::max<std::size_t>(1, n));
    return result;
  }
  result.cache_path = request.out;
  result.sidecar_path = particle_sidecar_path(request.out);
  write_particle_sidecar(result.sidecar_path, everlasting_particle_sidecar(n, result.frames, step));
  write_pc2(result.cache_path, cache);
  return result;
}

}  // namespace kinema::pipeline
