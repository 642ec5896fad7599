#!/usr/bin/env python3
"""Compares two renders of the same model, pose and camera (RGBA PNGs, the same size).

  compare_images.py A.png B.png [--premultiplied-a] [--premultiplied-b] [--background RRGGBB]
                    [--threshold 128] [--out SIDE_BY_SIDE.png] [--small SMALL.png]
                    [--json METRICS.json] [--labels A,B]

Silhouettes: a pixel is the model's where its alpha ≥ --threshold (of 255). Reported:
  - iou: |A ∩ B| / |A ∪ B| of the two masks;
  - edge distances: an edge pixel is a mask pixel with a 4-neighbour outside the mask (or on the
    image border); for every edge pixel of A the distance in pixels (centre to centre) to the
    nearest edge pixel of B, and the other way round: max and 95th percentile each way, and
    both ways together (the max of these is the Hausdorff distance of the two outlines);
  - coverage: the share of the pixels inside either mask whose alpha differs by more than 64
    (one sample of 4× MSAA) — how many pixels the two silhouettes really disagree on;
  - colour: both images composited over --background (default 303840, three.js's page), mean
    absolute difference per channel (0–255) over the pixels inside both masks, and the share of
    those pixels whose largest channel difference exceeds 16 and 48; the mean also split into
    the pixels within 2 px of either silhouette's edge (anti-aliasing, outlines) and the rest
    (the interior), with the mean signed difference B − A there (a brightness bias).
--premultiplied-a/-b: that image's colour is premultiplied by its alpha (a compositing layer);
else straight alpha (PNG's convention: a browser canvas' toDataURL).
--out: A | B | difference side by side (difference: red only in A, blue only in B, grey the
colour difference ×4 inside both); --small: A, B, the difference and both outlines (white where
they coincide, else A red, B cyan) as a 2 × 2 grid of crops around the model, each at most half the image's size.
Prints the metrics as JSON (and writes them to --json). Needs numpy and PIL (Debian:
python3-numpy python3-pil).
"""
import argparse
import json
import sys

import numpy as np
from PIL import Image


def load(path):
    im = Image.open(path).convert("RGBA")
    return np.asarray(im).astype(np.float64)


def composite(rgba, premultiplied, bg):
    a = rgba[..., 3:4] / 255.0
    rgb = rgba[..., :3] if premultiplied else rgba[..., :3] * a
    return rgb + bg * (1.0 - a)


def edges(mask):
    padded = np.pad(mask, 1, constant_values=False)
    inner = (padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:])
    return np.argwhere(mask & ~inner).astype(np.float64)


