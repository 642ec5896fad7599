"""What Python costs on top of C++ when sampling one pose (BENCHMARKS.md, "Python bindings").

    PYTHONPATH=build/release/python python3 bench/python/python_overhead.py [--reps 9]

The clip is the demo's pab walk (data/demo/pab_walk.glb, 1.33 s, 20 Hz resampled at 30). Each
repetition times, interleaved and in one process: C++ alone (kinema._kinema._time_cpp_sampling,
the same SoA samples with the per-instance cache, no Python), Python per call
(RuntimeClip.sample, one call a pose: argument parsing, SoA → AoS float32 arrays, three new
NumPy arrays) and Python batched (RuntimeClip.sample_many, 256 poses a call, writing into arrays
passed as `out=` and reused: no allocation, as a game loop or a data loader would). Prints
the median and the spread of each, in nanoseconds a pose. Run on a quiet core: taskset -c 1.
"""

import argparse
import os
import statistics
import time

import numpy as np

import kinema
from kinema import _kinema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--clip", default=os.path.join(ROOT, "data", "demo", "pab_walk.glb"))
    args = parser.parse_args()
    asset = kinema.load(args.clip)
    clip = kinema.RuntimeClip(asset.clips[0], asset.skeleton)
    # Forward playback at 60 Hz, looping: what a game does with one instance.
    times = (np.arange(4096) / 60.0) % clip.duration
    rows = {"C++ (no Python)": [], "Python, one call a pose": [], "Python, sample_many": []}
    block = 256
    out = (np.empty((block, clip.joint_count, 3), np.float32),
           np.empty((block, clip.joint_count, 4), np.float32),
           np.empty((block, clip.joint_count, 3), np.float32))
    for _ in range(args.reps):
        cpp = min(_kinema._time_cpp_sampling(clip, times) for _ in range(3))
        rows["C++ (no Python)"].append(cpp / len(times) * 1e9)
        start = time.perf_counter()
        for t in times[:1024]:
            clip.sample(float(t))
        rows["Python, one call a pose"].append((time.perf_counter() - start) / 1024 * 1e9)
        start = time.perf_counter()
        for first in range(0, len(times), block):
            clip.sample_many(times[first:first + block], out=out)
        rows["Python, sample_many"].append((time.perf_counter() - start) / len(times) * 1e9)
    print(f"{clip.joint_count} joints, {len(times)} poses a repetition, {args.reps} repetitions")
    base = statistics.median(rows["C++ (no Python)"])
    for name, values in rows.items():
        med = statistics.median(values)
        print(f"{name:<26} {med:9.1f} ns a pose (min {min(values):.1f}, max {max(values):.1f})"
              f"  {med / base:6.2f}x C++")


if __name__ == "__main__":
    main()
