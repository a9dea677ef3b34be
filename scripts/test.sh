#!/usr/bin/env bash
# Installs what the build needs, builds, runs a short fuzz smoke run of both
# parsers, then every test: unit tests and the corpus suites.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
bash scripts/fuzz_smoke.sh
ctest --test-dir build --output-on-failure -j2
