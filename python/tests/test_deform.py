"""Two-bone IK and skinning."""

import numpy as np
import pytest

import kinema
from conftest import CHARACTER


def test_solve_two_bone_reaches_a_reachable_target_and_keeps_bone_lengths():
    r = kinema.solve_two_bone([0, 0, 0], [0, -0.5, 0.05], [0, -1, 0], target=[0.3, -0.7, 0.2],
                              pole=[0, 0, 1])
    assert r["status"] == "reached" and r["reached"]
    np.testing.assert_allclose(r["end_position"], [0.3, -0.7, 0.2], atol=1e-9)
    l1 = np.linalg.norm(np.array(r["mid_position"]))
    l2 = np.linalg.norm(np.array(r["end_position"]) - np.array(r["mid_position"]))
    assert l1 == pytest.approx(np.linalg.norm([0, -0.5, 0.05]), abs=1e-9)
    assert l2 == pytest.approx(np.linalg.norm([0, -0.5, -0.05]), abs=1e-9)
    far = kinema.solve_two_bone([0, 0, 0], [0, -0.5, 0.05], [0, -1, 0], [0, -5, 0], [0, 0, 1])
    assert far["status"] == "unreachable"
    bad = kinema.solve_two_bone([0, 0, 0], [0, 0, 0], [0, -1, 0], [0, -0.5, 0], [0, 0, 1])
    assert bad["status"] == "degenerate"


def test_two_bone_ik_on_a_pose_puts_the_ankle_on_the_target(walk):
    s, clip = walk.skeleton, walk.clips[0]
    pose = clip.sample(s, 0.5)
    hip, knee, ankle = (s.find(n) for n in ("LeftUpLeg", "LeftLeg", "LeftFoot"))
    assert min(hip, knee, ankle) >= 0
    model = s.model_matrices(*pose)
    target = model[ankle][:3, 3] + np.array([0.05, 0.1, 0.08])
    solved, info = kinema.two_bone_ik(s, *pose, root=hip, mid=knee, end=ankle, target=target,
                                      pole=model[knee][:3, 3] + [0, 0, 1])
    assert info["status"] == "reached"
    after = s.model_matrices(*solved)
    np.testing.assert_allclose(after[ankle][:3, 3], target, atol=1e-6)
    np.testing.assert_array_equal(solved[0], pose[0])  # translations untouched
    changed = np.nonzero(np.any(solved[1] != pose[1], axis=1))[0]
    assert set(changed) <= {hip, knee, ankle}
    with pytest.raises(IndexError):
        kinema.two_bone_ik(s, *pose, root=hip, mid=knee, end=999, target=target, pole=[0, 0, 1])


def character_mesh():
    a = kinema.load(str(CHARACTER))
    m = next(m for m in a.meshes if m.skin >= 0)
    return a, m, a.skins[m.skin]


def test_skinning_in_the_bind_pose_leaves_the_mesh_in_place():
    a, m, skin = character_mesh()
    rest = a.skeleton.rest_model_matrices()
    palette = kinema.skinning_palette(rest, list(skin.joints), skin.inverse_bind)
    assert palette.shape == (len(skin.joints), 3, 4) and palette.dtype == np.float32
    lbs = kinema.skin(m.positions, m.joints, m.weights, palette)
    np.testing.assert_allclose(lbs, m.positions, atol=2e-4)
    dqs, normals = kinema.skin(m.positions, m.joints, m.weights, palette, normals=m.normals,
                               method="dqs")
    np.testing.assert_allclose(dqs, m.positions, atol=2e-4)
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1, atol=1e-4)


def test_skinning_a_rigid_move_moves_every_vertex_rigidly():
    a, m, skin = character_mesh()
    shift = np.eye(4)
    shift[:3, 3] = [0.5, -0.25, 2.0]
    model = shift @ a.skeleton.rest_model_matrices()
    palette = kinema.skinning_palette(model, list(skin.joints), skin.inverse_bind)
    for method in ("lbs", "dqs"):
        out = kinema.skin(m.positions, m.joints, m.weights, palette, method=method)
        np.testing.assert_allclose(out, m.positions + [0.5, -0.25, 2.0], atol=5e-4)


