#!/usr/bin/env bash
# kinema's grid smoke side by side with Blender's Mantaflow smoke on the same scene (BENCHMARKS.md,
# "Fluids"): bench/mantaflow_scene.cpp (kinema) and scripts/mantaflow_smoke.py (Blender), run in
# turn — kinema, Mantaflow, kinema, Mantaflow … — so that both see the same machine, at each
# resolution and thread count. Builds nothing: give it a built kinema_mantaflow_scene.
#
#   cmake --preset release && cmake --build --preset release --target kinema_mantaflow_scene
#   scripts/bench_vs_mantaflow.sh [--kinema PATH] [--reps N] [--res "64 128"] [--threads "1 2"]
#                                 [--frames64 50] [--frames128 10] [--out DIR] [-- EXTRA KINEMA ARGS]
#
# Defaults: 2 repetitions; 64³ for 50 frames and 128³ for the first 10 frames only (Mantaflow takes
# 5–11 s a frame there; the first frames have a smaller plume and fewer substeps than later ones,
# so 128³ figures are for those frames); 1 thread (both pinned to CPU 0 by taskset, Blender with
# -t 1, kinema with --threads 1) and 2 threads (CPUs 0–1, -t 2, --threads 2). About 7–8 minutes
# on a 2-core machine. Per run it keeps the JSON line each tool prints (DIR/results.jsonl) and
# prints, per configuration, the median seconds a frame of each, their ratio (Mantaflow ÷ kinema,
# also the median of the per-pair ratios), Mantaflow's time in its own smoke steps alone (without
# Blender's emission voxelization, Python glue and cache writes), and cell-steps per second
# (cells × substeps ÷ seconds; Mantaflow's frame 1 is counted as one step: its velocity starts at
# 0, so its first adaptive step spans the whole frame). Needs bash, python3, taskset and blender
# (3.4, with Mantaflow) on PATH.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
kinema=""
reps=2
resolutions="64 128"
threads_list="1 2"
frames64=50
frames128=10
out=""
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kinema) kinema="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --res) resolutions="$2"; shift 2 ;;
    --threads) threads_list="$2"; shift 2 ;;
    --frames64) frames64="$2"; shift 2 ;;
    --frames128) frames128="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "bench_vs_mantaflow.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [[ -z "$kinema" ]]; then
  for p in "$root/build/native/bench/kinema_mantaflow_scene" "$root/build/release/bench/kinema_mantaflow_scene"; do
    if [[ -x "$p" ]]; then kinema="$p"; break; fi
  done
fi
if [[ -z "$kinema" || ! -x "$kinema" ]]; then
  echo "bench_vs_mantaflow.sh: no kinema_mantaflow_scene (build it: cmake --build --preset release" \
       "--target kinema_mantaflow_scene, or give --kinema PATH)" >&2
  exit 2
fi
if ! command -v blender >/dev/null 2>&1; then
  echo "bench_vs_mantaflow.sh: no blender on PATH (Debian: apt-get install blender python3-numpy)" >&2
  exit 2
fi
for tool in python3 taskset; do
  command -v "$tool" >/dev/null 2>&1 || { echo "bench_vs_mantaflow.sh: $tool not found" >&2; exit 2; }
done
script="$root/scripts/mantaflow_smoke.py"
[[ -f "$script" ]] || { echo "bench_vs_mantaflow.sh: $script missing" >&2; exit 2; }

if [[ -z "$out" ]]; then out="$(mktemp -d /tmp/kinema_vs_mantaflow.XXXXXX)"; fi
mkdir -p "$out"
results="$out/results.jsonl"
: > "$results"
ncpu="$(nproc)"

echo "kinema: $kinema"
echo "blender: $(blender -b --factory-startup --version 2>/dev/null | head -1)"
echo "cpus: $ncpu; $(uptime)"
start_time=$(date +%s)

