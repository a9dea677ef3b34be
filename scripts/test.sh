#!/usr/bin/env bash
# Installs what the build needs, builds, and runs every test: unit tests,
# the corpus suites, and a short fuzz smoke run of both parsers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j2
bash scripts/fuzz_smoke.sh
