#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a short while:
# the text parsers on the broken-program seeds, the bytecode reader on the
# corpus's VHLO portable artifacts. Any crash, leak, stack overflow or hang
# fails the run; the fuzzer's log is printed only then. The seed is fixed so
# that CI explores the same inputs each run; set FUZZ_SEED (and FUZZ_SECONDS,
# per target) to explore further.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
corpus=${ANVIL_CORPUS_DIR:-../shared/corpus}
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DANVIL_BUILD_FUZZERS=ON -DANVIL_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j2 --target anvil_parser_fuzzer anvil_bytecode_fuzzer
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT

# run_fuzzer NAME MAX_LEN SEED_DIR
run_fuzzer() {
  local log="$build/$1.log"
  if ! "./$build/fuzz/$1" -seed="${FUZZ_SEED:-1}" -max_total_time="$seconds" -max_len="$2" -timeout=5 \
       -rss_limit_mb=2048 -artifact_prefix="$build/" "$3" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz smoke: $1 FAILED (input saved under $build/)"
    exit 1
  fi
  echo "fuzz smoke: $1 ${seconds}s, $(grep -o 'Done [0-9]* runs' "$log" || echo '? runs'), no crash"
}

mkdir "$seeds/text" "$seeds/bytecode"
cp hlo/tests/broken/*.hlo hlo/tests/broken/*.mlir "$seeds/text"/
run_fuzzer anvil_parser_fuzzer 4096 "$seeds/text"

# The artifacts are 10-25 KB: long enough inputs reach their functions.
if ls "$corpus"/stablehlo-vhlo/*.mlir.bc >/dev/null 2>&1; then
  cp "$corpus"/stablehlo-vhlo/*.mlir.bc "$seeds/bytecode"/
else
  echo "fuzz smoke: no VHLO artifacts under $corpus/stablehlo-vhlo; the bytecode fuzzer starts unseeded"
fi
run_fuzzer anvil_bytecode_fuzzer 32768 "$seeds/bytecode"
