"""Eager PyTorch on the workloads of bench/programs and MobileNet v2's
training step, so that Anvil's times have a peer measured in the same run.

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


WORKLOADS = {"chain": chain, "mlp": mlp, "dot": dot, "mobilenet": mobilenet}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="+", choices=sorted(WORKLOADS))
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for name in args.workloads:
        iterations = min(args.iterations, 3) if name == "mobilenet" else args.iterations
        times = timed(WORKLOADS[name](), iterations, args.warmup)
        print(json.dumps({"workload": name, "peer": f"pytorch {torch.__version__} eager, {args.threads} threads",
                          "execute_ms": times}), flush=True)


if __name__ == "__main__":
    main()
