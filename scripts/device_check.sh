#!/usr/bin/env bash
# The CUDA plugin on a real NVIDIA GPU, in one go (issue 13): builds what it
# needs, lists the devices, runs the StableHLO corpus on the CUDA plugin
# against the reference evaluator, and times a fused elementwise program
# against the device's own copy bandwidth and a dot against cuBLAS's sgemm,
# then prints one table. Never part of the tests: run it by hand where a GPU
# is, and keep its output in the issue's note.
#
#   bash scripts/device_check.sh [CORPUS_DIR]
#
# CORPUS_DIR defaults to ../shared/corpus or ./shared/corpus. Uses
# build/tools/anvil when it is there (a build carried to the machine);
# otherwise configures build-device/ (no tests) and builds the tool and the
# CUDA plugin with every core. Without a GPU it says why and exits 2.
# DEVICE_CHECK_LIMIT_S (default 420) bounds the corpus run, which is split
# over DEVICE_CHECK_SHARDS (default 4) conformance processes.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

corpus=${1:-}
if [[ -z "$corpus" ]]; then
  for c in ../shared/corpus shared/corpus; do [[ -d "$c/stablehlo" ]] && corpus=$c && break; done
fi
if [[ -z "$corpus" || ! -d "$corpus/stablehlo" ]]; then
  echo "device_check: no corpus (pass CORPUS_DIR holding stablehlo/)" >&2
  exit 1
fi

tool=build/tools/anvil
if ! "$tool" --help >/dev/null 2>&1; then
  tool=build-device/tools/anvil
  echo "device_check: building $tool and the CUDA plugin" >&2
  cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DANVIL_BUILD_TESTS=OFF >/tmp/device_check_cmake.log 2>&1 ||
    { tail -30 /tmp/device_check_cmake.log; exit 1; }
  cmake --build build-device -j"$(nproc)" --target anvil_tool anvil_plugin_cuda >/tmp/device_check_build.log 2>&1 ||
    { tail -30 /tmp/device_check_build.log; exit 1; }
fi

echo "== plugins"
plugins=$("$tool" plugins 2>&1)
echo "$plugins"
cuda_devices=$(awk '/^plugin cuda /{f=1; next} /^plugin /{f=0} f && /^  device [0-9]+:/' <<<"$plugins")
if [[ -z "$cuda_devices" ]]; then
  echo "device_check: the CUDA plugin has no device here (see above); nothing to run" >&2
  exit 2
fi

limit=${DEVICE_CHECK_LIMIT_S:-420}
shards=${DEVICE_CHECK_SHARDS:-4}
echo "== StableHLO corpus on the CUDA plugin ($shards processes, at most ${limit} s)"
# NVRTC's compiles are most of the time: several processes share the GPU
# and the host's cores.
mapfile -t programs < <(find "$corpus/stablehlo" -name '*.mlir' | sort)
start=$(date +%s)
for ((k = 0; k < shards; ++k)); do
  shard=()
  for ((j = k; j < ${#programs[@]}; j += shards)); do shard+=("${programs[j]}"); done
  timeout "$limit" "$tool" conformance --plugin cuda "${shard[@]}" >"/tmp/device_check_conformance.$k.log" 2>&1 &
done
wait
corpus_s=$(( $(date +%s) - start ))
cat /tmp/device_check_conformance.*.log >/tmp/device_check_conformance.log
summary=$(python3 -c '
import re, sys
total = [0, 0, 0]; runs = 0
for line in open("/tmp/device_check_conformance.log"):
    m = re.match(r"(\d+) passed, (\d+) failed, (\d+) skipped", line)
    if m:
        runs += 1
        total = [t + int(v) for t, v in zip(total, m.groups())]
shards = int(sys.argv[1])
n = sum(total)
rate = f", {100 * total[0] / n:.1f}% passed" if n else ""
note = "" if runs == shards else f" ({shards - runs} of {shards} processes gave no summary: timed out or crashed)"
print(f"{total[0]} passed, {total[1]} failed, {total[2]} skipped{rate}{note}")' "$shards")
grep -E '^failed ' /tmp/device_check_conformance.log | head -40

echo "== benchmarks"
bench() {  # program -> "GB/s GFLOP/s median_ms" from anvil bench --json
  "$tool" bench "$1" --plugin cuda --iterations 20 --json /tmp/device_check_bench.json >/dev/null 2>&1 || { echo "- - -"; return; }
  python3 - <<'EOF'
import json
b = json.load(open("/tmp/device_check_bench.json"))
m = b["execute_ms"]["median"]
gbs = b.get("bytes", 0) / (m * 1e6) if m else 0
gflops = b.get("flops", 0) / (m * 1e6) if m else 0
print(f"{gbs:.1f} {gflops:.1f} {m:.3f}")
EOF
}
read -r chain_gbs _ chain_ms <<<"$(bench bench/programs/elementwise_chain.hlo)"
read -r _ dot_gflops dot_ms <<<"$(bench bench/programs/dot_2048.hlo)"
# The device's own numbers through the driver and cuBLAS (ctypes: nothing
# to build): device-to-device copy bandwidth, and cuBLAS sgemm 2048^3.
read -r copy_gbs cublas_gflops <<<"$(python3 "$root/scripts/device_peers.py" 2>/tmp/device_check_peers.log || echo "- -")"

echo
echo "| check | result |"
echo "|---|---|"
echo "| device | $(head -1 <<<"$cuda_devices" | sed 's/^ *//') |"
echo "| StableHLO corpus on cuda | $summary in ${corpus_s} s |"
echo "| elementwise chain | ${chain_ms:-?} ms, ${chain_gbs:-?} GB/s; device copy ${copy_gbs:-?} GB/s |"
echo "| dot 2048^3 f32 | ${dot_ms:-?} ms, ${dot_gflops:-?} GFLOP/s; cuBLAS sgemm ${cublas_gflops:-?} GFLOP/s |"
