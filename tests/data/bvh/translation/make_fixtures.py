#!/usr/bin/env python3
"""Writes the three BVH fixtures of the position-channel tests (deterministic, no dependencies).

Every joint of a 16-joint figure (1.68 m tall, centimetres) has six channels. The files differ
only in what the position channels hold:

  local_translation.bvh         the joint's whole local translation: equal to its OFFSET in every
                                frame (MotionBuilder-style exports; Blender replaces the OFFSET)
  local_translation_moving.bvh  the same, but the translations move around the OFFSET (bones
                                that stretch and slide)
  displacement.bvh              a displacement from the OFFSET: zero in frame 0, then a small
                                wobble (three.js's BVHLoader adds it to the OFFSET)

The root is the same kind as the rest of its file: absolute hip positions near its OFFSET
(0, 95, 0) in the first two, a displacement near zero in the third.

Run from anywhere: python3 make_fixtures.py  (writes beside this script).
"""
import math
import os

# name, parent, OFFSET (cm), End Site OFFSET or None
JOINTS = [
    ("Hips", None, (0, 95, 0), None),
    ("Spine", "Hips", (0, 10, 0), None),
    ("Chest", "Spine", (0, 15, 0), None),
    ("Neck", "Chest", (0, 20, 0), None),
    ("Head", "Neck", (0, 10, 0), (0, 18, 0)),
    ("LeftArm", "Chest", (15, 15, 0), None),
    ("LeftForeArm", "LeftArm", (28, 0, 0), None),
    ("LeftHand", "LeftForeArm", (25, 0, 0), (10, 0, 0)),
    ("RightArm", "Chest", (-15, 15, 0), None),
    ("RightForeArm", "RightArm", (-28, 0, 0), None),
    ("RightHand", "RightForeArm", (-25, 0, 0), (-10, 0, 0)),
    ("LeftUpLeg", "Hips", (9, -5, 0), None),
    ("LeftLeg", "LeftUpLeg", (0, -42, 0), None),
    ("LeftFoot", "LeftLeg", (0, -40, 0), (0, -8, 12)),
    ("RightUpLeg", "Hips", (-9, -5, 0), None),
    ("RightLeg", "RightUpLeg", (0, -42, 0), None),
    ("RightFoot", "RightLeg", (0, -40, 0), (0, -8, 12)),
]
FRAMES = 9
FRAME_TIME = 1.0 / 30.0


def num(v):
    return "%.6f" % v


def hierarchy():
    lines = ["HIERARCHY"]
    children = {name: [] for name, *_ in JOINTS}
    for name, parent, _, _ in JOINTS:
        if parent:
            children[parent].append(name)
    info = {name: (offset, end) for name, _, offset, end in JOINTS}

    def emit(name, depth):
        pad = "\t" * depth
        offset, end = info[name]
        lines.append(pad + ("ROOT " if depth == 0 else "JOINT ") + name)
        lines.append(pad + "{")
        lines.append(pad + "\tOFFSET " + " ".join(num(v) for v in offset))
        lines.append(pad + "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation")
        for child in children[name]:
            emit(child, depth + 1)
        if end is not None:
            lines.append(pad + "\tEnd Site")
            lines.append(pad + "\t{")
            lines.append(pad + "\t\tOFFSET " + " ".join(num(v) for v in end))
            lines.append(pad + "\t}")
        lines.append(pad + "}")

    emit("Hips", 0)
    return lines, children


def rotations(j, f):
    """Z, X, Y rotation in degrees: a walk-like swing, different per joint."""
    phase = 0.7 * j + 0.9 * f
    return (12 * math.sin(phase), 18 * math.sin(phase + 1.1), 9 * math.sin(0.5 * phase + 0.3))


def position(kind, j, offset, f):
    if j == 0:  # the root carries the hips through space
        travel = (4.0 * f, 2.5 * math.sin(0.8 * f), 6.0 * f)
        if kind == "displacement":
            return travel
        return tuple(o + t for o, t in zip(offset, travel))
    if kind == "local_translation":
        return offset
    if kind == "local_translation_moving":
        stretch = 1 + 0.08 * math.sin(0.9 * f + 0.5 * j)
        slide = 1.5 * math.sin(0.6 * f + j)
        return (offset[0] * stretch + slide, offset[1] * stretch, offset[2] * stretch - 0.5 * slide)
    # displacement: zero at frame 0, then a wobble of at most about a centimetre
    return tuple(0.8 * math.sin(0.9 * f + j + a) * (1 - math.cos(0.7 * f)) / 2 for a in range(3))


def write(kind, folder):
    lines, _ = hierarchy()
    order = []
    # depth-first order of the hierarchy above, which is the channel order of a frame line
    children = {name: [] for name, *_ in JOINTS}
    for name, parent, _, _ in JOINTS:
        if parent:
            children[parent].append(name)
    stack = ["Hips"]
    while stack:
        name = stack.pop()
        order.append(name)
        stack.extend(reversed(children[name]))
    index = {name: i for i, (name, *_) in enumerate(JOINTS)}
    lines += ["MOTION", "Frames: %d" % FRAMES, "Frame Time: %.6f" % FRAME_TIME]
    for f in range(FRAMES):
        values = []
        for name in order:
            j = index[name]
            values += [num(v) for v in position(kind, j, JOINTS[j][2], f)]
            values += [num(v) for v in rotations(j, f)]
        lines.append(" ".join(values))
    with open(os.path.join(folder, kind + ".bvh"), "w", newline="\n") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for kind in ("local_translation", "local_translation_moving", "displacement"):
        write(kind, here)
