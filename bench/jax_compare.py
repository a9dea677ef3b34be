#!/usr/bin/env python3
"""jax.jit time per call on Anvil against JAX's own CPU backend (XLA), in one
process on one machine: the MLP (four 1024x1024 layers with tanh-GELU,
batch 256), the elementwise chain of bench/programs/elementwise_chain.hlo
(16M f32 elements), and a one-op function (dispatch cost); `models` (or
`all`) adds bench/jax_models.py's workloads: training steps of a
transformer block and a small CNN, a scan RNN's gradient, Adam, cross-
entropy, cumsum, top_k, attention, sort and argsort.

Run in the venv scripts/setup_python.sh makes:

    build/jax-venv/bin/python bench/jax_compare.py [--repeats N] [WORKLOAD... | models | all]

Prints one line per workload: milliseconds per call on each backend (the
median of N timed calls after warm-up, each waited for with
block_until_ready) and the ratio Anvil/XLA (below 1: Anvil is faster).
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "anvil,cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_models  # noqa: E402


def gelu_tanh(h):
    return 0.5 * h * (1.0 + jnp.tanh(0.797884583 * (h + 0.044715 * h * h * h)))


def mlp(x, *params):
    for w, b in zip(params[0::2], params[1::2]):
        x = gelu_tanh(x @ w + b)
    return x


def chain(a, b, c):
    t = jnp.tanh(a * b + c)
    return (jnp.exp(-(t * b + a)) + c) / b


def one_op(x):
    return x + 1.0


def workloads():
    r = np.random.RandomState(0)
    mlp_args = [r.standard_normal((256, 1024)).astype(np.float32)]
    for _ in range(4):
        mlp_args += [(r.standard_normal((1024, 1024)) / 32).astype(np.float32), np.zeros(1024, np.float32)]
    n = 1 << 24
    chain_args = [r.uniform(-1, 1, n).astype(np.float32), r.uniform(0.5, 2, n).astype(np.float32),
                  r.uniform(-1, 1, n).astype(np.float32)]
    return {
        "mlp": (mlp, mlp_args),
        "chain": (chain, chain_args),
        "one_op": (one_op, [np.ones(4, np.float32)]),
    }


def time_per_call(device, f, args, repeats):
    with jax.default_device(device):
        placed = jax.device_put(args, device)
        jitted = jax.jit(f)
        for _ in range(3):
            jax.block_until_ready(jitted(*placed))
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            jax.block_until_ready(jitted(*placed))
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("workloads", nargs="*", default=["mlp", "chain", "one_op"])
    args = parser.parse_args()
    anvil, cpu = jax.devices("anvil")[0], jax.devices("cpu")[0]
    table = workloads()
    models = jax_models.workloads()
    table.update(models)
    names = []
    for name in args.workloads:
        names += {"models": list(models), "all": list(table)}.get(name, [name])
    print(f"{'workload':<16} {'anvil ms':>10} {'xla cpu ms':>11} {'anvil/xla':>10}")
    for name in names:
        f, inputs = table[name]
        repeats = args.repeats * (50 if name == "one_op" else 1)
        a = time_per_call(anvil, f, inputs, repeats)
        x = time_per_call(cpu, f, inputs, repeats)
        print(f"{name:<16} {a:>10.4g} {x:>11.4g} {a / x:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
