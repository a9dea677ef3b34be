"""ONNX Runtime (CPU) on the elementwise chain and the GELU MLP of
bench/programs, the same models as torch_peers.py exported to ONNX, so
that Anvil's times have a compiled peer measured in the same run.

Prints one JSON line per workload, as torch_peers.py does. Needs Debian's
python3-torch (for the export) and onnxruntime from PyPI, in a virtual
environment that sees the system packages:

    /usr/bin/python3 -m venv --system-site-packages build/bench-venv
    build/bench-venv/bin/pip install onnxruntime==1.32.0
    build/bench-venv/bin/python bench/peers/onnxruntime_peers.py chain mlp
"""
import argparse
import json
import os
import tempfile

import numpy as np
import onnxruntime
import torch

from torch_peers import timed


class Chain(torch.nn.Module):
    # bench/programs/elementwise_chain.hlo, op for op.
    def forward(self, a, b, c):
        t = torch.tanh(a * b + c)
        x = torch.exp(-(t * b + a))
        return (x + c) / b


class Mlp(torch.nn.Module):
    # bench/programs/mlp_gelu.hlo: 4 x (dot 1024x1024 + bias + GELU, tanh form), batch 256.
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(1024, 1024) for _ in range(4))

    def forward(self, x):
        for layer in self.layers:
            x = torch.nn.functional.gelu(layer(x), approximate="tanh")
        return x


class MlpWeightsAsInputs(torch.nn.Module):
    # The same model with its weights and biases as graph inputs, as
    # bench/programs/mlp_gelu.hlo takes them (parameters 1-8), rather than
    # initializers, which ONNX Runtime may pack once when the session loads.
    def forward(self, x, *weights):
        for w, b in zip(weights[0::2], weights[1::2]):
            x = torch.nn.functional.gelu(x @ w + b, approximate="tanh")
        return x


def session(model, inputs, threads):
    path = os.path.join(tempfile.mkdtemp(), "model.onnx")
    torch.onnx.export(model, tuple(inputs), path, opset_version=17)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    s = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feeds = {i.name: t.numpy() for i, t in zip(s.get_inputs(), inputs)}
    return lambda: s.run(None, feeds)


def chain(threads):
    n = 1 << 24
    return session(Chain(), [torch.rand(n) + 0.5 for _ in range(3)], threads)


def mlp(threads):
    return session(Mlp(), [torch.rand(256, 1024)], threads)


def mlp_weights_as_inputs(threads):
    weights = []
    for _ in range(4):
        weights += [torch.randn(1024, 1024) / 32, torch.randn(1024) / 32]
    return session(MlpWeightsAsInputs(), [torch.rand(256, 1024), *weights], threads)


WORKLOADS = {"chain": chain, "mlp": mlp, "mlp_weights_as_inputs": mlp_weights_as_inputs}


def workload_and_iterations(text):
    name, _, iterations = text.partition(":")
    if name not in WORKLOADS or (iterations and not iterations.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r}: not NAME or NAME:ITERATIONS with NAME one of {sorted(WORKLOADS)}")
    return name, int(iterations) if iterations else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="+", type=workload_and_iterations,
                        help=f"NAME or NAME:ITERATIONS (overriding --iterations), NAME one of {', '.join(sorted(WORKLOADS))}")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    np.random.seed(0)
    for name, iterations in args.workloads:
        iterations = iterations or args.iterations
        times = timed(WORKLOADS[name](args.threads), iterations, args.warmup)
        print(json.dumps({"workload": name, "peer": f"onnxruntime {onnxruntime.__version__} cpu, {args.threads} threads",
                          "execute_ms": times}), flush=True)


if __name__ == "__main__":
    main()
