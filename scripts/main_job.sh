#!/usr/bin/env bash
# The main job: install, build, and read a real program (MobileNet v2's
# training step, XLA HLO text) end to end: parse, verify, print canonical HLO.
# Running it on the CPU plugin comes with the CPU plugin (issue 4).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
corpus=${ANVIL_CORPUS_DIR:-../shared/corpus}
program="$corpus/xla-hlo/xla/tools/data/benchmarking/mobilenet_v2.hlo"
./build/tools/anvil parse "$program" > build/mobilenet_v2.canonical.hlo
echo "canonical HLO written to build/mobilenet_v2.canonical.hlo ($(wc -l < build/mobilenet_v2.canonical.hlo) lines)"
