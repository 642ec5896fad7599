#!/usr/bin/env python3
"""Helpers of scripts/compare_three_vrm.sh (kinema's renders against three-vrm's screenshots).

  three_vrm_tools.py patch-page DIR      DIR holds copies of the clients' browser_check.mjs and
                                        browser_page.mjs: add --plain, --rotate-vrm0 and
                                        --no-outlines to them
  three_vrm_tools.py deinstance IN OUT   a GLB/VRM with every mesh that several nodes instance
                                        copied, one mesh per node (the same scene)
  three_vrm_tools.py probe OUT.hdr       three's page lights as an equirectangular light probe
  three_vrm_tools.py camera REPORT.json  kinema's --eye/--target/--fov/--light for the screenshot

--plain (the screenshot of the patched page): the model alone, on a transparent canvas (no grid,
no bone lines), written from the canvas itself (toDataURL: exact pixels with alpha) instead of a
page screenshot; the report gains `camera` (three's PerspectiveCamera: position, the target it
looks at, vertical fov, aspect, near, far). --rotate-vrm0 turns a VRM 0.x model 180° about +Y
(three-vrm's VRMUtils.rotateVRM0) before the framing, so that it faces +Z; the report gains
`rotatedVRM0`. --no-outlines hides three-vrm's MToon outline materials (the report counts them
in `hiddenOutlines`). Nothing else of the page changes: loader, pose, lights, framing and colour
management are the page's own, and each patch must apply exactly once.
"""
import copy
import json
import math
import struct
import sys

PAGE_PATCHES = [
    ("import { VRMLoaderPlugin } from '@pixiv/three-vrm';",
     "import { VRMLoaderPlugin, VRMUtils } from '@pixiv/three-vrm';"),
    ("renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });",
     "renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true,"
     " alpha: !!opts.plain });"),
    ("renderer.setClearColor(0x303840, 1);",
     "renderer.setClearColor(opts.plain ? 0x000000 : 0x303840, opts.plain ? 0 : 1);"),
    ("  const { root, vrm, nodeIndex, origName, label } = M;\n",
     "  const { root, vrm, nodeIndex, origName, label } = M;\n"
     "  if (opts.rotateVrm0 && vrm) { VRMUtils.rotateVRM0(vrm);"
     " out.rotatedVRM0 = vrm.meta?.metaVersion === '0'; }\n"
     "  if (opts.noOutlines) root.traverse((o) => { for (const m of [].concat(o.material || []))"
     " if (m.isOutline) { m.visible = false; out.hiddenOutlines = (out.hiddenOutlines || 0) + 1; } });\n"),
    ("      cam.lookAt(center);\n",
     "      cam.lookAt(center);\n"
     "      out.camera = { position: v3(cam.position), target: v3(center), fov: cam.fov,"
     " aspect: cam.aspect, near: cam.near, far: cam.far, up: v3(cam.up) };\n"),
    ("grid.position.set(center.x, 0, center.z); scene.add(grid);",
     "grid.position.set(center.x, 0, center.z); if (!opts.plain) scene.add(grid);"),
    ("      if (seg.length) {", "      if (seg.length && !opts.plain) {"),
]

CHECK_PATCHES = [
    ("  else if (a === '-h' || a === '--help') usage();",
     "  else if (a === '--plain') opt.plain = true;\n"
     "  else if (a === '--rotate-vrm0') opt.rotateVrm0 = true;\n"
     "  else if (a === '--no-outlines') opt.noOutlines = true;\n"
     "  else if (a === '-h' || a === '--help') usage();"),
    ("vrmaUrl: opt.vrma ? '/anim.vrma' : null, step: opt.step ?? null,",
     "vrmaUrl: opt.vrma ? '/anim.vrma' : null, step: opt.step ?? null,"
     " plain: !!opt.plain, rotateVrm0: !!opt.rotateVrm0, noOutlines: !!opt.noOutlines,"),
    ("    await page.locator('#c').screenshot({ path: opt.out });",
     "    if (opt.plain) {\n"
     "      const data = await page.evaluate(() => document.getElementById('c').toDataURL('image/png'));\n"
     "      fs.writeFileSync(opt.out, Buffer.from(data.split(',')[1], 'base64'));\n"
     "    } else await page.locator('#c').screenshot({ path: opt.out });"),
]


