"""Batch runs of one kinema verb over many inputs, on a Dask distributed cluster.

    python3 -m kinema.batch MANIFEST.json [--scheduler tcp://HOST:8786] [--workers N]
    kinema batch MANIFEST.json ...            (the CLI runs this module)

A manifest (JSON; paths relative to the manifest's folder):

    {
      "verb": "compress",                      # compress | retarget | clean | convert | decompress
      "inputs": ["clips/*.bvh", "extra/run.glb"],   # files or glob patterns
      "out_dir": "compressed",
      "options": {"max_error": 0.0001}         # the verb's keyword options (below)
    }

Each input is one item, run by a worker process: compress → OUT_DIR/<stem>.kmc; retarget
(options: onto, and format: vrma|vrm|glb|gltf|bvh|fbx, default glb) → OUT_DIR/<stem>.<format>;
clean (options: character, format) likewise; convert (options: format, clip, onto, fps);
decompress (options: format glb|gltf|bvh). Paths in options are relative to the manifest too.

Resumable: an item's key is the SHA-256 of the verb, its options and the bytes of every file it
reads. When an item finishes, OUT_DIR/.kinema-batch/<key>.json records its outputs and their
hashes; an item whose record and outputs still match is skipped (a rerun, or Dask recomputing a
task whose worker died after it finished). A failed item is reported and the batch goes on.
Exit code: 0 when every item is done, 2 when the manifest is unusable or an item failed.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

VERBS = ("compress", "retarget", "clean", "convert", "decompress")
STATE_DIR = ".kinema-batch"


class ManifestError(Exception):
    """The manifest cannot be used: names the file, the place (a JSON key) and the reason."""

    def __init__(self, file: str, place: str, reason: str):
        super().__init__(f"{file}: {place}: {reason}" if place else f"{file}: {reason}")
        self.file, self.place, self.reason = file, place, reason


@dataclass
class Item:
    """One input of the batch and what running it needs (picklable: sent to the workers)."""

    verb: str
    input: str
    output: str
    options: Dict[str, Any]
    reads: List[str]  # every file the item reads (the input and option files)
    state_dir: str
    key: str = ""


@dataclass
class Manifest:
    path: str
    verb: str
    out_dir: str
    items: List[Item] = field(default_factory=list)
    scheduler: Optional[str] = None
    workers: int = 2


# ---- the manifest -----------------------------------------------------------------------------

_OUTPUT_FORMATS = {
    "compress": ("kmc",),
    "retarget": ("glb", "gltf", "vrm", "vrma", "bvh", "fbx"),
    "clean": ("glb", "gltf", "vrm", "vrma", "bvh", "fbx"),
    "convert": ("glb", "gltf", "vrm", "vrma", "bvh", "fbx"),
    "decompress": ("glb", "gltf", "bvh"),
}
_FILE_OPTIONS = {"onto", "character", "map", "onto_map", "visibility"}
_VERB_OPTIONS = {
    "compress": {"max_error", "vertex_distance"},
    "retarget": {"onto", "clip", "map", "onto_map", "ground", "format"},
    "clean": {"character", "clip", "visibility", "format"},
    "convert": {"clip", "onto", "fps", "format"},
    "decompress": {"clip", "format"},
}
_REQUIRED_OPTIONS = {"retarget": {"onto"}, "clean": {"character"}}


def read_manifest(path: str) -> Manifest:
    """Reads and checks a manifest; raises ManifestError naming the key at fault."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as e:
        raise ManifestError(path, "", f"cannot read it ({e.strerror})") from None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        place = f"line {e.lineno}, column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
        raise ManifestError(path, place, f"not JSON ({getattr(e, 'msg', e)})") from None
    if not isinstance(data, dict):
        raise ManifestError(path, "", "expected a JSON object")
    known = {"verb", "inputs", "out_dir", "options", "scheduler", "workers"}
    for key in data:
        if key not in known:
            raise ManifestError(path, f"/{key}", f"unknown key (expected one of {sorted(known)})")
    base = os.path.dirname(os.path.abspath(path))

    verb = data.get("verb")
    if verb not in VERBS:
        raise ManifestError(path, "/verb", f"expected one of {list(VERBS)}, got {verb!r}")
    out_dir = data.get("out_dir")
    if not isinstance(out_dir, str) or not out_dir:
        raise ManifestError(path, "/out_dir", "expected a folder name")
    out_dir = os.path.join(base, out_dir)
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise ManifestError(path, "/options", "expected an object")
    for key in options:
        if key not in _VERB_OPTIONS[verb]:
            raise ManifestError(path, f"/options/{key}",
                                f"not an option of {verb} (expected {sorted(_VERB_OPTIONS[verb])})")
    for key in _REQUIRED_OPTIONS.get(verb, ()):
        if key not in options:
            raise ManifestError(path, f"/options/{key}", f"{verb} needs it")
    options = dict(options)
    fmt = options.pop("format", _OUTPUT_FORMATS[verb][0])
    if fmt not in _OUTPUT_FORMATS[verb]:
        raise ManifestError(path, "/options/format",
                            f"{verb} writes {list(_OUTPUT_FORMATS[verb])}, not {fmt!r}")
    option_files = []
    for key in sorted(_FILE_OPTIONS & options.keys()):
        if not isinstance(options[key], str):
            raise ManifestError(path, f"/options/{key}", "expected a file name")
        options[key] = os.path.join(base, options[key])
        if not os.path.isfile(options[key]):
            raise ManifestError(path, f"/options/{key}", f"no such file: {options[key]}")
        option_files.append(options[key])

    patterns = data.get("inputs")
    if not isinstance(patterns, list) or not patterns:
        raise ManifestError(path, "/inputs", "expected a non-empty list of files or patterns")
    inputs: List[str] = []
    for i, pattern in enumerate(patterns):
        if not isinstance(pattern, str):
            raise ManifestError(path, f"/inputs/{i}", "expected a file name or a glob pattern")
        matches = sorted(glob.glob(os.path.join(base, pattern), recursive=True))
        # Never the batch's own outputs (a pattern like "**/*.bvh" would take them on a rerun).
        matches = [m for m in matches if os.path.isfile(m)
                   and os.path.commonpath([os.path.abspath(m), out_dir]) != out_dir]
        if not matches:
            raise ManifestError(path, f"/inputs/{i}", f"matches no file: {pattern}")
        inputs.extend(m for m in matches if m not in inputs)

    stems: Dict[str, str] = {}
    manifest = Manifest(path=path, verb=verb, out_dir=out_dir)
    for source in inputs:
        stem = os.path.splitext(os.path.basename(source))[0]
        if stem in stems:
            raise ManifestError(path, "/inputs",
                                f"{source} and {stems[stem]} would both write {stem}.{fmt}")
        stems[stem] = source
        item = Item(verb=verb, input=source, output=os.path.join(out_dir, f"{stem}.{fmt}"),
                    options=options, reads=[source] + option_files,
                    state_dir=os.path.join(out_dir, STATE_DIR))
        manifest.items.append(item)

    scheduler = data.get("scheduler")
    if scheduler is not None and not isinstance(scheduler, str):
        raise ManifestError(path, "/scheduler", "expected an address such as tcp://host:8786")
    manifest.scheduler = scheduler
    workers = data.get("workers", 2)
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ManifestError(path, "/workers", "expected a whole number ≥ 1")
    manifest.workers = workers
    return manifest


