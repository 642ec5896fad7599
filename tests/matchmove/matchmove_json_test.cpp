// Tests for kinema/matchmove/matchmove_json.h: round trips and errors that name the JSON place.
#include "kinema/matchmove/matchmove_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kinema/core/error.h"

namespace kinema::matchmove {
namespace {

TrackSet sample() {
  TrackSet s;
  s.width = 64, s.height = 48, s.frame_count = 5;
  s.tracks.push_back({0, {{0, 1.25, 2.5}, {1, 1.5, 2.75}}});
  s.tracks.push_back({7, {{2, 63.5, 47.5}, {3, 0.125, -0.5}, {4, 10, 20}}});
  return s;
}

TEST(MatchmoveJson, TracksRoundTripExactly) {
  const TrackSet a = sample();
  for (int indent : {-1, 2}) {
    const TrackSet b = tracks_from_json(tracks_to_json(a, indent));
    EXPECT_EQ(b.width, 64);
    EXPECT_EQ(b.height, 48);
    EXPECT_EQ(b.frame_count, 5);
    ASSERT_EQ(b.tracks.size(), 2u);
    EXPECT_EQ(b.tracks[1].id, 7);
    ASSERT_EQ(b.tracks[1].observations.size(), 3u);
    EXPECT_EQ(b.tracks[1].observations[1].frame, 3);
    EXPECT_EQ(b.tracks[1].observations[1].u, 0.125);
    EXPECT_EQ(b.tracks[1].observations[1].v, -0.5);
  }
  // Doubles survive to the last bit.
  TrackSet c = sample();
  c.tracks[0].observations[0].u = 0.1 + 0.2;
  EXPECT_EQ(tracks_from_json(tracks_to_json(c)).tracks[0].observations[0].u, 0.1 + 0.2);
}

std::string place_of(const std::string& text) {
  try {
    tracks_from_json(text, "t.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "t.json");
    return e.place();
  }
  ADD_FAILURE() << "no error for " << text;
  return {};
}

TEST(MatchmoveJson, ErrorsNameTheJsonPlace) {
  nlohmann::json j = nlohmann::json::parse(tracks_to_json(sample()));
  auto with = [&](auto change) {
    nlohmann::json k = j;
    change(k);
    return k.dump();
  };
  EXPECT_EQ(place_of(with([](auto& k) { k["tracks"][1]["observations"][2][1] = "x"; })),
            "/tracks/1/observations/2/1");
  EXPECT_EQ(place_of(with([](auto& k) {
              k["tracks"][1]["observations"][1] = {3, 1};
            })),
            "/tracks/1/observations/1");
  EXPECT_EQ(place_of(with([](auto& k) { k["tracks"][1]["observations"][1][0] = 9; })),
            "/tracks/1/observations/1/0");
  EXPECT_EQ(place_of(with([](auto& k) { k["tracks"][0]["observations"][1][0] = 3; })),
            "/tracks/0/observations/1/0");  // skips a frame
  EXPECT_EQ(place_of(with([](auto& k) { k["tracks"][0]["observations"][0][2] = 48; })),
            "/tracks/0/observations/0/2");  // off the frame
  EXPECT_EQ(place_of(with([](auto& k) { k["tracks"][1]["id"] = 0; })), "/tracks/1/id");
  EXPECT_EQ(place_of(with([](auto& k) { k["tracks"][1]["id"] = 1.5; })), "/tracks/1/id");
  EXPECT_EQ(place_of(with([](auto& k) { k["tracks"][0].erase("observations"); })), "/tracks/0");
  EXPECT_EQ(place_of(with([](auto& k) { k["version"] = 2; })), "/version");
  EXPECT_EQ(place_of(with([](auto& k) { k["format"] = "other"; })), "/format");
  EXPECT_EQ(place_of(with([](auto& k) { k["width"] = 0; })), "/width");
  EXPECT_EQ(place_of(with([](auto& k) { k["tracks"] = 3; })), "/tracks");
  // The place is where the parser gave up: the "o" of "nope".
  EXPECT_EQ(place_of("{\"format\": \n  nope}"), "line 2, column 4");
  EXPECT_EQ(place_of("[]"), "/");
}

TEST(MatchmoveJson, CameraSolveIsComplete) {
  CameraSolve s;
  s.width = 64, s.height = 48;
  s.intrinsics = {50, 50, 31.5, 23.5};
  s.lens.k1 = -0.1;
  s.cameras.resize(2);
  s.cameras[0].frame = 0, s.cameras[0].solved = true, s.cameras[0].position = {1, 2, 3};
  s.cameras[0].rotation = Quat(0, 0, 0.6, 0.8);
  s.cameras[1].frame = 1;
  s.points.push_back({7, {4, 5, 6}, 2});
  s.mean_error = 0.25;
  const nlohmann::json j = nlohmann::json::parse(camera_solve_to_json(s));
  EXPECT_EQ(j["format"], "kinema-camera-solve");
  EXPECT_EQ(j["intrinsics"]["fx"], 50.0);
  EXPECT_EQ(j["lens"]["k1"], -0.1);
  EXPECT_EQ(j["cameras"][0]["position"], nlohmann::json::array({1.0, 2.0, 3.0}));
  EXPECT_EQ(j["cameras"][0]["rotation"], nlohmann::json::array({0.0, 0.0, 0.6, 0.8}));
  EXPECT_FALSE(j["cameras"][1]["solved"].get<bool>());
  EXPECT_FALSE(j["cameras"][1].contains("position"));
  EXPECT_EQ(j["points"][0]["track"], 7);
  EXPECT_EQ(j["mean_error_px"], 0.25);
  EXPECT_TRUE(j["convention"].is_string());
}

TEST(MatchmoveJson, CameraSolveRoundTripsExactly) {
  CameraSolve s;
  s.width = 64, s.height = 48;
  s.intrinsics = {50.123456789, 50.123456789, 31.5, 23.5};
  s.lens = {-0.1, 0.0123, 0, 1e-4, -2e-4};
  s.cameras.resize(3);
  for (int f = 0; f < 3; ++f) s.cameras[std::size_t(f)].frame = f;
  s.cameras[0].solved = true, s.cameras[0].position = {1.1, -2.2, 3.3};
  s.cameras[0].rotation = Quat(0, 0, 0.6, 0.8), s.cameras[0].observations = 40;
  s.cameras[0].mean_error = 0.1234;
  s.cameras[2].solved = true, s.cameras[2].position = {0.1, 0.2, 0.3};
  s.cameras[2].rotation = Quat(0.5, 0.5, 0.5, 0.5), s.cameras[2].observations = 35;
  s.points.push_back({7, {4, 5, 6}, 2});
  s.initial_frames[0] = 0, s.initial_frames[1] = 2;
  s.observations = 75, s.mean_error = 0.25, s.rms_error = 0.3, s.seconds = 1.5;
  const CameraSolve back = camera_solve_from_json(camera_solve_to_json(s), "camera.json");
  EXPECT_EQ(back.width, 64);
  EXPECT_EQ(back.intrinsics.fx, s.intrinsics.fx);
  EXPECT_EQ(back.lens.k2, s.lens.k2);
  EXPECT_EQ(back.lens.p2, s.lens.p2);
  ASSERT_EQ(back.cameras.size(), 3u);
  EXPECT_TRUE(back.cameras[0].solved);
  EXPECT_FALSE(back.cameras[1].solved);
  EXPECT_EQ(back.cameras[0].position.y, -2.2);
  EXPECT_EQ(back.cameras[2].rotation.x, 0.5);
  EXPECT_EQ(back.cameras[0].mean_error, 0.1234);
  ASSERT_EQ(back.points.size(), 1u);
  EXPECT_EQ(back.points[0].track_id, 7);
  EXPECT_EQ(back.initial_frames[1], 2);
  EXPECT_EQ(back.rms_error, 0.3);
  // Bad files name the place.
  auto place_of = [&](auto&& edit) {
    nlohmann::json j = nlohmann::json::parse(camera_solve_to_json(s));
    edit(j);
    try {
      camera_solve_from_json(j.dump(), "camera.json");
    } catch (const Error& e) {
      return e.place();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(place_of([](auto& j) { j["format"] = "kinema-tracks"; }), "/format");
  EXPECT_EQ(place_of([](auto& j) { j["intrinsics"]["fx"] = -1; }), "/intrinsics/fx");
  EXPECT_EQ(place_of([](auto& j) { j["cameras"][2]["rotation"][3] = 2; }), "/cameras/2/rotation");
  EXPECT_EQ(place_of([](auto& j) { j["cameras"][1]["frame"] = 5; }), "/cameras/1/frame");
  EXPECT_EQ(place_of([](auto& j) { j["points"][0].erase("position"); }), "/points/0");
}

}  // namespace
}  // namespace kinema::matchmove
