// The cloth scenes kinema_cloth_bench runs with kinema and with the peers (bench/peers/): the same
// sizes, masses, pins, wind and sphere for every engine.
#pragma once

namespace kinema::cloth_bench {

constexpr int kResolution = 64;     ///< vertices along each side
constexpr double kSize = 1.0;       ///< m, each side
constexpr double kMass = 0.15;      ///< kg, the whole cloth (0.15 kg/m²)
constexpr double kStep = 1.0 / 60;  ///< s
constexpr double kWind = 3.0;       ///< m/s along +z (the flag)
constexpr int kSettleSteps = 60;    ///< steps before the timing starts
// The sphere scene: a horizontal cloth at y = kDropHeight over a sphere under its centre.
constexpr double kDropHeight = 0.7, kSphereRadius = 0.4;

}  // namespace kinema::cloth_bench