# ---- one item (runs on a worker) --------------------------------------------------------------

def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def item_key(item: Item) -> str:
    """SHA-256 of the verb, the options and the bytes of every file the item reads."""
    digest = hashlib.sha256()
    digest.update(json.dumps([item.verb, item.options, os.path.basename(item.output)],
                             sort_keys=True).encode())
    for path in item.reads:
        digest.update(file_sha256(path).encode())
    return digest.hexdigest()


def _state_path(item: Item) -> str:
    return os.path.join(item.state_dir, item.key + ".json")


def is_done(item: Item) -> bool:
    """True when the item's record exists and its outputs still have the recorded hashes."""
    try:
        with open(_state_path(item)) as f:
            state = json.load(f)
        return all(os.path.isfile(p) and file_sha256(p) == h for p, h in state["outputs"].items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _write_json_atomically(path: str, data: Any) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def _run_verb(item: Item) -> Dict[str, Any]:
    import kinema  # imported on the worker

    o = item.options
    os.makedirs(os.path.dirname(item.output), exist_ok=True)
    if item.verb == "compress":
        r = kinema.compress_files([item.input], os.path.dirname(item.output),
                                  max_error=o.get("max_error", 1e-4),
                                  vertex_distance=o.get("vertex_distance", 0.03))
        return {"ratio": r["ratio"], "max_error": r["max_error"], "bytes": r["file_bytes"]}
    if item.verb == "retarget":
        r = kinema.retarget(item.input, o["onto"], item.output, clip=o.get("clip", ""),
                            map=o.get("map", ""), onto_map=o.get("onto_map", ""),
                            ground=o.get("ground", True))
        after = r.get("after", r["before"])
        return {"frames": r["frames"], "skate_median_cm_s": after["skate_median_cm_s"]}
    if item.verb == "clean":
        r = kinema.clean(item.input, o["character"], item.output, clip=o.get("clip", ""),
                         visibility=o.get("visibility", ""))
        return {"frames": r["frames"],
                "inside_after": sum(a["frames_inside_after"] for a in r["arms"])}
    if item.verb == "convert":
        r = kinema.convert(item.input, item.output, clip=str(o.get("clip", "")),
                           onto=o.get("onto", ""), fps=o.get("fps", 0.0))
        return {"frames": r["frames"], "rate": r["rate"]}
    clips = kinema.decompress_file(item.input, item.output, clip=str(o.get("clip", "")))
    return {"clips": clips}


def run_item(item: Item) -> Dict[str, Any]:
    """Runs one item unless its record says it is done. Never raises: a failure is a result."""
    start = time.perf_counter()
    result: Dict[str, Any] = {"input": item.input, "output": item.output}
    try:
        if not item.key:
            item.key = item_key(item)
        if is_done(item):
            result.update(status="skipped", seconds=time.perf_counter() - start)
            return result
        result["summary"] = _run_verb(item)
        _write_json_atomically(_state_path(item), {
            "verb": item.verb, "input": item.input, "options": item.options,
            "outputs": {item.output: file_sha256(item.output)},
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "pid": os.getpid()})
        result["status"] = "done"
    except Exception as e:  # noqa: BLE001  (every failure is reported, the batch goes on)
        result.update(status="failed", error=f"{type(e).__name__}: {e}")
    result["seconds"] = time.perf_counter() - start
    result["pid"] = os.getpid()
    return result


# ---- running a batch ----------------------------------------------------------------------------

class ProgressBar:
    """One line on stderr, redrawn in place: items finished, failed, skipped, elapsed time."""

    def __init__(self, total: int, stream=sys.stderr, width: int = 30):
        self.total, self.stream, self.width = total, stream, width
        self.done = self.failed = self.skipped = 0
        self.start = time.perf_counter()

    def update(self, result: Dict[str, Any]) -> None:
        self.done += 1
        self.failed += result["status"] == "failed"
        self.skipped += result["status"] == "skipped"
        filled = self.width * self.done // max(self.total, 1)
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} items, "
            f"{self.skipped} skipped, {self.failed} failed, "
            f"{time.perf_counter() - self.start:.1f} s")
        if self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


