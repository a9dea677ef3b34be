#!/usr/bin/env bash
# Builds with ASan+UBSan and with TSan and runs the tests under each; any
# report fails the run. ASan runs every test but the slow ones (parsers and
# the StableHLO conformance suite on the corpora too; the whole-model XLA
# programs run in the main build only); TSan runs the core runtime's tests,
# where the threads are.
set -euo pipefail
cd "$(dirname "$0")/.."
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan_suppressions.txt}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1:suppressions=$PWD/scripts/tsan_suppressions.txt}

ANVIL_BUILD_DIR=build-asan BUILD_TYPE=asan bash scripts/build.sh
ctest --test-dir build-asan --output-on-failure --no-tests=error -j2 -LE slow

ANVIL_BUILD_DIR=build-tsan BUILD_TYPE=tsan bash scripts/build.sh
ctest --test-dir build-tsan --output-on-failure --no-tests=error -j2 -L 'unit-(core|plugin|pjrt)'
