"""Anvil's CPU plugin against its peers, measured in one run: each workload
of issue 11 as `anvil bench` times it, next to what bounds it on this machine
(memcpy bandwidth for the elementwise chain), what eager PyTorch takes for
the same model (bench/peers/torch_peers.py) and what ONNX Runtime takes
(bench/peers/onnxruntime_peers.py, for the chain and the MLP). Prints a
table of medians and ratios; `--json FILE` keeps the numbers.

    /usr/bin/python3 bench/compare.py [--build build] [--corpus ../shared/corpus]

Speed is only ever reported here, never asserted in a test.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# workload -> (program, iterations)
PROGRAMS = {
    "chain": ("bench/programs/elementwise_chain.hlo", 10),
    "mlp": ("bench/programs/mlp_gelu.hlo", 10),
    "dot": ("bench/programs/dot_2048.hlo", 10),
    "mobilenet": ("{corpus}/xla-hlo/xla/tools/data/benchmarking/mobilenet_v2.hlo", 3),
}


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
    probe = subprocess.run([python, "-c", "import " + ", ".join(modules)], capture_output=True)
    if probe.returncode != 0:
        print(f"{script} skipped: {missing}", file=sys.stderr)
        return {}
    run = subprocess.run([python, os.path.join(HERE, "peers", script), *workloads],
                         check=True, capture_output=True, text=True)
    results = {}
    for line in run.stdout.splitlines():
        r = json.loads(line)
        results[r["workload"]] = r
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--corpus", default=os.environ.get("ANVIL_CORPUS_DIR", os.path.join(ROOT, "..", "shared", "corpus")))
    parser.add_argument("--workloads", nargs="+", default=list(PROGRAMS), choices=list(PROGRAMS))
    parser.add_argument("--json", help="write every number measured here to this file")
    parser.add_argument("--onnxruntime-python", default=os.path.join(ROOT, "build", "bench-venv", "bin", "python"),
                        help="a Python with onnxruntime and torch (bench/setup_peers.sh makes one)")
    args = parser.parse_args()
    tool = os.path.join(args.build, "tools", "anvil")

    report = {"memcpy_gb_per_s": memcpy_gb_per_s(), "anvil": {}}
    for name in args.workloads:
        program, iterations = PROGRAMS[name]
        path = program.format(corpus=args.corpus) if "{corpus}" in program else os.path.join(ROOT, program)
        report["anvil"][name] = anvil_bench(tool, path, iterations)
    system_python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    report["pytorch"] = peer(system_python, "torch_peers.py", ["torch", "torchvision"], args.workloads,
                             "install Debian's python3-torch and python3-torchvision")
    ort_workloads = [w for w in args.workloads if w in ("chain", "mlp")]
    report["onnxruntime"] = peer(args.onnxruntime_python, "onnxruntime_peers.py", ["torch", "onnxruntime"],
                                 ort_workloads, "run bench/setup_peers.sh (onnxruntime in build/bench-venv)") \
        if ort_workloads else {}

    bandwidth = report["memcpy_gb_per_s"]
    print(f"memcpy: {bandwidth:.1f} GB/s (read + write)")
    columns = ["workload", "anvil ms", "compile ms", "pytorch ms", "anvil/pytorch", "onnxrt ms", "anvil/onnxrt",
               "bound ms", "anvil/bound"]
    print(" ".join(f"{c:>13}" for c in columns))
    for name, a in report["anvil"].items():
        anvil_ms = a["execute_ms"]["median"]
        cells = [name, f"{anvil_ms:.2f}", f"{a['compile_ms']:.1f}"]
        for kind in ("pytorch", "onnxruntime"):
            r = report[kind].get(name)
            peer_ms = r["execute_ms"]["median"] if r else None
            cells += [f"{peer_ms:.2f}", f"{anvil_ms / peer_ms:.2f}"] if peer_ms else ["-", "-"]
        # The chain's bound: its inputs and output streamed once at memcpy speed.
        bound_ms = a["bytes"] / (bandwidth * 1e9) * 1e3 if name == "chain" else None
        cells += [f"{bound_ms:.2f}", f"{anvil_ms / bound_ms:.2f}"] if bound_ms else ["-", "-"]
        print(" ".join(f"{c:>13}" for c in cells))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
