// kinema/pipeline/key.h — `kinema key` as a library call: a green- or blue-screen plate keyed
// (kinema/composite/keyer.h) and written as the foreground with its alpha, or put over a new
// background; optionally the matte alone as a grey PNG.
//
// The plate and background are PNGs in sRGB (decoded to linear light for the work, encoded back
// on the way out; `linear`: the PNGs hold linear values, no sRGB curve either way) or EXRs
// (linear, premultiplied as stored). A garbage matte is a PNG whose alpha (or grey, without
// alpha) or an EXR whose A (or Y) marks what to keep. Outputs are .png or .exr by their
// extension, written atomically; nothing is written when anything fails.
#pragma once

#include <string>
#include <vector>

#include "kinema/composite/keyer.h"
#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

struct KeyRequest {
  std::string plate;  ///< PNG or EXR, the shot
  /// PNG or EXR: the keyed foreground (RGBA), or the composite when a background is given.
  std::string out;
  std::string background;  ///< PNG or EXR of the plate's size; empty: none
  std::string garbage;     ///< matte of the plate's size (keeps what it covers); empty: none
  std::string matte_out;   ///< PNG (grey) or EXR (Y): the matte; empty: not written
  bool linear = false;     ///< PNGs in and out hold linear values (no sRGB curve)
  composite::KeyerOptions keyer;
};

struct KeyReport {
  int width = 0, height = 0;
  double mean_alpha = 0;            ///< over the plate
  double transparent_fraction = 0;  ///< pixels keyed to α = 0
  double opaque_fraction = 0;       ///< pixels keyed to α = 1
  double seconds = 0;               ///< keying and compositing, without the file I/O
  std::vector<std::string> written;
};

/// Throws kinema::UsageError for outputs that are not .png/.exr or overwrite an input,
/// kinema::Error for bad files (named, with the place and reason), bad keyer options or sizes that
/// differ.
KeyReport run_key(const KeyRequest& request);

}  // namespace kinema::pipeline