def nearest(src, dst):
    """For each point of src the distance to the nearest point of dst (brute force, chunked)."""
    if len(src) == 0 or len(dst) == 0:
        return np.full(len(src), np.inf)
    out = np.empty(len(src))
    step = max(1, 4_000_000 // len(dst))
    for i in range(0, len(src), step):
        d = src[i:i + step, None, :] - dst[None, :, :]
        out[i:i + step] = np.sqrt((d * d).sum(-1).min(1))
    return out


def stats(d):
    if len(d) == 0 or not np.isfinite(d).all():
        return {"max": None, "p95": None, "mean": None}
    return {"max": round(float(d.max()), 2), "p95": round(float(np.percentile(d, 95)), 2),
            "mean": round(float(d.mean()), 3)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--premultiplied-a", action="store_true")
    ap.add_argument("--premultiplied-b", action="store_true")
    ap.add_argument("--background", default="303840")
    ap.add_argument("--threshold", type=float, default=128)
    ap.add_argument("--out")
    ap.add_argument("--small")
    ap.add_argument("--json")
    ap.add_argument("--labels", default="A,B")
    o = ap.parse_args()

    a, b = load(o.a), load(o.b)
    if a.shape != b.shape:
        sys.exit(f"sizes differ: {o.a} is {a.shape[1]}x{a.shape[0]}, "
                 f"{o.b} is {b.shape[1]}x{b.shape[0]}")
    bg = np.array([int(o.background[i:i + 2], 16) for i in (0, 2, 4)], dtype=np.float64)
    ma, mb = a[..., 3] >= o.threshold, b[..., 3] >= o.threshold
    both, either = ma & mb, ma | mb
    ea, eb = edges(ma), edges(mb)
    dab, dba = nearest(ea, eb), nearest(eb, ea)
    ca, cb = composite(a, o.premultiplied_a, bg), composite(b, o.premultiplied_b, bg)
    diff = np.abs(ca - cb)
    inside = diff[both]
    worst = inside.max(1) if len(inside) else np.zeros(0)
    near_edge = np.zeros_like(both)
    for pts in (ea, eb):  # every pixel within 2 px (Chebyshev) of an edge pixel
        p = pts.astype(int)
        for dy in range(-2, 3):
            for dx in range(-2, 3):
                near_edge[np.clip(p[:, 0] + dy, 0, both.shape[0] - 1),
                          np.clip(p[:, 1] + dx, 0, both.shape[1] - 1)] = True
    band, interior = both & near_edge, both & ~near_edge
    alpha_off = np.abs(a[..., 3] - b[..., 3])[either] > 64
    la, lb = o.labels.split(",")
    m = {
        "a": o.a, "b": o.b, "size": [int(a.shape[1]), int(a.shape[0])],
        "pixels": {la: int(ma.sum()), lb: int(mb.sum()), "both": int(both.sum()),
                   f"only_{la}": int((ma & ~mb).sum()), f"only_{lb}": int((mb & ~ma).sum())},
        "iou": round(float(both.sum() / max(either.sum(), 1)), 4),
        "edge_distance_px": {f"{la}_to_{lb}": stats(dab), f"{lb}_to_{la}": stats(dba),
                             "both_ways": stats(np.concatenate([dab, dba]))},
        "coverage_differs_by_more_than_one_sample": round(float(alpha_off.mean()), 4)
        if len(alpha_off) else None,
        "colour_mean_abs_diff": (
            {"rgb": [round(float(x), 2) for x in inside.mean(0)],
             "mean": round(float(inside.mean()), 2),
             "share_over_16": round(float((worst > 16).mean()), 4),
             "share_over_48": round(float((worst > 48).mean()), 4),
             "edge_band_mean": round(float(diff[band].mean()), 2) if band.any() else None,
             "interior_mean": round(float(diff[interior].mean()), 2) if interior.any() else None,
             "interior_signed_rgb": [round(float(x), 2) for x in (cb - ca)[interior].mean(0)]
             if interior.any() else None} if len(inside) else None),
    }
    text = json.dumps(m, indent=2)
    print(text)
    if o.json:
        with open(o.json, "w") as f:
            f.write(text + "\n")

    if o.out or o.small:
        vis = np.zeros_like(ca)
        vis[both] = np.clip(diff[both].mean(1, keepdims=True) * 4, 0, 255)
        vis[ma & ~mb] = [255, 64, 64]
        vis[mb & ~ma] = [64, 128, 255]
        vis[~either] = bg * 0.5
        tiles = [ca, cb, vis]
        if o.out:
            Image.fromarray(np.hstack(tiles).round().astype(np.uint8)).save(o.out)
        if o.small:
            # Fourth tile: the two silhouettes' outlines over each other (A red, B cyan).
            outline = np.zeros_like(ca)
            outline[...] = bg * 0.5
            edge_a, edge_b = np.zeros_like(both), np.zeros_like(both)
            edge_a[tuple(ea.astype(int).T)] = True
            edge_b[tuple(eb.astype(int).T)] = True
            outline[edge_a] = [255, 80, 80]
            outline[edge_b] = [80, 230, 255]
            outline[edge_a & edge_b] = [255, 255, 255]
            tiles.append(outline)
            ys, xs = np.nonzero(either) if either.any() else ([0, ca.shape[0] - 1],
                                                               [0, ca.shape[1] - 1])
            y0, y1 = max(min(ys) - 8, 0), min(max(ys) + 9, ca.shape[0])
            x0, x1 = max(min(xs) - 8, 0), min(max(xs) + 9, ca.shape[1])
            scale = min(1.0, (ca.shape[0] // 2) / (y1 - y0), (ca.shape[1] // 2) / (x1 - x0))
            size = (max(1, round((x1 - x0) * scale)), max(1, round((y1 - y0) * scale)))
            crops = [np.asarray(Image.fromarray(t[y0:y1, x0:x1].round().astype(np.uint8)).resize(
                size, Image.LANCZOS if scale < 1 else Image.NEAREST)) for t in tiles]
            grid = np.vstack([np.hstack(crops[:2]), np.hstack(crops[2:])])
            Image.fromarray(grid).save(o.small, optimize=True)


if __name__ == "__main__":
    main()
