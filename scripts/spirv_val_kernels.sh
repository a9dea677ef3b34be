#!/usr/bin/env bash
# Runs a conformance corpus on the Vulkan plugin with every generated SPIR-V
# module kept, then checks each one with SPIRV-Tools' command-line validator
# (spirv-val), independently of the validation the plugin does in process.
# usage: spirv_val_kernels.sh ANVIL_TOOL CORPUS_PATH...
set -euo pipefail
tool=$1
shift
dump=$(mktemp -d)
trap 'rm -rf "$dump"' EXIT
# The run's own pass/fail is the corpus test's business; here only the modules matter.
ANVIL_VULKAN_DUMP_SPIRV=$dump "$tool" conformance --plugin vulkan "$@" >/dev/null 2>&1 || true
shopt -s nullglob
modules=("$dump"/*.spv)
if [ ${#modules[@]} -eq 0 ]; then
  echo "no SPIR-V modules were generated" >&2
  exit 1
fi
failed=0
for m in "${modules[@]}"; do
  if ! spirv-val --target-env vulkan1.2 --scalar-block-layout "$m"; then
    echo "spirv-val rejects $(basename "$m") (GLSL: ${m%.spv}.comp)" >&2
    failed=$((failed + 1))
  fi
done
echo "${#modules[@]} SPIR-V modules, $failed rejected by spirv-val"
[ "$failed" -eq 0 ]
