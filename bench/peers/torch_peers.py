"""Eager PyTorch on the workloads of bench/programs (issue 11's and the
reductions, normalisations and data movement beside them) and MobileNet
v2's training step, so that Anvil's times have a peer measured in the same run.

Each workload prints one JSON line: {"workload", "peer", "execute_ms":
{"min", "median", "max"}}. Uses Debian's python3-torch and
python3-torchvision (no multi-GB download); `--threads` sets PyTorch's
intra-op threads (default: every core, as Anvil uses).

    /usr/bin/python3 bench/peers/torch_peers.py chain mlp dot mobilenet
"""
import argparse
import json
import os
import statistics
import time

import torch


def timed(fn, iterations, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return {"min": min(times), "median": statistics.median(times), "max": max(times)}


def chain():
    # bench/programs/elementwise_chain.hlo, op for op.
    n = 1 << 24
    a, b, c = (torch.rand(n) + 0.5 for _ in range(3))

    def step():
        t = torch.tanh(a * b + c)
        x = torch.exp(-(t * b + a))
        return (x + c) / b

    return step


def mlp():
    # bench/programs/mlp_gelu.hlo: 4 x (dot 1024x1024 + bias + GELU, tanh form), batch 256.
    x = torch.rand(256, 1024)
    layers = [(torch.rand(1024, 1024) * 0.03, torch.rand(1024)) for _ in range(4)]

    def step():
        h = x
        with torch.no_grad():
            for w, bias in layers:
                h = torch.nn.functional.gelu(h @ w + bias, approximate="tanh")
        return h

    return step


def dot():
    # bench/programs/dot_2048.hlo.
    a, b = torch.rand(2048, 2048), torch.rand(2048, 2048)
    return lambda: a @ b


def mobilenet():
    # The main job's program: MobileNet v2's training step at batch 96 (SGD).
    import torchvision

    model = torchvision.models.mobilenet_v2(num_classes=1000)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    images = torch.rand(96, 3, 224, 224)
    labels = torch.randint(0, 1000, (96,))
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()

    return step


# Programs outside issue 11's list (bench/programs/*.hlo): reductions,
# normalisations and data movement, each as PyTorch writes it.
def softmax():
    x = torch.rand(4096, 1024)
    return lambda: torch.softmax(x, 1)


def layernorm():
    x, g, b = torch.rand(4096, 1024), torch.rand(1024), torch.rand(1024)
    return lambda: torch.nn.functional.layer_norm(x, (1024,), g, b, eps=1e-5)


def column_sum():
    x = torch.rand(4096, 1024)
    return lambda: x.sum(0)


def embedding_lookup():
    table, ids = torch.rand(50000, 512), torch.randint(0, 50000, (8192,))
    return lambda: table[ids]


def embedding_gradient():
    # The HLO scatter returns a new table, so the peer adds into a copy.
    table, ids, updates = torch.rand(50000, 512), torch.randint(0, 50000, (8192,)), torch.rand(8192, 512)
    return lambda: table.clone().index_add_(0, ids, updates)


def transpose_4096():
    x = torch.rand(4096, 4096)
    return lambda: x.t().contiguous()


def argmax():
    # bench/programs/argmax.hlo returns the maxima and their indices.
    x = torch.rand(4096, 1000)
    return lambda: x.max(1)


def max_pool():
    x = torch.rand(32, 64, 112, 112)
    return lambda: torch.nn.functional.max_pool2d(x, 3, 2, 1)


def max_pool_grad():
    # PyTorch's backward scatters through the indices its forward saved;
    # select-and-scatter finds each window's maximum again.
    x = torch.rand(32, 64, 112, 112, requires_grad=True)
    y = torch.nn.functional.max_pool2d(x, 3, 2, 1)
    g = torch.rand_like(y)
    return lambda: torch.autograd.grad(y, x, g, retain_graph=True)


def sort_1m():
    # torch.sort also returns the permutation; it has no values-only sort.
    x = torch.rand(1 << 20)
    return lambda: torch.sort(x).values


WORKLOADS = {"chain": chain, "mlp": mlp, "dot": dot, "mobilenet": mobilenet, "softmax": softmax,
             "layernorm": layernorm, "column_sum": column_sum, "embedding_lookup": embedding_lookup,
             "embedding_gradient": embedding_gradient, "transpose_4096": transpose_4096, "argmax": argmax,
             "max_pool": max_pool, "max_pool_grad": max_pool_grad, "sort_1m": sort_1m}


def workload_and_iterations(text):
    name, _, iterations = text.partition(":")
    if name not in WORKLOADS or (iterations and not iterations.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r}: not NAME or NAME:ITERATIONS with NAME one of {sorted(WORKLOADS)}")
    return name, int(iterations) if iterations else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="+", type=workload_and_iterations,
                        help=f"NAME or NAME:ITERATIONS (overriding --iterations), NAME one of {', '.join(sorted(WORKLOADS))}")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for name, iterations in args.workloads:
        iterations = iterations or args.iterations
        iterations = min(iterations, 3) if name == "mobilenet" else iterations
        times = timed(WORKLOADS[name](), iterations, args.warmup)
        print(json.dumps({"workload": name, "peer": f"pytorch {torch.__version__} eager, {args.threads} threads",
                          "execute_ms": times}), flush=True)


if __name__ == "__main__":
    main()
