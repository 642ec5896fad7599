// Writing a job's result clip by OUT's extension (src/pipeline/motion_out.h).
#include "motion_out.h"

#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/bvh.h"
#include "kinema/io/fbx.h"
#include "kinema/io/gltf.h"
#include "kinema/io/vrma.h"

namespace kinema::pipeline {

void write_motion(const Asset& written, const std::string& out, double rate) {
  const std::string ext = extension_of(out);
  const Clip& clip = written.clips[0];
  if (ext == "vrma") {
    if (!written.humanoid) throw Error(out, "humanoid", "a .vrma needs the avatar's humanoid map");
    VrmaWriteOptions options;
    options.expressions = vrma_expressions(written, clip);
    write_vrma(written.skeleton, *written.humanoid, clip, out, options);
  } else if (ext == "bvh") {
    BvhWriteOptions options;
    options.clip = 0;
    options.frame_rate = rate;
    write_bvh(written, out, options);
  } else if (ext == "fbx") {
    FbxWriteOptions options;
    options.clips = {0};
    write_fbx(written, out, options);
  } else {
    GltfWriteOptions options;
    options.binary = ext != "gltf";
    options.vrm = ext == "vrm";
    options.clips = {0};
    write_gltf(written, out, options);
  }
}

}  // namespace kinema::pipeline
