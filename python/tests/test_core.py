"""Skeletons, raw clips, assets and their files, and the error mapping."""

import threading

import numpy as np
import pytest

import kinema
from conftest import CHARACTER, RIGGED, TEST_DATA, WALK_BVH


def test_import_exposes_the_documented_names():
    for name in kinema.__all__:
        assert hasattr(kinema, name), name
    assert issubclass(kinema.Error, Exception)
    assert issubclass(kinema.UsageError, ValueError)
    assert kinema.load.__doc__ and kinema.Skeleton.build.__doc__


def test_type_stubs_declare_every_public_name():
    import ast
    import pathlib

    stub = pathlib.Path(kinema.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text())
    declared = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert set(kinema.__all__) <= declared, set(kinema.__all__) - declared


def test_load_bvh_gives_a_parents_first_skeleton_and_a_clip(walk):
    s = walk.skeleton
    assert s.joint_count == len(s) == len(s.names) > 20
    parents = s.parents
    assert parents.dtype == np.int32 and parents[0] == -1
    assert all(parents[i] < i for i in range(len(parents)))
    assert s.find(s.names[5]) == 5 and s.find("no such joint") == -1
    assert s.depth(0) == 0 and s.roots() == [0]
    assert all(s.parents[c] == 0 for c in s.children(0))
    assert len(walk.clips) == 1
    clip = walk.clips[0]
    assert clip.duration > 1 and clip.frame_count > 30 and clip.key_count > 0
    assert clip.frame_rate() == pytest.approx(120, rel=1e-4)  # 0.008333 s frames
    assert walk.source["format"] == "bvh"


def test_parents_is_a_read_only_view_that_keeps_its_skeleton_alive(walk):
    s = walk.skeleton
    view = s.parents
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 3
    assert np.shares_memory(view, s.parents)  # the same memory twice: no copy
    del s
    assert view[0] == -1  # still valid: the view holds the skeleton


def test_sample_many_equals_sample_frame_by_frame(walk):
    s, clip = walk.skeleton, walk.clips[0]
    times = np.linspace(-0.1, clip.duration + 0.1, 17)
    t, r, sc = clip.sample_many(s, times)
    assert t.shape == (17, s.joint_count, 3) and r.shape == (17, s.joint_count, 4)
    for i, time in enumerate(times):
        ti, ri, si = clip.sample(s, time)
        np.testing.assert_array_equal(t[i], ti)
        np.testing.assert_array_equal(r[i], ri)
        np.testing.assert_array_equal(sc[i], si)
    np.testing.assert_allclose(np.linalg.norm(r, axis=-1), 1, atol=1e-9)


def test_sample_model_is_forward_kinematics_of_the_sampled_pose(walk):
    s, clip = walk.skeleton, walk.clips[0]
    pose = clip.sample(s, 0.5)
    model = clip.sample_model(s, 0.5)
    np.testing.assert_allclose(model, s.model_matrices(*pose), atol=1e-12)
    # Each joint's model matrix is its parent's times its local TRS.
    for j in range(1, s.joint_count):
        p = s.parents[j]
        x, y, z, w = pose[1][j]
        rot = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
        local = np.eye(4)
        local[:3, :3] = rot * pose[2][j]
        local[:3, 3] = pose[0][j]
        np.testing.assert_allclose(model[j], model[p] @ local, atol=1e-9)


def test_bone_lengths_are_kept_by_every_sampled_pose(walk):
    s, clip = walk.skeleton, walk.clips[0]
    rest = s.rest_model_matrices()[:, :3, 3]
    for time in (0.0, 0.4, clip.duration):
        p = clip.sample_model(s, time)[:, :3, 3]
        for j in range(1, s.joint_count):
            q = s.parents[j]
            rest_length = np.linalg.norm(rest[j] - rest[q])
            if rest_length > 1e-6:  # BVH joints with translation channels move; CMU's don't
                assert np.linalg.norm(p[j] - p[q]) == pytest.approx(rest_length, rel=1e-6)


def test_skeleton_build_reorders_parents_first_and_refuses_cycles():
    s = kinema.Skeleton.build(["hand", "root", "arm"], [2, -1, 1],
                              translations=np.array([[0, 0, 1], [0, 0, 0], [0, 1, 0]], float))
    assert s.names == ["root", "arm", "hand"]
    assert list(s.parents) == [-1, 0, 1]
    np.testing.assert_allclose(s.rest_model_matrices()[2][:3, 3], [0, 1, 1])
    turned = kinema.Skeleton.build(["a", "b"], [-1, 0], rotations=[[0, 0, 1, 0], [0, 0, 0, 1]])
    np.testing.assert_allclose(turned.rest_pose()[0], 0)  # translations default to zero
    np.testing.assert_allclose(turned.rest_model_matrices()[1][:3, :3], np.diag([-1, -1, 1]),
                               atol=1e-12)
    with pytest.raises(kinema.Error) as e:
        kinema.Skeleton.build(["a", "b"], [1, 0])
    assert e.value.place == "joint 0 'a'" and "cycle" in e.value.reason and e.value.file == ""
    with pytest.raises(ValueError):
        kinema.Skeleton.build(["a", "b"], [-1])
    with pytest.raises(ValueError, match=r"\(n, 3\)"):
        kinema.Skeleton.build(["a"], [-1], translations=np.zeros((1, 4)))


