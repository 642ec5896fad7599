// `kinema sim` as a library call (kinema/pipeline/sim.h): a parsed scene (sim_scene.cpp) run on
// the fixed-step clock — the character, particles and cloths step by step — and written.
#include "kinema/pipeline/sim.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numbers>
#include <optional>

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/fluid/volume_file.h"
#include "kinema/io/asset_file.h"
#include "kinema/io/gltf.h"
#include "kinema/io/particle_sidecar.h"
#include "kinema/io/point_cache.h"
#include "kinema/physics/character_colliders.h"
#include "kinema/physics/spring_bones.h"
#include "kinema/sim/fixed_step_clock.h"
#include "kinema/skin/skin_mesh.h"
#include "morph_frames.h"
#include "sim_bodies.h"
#include "sim_liquid.h"
#include "sim_rigid.h"
#include "sim_smoke.h"

namespace kinema::pipeline {

std::string sim_cache_path(const std::string& out, const std::string& name, size_t cloth_count) {
  if (cloth_count == 1) return out;
  std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + "_" + name + ".pc2")).string();
}

std::string sim_mesh_path(const std::string& out, const std::string& name, size_t cloth_count) {
  return std::filesystem::path(sim_cache_path(out, name, cloth_count))
      .replace_extension(".obj")
      .string();
}

namespace {

/// True when OUT is a glTF file (.glb or .gltf, any case).
bool writes_gltf(const std::string& out) {
  const std::string ext = extension_of(out);
  return ext == "glb" || ext == "gltf";
}

/// A scene's character over time: the clip's pose at each step with its spring bones simulated,
/// the colliders its skin gives at that pose, and (when asked) its skinned vertices for cloth
/// attached to them.
class SceneCharacter {
 public:
  /// `skin`: whether to skin its meshes every step (a cloth follows its nearest skin vertices).
  SceneCharacter(const SimSceneCharacter& c, bool skin)
      : c_(c), a_(*c.asset), skin_each_step_(skin) {
    const size_t n = size_t(a_.skeleton.joint_count());
    pose_.resize(n);
    model_.resize(n);
    if (c.spring_bones && !a_.spring_bones.empty()) springs_.emplace(a_.skeleton, a_.spring_bones);
    if (c.colliders) {
      CharacterColliderOptions options;
      options.percentile = c.collider_percentile;
      for (const CharacterCollider& shape : character_colliders(a_, options))
        if (c.collider_joints.empty() ||
            std::find(c.collider_joints.begin(), c.collider_joints.end(), shape.joint) !=
                c.collider_joints.end())
          shapes_.push_back(shape);
    }
    if (c.clip >= 0) {
      baked_.name = a_.clips[size_t(c.clip)].name;
      const Clip& source = a_.clips[size_t(c.clip)];
      for (size_t j = 0; j < n; ++j)
        keyed_.push_back(j < source.tracks.size() && !source.tracks[j].empty());
    } else {
      baked_.name = "rest";
      keyed_.assign(n, false);
    }
    if (springs_)
      for (int j : springs_->simulated_joints()) keyed_[size_t(j)] = true;
    baked_.tracks.resize(n);
    rest_inverse_ = inverse_bind_from_rest(a_.skeleton);
  }

  /// Moves the character to time t; `h` the step just taken (0 at the start).
  void move_to(double t, double h) {
    previous_ = pose_;
    if (c_.clip >= 0) {
      const Clip& clip = a_.clips[size_t(c_.clip)];
      sample_pose(clip, a_.skeleton, std::min(t, clip.duration), WrapMode::Clamp, pose_);
    } else {
      pose_ = a_.skeleton.rest_pose();
    }
    if (springs_) springs_->step(pose_, h);
    local_to_model(a_.skeleton.parents(), pose_, model_);
    if (!shapes_.empty()) pose_character_colliders(shapes_, model_, colliders_);
    if (skin_each_step_) skin();
  }

