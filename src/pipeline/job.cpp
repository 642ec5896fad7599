// Output-file checks and path comparison shared by the pipeline jobs (kinema/pipeline/job.h).
#include "kinema/pipeline/job.h"

#include <filesystem>

#include "kinema/core/error.h"
#include "kinema/core/file.h"

namespace kinema::pipeline {

namespace fs = std::filesystem;

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool eq = fs::equivalent(a, b, ec);
    if (!ec) return eq;
  }
  const fs::path pa = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path pb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return pa.lexically_normal() == pb.lexically_normal();
}

void check_output_file(const std::string& out, std::span<const NamedInput> inputs,
                       std::span<const std::string_view> extensions, std::string_view job) {
  std::string listed;
  for (std::string_view e : extensions) (listed += listed.empty() ? "." : " .") += e;
  if (out.empty())
    throw UsageError(std::string(job) + " needs an output file" +
                     (listed.empty() ? std::string() : " (" + listed + ")"));
  std::error_code ec;
  if (fs::is_directory(out, ec))
    throw UsageError(
        "OUT " + out + " is a folder; give a file name such as " +
        (fs::path(out) / ("out." + std::string(extensions.empty() ? "glb" : extensions[0])))
            .string());
  for (const NamedInput& in : inputs)
    if (!in.path.empty() && same_file(in.path, out))
      throw UsageError("OUT is the same file as " + in.role + " (" + out +
                       "); kinema never overwrites its input — choose another OUT");
  if (extensions.empty()) return;
  const std::string ext = extension_of(out);
  for (std::string_view e : extensions)
    if (ext == e) return;
  throw UsageError("cannot write '." + ext + "' files (" + std::string(job) + " writes " + listed +
                   ")");
}

}  // namespace kinema::pipeline
