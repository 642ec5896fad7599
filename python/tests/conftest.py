"""Shared fixtures: where the test data and the CLI are, and a private temporary folder.

ctest sets KINEMA_TEST_DATA, KINEMA_DEMO_DATA and KINEMA_CLI (python/CMakeLists.txt); run by
hand, the defaults are the source tree's folders and build/release/kinema.
"""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEST_DATA = pathlib.Path(os.environ.get("KINEMA_TEST_DATA", ROOT / "tests" / "data"))
DEMO_DATA = pathlib.Path(os.environ.get("KINEMA_DEMO_DATA", ROOT / "data" / "demo"))
CLI = os.environ.get("KINEMA_CLI") or str(ROOT / "build" / "release" / "kinema")

WALK_BVH = TEST_DATA / "bvh" / "cmu_cgspeed_mb" / "02_01.bvh"
TURN_BVH = TEST_DATA / "bvh" / "cmu_iclone_cc3" / "006_11_turn_30fps.bvh"
CHARACTER = DEMO_DATA / "character.vrm"
DEMO_WALK = DEMO_DATA / "walk.bvh"
RIGGED = TEST_DATA / "gltf" / "RiggedFigure.glb"


@pytest.fixture
def cli():
    """Runs the kinema CLI; skips when it was not built."""
    if not os.path.isfile(CLI):
        pytest.skip(f"the kinema CLI is not built ({CLI})")

    def run(*args):
        return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)

    return run


@pytest.fixture(scope="session")
def walk():
    import kinema

    return kinema.load(str(WALK_BVH))