  /// Keys into the baked clip at time t the pose α of the way from before the last move to
  /// after it: the frame the cloths are drawn at (FixedStepClock's α).
  void record(double t, double alpha) {
    baked_.duration = t;
    if (previous_.empty()) previous_ = pose_;
    for (size_t j = 0; j < pose_.size(); ++j)
      if (keyed_[j])
        append_key(baked_.tracks[j], t,
                   {lerp(previous_[j].translation, pose_[j].translation, alpha),
                    slerp(previous_[j].rotation, pose_[j].rotation, alpha),
                    lerp(previous_[j].scale, pose_[j].scale, alpha)});
  }

  /// Joint j's motion from the bind (rest) pose to the current pose, in model space.
  Mat4 from_rest(int j) const { return model_[size_t(j)] * rest_inverse_[size_t(j)]; }

  const std::vector<Collider>& colliders() const { return colliders_; }
  size_t collider_count() const { return shapes_.size(); }
  std::span<const Vec3> skin_positions() const { return skin_; }
  Clip take_clip(int fps) {
    baked_.sample_rate = fps;
    return std::move(baked_);
  }

 private:
  /// The skinned meshes' vertices at the current pose, one after another (as bind_skin lists
  /// them at rest).
  void skin() {
    skin_.clear();
    for (const Mesh& mesh : a_.meshes) {
      if (mesh.skin < 0 || mesh.influences == 0) continue;
      palette_.resize(a_.skins[size_t(mesh.skin)].joints.size());
      asset_skin_palette(a_, mesh.skin, model_, palette_);
      positions_.resize(mesh.positions.size());
      skin_lbs(skin_mesh_view(mesh, c_.file), palette_, SkinOutputs{positions_, {}, {}});
      for (const Vec3f& p : positions_) skin_.push_back(Vec3(p));
    }
  }

  const SimSceneCharacter& c_;
  const Asset& a_;
  std::optional<SpringBoneSim> springs_;
  std::vector<CharacterCollider> shapes_;
  std::vector<Transform> pose_, previous_;  // now, and before the last move
  std::vector<Mat4> model_;
  std::vector<Mat4> rest_inverse_;  // of each joint's model matrix at rest
  std::vector<Collider> colliders_;
  bool skin_each_step_;
  std::vector<Affine3x4f> palette_;
  std::vector<Vec3f> positions_;
  std::vector<Vec3> skin_;
  std::vector<char> keyed_;
  Clip baked_;
};

/// The skinned vertex nearest to p (brute force: run once per attached vertex at the start).
size_t nearest_vertex(std::span<const Vec3> skin, const Vec3& p) {
  size_t best = 0;
  for (size_t k = 1; k < skin.size(); ++k)
    if (length_squared(skin[k] - p) < length_squared(skin[best] - p)) best = k;
  return best;
}

}  // namespace

std::string sim_particle_cache_path(const std::string& out, bool with_cloth) {
  if (!with_cloth) return out;
  std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + "_particles.pc2")).string();
}

std::string sim_hair_cache_path(const std::string& out, bool alone) {
  if (alone) return out;
  std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + "_hair.pc2")).string();
}

std::string sim_liquid_cache_path(const std::string& out, bool alone) {
  if (alone) return out;
  std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + "_liquid.pc2")).string();
}

std::string sim_smoke_path(const std::string& out) {
  const std::filesystem::path p(out);
  if (extension_of(out) == "vdb") {
    bool field = false;
    try {
      (void)vdb_frame_path(out, 0);
      field = true;
    } catch (const Error&) {
    }
    if (field) return out;
  }
  std::string stem;  // a '%' of the name is literal in the pattern
  for (char c : p.stem().string()) stem += c == '%' ? std::string("%%") : std::string(1, c);
  std::string folder;
  for (char c : p.parent_path().string())
    folder += c == '%' ? std::string("%%") : std::string(1, c);
  const bool vdb = extension_of(out) == "vdb";
  return (std::filesystem::path(folder) / (stem + (vdb ? "_%04d.vdb" : "_smoke_%04d.vdb")))
      .string();
}

