"""Anvil's CPU plugin against its peers, measured in one run: each workload
of issue 11 as `anvil bench` times it, next to what bounds it on this machine
(memcpy bandwidth for the elementwise chain), what eager PyTorch takes for
the same model (bench/peers/torch_peers.py) and what ONNX Runtime takes
(bench/peers/onnxruntime_peers.py, for the chain and the MLP), and, for the
dot, what oneDNN's and OpenBLAS's sgemm take with their own threads
(build/bench/anvil_sgemm_peer); `--workloads others` runs the reductions,
normalisations and data movement beside them against eager PyTorch.
Everything is measured in rounds
(`--rounds`, 3 by default), one after another, and each ratio is taken
within a round, between numbers measured minutes apart at most; the table
gives the median over rounds, and each round's ratios follow it. `--json FILE` keeps every number.

    /usr/bin/python3 bench/compare.py [--build build] [--corpus ../shared/corpus]

Speed is only ever reported here, never asserted in a test.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# workload -> (program, iterations). Anvil and its peers run each workload
# as many times; a workload of a few milliseconds runs more often, so that
# its median is not one burst of a shared machine's load (the MLP's ratio
# to ONNX Runtime ran 0.89-1.51 across rounds with 10).
PROGRAMS = {
    "chain": ("bench/programs/elementwise_chain.hlo", 20),
    "mlp": ("bench/programs/mlp_gelu.hlo", 100),
    "dot": ("bench/programs/dot_2048.hlo", 20),
    "mobilenet": ("{corpus}/xla-hlo/xla/tools/data/benchmarking/mobilenet_v2.hlo", 3),
    # Programs outside issue 11's list, against eager PyTorch: fused
    # reductions and normalisations, reductions of other layouts and bodies,
    # and data movement (`--workloads others`).
    "softmax": ("bench/programs/softmax.hlo", 10),
    "layernorm": ("bench/programs/layernorm.hlo", 10),
    "column_sum": ("bench/programs/column_sum.hlo", 10),
    "embedding_lookup": ("bench/programs/embedding_lookup.hlo", 10),
    "embedding_gradient": ("bench/programs/embedding_gradient.hlo", 10),
    "transpose_4096": ("bench/programs/transpose_4096.hlo", 10),
    "argmax": ("bench/programs/argmax.hlo", 10),
    "max_pool": ("bench/programs/max_pool.hlo", 3),
    "max_pool_grad": ("bench/programs/max_pool_grad.hlo", 3),
    "sort_1m": ("bench/programs/sort_1m.hlo", 3),
}
ISSUE_WORKLOADS = ["chain", "mlp", "dot", "mobilenet"]
OTHER_WORKLOADS = [w for w in PROGRAMS if w not in ISSUE_WORKLOADS]


def memcpy_gb_per_s():
    """Best copy bandwidth over 256 MB (read + write counted), with numpy."""
    import numpy as np

    src = np.ones(1 << 26, dtype=np.float32)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    return 2 * src.nbytes / best / 1e9


def anvil_bench(tool, program, iterations):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([tool, "bench", program, "--plugin", "cpu", "--iterations", str(iterations), "--json", out.name],
                       check=True, stdout=subprocess.DEVNULL)
        with open(out.name) as f:
            return json.load(f)


def peer(python, script, modules, workloads, missing):
    """{workload: result} from a peer script, or {} (saying why) when its
    Python lacks the peer's modules."""
    probe = subprocess.run([python, "-c", "import " + ", ".join(modules)], capture_output=True) \
        if os.path.exists(python) else None
    if probe is None or probe.returncode != 0:
        print(f"{script} skipped: {missing}", file=sys.stderr)
        return {}
    # NAME:ITERATIONS, each workload as often as Anvil runs it
    # (mlp_weights_as_inputs as the mlp).
    named = [f"{w}:{PROGRAMS['mlp' if w == 'mlp_weights_as_inputs' else w][1]}" for w in workloads]
    run = subprocess.run([python, os.path.join(HERE, "peers", script), *named],
                         check=True, capture_output=True, text=True)
    results = {}
    for line in run.stdout.splitlines():
        r = json.loads(line)
        results[r["workload"]] = r
    return results


def sgemm_peers(build, program, missing):
    """{library: result} for the dot program's sgemm (M x K by K x N, read
    off its parameters) through build/bench/anvil_sgemm_peer, or {}."""
    tool = os.path.join(build, "bench", "anvil_sgemm_peer")
    if not os.path.exists(tool):
        print(f"anvil_sgemm_peer skipped: {missing}", file=sys.stderr)
        return {}
    import re

    with open(program) as f:
        dims = re.findall(r"f32\[(\d+),(\d+)\] parameter", f.read())
    (m, k), (_, n) = dims[0], dims[1]
    run = subprocess.run([tool, m, n, k, str(PROGRAMS["dot"][1])], check=True, capture_output=True, text=True)
    return {r["peer"]: r for r in map(json.loads, run.stdout.splitlines())}


