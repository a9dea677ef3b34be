#!/usr/bin/env bash
# Installs what the build needs, builds, checks the installed package with
# the examples built out of tree against it, runs a short fuzz smoke run of
# both parsers and the sanitizer builds' tests, then every test of the main
# build: unit tests, the core runtime's tests and the corpus suites; last,
# JAX programs through the PJRT plugin (pytest, in the pinned jax venv).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
bash scripts/install_check.sh
bash scripts/fuzz_smoke.sh
bash scripts/sanitizers.sh
ctest --test-dir build --output-on-failure --no-tests=error -j2
bash scripts/setup_python.sh
build/jax-venv/bin/python -m pytest -q python/tests