class _Silent:
    """A stream that drops what is written (--quiet)."""

    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass


def run_sequential(items: List[Item], on_result: Callable[[Dict[str, Any]], None]) -> List[Dict]:
    """Every item in this process, one after another (the baseline a cluster is measured against)."""
    results = []
    for item in items:
        results.append(run_item(item))
        on_result(results[-1])
    return results


def run_on_cluster(items: List[Item], on_result: Callable[[Dict[str, Any]], None],
                   scheduler: Optional[str] = None, workers: int = 2,
                   item_runner: Callable[[Item], Dict[str, Any]] = run_item,
                   timings: Optional[Dict[str, float]] = None) -> List[Dict]:
    """Every item as a Dask task (`item_runner`, run_item by default): on the scheduler at
    `scheduler`, or a LocalCluster of `workers` single-threaded worker processes on this machine.
    Results come back as they finish; a task Dask gives up on (its workers kept dying) is a
    failed item. `timings`, when given, gets "startup": seconds to start or reach the cluster."""
    from distributed import Client, LocalCluster, as_completed

    start = time.perf_counter()
    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=40)
        client = Client(cluster)
    if timings is not None:
        timings["startup"] = time.perf_counter() - start
    try:
        futures = {client.submit(item_runner, item, key=f"kinema-{item.key}", pure=False): item
                   for item in items}
        results = []
        for future in as_completed(list(futures)):
            try:
                result = future.result()
            except Exception as e:  # noqa: BLE001  (e.g. KilledWorker: the item kept killing its
                item = futures[future]  # workers; reported like any failed item)
                result = {"input": item.input, "output": item.output, "status": "failed",
                          "error": f"{type(e).__name__}: {e}", "seconds": 0.0}
            results.append(result)
            on_result(result)
            future.release()
        return results
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def summary_table(results: List[Dict[str, Any]], seconds: float) -> str:
    """A plain-text summary: counts by status, time, and each failure's reason."""
    count = {s: sum(r["status"] == s for r in results) for s in ("done", "skipped", "failed")}
    work = sum(r.get("seconds", 0.0) for r in results if r["status"] == "done")
    lines = [
        f"{'status':<10}{'items':>8}",
        f"{'done':<10}{count['done']:>8}",
        f"{'skipped':<10}{count['skipped']:>8}",
        f"{'failed':<10}{count['failed']:>8}",
        f"{'total':<10}{len(results):>8}",
        f"wall {seconds:.2f} s, item time {work:.2f} s"
        + (f" ({work / seconds:.2f}x parallel)" if seconds > 0 and count["done"] else ""),
    ]
    for r in results:
        if r["status"] == "failed":
            lines.append(f"FAILED {r['input']}: {r['error']}")
    return "\n".join(lines)


