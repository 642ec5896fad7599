#!/usr/bin/env python3
"""Turns a browser_check.mjs report (three-vrm simulating spring bones with --step) into the
compact reference tests/physics/spring_bones_test.cpp reads.

    python3 scripts/spring_reference.py REPORT.json FIXTURE OUT.json [STEP]

Keeps every node's world position at every sampled time (metres, three.js world space = the
file's frame), with the step, the times and the versions that produced them.
"""
import json
import sys

report, fixture, out = sys.argv[1], sys.argv[2], sys.argv[3]
r = json.load(open(report))
if not r.get("ok") or not r.get("samples"):
    sys.exit(f"{report}: the browser check failed: {r.get('error')}")
names = [b["label"] for b in r["bones"]]
ref = {
    "source": "three-vrm spring bones in headless Chromium (browser_check.mjs --step)",
    "versions": r["versions"],
    "fixture": fixture,
    "clip": r["played"]["name"] if r.get("played") else None,
    "spring_joints": r["vrm"]["springBoneJoints"],
    "times": [s["time"] for s in r["samples"]],
    "positions": {n: [s["positions"][n] for s in r["samples"]] for n in names},
}
ref["step"] = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0166667
json.dump(ref, open(out, "w"), separators=(",", ":"))