def test_skinning_refuses_bad_inputs():
    a, m, skin = character_mesh()
    palette = kinema.skinning_palette(a.skeleton.rest_model_matrices(), list(skin.joints),
                                      skin.inverse_bind)
    with pytest.raises(ValueError, match="weights"):
        kinema.skin(m.positions, m.joints, m.weights[:10], palette)
    zero = np.zeros_like(m.weights)
    with pytest.raises(kinema.Error) as e:
        kinema.skin(m.positions, m.joints, zero, palette)
    assert "vertex" in str(e.value)
    with pytest.raises(ValueError, match="method"):
        kinema.skin(m.positions, m.joints, m.weights, palette, method="cage")
    with pytest.raises(IndexError):
        kinema.skinning_palette(a.skeleton.rest_model_matrices(), [10_000], np.eye(4)[None])


@pytest.mark.parametrize("method", ["ccd", "fabrik"])
def test_chain_ik_reaches_keeps_bone_lengths_and_turns_only_the_chain(walk, method):
    s = walk.skeleton
    pose = walk.clips[0].sample(s, 0.5)
    root, end = s.find("LeftShoulder"), s.find("LeftHand")
    model = s.model_matrices(*pose)
    target = model[end][:3, 3] + np.array([0.05, 0.12, 0.1])
    solved, info = kinema.chain_ik(s, *pose, root=root, end=end, target=target, method=method,
                                   tolerance=1e-5, max_iterations=200)
    assert info["status"] == "reached", info
    assert info["error"] <= 1e-5 and info["joints"][0] == root
    after = s.model_matrices(*solved)
    np.testing.assert_allclose(after[end][:3, 3], target, atol=1e-5)
    chain = info["joints"] + [end]
    for a, b in zip(chain, chain[1:]):  # bone lengths kept
        before_length = np.linalg.norm(model[b][:3, 3] - model[a][:3, 3])
        assert np.linalg.norm(after[b][:3, 3] - after[a][:3, 3]) == pytest.approx(before_length,
                                                                                 abs=1e-9)
    changed = set(np.nonzero(np.any(solved[1] != pose[1], axis=1))[0])
    assert changed <= set(info["joints"]) and changed
    np.testing.assert_array_equal(solved[0], pose[0])
    # Out of reach: the chain points at the target.
    far = model[root][:3, 3] + np.array([3.0, 0, 0])
    stretched, info = kinema.chain_ik(s, *pose, root=root, end=end, target=far, method=method)
    assert info["status"] == "unreachable"
    m = s.model_matrices(*stretched)
    towards = (m[end][:3, 3] - m[root][:3, 3]) / np.linalg.norm(m[end][:3, 3] - m[root][:3, 3])
    assert towards @ np.array([1.0, 0, 0]) > 0.99


def test_chain_ik_refuses_what_is_not_a_chain(walk):
    s = walk.skeleton
    pose = walk.clips[0].sample(s, 0.5)
    with pytest.raises(ValueError, match="below the root"):
        kinema.chain_ik(s, *pose, root=s.find("RightShoulder"), end=s.find("LeftHand"),
                        target=[0, 1, 0])
    with pytest.raises(ValueError, match="method"):
        kinema.chain_ik(s, *pose, root=s.find("LeftShoulder"), end=s.find("LeftHand"),
                        target=[0, 1, 0], method="jacobian")
    with pytest.raises(ValueError, match="1 to 32"):
        kinema.chain_ik(s, *pose, root=s.find("LeftHand"), end=s.find("LeftHand"),
                        target=[0, 1, 0])
    solved, info = kinema.chain_ik(s, *pose, root=s.find("LeftShoulder"), end=s.find("LeftHand"),
                                   target=[np.nan, 0, 0])
    assert info["status"] == "invalid_input"
    np.testing.assert_array_equal(solved[1], pose[1])
