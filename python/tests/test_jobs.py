"""Whole jobs on files (convert, retarget, clean, simulate, ragdoll), against the CLI's outputs."""

import json
import threading

import numpy as np
import pytest

import kinema
from conftest import CHARACTER, DEMO_DATA, DEMO_WALK, WALK_BVH


def test_convert_writes_the_bytes_the_cli_writes(tmp_path, cli):
    report = kinema.convert(str(WALK_BVH), str(tmp_path / "py.glb"))
    assert report["frames"] > 100 and not report["retargeted"]
    r = cli("convert", WALK_BVH, tmp_path / "cli.glb")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "py.glb").read_bytes() == (tmp_path / "cli.glb").read_bytes()


def test_convert_refuses_an_output_that_is_its_input(tmp_path):
    copy = tmp_path / "walk.bvh"
    copy.write_bytes(WALK_BVH.read_bytes())
    with pytest.raises(kinema.UsageError):
        kinema.convert(str(copy), str(copy))
    assert copy.read_bytes() == WALK_BVH.read_bytes()  # the input untouched


@pytest.fixture(scope="module")
def retargeted(tmp_path_factory):
    out = tmp_path_factory.mktemp("retarget") / "walk.glb"  # the demo avatar is VRM 0.x
    stages = []
    report = kinema.retarget(str(DEMO_WALK), str(CHARACTER), str(out),
                             progress=lambda stage, done, total: stages.append(stage))
    return out, report, stages


def test_retarget_grounds_the_feet_and_reports_progress(retargeted):
    out, report, stages = retargeted
    assert out.is_file() and stages
    assert report["grounded"] and report["frames"] > 50
    before, after = report["before"], report["after"]
    assert after["skate_median_cm_s"] <= before["skate_median_cm_s"]
    assert after["bone_length_error_max_m"] < 1e-6  # bone lengths kept
    asset = report["asset"]
    assert isinstance(asset, kinema.Asset) and len(asset.clips) == 1


def test_retarget_matches_the_cli(retargeted, tmp_path, cli):
    out, _, _ = retargeted
    r = cli("retarget", DEMO_WALK, "--onto", CHARACTER, "-o", tmp_path / "cli.glb")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "cli.glb").read_bytes() == out.read_bytes()


def test_clean_pushes_arms_out_of_the_body(retargeted, tmp_path):
    out, _, _ = retargeted
    report = kinema.clean(str(out), str(CHARACTER), str(tmp_path / "clean.glb"))
    assert len(report["arms"]) == 2
    for arm in report["arms"]:
        assert arm["frames_inside_after"] <= arm["frames_inside_before"]
        assert len(arm["depth_after_m"]) == report["frames"]
    assert (tmp_path / "clean.glb").is_file()


def test_simulate_runs_a_cloth_scene(tmp_path):
    scene = json.loads((DEMO_DATA / "cloth.json").read_text())
    scene["duration"] = 0.5
    path = tmp_path / "cloth.json"
    path.write_text(json.dumps(scene))
    calls = []
    report = kinema.simulate(str(path), str(tmp_path / "cloth.pc2"),
                             progress=lambda *a: calls.append(a))
    assert report["frames"] == 16 and len(report["cloths"]) == 1
    cloth = report["cloths"][0]
    assert cloth["vertices"] == 36 * 36 and 0 <= cloth["worst_stretch"] < 0.25
    assert (tmp_path / "cloth.pc2").is_file() and calls
    # Threads do not change the result.
    again = kinema.simulate(str(path), str(tmp_path / "one.pc2"), threads=1)
    assert (tmp_path / "one.pc2").read_bytes() == (tmp_path / "cloth.pc2").read_bytes()
    assert again["cloths"][0]["worst_stretch"] == cloth["worst_stretch"]


def test_simulate_names_the_bad_key_of_a_scene(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"duration": "long", "cloth": []}')
    with pytest.raises(kinema.Error) as e:
        kinema.simulate(str(bad), str(tmp_path / "bad.pc2"))
    assert e.value.file == str(bad) and "/duration" in e.value.place
    assert not (tmp_path / "bad.pc2").exists()


def test_ragdoll_falls(tmp_path):
    report = kinema.ragdoll(str(CHARACTER), str(tmp_path / "fall.glb"), hit_bone="head",
                            impulse=(0, 0, -40), seconds_after=1.0)
    assert report["bodies"] > 10 and report["frames"] >= 30
    assert report["worst_joint_error"] < 0.01
    assert (tmp_path / "fall.glb").is_file()


def test_long_jobs_release_the_gil(tmp_path):
    ticks, done = [0], threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    kinema.compress_files([str(WALK_BVH)], str(tmp_path), max_error=1e-5)
    done.set()
    counter.join()
    assert ticks[0] > 1000  # the counter ran while the job did


def test_progress_callback_errors_propagate(tmp_path):
    calls = []

    def boom(stage, done, total):
        calls.append((stage, done, total))
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        kinema.compress_files([str(WALK_BVH)], str(tmp_path / "x"), progress=boom)
    assert len(calls) == 1  # the job stopped at the first report
    assert not list(tmp_path.glob("x/*.kmc"))  # and wrote nothing