def measure_round(tool, paths, workloads, onnxruntime_python, build):
    """One round: memcpy, then Anvil on each workload, then the peers."""
    report = {"memcpy_gb_per_s": memcpy_gb_per_s(), "anvil": {}}
    for name in workloads:
        program, iterations = PROGRAMS[name]
        report["anvil"][name] = anvil_bench(tool, paths[name], iterations)
    system_python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    report["pytorch"] = peer(system_python, "torch_peers.py", ["torch", "torchvision"], workloads,
                             "install Debian's python3-torch and python3-torchvision")
    ort_workloads = [w for w in workloads if w in ("chain", "mlp")]
    if "mlp" in workloads:
        ort_workloads.append("mlp_weights_as_inputs")
    report["onnxruntime"] = peer(onnxruntime_python, "onnxruntime_peers.py", ["torch", "onnxruntime"],
                                 ort_workloads, "run bench/setup_peers.sh (onnxruntime in build/bench-venv)") \
        if ort_workloads else {}
    report["sgemm"] = sgemm_peers(build, paths["dot"], "build the bench folder (cmake --build build)") \
        if "dot" in workloads else {}
    return report


def round_cells(report, name):
    """{column: value} for one workload in one round; a peer that did not
    run leaves its columns out."""
    a = report["anvil"][name]
    anvil_ms = a["execute_ms"]["median"]
    cells = {"anvil ms": anvil_ms, "compile ms": a["compile_ms"]}
    for kind, label in (("pytorch", "pytorch"), ("onnxruntime", "onnxrt")):
        r = report[kind].get(name)
        if r:
            cells[f"{label} ms"] = r["execute_ms"]["median"]
            cells[f"anvil/{label}"] = anvil_ms / r["execute_ms"]["median"]
    r = report["onnxruntime"].get("mlp_weights_as_inputs") if name == "mlp" else None
    if r:
        # ONNX Runtime with the weights as inputs, as Anvil's program takes
        # them, rather than initializers it may pack once at load.
        cells["onnxrt-in ms"] = r["execute_ms"]["median"]
        cells["anvil/onnxrt-in"] = anvil_ms / r["execute_ms"]["median"]
    if name == "dot" and report.get("sgemm"):
        # The issue's bar: at least 0.95x the better library's speed, so
        # anvil/sgemm at most 1/0.95 = 1.05.
        for peer, r in report["sgemm"].items():
            cells[f"{peer} ms"] = r["execute_ms"]["median"]
        cells["anvil/sgemm"] = anvil_ms / min(r["execute_ms"]["median"] for r in report["sgemm"].values())
    if name == "chain":
        # The chain's bound: its inputs and output streamed once at the
        # memcpy speed measured in the same round.
        cells["bound ms"] = a["bytes"] / (report["memcpy_gb_per_s"] * 1e9) * 1e3
        cells["anvil/bound"] = anvil_ms / cells["bound ms"]
    return cells


COLUMNS = ["anvil ms", "compile ms", "pytorch ms", "anvil/pytorch", "onnxrt ms", "anvil/onnxrt", "onnxrt-in ms",
           "anvil/onnxrt-in", "bound ms",
           "anvil/bound", "onednn ms", "openblas ms", "anvil/sgemm"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--corpus", default=os.environ.get("ANVIL_CORPUS_DIR", os.path.join(ROOT, "..", "shared", "corpus")))
    parser.add_argument("--workloads", nargs="+", default=ISSUE_WORKLOADS, choices=[*PROGRAMS, "others", "all"],
                        help="workloads to run (default: issue 11's four); `others` names the programs beside them, "
                             "`all` every one")
    parser.add_argument("--rounds", type=int, default=3,
                        help="measure everything this many times, interleaved, and report the median of each "
                             "round's ratio (a shared machine's load drifts between one measurement and the next)")
    parser.add_argument("--json", help="write every number measured here to this file")
    parser.add_argument("--onnxruntime-python", default=os.path.join(ROOT, "build", "bench-venv", "bin", "python"),
                        help="a Python with onnxruntime and torch (bench/setup_peers.sh makes one)")
    args = parser.parse_args()
    expanded = []
    for w in args.workloads:
        expanded += OTHER_WORKLOADS if w == "others" else list(PROGRAMS) if w == "all" else [w]
    args.workloads = list(dict.fromkeys(expanded))
    tool = os.path.join(args.build, "tools", "anvil")
    paths = {}
    for name in args.workloads:
        program = PROGRAMS[name][0]
        paths[name] = program.format(corpus=args.corpus) if "{corpus}" in program else os.path.join(ROOT, program)

    rounds = [measure_round(tool, paths, args.workloads, args.onnxruntime_python, args.build)
              for _ in range(max(1, args.rounds))]

    bandwidths = [r["memcpy_gb_per_s"] for r in rounds]
    print(f"memcpy: {statistics.median(bandwidths):.1f} GB/s (read + write; median of {len(rounds)} rounds, "
          f"{min(bandwidths):.1f}-{max(bandwidths):.1f})")
    print(" ".join(f"{c:>13}" for c in ["workload", *COLUMNS]))
    spreads = []
    for name in args.workloads:
        per_round = [round_cells(r, name) for r in rounds]
        row = [name]
        for column in COLUMNS:
            values = [cells[column] for cells in per_round if column in cells]
            row.append(f"{statistics.median(values):.2f}" if values else "-")
            if "/" in column and values:
                spreads.append(f"{name} {column}: " + " ".join(f"{v:.2f}" for v in values))
        print(" ".join(f"{c:>13}" for c in row))
    print(f"each round's ratios (the table gives their median):")
    for line in spreads:
        print("  " + line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": rounds}, f, indent=1)


if __name__ == "__main__":
    main()
