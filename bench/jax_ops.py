#!/usr/bin/env python3
"""jax.jit time per call of single operations and small compositions on
Anvil against JAX's own CPU backend (XLA), in one process: reductions along
either axis and of whole arrays (a sum, a loss, an argmax, channel
statistics, a dot of two vectors), normalisations, elementwise math (exact and tanh GELU, erf_inv,
log1p, silu, elu), bf16 and f16 arithmetic and matmuls, integer arithmetic,
data movement (transposes, pads, strided slices, gathers, scatters), batched
matmuls, convolutions (dense, depthwise, 1-D, transposed), pooling, loops,
sort and top_k, random numbers (threefry normal and dropout), FFT, Cholesky
and triangular solves, and small gradients. Where bench/jax_compare.py
times whole models, this looks for the single operation a model would
stall on: each line is one jit on each backend.

    build/jax-venv/bin/python bench/jax_ops.py [--repeats N] [NAME...]

Prints, per workload, the median milliseconds per call on each backend
(Anvil timed twice, before and after XLA, and the lower taken, since a
shared machine drifts) and the ratio Anvil/XLA, or the error a backend gave.
"""

import argparse
import os

os.environ.setdefault("JAX_PLATFORMS", "anvil,cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from jax_compare import time_per_call  # noqa: E402


def workloads():
    """Name -> (function, inputs)."""
    r = np.random.RandomState(0)

    def f32(*shape):
        return r.standard_normal(shape).astype(np.float32)

    X = f32(2048, 1024)
    I = r.randint(0, 2048, size=(8192,)).astype(np.int32)
    img = f32(32, 56, 56, 64)
    ker = f32(3, 3, 64, 64)
    dker = f32(3, 3, 1, 64)
    key = jax.random.PRNGKey(0)
    return {
        "sum_axis0": (lambda x: x.sum(0), [X]),
        "sum_axis1": (lambda x: x.sum(1), [X]),
        "mean_var": (lambda x: (x.mean(1), x.var(1)), [X]),
        "argmin_axis0": (lambda x: x.argmin(0), [X]),
        "sum_all": (lambda x: x.sum(), [X]),
        "mse_loss": (lambda x, y: ((x - y) ** 2).mean(), [X, X * 0.5]),
        "argmax_all": (lambda x: x.argmax(), [X]),
        "argmax_vocab": (lambda l: l.argmax(-1), [f32(1, 50257)]),
        "channel_mean_var": (lambda x: (x.mean((0, 1, 2)), x.var((0, 1, 2))), [f32(32, 56, 56, 32)]),
        "tall_mean0": (lambda t: t.mean(0), [f32(1 << 20, 8)]),
        "tall_max0": (lambda t: t.max(0), [f32(1 << 20, 8)]),
        "channel_max": (lambda x: x.max((0, 1, 2)), [f32(32, 56, 56, 32)]),
        "vector_dot": (lambda v: v @ v, [f32(1 << 22)]),
        "logsumexp": (lambda x: jax.nn.logsumexp(x, 1), [X]),
        "softmax_axis0": (lambda x: jax.nn.softmax(x, 0), [X]),
        "rmsnorm": (lambda x: x * lax.rsqrt((x*x).mean(1, keepdims=True) + 1e-6), [X]),
        "cumsum_axis0": (lambda x: jnp.cumsum(x, 0), [X]),
        "cumprod_axis1": (lambda x: jnp.cumprod(x * 0.001 + 1, 1), [X]),
        "gelu_erf": (lambda x: jax.nn.gelu(x, approximate=False), [X]),
        "silu": (lambda x: jax.nn.silu(x), [X]),
        "sigmoid": (lambda x: jax.nn.sigmoid(x), [X]),
        "elu": (lambda x: jax.nn.elu(x), [X]),
        "log1p_pow": (lambda x: jnp.log1p(jnp.abs(x)) ** 1.5, [X]),
        "erf_inv": (lambda x: jax.scipy.special.erfinv(jnp.tanh(x) * 0.99), [X]),
        "bf16_ew": (lambda x: (x.astype(jnp.bfloat16) * 2 + 1).astype(jnp.float32), [X]),
        "f16_matmul": (lambda a, b: (a.astype(jnp.float16) @ b.astype(jnp.float16)).astype(jnp.float32), [f32(512, 1024), f32(1024, 512)]),
        "bf16_matmul": (lambda a, b: (a.astype(jnp.bfloat16) @ b.astype(jnp.bfloat16)).astype(jnp.float32), [f32(512, 1024), f32(1024, 512)]),
        "int_ops": (lambda x: ((x.astype(jnp.int32) * 7) ^ (x.astype(jnp.int32) >> 2)) % 13, [X * 1000]),
        "transpose_021": (lambda x: x.reshape(64, 32, 1024).transpose(0, 2, 1) + 1, [X]),
        "concat_pad": (lambda x: jnp.pad(jnp.concatenate([x, x * 2], 1), ((1, 1), (2, 2))), [X]),
        "strided_slice_rev": (lambda x: x[::2, ::-3] * 2, [X]),
        "take_rows": (lambda x, i: x[i], [X, I]),
        "take_along_axis": (lambda x: jnp.take_along_axis(x, jnp.argsort(x[:, :64], 1), 1), [X]),
        "scatter_add": (lambda x, i: jnp.zeros((2048, 1024), jnp.float32).at[i % 2048].add(x[:1024].repeat(8, 0)), [X, I]),
        "one_hot_matmul": (lambda x, i: jax.nn.one_hot(i[:2048] % 1024, 1024) @ x.T[:1024, :256], [X, I]),
        "dyn_update_slice": (lambda x, s: lax.dynamic_update_slice(x, jnp.ones((256, 1024), jnp.float32), (s, 0)), [X, np.int32(100)]),
        "batched_matmul": (lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k), [f32(8, 8, 256, 64), f32(8, 8, 256, 64)]),
        "matvec": (lambda a, v: a @ v, [X, f32(1024)]),
        "conv3x3_nhwc": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), [img, ker]),
        "conv3x3_relu_bias": (lambda x, w, b: jax.nn.relu(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")) + b), [img, ker, f32(64)]),
        "depthwise3x3": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=64), [img, dker]),
        "conv1d": (lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")), [f32(16, 1024, 128), f32(5, 128, 128)]),
        "conv_transpose": (lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), [f32(16, 28, 28, 64), f32(3, 3, 64, 32)]),
        "avg_pool": (lambda x: lax.reduce_window(x, 0., lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") / 9, [img]),
        "max_pool": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), [img]),
        "fori_small": (lambda x: lax.fori_loop(0, 100, lambda i, c: c * 0.99 + 1, x), [f32(1024)]),
        "sort_axis0": (lambda x: jnp.sort(x, 0), [X]),
        "top_k_8": (lambda x: lax.top_k(x, 8), [X]),
        "rng_normal": (lambda k: jax.random.normal(k, (2048, 1024)), [key]),
        "rng_dropout": (lambda k, x: jnp.where(jax.random.bernoulli(k, 0.9, x.shape), x / 0.9, 0), [key, X]),
        "fft": (lambda x: jnp.abs(jnp.fft.rfft(x, axis=1)), [X]),
        "cholesky_solve": (lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a @ a.T + 512 * jnp.eye(512)), b), [f32(512, 512), f32(512, 64)]),
        "tri_solve": (lambda a, b: jax.scipy.linalg.solve_triangular(jnp.tril(a) + 64 * jnp.eye(512), b, lower=True), [f32(512, 512), f32(512, 256)]),
        "grad_mlp_small": (lambda w, x: jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w), [f32(512, 512), f32(256, 512)]),
        "layernorm_grad": (lambda x: jax.grad(lambda x: jnp.sum(((x - x.mean(1, keepdims=True)) / jnp.sqrt(x.var(1, keepdims=True) + 1e-5)) ** 3))(x), [X]),
        "where_select": (lambda x: jnp.where(x > 0, x, 0.1 * x).max(1), [X]),
        "clip_round": (lambda x: jnp.round(jnp.clip(x, -1, 1) * 127).astype(jnp.int8), [X]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    table = workloads()
    anvil, cpu = jax.devices("anvil")[0], jax.devices("cpu")[0]
    for name in args.names or list(table):
        f, inputs = table[name]
        try:
            first = time_per_call(anvil, f, inputs, args.repeats)
            xla = time_per_call(cpu, f, inputs, args.repeats)
            ours = min(first, time_per_call(anvil, f, inputs, args.repeats))
            print(f"{name:22s} anvil {ours:9.3f} ms  xla {xla:9.3f} ms  anvil/xla {ours / xla:6.2f}", flush=True)
        except Exception as e:  # a backend's refusal is a result too
            print(f"{name:22s} ERROR {type(e).__name__}: {str(e)[:300]}", flush=True)


if __name__ == "__main__":
    main()
