"""kinema: character animation and simulation.

The Python face of the kinema C++ library. Poses are NumPy arrays: translations (N, 3),
rotations (N, 4) as unit quaternions (x, y, z, w) and scales (N, 3), float64 for offline data
(skeletons, raw clips, IK) and float32 for runtime data (RuntimeClip, CompressedClip, blend,
skin). Matrices are (..., 4, 4), indexed m[row, col] with column vectors. Lengths are metres,
times seconds, angles radians.

Errors: bad data raises kinema.Error (attributes file, place, reason); a request that cannot be
carried out as asked raises kinema.UsageError (a ValueError). Long calls release the GIL, so
threads run them in parallel; those that take `progress` call progress(stage, done, total).

Zero-copy: Skeleton.parents, Mesh arrays, Skin.joints and MatchDatabase.features are read-only
views of kinema's memory (they keep their owner alive). Everything else is a copy, said in each
docstring; poses and matrices are always new arrays.
"""

from ._kinema import (  # noqa: F401  (re-exported)
    Asset,
    Clip,
    CompressedClip,
    Error,
    MatchDatabase,
    Mesh,
    RuntimeClip,
    Skeleton,
    Skin,
    UsageError,
    blend,
    chain_ik,
    clean,
    compress,
    compress_files,
    convert,
    decompress_file,
    learn_match,
    load,
    ragdoll,
    retarget,
    run_match,
    save,
    simulate,
    skin,
    skinning_palette,
    solve_two_bone,
    two_bone_ik,
)

__version__ = "0.1.0"

__all__ = [
    "Asset", "Clip", "CompressedClip", "Error", "MatchDatabase", "Mesh", "RuntimeClip",
    "Skeleton", "Skin", "UsageError", "blend", "chain_ik", "clean", "compress", "compress_files", "convert",
    "decompress_file", "learn_match", "load", "ragdoll", "retarget", "run_match", "save", "simulate", "skin",
    "skinning_palette", "solve_two_bone", "two_bone_ik",
]
