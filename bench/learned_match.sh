#!/usr/bin/env bash
# Learned motion matching against the database it replaces (BENCHMARKS.md, "Learned motion
# matching (issue 27)"): builds 10k / 54k / 200k-frame databases from the Character Creator rig's
# CMU clips (13 for training; 006_11 and 007_12 held back), trains a model on each
# (`kinema match learn`, one thread, ~1,600 iterations per network), measures it on the held-back
# and the training clips (`kinema match evaluate`), runs both controllers along two stick paths
# (`kinema match run MODEL.kml --compare DB.kmm`) and times the per-frame costs
# (kinema_learned_match_bench, core 1). Needs the release build (cmake --preset release).
#
#   bash bench/learned_match.sh [--data ../shared/data] [--out bench-results/learned] [--quick]
#
# --quick: the 10k database only. Writes JSON reports and the loss plots into OUT; ~45 minutes
# on one core for all three sizes (training ~11 min, building the 200k database ~1 GB of disk).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="$root/../shared/data"
out="$root/bench-results/learned"
sizes=(10k 54k 200k)
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --quick) sizes=(10k); shift ;;
    *) echo "usage: $0 [--data DIR] [--out DIR] [--quick]" >&2; exit 1 ;;
  esac
done
kinema="$root/build/release/kinema"
bench="$root/build/release/bench/kinema_learned_match_bench"
for f in "$kinema" "$bench"; do
  [ -x "$f" ] || { echo "missing $f: cmake --preset release && cmake --build --preset release" >&2; exit 1; }
done
clips="$data/bvh/cmu_iclone_cc3"
mkdir -p "$out"
train=()
for c in 001_01 002_04 002_05 002_07 003_01 005_01 005_02 005_06 005_11 006_01 006_02 006_14 007_04; do
  train+=("$clips/$c.bvh")
done
speeds54=0.8,0.85,0.9,0.95,1,1.05,1.1,1.15
speeds200=$(python3 -c "print(','.join('%.2f' % (0.7 + 0.02 * i) for i in range(31)))")
"$kinema" -q match build "${train[@]}" --skip-frames 1 -o "$out/train.kmm"
"$kinema" -q match build "$clips/006_11.bvh" "$clips/007_12.bvh" --skip-frames 1 -o "$out/held.kmm"
cat > "$out/path_turns.json" <<'EOF'
{"duration": 9, "keys": [{"time": 0, "direction": [0, 1], "speed": 1.2},
                         {"time": 3, "direction": [1, 0], "speed": 1.5},
                         {"time": 6, "direction": [0.7, -0.7], "speed": 1.0}]}
EOF
cat > "$out/path_speeds.json" <<'EOF'
{"duration": 12, "keys": [{"time": 0, "direction": [0, 1], "speed": 1.0},
                          {"time": 2, "direction": [0, 1], "speed": 2.5},
                          {"time": 5, "direction": [-1, 0], "speed": 1.2},
                          {"time": 8, "direction": [0, -1], "speed": 0.0},
                          {"time": 9, "direction": [1, 1], "speed": 1.8}]}
EOF
dbs=()
for n in "${sizes[@]}"; do
  case $n in
    10k) args=(--speeds 0.9,1,1.1); epochs=5 ;;
    54k) args=(--mirror --speeds "$speeds54"); epochs=1 ;;
    200k) args=(--mirror --speeds "$speeds200"); epochs=0.25 ;;
  esac
  "$kinema" -q match build "${train[@]}" --skip-frames 1 "${args[@]}" -o "$out/cc3_$n.kmm"
  echo "== $n: training (epochs $epochs, one thread)"
  "$kinema" match learn "$out/cc3_$n.kmm" -o "$out/cc3_$n.kml" --epochs "$epochs" --threads 1 \
    --json > "$out/learn_$n.json"
  "$kinema" match evaluate "$out/cc3_$n.kml" "$out/held.kmm" --json > "$out/evaluate_held_$n.json"
  "$kinema" match evaluate "$out/cc3_$n.kml" "$out/train.kmm" --json > "$out/evaluate_train_$n.json"
  for p in turns speeds; do
    "$kinema" match run "$out/cc3_$n.kml" --path "$out/path_$p.json" --compare "$out/cc3_$n.kmm" \
      --json -o "$out/run_${n}_$p.glb" > "$out/compare_${n}_$p.json"
  done
  dbs+=("$out/cc3_$n.kmm")
done
(IFS=,; KINEMA_LEARNED_MODEL="$out/cc3_${sizes[0]}.kml" KINEMA_MATCH_DB="${dbs[*]}" \
  taskset -c 1 "$bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_enable_random_interleaving=true --benchmark_out="$out/speed.json" \
  --benchmark_out_format=json)
echo "reports in $out"
