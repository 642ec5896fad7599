// Incremental structure from motion and bundle adjustment (kinema/matchmove/camera_solve.h).
#include "kinema/matchmove/camera_solve.h"

#include <ceres/ceres.h>
#include <ceres/rotation.h>

#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <opencv2/calib3d.hpp>
#include <string>
#include <thread>

#include "kinema/core/error.h"

namespace kinema::matchmove {

namespace {

using Eigen::Matrix3d;
using Eigen::Vector2d;
using Eigen::Vector3d;

constexpr double kPi = 3.14159265358979323846;
// The focal length and distortion stay fixed until this many frames are solved: fewer views
// cannot tell a longer lens from a deeper scene, and the adjustment would wander.
constexpr int kMinFramesForIntrinsics = 5;
// Before the lens is solved, distortion and a wrong focal guess bend the epipolar geometry by
// pixels at the frame's edge; RANSAC's threshold is widened by this much until then.
constexpr double kUnsolvedLensSlack = 3;
// Degrees: a new point needs this much angle between its rays, or its depth is mostly noise.
constexpr double kMinTriangulationDegrees = 1.0;
// Frame pairs the initial search looks at: up to this many frames, evenly spread, in pairs.
constexpr int kInitialCandidates = 12;

/// Reprojection through the exact Brown–Conrady model of composite/lens.h. Parameter blocks: the
/// pose (angle-axis world → camera, then translation: x_c = R·X + t), the point, and the lens
/// (f, k1, k2, p1, p2); the principal point is fixed.
struct Reprojection {
  double u, v, cx, cy;

