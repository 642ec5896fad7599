// fuzz/fuzz_obj.cpp — OBJ grounds: the text (parse_obj_triangles), then the ground built from
// it, as load_obj_ground does with a file's text.
#include "fuzz_common.h"
#include "kinema/io/terrain.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kinema::fuzz::refuse_or_read([&] {
    const kinema::ObjTriangles t =
        kinema::parse_obj_triangles(kinema::fuzz::bytes_of(data, size), "fuzz.obj");
    const kinema::TriangleMeshGround ground(t.vertices, t.indices);
  });
}