def test_clip_from_poses_round_trips_its_frames(walk):
    s, clip = walk.skeleton, walk.clips[0]
    times = np.arange(0, 11) / 30.0
    t, r, sc = clip.sample_many(s, times)
    rebuilt = kinema.Clip.from_poses("copy", 30.0, t, r, sc)
    assert rebuilt.duration == pytest.approx(10 / 30) and rebuilt.frame_count == 11
    t2, r2, _ = rebuilt.sample_many(s, times)
    np.testing.assert_allclose(t2, t, atol=1e-12)
    np.testing.assert_allclose(r2, r, atol=1e-12)
    resampled = rebuilt.resample(s, 60)
    assert resampled.frame_count == 21


def test_save_and_load_round_trip_keeps_joint_positions(tmp_path, walk):
    for ext in ("glb", "bvh", "gltf"):
        out = tmp_path / f"walk.{ext}"
        kinema.save(walk, str(out))
        back = kinema.load(str(out))
        assert back.skeleton.joint_count >= walk.skeleton.joint_count - 0
        s0, s1 = walk.skeleton, back.skeleton
        c0, c1 = walk.clips[0], back.clips[0]
        for time in (0.0, 0.5, 1.0):
            m0 = c0.sample_model(s0, time)[:, :3, 3]
            m1 = c1.sample_model(s1, time)[:, :3, 3]
            for j, name in enumerate(s0.names):
                k = s1.find(name)
                if k >= 0:
                    np.testing.assert_allclose(m1[k], m0[j], atol=2e-4, err_msg=f"{ext} {name}")


def test_assets_carry_meshes_skins_and_humanoid_as_views():
    a = kinema.load(str(CHARACTER))
    assert a.humanoid["hips"] >= 0 and a.source["format"].startswith("vrm")
    skinned = [m for m in a.meshes if m.skin >= 0]
    assert skinned
    m = skinned[0]
    assert m.positions.shape == (m.vertex_count, 3) and m.positions.dtype == np.float32
    assert not m.positions.flags.writeable
    assert m.indices.shape[1] == 3 and m.indices.max() < m.vertex_count
    assert m.joints.shape == m.weights.shape == (m.vertex_count, m.influences)
    np.testing.assert_allclose(m.weights.sum(axis=1), 1, atol=1e-5)  # weights sum to one
    skin = a.skins[m.skin]
    assert m.joints.max() < len(skin.joints)
    assert skin.inverse_bind.shape == (len(skin.joints), 4, 4)
    positions = m.positions
    del a, m
    assert np.isfinite(positions).all()  # the view keeps the asset alive


def test_asset_clips_and_skeleton_are_copies_and_assignable(walk):
    a = kinema.load(str(WALK_BVH))
    clips = a.clips
    clips[0].name = "renamed"
    assert a.clips[0].name != "renamed"
    a.clips = clips
    assert a.clips[0].name == "renamed" and a.clip("renamed").name == "renamed"
    assert a.clip(0).name == "renamed"
    with pytest.raises(KeyError):
        a.clip("nope")
    with pytest.raises(IndexError):
        a.clip(3)


def test_missing_file_raises_error_naming_the_file(tmp_path):
    missing = tmp_path / "nope.bvh"
    with pytest.raises(kinema.Error) as e:
        kinema.load(str(missing))
    assert e.value.file == str(missing)
    assert e.value.reason
    assert str(missing) in str(e.value)


def test_truncated_bvh_raises_error_with_a_line(tmp_path):
    text = WALK_BVH.read_text().splitlines()
    cut = tmp_path / "cut.bvh"
    cut.write_text("\n".join(text[:40]) + "\n")
    with pytest.raises(kinema.Error) as e:
        kinema.load(str(cut))
    assert e.value.file == str(cut)
    assert e.value.reason
    hostile = tmp_path / "hostile.bvh"
    hostile.write_bytes(b"HIERARCHY\nROOT Hips\n{\n OFFSET 1e999 nan 0\n" + b"\xff" * 64)
    with pytest.raises(kinema.Error):
        kinema.load(str(hostile))
    garbage = tmp_path / "garbage.glb"
    garbage.write_bytes(b"glTF" + bytes(range(256)) * 4)
    with pytest.raises(kinema.Error) as e:
        kinema.load(str(garbage))
    assert e.value.file == str(garbage)


def test_unknown_extensions_are_refused(tmp_path, walk):
    odd = tmp_path / "walk.xyz"
    odd.write_text("x")
    with pytest.raises(kinema.Error):
        kinema.load(str(odd))
    with pytest.raises((kinema.Error, kinema.UsageError)):
        kinema.save(walk, str(tmp_path / "walk.xyz"))
    assert not (tmp_path / "walk.xyz.tmp").exists()


def test_load_releases_the_gil():
    # Loads in two threads at once finish, and a pure-Python counter advances while they run.
    results, ticks, done = [], [0], threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    threads = [threading.Thread(target=lambda: results.append(kinema.load(str(CHARACTER))))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    counter.join()
    assert len(results) == 2 and ticks[0] > 0


def test_rigged_gltf_loads_with_its_skin():
    a = kinema.load(str(RIGGED))
    assert a.skeleton.joint_count > 0 and a.skins and a.clips
    assert str(TEST_DATA) in a.source["path"] or a.source["path"].endswith("RiggedFigure.glb")
