#!/usr/bin/env bash
# Builds with ASan+UBSan and with TSan and runs the tests under each; any
# report fails the run. ASan runs every test but the slow ones (parsers and
# the StableHLO conformance suite on the corpora too; the whole-model XLA
# programs run in the main build only); TSan runs the core runtime's tests,
# where the threads are.
set -euo pipefail
cd "$(dirname "$0")/.."
# intercept_tls_get_addr=0: GCC 12's LeakSanitizer guesses where a dynamic
# TLS block starts from a header older glibc put before it; glibc 2.36
# allocates these blocks with malloc, so whenever one lands 16 bytes past a
# page boundary the guess reads ASan's own chunk header as an address and
# the exit-time scan dies ("Tracer caught signal 11"). Which run hits it
# depends on heap layout (paths, environment). Without the interceptor the
# scan skips dynamic TLS: it can report more leaks, never fewer.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:intercept_tls_get_addr=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan_suppressions.txt}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1:suppressions=$PWD/scripts/tsan_suppressions.txt}

ANVIL_BUILD_DIR=build-asan BUILD_TYPE=asan bash scripts/build.sh
ctest --test-dir build-asan --output-on-failure --no-tests=error -j2 -LE slow
# CI (.ci/run) sets ANVIL_DROP_SANITIZER_TREES=1: a tree whose tests passed
# is removed before the next is built (ccache keeps its objects), so the
# disk holds one sanitizer tree at a time.
if [ "${ANVIL_DROP_SANITIZER_TREES:-0}" = 1 ]; then rm -rf build-asan; fi

ANVIL_BUILD_DIR=build-tsan BUILD_TYPE=tsan bash scripts/build.sh
# One OpenMP thread under TSan: Debian's libgomp is not built with TSan, so
# the barriers of oneDNN's OpenMP regions are invisible to it and every
# region would read as a race.
OMP_NUM_THREADS=1 ctest --test-dir build-tsan --output-on-failure --no-tests=error -j2 -L 'unit-(core|plugin|pjrt)'
if [ "${ANVIL_DROP_SANITIZER_TREES:-0}" = 1 ]; then rm -rf build-tsan; fi
