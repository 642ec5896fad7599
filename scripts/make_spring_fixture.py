#!/usr/bin/env python3
"""Strips a VRM/GLB to what spring bones need: nodes, animations and the spring-bone data.

    python3 scripts/make_spring_fixture.py IN.glb|IN.vrm OUT

Meshes, skins, materials, textures and images go (and the VRM parts that point at them:
expressions, first person, MToon properties); nodes, their transforms, the animations, the
humanoid and the spring bones stay, so three-vrm and kinema simulate exactly the same bones from
a file a few times smaller. Used to make tests/data/vrm/godette_walk_springs_vrm0.glb and
godette_walk_springs_vrm1.vrm (see tests/data/README.md).
"""
import json
import struct
import sys


def read_glb(path):
    data = open(path, "rb").read()
    magic, version, total = struct.unpack_from("<III", data, 0)
    if magic != 0x46546C67:
        sys.exit(f"{path}: not a GLB")
    offset, doc, binary = 12, None, b""
    while offset < total:
        length, kind = struct.unpack_from("<II", data, offset)
        chunk = data[offset + 8 : offset + 8 + length]
        if kind == 0x4E4F534A:
            doc = json.loads(chunk)
        elif kind == 0x004E4942:
            binary = chunk
        offset += 8 + length
    return doc, binary


def write_glb(path, doc, binary):
    text = json.dumps(doc, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 4)
    binary += b"\0" * (-len(binary) % 4)
    total = 12 + 8 + len(text) + (8 + len(binary) if binary else 0)
    out = struct.pack("<III", 0x46546C67, 2, total) + struct.pack("<II", len(text), 0x4E4F534A) + text
    if binary:
        out += struct.pack("<II", len(binary), 0x004E4942) + binary
    open(path, "wb").write(out)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    doc, binary = read_glb(src)
    for key in ("meshes", "skins", "materials", "textures", "images", "samplers"):
        doc.pop(key, None)
    for node in doc.get("nodes", []):
        node.pop("mesh", None)
        node.pop("skin", None)
        node.pop("weights", None)
    ext = doc.get("extensions", {})
    if "VRM" in ext:
        for key in ("blendShapeMaster", "firstPerson", "materialProperties"):
            ext["VRM"].pop(key, None)
    if "VRMC_vrm" in ext:
        for key in ("expressions", "firstPerson", "lookAt"):
            ext["VRMC_vrm"].pop(key, None)
        ext["VRMC_vrm"].get("meta", {}).pop("thumbnailImage", None)
    keep = {"VRM", "VRMC_vrm", "VRMC_springBone"}
    doc["extensionsUsed"] = [e for e in doc.get("extensionsUsed", []) if e in keep]
    doc.pop("extensionsRequired", None)
    doc["extensions"] = {k: v for k, v in ext.items() if k in keep}
    # Keep only the accessors the animations use, re-packed into one buffer.
    old_accessors, old_views = doc.get("accessors", []), doc.get("bufferViews", [])
    accessors, views, remap, blob = [], [], {}, bytearray()
    for anim in doc.get("animations", []):
        for sampler in anim["samplers"]:
            for key in ("input", "output"):
                index = sampler[key]
                if index not in remap:
                    acc = dict(old_accessors[index])
                    view = old_views[acc["bufferView"]]
                    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
                    sizes = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[acc["type"]]
                    size = acc["count"] * sizes * 4
                    if view.get("byteStride", size // acc["count"]) != sizes * 4:
                        sys.exit("interleaved animation data is not supported")
                    blob += b"\0" * (-len(blob) % 4)
                    views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": size})
                    blob += binary[start : start + size]
                    acc["bufferView"] = len(views) - 1
                    acc.pop("byteOffset", None)
                    remap[index] = len(accessors)
                    accessors.append(acc)
                sampler[key] = remap[index]
    doc["accessors"], doc["bufferViews"] = accessors, views
    doc["buffers"] = [{"byteLength": len(blob)}]
    write_glb(dst, doc, bytes(blob))


if __name__ == "__main__":
    main()
