// OpenEXR files (kinema/composite/exr_file.h). OpenEXR's headers stay in this file.
#include "kinema/composite/exr_file.h"

#include <Imath/half.h>
#include <OpenEXR/ImfChannelList.h>
#include <OpenEXR/ImfCheckFile.h>
#include <OpenEXR/ImfFrameBuffer.h>
#include <OpenEXR/ImfHeader.h>
#include <OpenEXR/ImfIO.h>
#include <OpenEXR/ImfInputFile.h>
#include <OpenEXR/ImfOutputFile.h>
#include <OpenEXR/ImfStandardAttributes.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <set>
#include <sstream>

#include "kinema/core/error.h"
#include "kinema/core/file.h"

namespace kinema::composite {

namespace {

constexpr std::int64_t kMaxSide = 16384;
constexpr std::int64_t kMaxPixels = std::int64_t(1) << 28;

/// OpenEXR reads through this from a buffer kinema already holds (and has checked).
class MemoryInput final : public Imf::IStream {
 public:
  MemoryInput(std::string_view bytes, const std::string& name)
      : Imf::IStream(name.c_str()), bytes_(bytes) {}
  bool read(char c[], int n) override {
    if (n < 0 || position_ > bytes_.size() || std::size_t(n) > bytes_.size() - position_)
      throw std::runtime_error("the file ends early (truncated)");
    std::memcpy(c, bytes_.data() + position_, std::size_t(n));
    position_ += std::size_t(n);
    return position_ < bytes_.size();
  }
  std::uint64_t tellg() override { return position_; }
  void seekg(std::uint64_t position) override { position_ = position; }

