// Tracks and camera solves as JSON (kinema/matchmove/matchmove_json.h).
#include "kinema/matchmove/matchmove_json.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "kinema/core/error.h"

namespace kinema::matchmove {

namespace {

using nlohmann::json;

constexpr const char* kTracksFormat = "kinema-tracks";
constexpr const char* kSolveFormat = "kinema-camera-solve";
constexpr int kVersion = 1;

const char* kind(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    default:
      return "an unsupported value";
  }
}

/// Typed reads that fail with the file and the value's JSON pointer.
struct Reader {
  const std::string& file;

  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const {
    throw Error(file, pointer.empty() ? std::string("/") : pointer, reason);
  }
  const json& member(const json& object, const std::string& pointer, const char* key) const {
    if (!object.is_object()) fail(pointer, std::string("expected an object, got ") + kind(object));
    const auto it = object.find(key);
    if (it == object.end()) fail(pointer, std::string("missing member '") + key + "'");
    return *it;
  }
  const json& array(const json& v, const std::string& pointer) const {
    if (!v.is_array()) fail(pointer, std::string("expected an array, got ") + kind(v));
    return v;
  }
  double number(const json& v, const std::string& pointer) const {
    // nlohmann reads NaN and infinity as null; either way they are not numbers here.
    if (!v.is_number()) fail(pointer, std::string("expected a number, got ") + kind(v));
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(pointer, "the number is not finite");
    return d;
  }
  int integer(const json& v, const std::string& pointer) const {
    if (!v.is_number_integer())
      fail(pointer, std::string("expected an integer, got ") +
                        (v.is_number() ? "a fractional number" : kind(v)));
    const auto i = v.get<long long>();
    if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max())
      fail(pointer, "the integer is out of range");
    return int(i);
  }
};

json vec3(const Vec3& v) { return json::array({v.x, v.y, v.z}); }

}  // namespace

std::string tracks_to_json(const TrackSet& tracks, int indent) {
  json j;
  j["format"] = kTracksFormat;
  j["version"] = kVersion;
  j["width"] = tracks.width;
  j["height"] = tracks.height;
  j["frame_count"] = tracks.frame_count;
  json list = json::array();
  for (const Track& t : tracks.tracks) {
    json observations = json::array();
    for (const Observation& o : t.observations)
      observations.push_back(json::array({o.frame, o.u, o.v}));
    list.push_back({{"id", t.id}, {"observations", std::move(observations)}});
  }
  j["tracks"] = std::move(list);
  return j.dump(indent);
}

namespace {

/// The document, with malformed text reported at its line and column, and its format and version
/// checked.
json parse_document(std::string_view text, const Reader& r, const char* expected_format) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    if (const std::size_t colon = what.find(": "); colon != std::string::npos)
      what = what.substr(colon + 2);  // drop "[json.exception.parse_error.101] parse error at …"
    throw Error(r.file, at_line_and_column(text, e.byte > 0 ? e.byte - 1 : 0),
                "malformed JSON: " + what);
  } catch (const json::exception& e) {
    // E.g. a number too large for a double: nlohmann gives no position.
    throw Error(r.file, "/", std::string("malformed JSON: ") + e.what());
  }
  const json& format = r.member(j, "", "format");
  if (!format.is_string() || format.get<std::string>() != expected_format)
    r.fail("/format", std::string("expected \"") + expected_format + "\"");
  const int version = r.integer(r.member(j, "", "version"), "/version");
  if (version != kVersion)
    r.fail("/version", "version " + std::to_string(version) + " is not supported (expected " +
                           std::to_string(kVersion) + ")");
  return j;
}

}  // namespace

