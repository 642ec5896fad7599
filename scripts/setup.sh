#!/usr/bin/env bash
# Installs the Debian 12 packages kinema needs to build, test and benchmark, and the web viewer's
# npm modules (viewer/node_modules). Idempotent: prints nothing and touches nothing when everything
# is already there. Run as root (or with sudo).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libeigen3-dev libtinygltf-dev nlohmann-json3-dev libassimp-dev libcli11-dev libtbb-dev libstb-dev
  libmuparser-dev libopenexr-dev libopencv-dev libceres-dev
  libopenvdb-dev libboost-dev libboost-iostreams-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libegl-dev libgl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri
  clang-format
  ffmpeg
  pybind11-dev python3-dev python3-numpy python3-pytest python3-distributed
  clang libclang-rt-14-dev
  libcpp-httplib-dev chromium
  libtorch-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The web viewer's page runs on npm packages (three.js, three-vrm; playwright-core drives its
# test): Debian's nodejs and npm, unless an npm is already there (Debian's npm package conflicts
# with other nodejs builds).
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
if [ ${#missing[@]} -ne 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: done"
fi
# The viewer's modules, at the versions viewer/package-lock.json pins: installed again only when
# the lock file changed since the last install.
viewer="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/viewer"
if ! cmp -s "$viewer/package-lock.json" "$viewer/node_modules/.kinema-lock" 2>/dev/null; then
  echo "setup: npm ci in viewer/"
  (cd "$viewer" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$viewer/package-lock.json" "$viewer/node_modules/.kinema-lock"
fi
