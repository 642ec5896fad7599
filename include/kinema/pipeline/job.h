// kinema/pipeline/job.h — what the pipeline jobs share: progress reporting and the checks on the
// files a job is asked to write.
//
// A pipeline job is what one `kinema` verb does, as one library call: it reads its inputs, runs
// the modules below, writes its outputs atomically and returns a report of plain data for the
// caller to print. Jobs never print. Requests that make no sense (an output that would overwrite
// an input, a format that cannot be written) throw kinema::UsageError before anything is read;
// bad data throws kinema::Error (file, place, reason).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace kinema::pipeline {

/// Progress of a long job: `stage` says what is being done ("loading clips"), `done` of `total`
/// units of it are done; a stage is over when done == total. May be empty.
using Progress = std::function<void(const std::string& stage, long done, long total)>;

/// Calls `progress` when it is set.
inline void report(const Progress& progress, const std::string& stage, long done, long total) {
  if (progress) progress(stage, done, total);
}

/// True when two paths name the same file (after resolving links, or lexically when either does
/// not exist yet).
bool same_file(const std::string& a, const std::string& b);

/// A file a job reads, with the name the caller gives it in messages ("IN", "the graph file").
struct NamedInput {
  std::string role;
  std::string path;
};

/// Refuses an output file that a job cannot or must not write, before anything is read. Throws
/// kinema::UsageError when `out` is empty, a folder, one of `inputs` (kinema never overwrites an
/// input), or — with `extensions` (lower case, no dot) not empty — has another extension; `job`
/// names the job in that message ("play writes .glb .gltf .vrm .bvh").
void check_output_file(const std::string& out, std::span<const NamedInput> inputs,
                       std::span<const std::string_view> extensions, std::string_view job);

}  // namespace kinema::pipeline
