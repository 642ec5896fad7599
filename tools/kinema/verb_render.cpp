// tools/kinema/verb_render.cpp — `kinema render FILE [--clip NAME] [--time T | --frames A:B]
// [--size WxH] [--camera orbit|follow|front] [--skinning lbs|dqs] [--contact-sheet N]
// -o out.png | out_%04d.png | out.mp4`.
//
// Draws the asset with kinema_render (OpenGL 4.5 through EGL: a GPU when present, else Mesa's
// llvmpipe). One PNG holds one frame (--time, default 0) or a contact sheet; a pattern with
// %d writes one PNG per frame; .mp4 pipes raw RGBA frames to the ffmpeg program. Nothing is
// written until every frame is rendered (PNGs are encoded in memory first, the MP4 goes to a
// temporary file renamed at the end), so a failure leaves no partial output.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "kinema/core/error.h"
#include "kinema/io/asset_file.h"
#include "kinema/render/clip_render.h"

namespace kinema::cli {

namespace {

struct RenderArgs {
  std::string in, out, clip, frames, size = "640x480", camera = "follow", skinning = "lbs";
  std::optional<double> time;
  int contact_sheet = 0;
  int msaa = 4;
};

enum class OutKind { Png, Sequence, Mp4 };

bool parse_int(const std::string& s, int& v) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// "640x480" → (640, 480); throws UsageError.
void parse_size(const std::string& s, int& w, int& h) {
  const size_t x = s.find_first_of("xX");
  if (x == std::string::npos || !parse_int(s.substr(0, x), w) || !parse_int(s.substr(x + 1), h) ||
      w < 1 || h < 1 || w > 8192 || h > 8192)
    throw UsageError("--size " + s + ": expected WxH with 1…8192 pixels each, e.g. 640x480");
}

// A frame-number pattern: exactly one %d or %0Nd, and nothing else with a '%'.
bool valid_pattern(const std::string& s) {
  const size_t p = s.find('%');
  if (p == std::string::npos || s.find('%', p + 1) != std::string::npos) return false;
  size_t i = p + 1;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  return i < s.size() && s[i] == 'd' && i - p <= 3;
}

std::string frame_name(const std::string& pattern, int index) {
  std::vector<char> buf(pattern.size() + 32);
  std::snprintf(buf.data(), buf.size(), pattern.c_str(), index);
  return buf.data();
}

// Path of a program on PATH, or "".
std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::string dirs = path;
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int render(const RenderArgs& a, const GlobalOptions& global) {
  // ---- what the command line asks for, checked before reading anything ----
  const std::string ext = extension_of(a.out);
  OutKind kind = OutKind::Png;
  if (ext == "mp4")
    kind = OutKind::Mp4;
  else if (ext == "png")
    kind = a.out.find('%') != std::string::npos ? OutKind::Sequence : OutKind::Png;
  else
    throw UsageError("-o " + a.out +
                     ": write a .png (one frame or a contact sheet), a numbered sequence such as "
                     "out_%04d.png, or an .mp4");
  if (kind == OutKind::Sequence && !valid_pattern(a.out))
    throw UsageError("-o " + a.out +
                     ": a sequence needs exactly one %d or %0Nd, e.g. out_%04d.png");
  if (kind == OutKind::Png && a.out.find('%') != std::string::npos)
    throw UsageError("-o " + a.out + ": '%' is only for numbered sequences");
  std::error_code ec;
  if (kind != OutKind::Sequence && std::filesystem::is_directory(a.out, ec))
    throw UsageError("-o " + a.out + " is a folder; give a file name");
  if (a.contact_sheet > 0 && kind != OutKind::Png)
    throw UsageError("--contact-sheet writes one PNG; give -o sheet.png");
  if (a.contact_sheet > 0 && a.time)
    throw UsageError("--contact-sheet spreads frames over the clip (or --frames); drop --time");
  if (kind == OutKind::Png && a.contact_sheet == 0 && !a.frames.empty())
    throw UsageError(
        "a single PNG holds one frame: use --time T, --contact-sheet N, "
        "out_%04d.png or out.mp4 for --frames");
  if (kind != OutKind::Png && a.time)
    throw UsageError("--time renders one frame; use -o out.png, or --frames A:B for a sequence");
  if (a.time && !(std::isfinite(*a.time) && *a.time >= 0))
    throw UsageError("--time must be a finite number of seconds ≥ 0");
  int width = 0, height = 0;
  parse_size(a.size, width, height);
  if (a.contact_sheet > 0) {
    const int columns = int(std::ceil(std::sqrt(double(a.contact_sheet))));
    const int rows = (a.contact_sheet + columns - 1) / columns;
    if (long(columns) * width > 16384 || long(rows) * height > 16384)
      throw UsageError("--contact-sheet " + std::to_string(a.contact_sheet) + " at --size " +
                       a.size + " would exceed 16384 pixels a side; use a smaller --size");
  }
  int first = -1, last = -1;
  if (!a.frames.empty()) {
    const size_t colon = a.frames.find(':');
    if (colon == std::string::npos || !parse_int(a.frames.substr(0, colon), first) ||
        !parse_int(a.frames.substr(colon + 1), last) || first < 0 || last < first)
      throw UsageError("--frames " + a.frames + ": expected A:B with 0 ≤ A ≤ B, e.g. 0:120");
  }
  std::string ffmpeg;
  if (kind == OutKind::Mp4) {
    if ((width % 2) != 0 || (height % 2) != 0)
      throw UsageError("--size " + a.size + ": MP4 (yuv420p) needs an even width and height");
    ffmpeg = find_program("ffmpeg");
    if (ffmpeg.empty())
      throw Error(a.out, "",
                  "writing .mp4 needs the ffmpeg program, which is not on PATH (install ffmpeg, "
                  "or write PNG frames with -o out_%04d.png)");
  }

  // ---- the asset and the frames ----
  const Asset asset = load_input(a.in, global.load);
  const int clip = !a.clip.empty() ? find_clip(asset, a.clip, a.in) : asset.clips.empty() ? -1 : 0;
  const double duration = clip >= 0 ? asset.clips[size_t(clip)].duration : 0.0;
  double rate = clip >= 0 ? frame_rate_of(asset.clips[size_t(clip)]) : 0.0;
  if (!(rate > 0)) rate = 30;
  const int last_frame = int(std::llround(duration * rate));
  if (last > last_frame)
    throw UsageError("--frames " + a.frames +
                     ": the clip has frames 0:" + std::to_string(last_frame) + " (" +
                     format_number(duration) + " s at " + format_number(rate) + " fps)");
  if (first < 0) {
    first = 0;
    last = last_frame;
  }
  if (a.time && *a.time > duration + 1e-9)
    throw UsageError("--time " + format_number(*a.time) + ": the clip lasts " +
                     format_number(duration) + " s");
  std::vector<double> times;
  if (kind == OutKind::Png && a.contact_sheet == 0) {
    times.push_back(a.time.value_or(0.0));
  } else if (a.contact_sheet > 0) {
    for (int i = 0; i < a.contact_sheet; ++i) {
      const double f =
          a.contact_sheet == 1 ? first : first + (last - first) * double(i) / (a.contact_sheet - 1);
      times.push_back(std::min(duration, f / rate));
    }
  } else {
    for (int f = first; f <= last; ++f) times.push_back(std::min(duration, f / rate));
  }

  ClipRenderOptions options;
  options.target.width = width;
  options.target.height = height;
  options.target.samples = a.msaa;
  options.camera = a.camera == "orbit"   ? CameraMode::Orbit
                   : a.camera == "front" ? CameraMode::Front
                                         : CameraMode::Follow;
  options.skinning = a.skinning == "dqs" ? SkinningMethod::Dqs : SkinningMethod::Lbs;
  ClipRenderer renderer(asset, clip, options, a.in);
  if (!a.frames.empty() || a.contact_sheet > 0)
    renderer.set_time_range(times.front(), times.back());

  const double start = now();
  Progress progress("render", long(times.size()), global.progress_enabled() && times.size() > 1);
  std::vector<std::string> pngs;
  std::vector<Image> tiles;
  std::string partial;
  FILE* pipe = nullptr;
  auto discard_partial = [&] {
    if (pipe) ::pclose(pipe);
    pipe = nullptr;
    if (!partial.empty()) std::filesystem::remove(partial, ec);
  };
  if (kind == OutKind::Mp4) {
    const std::filesystem::path out(a.out);
    partial = (out.parent_path() /
               ("." + out.filename().string() + ".partial-" + std::to_string(::getpid()) + ".mp4"))
                  .string();
    const std::string cmd = quote(ffmpeg) +
                            " -nostdin -y -loglevel error -f rawvideo -pix_fmt rgba -s " +
                            std::to_string(width) + "x" + std::to_string(height) + " -r " +
                            format_number(rate, 6) + " -i - -pix_fmt yuv420p " + quote(partial);
    pipe = ::popen(cmd.c_str(), "w");
    if (!pipe) throw Error(a.out, "ffmpeg", "cannot start " + ffmpeg);
  }
  try {
    for (size_t i = 0; i < times.size(); ++i) {
      Image image = renderer.frame(times[i]);
      if (kind == OutKind::Mp4) {
        if (std::fwrite(image.rgba.data(), 1, image.rgba.size(), pipe) != image.rgba.size())
          throw Error(a.out, "ffmpeg", "ffmpeg stopped reading frames (see its message above)");
      } else if (a.contact_sheet > 0) {
        tiles.push_back(std::move(image));
      } else {
        pngs.push_back(encode_png(image));
      }
      progress.update(long(i + 1));
    }
    progress.done();
    if (kind == OutKind::Mp4) {
      const int status = ::pclose(pipe);
      pipe = nullptr;
      if (status != 0)
        throw Error(a.out, "ffmpeg",
                    "ffmpeg failed (exit status " +
                        std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) + ")");
      std::filesystem::rename(partial, a.out);
      partial.clear();
    }
  } catch (...) {
    discard_partial();
    throw;
  }
  if (a.contact_sheet > 0) pngs.push_back(encode_png(contact_sheet(tiles)));

