#!/usr/bin/env bash
# Installs the Debian 12 packages kinema needs to build, test and benchmark. Idempotent: prints
# nothing and touches nothing when everything is already there. Run as root (or with sudo).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  libeigen3-dev libtinygltf-dev nlohmann-json3-dev libassimp-dev libcli11-dev libtbb-dev libstb-dev
  libmuparser-dev libopenexr-dev libopencv-dev libceres-dev
  libopenvdb-dev libboost-dev libboost-iostreams-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libegl-dev libgl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri
  clang-format
  ffmpeg
  pybind11-dev python3-dev python3-numpy python3-pytest python3-distributed
  clang libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