def patch(path, patches):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for old, new in patches:
        n = text.count(old)
        if n != 1:
            sys.exit(f"{path}: expected exactly one '{old[:60]}…', found {n} "
                     "(a different version of the clients?)")
        text = text.replace(old, new)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def read_glb(path):
    data = open(path, "rb").read()
    magic, version, _ = struct.unpack_from("<III", data, 0)
    if magic != 0x46546C67 or version != 2:
        sys.exit(f"{path}: not a GLB 2.0 file")
    chunks, at = [], 12
    while at < len(data):
        length, kind = struct.unpack_from("<II", data, at)
        chunks.append((kind, data[at + 8:at + 8 + length]))
        at += 8 + length
    return json.loads(chunks[0][1]), [c for c in chunks[1:]]


def write_glb(path, doc, rest):
    text = json.dumps(doc, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 4)
    body = struct.pack("<II", len(text), 0x4E4F534A) + text
    for kind, payload in rest:
        body += struct.pack("<II", len(payload), kind) + payload
    with open(path, "wb") as f:
        f.write(struct.pack("<III", 0x46546C67, 2, 12 + len(body)) + body)


def deinstance(src, dst):
    doc, rest = read_glb(src)
    used = set()
    copies = 0
    for node in doc.get("nodes", []):
        m = node.get("mesh")
        if m is None:
            continue
        if m in used:
            doc["meshes"].append(copy.deepcopy(doc["meshes"][m]))
            node["mesh"] = len(doc["meshes"]) - 1
            copies += 1
        used.add(m)
    write_glb(dst, doc, rest)
    print(f"{dst}: {copies} mesh instances copied")


def rgbe(v):
    if v <= 1e-32:
        return bytes(4)
    m, e = math.frexp(v)
    b = int(m * 256.0)
    return bytes([b, b, b, e + 128])


def probe(path):
    # The page: HemisphereLight(sky 0xffffff, ground 0x444444, intensity 2). three's irradiance
    # from it is E(n) = 2 · mix(ground, sky, (n·up + 1) / 2) (colours linear: 0x44 → 0.0578),
    # which is exactly what a sky of radiance 2/π above the horizon and 2 · 0.0578/π below
    # gives a white Lambertian surface (E = π L for a full sphere of radiance L).
    lin = lambda c: c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    sky, ground = 2.0 / math.pi, 2.0 * lin(0x44 / 255.0) / math.pi
    w, h = 64, 32
    with open(path, "wb") as f:
        f.write(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n" + f"-Y {h} +X {w}\n".encode())
        for y in range(h):
            f.write(rgbe(sky if y < h // 2 else ground) * w)


def camera(report_path):
    r = json.load(open(report_path))
    c = r.get("camera")
    if not c:
        sys.exit(f"{report_path}: no camera (the page was not patched, or nothing rendered)")
    # The page's DirectionalLight sits at (1, 2, 3), aimed at the origin.
    eye, target, light = c["position"], c["target"], [1, 2, 3]
    if r.get("rotatedVRM0"):
        # three turned the model 180° about +Y, kinema keeps the file's frame: turn the camera
        # and the light the other way round the model.
        eye, target, light = ([-v[0], v[1], -v[2]] for v in (eye, target, light))
    f = lambda v: ",".join(repr(float(x)) for x in v)
    print(f"--eye {f(eye)} --target {f(target)} --fov {c['fov']!r} --light {f(light)}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "patch-page":
        patch(f"{args[0]}/browser_page.mjs", PAGE_PATCHES)
        patch(f"{args[0]}/browser_check.mjs", CHECK_PATCHES)
    elif cmd == "deinstance":
        deinstance(args[0], args[1])
    elif cmd == "probe":
        probe(args[0])
    elif cmd == "camera":
        camera(args[0])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
