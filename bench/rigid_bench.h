// The rigid-body scenes kinema_rigid_bench runs with kinema, Bullet and Jolt (bench/peers/): the
// same bodies, sizes, masses, friction, step and iteration count for every engine, described once
// here and built by each engine from these descriptions. Units: metres, kilograms, seconds,
// radians; y is up.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

namespace kinema::rigid_bench {

constexpr double kStep = 1.0 / 60;  ///< s
constexpr int kIterations = 10;     ///< solver iterations a step, both engines
constexpr double kFriction = 0.5;   ///< both engines' default
constexpr double kGravity = 9.81;   ///< m/s², along −y

enum class Kind { Box, Sphere, Capsule };

/// One body. Mass 0: static. Capsules lie along their frame's y: along x (the chain) when
/// `along_x` says so, otherwise as the orientation turns them.
struct BodySpec {
  Kind kind = Kind::Box;
  double x = 0, y = 0, z = 0;             ///< centre of the shape (m)
  double qx = 0, qy = 0, qz = 0, qw = 1;  ///< orientation, shape frame → world (unit quaternion)
  double hx = 0, hy = 0, hz = 0;          ///< box half extents (m)
  double radius = 0, half_height = 0;     ///< sphere, capsule (m)
  bool along_x = false;
  double mass = 0;                ///< kg
  double vx = 0, vy = 0, vz = 0;  ///< initial velocity (m/s)
  double friction = kFriction;    ///< Coulomb μ; kinema and Jolt combine a pair as √(μa·μb)
  double restitution = 0;         ///< kinema and Jolt combine a pair as max(ea, eb)
  double linear_damping = 0;      ///< fraction of the velocity lost per second (1/s)
  double angular_damping = 0;     ///< the same for the angular velocity (1/s)
  /// Mass properties given rather than computed from the shape at uniform density: the centre
  /// of mass in the shape frame (m) and the inertia about it in the shape's axes (kg·m²:
  /// xx, yy, zz, xy, xz, yz).
  bool explicit_inertia = false;
  double cx = 0, cy = 0, cz = 0;
  std::array<double, 6> inertia{};
  /// Jolt rounds its boxes by this much (BoxShape's convex radius, m; its default); kinema's and
  /// Bullet's boxes are sharp. Jolt's PyramidScene sets 0 "to force more collisions".
  double jolt_convex_radius = 0.05;
};

/// A ball joint between bodies a and b at (x, y, z); a may be static.
struct BallSpec {
  int a = 0, b = 0;
  double x = 0, y = 0, z = 0;
};

/// A cone–twist joint (Jolt's swing–twist) between a parent a and a child b, given in each body's
/// shape frame: the joint's frame on a (anchor, twist axis, plane axis ⟂ twist) and on b. Its rest
/// — no swing, no twist — is where the two frames coincide, whatever pose the bodies start in.
/// The twist axis on b may swing away from a's inside an elliptical cone (half-angles about the
/// normal axis, twist × plane, and about the plane axis) and twist about it within
/// [twist_min, twist_max]. A motor holds the pose the bodies start in, each engine with its own:
/// Jolt a soft constraint of motor_frequency (Hz) and motor_damping (ratio) up to motor_torque,
/// kinema its powered ragdoll's PD torques (bench/rigid_bench_kinema.h).
struct ConeTwistSpec {
  int a = 0, b = 0;
  std::array<double, 3> anchor_a{}, anchor_b{};  ///< m
  std::array<double, 3> twist_a{}, plane_a{}, twist_b{}, plane_b{};
  double normal_half_cone = 0, plane_half_cone = 0;  ///< rad
  double twist_min = 0, twist_max = 0;               ///< rad
  double friction_torque = 0;  ///< N·m resisting any turn of an unpowered joint (Jolt only)
  bool motor = false;
  double motor_frequency = 0, motor_damping = 0, motor_torque = 0;  ///< Hz, ratio, N·m
};

struct Scene {
  std::vector<BodySpec> bodies;
  std::vector<BallSpec> joints;
  std::vector<ConeTwistSpec> cone_twists;
  /// Pairs of bodies (indices) that do not collide, beyond those a joint links (which never do).
  std::vector<std::pair<int, int>> no_collision;
  /// Where each body should come to rest (m), when the scene starts away from it (bodies dropped
  /// onto each other); empty: where it starts. The drift measure is taken from here.
  std::vector<std::array<double, 3>> rest;
  int steps = 0;  ///< how many steps one benchmark iteration runs
  /// With `rest`: the steps the bodies take to come to rest; how far they creep after that
  /// (from step settle_steps to the end) is a second drift measure, free of how they landed.
  int settle_steps = 0;
  int velocity_iterations = kIterations;
  int position_iterations = 0;  ///< position (penetration) passes a step; 0: each engine's default
  bool sleeping = true;         ///< whether still bodies may fall asleep
};

inline BodySpec ground() {
  BodySpec g;
  g.y = -0.5;
  g.hx = 50;
  g.hy = 0.5;
  g.hz = 50;
  return g;
}

/// A pyramid of 1 m boxes, 14 at its base (105 in all), standing for 10 s.
inline Scene pyramid() {
  Scene s;
  s.bodies.push_back(ground());
  const int base = 14;
  for (int row = 0; row < base; ++row)
    for (int i = 0; i < base - row; ++i) {
      BodySpec b;
      b.x = (i - 0.5 * (base - row - 1)) * 1.05;
      b.y = 0.5 + row;
      b.hx = b.hy = b.hz = 0.5;
      b.mass = 1;
      s.bodies.push_back(b);
    }
  s.steps = 600;
  return s;
}

/// 50 capsules 0.1 m long joined end to end by ball joints, pinned at one end, released
/// horizontally 10 m up, for 5 s.
inline Scene chain() {
  Scene s;
  BodySpec pin;
  pin.kind = Kind::Sphere;
  pin.y = 10;
  pin.radius = 0.01;
  s.bodies.push_back(pin);
  for (int i = 0; i < 50; ++i) {
    BodySpec link;
    link.kind = Kind::Capsule;
    link.x = 0.1 * i + 0.05;
    link.y = 10;
    link.radius = 0.025;
    link.half_height = 0.025;
    link.along_x = true;
    link.mass = 1000 * (std::acos(-1.0) * 0.025 * 0.025 * 0.05 +
                        4.0 / 3 * std::acos(-1.0) * std::pow(0.025, 3));
    s.bodies.push_back(link);
    s.joints.push_back({i, i + 1, 0.1 * i, 10, 0});
  }
  s.steps = 300;
  return s;
}

/// 1,000 spheres, boxes and capsules dropped from a 10 × 10 × 10 grid into a 6 m square bin, 5 s.
inline Scene pour() {
  Scene s;
  s.bodies.push_back(ground());
  for (int side = 0; side < 4; ++side) {  // the bin's walls, 2 m high
    BodySpec w;
    const double offset = side % 2 == 0 ? -3.1 : 3.1;
    w.x = side < 2 ? offset : 0;
    w.z = side < 2 ? 0 : offset;
    w.y = 1;
    w.hx = side < 2 ? 0.1 : 3.2;
    w.hz = side < 2 ? 3.2 : 0.1;
    w.hy = 1;
    s.bodies.push_back(w);
  }
  int n = 0;
  for (int layer = 0; layer < 10; ++layer)
    for (int i = 0; i < 10; ++i)
      for (int k = 0; k < 10; ++k, ++n) {
        BodySpec b;
        b.kind = n % 3 == 0 ? Kind::Sphere : n % 3 == 1 ? Kind::Box : Kind::Capsule;
        b.x = -2.5 + 0.55 * i + 0.01 * (layer % 2);
        b.z = -2.5 + 0.55 * k;
        b.y = 1 + 0.6 * layer;
        b.radius = b.kind == Kind::Sphere ? 0.2 : 0.12;
        b.half_height = 0.12;
        b.hx = b.hy = b.hz = 0.18;
        b.mass = 1;
        s.bodies.push_back(b);
      }
  s.steps = 300;
  return s;
}

/// A 2-tonne truck-sized box at 20 m/s into a wall of 10 × 10 crates (0.5 m, 20 kg), 3 s.
inline Scene crates() {
  Scene s;
  s.bodies.push_back(ground());
  for (int row = 0; row < 10; ++row)
    for (int i = 0; i < 10; ++i) {
      BodySpec c;
      c.x = (i - 4.5) * 0.5;
      c.y = 0.25 + 0.5 * row;
      c.hx = c.hy = c.hz = 0.25;
      c.mass = 20;
      s.bodies.push_back(c);
    }
  BodySpec truck;
  truck.z = -8;
  truck.y = 1.0;
  truck.hx = 1.2;
  truck.hy = 1.0;
  truck.hz = 2.5;
  truck.mass = 2000;
  truck.vz = 20;
  s.bodies.push_back(truck);
  s.steps = 180;
  return s;
}

// ---- Jolt's PerformanceTest scenes (Jolt v5.5.0, PerformanceTest/PyramidScene.h, RagdollScene.h)
// --

/// Jolt's "Pyramid" as Jolt builds it: 15 layers of 2 m boxes, layer i a square 15 − i boxes on a
/// side (1,240 boxes), odd layers shifted by half a box (bricks), each layer 0.5 m above the one
/// below so that they drop onto each other, on a 100 × 100 m floor box 2 m thick whose top is
/// y = 0. Jolt's defaults otherwise: 1,000 kg/m³ (8,000 kg a box), friction 0.2, no restitution,
/// damping 0.05/s, 10 velocity and 2 position passes a step; sleeping off ("to force the large
/// island to stay awake") and sharp boxes ("to force more collisions"). 500 steps (8.3 s), the
/// PerformanceTest's default. `rest` holds where each box ends up when the pyramid stands.
inline Scene jolt_pyramid() {
  Scene s;
  BodySpec floor;
  floor.y = -1;
  floor.hx = 50;
  floor.hy = 1;
  floor.hz = 50;
  floor.friction = 0.2;
  floor.jolt_convex_radius = 0;
  s.bodies.push_back(floor);
  s.rest.push_back({0, -1, 0});
  const int height = 15;
  for (int i = 0; i < height; ++i)
    for (int j = i / 2; j < height - (i + 1) / 2; ++j)
      for (int k = i / 2; k < height - (i + 1) / 2; ++k) {
        BodySpec b;
        b.x = -height + 2.0 * j + (i % 2 == 1 ? 1 : 0);
        b.y = 1 + 2.5 * i;
        b.z = -height + 2.0 * k + (i % 2 == 1 ? 1 : 0);
        b.hx = b.hy = b.hz = 1;
        b.mass = 1000 * 8;
        b.friction = 0.2;
        b.linear_damping = b.angular_damping = 0.05;
        b.jolt_convex_radius = 0;
        s.bodies.push_back(b);
        s.rest.push_back({b.x, 1 + 2.0 * i, b.z});
      }
  s.velocity_iterations = 10;
  s.position_iterations = 2;
  s.sleeping = false;
  s.steps = 500;
  s.settle_steps = 150;  // the top layer lands within 0.4 s; 2.5 s leaves the bounces behind
  return s;
}

/// One part of Jolt's "Human" ragdoll (Assets/Human.tof, 23 parts) as kinema_rigid_bench builds
/// it, dumped once from Jolt v5.5.0 after the initialisation RagdollScene.h gives it
/// (RagdollSettings::Stabilize, which evens out the masses and inertias) and posed as the
/// PerformanceTest poses it (Assets/Human/dead_pose1.tof sampled at t = 0), the hips joint at the
/// origin. Human.tof builds most parts of a capsule or a tapered capsule, the feet of a box and
/// two neck parts of two capsules side by side, each turned and shifted in its body; kinema has
/// neither tapered capsules nor compound shapes, so both engines get one shape a part: a tapered
/// capsule becomes the capsule between the same two sphere centres with the mean of its radii,
/// the neck's pair of capsules the box around them. The masses, centres of mass and inertias are
/// Jolt's (from the original shapes), so both engines move the same bodies. The joint to the
/// parent is Jolt's swing–twist constraint as Human.tof has it, moved into the two shape frames.
struct HumanPart {
  const char* name;               ///< Human.tof's joint name
  int parent;                     ///< the part it hangs from; −1 for the hips
  Kind kind;                      ///< Capsule (along its frame's y) or Box
  double radius, half_height;     ///< capsule (m)
  std::array<double, 3> half;     ///< box half extents (m)
  std::array<double, 3> at;       ///< shape centre in the start pose (m)
  std::array<double, 4> q;        ///< shape orientation in the start pose (x, y, z, w)
  double mass;                    ///< kg
  std::array<double, 3> com;      ///< centre of mass in the shape frame (m)
  std::array<double, 6> inertia;  ///< about it, shape axes (kg·m²: xx, yy, zz, xy, xz, yz)
  /// The joint to the parent: anchor, twist and plane axes in the parent's shape frame, then in
  /// this part's.
  std::array<double, 3> anchor_parent, anchor, twist_parent, plane_parent, twist, plane;
  double normal_half_cone, plane_half_cone, twist_min, twist_max;  ///< rad
  double friction_torque, motor_torque;                            ///< N·m
};

// clang-format off
inline constexpr std::array<HumanPart, 23> kHuman = {{
    {"hipsBone", -1, Kind::Capsule, 0.10589, 0.07309, {0.00000, 0.00000, 0.00000},  // Jolt: capsule
     {0.029860, 0.004714, -0.024808}, {-0.858699, 0.275763, -0.385727, 0.194435},
     5.37161, {0.000000, 0.000000, 0.000000}, {0.1075572, 0.1075573, 0.1075572, -0.0000000, 0.0000000, 0.0000000},
     {}, {}, {}, {}, {}, {}, 0, 0, 0, 0, 0, 0},  // the root: no joint
    {"R_Leg_sjnt_0", 0, Kind::Capsule, 0.07000, 0.14680, {0.00000, 0.00000, 0.00000},  // Jolt: tapered capsule
     {0.213486, 0.100575, -0.116440}, {0.612354, -0.675733, -0.403938, 0.072397},
     4.51018, {0.000000, 0.010000, 0.000000}, {0.0780318, 0.0709141, 0.0780318, -0.0000000, -0.0000000, -0.0000000},
     {-0.000119, -0.105109, -0.038457}, {-0.008686, 0.249215, -0.017399}, {-0.274314, -0.224266, 0.935124}, {-0.072923, 0.974477, 0.212313}, {-0.009614, -0.999694, 0.022783}, {0.998102, -0.008208, 0.061045},
     0.78540, 0.59545, -0.57807, 0.57807, 5.0, 1000},
    {"R_Leg_sjnt_1", 1, Kind::Capsule, 0.05000, 0.16157, {0.00000, 0.00000, 0.00000},  // Jolt: tapered capsule
     {0.545244, 0.049062, -0.168214}, {0.582219, -0.728972, -0.028801, -0.358875},
     3.60814, {-0.000000, 0.010000, 0.000000}, {0.0568433, 0.0140707, 0.0568433, 0.0000000, -0.0000000, -0.0000000},
     {-0.000029, -0.212373, -0.006073}, {0.000781, 0.193803, 0.007653}, {0.029446, -0.517319, -0.855286}, {0.998690, 0.051045, 0.003508}, {0.032347, -0.999059, -0.028909}, {0.999477, 0.032339, 0.000740},
     1.04720, 0.27414, -0.17453, 0.17453, 2.5, 500},
    {"R_Foot_sjnt_0", 2, Kind::Box, 0.00000, 0.00000, {0.04444, 0.03613, 0.11247},  // Jolt: box
     {0.774043, -0.041671, -0.136079}, {-0.273809, 0.060182, 0.892979, -0.352129},
     2.88651, {0.000000, 0.000000, 0.000000}, {0.0134268, 0.0140707, 0.0031558, -0.0000000, -0.0000000, 0.0000000},
     {0.000562, -0.194206, -0.003578}, {0.000391, -0.043468, 0.066959}, {-0.012488, -0.486284, 0.873711}, {0.999922, -0.005670, 0.011137}, {-0.012452, 0.467642, -0.883830}, {0.999098, 0.041697, 0.007987},
     1.03831, 0.49815, -0.35046, 0.35046, 5.0, 1000},
    {"L_Leg_sjnt_0", 0, Kind::Capsule, 0.07000, 0.14690, {0.00000, 0.00000, 0.00000},  // Jolt: tapered capsule
     {0.109097, -0.046447, -0.259016}, {-0.620517, 0.640273, 0.398061, -0.215772},
     4.51209, {-0.000000, 0.010000, 0.000000}, {0.0781249, 0.0709441, 0.0781249, -0.0000000, 0.0000000, 0.0000000},
     {0.000516, 0.104596, -0.039304}, {0.009141, 0.249134, -0.017350}, {-0.269469, 0.281379, 0.920984}, {0.080133, 0.959596, -0.269729}, {0.060145, -0.997995, 0.019705}, {0.996336, 0.058819, -0.062086},
     0.78540, 0.59301, -0.57807, 0.57807, 5.0, 1000},
    {"L_Leg_sjnt_1", 4, Kind::Capsule, 0.05000, 0.16157, {0.00000, 0.00000, 0.00000},  // Jolt: tapered capsule
     {0.420456, -0.041535, -0.336894}, {-0.684483, 0.693189, -0.077222, 0.212152},
     3.60967, {0.000000, 0.010000, 0.000000}, {0.0568674, 0.0140767, 0.0568674, -0.0000000, 0.0000000, 0.0000000},
     {0.000245, -0.212448, -0.006021}, {-0.000587, 0.193735, 0.007692}, {-0.024717, -0.517540, -0.855302}, {0.999069, -0.043054, -0.002820}, {-0.024370, -0.999285, -0.028920}, {0.999703, -0.024362, -0.000638},
     1.04720, 0.24313, -0.17453, 0.17453, 2.5, 500},
    {"L_Foot_sjnt_0", 5, Kind::Box, 0.00000, 0.00000, {0.04444, 0.03613, 0.11247},  // Jolt: box
     {0.684428, -0.033552, -0.284842}, {-0.281460, 0.097554, 0.639552, -0.708687},
     2.88774, {0.000000, 0.000000, 0.000000}, {0.0134325, 0.0140767, 0.0031571, 0.0000000, 0.0000000, -0.0000000},
     {-0.000570, -0.194274, -0.003536}, {-0.003256, -0.059956, 0.071890}, {-0.015130, -0.486255, 0.873686}, {0.999885, -0.006244, 0.013840}, {-0.015194, 0.520283, -0.853859}, {0.999064, -0.026692, -0.034041},
     1.03831, 0.47655, -0.31374, 0.31374, 5.0, 1000},
    {"C_Spine_sjnt_0", 0, Kind::Capsule, 0.06883, 0.07517, {0.00000, 0.00000, 0.00000},  // Jolt: capsule
     {-0.061816, -0.003208, 0.041563}, {-0.847991, 0.280556, -0.409644, 0.185448},
     4.29729, {0.000000, 0.000000, 0.000000}, {0.0535950, 0.0535950, 0.0535950, 0.0000000, 0.0000000, 0.0000000},
     {0.000652, -0.000483, -0.094545}, {0.008257, 0.000000, 0.019073}, {0.006700, -0.005286, -0.999964}, {0.003034, 0.999982, -0.005265}, {-0.002392, -0.001224, -0.999996}, {-0.000003, 0.999999, -0.001224},
     0.51624, 0.41873, -0.44386, 0.44386, 5.0, 1000},
    {"C_Spine_sjnt_1", 7, Kind::Capsule, 0.06016, 0.06968, {0.00000, 0.00000, 0.00000},  // Jolt: capsule
     {-0.144535, -0.004739, 0.091102}, {-0.820507, 0.285934, -0.464159, 0.171947},
     3.43783, {0.000000, 0.000000, 0.000000}, {0.0347372, 0.0347372, 0.0347372, 0.0000000, 0.0000000, 0.0000000},
     {0.008257, 0.000000, -0.029927}, {0.011640, 0.000000, 0.067764}, {-0.000103, 0.017047, -0.999855}, {0.000243, 0.999855, 0.017047}, {-0.000096, 0.017004, -0.999855}, {0.000193, 0.999855, 0.017004},
     0.62958, 0.44835, -0.37312, 0.37312, 5.0, 1000},
    {"C_Spine_sjnt_2", 8, Kind::Capsule, 0.09763, 0.04494, {0.00000, 0.00000, 0.00000},  // Jolt: capsule
     {-0.242597, 0.008711, 0.122252}, {-0.772562, 0.293203, -0.542224, 0.152225},
     4.12539, {0.000000, 0.000000, 0.000000}, {0.0548288, 0.0548288, 0.0548288, 0.0000000, 0.0000000, 0.0000000},
     {0.011640, 0.000000, 0.018764}, {0.016490, 0.000000, 0.124006}, {0.000000, -0.005554, -0.999985}, {-0.000013, 0.999985, -0.005554}, {-0.002392, -0.005554, -0.999982}, {-0.000013, 0.999985, -0.005554},
     0.58318, 0.42274, -0.42381, 0.42381, 5.0, 1000},
    {"C_Spine_sjnt_4", 9, Kind::Capsule, 0.09708, 0.02297, {0.00000, 0.00000, 0.00000},  // Jolt: capsule
     {-0.311101, 0.013211, 0.147196}, {-0.718532, 0.296103, -0.615551, 0.130890},
     3.30032, {0.000000, 0.000000, 0.000000}, {0.0334580, 0.0334580, 0.0334580, 0.0000000, 0.0000000, 0.0000000},
     {0.016490, 0.000000, 0.026006}, {-0.001506, 0.000000, 0.100480}, {-0.000000, 0.000450, -1.000000}, {0.000001, 1.000000, 0.000449}, {-0.002392, 0.000449, -0.999997}, {0.000001, 1.000000, 0.000449},
     0.46674, 0.36121, -0.42636, 0.42636, 5.0, 1000},
    {"L_Clavicle_sjnt_0", 10, Kind::Capsule, 0.05278, 0.01545, {0.00000, 0.00000, 0.00000},  // Jolt: capsule
     {-0.469899, -0.042609, 0.103784}, {0.055613, 0.862503, -0.300294, -0.403510},
     2.64025, {0.000000, 0.000000, 0.000000}, {0.0084589, 0.0084589, 0.0084589, 0.0000000, 0.0000000, -0.0000000},
     {-0.032182, 0.007298, -0.108376}, {0.019894, 0.044012, -0.096213}, {0.425207, 0.898494, 0.109123}, {-0.903440, 0.414041, 0.111204}, {-0.315095, -0.406150, 0.857763}, {-0.102950, 0.913097, 0.394532},
     0.78540, 0.61086, -0.34907, 0.34907, 2.5, 500},
    {"L_Arm_sjnt_0", 11, Kind::Capsule, 0.04776, 0.11773, {0.00000, 0.00000, 0.00000},  // Jolt: tapered capsule
     {-0.485479, -0.081645, -0.071851}, {0.492222, 0.445781, -0.483121, -0.570605},
     3.16830, {0.000000, -0.002243, 0.000000}, {0.0313317, 0.0216603, 0.0313317, 0.0000000, -0.0000000, 0.0000000},
     {-0.045992, 0.000568, 0.050350}, {0.005380, -0.120123, 0.004820}, {-0.688072, -0.050930, 0.723853}, {-0.016119, 0.998361, 0.054923}, {-0.068657, 0.989439, -0.127657}, {-0.007408, 0.127450, 0.991817},
     1.11111, 0.89047, -1.37300, 1.37300, 2.5, 500},
    {"L_Arm_sjnt_1", 12, Kind::Capsule, 0.03480, 0.10848, {0.00000, 0.00000, 0.00000},  // Jolt: tapered capsule
     {-0.628849, -0.086509, -0.176770}, {0.664145, 0.709860, -0.233777, 0.018937},
     2.53464, {-0.000000, 0.005204, 0.000000}, {0.0183675, 0.0032927, 0.0183675, -0.0000000, 0.0000000, 0.0000000},
     {-0.012598, 0.139806, -0.001558}, {-0.004258, 0.131871, -0.005143}, {-0.019497, 0.315094, 0.948860}, {0.997682, 0.068014, -0.002086}, {-0.008764, -0.999735, 0.021294}, {0.999854, -0.008449, 0.014845},
     1.15708, 0.43633, -0.39270, 0.39270, 2.5, 500},
    {"L_Wrist_sjnt_0", 13, Kind::Capsule, 0.03025, 0.04370, {0.00000, 0.00000, 0.00000},  // Jolt: capsule
     {-0.800755, -0.074133, -0.122915}, {0.728447, 0.664494, -0.160921, -0.043795},
     2.02771, {0.000000, 0.000000, 0.000000}, {0.0032927, 0.0008693, 0.0032927, -0.0000000, 0.0000000, 0.0000000},
     {-0.006317, -0.110337, 0.000025}, {-0.011326, 0.071657, 0.000000}, {-0.009393, -0.999725, 0.021506}, {0.246338, -0.023157, -0.968907}, {-0.234084, -0.972216, -0.000006}, {0.250801, -0.060380, -0.966154},
     1.09455, 0.65908, -0.92018, 0.92018, 5.0, 1000},
    {"R_Clavicle_sjnt_0", 10, Kind::Capsule, 0.05278, 0.01545, {0.00000, 0.00000, 0.00000},  // Jolt: capsule
     {-0.411943, 0.105283, 0.241897}, {-0.892150, -0.042547, -0.084562, -0.441709},
     2.64025, {0.000000, 0.000000, 0.000000}, {0.0084578, 0.0084578, 0.0084578, 0.0000000, -0.0000000, 0.0000000},
     {-0.032182, -0.007298, -0.108376}, {-0.021521, -0.045572, 0.093072}, {0.423058, -0.887681, 0.181782}, {0.906103, 0.414463, -0.084843}, {0.316738, 0.402959, -0.858663}, {-0.120300, 0.915028, 0.385035},
     0.78540, 0.61086, -0.34907, 0.34907, 2.5, 500},
    {"R_Arm_sjnt_0", 15, Kind::Capsule, 0.04776, 0.11773, {0.00000, 0.00000, 0.00000},  // Jolt: tapered capsule
     {-0.262316, 0.163647, 0.244176}, {0.630804, 0.698509, -0.312512, 0.128483},
     3.16830, {-0.000000, -0.002243, 0.000000}, {0.0313315, 0.0216585, 0.0313315, -0.0000000, 0.0000000, -0.0000000},
     {0.044367, -0.002128, -0.053490}, {-0.005906, -0.120783, 0.004709}, {0.513799, -0.308257, -0.800617}, {0.229400, 0.948602, -0.218016}, {0.069909, 0.994413, 0.079087}, {0.003786, 0.079016, -0.996866},
     1.11111, 0.89047, -1.37300, 1.37300, 2.5, 500},
    {"R_Arm_sjnt_1", 16, Kind::Capsule, 0.03480, 0.10848, {0.00000, 0.00000, 0.00000},  // Jolt: tapered capsule
     {-0.140010, 0.144259, 0.071739}, {0.294784, 0.733401, 0.541478, 0.286402},
     2.53464, {0.000000, 0.005204, -0.000000}, {0.0183657, 0.0032927, 0.0183657, 0.0000000, 0.0000000, -0.0000000},
     {0.012317, 0.139127, -0.001838}, {0.004019, 0.132620, -0.005124}, {-0.033403, 0.276265, 0.960501}, {0.996996, -0.057979, 0.051348}, {0.009677, -0.999712, 0.021968}, {0.995111, 0.007469, -0.098485},
     1.14461, 0.43633, -0.39270, 0.39270, 2.5, 500},
    {"R_Wrist_sjnt_0", 17, Kind::Capsule, 0.03025, 0.04370, {0.00000, 0.00000, 0.00000},  // Jolt: capsule
     {-0.162975, 0.071835, -0.090286}, {0.280428, 0.773529, 0.333269, 0.460375},
     2.02771, {0.000000, 0.000000, 0.000000}, {0.0032927, 0.0008693, 0.0032927, -0.0000000, -0.0000000, -0.0000000},
     {0.006356, -0.109576, 0.000200}, {0.006149, 0.075521, -0.001672}, {0.010811, -0.999676, 0.023030}, {0.246029, 0.024983, 0.968941}, {0.235462, -0.971882, 0.001573}, {0.250190, 0.062178, 0.966198},
     1.09455, 0.65908, -0.92018, 0.92018, 5.0, 1000},
    {"C_Neck_sjnt_0", 10, Kind::Capsule, 0.05485, 0.02675, {0.00000, 0.00000, 0.00000},  // Jolt: capsule
     {-0.427668, 0.017738, 0.191739}, {-0.530598, 0.332069, 0.688031, -0.367163},
     2.64025, {0.000000, 0.000000, 0.000000}, {0.0114192, 0.0114192, 0.0114192, 0.0000000, 0.0000000, -0.0000000},
     {0.036612, 0.000000, -0.105868}, {0.000000, 0.012299, -0.015685}, {-0.360170, 0.061475, -0.930859}, {0.026039, 0.998100, 0.055841}, {0.061613, -0.355258, 0.932736}, {0.998100, 0.021930, -0.057578},
     0.60233, 0.47467, -0.50000, 0.50000, 5.0, 1000},
    {"C_Neck_sjnt_1", 19, Kind::Box, 0.00000, 0.00000, {0.05920, 0.05565, 0.03049},  // Jolt: two capsules side by side
     {-0.489119, 0.019771, 0.204445}, {0.405595, -0.656356, 0.320972, -0.549242},
     2.11220, {0.000000, 0.000000, 0.000000}, {0.0074989, 0.0074989, 0.0074989, 0.0000000, -0.0000000, 0.0000000},
     {0.000000, -0.006921, 0.034778}, {-0.000104, 0.006584, 0.028223}, {0.074868, 0.080318, 0.993954}, {0.997193, -0.005417, -0.074674}, {0.074870, -0.166412, -0.983210}, {0.997193, 0.012494, 0.073820},
     0.52414, 0.42199, -0.50120, 0.50120, 5.0, 1000},
    {"C_Neck_sjnt_2", 20, Kind::Box, 0.00000, 0.00000, {0.04968, 0.07439, 0.02681},  // Jolt: two capsules side by side
     {-0.548192, 0.024083, 0.200841}, {0.572188, -0.303971, -0.646507, 0.402780},
     2.35039, {-0.000000, 0.000000, 0.000000}, {0.0101543, 0.0101543, 0.0101543, 0.0000000, 0.0000000, 0.0000000},
     {-0.000104, -0.002427, -0.025020}, {-0.000764, 0.017957, -0.032335}, {-0.019297, -0.156020, -0.987565}, {0.999814, -0.003175, -0.019035}, {-0.019298, 0.275780, 0.961027}, {0.999814, 0.005323, 0.018549},
     0.60102, 0.49964, -0.40857, 0.40857, 5.0, 1000},
    {"C_Head_sjnt_0", 21, Kind::Capsule, 0.08324, 0.01833, {0.00000, 0.00000, 0.00000},  // Jolt: capsule
     {-0.610807, -0.006960, 0.226524}, {0.324641, -0.457534, 0.375857, -0.737566},
     2.82047, {0.000000, 0.000000, 0.000000}, {0.0103067, 0.0083023, 0.0103067, 0.0000000, 0.0000000, 0.0000000},
     {-0.000764, 0.032976, 0.019534}, {0.000000, 0.014902, 0.049254}, {0.029913, -0.006222, 0.999533}, {0.999513, -0.008677, -0.029967}, {0.040179, -0.614430, -0.787947}, {0.999193, 0.024707, 0.031685},
     0.79333, 0.66770, -0.50000, 0.50000, 5.0, 1000},
}};
// clang-format on

/// Human.tof's collision filter: these parts of one ragdoll never collide with each other (each
/// with its parent, and around the shoulders and neck, where the capsules overlap at rest).
inline constexpr std::array<std::pair<int, int>, 29> kHumanNoCollision = {
    {{0, 1},   {0, 4},   {0, 7},   {1, 2},   {2, 3},   {4, 5},   {5, 6},   {7, 8},
     {8, 9},   {9, 10},  {10, 11}, {10, 15}, {10, 19}, {10, 20}, {11, 12}, {11, 15},
     {11, 19}, {11, 20}, {12, 13}, {13, 14}, {15, 16}, {15, 19}, {15, 20}, {16, 17},
     {17, 18}, {19, 20}, {20, 21}, {20, 22}, {21, 22}}};

/// Human.tof's parts: friction 1, restitution 0.15, damping 0.05/s, boxes (the feet) rounded by
/// 3.6 mm in Jolt; every joint's swing and twist motor a spring of 20 Hz at damping ratio 2.
constexpr double kHumanFriction = 1.0, kHumanRestitution = 0.15, kHumanDamping = 0.05;
constexpr double kHumanBoxConvexRadius = 0.0036;
constexpr double kHumanMotorFrequency = 20, kHumanMotorDamping = 2;

/// Jolt's "Ragdoll" scene (RagdollScene(4, 10, 0.6): 160 powered ragdolls, 3,680 bodies) on a
/// flat floor: piles_per_axis² piles 4 m apart, each of pile_size ragdolls in the start pose, the
/// i-th (from 0) turned 2π·i/pile_size about y and its hips vertical_separation·(i + 1) above the
/// ground, every joint's motor holding the start pose. Jolt drops them on a piece of a Horizon
/// Zero Dawn level (Assets/terrain2.bof) that the fetched snapshot lacks: here the pyramid's floor
/// (friction 0.2, top at y = 0) stands in for it. 500 steps (8.3 s), sleeping allowed, 10
/// velocity and 2 position passes a step, as the PerformanceTest runs it.
inline Scene ragdoll_pile(int piles_per_axis = 4, int pile_size = 10,
                          double vertical_separation = 0.6) {
  Scene s = jolt_pyramid();
  s.bodies.resize(1);  // the floor
  s.rest.clear();
  s.settle_steps = 0;
  s.sleeping = true;
  const double pi = std::acos(-1.0);
  for (int row = 0; row < piles_per_axis; ++row)
    for (int col = 0; col < piles_per_axis; ++col)
      for (int i = 0; i < pile_size; ++i) {
        const double px = 4.0 * (col - (piles_per_axis - 1) / 2.0);
        const double pz = 4.0 * (row - (piles_per_axis - 1) / 2.0);
        const double py = vertical_separation * (i + 1);
        const double angle = 2 * pi * i / pile_size;
        const double c = std::cos(angle), sn = std::sin(angle);
        const double ry = std::sin(angle / 2), rw = std::cos(angle / 2);  // turn about y
        const int base = int(s.bodies.size());
        for (const HumanPart& part : kHuman) {
          BodySpec b;
          b.kind = part.kind;
          b.radius = part.radius;
          b.half_height = part.half_height;
          b.hx = part.half[0];
          b.hy = part.half[1];
          b.hz = part.half[2];
          b.x = px + c * part.at[0] + sn * part.at[2];
          b.y = py + part.at[1];
          b.z = pz - sn * part.at[0] + c * part.at[2];
          const auto& q = part.q;  // (0, ry, 0, rw) · q
          b.qx = rw * q[0] + ry * q[2];
          b.qy = rw * q[1] + ry * q[3];
          b.qz = rw * q[2] - ry * q[0];
          b.qw = rw * q[3] - ry * q[1];
          b.mass = part.mass;
          b.explicit_inertia = true;
          b.cx = part.com[0];
          b.cy = part.com[1];
          b.cz = part.com[2];
          b.inertia = part.inertia;
          b.friction = kHumanFriction;
          b.restitution = kHumanRestitution;
          b.linear_damping = b.angular_damping = kHumanDamping;
          b.jolt_convex_radius = kHumanBoxConvexRadius;
          s.bodies.push_back(b);
          if (part.parent < 0) continue;
          ConeTwistSpec j;
          j.a = base + part.parent;
          j.b = int(s.bodies.size()) - 1;
          j.anchor_a = part.anchor_parent;
          j.anchor_b = part.anchor;
          j.twist_a = part.twist_parent;
          j.plane_a = part.plane_parent;
          j.twist_b = part.twist;
          j.plane_b = part.plane;
          j.normal_half_cone = part.normal_half_cone;
          j.plane_half_cone = part.plane_half_cone;
          j.twist_min = part.twist_min;
          j.twist_max = part.twist_max;
          j.friction_torque = part.friction_torque;
          j.motor = true;
          j.motor_frequency = kHumanMotorFrequency;
          j.motor_damping = kHumanMotorDamping;
          j.motor_torque = part.motor_torque;
          s.cone_twists.push_back(j);
        }
        for (const auto& [a, b] : kHumanNoCollision) s.no_collision.push_back({base + a, base + b});
      }
  s.steps = 500;
  return s;
}

/// The lowest point of body b's shape (y, m) with its centre at height y, turned by q: how far
/// above (or into) the floor it is.
inline double lowest_point(const BodySpec& b, double y, double qx, double qy, double qz,
                           double qw) {
  // The world y of the shape frame's axes: the second row of the rotation matrix.
  const double rx = 2 * (qx * qy + qw * qz), ry = 1 - 2 * (qx * qx + qz * qz),
               rz = 2 * (qy * qz - qw * qx);
  switch (b.kind) {
    case Kind::Box:
      return y - std::abs(rx) * b.hx - std::abs(ry) * b.hy - std::abs(rz) * b.hz;
    case Kind::Sphere:
      return y - b.radius;
    case Kind::Capsule:
      return y - std::abs(b.along_x ? rx : ry) * b.half_height - b.radius;
  }
  return y;
}

}  // namespace kinema::rigid_bench
