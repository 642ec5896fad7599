// Playing a graph offline and baking the result (see kinema/graph/graph_play.h).
#include "kinema/graph/graph_play.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "kinema/core/error.h"
#include "kinema/graph/graph_instance.h"

namespace kinema {

// ---- parameter curves ----------------------------------------------------------------------

namespace {

constexpr const char* kParam = "--param";
constexpr const char* kSyntax =
    " (expected NAME=TIME:VALUE,… such as speed=0:0,2:4.5, NAME=VALUE, or NAME=TIME,… for a "
    "trigger)";

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

double parse_number(const std::string& text, const std::string& place, const char* what) {
  double v = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  if (!text.empty() && *first == '+') ++first;
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (text.empty() || ec != std::errc() || ptr != last)
    throw Error(kParam, place, std::string(what) + " '" + text + "' is not a number" + kSyntax);
  if (!std::isfinite(v))
    throw Error(kParam, place, std::string(what) + " '" + text + "' is not finite");
  return v;
}

}  // namespace

ParamCurve parse_param_curve(std::string_view spec) {
  ParamCurve c;
  c.spec = std::string(spec);
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos)
    throw Error(kParam, "", "'" + c.spec + "' has no '='" + kSyntax);
  c.name = trim(spec.substr(0, eq));
  if (c.name.empty()) throw Error(kParam, "", "'" + c.spec + "' has no parameter name" + kSyntax);
  const std::string_view rest = spec.substr(eq + 1);
  size_t start = 0;
  int index = 1;
  while (true) {
    const size_t comma = rest.find(',', start);
    const std::string item = trim(rest.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    const std::string place = c.name + " item " + std::to_string(index);
    if (item.empty()) throw Error(kParam, place, "empty item in '" + c.spec + "'" + kSyntax);
    ParamCurve::Item it;
    const size_t colon = item.find(':');
    if (colon == std::string::npos) {
      it.a = parse_number(item, place, "value");
    } else {
      if (item.find(':', colon + 1) != std::string::npos)
        throw Error(kParam, place, "'" + item + "' has more than one ':'" + kSyntax);
      it.a = parse_number(trim(item.substr(0, colon)), place, "time");
      it.b = parse_number(trim(item.substr(colon + 1)), place, "value");
    }
    c.items.push_back(it);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
    ++index;
  }
  return c;
}

void check_param_curves(const AnimGraph& graph, std::span<const ParamCurve> curves) {
  for (size_t i = 0; i < curves.size(); ++i) {
    const ParamCurve& c = curves[i];
    for (size_t k = 0; k < i; ++k)
      if (curves[k].name == c.name)
        throw Error(kParam, c.name, "given twice (" + curves[k].spec + " and " + c.spec + ")");
    const int p = graph.find_parameter(c.name);
    if (p < 0) {
      std::string list;
      for (const GraphParameter& gp : graph.parameters())
        list += (list.empty() ? "" : ", ") + gp.name;
      throw Error(kParam, c.name,
                  "the graph " + graph.file() + " has no parameter '" + c.name +
                      "' (parameters: " + (list.empty() ? "none" : list) + ")");
    }
    const ParamType type = graph.parameters()[static_cast<size_t>(p)].type;
    const bool lone = c.items.size() == 1 && !c.items[0].b;
    double last = 0;
    for (size_t k = 0; k < c.items.size(); ++k) {
      const ParamCurve::Item& it = c.items[k];
      const std::string place = c.name + " item " + std::to_string(k + 1);
      if (type == ParamType::Trigger) {
        if (it.b)
          throw Error(
              kParam, place,
              "'" + c.name + "' is a trigger: give the times it fires, e.g. " + c.name + "=1.5,3");
      } else if (!lone) {
        if (!it.b)
          throw Error(kParam, place,
                      "give TIME:VALUE keys (or one constant value) for '" + c.name + "'");
        if (type == ParamType::Bool && *it.b != 0 && *it.b != 1)
          throw Error(kParam, place, "'" + c.name + "' is a bool: values are 0 or 1");
      } else if (type == ParamType::Bool && it.a != 0 && it.a != 1) {
        throw Error(kParam, place, "'" + c.name + "' is a bool: values are 0 or 1");
      }
      if (lone && type != ParamType::Trigger) continue;
      if (it.a < 0) throw Error(kParam, place, "a time must not be negative");
      if (k > 0 && it.a < last) throw Error(kParam, place, "times must not decrease");
      last = it.a;
    }
  }
}

namespace {

/// The value of a float / bool curve at time t.
float curve_value(const ParamCurve& c, ParamType type, double t) {
  if (c.items.size() == 1 && !c.items[0].b) return static_cast<float>(c.items[0].a);
  const auto& items = c.items;
  if (t <= items.front().a) return static_cast<float>(*items.front().b);
  if (t >= items.back().a) return static_cast<float>(*items.back().b);
  size_t k = 1;
  while (k < items.size() && items[k].a <= t) ++k;  // items[k-1].a <= t < items[k].a
  const ParamCurve::Item& a = items[k - 1];
  const ParamCurve::Item& b = items[k];
  if (type == ParamType::Bool || !(b.a > a.a)) return static_cast<float>(*a.b);
  const double s = (t - a.a) / (b.a - a.a);
  return static_cast<float>(*a.b + (*b.b - *a.b) * s);
}

std::string machine_label(const AnimGraph& graph, const MachineStatus& s) {
  const GraphNode& node = graph.nodes()[static_cast<size_t>(s.node)];
  const bool nested = s.node != graph.root();
  const auto& m = std::get<StateMachineNode>(node.data);
  const std::string& state = m.states[static_cast<size_t>(s.state)].name;
  if (!nested || node.name.empty() || node.name[0] == '/') return state;
  return node.name + "/" + state;
}

}  // namespace

// ---- playing and baking --------------------------------------------------------------------

Asset play_graph(const BuiltGraph& built, const PlayOptions& options, PlayReport* report) {
  const AnimGraph& graph = built.graph;
  if (built.character.skeleton.joint_count() != graph.joint_count())
    throw Error(graph.file(), "",
                "the character's skeleton is not the graph's (" +
                    std::to_string(built.character.skeleton.joint_count()) +
                    " joints, the graph has " + std::to_string(graph.joint_count()) + ")");
  if (!(options.seconds > 0) || !std::isfinite(options.seconds))
    throw Error("", "", "the length to play must be a positive number of seconds");
  if (!(options.fps > 0) || !std::isfinite(options.fps))
    throw Error("", "", "the frame rate must be a positive number");
  check_param_curves(graph, options.params);

  GraphInstance instance(graph);
  struct Bound {
    const ParamCurve* curve;
    ParamHandle handle;
    ParamType type;
  };
  std::vector<Bound> bound;
  for (const ParamCurve& c : options.params) {
    const ParamHandle h = instance.parameter(c.name);
    bound.push_back({&c, h, graph.parameters()[static_cast<size_t>(h.index)].type});
  }

  const int joints = graph.joint_count();
  const long last = std::lround(options.seconds * options.fps);
  if (last > 10'000'000 / std::max(1, joints))
    throw Error("", "", "too many frames to bake (" + std::to_string(last + 1) + ")");
  const int frames = static_cast<int>(last) + 1;
  const double step = 1.0 / options.fps;

  // The root ancestor of the root-motion joint is where the world placement goes.
  const std::span<const int16_t> parents = graph.runtime_skeleton().parents();
  int placed = -1;
  if (graph.root_motion().enabled && options.root_motion == RootMotionOutput::Bake) {
    placed = graph.root_motion().joint;
    while (placed >= 0 && parents[static_cast<size_t>(placed)] >= 0)
      placed = parents[static_cast<size_t>(placed)];
  }

  Clip clip;
  clip.name = std::filesystem::path(graph.file()).stem().string();  // "walk.graph.json" → "walk"
  if (clip.name.size() > 6 && clip.name.ends_with(".graph")) clip.name.resize(clip.name.size() - 6);
  clip.duration = static_cast<double>(last) / options.fps;
  clip.sample_rate = options.fps;
  clip.tracks.resize(static_cast<size_t>(joints));
  std::vector<SoaTransform> pose(static_cast<size_t>(graph.soa_count()));
  std::vector<Transformf> local(static_cast<size_t>(joints));
  std::vector<char> scaled(static_cast<size_t>(joints), 0);
  PlayReport r;
  r.frames = frames;
  const auto visit = [&]() {
    const auto machines = instance.machines();
    for (size_t i = 0; i < machines.size(); ++i) {
      if (!machines[i].active) continue;
      const std::string label = machine_label(graph, machines[i]);
      if (std::find(r.states_visited.begin(), r.states_visited.end(), label) ==
          r.states_visited.end())
        r.states_visited.push_back(label);
    }
  };

  // The initial state counts as visited even when a transition leaves it on the first update.
  for (const MachineStatus& s : instance.machines())
    if (s.node == graph.root()) r.states_visited.push_back(machine_label(graph, s));

  double previous_time = -1;
  for (int f = 0; f < frames; ++f) {
    const double t = f == frames - 1 ? clip.duration : f * step;
    for (const Bound& b : bound) {
      if (b.type == ParamType::Trigger) {
        for (const ParamCurve::Item& it : b.curve->items)
          if (it.a > previous_time && it.a <= t) instance.fire(b.handle);
      } else if (b.type == ParamType::Bool) {
        instance.set_bool(b.handle, curve_value(*b.curve, b.type, t) != 0);
      } else {
        instance.set_float(b.handle, curve_value(*b.curve, b.type, t));
      }
    }
    if (options.before_update) options.before_update(t, instance);
    instance.update(f == 0 ? 0.0f : static_cast<float>(t - previous_time));
    previous_time = t;
    visit();
    instance.evaluate(pose);
    to_aos(pose, local);
    if (placed >= 0)
      local[static_cast<size_t>(placed)] =
          Transformf(instance.world_transform()) * local[static_cast<size_t>(placed)];
    for (int j = 0; j < joints; ++j) {
      const Transform x(local[static_cast<size_t>(j)]);
      JointTrack& track = clip.tracks[static_cast<size_t>(j)];
      Quat q = normalize(x.rotation);
      if (!track.rotation.values.empty() && dot(track.rotation.values.back(), q) < 0) q = -q;
      track.translation.times.push_back(t);
      track.translation.values.push_back(x.translation);
      track.rotation.times.push_back(t);
      track.rotation.values.push_back(q);
      track.scale.times.push_back(t);
      track.scale.values.push_back(x.scale);
      if (std::abs(x.scale.x - 1) > 1e-6 || std::abs(x.scale.y - 1) > 1e-6 ||
          std::abs(x.scale.z - 1) > 1e-6)
        scaled[static_cast<size_t>(j)] = 1;
    }
    if (options.progress) options.progress(f + 1, frames);
  }
  for (int j = 0; j < joints; ++j)
    if (!scaled[static_cast<size_t>(j)]) clip.tracks[static_cast<size_t>(j)].scale = {};

  for (const MachineStatus& s : instance.machines()) r.transitions_taken += s.transitions_taken;
  if (placed >= 0) r.final_placement = instance.world();
  if (report) *report = std::move(r);

  Asset result = built.character;
  result.clips.clear();
  result.clips.push_back(std::move(clip));
  return result;
}

}  // namespace kinema
