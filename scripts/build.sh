#!/usr/bin/env bash
# Configures and builds Anvil into build/ (or $ANVIL_BUILD_DIR) with ccache
# and -j2, the way CI does. Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${ANVIL_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@"
cmake --build "$build_dir" -j2