namespace {

/// Refuses to write a non-finite value: `what` names the output in the message.
void check_finite_points(const std::string& scene, const std::string& place,
                         std::span<const Vec3f> points, const std::string& what) {
  for (size_t k = 0; k < points.size(); ++k)
    if (!std::isfinite(points[k].x) || !std::isfinite(points[k].y) || !std::isfinite(points[k].z))
      throw Error(scene, place,
                  what + " blew up (point " + std::to_string(k) +
                      " became infinite or NaN): lower the step (\"rate\") or raise the "
                      "substeps or iterations; nothing was written");
}

/// The progress stage: the simulated time and the steps a wall-clock second.
std::string sim_stage(double t, long steps, double seconds) {
  char text[96];
  std::snprintf(text, sizeof text, "simulating: t = %.2f s, %.0f steps/s", t,
                seconds > 0 ? double(steps) / seconds : 0.0);
  return text;
}

}  // namespace

std::string sim_rigid_path(const std::string& out, bool alone) {
  if (alone && writes_gltf(out)) return out;
  const std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + "_rigid.glb")).string();
}

std::string sim_character_path(const std::string& out) {
  std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + "_character.glb")).string();
}

SimResult run_sim_file(const SimRequest& request) {
  static constexpr std::string_view kOutputs[] = {"pc2", "glb", "gltf", "vdb"};
  const NamedInput inputs[] = {{"SCENE", request.scene}};
  check_output_file(request.out, inputs, kOutputs, "sim");
  const bool gltf = writes_gltf(request.out);
  SimResult result;
  result.scene = parse_sim_scene(read_file(request.scene), request.scene, request.character_file);
  const SimScene& scene = result.scene;
  const size_t mesh_outputs = scene.cloths.size() + scene.soft_bodies.size();
  if (extension_of(request.out) == "vdb" &&
      (!scene.smoke || mesh_outputs > 0 || scene.particles || scene.hair ||
       !scene.rigid_bodies.empty() || scene.liquid))
    throw UsageError("-o " + request.out +
                     ": a .vdb sequence is for a scene of smoke alone (give a .pc2 or .glb OUT; "
                     "the smoke goes to OUT's stem + _smoke_%04d.vdb)");
  std::string smoke_pattern;
  if (scene.smoke) {
    smoke_pattern = sim_smoke_path(request.out);
    if (same_file(vdb_frame_path(smoke_pattern, 0), request.scene))
      throw UsageError("the output " + vdb_frame_path(smoke_pattern, 0) +
                       " is the same file as SCENE");
  }
  if (!gltf)
    for (const SimSceneCloth& c : scene.cloths)
      for (const std::string& path : {sim_cache_path(request.out, c.name, mesh_outputs),
                                      sim_mesh_path(request.out, c.name, mesh_outputs)})
        if (same_file(path, request.scene))
          throw UsageError("the output " + path + " is the same file as SCENE");
  const std::string hair_path = check_body_outputs(request, scene, gltf);
  if (scene.character) {
    result.character_path = sim_character_path(request.out);
    for (const std::string& input : {request.scene, scene.character->file})
      if (same_file(result.character_path, input))
        throw UsageError("the output " + result.character_path + " is the same file as " + input);
  }

  const bool rigid_bodies = !scene.rigid_bodies.empty();
  std::string rigid_path;
  if (rigid_bodies) {
    rigid_path = sim_rigid_path(request.out, mesh_outputs == 0);
    if (same_file(rigid_path, request.scene))
      throw UsageError("the output " + rigid_path + " is the same file as SCENE");
  }
  if (scene.particles) {
    if (mesh_outputs == 0 && gltf && !rigid_bodies)
      throw UsageError("a scene of particles alone is written as a point cache: -o OUT.pc2");
    result.particle_cache_path =
        sim_particle_cache_path(request.out, mesh_outputs > 0 || rigid_bodies);
    result.particle_mesh_path =
        std::filesystem::path(result.particle_cache_path).replace_extension(".obj").string();
    result.particle_sidecar_path = particle_sidecar_path(result.particle_cache_path);
    for (const std::string& path :
         {result.particle_cache_path, result.particle_mesh_path, result.particle_sidecar_path})
      if (same_file(path, request.scene))
        throw UsageError("the output " + path + " is the same file as SCENE");
  }

  std::string liquid_path;
  if (scene.liquid) {
    const bool alone = mesh_outputs == 0 && !scene.particles && !scene.hair && !rigid_bodies;
    if (alone && gltf)
      throw UsageError("a scene of liquid alone is written as a point cache: -o OUT.pc2");
    liquid_path = sim_liquid_cache_path(request.out, alone);
    const std::filesystem::path stem = std::filesystem::path(liquid_path).replace_extension();
    for (const std::string& path : {liquid_path, stem.string() + ".obj", stem.string() + ".kpa",
                                    stem.string() + "_surface.glb"})
      if (same_file(path, request.scene))
        throw UsageError("the output " + path + " is the same file as SCENE");
  }

  result.frames = int(std::floor(scene.duration * scene.fps + 1e-9)) + 1;
  const double h = 1.0 / scene.rate;
  std::optional<ParticleSystem> particles;
  // Each frame's living particles: (serial, position), drawn α of the way between steps.
  std::vector<std::vector<std::pair<std::uint64_t, Vec3f>>> particle_frames;
  std::map<std::uint64_t, Vec3> particle_before;  // positions before the last step
  // For the sidecar: each particle's birth and lifetime (s), the instant each frame shows.
  std::map<std::uint64_t, std::pair<double, double>> particle_birth;
  std::vector<double> particle_frame_times{0.0};
  auto note_births = [&](const Particles& now) {
    for (size_t k = 0; k < now.count(); ++k)
      particle_birth.try_emplace(now.serial[k], particles->time() - now.age[k], now.lifetime[k]);
  };
  if (scene.particles) {
    ParticleSystemOptions options = *scene.particles;
    options.threads = request.threads;
    particles.emplace(std::move(options));
    particle_frames.emplace_back();  // frame 0: nothing emitted yet
  }
  // The character first: at the first frame's pose it decides where attached vertices hold on.
  std::optional<SceneCharacter> character;
  std::vector<Vec3> bind_skin;  // the skinned vertices as stored, when a cloth follows them
  if (scene.character) {
    const bool follows_skin = std::any_of(
        scene.cloths.begin(), scene.cloths.end(),
        [](const SimSceneCloth& c) { return c.attach_joint < 0 && !c.attach_to_skin.empty(); });
    character.emplace(*scene.character, follows_skin);
    if (follows_skin)
      for (const Mesh& mesh : scene.character->asset->meshes)
        if (mesh.skin >= 0 && mesh.influences > 0)
          for (const Vec3f& p : mesh.positions) bind_skin.push_back(Vec3(p));
    character->move_to(0, 0);
    character->record(0, 1);
    result.character_colliders = character->collider_count();
  }
  std::vector<Cloth> cloths;
  std::vector<PointCache> caches(scene.cloths.size());
  std::vector<std::vector<Vec3>> previous(scene.cloths.size());
  for (size_t i = 0; i < scene.cloths.size(); ++i) {
    const SimSceneCloth& c = scene.cloths[i];
    ClothOptions options = c.options;
    options.threads = request.threads;
    // With a character the cloth is authored around its bind pose: every vertex is carried to
    // the first frame rigidly by the attach joint (or the first root). With an attach joint the
    // attached vertices follow it rigidly (pins moved each step); without one each follows its
    // nearest skinned vertex, keeping its offset.
    std::vector<Vec3> start(c.mesh.positions.begin(), c.mesh.positions.end());
    if (character) {
      const Mat4 carry = character->from_rest(c.attach_joint >= 0 ? c.attach_joint : 0);
      for (Vec3& p : start) p = carry.transform_point(p);
      if (c.attach_joint >= 0) {
        for (std::uint32_t v : c.attach_to_skin) options.pinned.push_back(v);
      } else if (!c.attach_to_skin.empty()) {
        const std::span<const Vec3> skin = character->skin_positions();
        if (skin.empty())
          throw Error(request.scene, "/cloth/" + std::to_string(i) + "/attach_to_skin",
                      scene.character->file + " has no skinned mesh to attach to");
        for (std::uint32_t v : c.attach_to_skin) {
          const size_t k = nearest_vertex(bind_skin, c.mesh.positions[v]);
          options.attachments.push_back({v, std::uint32_t(k), start[v] - skin[k]});
        }
      }
    }
    if (character)
      for (const Collider& k : character->colliders()) options.colliders.push_back(k);
    cloths.emplace_back(c.mesh, options);
    size_t attached_inside = 0;
    if (character) {
      cloths.back().set_state(start, std::vector<Vec3>(start.size(), Vec3{0, 0, 0}));
      std::vector<std::uint32_t> held = options.pinned;
      for (const ClothAttachment& a : options.attachments) held.push_back(a.cloth_vertex);
      for (std::uint32_t v : held)
        for (const Collider& k : character->colliders()) {
          Vec3 surface, normal;
          if (collider_contact(k, start[v], options.thickness, surface, normal)) {
            ++attached_inside;
            break;
          }
        }
    }
    SimClothResult out;
    out.name = c.name;
    out.vertices = c.mesh.positions.size();
    out.springs = cloths.back().springs().size();
    out.attached_inside = attached_inside;
    out.cache_path = gltf ? request.out : sim_cache_path(request.out, c.name, mesh_outputs);
    out.mesh_path = gltf ? request.out : sim_mesh_path(request.out, c.name, mesh_outputs);
    result.cloths.push_back(out);
    caches[i].points = int(out.vertices);
    caches[i].start_frame = 0;
    caches[i].sample_rate = 1;
    caches[i].positions.reserve(out.vertices * size_t(result.frames));
  }
  auto record = [&](size_t i, std::span<const Vec3> before, double alpha) {
    const Cloth& cloth = cloths[i];
    for (size_t v = 0; v < cloth.positions().size(); ++v)
      caches[i].positions.push_back(Vec3f(lerp(before[v], cloth.positions()[v], alpha)));
    result.cloths[i].worst_stretch =
        std::max(result.cloths[i].worst_stretch, cloth.largest_stretch());
  };
  for (size_t i = 0; i < cloths.size(); ++i) record(i, cloths[i].positions(), 0);
  // What the soft bodies and hair take from the character each step.
  std::optional<CharacterNow> character_now;
  if (character)
    character_now = CharacterNow{character->colliders(),
                                 [&](int joint) { return character->from_rest(joint); }};
  SoftBodyRuns soft_bodies(scene, request.out, gltf, mesh_outputs,
                           character_now ? &*character_now : nullptr, result.frames);
  std::optional<HairRun> hair;
  if (scene.hair)
    hair.emplace(*scene.hair, hair_path, character_now ? &*character_now : nullptr, result.frames);
  record_bodies(soft_bodies, hair, 0, false);
  std::optional<RigidRun> rigid;
  if (rigid_bodies) {
    rigid.emplace(scene, rigid_path, result.frames, request.threads);
    rigid->record(0, false);
  }
  std::optional<LiquidRun> liquid;
  if (scene.liquid) liquid.emplace(*scene.liquid, liquid_path, request.scene, request.threads);
  std::optional<SmokeRun> smoke;
  if (scene.smoke) {
    smoke.emplace(*scene.smoke, smoke_pattern, request.scene, request.threads);
    std::vector<Collider> start;  // where the moving ones are before the first step
    if (character) start = character->colliders();
    if (rigid) rigid->add_colliders(start);
    smoke->start_moving(start);
  }
  const auto wall_start = std::chrono::steady_clock::now();
  double last_stage = -1;  // wall time of the last new stage text
  std::string stage = sim_stage(0, 0, 0);
  // The clock turns each 1/fps frame into whole 1/rate steps; a frame is drawn α of the way
  // from the state before the last step to the state after it.
  std::vector<Collider> moving;  // this step's moving colliders
  FixedStepClock clock(Seconds::fraction(1, scene.rate),
                       scene.rate / scene.fps + 2);  // offline: never drops time
  for (int frame = 1; frame < result.frames; ++frame) {
    const FrameSteps steps = clock.advance(Seconds::fraction(1, scene.fps));
    for (int s = 0; s < steps.steps; ++s) {
      ++result.steps;
      // The character first: the cloths and particles collide with it where it is at the end
      // of the step.
      // What moves and pushes cloth and particles aside: the character's capsules, the rigid
      // bodies (where the last step left them; one way: they do not feel the cloth).
      // Only worth gathering when a cloth or the particles take them.
      const bool pushed = (character || rigid) && (!cloths.empty() || particles || liquid || smoke);
      moving.clear();
      if (character) {
        character->move_to(double(result.steps) * h, h);
        if (pushed) moving = character->colliders();
      }
      if (rigid && pushed) rigid->add_colliders(moving);
      if (pushed)
        for (size_t i = 0; i < cloths.size(); ++i) {
          std::vector<Collider> colliders = scene.cloths[i].options.colliders;
          colliders.insert(colliders.end(), moving.begin(), moving.end());
          cloths[i].set_colliders(std::move(colliders));
        }
      if (character) {
        for (size_t i = 0; i < cloths.size(); ++i) {
          const SimSceneCloth& c = scene.cloths[i];
          if (c.attach_joint >= 0) {
            const Mat4 follow = character->from_rest(c.attach_joint);
            for (std::uint32_t v : c.attach_to_skin)
              cloths[i].set_pin_target(v, follow.transform_point(c.mesh.positions[v]));
          }
        }
      }
      if (particles) {
        const auto start = std::chrono::steady_clock::now();
        const Particles& now = particles->particles();
        if (s + 1 == steps.steps) {
          particle_before.clear();
          for (size_t k = 0; k < now.count(); ++k) particle_before[now.serial[k]] = now.position(k);
          note_births(now);
        }
        if (pushed) {
          std::vector<Collider> colliders = scene.particles->colliders;
          colliders.insert(colliders.end(), moving.begin(), moving.end());
          particles->set_colliders(std::move(colliders));
        }
        particles->step(h);
        result.particle_seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      if (liquid) liquid->step(h, moving, s + 1 == steps.steps);
      if (smoke) smoke->step(double(result.steps - 1) * h, h, moving, s + 1 == steps.steps);
      if (character) character_now->colliders = character->colliders();
      step_bodies(soft_bodies, hair, h, character_now, s + 1 == steps.steps);
      if (rigid) {
        rigid->step(h, s + 1 == steps.steps);
        for (const RigidRun::Break& b : rigid->breaks()) {  // debris, out in the next step
          Emitter e;
          e.position = b.point;
          e.rate = 0;
          e.burst = std::uint64_t(b.debris.count);
          e.velocity = b.velocity + Vec3{0, b.debris.speed, 0};
          e.spread = std::numbers::pi / 2;
          e.speed_jitter = 0.5;
          e.lifetime = b.debris.lifetime;
          e.lifetime_jitter = 0.3;
          e.seed = b.joint + 1;
          particles->add_emitter(std::move(e));
        }
      }
      for (size_t i = 0; i < cloths.size(); ++i) {
        const auto start = std::chrono::steady_clock::now();
        previous[i].assign(cloths[i].positions().begin(), cloths[i].positions().end());
        const ClothStepStats stats =
            cloths[i].step(h, character ? character->skin_positions() : std::span<const Vec3>{});
        result.cloths[i].collider_contacts += stats.collider_contacts;
        result.cloths[i].self_contacts += stats.self_contacts;
        result.cloths[i].seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
    }
    for (size_t i = 0; i < cloths.size(); ++i)
      record(i, steps.steps > 0 ? std::span<const Vec3>(previous[i]) : cloths[i].positions(),
             steps.alpha);
    if (character) character->record(double(frame) / scene.fps, steps.steps > 0 ? steps.alpha : 1);
    record_bodies(soft_bodies, hair, steps.alpha, steps.steps > 0);
    if (rigid) rigid->record(steps.alpha, steps.steps > 0);
    if (liquid) liquid->record(steps.alpha, steps.steps > 0);
    if (smoke) smoke->record(frame, double(frame) / scene.fps, steps.alpha, steps.steps > 0);
    if (particles) {
      const Particles& now = particles->particles();
      result.particles_most_alive = std::max(result.particles_most_alive, now.count());
      auto& out = particle_frames.emplace_back();
      note_births(now);
      particle_frame_times.push_back(particles->time() -
                                     (steps.steps > 0 ? (1 - steps.alpha) * h : 0.0));
      if (steps.steps > 0 && steps.alpha == 0) {
        // The state before the clock's last step, exactly (the particles that died in it too).
        for (const auto& [serial, p] : particle_before) out.emplace_back(serial, Vec3f(p));
      } else {
        for (size_t k = 0; k < now.count(); ++k) {
          const auto before = particle_before.find(now.serial[k]);
          const Vec3 p = steps.steps > 0 && before != particle_before.end()
                             ? lerp(before->second, now.position(k), steps.alpha)
                             : now.position(k);
          out.emplace_back(now.serial[k], Vec3f(p));
        }
      }
    }
    if (request.progress) {
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      if (wall - last_stage >= 0.25 || frame + 1 == result.frames) {
        stage = sim_stage(double(frame) / scene.fps, result.steps, wall);
        last_stage = wall;
      }
      report(request.progress, stage, frame, result.frames - 1);
    }
  }
  result.steps *= long(cloths.size());
  for (size_t i = 0; i < cloths.size(); ++i)
    result.cloths[i].largest_stretch = cloths[i].largest_stretch();
  result.soft_bodies = soft_bodies.finish();
  if (hair) result.hair = hair->finish();
  if (liquid) {
    result.liquid = liquid->finish();
    const SimSceneLiquid& l = *scene.liquid;
    result.liquid->flip = l.flip;
    if (result.liquid->steps_at_max_substeps > 0)
      result.warnings.push_back("liquid: " + std::to_string(result.liquid->steps_at_max_substeps) +
                                " of " + std::to_string(result.liquid->steps) +
                                " steps needed more than FLIP's " +
                                std::to_string(l.flip_options.max_substeps) +
                                " substeps (the last took what was left): raise \"rate\"");
    if (l.planes_skipped > 0)
      result.warnings.push_back("liquid: " + std::to_string(l.planes_skipped) +
                                " tilted plane colliders are not solids to FLIP (only planes "
                                "along an axis are)");
    if (l.flip && (character || rigid))
      result.warnings.push_back(
          "liquid: FLIP has no moving solids yet: the character and the rigid bodies do not "
          "push it (use an SPH solver for that)");
  }
  if (smoke) {
    result.smoke = smoke->finish();
    const SimSmokeResult& k = *result.smoke;
    if (k.steps_split > 0 && k.steps_at_max_substeps == 0)
      result.warnings.push_back("smoke: " + std::to_string(k.steps_split) + " of " +
                                std::to_string(k.steps) +
                                " steps moved the fluid more than max_cfl (" +
                                SceneReader::format(scene.smoke->options.max_cfl) +
                                ") cells and were split into " + std::to_string(k.substeps) +
                                " substeps in all, automatically (raise \"rate\" to "
                                "step it evenly)");
    if (k.steps_at_max_substeps > 0)
      result.warnings.push_back(
          "smoke: " + std::to_string(k.steps_at_max_substeps) + " of " + std::to_string(k.steps) +
          " steps needed more than max_substeps (" +
          std::to_string(scene.smoke->options.max_substeps) +
          ") substeps, so the fluid moved more than max_cfl cells a substep: raise \"rate\" or "
          "\"max_substeps\"");
    if (scene.smoke->planes_skipped > 0)
      result.warnings.push_back("smoke: " + std::to_string(scene.smoke->planes_skipped) +
                                " tilted plane colliders are not obstacles to the smoke (only "
                                "planes along an axis are)");
  }
  if (rigid) {
    result.rigid = rigid->result();
    if (!result.rigid->finite)
      throw Error(request.scene, "/rigid_bodies",
                  "the rigid bodies blew up (a pose became infinite or NaN): lower the step "
                  "(\"rate\") or raise \"rigid_solver\"/\"substeps\"; nothing was written");
  }
  // Particles as a point cache: every particle ever emitted is a vertex, held where it was first
  // drawn before that and where it was last drawn after.
  PointCache particle_cache;
  ParticleSidecar particle_sidecar;
  std::vector<Vec3> particle_rest;
  if (particles) {
    std::map<std::uint64_t, size_t> slot;
    for (const auto& frame : particle_frames)
      for (const auto& [serial, p] : frame) slot.emplace(serial, 0);
    size_t next = 0;
    for (auto& [serial, index] : slot) index = next++;
    for (std::uint64_t n : particles->emitted()) result.particles_emitted += n;
    if (double(slot.size()) * double(particle_frames.size()) > 50e6)
      throw Error(request.scene, "/particles",
                  std::to_string(slot.size()) + " particles over " +
                      std::to_string(particle_frames.size()) +
                      " frames are too many for a point cache (50 million points at most): lower "
                      "the rate, the lifetime or the duration");
    particle_cache.points = int(slot.size());
    particle_cache.start_frame = 0;
    particle_cache.sample_rate = 1;
    std::vector<Vec3f> last(slot.size());
    std::vector<char> seen(slot.size(), 0);
    // The first position of each, for the frames before it exists.
    for (const auto& frame : particle_frames)
      for (const auto& [serial, p] : frame)
        if (const size_t k = slot[serial]; !seen[k]) last[k] = p, seen[k] = 1;
    for (const Vec3f& p : last) particle_rest.push_back(Vec3(p));
    for (const auto& frame : particle_frames) {
      for (const auto& [serial, p] : frame) last[slot[serial]] = p;
      particle_cache.positions.insert(particle_cache.positions.end(), last.begin(), last.end());
    }
    // The sidecar: when each point is alive, its clock, the scene's curves over age.
    particle_sidecar.frames_per_second = scene.fps;
    particle_sidecar.frame_times = particle_frame_times;
    const ParticleAttributes& a = scene.particles->attributes;
    particle_sidecar.size = {a.size.u, a.size.value};
    for (size_t c = 0; c < 3; ++c) particle_sidecar.colour[c] = {a.colour[c].u, a.colour[c].value};
    particle_sidecar.opacity = {a.opacity.u, a.opacity.value};
    particle_sidecar.points.assign(slot.size(), ParticleLife{-1, -1, 0, 1});
    for (size_t f = 0; f < particle_frames.size(); ++f)
      for (const auto& [serial, p] : particle_frames[f]) {
        ParticleLife& life = particle_sidecar.points[slot[serial]];
        if (life.first_frame < 0) life.first_frame = int(f);
        life.last_frame = int(f);
        const auto& [birth, lifetime] = particle_birth.at(serial);
        life.birth = birth;
        life.lifetime = lifetime;
      }
  }

  // Nothing non-finite is written.
  for (size_t i = 0; i < caches.size(); ++i)
    check_finite_points(request.scene, "/cloth/" + std::to_string(i), caches[i].positions,
                        "the cloth \"" + scene.cloths[i].name + "\"");
  check_finite_points(request.scene, "/particles", particle_cache.positions, "the particles");

  // Everything ran: now write (each file atomically).
  if (particles) {
    write_pc2(result.particle_cache_path, particle_cache);
    write_obj_mesh(result.particle_mesh_path, particle_rest, {});
    write_particle_sidecar(result.particle_sidecar_path, particle_sidecar);
  }
  if (character) {
    Asset avatar = *scene.character->asset;
    avatar.clips.assign(1, character->take_clip(scene.fps));
    GltfWriteOptions options;
    options.spring_bones = false;
    write_gltf(avatar, result.character_path, options);
  }
  if (hair) hair->write_cache();
  if (rigid) rigid->write(scene.fps);
  if (liquid) liquid->write(scene.fps);
  if (smoke) smoke->commit();
  if (gltf && mesh_outputs > 0) {
    std::vector<MeshFrames> meshes;
    for (size_t i = 0; i < scene.cloths.size(); ++i)
      meshes.push_back({scene.cloths[i].name, scene.cloths[i].mesh.positions,
                        scene.cloths[i].mesh.triangles, &caches[i]});
    meshes.insert(meshes.end(), soft_bodies.meshes().begin(), soft_bodies.meshes().end());
    save_asset(morph_frames_asset(meshes, scene.fps, result.frames, "simulation"), request.out);
    return result;
  }
  for (size_t i = 0; i < scene.cloths.size(); ++i) {
    write_pc2(result.cloths[i].cache_path, caches[i]);
    write_obj_mesh(result.cloths[i].mesh_path, scene.cloths[i].mesh.positions,
                   scene.cloths[i].mesh.triangles);
  }
  soft_bodies.write_caches();
  return result;
}

}  // namespace kinema::pipeline
