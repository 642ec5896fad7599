// python/src/bind_match.cpp — motion matching: build a database from clip files, load one,
// search it (brute force or the bounded tree, both exact), and run the controller along a path.
#include <memory>
#include <numbers>

#include "common.h"
#include "kinema/core/file.h"
#include "kinema/match/database.h"
#include "kinema/match/search.h"
#include "kinema/pipeline/match.h"

namespace kinema::python {
namespace {

// A loaded database and its search structures (built on first use, then kept).
struct MatchDatabase {
  std::shared_ptr<const match::Database> db;
  std::shared_ptr<const match::BoundedTreeSearch> tree;
  std::shared_ptr<const match::BruteForceSearch> brute;

  const match::BoundedTreeSearch& tree_search() {
    if (!tree) tree = std::make_shared<match::BoundedTreeSearch>(db->features);
    return *tree;
  }
  const match::BruteForceSearch& brute_search() {
    if (!brute) brute = std::make_shared<match::BruteForceSearch>(db->features);
    return *brute;
  }
};

match::SearchFilter filter_of(const match::Database& db, const std::vector<std::string>& tags,
                              const std::vector<std::string>& exclude) {
  match::SearchFilter f;
  auto mask = [&](const std::string& tag) {
    const uint64_t bits = db.tag_mask(tag);
    if (!bits) throw py::value_error("tag '" + tag + "' is not in the database");
    return bits;
  };
  if (!tags.empty()) {
    f.require_any = 0;
    for (const auto& t : tags) f.require_any |= mask(t);
  }
  for (const auto& t : exclude) f.exclude |= mask(t);
  return f;
}

// Searches each row of `queries` (Q, D) float32 (normalized): frames (Q,) uint32 and costs (Q,).
py::tuple search_rows(MatchDatabase& self, const py::object& queries, bool exact_tree,
                      const std::vector<std::string>& tags,
                      const std::vector<std::string>& exclude) {
  const auto q = CArray<float>::ensure(queries);
  if (!q) throw py::value_error("queries: expected a float array");
  const auto dims = static_cast<py::ssize_t>(self.db->dims());
  const bool single = q.ndim() == 1;
  if (single)
    check_shape(q, {dims}, "query");
  else
    check_shape(q, {-1, dims}, "queries");
  const py::ssize_t rows = single ? 1 : q.shape(0);
  const match::SearchFilter filter = filter_of(*self.db, tags, exclude);
  auto frames = new_array<int64_t>({rows});
  auto costs = new_array<float>({rows});
  int64_t* fp = frames.mutable_data();
  float* cp = costs.mutable_data();
  const float* qp = q.data();
  const match::BoundedTreeSearch* tree = exact_tree ? &self.tree_search() : nullptr;
  const match::BruteForceSearch* brute = exact_tree ? nullptr : &self.brute_search();
  {
    py::gil_scoped_release released;
    for (py::ssize_t i = 0; i < rows; ++i) {
      const std::span<const float> row(qp + i * dims, static_cast<size_t>(dims));
      const match::SearchResult r = tree ? tree->search(row, filter) : brute->search(row, filter);
      fp[i] = r.found() ? static_cast<int64_t>(r.frame) : -1;
      cp[i] = r.cost;
    }
  }
  if (single) return py::make_tuple(fp[0], cp[0]);
  return py::make_tuple(frames, costs);
}

py::dict clip_dict(const match::DatabaseClip& c) {
  py::dict d;
  d["name"] = c.name;
  d["source"] = c.source;
  d["mirrored"] = c.mirrored;
  d["speed"] = c.speed;
  d["start_time"] = c.start_time;
  d["first_frame"] = c.first_frame;
  d["frame_count"] = c.frame_count;
  return d;
}

}  // namespace

void bind_match(py::module_& m) {
  py::class_<MatchDatabase>(m, "MatchDatabase", R"(A motion-matching database (.kmm).

Features are normalized and weighted, so a frame's cost is the squared distance to a normalized
query. Both searches are exact: `search` (a bounded tree) returns the same frame as
`search(..., brute_force=True)`.)")
      .def_static(
          "load",
          [](const std::string& path) {
            std::shared_ptr<match::Database> db;
            {
              py::gil_scoped_release released;
              db = std::make_shared<match::Database>(
                  match::deserialize_database(read_file(path), path));
            }
            return MatchDatabase{db, nullptr, nullptr};
          },
          py::arg("path"), "Reads a .kmm; raises kinema.Error naming the file and byte offset.")
      .def_static(
          "build",
          [](const std::vector<std::string>& inputs, const std::string& out,
             const std::string& tags, double fps, bool mirror, int skip_frames,
             const py::object& progress) {
            pipeline::MatchBuildRequest request;
            request.inputs = inputs;
            request.out = out;
            request.tags = tags;
            request.skip_frames = skip_frames;
            request.database.fps = fps;
            request.database.mirror = mirror;
            const auto callback = progress_callback(progress);
            std::shared_ptr<match::Database> db;
            {
              py::gil_scoped_release released;
              db = std::make_shared<match::Database>(
                  pipeline::build_match_database(request, callback).database);
            }
            return MatchDatabase{db, nullptr, nullptr};
          },
          py::arg("inputs"), py::arg("out"), py::kw_only(), py::arg("tags") = "",
          py::arg("fps") = 30.0, py::arg("mirror") = false, py::arg("skip_frames") = 0,
          py::arg("progress") = py::none(),
          R"(Builds a database from clip files (every clip of each) and writes it to `out`.

tags: a TAGS.json or ''; progress(stage, done, total) is called as it goes. Releases the GIL.)")
      .def_property_readonly("frames", [](const MatchDatabase& s) { return s.db->frames(); })
      .def_property_readonly("dims", [](const MatchDatabase& s) { return s.db->dims(); })
      .def_property_readonly("fps", [](const MatchDatabase& s) { return s.db->fps; })
      .def_property_readonly("has_poses", [](const MatchDatabase& s) { return s.db->has_poses(); })
      .def_property_readonly("tag_names", [](const MatchDatabase& s) { return s.db->tag_names; })
      .def_property_readonly("skeleton", [](const MatchDatabase& s) { return s.db->skeleton; })
      .def_property_readonly("clips",
                             [](const MatchDatabase& s) {
                               py::list out;
                               for (const auto& c : s.db->clips) out.append(clip_dict(c));
                               return out;
                             })
      .def_property_readonly(
          "features",
          [](py::object self) {
            const auto& s = self.cast<const MatchDatabase&>();
            return view(
                s.db->features.values.data(),
                {static_cast<py::ssize_t>(s.db->frames()), static_cast<py::ssize_t>(s.db->dims())},
                self);
          },
          "(frames, dims) float32 normalized features: a read-only view, no copy.")
      .def_property_readonly(
          "searchable",
          [](const MatchDatabase& s) {
            const auto& flags = s.db->features.searchable;
            auto out = new_array<bool>({static_cast<py::ssize_t>(s.db->frames())});
            for (size_t f = 0; f < s.db->frames(); ++f)
              out.mutable_data()[f] = flags.empty() || flags[f] != 0;
            return out;
          },
          "(frames,) bool: which frames a search may return (the last frames of a clip, with no "
          "future to play, may not).")
      .def(
          "normalize",
          [](const MatchDatabase& s, const CArray<float>& raw) {
            check_shape(raw, {static_cast<py::ssize_t>(s.db->dims())}, "raw");
            auto out = new_array<float>({raw.shape(0)});
            s.db->normalize({raw.data(), static_cast<size_t>(raw.shape(0))},
                            {out.mutable_data(), static_cast<size_t>(raw.shape(0))});
            return out;
          },
          py::arg("raw"), "Raw features (the database's units) → a normalized query.")
      .def(
          "search",
          [](MatchDatabase& s, const py::object& queries, bool brute_force,
             const std::vector<std::string>& tags, const std::vector<std::string>& exclude) {
            return search_rows(s, queries, !brute_force, tags, exclude);
          },
          py::arg("queries"), py::kw_only(), py::arg("brute_force") = false,
          py::arg("tags") = std::vector<std::string>{},
          py::arg("exclude") = std::vector<std::string>{},
          R"(The best frame for a normalized query (dims,) → (frame, cost), or for each row of
(Q, dims) → (frames (Q,) int64, costs (Q,) float32). frame -1: nothing allowed. tags: search only
frames carrying one of them; exclude: never frames carrying one. Releases the GIL.)")
      .def(
          "pose",
          [](const MatchDatabase& s, uint32_t frame) {
            if (!s.db->has_poses()) throw py::value_error("the database was built without poses");
            if (frame >= s.db->frames()) throw py::index_error("frame out of range");
            return arrays_from_transforms(s.db->pose(frame));
          },
          py::arg("frame"), "The local pose of a frame (float32), with poses only.")
      .def(
          "clip_of",
          [](const MatchDatabase& s, uint32_t frame) {
            if (frame >= s.db->frames()) throw py::index_error("frame out of range");
            return py::make_tuple(clip_dict(s.db->clip_of(frame)), s.db->source_time(frame));
          },
          py::arg("frame"), "(clip dict, source time in seconds) of a frame.")
      .def("__repr__", [](const MatchDatabase& s) {
        return "<kinema.MatchDatabase " + std::to_string(s.db->frames()) + " frames × " +
               std::to_string(s.db->dims()) + " features>";
      });

  m.def(
      "learn_match",
      [](const std::string& database, const std::string& out, double epochs, int min_iterations,
         int threads, int hidden, int latent, uint64_t seed, const std::string& plot,
         const py::object& progress) {
        pipeline::MatchLearnRequest request;
        request.database = database;
        request.out = out;
        request.plot = plot;
        request.train.epochs = epochs;
        request.train.min_iterations = uint32_t(std::max(min_iterations, 1));
        request.train.threads = threads;
        request.train.hidden = uint32_t(std::max(hidden, 0));
        request.train.latent_dims = uint32_t(std::max(latent, 0));
        request.train.seed = seed;
        const auto callback = progress_callback(progress);
        pipeline::MatchLearnResult r;
        {
          py::gil_scoped_release released;
          r = pipeline::learn_match_model(request, callback);
        }
        py::dict d;
        d["frames"] = r.frames;
        d["database_bytes"] = r.database_bytes;
        d["model_bytes"] = r.model.model_bytes();
        d["file_bytes"] = r.file_bytes;
        d["plot"] = r.plot;
        py::dict seconds, losses;
        static constexpr const char* kNames[] = {"decompressor", "stepper", "projector"};
        for (int i = 0; i < 3; ++i) seconds[kNames[i]] = r.report.seconds[i];
        for (const match::LossCurve& c : r.report.curves) losses[c.network.c_str()] = c.losses;
        d["seconds"] = seconds;
        d["losses"] = losses;
        return d;
      },
      py::arg("database"), py::arg("out"), py::kw_only(), py::arg("epochs") = 20.0,
      py::arg("min_iterations") = 500, py::arg("threads") = 1, py::arg("hidden") = 512,
      py::arg("latent") = 32, py::arg("seed") = 1, py::arg("plot") = "",
      py::arg("progress") = py::none(),
      R"(Trains learned motion matching on a .kmm (with poses) and writes the model (.kml) and its
loss curves (PNG), as `kinema match learn` does (the same defaults). Returns a dict (frames,
database and model bytes, seconds and loss curve per network). Releases the GIL.)");

  m.def(
      "run_match",
      [](const std::string& database, const std::string& path, const std::string& out,
         const std::string& tags, const std::string& exclude, double search_interval,
         double blend_time, double clamp_distance, double clamp_angle, bool foot_locking, bool warp,
         const std::string& compare, const py::object& progress) {
        pipeline::MatchRunRequest request;
        request.database = database;
        request.compare = compare;
        request.path = path;
        request.out = out;
        request.tags = tags;
        request.exclude = exclude;
        request.controller.search_interval = search_interval;
        request.controller.blend_time = blend_time;
        request.controller.clamp_distance = clamp_distance;
        request.controller.clamp_angle = clamp_angle;
        request.controller.foot_locking = foot_locking;
        request.controller.locomotion_warping = warp;
        const auto callback = progress_callback(progress);
        pipeline::MatchRunResult r;
        {
          py::gil_scoped_release released;
          r = pipeline::run_match_along_path(request, callback);
        }
        py::dict d;
        d["frames"] = r.run.frames;
        d["fps"] = r.fps;
        d["searches"] = r.run.searches;
        d["transitions"] = r.run.transitions;
        d["trajectory_error_mean"] = r.run.trajectory_error_mean;
        d["trajectory_error_max"] = r.run.trajectory_error_max;
        d["speed_error_mean"] = r.run.speed_error_mean;
        if (r.foot_skate && r.foot_skate->skate.speed)
          d["foot_skate_median"] = r.foot_skate->skate.speed->median;
        d["clip"] = r.run.clip;
        d["learned"] = r.learned;
        if (r.comparison) {
          const pipeline::MatchComparison& c = *r.comparison;
          py::dict e;
          e["transitions"] = c.exact.transitions;
          e["trajectory_error_mean"] = c.exact.trajectory_error_mean;
          if (c.foot_skate && c.foot_skate->skate.speed)
            e["foot_skate_median"] = c.foot_skate->skate.speed->median;
          e["root_distance_mean"] = c.root_distance_mean;
          e["pose_distance_mean_cm"] = c.pose_distance_mean_cm;
          d["exact"] = e;
        }
        return d;
      },
      py::arg("database"), py::arg("path"), py::arg("out"), py::kw_only(), py::arg("tags") = "",
      py::arg("exclude") = "", py::arg("search_interval") = 0.1, py::arg("blend_time") = 0.2,
      py::arg("clamp_distance") = 0.15, py::arg("clamp_angle") = 30 * std::numbers::pi / 180,
      py::arg("foot_locking") = false, py::arg("warp") = false, py::arg("compare") = "",
      py::arg("progress") = py::none(),
      R"(Runs the motion-matching controller along a scripted stick path (PATH.json) and writes
the animation to `out` (.glb .gltf .bvh), as `kinema match run` does (the same defaults:
searches every 0.1 s, 0.2 s inertialization, the character clamped within 0.15 m and 30 degrees
(given in radians) of the simulated one; `warp` is `--warp`, locomotion warping with planted feet
held). `database` may be a learned model (.kml); `compare` (with one) also runs that .kmm along
the path. Returns a report dict (frames, searches, transitions, trajectory and speed errors, the
clip, "learned", and "exact" with `compare`). Releases the GIL.)");
}

}  // namespace kinema::python
