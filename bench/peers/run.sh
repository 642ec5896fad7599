#!/usr/bin/env bash
# bench/peers/run.sh — every side-by-side table of BENCHMARKS.md, from the peers' checkouts to a
# results folder, in one command:
#
#   bash bench/peers/run.sh --ozz OZZ_SRC --acl ACL_SRC --holden HOLDEN_SRC [options]
#
# Peers (none is a dependency of kinema; nothing of theirs is committed):
#   --ozz DIR      ozz-animation 0.16.0 source tree (github.com/guillaumeblanc/ozz-animation, tag
#                  0.16.0; its media/ folder is not needed). Built here with kinema's flags.
#                  Tables: anim (sampling, blending, local → model), ik (two-bone), skin.
#   --acl DIR      ACL checkout (github.com/nfrechette/acl, develop 0f855f01) with Realtime Math in
#                  DIR/external/rtm (github.com/nfrechette/rtm 2a2ba0f9), or give --rtm. Table:
#                  compress (ratio and error per source; decode per pose, with and without cache).
#   --rtm DIR      Realtime Math checkout, when it is not in ACL's external/rtm.
#   --holden DIR   github.com/orangeduck/Motion-Matching checkout (its database.h). Table: match.
#   nanoflann      Debian's libnanoflann-dev (installed here with apt when run as root; otherwise
#                  its rows are skipped and the summary says so).
# Options:
#   --out DIR          results folder (default bench-results/<UTC date-time>)
#   --tables LIST      comma-separated subset of anim,ik,skin,compress,match (default: all whose
#                      peer was given; match and compress's kinema-only rows need no peer)
#   --cpu N            the core to pin every benchmark to (default: the last one)
#   --repetitions N    repetitions per row, interleaved at random with the peer's (default 9)
#   --min-time S       Google Benchmark's minimum time per repetition (default 0.1)
#   --data DIR         shared data (default $KINEMA_SHARED_DATA, else ../shared/data)
#   --prepare-only     build and make the data, run nothing (then rerun without it when the
#                      machine is quiet: only what changed is rebuilt)
#
# What it does: builds ozz (build/peers/ozz-build → build/peers/ozz-install) with the same compiler
# and flags as kinema's release preset, configures kinema with the `peers` preset (build/peers:
# release flags plus the peer roots), builds the benchmark programs and the CLI, makes the data
# (ozz's pab walk through gltf2ozz; three motion-matching databases from the shared BVH files),
# then runs each table pinned to one core and writes, per table, the raw Google Benchmark JSON and
# console text, and a summary.md with medians, spread and kinema ÷ peer throughput for every
# pair (bench/peers/summarize.py). Rebuilds only what changed; data already made is reused.
# Run it on a quiet machine: the summary records the load average before and after.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
ozz_src="" acl_src="" rtm_src="" holden_src="" out="" tables="" cpu="" reps=9 min_time=0.1
prepare_only=0
data="${KINEMA_SHARED_DATA:-$root/../shared/data}"

die() { echo "bench/peers/run.sh: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ozz) ozz_src=$(realpath -m "$2"); shift 2 ;;
    --acl) acl_src=$(realpath -m "$2"); shift 2 ;;
    --rtm) rtm_src=$(realpath -m "$2"); shift 2 ;;
    --holden) holden_src=$(realpath -m "$2"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --tables) tables="$2"; shift 2 ;;
    --cpu) cpu="$2"; shift 2 ;;
    --repetitions) reps="$2"; shift 2 ;;
    --min-time) min_time="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --prepare-only) prepare_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (--help lists the options)" ;;
  esac
done

# ---- checks before anything is built ------------------------------------------------------------
[[ -z "$ozz_src" || -f "$ozz_src/include/ozz/animation/runtime/animation.h" ]] ||
  die "--ozz $ozz_src: no include/ozz/animation/runtime/animation.h (an ozz-animation source tree?)"
if [[ -n "$ozz_src" ]] && ! grep -qzE 'OZZ_VERSION_MINOR 16\)[^(]*set\(OZZ_VERSION_PATCH 0\)' "$ozz_src/CMakeLists.txt"; then
  echo "note: $ozz_src does not say ozz 0.16.0 in its CMakeLists.txt; BENCHMARKS.md's figures are for 0.16.0" >&2
fi
if [[ -n "$acl_src" ]]; then
  [[ -f "$acl_src/includes/acl/compression/compress.h" ]] ||
    die "--acl $acl_src: no includes/acl/compression/compress.h (an ACL checkout?)"
  [[ -n "$rtm_src" ]] || rtm_src="$acl_src/external/rtm"
  [[ -f "$rtm_src/includes/rtm/qvvf.h" ]] ||
    die "no Realtime Math at $rtm_src (includes/rtm/qvvf.h): check rtm out there or give --rtm"
