"""Motion matching: building, loading, exact searches, the controller along a path."""

import json

import numpy as np
import pytest

import kinema
from conftest import TEST_DATA, TURN_BVH

BRISK_BVH = TEST_DATA / "bvh" / "cmu_iclone_cc3" / "007_12.bvh"


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    out = tmp_path_factory.mktemp("match") / "db.kmm"
    stages = []
    db = kinema.MatchDatabase.build([str(TURN_BVH), str(BRISK_BVH)], str(out), skip_frames=1,
                                    mirror=True, progress=lambda *a: stages.append(a))
    assert stages and all(len(s) == 3 for s in stages)
    return db, out


def test_build_writes_a_database_that_loads_the_same(database):
    db, path = database
    assert db.frames > 100 and db.dims > 10 and db.fps == 30 and db.has_poses
    assert len(db.clips) == 4  # two clips and their mirrors
    assert sum(c["mirrored"] for c in db.clips) == 2
    loaded = kinema.MatchDatabase.load(str(path))
    assert (loaded.frames, loaded.dims) == (db.frames, db.dims)
    np.testing.assert_array_equal(loaded.features, db.features)
    assert loaded.skeleton.joint_count == db.skeleton.joint_count == 100


def test_features_are_a_read_only_view(database):
    db, _ = database
    f = db.features
    assert f.shape == (db.frames, db.dims) and f.dtype == np.float32
    assert not f.flags.writeable and np.shares_memory(f, db.features)


def test_the_tree_search_returns_the_brute_force_answer(database):
    db, _ = database
    rng = np.random.default_rng(7)
    frames = rng.integers(0, db.frames, 40)
    queries = db.features[frames] + rng.normal(0, 0.3, (40, db.dims)).astype(np.float32)
    tree_frames, tree_costs = db.search(queries)
    brute_frames, brute_costs = db.search(queries, brute_force=True)
    np.testing.assert_array_equal(tree_frames, brute_frames)
    np.testing.assert_array_equal(tree_costs, brute_costs)
    # The cost is the squared distance to the frame's features; no searchable frame is closer.
    searchable = db.searchable
    assert searchable.shape == (db.frames,) and 0 < searchable.sum() < db.frames
    for q, f, c in zip(queries, tree_frames, tree_costs):
        d = np.sum((db.features.astype(np.float64) - q) ** 2, axis=1)
        assert searchable[f]
        assert c == pytest.approx(d[f], rel=1e-4)
        assert d[f] <= d[searchable].min() * (1 + 1e-4) + 1e-6
    frame, cost = db.search(queries[0])
    assert (frame, cost) == (tree_frames[0], tree_costs[0])


def test_search_refuses_bad_queries_and_unknown_tags(database):
    db, _ = database
    with pytest.raises(ValueError, match="query"):
        db.search(np.zeros(db.dims + 1, np.float32))
    with pytest.raises(ValueError, match="tag"):
        db.search(np.zeros(db.dims, np.float32), tags=["jump"])
    frame, cost = db.search(np.full(db.dims, np.nan, np.float32))
    assert frame == -1 and cost == float("inf")


def test_pose_and_clip_of_a_frame(database):
    db, _ = database
    t, r, s = db.pose(10)
    assert t.shape == (100, 3) and r.shape == (100, 4)
    np.testing.assert_allclose(np.linalg.norm(r, axis=1), 1, atol=1e-5)
    clip, time = db.clip_of(10)
    assert clip["first_frame"] <= 10 < clip["first_frame"] + clip["frame_count"]
    assert time >= 0
    with pytest.raises(IndexError):
        db.pose(db.frames)


def test_run_match_follows_the_path_as_the_cli_does(database, tmp_path, cli):
    _, db_path = database
    path = tmp_path / "path.json"
    path.write_text(json.dumps({"duration": 6, "keys": [
        {"time": 0, "direction": [0, 1], "speed": 1.3},
        {"time": 3, "direction": [-1, 0], "speed": 1.3}]}))
    report = kinema.run_match(str(db_path), str(path), str(tmp_path / "py.bvh"))
    assert report["frames"] == 181 and report["searches"] == 61
    assert report["trajectory_error_max"] <= 0.15 + 1e-9
    assert report["clip"].duration == pytest.approx(6)
    r = cli("match", "run", db_path, "--path", path, "-o", tmp_path / "cli.bvh")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "py.bvh").read_bytes() == (tmp_path / "cli.bvh").read_bytes()
    # Locomotion warping, as --warp.
    warped = kinema.run_match(str(db_path), str(path), str(tmp_path / "pyw.bvh"), warp=True)
    r = cli("match", "run", db_path, "--path", path, "--warp", "-o", tmp_path / "cliw.bvh")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "pyw.bvh").read_bytes() == (tmp_path / "cliw.bvh").read_bytes()
    assert (tmp_path / "pyw.bvh").read_bytes() != (tmp_path / "py.bvh").read_bytes()
    assert warped["foot_skate_median"] < 5.0


def test_corrupt_database_raises_error_naming_the_file(tmp_path, database):
    _, db_path = database
    data = db_path.read_bytes()
    cut = tmp_path / "cut.kmm"
    cut.write_bytes(data[: len(data) // 3])
    with pytest.raises(kinema.Error) as e:
        kinema.MatchDatabase.load(str(cut))
    assert e.value.file == str(cut) and e.value.reason
    with pytest.raises(kinema.Error):
        kinema.MatchDatabase.load(str(tmp_path / "missing.kmm"))


def test_learn_match_trains_a_model_that_runs_and_compares(database, tmp_path):
    _, db_path = database
    stages = []
    report = kinema.learn_match(str(db_path), str(tmp_path / "m.kml"), hidden=16, latent=4,
                                epochs=0.01, min_iterations=30,
                                progress=lambda *a: stages.append(a[0]))
    assert {"decompressor", "stepper", "projector"} <= set(stages)
    assert report["model_bytes"] < report["database_bytes"]
    assert (tmp_path / "m.kml").stat().st_size == report["file_bytes"]
    assert (tmp_path / "m.losses.png").read_bytes()[1:4] == b"PNG"
    assert len(report["losses"]["stepper"]) >= 10
    path = tmp_path / "path.json"
    path.write_text(json.dumps({"duration": 2, "keys": [
        {"time": 0, "direction": [0, 1], "speed": 1.3}]}))
    run = kinema.run_match(str(tmp_path / "m.kml"), str(path), str(tmp_path / "l.bvh"),
                           compare=str(db_path))
    assert run["learned"] and run["frames"] == 61
    assert run["exact"]["root_distance_mean"] >= 0
    with pytest.raises(kinema.UsageError):
        kinema.run_match(str(db_path), str(path), str(tmp_path / "x.bvh"), compare=str(db_path))