 private:
  std::string_view bytes_;
  std::uint64_t position_ = 0;
};

/// OpenEXR writes into this; the bytes go to disk in one atomic step afterwards.
class MemoryOutput final : public Imf::OStream {
 public:
  MemoryOutput() : Imf::OStream("memory") {}
  void write(const char c[], int n) override {
    if (position_ + std::uint64_t(n) > bytes_.size()) bytes_.resize(position_ + std::size_t(n));
    std::memcpy(bytes_.data() + position_, c, std::size_t(n));
    position_ += std::uint64_t(n);
  }
  std::uint64_t tellp() override { return position_; }
  void seekp(std::uint64_t position) override { position_ = position; }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
  std::uint64_t position_ = 0;
};

/// The header after the signature and OpenEXR's checker have passed the whole file.
void check_bytes(std::string_view bytes, const std::string& name) {
  if (bytes.empty()) throw Error(name, "", "is empty, not an EXR image");
  static constexpr unsigned char kMagic[4] = {0x76, 0x2f, 0x31, 0x01};
  if (bytes.size() < 4 || std::memcmp(bytes.data(), kMagic, 4) != 0)
    throw Error(name, "byte 0", "not an OpenEXR image (no EXR magic number)");
  if (bytes.size() < 8) throw Error(name, "byte 4", "truncated EXR: no version field");
  // The checker reads every chunk with OpenEXR's own guards against hostile sizes and offsets;
  // reduceMemory / reduceTime make it refuse the files that would make kinema allocate or loop
  // without bound.
  if (Imf::checkOpenEXRFile(bytes.data(), bytes.size(), true, true, true))
    throw Error(name, "EXR data",
                "the file is damaged or truncated (OpenEXR's checker rejects it)");
}

struct Window {
  int x0 = 0, y0 = 0, width = 0, height = 0;
};

Window checked_window(const Imath::Box2i& box, const std::string& name, const char* which) {
  const std::int64_t w = std::int64_t(box.max.x) - box.min.x + 1;
  const std::int64_t h = std::int64_t(box.max.y) - box.min.y + 1;
  if (w <= 0 || h <= 0 || w > kMaxSide || h > kMaxSide || w * h > kMaxPixels)
    throw Error(name, std::string("EXR header, ") + which,
                "window is " + std::to_string(w) + "×" + std::to_string(h) +
                    " pixels; at most 16,384 a side and 268,435,456 in all are accepted");
  return {box.min.x, box.min.y, int(w), int(h)};
}

std::string describe_color_space(const Imf::Header& header) {
  if (!Imf::hasChromaticities(header)) return "linear Rec.709";
  const Imf::Chromaticities c = Imf::chromaticities(header), rec709;
  auto near = [](const Imath::V2f& a, const Imath::V2f& b) { return (a - b).length() < 1e-3f; };
  if (near(c.red, rec709.red) && near(c.green, rec709.green) && near(c.blue, rec709.blue) &&
      near(c.white, rec709.white))
    return "linear Rec.709";
  std::ostringstream out;
  out << "linear, primaries R(" << c.red.x << ", " << c.red.y << ") G(" << c.green.x << ", "
      << c.green.y << ") B(" << c.blue.x << ", " << c.blue.y << ") white(" << c.white.x << ", "
      << c.white.y << ")";
  return out.str();
}

/// Runs `body` with OpenEXR's exceptions turned into kinema::Error naming the file.
template <class Body>
auto guarded(const std::string& name, const char* place, Body&& body) {
  try {
    return body();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(name, place, e.what());
  }
}

/// An open, checked file with its display and data windows.
struct OpenFile {
  std::unique_ptr<MemoryInput> stream;
  std::unique_ptr<Imf::InputFile> file;
  Window display, data;
};

OpenFile open_exr(std::string_view bytes, const std::string& name) {
  check_bytes(bytes, name);
  OpenFile f;
  f.stream = std::make_unique<MemoryInput>(bytes, name);
  guarded(name, "EXR header", [&] {
    f.file = std::make_unique<Imf::InputFile>(*f.stream, 1);
    return 0;
  });
  const Imf::Header& header = f.file->header();
  f.display = checked_window(header.displayWindow(), name, "display");
  f.data = checked_window(header.dataWindow(), name, "data");
  for (auto c = header.channels().begin(); c != header.channels().end(); ++c)
    if (c.channel().xSampling != 1 || c.channel().ySampling != 1)
      throw Error(name, std::string("channel ") + c.name(),
                  "subsampled channels (chroma-subsampled YC images) are not supported");
  return f;
}

/// Reads the listed channels (present ones) into float planes of the data window's size.
std::vector<std::vector<float>> read_planes(OpenFile& f, const std::string& name,
                                            const std::vector<std::string>& channels,
                                            const std::vector<float>& fills) {
  const std::size_t count = std::size_t(f.data.width) * std::size_t(f.data.height);
  std::vector<std::vector<float>> planes(channels.size(), std::vector<float>(count));
  Imf::FrameBuffer frame;
  const Imath::Box2i window = f.file->header().dataWindow();
  for (std::size_t i = 0; i < channels.size(); ++i)
    frame.insert(channels[i],
                 Imf::Slice::Make(Imf::FLOAT, planes[i].data(), window, sizeof(float),
                                  sizeof(float) * std::size_t(f.data.width), 1, 1, fills[i]));
  guarded(name, "EXR data", [&] {
    f.file->setFrameBuffer(frame);
    f.file->readPixels(window.min.y, window.max.y);
    return 0;
  });
  return planes;
}

bool has_channel(const OpenFile& f, const char* channel) {
  return f.file->header().channels().findChannel(channel) != nullptr;
}

Imf::Compression imf_compression(ExrCompression c) {
  switch (c) {
    case ExrCompression::none:
      return Imf::NO_COMPRESSION;
    case ExrCompression::piz:
      return Imf::PIZ_COMPRESSION;
    case ExrCompression::zip:
      break;
  }
  return Imf::ZIP_COMPRESSION;
}

}  // namespace

ExrInfo decode_exr_info(std::string_view bytes, const std::string& name) {
  OpenFile f = open_exr(bytes, name);
  ExrInfo info;
  info.width = f.display.width, info.height = f.display.height;
  const Imf::Header& header = f.file->header();
  for (auto c = header.channels().begin(); c != header.channels().end(); ++c) {
    info.channels.push_back(c.name());
    if (c.channel().type == Imf::FLOAT) info.any_float32 = true;
  }
  info.color_space = describe_color_space(header);
  return info;
}

Image decode_exr(std::string_view bytes, const std::string& name) {
  OpenFile f = open_exr(bytes, name);
  const bool rgb = has_channel(f, "R"), grey = !rgb && has_channel(f, "Y");
  if (!rgb && !grey)
    throw Error(name, "EXR channels", "no R or Y channel: not a colour or grey image");
  const std::vector<std::string> names =
      grey ? std::vector<std::string>{"Y", "A"} : std::vector<std::string>{"R", "G", "B", "A"};
  std::vector<float> fills(names.size(), 0.0f);
  fills.back() = 1.0f;  // a file without alpha is opaque
  const auto planes = read_planes(f, name, names, fills);
  Image image(f.display.width, f.display.height);
  for (int y = 0; y < f.data.height; ++y) {
    const int iy = f.data.y0 + y - f.display.y0;
    if (iy < 0 || iy >= image.height) continue;
    for (int x = 0; x < f.data.width; ++x) {
      const int ix = f.data.x0 + x - f.display.x0;
      if (ix < 0 || ix >= image.width) continue;
      const std::size_t i = std::size_t(y) * std::size_t(f.data.width) + std::size_t(x);
      const float r = planes[0][i], g = grey ? r : planes[1][i], b = grey ? r : planes[2][i];
      image.at(ix, iy) = {r, g, b, planes.back()[i]};
    }
  }
  return image;
}

Image read_exr(const std::string& path) { return decode_exr(read_file(path), path); }

Matte decode_exr_matte(std::string_view bytes, const std::string& name,
                       const std::string& channel) {
  OpenFile f = open_exr(bytes, name);
  std::string chosen = channel;
  if (chosen.empty()) {
    for (const char* c : {"A", "Y", "R"})
      if (has_channel(f, c)) {
        chosen = c;
        break;
      }
    if (chosen.empty())
      throw Error(name, "EXR channels", "no A, Y or R channel to read a matte from");
  } else if (!has_channel(f, chosen.c_str())) {
    throw Error(name, "EXR channels", "no channel named '" + chosen + "'");
  }
  const auto planes = read_planes(f, name, {chosen}, {0.0f});
  Matte matte(f.display.width, f.display.height);
  for (int y = 0; y < f.data.height; ++y)
    for (int x = 0; x < f.data.width; ++x) {
      const int ix = f.data.x0 + x - f.display.x0, iy = f.data.y0 + y - f.display.y0;
      if (ix >= 0 && iy >= 0 && ix < matte.width && iy < matte.height)
        matte.at(ix, iy) = planes[0][std::size_t(y) * std::size_t(f.data.width) + std::size_t(x)];
    }
  return matte;
}

Matte read_exr_matte(const std::string& path, const std::string& channel) {
  return decode_exr_matte(read_file(path), path, channel);
}

std::vector<ExrChannel> decode_exr_channels(std::string_view bytes, const std::string& name,
                                            int* width, int* height) {
  OpenFile f = open_exr(bytes, name);
  if (f.data.x0 != f.display.x0 || f.data.y0 != f.display.y0 || f.data.width != f.display.width ||
      f.data.height != f.display.height)
    throw Error(name, "EXR header",
                "passes are read only where the data window is the display window");
  std::vector<std::string> names;
  std::vector<ExrChannel> channels;
  const Imf::Header& header = f.file->header();
  for (auto c = header.channels().begin(); c != header.channels().end(); ++c) {
    names.push_back(c.name());
    ExrChannel channel;
    channel.name = c.name();
    channel.pixel_type =
        c.channel().type == Imf::FLOAT ? ExrPixelType::float32 : ExrPixelType::half;
    channels.push_back(std::move(channel));
  }
  auto planes = read_planes(f, name, names, std::vector<float>(names.size(), 0.0f));
  for (std::size_t i = 0; i < channels.size(); ++i) channels[i].values = std::move(planes[i]);
  if (width) *width = f.display.width;
  if (height) *height = f.display.height;
  return channels;
}

std::string encode_exr_channels(int width, int height, const std::vector<ExrChannel>& channels,
                                ExrCompression compression) {
  if (width <= 0 || height <= 0 || width > kMaxSide || height > kMaxSide)
    throw Error({}, "EXR", "the image is empty or larger than 16,384 pixels a side");
  if (channels.empty()) throw Error({}, "EXR", "no channels to write");
  const std::size_t count = std::size_t(width) * std::size_t(height);
  std::set<std::string> seen;
  for (const ExrChannel& c : channels) {
    if (c.name.empty()) throw Error({}, "EXR", "a channel has no name");
    if (!seen.insert(c.name).second) throw Error({}, "EXR", "channel '" + c.name + "' repeats");
    if (c.values.size() != count)
      throw Error({}, "EXR channel " + c.name,
                  std::to_string(c.values.size()) + " values for a " + std::to_string(width) + "×" +
                      std::to_string(height) + " image");
  }
  MemoryOutput stream;
  guarded({}, "EXR", [&] {
    Imf::Header header(width, height);
    header.compression() = imf_compression(compression);
    Imf::addChromaticities(header, Imf::Chromaticities());  // Rec. 709 primaries, D65: linear sRGB
    Imf::FrameBuffer frame;
    // OpenEXR writes a channel only from a buffer of its own type: half channels get a copy.
    std::vector<std::vector<Imath::half>> halves;
    halves.reserve(channels.size());
    for (const ExrChannel& c : channels) {
      if (c.pixel_type == ExrPixelType::float32) {
        header.channels().insert(c.name, Imf::Channel(Imf::FLOAT));
        frame.insert(
            c.name,
            Imf::Slice(Imf::FLOAT, reinterpret_cast<char*>(const_cast<float*>(c.values.data())),
                       sizeof(float), sizeof(float) * std::size_t(width)));
      } else {
        auto& half = halves.emplace_back(c.values.begin(), c.values.end());
        header.channels().insert(c.name, Imf::Channel(Imf::HALF));
        frame.insert(
            c.name, Imf::Slice(Imf::HALF, reinterpret_cast<char*>(half.data()), sizeof(Imath::half),
                               sizeof(Imath::half) * std::size_t(width)));
      }
    }
    Imf::OutputFile file(stream, header, 1);
    file.setFrameBuffer(frame);
    file.writePixels(height);
    return 0;
  });  // the file's destructor has written the offset table
  return stream.take();
}

std::string encode_exr(const Image& image, const ExrWriteOptions& options) {
  if (image.width <= 0 || image.height <= 0) throw Error({}, "EXR", "the image is empty");
  std::vector<ExrChannel> channels(4);
  const char* names[4] = {"R", "G", "B", "A"};
  for (int c = 0; c < 4; ++c) {
    channels[std::size_t(c)].name = names[c];
    channels[std::size_t(c)].pixel_type = options.pixel_type;
    channels[std::size_t(c)].values.resize(image.pixels.size());
  }
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    const Rgba& p = image.pixels[i];
    channels[0].values[i] = p.r, channels[1].values[i] = p.g;
    channels[2].values[i] = p.b, channels[3].values[i] = p.a;
  }
  return encode_exr_channels(image.width, image.height, channels, options.compression);
}

void write_exr(const std::string& path, const Image& image, const ExrWriteOptions& options) {
  std::string bytes;
  try {
    bytes = encode_exr(image, options);
  } catch (const Error& e) {
    throw Error(path, e.place(), e.reason());
  }
  write_file_atomically(path, bytes);
}

void write_exr_channels(const std::string& path, int width, int height,
                        const std::vector<ExrChannel>& channels, ExrCompression compression) {
  std::string bytes;
  try {
    bytes = encode_exr_channels(width, height, channels, compression);
  } catch (const Error& e) {
    throw Error(path, e.place(), e.reason());
  }
  write_file_atomically(path, bytes);
}

}  // namespace kinema::composite
