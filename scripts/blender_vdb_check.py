"""Check an OpenVDB file (kinema's write_vdb output) with Blender's own volume import.

Run (Blender 3.4; Debian's `blender` package):
  blender -b --factory-startup --python-exit-code 3 --python scripts/blender_vdb_check.py -- \
      FILE.vdb [--json OUT.json] [--no-mesh]

Blender imports FILE as a Volume object (bpy.ops.object.volume_import, falling back to a Volume
datablock with its filepath set), loads the grid list and every grid, and reports as JSON (printed
on one line that starts with "VDB_CHECK " and, with --json, written to OUT.json):
  - grids[]: name, data_type (FLOAT, VECTOR_FLOAT, ...), channels, whether the grid tree loaded,
    matrix_object (Blender's voxel-index -> object transform, 4x4 row-major) and the voxel size and
    index-(0,0,0) position read off it;
  - object_bounds: the evaluated Volume object's bounding box in metres (object = world space here:
    the object is left at the origin, unrotated, unscaled);
  - per grid, unless --no-mesh, what Blender's Volume to Mesh modifier (resolution GRID) makes of
    the voxels: at threshold 1e-6 (threshold 0 gives no surface in Blender 3.4) the surface around
    the voxels above it (its bounds approximate their extent, give or take the interpolation to the
    zero voxels around them), and the largest threshold that still gives a surface (found by bisection: an estimate of the grid's largest value, to about 1e-4 relative).
    Blender's Python API exposes no voxel values or grid dimensions directly; these modifier
    results are how Blender's own reading of the values shows.
Blender does not convert axes on import: a file in kinema's +Y-up frame shows +Y up in Blender's
+Z-up world (rotate the object +90 degrees about X there).

Exit status: 0 the file and all its grids loaded, 1 Blender failed to load it, 2 usage error.
"""
import json
import os
import sys
import traceback

import bpy
from mathutils import Vector


def usage(msg):
    print("blender_vdb_check: " + msg, file=sys.stderr)
    print(__doc__, file=sys.stderr)
    sys.stdout.flush()
    os._exit(2)


def parse_args():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    path, out, mesh = None, None, True
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--json":
            if i + 1 >= len(argv):
                usage("--json needs a file name")
            out = argv[i + 1]
            i += 2
            continue
        if a == "--no-mesh":
            mesh = False
        elif a.startswith("--"):
            usage("unknown option " + a)
        elif path is None:
            path = a
        else:
            usage("more than one input file")
        i += 1
    if path is None:
        usage("no input file")
    return os.path.abspath(path), out, mesh


def bounds_of(points):
    pts = [tuple(p) for p in points]
    if not pts:
        return None
    return {"min": [min(p[a] for p in pts) for a in range(3)],
            "max": [max(p[a] for p in pts) for a in range(3)]}


def import_volume(path, report):
    """The imported Volume object: the operator first, a plain datablock if it fails."""
    before = set(bpy.data.objects)
    try:
        res = bpy.ops.object.volume_import(
            filepath=path, directory=os.path.dirname(path),
            files=[{"name": os.path.basename(path)}], use_sequence_detection=False,
            align="WORLD", location=(0.0, 0.0, 0.0))
        report["importer"] = "bpy.ops.object.volume_import -> " + ",".join(sorted(res))
    except Exception as e:  # noqa: BLE001 - any failure falls back to the datablock route
        report["importer"] = "bpy.ops.object.volume_import failed: %s" % e
    new = [o for o in bpy.data.objects if o not in before and o.type == "VOLUME"]
    if new:
        return new[0]
    vol = bpy.data.volumes.new(os.path.basename(path))
    vol.filepath = path
    obj = bpy.data.objects.new(vol.name, vol)
    bpy.context.scene.collection.objects.link(obj)
    report["importer"] += "; fell back to bpy.data.volumes.new + filepath"
    return obj