TrackSet tracks_from_json(std::string_view text, const std::string& file) {
  const Reader r{file};
  const json j = parse_document(text, r, kTracksFormat);
  TrackSet set;
  set.width = r.integer(r.member(j, "", "width"), "/width");
  set.height = r.integer(r.member(j, "", "height"), "/height");
  set.frame_count = r.integer(r.member(j, "", "frame_count"), "/frame_count");
  if (set.width <= 0) r.fail("/width", "must be positive");
  if (set.height <= 0) r.fail("/height", "must be positive");
  if (set.frame_count <= 0) r.fail("/frame_count", "must be positive");
  const json& list = r.array(r.member(j, "", "tracks"), "/tracks");
  std::set<int> ids;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = "/tracks/" + std::to_string(i);
    Track t;
    t.id = r.integer(r.member(list[i], at, "id"), at + "/id");
    if (t.id < 0) r.fail(at + "/id", "must be ≥ 0");
    if (!ids.insert(t.id).second) r.fail(at + "/id", "id " + std::to_string(t.id) + " repeats");
    const json& observations = r.array(r.member(list[i], at, "observations"), at + "/observations");
    for (std::size_t k = 0; k < observations.size(); ++k) {
      const std::string place = at + "/observations/" + std::to_string(k);
      const json& o = r.array(observations[k], place);
      if (o.size() != 3) r.fail(place, "expected [frame, u, v]");
      Observation ob;
      ob.frame = r.integer(o[0], place + "/0");
      ob.u = r.number(o[1], place + "/1");
      ob.v = r.number(o[2], place + "/2");
      if (ob.frame < 0 || ob.frame >= set.frame_count)
        r.fail(place + "/0", "frame " + std::to_string(ob.frame) + " is outside the " +
                                 std::to_string(set.frame_count) + " frames");
      if (!t.observations.empty() && ob.frame != t.observations.back().frame + 1)
        r.fail(place + "/0", "observations must be on consecutive, increasing frames");
      if (ob.u < -0.5 || ob.u > set.width - 0.5) r.fail(place + "/1", "u lies off the frame");
      if (ob.v < -0.5 || ob.v > set.height - 0.5) r.fail(place + "/2", "v lies off the frame");
      t.observations.push_back(ob);
    }
    set.tracks.push_back(std::move(t));
  }
  return set;
}

std::string camera_solve_to_json(const CameraSolve& solve, int indent) {
  json j;
  j["format"] = kSolveFormat;
  j["version"] = kVersion;
  j["width"] = solve.width;
  j["height"] = solve.height;
  j["convention"] =
      "x_camera = rotation * (X - position); camera x right, y down, looking down +z (OpenCV); "
      "rotation is a quaternion [x, y, z, w]; pixels u right, v down, (0, 0) the top-left "
      "pixel's centre";
  j["intrinsics"] = {{"fx", solve.intrinsics.fx},
                     {"fy", solve.intrinsics.fy},
                     {"cx", solve.intrinsics.cx},
                     {"cy", solve.intrinsics.cy}};
  j["lens"] = {{"k1", solve.lens.k1},
               {"k2", solve.lens.k2},
               {"k3", solve.lens.k3},
               {"p1", solve.lens.p1},
               {"p2", solve.lens.p2}};
  j["initial_frames"] = json::array({solve.initial_frames[0], solve.initial_frames[1]});
  j["observations"] = solve.observations;
  j["mean_error_px"] = solve.mean_error;
  j["rms_error_px"] = solve.rms_error;
  j["seconds"] = solve.seconds;
  json cameras = json::array();
  for (const SolvedCamera& c : solve.cameras) {
    json cj = {{"frame", c.frame}, {"solved", c.solved}};
    if (c.solved) {
      cj["position"] = vec3(c.position);
      cj["rotation"] = json::array({c.rotation.x, c.rotation.y, c.rotation.z, c.rotation.w});
      cj["observations"] = c.observations;
      cj["mean_error_px"] = c.mean_error;
    }
    cameras.push_back(std::move(cj));
  }
  j["cameras"] = std::move(cameras);
  json points = json::array();
  for (const SolvedPoint& p : solve.points)
    points.push_back(
        {{"track", p.track_id}, {"position", vec3(p.position)}, {"observations", p.observations}});
  j["points"] = std::move(points);
  return j.dump(indent);
}

