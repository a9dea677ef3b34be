#!/usr/bin/env bash
# The main job: install, build, and run a real program on the CPU plugin:
# MobileNet v2's training step (XLA HLO text, batch 96), with deterministic
# inputs, through the C ABI. Prints compile and step time and the results.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
corpus=${ANVIL_CORPUS_DIR:-../shared/corpus}
./build/tools/anvil run "$corpus/xla-hlo/xla/tools/data/benchmarking/mobilenet_v2.hlo" --random-inputs \
  --output build/mobilenet_v2_results