  template <class T>
  bool operator()(const T* pose, const T* point, const T* lens, T* residual) const {
    T p[3];
    ceres::AngleAxisRotatePoint(pose, point, p);
    p[0] += pose[3], p[1] += pose[4], p[2] += pose[5];
    if (!(p[2] > T(0))) return false;  // behind the camera: reject the step
    const T x = p[0] / p[2], y = p[1] / p[2];
    const T r2 = x * x + y * y;
    const T radial = T(1) + r2 * (lens[1] + r2 * lens[2]);
    const T xd = x * radial + T(2) * lens[3] * x * y + lens[4] * (r2 + T(2) * x * x);
    const T yd = y * radial + lens[3] * (r2 + T(2) * y * y) + T(2) * lens[4] * x * y;
    residual[0] = lens[0] * xd + T(cx) - T(u);
    residual[1] = lens[0] * yd + T(cy) - T(v);
    return true;
  }
};

struct Obs {
  int frame = 0, point = 0;
  double u = 0, v = 0;
  bool inlier = true;
  bool normal_ok = false;              // `normal` is valid (the lens could undistort the point)
  Vector2d normal = Vector2d::Zero();  // undistorted normalized coordinates under the current lens
};

struct Point {
  int track_id = 0;
  bool valid = false;  // triangulated and kept
  Vector3d x = Vector3d::Zero();
  std::vector<int> obs;
};

struct Frame {
  bool solved = false, failed = false;
  double pose[6] = {0, 0, 0, 0, 0, 0};
  std::vector<int> obs;
};

struct State {
  int width = 0, height = 0;
  double cx = 0, cy = 0;
  double lens[5] = {0, 0, 0, 0, 0};  // f, k1, k2, p1, p2
  bool lens_solved = false;          // the adjustment has solved the lens at least once
  std::vector<Obs> obs;
  std::vector<Point> points;
  std::vector<Frame> frames;
  int origin = 0, second = 0;  // the initial pair; `origin` is held fixed in the adjustment
};

Matrix3d rotation_of(const double* pose) {
  Matrix3d r;
  ceres::AngleAxisToRotationMatrix(pose, ceres::ColumnMajorAdapter3x3(r.data()));
  return r;
}

void set_rotation(double* pose, const Matrix3d& r) {
  ceres::RotationMatrixToAngleAxis(ceres::ColumnMajorAdapter3x3(r.data()), pose);
}

Vector3d translation_of(const double* pose) { return {pose[3], pose[4], pose[5]}; }

composite::BrownConrady lens_of(const State& s) {
  composite::BrownConrady l;
  l.k1 = s.lens[1], l.k2 = s.lens[2], l.p1 = s.lens[3], l.p2 = s.lens[4];
  return l;
}

/// Every observation's undistorted normalized position under the current lens.
void renormalize(State& s) {
  const composite::BrownConrady lens = lens_of(s);
  for (Obs& o : s.obs) {
    try {
      const composite::NormalizedPoint n =
          composite::undistort({(o.u - s.cx) / s.lens[0], (o.v - s.cy) / s.lens[0]}, lens);
      o.normal = {n.x, n.y}, o.normal_ok = true;
    } catch (const Error&) {
      o.normal_ok = false;  // past where the current lens folds over: unusable for now
    }
  }
}

/// px between an observation and its point's reprojection; infinity behind the camera.
double reprojection_error(const State& s, const Obs& o) {
  const Reprojection r{o.u, o.v, s.cx, s.cy};
  double residual[2];
  if (!r(s.frames[std::size_t(o.frame)].pose, s.points[std::size_t(o.point)].x.data(), s.lens,
         residual))
    return std::numeric_limits<double>::infinity();
  return std::hypot(residual[0], residual[1]);
}

bool usable(const State& s, const Obs& o) {
  return o.inlier && o.normal_ok && s.frames[std::size_t(o.frame)].solved;
}

/// Linear (DLT) triangulation from every usable observation of point p, then checks: in front of
/// every camera, within `max_error` px of every observation, and rays at least
/// kMinTriangulationDegrees apart. Returns whether the point was set.
bool triangulate(State& s, Point& p, double max_error) {
  std::vector<const Obs*> views;
  for (int i : p.obs)
    if (usable(s, s.obs[std::size_t(i)])) views.push_back(&s.obs[std::size_t(i)]);
  if (views.size() < 2) return false;
  Eigen::MatrixXd a(2 * views.size(), 4);
  std::vector<Vector3d> centres, rays;
  for (std::size_t k = 0; k < views.size(); ++k) {
    const double* pose = s.frames[std::size_t(views[k]->frame)].pose;
    const Matrix3d r = rotation_of(pose);
    const Vector3d t = translation_of(pose);
    Eigen::Matrix<double, 3, 4> m;
    m << r, t;
    const Vector2d& n = views[k]->normal;
    a.row(Eigen::Index(2 * k)) = n.x() * m.row(2) - m.row(0);
    a.row(Eigen::Index(2 * k + 1)) = n.y() * m.row(2) - m.row(1);
    centres.push_back(-r.transpose() * t);
    rays.push_back((r.transpose() * Vector3d(n.x(), n.y(), 1)).normalized());
  }
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(a, Eigen::ComputeFullV);
  const Eigen::Vector4d h = svd.matrixV().col(3);
  if (!(std::abs(h.w()) > 1e-12)) return false;
  const Vector3d x = h.head<3>() / h.w();
  double widest = 0;
  for (std::size_t i = 0; i < rays.size(); ++i)
    for (std::size_t j = i + 1; j < rays.size(); ++j)
      widest = std::max(widest, std::acos(std::clamp(rays[i].dot(rays[j]), -1.0, 1.0)));
  if (widest < kMinTriangulationDegrees * kPi / 180) return false;
  const Vector3d saved = p.x;
  p.x = x;
  for (const Obs* o : views) {
    const double* pose = s.frames[std::size_t(o->frame)].pose;
    if ((rotation_of(pose) * x + translation_of(pose)).z() <= 0 ||
        reprojection_error(s, *o) > max_error) {
      p.x = saved;
      return false;
    }
  }
  p.valid = true;
  return true;
}

/// Triangulates every point not yet triangulated that two solved frames see.
void triangulate_new(State& s, double max_error) {
  for (Point& p : s.points)
    if (!p.valid) triangulate(s, p, max_error);
}

/// A global bundle adjustment of every solved frame and valid point, then re-normalization.
void adjust(State& s, const SolveOptions& o, bool free_lens) {
  ceres::Problem problem;
  const bool lens_free = free_lens && (o.solve_focal || o.solve_radial || o.solve_tangential);
  for (const Obs& ob : s.obs) {
    if (!ob.inlier || !s.frames[std::size_t(ob.frame)].solved) continue;
    Point& p = s.points[std::size_t(ob.point)];
    if (!p.valid) continue;
    auto* cost = new ceres::AutoDiffCostFunction<Reprojection, 2, 6, 3, 5>(
        new Reprojection{ob.u, ob.v, s.cx, s.cy});
    problem.AddResidualBlock(cost, new ceres::HuberLoss(o.huber_scale),
                             s.frames[std::size_t(ob.frame)].pose, p.x.data(), s.lens);
  }
  if (!problem.HasParameterBlock(s.lens)) return;
  if (problem.HasParameterBlock(s.frames[std::size_t(s.origin)].pose))
    problem.SetParameterBlockConstant(s.frames[std::size_t(s.origin)].pose);
  std::vector<int> fixed;
  if (!lens_free || !o.solve_focal) fixed.push_back(0);
  if (!lens_free || !o.solve_radial) fixed.push_back(1), fixed.push_back(2);
  if (!lens_free || !o.solve_tangential) fixed.push_back(3), fixed.push_back(4);
  if (fixed.size() == 5)
    problem.SetParameterBlockConstant(s.lens);
  else if (!fixed.empty())
    problem.SetManifold(s.lens, new ceres::SubsetManifold(5, fixed));

  ceres::Solver::Options options;
  options.linear_solver_type = ceres::DENSE_SCHUR;
  options.max_num_iterations = o.max_iterations;
  options.function_tolerance = 1e-9;
  options.num_threads = int(std::max(1u, std::thread::hardware_concurrency()));
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  if (!summary.IsSolutionUsable())
    throw Error({}, "bundle adjustment",
                "the adjustment failed (" + summary.message +
                    "); the tracks may be mostly outliers — tighten "
                    "TrackOptions.forward_backward_threshold or check the plate");
  if (lens_free) s.lens_solved = true;
  renormalize(s);
}

/// Marks observations reprojecting farther than `threshold` px as outliers and invalidates
/// points left with fewer than 2 inlier observations on solved frames.
void reject_outliers(State& s, double threshold) {
  for (Obs& ob : s.obs) {
    if (!ob.inlier || !s.frames[std::size_t(ob.frame)].solved) continue;
    if (!s.points[std::size_t(ob.point)].valid) continue;
    if (!(reprojection_error(s, ob) <= threshold)) ob.inlier = false;
  }
  for (Point& p : s.points) {
    if (!p.valid) continue;
    int seen = 0;
    for (int i : p.obs) seen += usable(s, s.obs[std::size_t(i)]) ? 1 : 0;
    if (seen < 2) p.valid = false;
  }
}

/// Drops whole tracks whose RMS reprojection error exceeds `factor` times the RMS over all
/// tracks: a feature that slides (a window straddling a crease, a highlight, a shadow edge) fits
/// no 3D point, yet each of its observations can stay under the outlier threshold.
void reject_tracks(State& s, double factor) {
  double total = 0;
  int count = 0;
  std::vector<double> sum(s.points.size(), 0);
  std::vector<int> seen(s.points.size(), 0);
  for (const Obs& ob : s.obs) {
    if (!usable(s, ob) || !s.points[std::size_t(ob.point)].valid) continue;
    const double e = reprojection_error(s, ob);
    sum[std::size_t(ob.point)] += e * e, seen[std::size_t(ob.point)]++;
    total += e * e, ++count;
  }
  if (count == 0) return;
  const double limit2 = factor * factor * total / count;
  for (std::size_t p = 0; p < s.points.size(); ++p)
    if (seen[p] > 0 && sum[p] / seen[p] > limit2) s.points[p].valid = false;
}

struct PairCandidate {
  int a = 0, b = 0, inliers = 0;
  double median_degrees = 0, score = 0;  // median parallax, see evaluate_pair()
  cv::Mat rotation, translation;
  std::vector<int> points;  // the inlier points
};

/// Essential matrix and pose between frames a and b from the points both see.
PairCandidate evaluate_pair(const State& s, int a, int b, const std::vector<int>& shared,
                            double threshold) {
  PairCandidate c;
  c.a = a, c.b = b;
  std::vector<cv::Point2d> pa, pb;
  std::vector<int> ids;
  for (int p : shared) {
    const Point& pt = s.points[std::size_t(p)];
    const Obs* oa = nullptr;
    const Obs* ob = nullptr;
    for (int i : pt.obs) {
      const Obs& o = s.obs[std::size_t(i)];
      if (o.frame == a) oa = &o;
      if (o.frame == b) ob = &o;
    }
    if (!oa || !ob || !oa->normal_ok || !ob->normal_ok) continue;
    pa.emplace_back(oa->normal.x(), oa->normal.y());
    pb.emplace_back(ob->normal.x(), ob->normal.y());
    ids.push_back(p);
  }
  if (pa.size() < 8) return c;
  cv::Mat mask;
  const cv::Mat e =
      cv::findEssentialMat(pa, pb, 1.0, cv::Point2d(0, 0), cv::RANSAC, 0.999, threshold, mask);
  if (e.rows != 3 || e.cols != 3) return c;  // none, or several stacked solutions: skip the pair
  cv::Mat r, t;
  c.inliers = cv::recoverPose(e, pa, pb, r, t, 1.0, cv::Point2d(0, 0), mask);
  c.rotation = r, c.translation = t;
  // Parallax is what no rotation explains: fit the best pure rotation between the two frames'
  // rays (Kabsch), and measure the angles left over. A pan or tilt leaves none, however far
  // it turns — the essential matrix's own pose cannot say so, as any translation fits then.
  std::vector<Vector3d> ra, rb;
  Matrix3d m = Matrix3d::Zero();
  for (std::size_t i = 0; i < pa.size(); ++i) {
    if (!mask.at<unsigned char>(int(i))) continue;
    ra.push_back(Vector3d(pa[i].x, pa[i].y, 1).normalized());
    rb.push_back(Vector3d(pb[i].x, pb[i].y, 1).normalized());
    m += ra.back() * rb.back().transpose();
    c.points.push_back(ids[i]);
  }
  const Eigen::JacobiSVD<Matrix3d> svd(m, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Matrix3d fix = Matrix3d::Identity();
  fix(2, 2) = (svd.matrixU() * svd.matrixV().transpose()).determinant() < 0 ? -1 : 1;
  const Matrix3d turn = svd.matrixU() * fix * svd.matrixV().transpose();
  std::vector<double> angles;
  for (std::size_t i = 0; i < ra.size(); ++i)
    angles.push_back(std::acos(std::clamp(ra[i].dot(turn * rb[i]), -1.0, 1.0)) * 180 / kPi);
  if (angles.empty()) return c;
  std::nth_element(angles.begin(), angles.begin() + std::ptrdiff_t(angles.size() / 2),
                   angles.end());
  c.median_degrees = angles[angles.size() / 2];
  return c;
}

/// Chooses the initial pair, sets its poses and triangulates its points.
void initialize(State& s, const SolveOptions& o, int frame_count) {
  // Tracks have no gaps, so a track's frames are [first, last].
  std::vector<std::pair<int, int>> span(s.points.size());
  for (std::size_t p = 0; p < s.points.size(); ++p) {
    const Point& pt = s.points[p];
    span[p] = {s.obs[std::size_t(pt.obs.front())].frame, s.obs[std::size_t(pt.obs.back())].frame};
  }
  std::vector<int> candidates;
  const int n = std::min(frame_count, kInitialCandidates);
  for (int i = 0; i < n; ++i) {
    const int f = n == 1 ? 0 : int(std::lround(double(i) * (frame_count - 1) / (n - 1)));
    if (candidates.empty() || candidates.back() != f) candidates.push_back(f);
  }
  const double threshold = kUnsolvedLensSlack * o.ransac_threshold / s.lens[0];
  PairCandidate best;
  int most_shared = 0, most_a = 0, most_b = 0;
  double best_parallax = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    for (std::size_t j = i + 1; j < candidates.size(); ++j) {
      const int a = candidates[i], b = candidates[j];
      std::vector<int> shared;
      for (std::size_t p = 0; p < span.size(); ++p)
        if (span[p].first <= a && span[p].second >= b) shared.push_back(int(p));
      if (int(shared.size()) > most_shared)
        most_shared = int(shared.size()), most_a = a, most_b = b;
      if (int(shared.size()) < o.min_shared_tracks) continue;
      PairCandidate c = evaluate_pair(s, a, b, shared, threshold);
      if (c.inliers < o.min_shared_tracks) continue;
      best_parallax = std::max(best_parallax, c.median_degrees);
      if (c.median_degrees < o.min_parallax_degrees) continue;
      // Parallax helps up to a few times the minimum; past that, more points matter more.
      if (c.median_degrees < o.min_parallax_degrees) continue;
      c.score = c.inliers * std::min(1.0, c.median_degrees / (3 * o.min_parallax_degrees));
      if (c.score > best.score) best = std::move(c);
    }
  if (most_shared < o.min_shared_tracks)
    throw Error({}, "initial pair",
                "no two frames share " + std::to_string(o.min_shared_tracks) + " tracks (at most " +
                    std::to_string(most_shared) + ", frames " + std::to_string(most_a) + " and " +
                    std::to_string(most_b) +
                    "): track more corners (TrackOptions.max_corners, a lower quality_level) or "
                    "lower SolveOptions.min_shared_tracks");
  if (best.score <= 0)
    throw Error({}, "initial pair",
                "no frame pair has enough parallax: the widest median angle between rays is " +
                    std::to_string(best_parallax) + "°, under min_parallax_degrees (" +
                    std::to_string(o.min_parallax_degrees) +
                    "°). The camera seems only to pan, tilt or zoom, which gives no depth; a "
                    "camera solve needs it to move. Use a longer clip with camera travel, or "
                    "lower SolveOptions.min_parallax_degrees if the move is small");
  s.origin = best.a, s.second = best.b;
  Frame& fa = s.frames[std::size_t(best.a)];
  Frame& fb = s.frames[std::size_t(best.b)];
  fa.solved = fb.solved = true;
  Matrix3d r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = best.rotation.at<double>(i, j);
  set_rotation(fb.pose, r);
  for (int i = 0; i < 3; ++i) fb.pose[3 + i] = best.translation.at<double>(i);
  const double max_error = kUnsolvedLensSlack * o.ransac_threshold * 2;
  for (int p : best.points) triangulate(s, s.points[std::size_t(p)], max_error);
}

/// Solves one more frame by PnP RANSAC on the triangulated points it sees: the unsolved frame
/// seeing the most. Returns false when no frame sees min_shared_tracks of them.
bool add_frame(State& s, const SolveOptions& o) {
  int best = -1, best_count = 0;
  for (std::size_t f = 0; f < s.frames.size(); ++f) {
    const Frame& fr = s.frames[f];
    if (fr.solved || fr.failed) continue;
    int count = 0;
    for (int i : fr.obs) {
      const Obs& ob = s.obs[std::size_t(i)];
      count += ob.inlier && ob.normal_ok && s.points[std::size_t(ob.point)].valid ? 1 : 0;
    }
    if (count > best_count) best = int(f), best_count = count;
  }
  if (best < 0 || best_count < o.min_shared_tracks) return false;
  Frame& frame = s.frames[std::size_t(best)];
  std::vector<cv::Point3d> world;
  std::vector<cv::Point2d> image;
  std::vector<int> used;
  for (int i : frame.obs) {
    const Obs& ob = s.obs[std::size_t(i)];
    const Point& p = s.points[std::size_t(ob.point)];
    if (!ob.inlier || !ob.normal_ok || !p.valid) continue;
    world.emplace_back(p.x.x(), p.x.y(), p.x.z());
    image.emplace_back(ob.normal.x(), ob.normal.y());
    used.push_back(i);
  }
  const double slack = s.lens_solved ? 1 : kUnsolvedLensSlack;
  cv::Mat rvec, tvec;
  std::vector<int> inliers;
  const bool ok =
      cv::solvePnPRansac(world, image, cv::Mat::eye(3, 3, CV_64F), cv::Mat(), rvec, tvec, false,
                         200, float(slack * o.ransac_threshold / s.lens[0]), 0.999, inliers);
  if (!ok || int(inliers.size()) < o.min_shared_tracks) {
    frame.failed = true;  // not retried: later points rarely rescue a frame PnP cannot solve
    return true;
  }
  for (int i = 0; i < 3; ++i)
    frame.pose[i] = rvec.at<double>(i), frame.pose[3 + i] = tvec.at<double>(i);
  std::vector<bool> inlier(used.size(), false);
  for (int k : inliers) inlier[std::size_t(k)] = true;
  for (std::size_t k = 0; k < used.size(); ++k)
    if (!inlier[k]) s.obs[std::size_t(used[k])].inlier = false;
  frame.solved = true;
  return true;
}

int solved_count(const State& s) {
  int n = 0;
  for (const Frame& f : s.frames) n += f.solved ? 1 : 0;
  return n;
}

void check_input(std::span<const Track> tracks, int width, int height, int frame_count,
                 const SolveOptions& o) {
  if (width <= 0 || height <= 0 || frame_count <= 0)
    throw Error({}, {},
                "the plate must have a positive size and frame count, not " +
                    std::to_string(width) + "×" + std::to_string(height) + " × " +
                    std::to_string(frame_count) + " frames");
  const auto fail = [](const char* option, const std::string& reason) {
    throw Error({}, std::string("SolveOptions.") + option, reason);
  };
  if (!std::isfinite(o.initial_focal)) fail("initial_focal", "must be finite");
  if (o.min_track_length < 2) fail("min_track_length", "must be at least 2");
  if (o.min_shared_tracks < 8) fail("min_shared_tracks", "must be at least 8");
  if (!(o.min_parallax_degrees >= 0)) fail("min_parallax_degrees", "must be ≥ 0");
  if (!(o.ransac_threshold > 0)) fail("ransac_threshold", "must be positive");
  if (!(o.huber_scale > 0)) fail("huber_scale", "must be positive");
  if (!(o.outlier_threshold > 0)) fail("outlier_threshold", "must be positive");
  if (o.max_iterations < 1) fail("max_iterations", "must be at least 1");
  for (std::size_t t = 0; t < tracks.size(); ++t) {
    const Track& track = tracks[t];
    int previous = -1;
    for (std::size_t k = 0; k < track.observations.size(); ++k) {
      const Observation& ob = track.observations[k];
      const std::string place =
          "track " + std::to_string(track.id) + ", observation " + std::to_string(k);
      if (ob.frame < 0 || ob.frame >= frame_count)
        throw Error({}, place,
                    "frame " + std::to_string(ob.frame) + " is outside the plate's " +
                        std::to_string(frame_count) + " frames");
      if (ob.frame <= previous)
        throw Error({}, place, "observations must be in increasing frame order");
      if (ob.frame != previous + 1 && previous >= 0)
        throw Error({}, place, "a track must not skip frames (a lost track starts a new one)");
      if (!(ob.u >= -0.5 && ob.u <= width - 0.5 && ob.v >= -0.5 && ob.v <= height - 0.5))
        throw Error({}, place, "the position is not finite or lies off the frame");
      previous = ob.frame;
    }
  }
}

}  // namespace

CameraSolve solve_camera(std::span<const Track> tracks, int width, int height, int frame_count,
                         const SolveOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  check_input(tracks, width, height, frame_count, options);
  State s;
  s.width = width, s.height = height;
  s.cx = (width - 1) / 2.0, s.cy = (height - 1) / 2.0;
  s.lens[0] = options.initial_focal > 0 ? options.initial_focal : 1.2 * width;
  s.frames.resize(std::size_t(frame_count));
  for (const Track& t : tracks) {
    if (int(t.observations.size()) < options.min_track_length) continue;
    Point p;
    p.track_id = t.id;
    const int index = int(s.points.size());
    for (const Observation& ob : t.observations) {
      Obs o;
      o.frame = ob.frame, o.point = index, o.u = ob.u, o.v = ob.v;
      p.obs.push_back(int(s.obs.size()));
      s.frames[std::size_t(ob.frame)].obs.push_back(int(s.obs.size()));
      s.obs.push_back(o);
    }
    s.points.push_back(std::move(p));
  }
  if (int(s.points.size()) < options.min_shared_tracks)
    throw Error({}, {},
                "only " + std::to_string(s.points.size()) + " tracks are seen on at least " +
                    std::to_string(options.min_track_length) + " frames; a solve needs " +
                    std::to_string(options.min_shared_tracks) +
                    " or more. Track more corners (TrackOptions.max_corners, quality_level) or "
                    "lower SolveOptions.min_track_length / min_shared_tracks");
  renormalize(s);
  initialize(s, options, frame_count);

  // Grow: one frame at a time, new points as soon as two solved frames see them, and an
  // adjustment each time the solved frames have grown by a quarter.
  int adjusted_at = solved_count(s);
  const auto triangulation_limit = [&] {
    return (s.lens_solved ? 2 : 2 * kUnsolvedLensSlack) * options.ransac_threshold;
  };
  triangulate_new(s, triangulation_limit());
  while (add_frame(s, options)) {
    triangulate_new(s, triangulation_limit());
    const int solved = solved_count(s);
    if (solved >= adjusted_at + std::max(1, adjusted_at / 4)) {
      adjust(s, options, solved >= kMinFramesForIntrinsics);
      reject_outliers(s, 3 * options.outlier_threshold);  // gross mistakes only, for now
      adjusted_at = solved;
    }
  }
  // Final: everything together, then again without the outliers.
  adjust(s, options, solved_count(s) >= kMinFramesForIntrinsics);
  triangulate_new(s, triangulation_limit());
  reject_outliers(s, 3 * options.outlier_threshold);
  adjust(s, options, solved_count(s) >= kMinFramesForIntrinsics);
  reject_outliers(s, options.outlier_threshold);
  if (options.track_rms_factor > 0) reject_tracks(s, options.track_rms_factor);
  adjust(s, options, solved_count(s) >= kMinFramesForIntrinsics);
  reject_outliers(s, options.outlier_threshold);

  CameraSolve result;
  result.width = width, result.height = height;
  result.intrinsics = {s.lens[0], s.lens[0], s.cx, s.cy};
  result.lens = lens_of(s);
  result.initial_frames[0] = s.origin, result.initial_frames[1] = s.second;
  result.cameras.resize(std::size_t(frame_count));
  std::vector<double> frame_sum(std::size_t(frame_count), 0);
  double sum = 0, sum2 = 0;
  for (const Obs& ob : s.obs) {
    if (!usable(s, ob) || !s.points[std::size_t(ob.point)].valid) continue;
    const double e = reprojection_error(s, ob);
    sum += e, sum2 += e * e, ++result.observations;
    frame_sum[std::size_t(ob.frame)] += e;
    result.cameras[std::size_t(ob.frame)].observations++;
  }
  for (std::size_t f = 0; f < s.frames.size(); ++f) {
    SolvedCamera& c = result.cameras[f];
    c.frame = int(f);
    if (!s.frames[f].solved) {
      c.observations = 0;
      continue;
    }
    c.solved = true;
    const double* pose = s.frames[f].pose;
    const Matrix3d r = rotation_of(pose);
    const Vector3d centre = -r.transpose() * translation_of(pose);
    c.position = {centre.x(), centre.y(), centre.z()};
    c.rotation = from_rotation_vector(Vec3(pose[0], pose[1], pose[2]));
    c.mean_error = c.observations > 0 ? frame_sum[f] / c.observations : 0;
  }
  for (const Point& p : s.points) {
    if (!p.valid) continue;
    SolvedPoint sp;
    sp.track_id = p.track_id;
    sp.position = {p.x.x(), p.x.y(), p.x.z()};
    for (int i : p.obs) sp.observations += usable(s, s.obs[std::size_t(i)]) ? 1 : 0;
    result.points.push_back(sp);
  }
  if (result.observations > 0) {
    result.mean_error = sum / result.observations;
    result.rms_error = std::sqrt(sum2 / result.observations);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

CameraSolve solve_camera(const TrackSet& tracks, const SolveOptions& options) {
  return solve_camera(tracks.tracks, tracks.width, tracks.height, tracks.frame_count, options);
}

bool project(const CameraSolve& solve, const SolvedCamera& camera, const Vec3& point,
             composite::PixelPoint& pixel) {
  const Vec3 c = rotate(camera.rotation, point - camera.position);
  if (!(c.z > 0)) return false;
  pixel =
      composite::to_pixel(composite::distort({c.x / c.z, c.y / c.z}, solve.lens), solve.intrinsics);
  return true;
}

Similarity similarity_to(const CameraSolve& solve, std::span<const Vec3> reference_positions) {
  if (reference_positions.size() != solve.cameras.size())
    throw Error({}, "reference positions",
                std::to_string(reference_positions.size()) + " positions for " +
                    std::to_string(solve.cameras.size()) + " frames; give one per frame");
  std::vector<std::size_t> frames;
  for (std::size_t f = 0; f < solve.cameras.size(); ++f) {
    if (!solve.cameras[f].solved) continue;
    const Vec3& r = reference_positions[f];
    if (!std::isfinite(r.x) || !std::isfinite(r.y) || !std::isfinite(r.z))
      throw Error({}, "reference position " + std::to_string(f), "is not finite");
    frames.push_back(f);
  }
  if (frames.size() < 3)
    throw Error(
        {}, "reference positions",
        "alignment needs at least 3 solved frames, the solve has " + std::to_string(frames.size()));
  Eigen::Matrix3Xd from(3, Eigen::Index(frames.size())), to(3, Eigen::Index(frames.size()));
  for (std::size_t k = 0; k < frames.size(); ++k) {
    const Vec3& a = solve.cameras[frames[k]].position;
    const Vec3& b = reference_positions[frames[k]];
    from.col(Eigen::Index(k)) << a.x, a.y, a.z;
    to.col(Eigen::Index(k)) << b.x, b.y, b.z;
  }
  const auto spread = [](const Eigen::Matrix3Xd& m) {
    return (m.colwise() - m.rowwise().mean()).norm();
  };
  if (!(spread(from) > 1e-12) || !(spread(to) > 1e-12))
    throw Error({}, "reference positions",
                "the camera centres (solved or reference) are all at one point: a similarity "
                "needs the camera to travel");
  // Umeyama (1991): rotation from the SVD of the cross-covariance, reflection excluded.
  const Eigen::Matrix4d t = Eigen::umeyama(from, to, true);
  const Matrix3d sr = t.topLeftCorner<3, 3>();
  const double scale = std::cbrt(sr.determinant());
  const Eigen::Quaterniond q(Matrix3d(sr / scale));
  Similarity s;
  s.scale = scale;
  s.rotation = normalize(Quat(q.x(), q.y(), q.z(), q.w()));
  s.translation = {t(0, 3), t(1, 3), t(2, 3)};
  return s;
}

CameraSolve align_to(const CameraSolve& solve, std::span<const Vec3> reference_positions) {
  const Similarity s = similarity_to(solve, reference_positions);
  CameraSolve out = solve;
  for (SolvedCamera& c : out.cameras) {
    if (!c.solved) continue;
    c.position = s.apply(c.position);
    // x_c = R·(X − C) with X = Qᵀ(X′ − t)/s: the new world → camera rotation is R·Qᵀ (the 1/s
    // scales camera space uniformly, which projection ignores).
    c.rotation = normalize(c.rotation * conjugate(s.rotation));
  }
  for (SolvedPoint& p : out.points) p.position = s.apply(p.position);
  return out;
}

LookAt to_look_at(const CameraSolve& solve, const SolvedCamera& camera) {
  const Quat to_world = conjugate(camera.rotation);
  LookAt l;
  l.eye = camera.position;
  l.target = camera.position + rotate(to_world, Vec3(0, 0, 1));  // OpenCV's +z is forward
  l.up = rotate(to_world, Vec3(0, -1, 0));                       // and its +y is down
  l.fov_y_degrees = 2 * std::atan(0.5 * solve.height / solve.intrinsics.fy) * 180 / kPi;
  return l;
}

}  // namespace kinema::matchmove
