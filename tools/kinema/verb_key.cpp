// tools/kinema/verb_key.cpp — `kinema key PLATE -o OUT.png|.exr [--background BG]
// [--screen green|blue|R,G,B] [--linear] [--garbage MATTE] [--alpha MATTE_OUT.png|.exr]
// [--no-subtract] [--no-spill] [--json]`.
//
// Parses the options and runs pipeline::run_key (kinema/pipeline/key.h, docs/composite.md): the
// colour-difference keyer on a green- or blue-screen plate, the foreground written with its alpha
// or put over a new background. Prints the plate's size and how much of it keyed out.
//
// Exit codes: 1 for a command line that makes no sense (an output not .png/.exr, or one that would
// overwrite an input); 2 for a bad image (file and reason named), a screen colour without a key
// channel, sizes that differ, or a write failure.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "kinema/pipeline/key.h"

namespace kinema::cli {

namespace {

struct KeyArgs {
  pipeline::KeyRequest request;
  std::string screen = "green";
  bool no_subtract = false, no_spill = false, json = false;
};

/// The screen colour from a name or linear R,G,B.
void set_screen(const std::string& text, composite::KeyerOptions& keyer) {
  if (text == "green") {
    std::copy_n(composite::kGreenScreen, 3, keyer.screen);
    return;
  }
  if (text == "blue") {
    std::copy_n(composite::kBlueScreen, 3, keyer.screen);
    return;
  }
  std::vector<float> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    try {
      std::size_t used = 0;
      const std::string part = text.substr(start, comma - start);
      values.push_back(std::stof(part, &used));
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw CLI::ValidationError("--screen", "expected green, blue or linear R,G,B: " + text);
    }
    start = comma + 1;
  }
  if (values.size() != 3)
    throw CLI::ValidationError("--screen", "expected green, blue or linear R,G,B: " + text);
  for (int i = 0; i < 3; ++i) keyer.screen[i] = values[std::size_t(i)];
}

int run_key(KeyArgs& a, const GlobalOptions& global) {
  pipeline::KeyRequest& r = a.request;
  set_screen(a.screen, r.keyer);
  r.keyer.subtract_screen = !a.no_subtract;
  r.keyer.suppress_spill = !a.no_spill;
  const pipeline::KeyReport report = pipeline::run_key(r);
  if (a.json) {
    nlohmann::ordered_json j;
    j["out"] = report.written;
    j["width"] = report.width;
    j["height"] = report.height;
    j["mean_alpha"] = report.mean_alpha;
    j["transparent_fraction"] = report.transparent_fraction;
    j["opaque_fraction"] = report.opaque_fraction;
    j["ms"] = 1e3 * report.seconds;
    std::cout << j.dump(2) << '\n';
  } else if (!global.quiet) {
    std::cout << "kinema key: " << r.plate << ", " << report.width << "×" << report.height << ": "
              << format_number(100 * report.transparent_fraction) << " % keyed out, "
              << format_number(100 * report.opaque_fraction) << " % opaque, mean α "
              << format_number(report.mean_alpha) << " (" << format_number(1e3 * report.seconds)
              << " ms)\n";
    for (const std::string& path : report.written) std::cout << "  " << path << '\n';
  }
  return kExitOk;
}

}  // namespace

VerbRun register_key(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<KeyArgs>();
  pipeline::KeyRequest& r = args->request;
  CLI::App* key = app.add_subcommand(
      "key",
      "Key a green- or blue-screen plate (colour difference, screen subtraction, spill "
      "suppression) and write the foreground with its alpha, or over a new background");
  key->add_option("plate", r.plate, "The plate (.png in sRGB, or .exr)")->required();
  key->add_option("-o,--out", r.out, "The image to write (.png or .exr)")->required();
  key->add_option("--background", r.background,
                  "Put the foreground over this image (.png or .exr, the plate's size)");
  key->add_option("--screen", args->screen,
                  "The screen: green (0.1,0.8,0.15), blue (0.1,0.2,0.9) or its linear R,G,B")
      ->capture_default_str();
  key->add_flag("--linear", r.linear,
                "The PNGs read and written hold linear values (no sRGB decode or encode)");
  key->add_option("--garbage", r.garbage,
                  "A garbage matte (.png or .exr, the plate's size): keep only what its alpha (or "
                  "grey) covers");
  key->add_option("--alpha,--matte", r.matte_out,
                  "Also write the matte (.png as grey, or .exr as channel Y)");
  key->add_flag("--no-subtract", args->no_subtract,
                "Keep the plate's colour times α instead of subtracting the screen");
  key->add_flag("--no-spill", args->no_spill, "Leave the screen's spill on the subject");
  key->add_flag("--json", args->json, "Print the summary as one JSON object");
  return [args, &global]() { return run_key(*args, global); };
}

}  // namespace kinema::cli
