"""kinema batch: manifests, resumable runs, per-item errors, a LocalCluster, a killed worker."""

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from conftest import CLI, ROOT, TEST_DATA, WALK_BVH
from kinema import batch

CLIPS = [WALK_BVH, TEST_DATA / "bvh" / "cmu_iclone_cc3" / "006_11_turn_30fps.bvh",
         TEST_DATA / "bvh" / "cmu_iclone_cc3" / "007_12.bvh"]


def library(folder, count, corrupt=0):
    """`count` clip files (copies of the test clips, each its own name), `corrupt` of them cut."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        shutil.copy(CLIPS[i % len(CLIPS)], folder / f"clip{i:03}.bvh")
    for i in range(corrupt):
        path = folder / f"broken{i}.bvh"
        path.write_text(WALK_BVH.read_text()[:900])
    return folder


def write_manifest(folder, **fields):
    data = {"verb": "compress", "inputs": ["clips/*.bvh"], "out_dir": "out"}
    data.update(fields)
    path = folder / "manifest.json"
    path.write_text(json.dumps(data))
    return path


def test_manifest_errors_name_the_key(tmp_path):
    library(tmp_path / "clips", 1)
    cases = [({"verb": "explode"}, "/verb"), ({"inputs": []}, "/inputs"),
             ({"inputs": ["none/*.bvh"]}, "/inputs/0"), ({"out_dir": ""}, "/out_dir"),
             ({"options": {"speed": 2}}, "/options/speed"), ({"workers": 0}, "/workers"),
             ({"verb": "retarget"}, "/options/onto"),
             ({"options": {"format": "png"}}, "/options/format"), ({"colour": 1}, "/colour")]
    for fields, place in cases:
        with pytest.raises(batch.ManifestError) as e:
            batch.read_manifest(str(write_manifest(tmp_path, **fields)))
        assert e.value.place == place and e.value.file.endswith("manifest.json"), fields
    broken = tmp_path / "broken.json"
    broken.write_text('{"verb": "compress",')
    with pytest.raises(batch.ManifestError) as e:
        batch.read_manifest(str(broken))
    assert e.value.place.startswith("line 1")


def test_sequential_run_collects_errors_and_resumes(tmp_path):
    library(tmp_path / "clips", 3, corrupt=1)
    manifest = batch.read_manifest(str(write_manifest(tmp_path)))
    results = batch.run_batch(manifest, sequential=True, quiet=True)
    status = {os.path.basename(r["input"]): r["status"] for r in results}
    assert status == {"broken0.bvh": "failed", "clip000.bvh": "done", "clip001.bvh": "done",
                      "clip002.bvh": "done"}
    failed = next(r for r in results if r["status"] == "failed")
    assert "broken0.bvh" in failed["error"] and "Error" in failed["error"]
    outputs = sorted(p.name for p in (tmp_path / "out").glob("*.kmc"))
    assert outputs == ["clip000.kmc", "clip001.kmc", "clip002.kmc"]
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "out").glob("*.kmc")}
    # A rerun skips what is done (same content hash) and retries the failure.
    again = batch.run_batch(batch.read_manifest(str(tmp_path / "manifest.json")),
                            sequential=True, quiet=True)
    assert sorted(r["status"] for r in again) == ["failed", "skipped", "skipped", "skipped"]
    assert {p: p.stat().st_mtime_ns for p in before} == before
    # A changed input is no longer done; a damaged output is redone.
    shutil.copy(CLIPS[1], tmp_path / "clips" / "clip000.bvh")
    (tmp_path / "out" / "clip002.kmc").write_bytes(b"damaged")
    third = batch.run_batch(batch.read_manifest(str(tmp_path / "manifest.json")),
                            sequential=True, quiet=True)
    status = {os.path.basename(r["input"]): r["status"] for r in third}
    assert status["clip000.bvh"] == "done" and status["clip001.bvh"] == "skipped"
    assert status["clip002.bvh"] == "done"
    table = batch.summary_table(third, 1.0)
    assert "FAILED" in table and "broken0.bvh" in table


def test_a_pattern_never_takes_the_batchs_own_outputs(tmp_path):
    library(tmp_path / "clips", 2)
    manifest = write_manifest(tmp_path, verb="convert", inputs=["**/*.bvh"],
                              options={"format": "bvh"})
    first = batch.run_batch(batch.read_manifest(str(manifest)), sequential=True, quiet=True)
    assert [r["status"] for r in first] == ["done", "done"]
    assert len(list((tmp_path / "out").glob("*.bvh"))) == 2
    again = batch.read_manifest(str(manifest))  # out/clip000.bvh is not an input now
    assert sorted(os.path.basename(i.input) for i in again.items) == ["clip000.bvh", "clip001.bvh"]
    assert all(r["status"] == "skipped" for r in batch.run_batch(again, sequential=True, quiet=True))


def test_local_cluster_writes_what_a_sequential_loop_writes(tmp_path):
    library(tmp_path / "a" / "clips", 6)
    library(tmp_path / "b" / "clips", 6)
    sequential = batch.run_batch(batch.read_manifest(str(write_manifest(tmp_path / "a"))),
                                 sequential=True, quiet=True)
    cluster = batch.run_batch(batch.read_manifest(str(write_manifest(tmp_path / "b"))),
                              workers=2, quiet=True)
    assert all(r["status"] == "done" for r in sequential + cluster)
    assert len({r["pid"] for r in cluster}) == 2  # both workers took items
    for i in range(6):
        name = f"out/clip{i:03}.kmc"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_killed_worker_loses_no_finished_output(tmp_path):
    count = 12
    library(tmp_path / "clips", count)
    manifest = batch.read_manifest(str(write_manifest(tmp_path, options={"max_error": 1e-5})))
    for item in manifest.items:
        item.key = batch.item_key(item)
    killed, finished_at_kill = [], {}

    def on_result(result):
        if result["status"] == "done" and not killed and len(on_result.seen) >= 2:
            # Kill the worker that just finished an item (it has already taken the next one).
            for p in (tmp_path / "out").glob("*.kmc"):
                finished_at_kill[p] = (p.stat().st_mtime_ns, batch.file_sha256(str(p)))
            os.kill(result["pid"], signal.SIGKILL)
            killed.append(result["pid"])
        on_result.seen.append(result)

    on_result.seen = []
    results = batch.run_on_cluster(manifest.items, on_result, workers=2)
    assert killed
    assert len(results) == count
    assert all(r["status"] in ("done", "skipped") for r in results), results
    # Every output exists and is recorded; those finished before the kill were not rewritten.
    for item in manifest.items:
        assert batch.is_done(item), item.input
    for path, (mtime, digest) in finished_at_kill.items():
        assert path.stat().st_mtime_ns == mtime and batch.file_sha256(str(path)) == digest
    # Only what was lost ran again: each item produced its output once ("done" once), except
    # that a task the dead worker had finished but not yet reported comes back "skipped".
    done = [r["input"] for r in results if r["status"] == "done"]
    assert len(done) == len(set(done))


def test_cli_batch_runs_the_manifest_and_exits_2_on_a_failed_item(tmp_path):
    if not os.path.isfile(CLI):
        pytest.skip("the kinema CLI is not built")
    library(tmp_path / "clips", 2, corrupt=1)
    manifest = write_manifest(tmp_path)
    env = dict(os.environ)
    r = subprocess.run([CLI, "batch", str(manifest), "--sequential", "--report",
                        str(tmp_path / "report.json")], capture_output=True, text=True, env=env)
    assert r.returncode == 2, r.stderr
    assert "failed" in r.stdout and "FAILED" in r.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert sorted(i["status"] for i in report["items"]) == ["done", "done", "failed"]
    (tmp_path / "clips" / "broken0.bvh").unlink()
    r = subprocess.run([CLI, "batch", str(manifest), "--workers", "2"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "skipped" in r.stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"verb": "melt", "inputs": ["clips/*.bvh"], "out_dir": "o"}')
    r = subprocess.run([CLI, "batch", str(bad)], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "/verb" in r.stderr


def test_module_entry_point_prints_help():
    r = subprocess.run([sys.executable, "-m", "kinema.batch", "--help"], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 0 and "--scheduler" in r.stdout


def test_a_scheduler_address_runs_the_batch_on_that_cluster(tmp_path):
    """The multi-machine path: a scheduler and two worker processes started as on a cluster's
    nodes (here on 127.0.0.1), the batch given the scheduler's address."""
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                               "127.0.0.1", "--port", str(port), "--dashboard-address", ":0",
                               "--no-dashboard"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        for _ in range(2):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                 "--no-dashboard", "--host", "127.0.0.1"],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        library(tmp_path / "clips", 4)
        manifest = batch.read_manifest(str(write_manifest(tmp_path)))
        deadline = time.time() + 60
        while True:  # the scheduler needs a moment to listen
            try:
                results = batch.run_batch(manifest, scheduler=address, quiet=True)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)
        assert sorted(r["status"] for r in results) == ["done"] * 4
        assert os.getpid() not in {r["pid"] for r in results}  # ran on the workers
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def test_an_item_that_kills_its_workers_is_reported_as_failed(tmp_path):
    """A task Dask gives up on (KilledWorker after repeated worker deaths) is a failed item, not
    the end of the batch."""
    library(tmp_path / "clips", 3)
    manifest = batch.read_manifest(str(write_manifest(tmp_path)))
    victim = manifest.items[1]
    victim.options = dict(victim.options, _kill_worker=True)  # run_item below dies on it
    for item in manifest.items:
        item.key = batch.item_key(item)
    seen = []
    results = batch.run_on_cluster(manifest.items, seen.append, workers=1,
                                   item_runner=_killing_run_item)
    status = {os.path.basename(r["input"]): r["status"] for r in results}
    assert status["clip001.bvh"] == "failed"
    # The others finished (or, run by a worker that died afterwards, were found finished).
    assert status["clip000.bvh"] in ("done", "skipped") and status["clip002.bvh"] in ("done", "skipped")
    assert all(batch.is_done(item) for item in manifest.items if item is not victim)
    failed = next(r for r in results if r["status"] == "failed")
    assert "KilledWorker" in failed["error"]
    assert len(seen) == 3


def _killing_run_item(item):
    if item.options.get("_kill_worker"):
        os.kill(os.getpid(), signal.SIGKILL)
    return batch.run_item(item)
