# Blender's Mantaflow smoke, timed: the reference scene of kinema's grid-smoke comparison
# (bench/mantaflow_scene.cpp runs the same scene with kinema's GridFluid; scripts/bench_vs_mantaflow.sh
# runs the two side by side).
#
#   blender -b --factory-startup -t THREADS --python scripts/mantaflow_smoke.py -- \
#       --res 64 --frames 50 --cache DIR [--radius 0.25] [--format OPENVDB|UNI|RAW]
#
# The scene is built from nothing (every object of the start-up file is deleted):
#   - the domain: a 2 m cube centred at the origin, gas, resolution_max = --res, Blender's defaults
#     otherwise: adaptive time steps (CFL 4, 1 to 4 steps a frame), time scale 1, buoyancy
#     alpha = beta = 1, vorticity 0, no border collisions (every side open), gravity (0, 0, -9.81);
#     noise and dissolve off; cache type ALL (with noise, mesh and particles off it bakes the
#     simulation data only) into DIR, Blender's default data format (OpenVDB, Blosc, half floats)
#     unless --format says otherwise;
#   - the flow: a UV sphere of radius --radius (m) at (0, 0, -0.65), smoke, behaviour INFLOW, from
#     its mesh, Blender's defaults otherwise (density 1, temperature 1, no initial velocity,
#     emission from the surface out to 1.5 cells, none from the volume);
#   - 24 fps, frames 1 to --frames.
# It bakes and prints one line of JSON (prefix "MANTAFLOW_RESULT "): the wall seconds of each frame
# (from a frame-change handler: frame f's time ends when Blender moves on to frame f + 1; the last
# frame ends at the next frame change or when the bake returns), their total, the whole bake's wall time, and the settings
# Blender actually used (read back from the domain and flow after the bake).
# Exit status: 0 on success, 1 when the bake failed or produced no frames, 2 on bad arguments.
import argparse
import json
import os
import sys
import time

import bpy


class MantaProbe:
    """Counts Mantaflow's adaptive steps and times its steps and cache writes, by wrapping the
    step and save functions Blender defines in Mantaflow's Python module (one dict, found once by
    a scan of the garbage collector's objects; each new solver instance, $ID$, adds its own
    functions to it and is wrapped when first seen). Bookkeeping only: the wrappers call the
    originals unchanged."""

    def __init__(self):
        self.g = None
        self.wrapped = set()
        self.entries = {}  # frame -> perf_counter at the handler's entry
        self.frame = 0
        self.steps = {}  # frame -> adaptive steps
        self.step_s = {}  # frame -> seconds in Mantaflow's smoke steps
        self.save_s = {}  # frame -> seconds writing the cache
        self.dt = {}  # frame -> Mantaflow time steps (its units; a frame is frameLength)
        self.frame_length = None

    def frame_start(self, frame, t):
        self.entries.setdefault(frame, t)
        self.frame = frame

    def _find(self):
        import gc
        for o in gc.get_objects():
            if isinstance(o, dict) and "mantaMsg" in o and any(
                    k.startswith("smoke_adaptive_step_") for k in o):
                return o
        return None

    def hook(self):
        if self.g is None:
            self.g = self._find()
            if self.g is None:
                return
        g = self.g
        for name in [k for k in g if k.startswith(("smoke_adaptive_step_", "smoke_save_data_"))]:
            if name in self.wrapped or getattr(g[name], "kinema_probe", False):
                continue
            self.wrapped.add(name)
            orig = g[name]
            sid = name.rsplit("_", 1)[1]
            if name.startswith("smoke_adaptive_step_"):
                def wrapper(*args, _orig=orig, _sid=sid):
                    t = time.perf_counter()
                    r = _orig(*args)
                    f = self.frame
                    self.step_s[f] = self.step_s.get(f, 0.0) + time.perf_counter() - t
                    self.steps[f] = self.steps.get(f, 0) + 1
                    solver = g.get("s" + _sid)
                    if solver is not None:
                        self.dt.setdefault(f, []).append(solver.timestep)
                        self.frame_length = solver.frameLength
                    return r
            else:
                def wrapper(*args, _orig=orig):
                    t = time.perf_counter()
                    r = _orig(*args)
                    f = self.frame
                    self.save_s[f] = self.save_s.get(f, 0.0) + time.perf_counter() - t
                    return r
            wrapper.kinema_probe = True
            g[name] = wrapper


