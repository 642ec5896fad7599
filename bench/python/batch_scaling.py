"""kinema batch: 200 clips compressed on a LocalCluster of 2 workers vs a sequential loop.

    PYTHONPATH=build/release/python python3 bench/python/batch_scaling.py [--clips 200] [--reps 3]

Makes a library of `--clips` BVH files in a temporary folder (copies of the CMU test clips in
tests/data, each its own file), then, interleaved, compresses all of it with --sequential (one
process) and on a LocalCluster of 2 single-threaded workers, each run from an empty output
folder. Prints wall seconds per run, items a second, and the speed-up (BENCHMARKS.md, "Batch
runs"). Needs 2 idle cores for a fair figure.
"""

import argparse
import os
import shutil
import statistics
import tempfile
import time

from kinema import batch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = [os.path.join(ROOT, "tests", "data", "bvh", "cmu_cgspeed_mb", "02_01.bvh"),
           os.path.join(ROOT, "tests", "data", "bvh", "cmu_iclone_cc3", "006_11_turn_30fps.bvh"),
           os.path.join(ROOT, "tests", "data", "bvh", "cmu_iclone_cc3", "007_12.bvh")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clips", type=int, default=200)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="kinema-batch-bench-")
    try:
        os.makedirs(os.path.join(folder, "clips"))
        for i in range(args.clips):
            shutil.copy(SOURCES[i % len(SOURCES)], os.path.join(folder, "clips", f"c{i:04}.bvh"))
        manifest_path = os.path.join(folder, "manifest.json")
        with open(manifest_path, "w") as f:
            f.write('{"verb": "compress", "inputs": ["clips/*.bvh"], "out_dir": "out"}')
        seconds = {"sequential": [], "cluster": []}
        startup = []
        for _ in range(args.reps):
            for mode in ("sequential", "cluster"):
                shutil.rmtree(os.path.join(folder, "out"), ignore_errors=True)
                manifest = batch.read_manifest(manifest_path)
                timings = {}
                start = time.perf_counter()
                for item in manifest.items:
                    item.key = batch.item_key(item)
                if mode == "sequential":
                    results = batch.run_sequential(manifest.items, lambda r: None)
                else:
                    results = batch.run_on_cluster(manifest.items, lambda r: None,
                                                   workers=args.workers, timings=timings)
                    startup.append(timings["startup"])
                seconds[mode].append(time.perf_counter() - start)
                assert all(r["status"] == "done" for r in results), results
        seq, clu = statistics.median(seconds["sequential"]), statistics.median(seconds["cluster"])
        print(f"{args.clips} clips, {args.reps} repetitions (medians; cluster start-up included)")
        print(f"sequential        {seq:7.2f} s  {args.clips / seq:6.1f} clips/s  {seconds['sequential']}")
        print(f"LocalCluster x{args.workers}   {clu:7.2f} s  {args.clips / clu:6.1f} clips/s  {seconds['cluster']}")
        up = statistics.median(startup)
        print(f"speed-up {seq / clu:.2f}x; the cluster's start-up {up:.2f} s (median), "
              f"without it {seq / (clu - up):.2f}x")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
