// What the L-system sources share (module-private): which symbols the turtle draws and turns by.
#pragma once

#include <cmath>

#include "kinema/procedural/lsystem.h"

namespace kinema {

/// F and f: the symbols that move the turtle, and whose length a production hands on.
inline bool is_move(char c) { return c == 'F' || c == 'f'; }

/// The turns that take an angle: + − & ^ \ / (and |, 180° by default).
inline bool is_turn(char c) {
  return c == '+' || c == '-' || c == '&' || c == '^' || c == '\\' || c == '/';
}

/// A move's final length: its value, else the system's step.
inline double final_length_of(const LModule& m, double step) {
  return std::isnan(m.value) ? step : m.value;
}

}  // namespace kinema