def parse_args():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    p = argparse.ArgumentParser(prog="mantaflow_smoke.py")
    p.add_argument("--res", type=int, default=64, help="domain resolution_max (cells on the longest side)")
    p.add_argument("--frames", type=int, default=50, help="frames to bake (from frame 1)")
    p.add_argument("--cache", required=True, help="cache directory (emptied first)")
    p.add_argument("--radius", type=float, default=0.25, help="flow sphere radius, m")
    p.add_argument("--format", default="OPENVDB", choices=["OPENVDB", "UNI", "RAW"],
                   help="cache data file format (Blender's default: OPENVDB)")
    try:
        a = p.parse_args(argv)
    except SystemExit:
        os._exit(2)
    if a.res < 6 or a.res > 1024 or a.frames < 1 or not (a.radius > 0):
        print("mantaflow_smoke.py: --res must be 6..1024, --frames >= 1, --radius > 0", file=sys.stderr)
        os._exit(2)
    return a


def build_scene(a):
    scene = bpy.context.scene
    for ob in list(bpy.data.objects):
        bpy.data.objects.remove(ob, do_unlink=True)
    scene.render.fps = 24
    scene.render.fps_base = 1.0
    scene.frame_start = 1
    scene.frame_end = a.frames

    # The flow first: a domain evaluated before its smoke flow exists fails to allocate the heat
    # grid when the flow appears (Blender 3.4.1: "'NoneType' object has no attribute
    # 'getDataPointer'").
    bpy.ops.mesh.primitive_uv_sphere_add(radius=a.radius, location=(0.0, 0.0, -0.65))
    sphere = bpy.context.active_object
    sphere.name = "SmokeInflow"
    mod = sphere.modifiers.new("Fluid", 'FLUID')
    mod.fluid_type = 'FLOW'
    fs = mod.flow_settings
    fs.flow_type = 'SMOKE'
    fs.flow_behavior = 'INFLOW'
    fs.flow_source = 'MESH'
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=(0.0, 0.0, 0.0))
    domain = bpy.context.active_object
    domain.name = "SmokeDomain"
    mod = domain.modifiers.new("Fluid", 'FLUID')
    mod.fluid_type = 'DOMAIN'
    ds = mod.domain_settings
    ds.domain_type = 'GAS'
    ds.resolution_max = a.res
    ds.use_adaptive_timesteps = True  # Blender's default: CFL 4, 1 to 4 steps a frame
    ds.use_noise = False
    ds.use_dissolve_smoke = False
    ds.use_adaptive_domain = False
    ds.cache_type = 'ALL'
    ds.cache_data_format = a.format
    ds.cache_directory = os.path.abspath(a.cache)
    ds.cache_frame_start = 1
    ds.cache_frame_end = a.frames

    return scene, domain, sphere