# run TOOL RES FRAMES THREADS REP: one timed run, its JSON line appended to results.jsonl.
run() {
  local tool="$1" res="$2" frames="$3" threads="$4" rep="$5" cpus line log
  cpus=0
  if [[ "$threads" -gt 1 ]]; then cpus="0-$(( (threads < ncpu ? threads : ncpu) - 1 ))"; fi
  log="$out/${tool}_${res}_t${threads}_r${rep}.log"
  if [[ "$tool" == kinema ]]; then
    taskset -c "$cpus" "$kinema" --res "$res" --frames "$frames" --threads "$threads" \
      ${extra[@]+"${extra[@]}"} > "$log" 2>&1 || { echo "kinema failed, see $log" >&2; exit 1; }
    line="$(grep '^KINEMA_RESULT ' "$log" | head -1)"
  else
    local cache="$out/cache_${res}_t${threads}"
    rm -rf "$cache"
    taskset -c "$cpus" blender -b --factory-startup -t "$threads" --python-exit-code 3 \
      --python "$script" -- --res "$res" --frames "$frames" --cache "$cache" > "$log" 2>&1 ||
      { echo "Blender failed, see $log" >&2; exit 1; }
    rm -rf "$cache"
    line="$(grep '^MANTAFLOW_RESULT ' "$log" | head -1)"
  fi
  [[ -n "$line" ]] || { echo "no result line in $log" >&2; exit 1; }
  python3 - "$tool" "$res" "$threads" "$rep" "$line" >> "$results" <<'EOF'
import json, sys
tool, res, threads, rep, line = sys.argv[1:]
d = json.loads(line.split(" ", 1)[1])
d.update(tool=tool, res=int(res), threads=int(threads), rep=int(rep))
print(json.dumps(d))
EOF
  python3 -c 'import json,sys; d=json.loads(sys.argv[1].split(" ",1)[1]); print("  %-9s %4s³ %d thread(s) rep %s: %.3f s a frame" % (sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], d["s_per_frame"]))' \
    "$line" "$tool" "$res" "$threads" "$rep"
}

for res in $resolutions; do
  frames=$frames64
  if [[ "$res" -gt 64 ]]; then frames=$frames128; fi
  for threads in $threads_list; do
    for rep in $(seq 1 "$reps"); do
      run kinema "$res" "$frames" "$threads" "$rep"
      run mantaflow "$res" "$frames" "$threads" "$rep"
    done
  done
done

echo "elapsed: $(( $(date +%s) - start_time )) s; $(uptime)"
python3 - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def steps(d):
    s = d.get("substeps") or []
    return sum(1 if x is None else x for x in s)
print()
print("| resolution | frames | threads | kinema s/frame | Mantaflow s/frame | Mantaflow ÷ kinema "
      "(median of pairs) | Mantaflow solver only, s/frame | kinema cell-steps/s (substeps) | "
      "Mantaflow cell-steps/s (substeps) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
configs = sorted({(d["res"], d["threads"]) for d in rows})
for res, threads in configs:
    k = sorted((d for d in rows if d["tool"] == "kinema" and d["res"] == res and d["threads"] == threads), key=lambda d: d["rep"])
    m = sorted((d for d in rows if d["tool"] == "mantaflow" and d["res"] == res and d["threads"] == threads), key=lambda d: d["rep"])
    if not k or not m:
        continue
    ks = statistics.median(d["s_per_frame"] for d in k)
    ms = statistics.median(d["s_per_frame"] for d in m)
    pairs = statistics.median(b["s_per_frame"] / a["s_per_frame"] for a, b in zip(k, m))
    cells = res ** 3
    kc = statistics.median(cells * steps(d) / d["total_s"] for d in k)
    mc = statistics.median(cells * steps(d) / d["total_s"] for d in m)
    # Mantaflow's own smoke steps (frames 2 on: frame 1 runs before the probe is hooked), without
    # Blender's emission voxelization, Python glue and cache writes.
    solver = statistics.median(
        statistics.mean(x for x in d["step_s"] if x is not None) for d in m)
    print(f"| {res}³ | {k[0]['frames']} | {threads} | {ks:.3f} | {ms:.3f} | {ms / ks:.2f} ({pairs:.2f}) | "
          f"{solver:.3f} | {kc / 1e6:.2f} M ({steps(k[0])}) | {mc / 1e6:.2f} M ({steps(m[0])}) |")
print()
print(f"{len(rows)} runs; per-run JSON in {sys.argv[1]}")
EOF