def run_batch(manifest: Manifest, scheduler: Optional[str] = None, workers: Optional[int] = None,
              sequential: bool = False, force: bool = False, quiet: bool = False) -> List[Dict]:
    """Runs a manifest's items and returns one result dict per item (input, output, status:
    done | skipped | failed, error, seconds, summary)."""
    for item in manifest.items:
        item.key = item_key(item)
        if force and os.path.exists(_state_path(item)):
            os.remove(_state_path(item))
    bar = ProgressBar(len(manifest.items), stream=_Silent() if quiet else sys.stderr)
    if sequential:
        return run_sequential(manifest.items, bar.update)
    return run_on_cluster(manifest.items, bar.update, scheduler or manifest.scheduler,
                          workers or manifest.workers)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="kinema batch", description=__doc__.split("\n\n")[0])
    parser.add_argument("manifest", help="the batch's MANIFEST.json")
    parser.add_argument("--scheduler", help="a Dask scheduler's address (default: a LocalCluster)")
    parser.add_argument("--workers", type=int, help="LocalCluster worker processes (default 2)")
    parser.add_argument("--sequential", action="store_true",
                        help="run every item in this process, one after another (no Dask)")
    parser.add_argument("--force", action="store_true", help="rerun items already done")
    parser.add_argument("--report", help="write every item's result to this JSON file")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        parser.error("--workers: expected a whole number ≥ 1")
    try:
        manifest = read_manifest(args.manifest)
    except ManifestError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    results = run_batch(manifest, args.scheduler, args.workers, args.sequential, args.force,
                        args.quiet)
    seconds = time.perf_counter() - start
    print(summary_table(results, seconds))
    if args.report:
        _write_json_atomically(os.path.abspath(args.report),
                               {"manifest": os.path.abspath(args.manifest), "seconds": seconds,
                                "items": sorted(results, key=lambda r: r["input"])})
    return 2 if any(r["status"] == "failed" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
