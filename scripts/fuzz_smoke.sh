#!/usr/bin/env bash
# Builds the libFuzzer target with clang and runs it for a short while on the
# broken-program seeds. Any crash, leak, stack overflow or hang fails the run;
# the fuzzer's log is printed only then. The seed is fixed so that CI explores
# the same inputs each run; set FUZZ_SEED (and FUZZ_SECONDS) to explore further.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DANVIL_BUILD_FUZZERS=ON -DANVIL_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz -j2 --target anvil_parser_fuzzer
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
cp hlo/tests/broken/*.hlo hlo/tests/broken/*.mlir "$seeds"/
log=build-fuzz/fuzz.log
if ! ./build-fuzz/fuzz/anvil_parser_fuzzer -seed="${FUZZ_SEED:-1}" -max_total_time="$seconds" -max_len=4096 -timeout=5 \
     -rss_limit_mb=2048 -artifact_prefix=build-fuzz/ "$seeds" >"$log" 2>&1; then
  tail -n 60 "$log"
  echo "fuzz smoke: FAILED (input saved under build-fuzz/)"
  exit 1
fi
echo "fuzz smoke: ${seconds}s, $(grep -o 'Done [0-9]* runs' "$log" || echo '? runs'), no crash"