  // ---- write ----
  if (kind == OutKind::Sequence)
    for (size_t i = 0; i < pngs.size(); ++i)
      write_file_atomically(frame_name(a.out, a.frames.empty() ? int(i) : first + int(i)), pngs[i]);
  else if (kind == OutKind::Png)
    write_file_atomically(a.out, pngs.front());
  const double seconds = now() - start;
  if (!global.quiet)
    std::cout << "rendered " << times.size() << (times.size() == 1 ? " frame " : " frames ")
              << width << "x" << height << " in " << format_number(seconds, 2) << " s ("
              << format_number(double(times.size()) / std::max(seconds, 1e-9), 1) << " fps) on "
              << renderer.renderer().gl_renderer() << " → " << a.out << "\n";
  return kExitOk;
}

}  // namespace

VerbRun register_render(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RenderArgs>();
  CLI::App* sub = app.add_subcommand(
      "render",
      "Draw a character (skinned meshes, or capsules for a bare skeleton) on a ground grid: one "
      "PNG, a contact sheet, numbered PNGs or an MP4 (needs ffmpeg). OpenGL 4.5 through EGL: a "
      "GPU when present, else Mesa's llvmpipe");
  sub->add_option("FILE", args->in, "The file to draw (.bvh .gltf .glb .vrm .fbx .dae)")
      ->required();
  sub->add_option("-o,--out", args->out,
                  "out.png (one frame, or a contact sheet), out_%04d.png (one per frame) or "
                  "out.mp4")
      ->required();
  sub->add_option("--clip", args->clip, "The clip, by name or index (default: the first)");
  auto* time = sub->add_option("--time", args->time,
                               "The time of a single frame, seconds "
                               "(default 0)");
  auto* frames = sub->add_option("--frames", args->frames,
                                 "Frames A:B (inclusive, at the clip's rate; default: all)");
  time->excludes(frames);
  sub->add_option("--size", args->size, "Image (or tile) size WxH (default 640x480)");
  sub->add_option("--camera", args->camera,
                  "orbit (circles the character), follow (3/4 view following it; default) or "
                  "front (fixed, framing the whole clip)")
      ->check(CLI::IsMember({"orbit", "follow", "front"}));
  sub->add_option("--skinning", args->skinning, "lbs (default) or dqs")
      ->check(CLI::IsMember({"lbs", "dqs"}));
  sub->add_option("--contact-sheet", args->contact_sheet,
                  "Tile N frames spread over the clip (or --frames) into one PNG")
      ->check(CLI::Range(1, 256));
  sub->add_option("--msaa", args->msaa, "Multisample anti-aliasing samples (1: off; default 4)")
      ->check(CLI::Range(1, 16));
  return [args, &global]() { return render(*args, global); };
}

}  // namespace kinema::cli