def settings(scene, domain, sphere):
    ds = domain.modifiers["Fluid"].domain_settings
    fs = sphere.modifiers["Fluid"].flow_settings
    borders = {s: bool(getattr(ds, "use_collision_border_" + s))
               for s in ("front", "back", "right", "left", "top", "bottom")}
    verts = [sphere.matrix_world @ v.co for v in sphere.data.vertices]
    centre = sphere.matrix_world.translation
    return {
        "blender": bpy.app.version_string,
        "threads": bpy.context.scene.render.threads if scene.render.threads_mode == 'FIXED'
        else os.cpu_count(),
        "fps": scene.render.fps / scene.render.fps_base,
        "domain_size_m": list(domain.dimensions),
        "domain_centre_m": list(domain.matrix_world.translation),
        "resolution_max": ds.resolution_max,
        "cell_size_m": max(domain.dimensions) / ds.resolution_max,
        "domain_type": ds.domain_type,
        "use_adaptive_timesteps": ds.use_adaptive_timesteps,
        "cfl_condition": ds.cfl_condition,
        "timesteps_min": ds.timesteps_min,
        "timesteps_max": ds.timesteps_max,
        "time_scale": ds.time_scale,
        "buoyancy_alpha": ds.alpha,
        "buoyancy_beta": ds.beta,
        "vorticity": ds.vorticity,
        "gravity": list(scene.gravity) if scene.use_gravity else list(ds.gravity),
        "collision_borders": borders,
        "use_noise": ds.use_noise,
        "use_dissolve_smoke": ds.use_dissolve_smoke,
        "cache_type": ds.cache_type,
        "cache_data_format": ds.cache_data_format,
        "openvdb_compression": ds.openvdb_cache_compress_type,
        "openvdb_data_depth": ds.openvdb_data_depth,
        "flow_type": fs.flow_type,
        "flow_behavior": fs.flow_behavior,
        "flow_source": fs.flow_source,
        "flow_density": fs.density,
        "flow_temperature": fs.temperature,
        "flow_use_initial_velocity": fs.use_initial_velocity,
        "flow_surface_distance_cells": fs.surface_distance,
        "flow_volume_density": fs.volume_density,
        "flow_subframes": fs.subframes,
        "sphere_centre_m": list(centre),
        "sphere_radius_m": max((v - centre).length for v in verts),
    }


def main():
    a = parse_args()
    os.makedirs(a.cache, exist_ok=True)
    scene, domain, sphere = build_scene(a)

    # Frame f is simulated when Blender steps onto frame f: a frame-change handler marks each
    # frame's start (its own bookkeeping falls between two frames, outside both).
    probe = MantaProbe()
    marks = {}

    def on_frame(sc, *_):
        entry = time.perf_counter()
        if len(marks) == a.frames:  # every frame baked: Blender restores its frame, the end
            probe.frame_start(a.frames + 1, entry)
        if 1 <= sc.frame_current <= a.frames and sc.frame_current not in marks:
            probe.frame_start(sc.frame_current, entry)
        probe.hook()
        if 1 <= sc.frame_current <= a.frames and sc.frame_current not in marks:
            marks[sc.frame_current] = time.perf_counter()

    bpy.app.handlers.frame_change_pre.append(on_frame)
    bpy.context.view_layer.objects.active = domain
    domain.select_set(True)
    start = time.perf_counter()
    with bpy.context.temp_override(object=domain, active_object=domain):
        result = bpy.ops.fluid.bake_all()
    end = time.perf_counter()
    bpy.app.handlers.frame_change_pre.remove(on_frame)
    probe.frame_start(a.frames + 1, end)

    frames = sorted(marks)
    per_frame = []
    for n, f in enumerate(frames):
        stop = probe.entries.get(f + 1, end)
        per_frame.append(round(stop - marks[f], 6))
    data_dir = os.path.join(a.cache, "data")
    files = sorted(os.listdir(data_dir)) if os.path.isdir(data_dir) else []
    out = {
        "tool": "mantaflow",
        "res": a.res,
        "frames": a.frames,
        "frames_timed": len(per_frame),
        "bake_result": sorted(result),
        "bake_wall_s": round(end - start, 6),
        "total_s": round(sum(per_frame), 6),
        "s_per_frame": round(sum(per_frame) / len(per_frame), 6) if per_frame else None,
        "frame_s": per_frame,
        # Per frame, from the wrapped Mantaflow functions (null where a frame ran before the
        # bake's solver was hooked: the bake creates a new solver while evaluating frame 1).
        "substeps": [probe.steps.get(f) for f in frames],
        "step_s": [round(probe.step_s[f], 6) if f in probe.step_s else None for f in frames],
        "save_s": [round(probe.save_s[f], 6) if f in probe.save_s else None for f in frames],
        "frame_length_manta": probe.frame_length,
        "cache_files": len(files),
        "settings": settings(scene, domain, sphere),
    }
    print("MANTAFLOW_RESULT " + json.dumps(out), flush=True)
    ok = "FINISHED" in result and len(per_frame) == a.frames
    os._exit(0 if ok else 1)


main()