fi
[[ -z "$holden_src" || -f "$holden_src/database.h" ]] ||
  die "--holden $holden_src: no database.h (an orangeduck/Motion-Matching checkout?)"
[[ -d "$data/bvh" ]] || die "no shared data at $data (bvh/ missing): give --data or set KINEMA_SHARED_DATA"
data=$(realpath "$data")
for tool in cmake ninja python3 taskset; do
  command -v "$tool" >/dev/null || die "$tool is not installed (bash scripts/setup.sh installs it)"
done
ncpu=$(nproc)
[[ -n "$cpu" ]] || cpu=$((ncpu - 1))
[[ "$cpu" =~ ^[0-9]+$ && "$cpu" -lt "$ncpu" ]] || die "--cpu $cpu: this machine has cores 0–$((ncpu - 1))"
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || die "--repetitions $reps: a positive integer"

if [[ -z "$tables" ]]; then
  tables="compress,match"
  [[ -n "$ozz_src" ]] && tables="anim,ik,skin,$tables"
fi
IFS=, read -r -a table_list <<<"$tables"
for t in "${table_list[@]}"; do
  [[ "$t" =~ ^(anim|ik|skin|compress|match)$ ]] || die "unknown table '$t' (anim, ik, skin, compress, match)"
done
for t in "${table_list[@]}"; do
  [[ ! "$t" =~ ^(anim|ik|skin)$ || -n "$ozz_src" ]] || die "table $t needs --ozz"
done
wants() { [[ ",$tables," == *",$1,"* ]]; }

[[ -n "$out" ]] || out="$root/bench-results/$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out=$(realpath "$out")
peers="$root/build/peers"
mkdir -p "$peers"
step() { echo; echo "== $*"; }

