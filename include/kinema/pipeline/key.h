// kinema/pipeline/key.h — `kinema key` as a library call: a green- or blue-screen plate keyed
// (kinema/composite/keyer.h) and written as the foreground with its alpha, or put over a new
// background; optionally the matte alone as a grey PNG.
//
// The plate and background are PNGs in sRGB (decoded to linear light for the work, encoded back
// on the way out); a garbage matte is a PNG whose alpha (or grey, without alpha) marks what to
// keep. Outputs are written atomically; nothing is written when anything fails.
#pragma once

#include <string>
#include <vector>

#include "kinema/composite/keyer.h"
#include "kinema/pipeline/job.h"

namespace kinema::pipeline {

struct KeyRequest {
  std::string plate;  ///< PNG, the shot
  std::string
      out;  ///< PNG: the keyed foreground (RGBA), or the composite when a background is given
  std::string background;  ///< PNG of the plate's size; empty: none
  std::string garbage;     ///< PNG matte of the plate's size (keeps what it covers); empty: none
  std::string matte_out;   ///< PNG: the matte as grey; empty: not written
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

/// Throws kinema::UsageError for outputs that are not .png or overwrite an input, kinema::Error
/// for bad files (named, with the place and reason), bad keyer options or sizes that differ.
KeyReport run_key(const KeyRequest& request);

}  // namespace kinema::pipeline
