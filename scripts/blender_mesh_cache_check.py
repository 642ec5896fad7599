# Checks a kinema point cache with Blender's own Mesh Cache modifier: imports MESH.obj (axes kept
# as written), adds a Mesh Cache modifier reading CACHE.pc2, and compares the evaluated vertices
# with the cache's own numbers at the given frames. Prints one JSON line; exit 0 when every vertex
# is within TOLERANCE metres, 1 otherwise.
#
#   blender -b --factory-startup --python scripts/blender_mesh_cache_check.py -- \
#       MESH.obj CACHE.pc2 [--frames 0,10,60] [--tolerance 1e-6]
import json
import struct
import sys

import bpy

args = sys.argv[sys.argv.index("--") + 1:]
mesh_path, cache_path = args[0], args[1]
frames, tolerance = [0, 1], 1e-6
if "--frames" in args:
    frames = [int(f) for f in args[args.index("--frames") + 1].split(",")]
if "--tolerance" in args:
    tolerance = float(args[args.index("--tolerance") + 1])

with open(cache_path, "rb") as f:
    data = f.read()
points, start, rate, samples = struct.unpack_from("<iffi", data, 16)
cache = struct.unpack_from("<%df" % (samples * points * 3), data, 32)

bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.wm.obj_import(filepath=mesh_path, forward_axis="Y", up_axis="Z")
obj = bpy.context.selected_objects[0]
modifier = obj.modifiers.new("cache", "MESH_CACHE")
modifier.cache_format = "PC2"
modifier.filepath = cache_path
modifier.forward_axis = "POS_Y"
modifier.up_axis = "POS_Z"
scene = bpy.context.scene
worst = 0.0
checked = []
for frame in frames:
    scene.frame_set(frame)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    verts = evaluated.data.vertices
    if len(verts) != points:
        print(json.dumps({"ok": False, "reason": "%d vertices, the cache has %d points" % (len(verts), points)}))
        sys.exit(1)
    base = frame * points * 3
    for i, v in enumerate(verts):
        for k in range(3):
            worst = max(worst, abs(v.co[k] - cache[base + 3 * i + k]))
    checked.append(frame)
ok = worst <= tolerance
print(json.dumps({"ok": ok, "points": points, "samples": samples, "frames": checked, "max_difference_m": worst}))
sys.exit(0 if ok else 1)