def surface(vol_obj, grid_name, threshold):
    """(vertex count, world bounds) of Blender's Volume to Mesh result at `threshold`."""
    mesh = bpy.data.meshes.new("probe")
    probe = bpy.data.objects.new("probe", mesh)
    bpy.context.scene.collection.objects.link(probe)
    try:
        mod = probe.modifiers.new("v2m", "VOLUME_TO_MESH")
        mod.object = vol_obj
        mod.grid_name = grid_name
        mod.resolution_mode = "GRID"
        mod.threshold = threshold
        mod.adaptivity = 0.0
        dg = bpy.context.evaluated_depsgraph_get()
        dg.update()
        ev = probe.evaluated_get(dg)
        m = ev.to_mesh()
        n = len(m.vertices)
        b = bounds_of(ev.matrix_world @ v.co for v in m.vertices) if n else None
        ev.to_mesh_clear()
        return n, b
    finally:
        bpy.data.objects.remove(probe)
        bpy.data.meshes.remove(mesh)


TINY = 1e-6


def largest_value(vol_obj, grid_name):
    """The largest threshold that still gives a surface: about the grid's maximum value."""
    if surface(vol_obj, grid_name, TINY)[0] == 0:
        return None
    lo, hi = TINY, 1.0
    while surface(vol_obj, grid_name, hi)[0] > 0:
        lo, hi = hi, hi * 2
        if hi > 1e9:
            return None
    while hi - lo > 1e-4 * max(hi, 1e-6):
        mid = 0.5 * (lo + hi)
        if surface(vol_obj, grid_name, mid)[0] > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def main():
    path, out, mesh = parse_args()
    report = {"file": path, "blender_version": bpy.app.version_string, "ok": False}
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if not os.path.isfile(path):
        report["error"] = "no such file"
        return report, 1
    obj = import_volume(path, report)
    vol = obj.data
    report["object"] = obj.name
    report["grid_list_loaded"] = bool(vol.grids.load())
    report["error_message"] = vol.grids.error_message
    grids = []
    all_loaded = report["grid_list_loaded"]
    for g in vol.grids:
        loaded = bool(g.load())
        all_loaded = all_loaded and loaded
        m = g.matrix_object
        entry = {
            "name": g.name, "data_type": g.data_type, "channels": g.channels,
            "loaded": loaded,
            "matrix_object": [[m[r][c] for c in range(4)] for r in range(4)],
            "voxel_size": [m.col[a].to_3d().length for a in range(3)],
            "index_origin": list(m.col[3].to_3d()),
        }
        grids.append(entry)
    report["grids"] = grids
    report["grid_count"] = len(grids)
    dg = bpy.context.evaluated_depsgraph_get()
    dg.update()
    ev = obj.evaluated_get(dg)
    report["object_bounds"] = bounds_of(ev.matrix_world @ Vector(c) for c in ev.bound_box)
    if mesh:
        for entry in grids:
            if entry["data_type"] != "FLOAT":
                continue
            n, b = surface(obj, entry["name"], TINY)
            entry["surface_above_1e-6"] = {"vertices": n, "bounds": b}
            entry["max_value_estimate"] = largest_value(obj, entry["name"])
    report["ok"] = bool(all_loaded and grids and not vol.grids.error_message)
    return report, 0 if report["ok"] else 1


if __name__ == "__main__":
    status = 1
    try:
        rep, status = main()
    except Exception:  # noqa: BLE001 - report any failure as JSON, exit 1
        rep = {"ok": False, "error": traceback.format_exc()}
    text = json.dumps(rep, indent=None)
    print("VDB_CHECK " + text)
    out_path = None
    if "--json" in sys.argv:
        k = sys.argv.index("--json")
        out_path = sys.argv[k + 1] if k + 1 < len(sys.argv) else None
    if out_path:
        with open(out_path, "w") as f:
            json.dump(rep, f, indent=2)
    sys.stdout.flush()
    os._exit(status)
