// The rigid-body scenes kinema_rigid_bench runs with kinema and with Bullet (bench/peers/): the
// same bodies, sizes, masses, friction, step and iteration count for every engine, described once
// here and built by each engine from these descriptions.
#pragma once

#include <cmath>
#include <vector>

namespace kinema::rigid_bench {

constexpr double kStep = 1.0 / 60;  ///< s
constexpr int kIterations = 10;     ///< solver iterations a step, both engines
constexpr double kFriction = 0.5;   ///< both engines' default
constexpr double kGravity = 9.81;   ///< m/s², along −y

enum class Kind { Box, Sphere, Capsule };

/// One body. Mass 0: static. Capsules lie along x (the chain) or y (poured ones) as `along_x` says.
struct BodySpec {
  Kind kind = Kind::Box;
  double x = 0, y = 0, z = 0;          ///< centre (m)
  double hx = 0, hy = 0, hz = 0;       ///< box half extents (m)
  double radius = 0, half_height = 0;  ///< sphere, capsule (m)
  bool along_x = false;
  double mass = 0;                ///< kg
  double vx = 0, vy = 0, vz = 0;  ///< initial velocity (m/s)
};

/// A ball joint between bodies a and b at (x, y, z); a may be static.
struct BallSpec {
  int a = 0, b = 0;
  double x = 0, y = 0, z = 0;
};

struct Scene {
  std::vector<BodySpec> bodies;
  std::vector<BallSpec> joints;
  int steps = 0;  ///< how many steps one benchmark iteration runs
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

}  // namespace kinema::rigid_bench