# nanoflann: header-only, from Debian; install it when we can, else its rows are skipped.
if wants match && [[ ! -f /usr/include/nanoflann.hpp ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    step "installing nanoflann (libnanoflann-dev), a peer of the search table"
    apt-get install -y -q libnanoflann-dev >/dev/null
  else
    echo "note: nanoflann is not installed (apt-get install libnanoflann-dev as root): its rows are skipped" >&2
  fi
fi

# ---- ozz-animation, with the flags of kinema's release preset ----------------------------------
ozz_install=""
if [[ -n "$ozz_src" ]]; then
  step "ozz-animation: $ozz_src → $peers/ozz-install"
  ozz_install="$peers/ozz-install"
  cmake -S "$ozz_src" -B "$peers/ozz-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O3 -DNDEBUG" -DCMAKE_CXX_FLAGS=-march=x86-64-v2 \
    -DCMAKE_C_FLAGS=-march=x86-64-v2 -Dozz_build_samples=OFF -Dozz_build_howtos=OFF \
    -Dozz_build_tests=OFF -Dozz_build_fbx=OFF -Dozz_build_gltf=ON -Dozz_build_postfix=OFF \
    -DCMAKE_INSTALL_PREFIX="$ozz_install" >"$out/ozz-configure.log" 2>&1
  cmake --build "$peers/ozz-build" >"$out/ozz-build.log"
  cmake --install "$peers/ozz-build" >>"$out/ozz-build.log"
fi

# ---- kinema with its peers: the `peers` preset (build/peers) -----------------------------------
step "kinema: cmake --preset peers (build/peers)"
cmake --preset peers -DKINEMA_OZZ_ROOT="$ozz_install" -DKINEMA_ACL_ROOT="$acl_src" \
  -DKINEMA_RTM_ROOT="$rtm_src" -DKINEMA_HOLDEN_ROOT="$holden_src" >"$out/configure.log"
grep -E 'peer benchmark' "$out/configure.log" || true
targets=(kinema)
for t in "${table_list[@]}"; do targets+=("kinema_${t}_bench"); done
step "building ${targets[*]}"
cmake --build --preset peers --target "${targets[@]}" >"$out/build.log" ||
  { tail -30 "$out/build.log" >&2; die "the build failed (log: $out/build.log)"; }
kinema="$root/build/peers/kinema"
bench="$root/build/peers/bench"

# ---- data ----------------------------------------------------------------------------------------
ozz_data="$peers/data/ozz"
if [[ -n "$ozz_src" ]] && wants anim && [[ ! -f "$ozz_data/walk.ozz" ]]; then
  step "ozz data: the pab walk → GLB (kinema) → 67 joints → skeleton.ozz, walk.ozz (gltf2ozz)"
  mkdir -p "$ozz_data"
  "$kinema" convert "$root/tests/data/fbx/ozz_pab/walk.fbx" "$ozz_data/pab_walk_all.glb" >/dev/null
  python3 "$root/bench/peers/trim_pab_walk.py" "$ozz_data/pab_walk_all.glb" "$ozz_data/pab_walk.glb"
  printf '%s\n' '{"skeleton": {"filename": "skeleton.ozz", "import": {"enable": true}},' \
    ' "animations": [{"clip": "walk", "filename": "walk.ozz", "sampling_rate": 30}]}' \
    >"$ozz_data/pab_walk.json"
  (cd "$ozz_data" && "$ozz_install/bin/tools/gltf2ozz" --file=pab_walk.glb \
    --config_file=pab_walk.json >gltf2ozz.log)
fi
mm_data="$peers/data/mm"
if wants match; then
  mkdir -p "$mm_data"
  shopt -s nullglob
  bvh=("$data"/bvh/*/*.bvh)
  shopt -u nullglob
  [[ ${#bvh[@]} -gt 0 ]] || die "no BVH files under $data/bvh for the search databases"
  build_db() {  # name, extra options
    local name=$1; shift
    if [[ ! -f "$mm_data/$name.kmm" ]]; then
      step "search database $name (kinema match build, ${#bvh[@]} clips $*)"
      "$kinema" match build "${bvh[@]}" --features-only --skip-frames 1 "$@" \
        -o "$mm_data/$name.kmm" >"$out/match-build-$name.log"
    fi
  }
  build_db mm10k
  build_db mm54k --mirror --speeds 0.8,1
  build_db mm200k --mirror --speeds 0.8,0.85,0.9,0.95,1,1.05,1.1,1.15,1.2
fi

if [[ $prepare_only -eq 1 ]]; then
  echo; echo "prepared: build/peers and its data; rerun without --prepare-only on a quiet machine"
  exit 0
fi

# ---- the tables ----------------------------------------------------------------------------------
{
  echo "commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo ' (with local changes)')"
  echo "date $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $ncpu cores, pinned to core $cpu"
  echo "compiler $(c++ --version | head -1)"
  echo "repetitions $reps, min time $min_time s, random interleaving"
  echo "load before $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/machine.txt"

run_table() {  # table, program, filter, [extra environment...]
  local table=$1 program=$2 filter=$3; shift 3
  step "table $table: $program --benchmark_filter='$filter'"
  env "$@" taskset -c "$cpu" "$bench/$program" --benchmark_filter="$filter" \
    --benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true \
    --benchmark_min_time="$min_time" --benchmark_report_aggregates_only=false \
    --benchmark_display_aggregates_only=true \
    --benchmark_out="$out/$table.json" --benchmark_out_format=json | tee "$out/$table.txt"
}
wants anim && run_table anim kinema_anim_bench 'Sampling|Blend|LocalToModel' KINEMA_OZZ_DATA="$ozz_data"
wants ik && run_table ik kinema_ik_bench '^(Ozz/)?TwoBone/'
wants skin && run_table skin kinema_skin_bench \
  '^(LBS|DQS)/[a-z_]+/(P|PN|PNT)/(SkinMeshStored|SkinMeshStoredBlended)/|^Ozz/|^Floor/' \
  KINEMA_SHARED_DATA="$data"
if wants compress; then
  step "table compress-ratio: kinema and ACL on every clip (AclVsKinema), errors by kinema's metric"
  if [[ -n "$acl_src" ]]; then
    KINEMA_SHARED_DATA="$data" taskset -c "$cpu" "$bench/kinema_compress_bench" \
      --benchmark_filter='^AclVsKinema' | tee "$out/compress-ratio.txt"
  fi
  run_table compress kinema_compress_bench \
    '^(Acl/)?Decode(Cached)?/(cmu_cgspeed_mb/0[12]_01|cmu_daz_acrnn/(salsa_01|indian_06)|cmu_iclone_cc3/(002_01|007_12)|cesium_man/cesium_man)$' \
    KINEMA_SHARED_DATA="$data"
fi
wants match && run_table match kinema_match_bench '^Search/' \
  KINEMA_MATCH_DB="$mm_data/mm10k.kmm,$mm_data/mm54k.kmm,$mm_data/mm200k.kmm"
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"

step "summary"
python3 "$root/bench/peers/summarize.py" "$out" | tee "$out/summary.md"
echo
echo "results: $out (summary.md, <table>.json, <table>.txt, machine.txt)"
