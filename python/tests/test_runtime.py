"""RuntimeClip sampling, blending and compressed clips, checked against the raw clip and the CLI."""

import numpy as np
import pytest

import kinema
from conftest import WALK_BVH


def quat_angle(a, b):
    """Angle between unit quaternions (radians), well conditioned near zero: 4 asin(|a ∓ b| / 2)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    sign = np.where(np.sum(a * b, axis=-1, keepdims=True) < 0, -1.0, 1.0)
    return 4 * np.arcsin(np.clip(np.linalg.norm(a - sign * b, axis=-1) / 2, 0, 1))


@pytest.fixture(scope="module")
def runtime(walk):
    return kinema.RuntimeClip(walk.clips[0], walk.skeleton)


def test_runtime_clip_matches_the_raw_clip(walk, runtime):
    s, clip = walk.skeleton, walk.clips[0]
    assert runtime.joint_count == s.joint_count
    assert runtime.duration == pytest.approx(clip.duration, rel=1e-6)
    assert runtime.sample_rate == pytest.approx(120, rel=1e-4)
    assert runtime.memory_bytes > 0
    for time in (0.0, 0.37, clip.duration):
        t, r, sc = runtime.sample(time)
        assert t.dtype == np.float32 and t.shape == (s.joint_count, 3)
        t0, r0, _ = clip.sample(s, time)
        np.testing.assert_allclose(t, t0, atol=1e-4)
        assert quat_angle(r, r0).max() < 2e-4  # 16-bit rotations (~0.002°) plus float32


def test_compact_runtime_clip_is_smaller_and_samples_the_same_motion(walk, runtime):
    compact = kinema.RuntimeClip(walk.clips[0], walk.skeleton, format="compact")
    assert compact.memory_bytes < runtime.memory_bytes
    times = np.linspace(0, runtime.duration, 37)
    t0, r0, s0 = runtime.sample_many(times)
    t1, r1, s1 = compact.sample_many(times)
    np.testing.assert_allclose(t1, t0, atol=1e-5)
    np.testing.assert_allclose(s1, s0, atol=1e-6)
    assert quat_angle(r1, r0).max() < 3e-4  # smallest three: within 2e-4 rad of the source
    with pytest.raises(kinema.UsageError, match="format"):
        kinema.RuntimeClip(walk.clips[0], walk.skeleton, format="tiny")


def test_runtime_sample_many_with_a_cache_equals_single_samples(runtime):
    times = np.linspace(0, runtime.duration, 50)
    t, r, s = runtime.sample_many(times)
    for i in (0, 17, 49):
        ti, ri, si = runtime.sample(times[i])
        np.testing.assert_array_equal(t[i], ti)
        np.testing.assert_array_equal(r[i], ri)
        np.testing.assert_array_equal(s[i], si)
    with pytest.raises(ValueError):
        runtime.sample(float("nan"))


def test_sample_many_writes_into_the_callers_arrays(runtime):
    times = np.linspace(0, runtime.duration, 8)
    n = runtime.joint_count
    out = (np.empty((8, n, 3), np.float32), np.empty((8, n, 4), np.float32),
           np.empty((8, n, 3), np.float32))
    result = runtime.sample_many(times, out=out)
    assert all(a is b for a, b in zip(result, out))  # the same arrays, written in place
    for x, y in zip(out, runtime.sample_many(times)):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="float32"):
        runtime.sample_many(times, out=(out[0].astype(np.float64), out[1], out[2]))
    with pytest.raises(ValueError, match=r"out\[1\]"):
        runtime.sample_many(times, out=(out[0], out[0], out[2]))
    readonly = out[2].copy()
    readonly.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        runtime.sample_many(times, out=(out[0], out[1], readonly))
    with pytest.raises(ValueError, match="float32"):
        runtime.sample_many(times, out=(out[0][:, ::2], out[1], out[2]))


def test_blend_identities(walk, runtime):
    s = walk.skeleton
    a = runtime.sample(0.2)
    b = runtime.sample(0.9)
    only_a = kinema.blend([a, b], [1.0, 0.0], s)
    np.testing.assert_allclose(only_a[0], a[0], atol=1e-6)
    assert quat_angle(only_a[1], a[1]).max() < 1e-5
    same = kinema.blend([a, a], [0.3, 0.7], s)
    np.testing.assert_allclose(same[0], a[0], atol=1e-6)
    half = kinema.blend([a, b], [0.5, 0.5], s)
    np.testing.assert_allclose(half[0], (a[0] + b[0]) / 2, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(half[1], axis=1), 1, atol=1e-5)
    # A mask that keeps pose b only on joint 3.
    mask_b = np.zeros(s.joint_count, np.float32)
    mask_b[3] = 1
    masked = kinema.blend([a, b], [1.0, 1.0], s, joint_weights=[None, mask_b])
    assert quat_angle(masked[1][3], (a[1][3] + b[1][3]) / np.linalg.norm(a[1][3] + b[1][3])) < 1e-2
    with pytest.raises(ValueError):
        kinema.blend([a], [1.0, 2.0], s)


def test_compress_keeps_its_error_bound_and_round_trips_bytes(walk):
    s, clip = walk.skeleton, walk.clips[0]
    c = kinema.compress(clip, s, max_error=1e-4)
    assert c.stats["ratio"] > 2 and c.stats["max_error"] <= 1e-4
    measured = c.measure_error(clip, s)
    assert measured["max"] <= 1e-4 and measured["samples"] > 0
    again = kinema.CompressedClip.from_bytes(c.to_bytes(), "walk.kmc")
    assert again.stats is None and again.size_bytes == c.size_bytes
    times = np.linspace(0, c.duration, 23)
    for x, y in zip(c.sample_many(times), again.sample_many(times)):
        np.testing.assert_array_equal(x, y)
    raw = clip.sample_many(s, times)
    decoded = c.sample_many(times)
    np.testing.assert_allclose(decoded[0], raw[0], atol=2e-3)
    back = c.decompress(s)
    assert back.frame_count == c.frame_count


def test_corrupt_compressed_bytes_raise_error_naming_the_source(walk):
    c = kinema.compress(walk.clips[0], walk.skeleton)
    data = bytearray(c.to_bytes())
    with pytest.raises(kinema.Error) as e:
        kinema.CompressedClip.from_bytes(bytes(data[: len(data) // 2]), "half.kmc")
    assert e.value.file == "half.kmc"
    with pytest.raises(kinema.Error):
        kinema.CompressedClip.from_bytes(b"", "empty.kmc")
    with pytest.raises(kinema.Error):
        kinema.compress(walk.clips[0], walk.skeleton, max_error=-1)


def test_compress_files_writes_what_the_cli_writes(tmp_path, cli):
    py_out, cli_out = tmp_path / "py", tmp_path / "cli"
    report = kinema.compress_files([str(WALK_BVH)], str(py_out))
    assert report["outputs"] == [str(py_out / "02_01.kmc")]
    r = cli("compress", WALK_BVH, "-o", cli_out)
    assert r.returncode == 0, r.stderr
    assert (py_out / "02_01.kmc").read_bytes() == (cli_out / "02_01.kmc").read_bytes()
    loaded = kinema.load(str(py_out / "02_01.kmc"))
    assert loaded.clips and loaded.skeleton.joint_count > 20
