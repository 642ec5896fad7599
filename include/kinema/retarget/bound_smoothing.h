// kinema/retarget/bound_smoothing.h — smoothing a per-frame value found by a search without
// breaking the bound it stands for.
//
// A searched value comes out in steps. Blurring it plainly would exceed an upper bound (how much
// two hands may be coupled and still stay out of the body) or fall below a lower bound (how far
// they must part). So each side is smoothed one way only:
//  - ease (upper bounds): erode (running minimum over ±radius) → blur (box filter over ±radius,
//    twice) → min with the input. Never above the input, and smooth where the input allows.
//  - hold (lower bounds): dilate (running maximum) → blur → max with the input. Never below it.
// Frames are samples; the ends are clamped (the first and last values repeat). radius ≤ 0
// returns the input.
#pragma once

#include <span>
#include <vector>

namespace kinema {

/// One-sided smoothing of an upper bound: result[i] ≤ upper[i] for every i.
std::vector<double> ease_upper_bound(std::span<const double> upper, int radius_frames);

/// One-sided smoothing of a lower bound: result[i] ≥ lower[i] for every i.
std::vector<double> hold_lower_bound(std::span<const double> lower, int radius_frames);

}  // namespace kinema
