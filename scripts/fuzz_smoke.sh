#!/usr/bin/env bash
# Builds the libFuzzer target with clang and runs it for a short while on the
# broken-program seeds. Any crash, leak or hang fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DANVIL_BUILD_FUZZERS=ON -DANVIL_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz -j2 --target anvil_parser_fuzzer
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
cp hlo/tests/broken/*.hlo hlo/tests/broken/*.mlir "$seeds"/
./build-fuzz/fuzz/anvil_parser_fuzzer -max_total_time="$seconds" -max_len=4096 -timeout=5 \
  -rss_limit_mb=2048 -artifact_prefix=build-fuzz/ "$seeds"
echo "fuzz smoke: ${seconds}s without a crash"
