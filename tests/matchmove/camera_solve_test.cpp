// Tests for kinema/matchmove/camera_solve.h: on exact synthetic tracks (the solver alone), on
// the rendered plate of test_scene.h end to end (tracker and solver), against OpenCV's
// calibrateCamera given the true 3D points, and its errors.
#include "kinema/matchmove/camera_solve.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <cstdio>
#include <map>
#include <opencv2/calib3d.hpp>
#include <random>
#include <set>
#include <vector>

#include "kinema/core/error.h"
#include "test_scene.h"

namespace kinema::matchmove {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// Tracks of random points in the room projected exactly through the scene's cameras and lens,
/// plus Gaussian noise of `sigma` px; a point leaving the frame ends its track.
TrackSet synthetic_tracks(const test::Scene& scene, int count, double sigma, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> x(-3.5, 3.5), y(0, 3.5), z(-2, 3.5);
  std::normal_distribution<double> noise(0, sigma);
  TrackSet set;
  set.width = scene.spec().width, set.height = scene.spec().height;
  set.frame_count = scene.spec().frames;
  for (int i = 0; i < count; ++i) {
    const Vec3 point(x(random), y(random), z(random));
    Track track;
    const auto flush = [&] {
      if (track.observations.size() >= 2) {
        track.id = int(set.tracks.size());
        set.tracks.push_back(track);
      }
      track.observations.clear();
    };
    for (int f = 0; f < set.frame_count; ++f) {
      composite::PixelPoint p;
      if (scene.project(f, point, p)) {
        p.u += noise(random), p.v += noise(random);
        if (p.u >= 0 && p.v >= 0 && p.u <= set.width - 1 && p.v <= set.height - 1) {
          track.observations.push_back({f, p.u, p.v});
          continue;
        }
      }
      flush();
    }
    flush();
  }
  return set;
}

struct PathError {
  double max_position = 0, max_degrees = 0;  // after similarity alignment
};

/// Camera errors against the truth. Positions after similarity alignment; rotations relative to
/// the first solved frame (R_f·R_0ᵀ is free of the gauge's rotation, so no alignment is needed).
PathError path_error(const CameraSolve& solve, const test::Scene& scene) {
  const CameraSolve aligned = align_to(solve, scene.positions());
  const auto matrix = [](const Quat& q) {
    const Eigen::Quaterniond e(q.w, q.x, q.y, q.z);
    return Eigen::Matrix3d(e.toRotationMatrix());
  };
  const auto true_matrix = [](const test::TrueCamera& t) {
    Eigen::Matrix3d r;
    for (int i = 0; i < 3; ++i) r.row(i) << t.rows[i].x, t.rows[i].y, t.rows[i].z;
    return r;
  };
  PathError e;
  const SolvedCamera* first = nullptr;
  for (const SolvedCamera& c : aligned.cameras) {
    if (!c.solved) continue;
    if (!first) first = &c;
    const test::TrueCamera& t = scene.cameras()[std::size_t(c.frame)];
    e.max_position = std::max(e.max_position, length(c.position - t.centre));
    const Eigen::Matrix3d solved = matrix(c.rotation) * matrix(first->rotation).transpose();
    const Eigen::Matrix3d truth =
        true_matrix(t) * true_matrix(scene.cameras()[std::size_t(first->frame)]).transpose();
    const Eigen::AngleAxisd difference(solved * truth.transpose());
    e.max_degrees = std::max(e.max_degrees, difference.angle() * 180 / kPi);
  }
  return e;
}

/// The distortion itself, compared where it acts: over a grid of plate pixels q (corners
/// included), how far each lens moves q (q − undistort_pixel(q), each with its own intrinsics),
/// and the largest difference, px. This separates the distortion from the focal length, whose
/// error the reconstruction's depth absorbs; k1 and k2 trade off, the field they make does not.
double distortion_disagreement(const CameraSolve& solve, const test::Scene& scene) {
  double worst = 0;
  for (int j = 0; j <= 8; ++j)
    for (int i = 0; i <= 8; ++i) {
      const composite::PixelPoint q{i * (solve.width - 1) / 8.0, j * (solve.height - 1) / 8.0};
      const composite::PixelPoint a = composite::undistort_pixel(q, solve.lens, solve.intrinsics);
      const composite::PixelPoint b =
          composite::undistort_pixel(q, scene.spec().lens, scene.intrinsics());
      worst = std::max(worst, std::hypot((q.u - a.u) - (q.u - b.u), (q.v - a.v) - (q.v - b.v)));
    }
  return worst;
}

TEST(CameraSolve, RecoversTheCameraFromExactTracks) {
  const test::Scene scene;
  const TrackSet tracks = synthetic_tracks(scene, 400, 0.3, 1);
  const CameraSolve solve = solve_camera(tracks);
  const PathError e = path_error(solve, scene);
  const double focal_error = solve.intrinsics.fx / scene.spec().focal - 1;
  std::printf(
      "synthetic tracks (σ 0.3 px): %zu points, %d observations, focal %.2f px (%+.3f %%), "
      "k1 %.4f k2 %.4f, position error %.3f %% of path, rotation %.3f°, mean %.3f px rms %.3f "
      "px, %.2f s\n",
      solve.points.size(), solve.observations, solve.intrinsics.fx, 100 * focal_error,
      solve.lens.k1, solve.lens.k2, 100 * e.max_position / scene.path_length(), e.max_degrees,
      solve.mean_error, solve.rms_error, solve.seconds);
  for (const SolvedCamera& c : solve.cameras) EXPECT_TRUE(c.solved) << "frame " << c.frame;
  EXPECT_LT(std::abs(focal_error), 0.003);
  EXPECT_LT(e.max_position, 0.005 * scene.path_length());
  EXPECT_LT(e.max_degrees, 0.1);
  EXPECT_LT(distortion_disagreement(solve, scene), 0.3);
  EXPECT_NEAR(solve.rms_error, 0.3 * std::sqrt(2.0), 0.1);  // the noise, in 2D
  EXPECT_EQ(solve.intrinsics.cx, 319.5);
  EXPECT_EQ(solve.intrinsics.cy, 179.5);
  EXPECT_EQ(solve.lens.p1, 0);
}

/// The rendered plate, tracked and solved once for the tests below.
const CameraSolve& plate_solve() {
  static const CameraSolve solve = solve_camera(test::plate().tracks);
  return solve;
}

TEST(CameraSolve, SolvesTheRenderedPlate) {
  const test::Plate& p = test::plate();
  const CameraSolve& solve = plate_solve();
  const PathError e = path_error(solve, p.scene);
  const double focal_error = solve.intrinsics.fx / p.scene.spec().focal - 1;
  const double lens_px = distortion_disagreement(solve, p.scene);
  std::printf(
      "rendered plate: %zu tracks in, %zu points and %d observations used, initial pair %d–%d\n"
      "  focal %.2f px (truth %.0f, %+.3f %%), k1 %.4f (truth %.3f), k2 %.4f (truth %.3f), "
      "distortion field within %.3f px\n"
      "  camera positions within %.3f %% of the %.2f m path, rotations within %.3f°\n"
      "  reprojection mean %.3f px, rms %.3f px; solve %.2f s\n",
      p.tracks.tracks.size(), solve.points.size(), solve.observations, solve.initial_frames[0],
      solve.initial_frames[1], solve.intrinsics.fx, p.scene.spec().focal, 100 * focal_error,
      solve.lens.k1, p.scene.spec().lens.k1, solve.lens.k2, p.scene.spec().lens.k2, lens_px,
      100 * e.max_position / p.scene.path_length(), p.scene.path_length(), e.max_degrees,
      solve.mean_error, solve.rms_error, solve.seconds);
  ASSERT_EQ(solve.cameras.size(), p.frames.size());
  double worst_frame = 0;
  for (const SolvedCamera& c : solve.cameras) {
    EXPECT_TRUE(c.solved) << "frame " << c.frame;
    EXPECT_GT(c.observations, 50) << "frame " << c.frame;
    worst_frame = std::max(worst_frame, c.mean_error);
  }
  std::printf("  worst per-frame mean error %.3f px\n", worst_frame);
  EXPECT_LT(e.max_position, 0.01 * p.scene.path_length());
  EXPECT_LT(e.max_degrees, 0.2);
  EXPECT_LT(std::abs(focal_error), 0.005);
  EXPECT_NEAR(solve.lens.k1, p.scene.spec().lens.k1, 0.02);
  EXPECT_LT(lens_px, 0.5);
  EXPECT_LT(solve.mean_error, 0.5);
  EXPECT_LT(worst_frame, 0.5);
  EXPECT_GT(solve.points.size(), 300u);
}

TEST(CameraSolve, IsNotWorseThanOpenCvCalibrationGivenTheTruePoints) {
  // The peer: cv::calibrateCamera on the same observations (every observation of the tracks our
  // solve kept, on solved frames), handed each track's TRUE 3D point (the surface under its
  // first observation) — it solves only the lens and poses, with the same model and freedoms
  // (fx = fy, centre fixed, k1, k2).
  const test::Plate& p = test::plate();
  const CameraSolve& solve = plate_solve();
  std::set<int> kept;
  std::map<int, Vec3> solved_points;
  for (const SolvedPoint& sp : solve.points)
    kept.insert(sp.track_id), solved_points[sp.track_id] = sp.position;
  std::vector<std::vector<cv::Point3f>> object(p.frames.size());
  std::vector<std::vector<cv::Point2f>> image(p.frames.size());
  double ours_sum2 = 0;
  int count = 0;
  for (const Track& t : p.tracks.tracks) {
    if (!kept.count(t.id)) continue;
    const Observation& first = t.observations.front();
    const auto truth = p.scene.point_under(first.frame, first.u, first.v);
    ASSERT_TRUE(truth.has_value());
    for (const Observation& o : t.observations) {
      const SolvedCamera& c = solve.cameras[std::size_t(o.frame)];
      if (!c.solved) continue;
      object[std::size_t(o.frame)].emplace_back(float(truth->x), float(truth->y), float(truth->z));
      image[std::size_t(o.frame)].emplace_back(float(o.u), float(o.v));
      composite::PixelPoint q;
      ASSERT_TRUE(project(solve, c, solved_points[t.id], q));
      ours_sum2 += (q.u - o.u) * (q.u - o.u) + (q.v - o.v) * (q.v - o.v);
      ++count;
    }
  }
  std::vector<std::vector<cv::Point3f>> views_object;
  std::vector<std::vector<cv::Point2f>> views_image;
  for (std::size_t f = 0; f < object.size(); ++f)
    if (object[f].size() >= 6) views_object.push_back(object[f]), views_image.push_back(image[f]);
  cv::Mat k = (cv::Mat_<double>(3, 3) << 1.2 * p.tracks.width, 0, (p.tracks.width - 1) / 2.0, 0,
               1.2 * p.tracks.width, (p.tracks.height - 1) / 2.0, 0, 0, 1);
  cv::Mat distortion = cv::Mat::zeros(5, 1, CV_64F);
  std::vector<cv::Mat> rvecs, tvecs;
  const double peer_rms = cv::calibrateCamera(
      views_object, views_image, cv::Size(p.tracks.width, p.tracks.height), k, distortion, rvecs,
      tvecs,
      cv::CALIB_USE_INTRINSIC_GUESS | cv::CALIB_FIX_PRINCIPAL_POINT | cv::CALIB_FIX_ASPECT_RATIO |
          cv::CALIB_ZERO_TANGENT_DIST | cv::CALIB_FIX_K3,
      cv::TermCriteria(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, 100, 1e-12));
  const double ours_rms = std::sqrt(ours_sum2 / count);
  std::printf(
      "peer (cv::calibrateCamera with true 3D points, %d observations): rms %.3f px, focal "
      "%.2f px, k1 %.4f, k2 %.4f\n"
      "ours on the same observations: rms %.3f px (inliers only: rms %.3f px), focal %.2f px\n",
      count, peer_rms, k.at<double>(0, 0), distortion.at<double>(0), distortion.at<double>(1),
      ours_rms, solve.rms_error, solve.intrinsics.fx);
  EXPECT_LT(ours_rms, 1.5 * peer_rms);
  EXPECT_LT(solve.rms_error, 1.5 * peer_rms);
}

TEST(CameraSolve, AlignmentIsASimilarityAndKeepsTheReprojection) {
  test::SceneSpec spec;
  spec.lens = {};  // a pinhole, and exact tracks: only the gauge matters here
  const test::Scene scene(spec);
  const TrackSet tracks = synthetic_tracks(scene, 200, 0.0, 2);
  SolveOptions options;
  options.solve_radial = false;
  const CameraSolve solve = solve_camera(tracks, options);
  // A made-up survey: the true path, rotated 30° about y, scaled 3× and moved.
  const Quat q = Quat::from_axis_angle(Vec3(0, 1, 0), 30 * kPi / 180);
  std::vector<Vec3> survey;
  for (const Vec3& c : scene.positions()) survey.push_back(rotate(q, c) * 3.0 + Vec3(10, -2, 5));
  const CameraSolve aligned = align_to(solve, survey);
  for (const SolvedCamera& c : aligned.cameras)
    EXPECT_LT(length(c.position - survey[std::size_t(c.frame)]), 1e-3 * 3 * scene.path_length());
  // The similarity moves the world, not the pictures: every point reprojects where it did.
  for (std::size_t i = 0; i < solve.points.size(); i += 17)
    for (std::size_t f = 0; f < solve.cameras.size(); f += 7) {
      composite::PixelPoint a, b;
      const bool in_a = project(solve, solve.cameras[f], solve.points[i].position, a);
      const bool in_b = project(aligned, aligned.cameras[f], aligned.points[i].position, b);
      ASSERT_EQ(in_a, in_b);
      if (in_a) {
        EXPECT_LT(std::hypot(a.u - b.u, a.v - b.v), 1e-6);
      }
    }
  const Similarity s = similarity_to(solve, survey);
  EXPECT_GT(s.scale, 0);
  EXPECT_THROW(align_to(solve, std::vector<Vec3>(3)), Error);  // not one per frame
  EXPECT_THROW(align_to(solve, std::vector<Vec3>(survey.size(), Vec3(1, 2, 3))), Error);
}

TEST(CameraSolve, LookAtMatchesTheRendererConvention) {
  // A camera at (1, 2, 3) looking at the origin, as the OpenCV-convention rotation the solve
  // reports: to_look_at must give the same eye, a target along the view and y-up's up.
  const test::TrueCamera t = test::look_at(Vec3(1, 2, 3), Vec3(0, 0, 0));
  CameraSolve solve;
  solve.width = 640, solve.height = 360;
  solve.intrinsics = {500, 500, 319.5, 179.5};
  SolvedCamera c;
  c.solved = true, c.position = t.centre;
  // R's rows are the camera axes: build the quaternion from where it sends them.
  Eigen::Matrix3d r;
  for (int i = 0; i < 3; ++i) r.row(i) << t.rows[i].x, t.rows[i].y, t.rows[i].z;
  const Eigen::Quaterniond q(r);
  c.rotation = Quat(q.x(), q.y(), q.z(), q.w());
  const LookAt l = to_look_at(solve, c);
  EXPECT_LT(length(l.eye - Vec3(1, 2, 3)), 1e-12);
  EXPECT_LT(length(normalize(l.target - l.eye) - normalize(Vec3(-1, -2, -3))), 1e-12);
  EXPECT_GT(l.up.y, 0.5);
  EXPECT_NEAR(dot(l.up, l.target - l.eye), 0, 1e-12);
  EXPECT_NEAR(l.fov_y_degrees, 2 * std::atan(180.0 / 500) * 180 / kPi, 1e-9);
}

TEST(CameraSolve, RefusesTooFewTracks) {
  const test::Scene scene;
  TrackSet tracks = synthetic_tracks(scene, 400, 0.3, 3);
  tracks.tracks.resize(5);
  try {
    solve_camera(tracks);
    FAIL() << "5 tracks";
  } catch (const Error& e) {
    EXPECT_NE(e.reason().find("only 5 tracks"), std::string::npos) << e.what();
    EXPECT_NE(e.reason().find("max_corners"), std::string::npos) << e.what();
  }
}

TEST(CameraSolve, RefusesAShotWithoutParallax) {
  // A tripod pan: the camera turns about its own centre, so no pair of frames sees depth.
  test::SceneSpec spec;
  const test::Scene moving(spec);
  TrackSet tracks;
  tracks.width = spec.width, tracks.height = spec.height, tracks.frame_count = spec.frames;
  std::mt19937 random(4);
  std::uniform_real_distribution<double> x(-3.5, 3.5), y(0, 3.5), z(-2, 3.5);
  const composite::LensIntrinsics k = moving.intrinsics();
  for (int i = 0; i < 300; ++i) {
    const Vec3 point(x(random), y(random), z(random));
    Track t;
    t.id = i;
    for (int f = 0; f < spec.frames; ++f) {
      const double yaw = (10 - 20.0 * f / (spec.frames - 1)) * kPi / 180;
      const test::TrueCamera c = test::look_at(
          Vec3(0, 1.6, 5.5), Vec3(5.5 * std::sin(yaw), 1.6, 5.5 - 5.5 * std::cos(yaw)));
      const Vec3 p = c.to_camera(point);
      const composite::PixelPoint q =
          composite::to_pixel(composite::distort({p.x / p.z, p.y / p.z}, spec.lens), k);
      if (p.z <= 0 || q.u < 0 || q.v < 0 || q.u > spec.width - 1 || q.v > spec.height - 1) break;
      t.observations.push_back({f, q.u, q.v});
    }
    if (t.observations.size() >= 3 && t.observations.front().frame == 0) tracks.tracks.push_back(t);
  }
  ASSERT_GT(tracks.tracks.size(), 50u);
  try {
    solve_camera(tracks);
    FAIL() << "a pan has no parallax";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "initial pair");
    EXPECT_NE(e.reason().find("parallax"), std::string::npos) << e.what();
    EXPECT_NE(e.reason().find("move"), std::string::npos) << e.what();
  }
}

TEST(CameraSolve, RefusesInvalidTracks) {
  Track off;
  off.id = 3;
  off.observations = {{0, 10, 10}, {1, 700, 10}};
  try {
    solve_camera(std::vector<Track>{off}, 640, 360, 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "track 3, observation 1");
  }
  Track late;
  late.observations = {{0, 10, 10}, {5, 10, 10}};
  EXPECT_THROW(solve_camera(std::vector<Track>{late}, 640, 360, 3), Error);
  EXPECT_THROW(solve_camera(std::vector<Track>{}, 0, 360, 3), Error);
  SolveOptions bad;
  bad.min_shared_tracks = 4;
  try {
    solve_camera(std::vector<Track>{}, 640, 360, 3, bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), "SolveOptions.min_shared_tracks");
  }
}

}  // namespace
}  // namespace kinema::matchmove
