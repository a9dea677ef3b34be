#!/usr/bin/env bash
# The persistent compile cache end to end, for one plugin: the plugin's
# kernel tests run through the conformance kit three times on one cache
# directory, each in a new process. The first run compiles and stores; the
# second loads every program from the cache (its trace shows the hits) and
# must still agree with the reference evaluator; the third finds every entry
# corrupted and must compile again, warn, and agree too.
#   scripts/cache_check.sh ANVIL_TOOL PLUGIN PATH...
# (PATH: the tests directory, or some of its programs.)
set -euo pipefail
tool=$1 plugin=$2
shift 2
tests=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ANVIL_CACHE_DIR=$work/cache

"$tool" conformance --plugin "$plugin" "${tests[@]}" > "$work/first.txt"
entries=$(find "$ANVIL_CACHE_DIR" -name '*.exe' | wc -l)
programs=$(find "${tests[@]}" -name '*.hlo' | wc -l)
if [ "$entries" -lt 1 ]; then
  echo "cache check: the first run stored no executable" >&2
  exit 1
fi

ANVIL_TRACE=$work/trace.json "$tool" conformance --plugin "$plugin" "${tests[@]}" > "$work/second.txt"
hits=$(grep -o '"name":"cache hit"' "$work/trace.json" | wc -l)
if [ "$hits" -lt "$entries" ]; then
  echo "cache check: $entries executables stored, but the second run loaded only $hits" >&2
  exit 1
fi

# Flip one byte near the end of every entry (inside the plugin's bytes).
for f in "$ANVIL_CACHE_DIR"/*.exe; do
  size=$(stat -c %s "$f")
  printf '\x5a' | dd of="$f" bs=1 seek=$((size - 20)) conv=notrunc status=none
done
"$tool" conformance --plugin "$plugin" "${tests[@]}" > "$work/third.txt" 2> "$work/third.err"
grep -q "truncated or corrupt" "$work/third.err" || { echo "cache check: no warning for corrupt entries" >&2; exit 1; }

tail -n 1 "$work/first.txt"
echo "cache check ($plugin): $programs programs, $entries executables stored, $hits loaded from the cache, corrupt entries compiled again: ok"