CameraSolve camera_solve_from_json(std::string_view text, const std::string& file) {
  const Reader r{file};
  const json j = parse_document(text, r, kSolveFormat);
  CameraSolve s;
  s.width = r.integer(r.member(j, "", "width"), "/width");
  s.height = r.integer(r.member(j, "", "height"), "/height");
  if (s.width <= 0) r.fail("/width", "must be positive");
  if (s.height <= 0) r.fail("/height", "must be positive");
  const json& k = r.member(j, "", "intrinsics");
  s.intrinsics.fx = r.number(r.member(k, "/intrinsics", "fx"), "/intrinsics/fx");
  s.intrinsics.fy = r.number(r.member(k, "/intrinsics", "fy"), "/intrinsics/fy");
  s.intrinsics.cx = r.number(r.member(k, "/intrinsics", "cx"), "/intrinsics/cx");
  s.intrinsics.cy = r.number(r.member(k, "/intrinsics", "cy"), "/intrinsics/cy");
  if (!(s.intrinsics.fx > 0)) r.fail("/intrinsics/fx", "must be positive");
  if (!(s.intrinsics.fy > 0)) r.fail("/intrinsics/fy", "must be positive");
  const json& lens = r.member(j, "", "lens");
  double* coefficients[5] = {&s.lens.k1, &s.lens.k2, &s.lens.k3, &s.lens.p1, &s.lens.p2};
  const char* names[5] = {"k1", "k2", "k3", "p1", "p2"};
  for (int i = 0; i < 5; ++i)
    *coefficients[i] =
        r.number(r.member(lens, "/lens", names[i]), std::string("/lens/") + names[i]);
  const json& initial = r.array(r.member(j, "", "initial_frames"), "/initial_frames");
  if (initial.size() != 2) r.fail("/initial_frames", "expected [first, second]");
  s.initial_frames[0] = r.integer(initial[0], "/initial_frames/0");
  s.initial_frames[1] = r.integer(initial[1], "/initial_frames/1");
  s.observations = r.integer(r.member(j, "", "observations"), "/observations");
  s.mean_error = r.number(r.member(j, "", "mean_error_px"), "/mean_error_px");
  s.rms_error = r.number(r.member(j, "", "rms_error_px"), "/rms_error_px");
  s.seconds = r.number(r.member(j, "", "seconds"), "/seconds");
  auto read_vec3 = [&](const json& v, const std::string& at) {
    const json& a = r.array(v, at);
    if (a.size() != 3) r.fail(at, "expected [x, y, z]");
    return Vec3(r.number(a[0], at + "/0"), r.number(a[1], at + "/1"), r.number(a[2], at + "/2"));
  };
  const json& cameras = r.array(r.member(j, "", "cameras"), "/cameras");
  for (std::size_t i = 0; i < cameras.size(); ++i) {
    const std::string at = "/cameras/" + std::to_string(i);
    SolvedCamera c;
    c.frame = r.integer(r.member(cameras[i], at, "frame"), at + "/frame");
    if (c.frame != int(i)) r.fail(at + "/frame", "cameras must be listed frame by frame from 0");
    const json& solved = r.member(cameras[i], at, "solved");
    if (!solved.is_boolean()) r.fail(at + "/solved", "expected true or false");
    c.solved = solved.get<bool>();
    if (c.solved) {
      c.position = read_vec3(r.member(cameras[i], at, "position"), at + "/position");
      const json& q = r.array(r.member(cameras[i], at, "rotation"), at + "/rotation");
      if (q.size() != 4) r.fail(at + "/rotation", "expected a quaternion [x, y, z, w]");
      c.rotation = Quat(r.number(q[0], at + "/rotation/0"), r.number(q[1], at + "/rotation/1"),
                        r.number(q[2], at + "/rotation/2"), r.number(q[3], at + "/rotation/3"));
      const double norm = std::sqrt(c.rotation.x * c.rotation.x + c.rotation.y * c.rotation.y +
                                    c.rotation.z * c.rotation.z + c.rotation.w * c.rotation.w);
      if (std::abs(norm - 1) > 1e-6)
        r.fail(at + "/rotation", "the quaternion is not of unit length");
      c.observations = r.integer(r.member(cameras[i], at, "observations"), at + "/observations");
      c.mean_error = r.number(r.member(cameras[i], at, "mean_error_px"), at + "/mean_error_px");
    }
    s.cameras.push_back(c);
  }
  const json& points = r.array(r.member(j, "", "points"), "/points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string at = "/points/" + std::to_string(i);
    SolvedPoint p;
    p.track_id = r.integer(r.member(points[i], at, "track"), at + "/track");
    p.position = read_vec3(r.member(points[i], at, "position"), at + "/position");
    p.observations = r.integer(r.member(points[i], at, "observations"), at + "/observations");
    s.points.push_back(p);
  }
  return s;
}

}  // namespace kinema::matchmove
