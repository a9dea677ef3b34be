"""Workloads beyond bench/jax_compare.py's three, written as JAX users write
them, for jax.jit on Anvil against XLA's CPU backend: a transformer block's
training step, a small CNN's training step (convolutions, batch statistics,
a max pool and its gradient), the gradient of a 100-step RNN through
lax.scan, an Adam update, softmax cross-entropy and its gradient, cumsum,
lax.top_k, attention, jnp.sort and jnp.argsort. Each entry is (function,
arguments) on numpy arrays made from a fixed seed.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

f32 = np.float32


def _transformer_step(r):
    B, S, D, H, F = 8, 128, 256, 4, 1024

    def ln(x, g, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * lax.rsqrt(v + 1e-5) * g + b

    def block(p, x):
        h = ln(x, p["g1"], p["b1"])
        q, k, v = ((h @ p[w]).reshape(B, S, H, D // H) for w in ("wq", "wk", "wv"))
        a = jax.nn.softmax(jnp.einsum("bshd,bthd->bhst", q, k) / 8.0, axis=-1)
        x = x + jnp.einsum("bhst,bthd->bshd", a, v).reshape(B, S, D) @ p["wo"]
        h = ln(x, p["g2"], p["b2"])
        return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]

    def step(p, x, y):
        g = jax.grad(lambda p: ((block(p, x) - y) ** 2).mean())(p)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)

    shapes = dict(wq=(D, D), wk=(D, D), wv=(D, D), wo=(D, D), w1=(D, F), w2=(F, D))
    p = {k: (r.standard_normal(s) * 0.05).astype(f32) for k, s in shapes.items()}
    p.update(g1=np.ones(D, f32), b1=np.zeros(D, f32), g2=np.ones(D, f32), b2=np.zeros(D, f32))
    return step, [p, r.standard_normal((B, S, D)).astype(f32), r.standard_normal((B, S, D)).astype(f32)]


def _cnn_step(r):
    def conv(x, w, s=1):
        return lax.conv_general_dilated(x, w, (s, s), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def bn(x):
        return (x - x.mean((0, 1, 2))) * lax.rsqrt(x.var((0, 1, 2)) + 1e-5)

    def net(p, x):
        x = jax.nn.relu(bn(conv(x, p["c1"])))
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        x = jax.nn.relu(bn(conv(x, p["c2"])))
        x = jax.nn.relu(bn(conv(x, p["c3"], 2)))
        return x.mean((1, 2)) @ p["fc"]

    def step(p, x, y):
        g = jax.grad(lambda p: -(jax.nn.log_softmax(net(p, x)) * y).sum(-1).mean())(p)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)

    p = dict(c1=(r.standard_normal((3, 3, 3, 32)) * 0.1).astype(f32),
             c2=(r.standard_normal((3, 3, 32, 64)) * 0.05).astype(f32),
             c3=(r.standard_normal((3, 3, 64, 128)) * 0.05).astype(f32),
             fc=(r.standard_normal((128, 10)) * 0.05).astype(f32))
    y = np.eye(10, dtype=f32)[r.randint(0, 10, 32)]
    return step, [p, r.standard_normal((32, 64, 64, 3)).astype(f32), y]


def _rnn_scan(r):
    def run(w, u, xs, h0):
        def cell(h, x):
            h = jnp.tanh(h @ w + x @ u)
            return h, h
        return lax.scan(cell, h0, xs)[1].sum()

    return jax.grad(run, argnums=(0, 1)), [(r.standard_normal((256, 256)) * 0.05).astype(f32),
                                           (r.standard_normal((128, 256)) * 0.05).astype(f32),
                                           r.standard_normal((100, 32, 128)).astype(f32), np.zeros((32, 256), f32)]


def _adam(r):
    def update(p, g, m, v):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        return p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), m, v

    n = 1 << 22
    return update, [r.standard_normal(n).astype(f32), r.standard_normal(n).astype(f32),
                    r.standard_normal(n).astype(f32), np.abs(r.standard_normal(n)).astype(f32)]


def _cross_entropy(r):
    def loss(logits, labels):
        return -(jax.nn.log_softmax(logits) * jax.nn.one_hot(labels, logits.shape[-1])).sum(-1).mean()

    return jax.value_and_grad(loss), [r.standard_normal((512, 8192)).astype(f32), r.randint(0, 8192, 512).astype(np.int32)]


def _attention(r):
    def attend(q, k, v):
        a = jax.nn.softmax(jnp.einsum("bhsd,bhtd->bhst", q, k), axis=-1)
        return jnp.einsum("bhst,bhtd->bhsd", a, v)

    return attend, [r.standard_normal((4, 8, 256, 64)).astype(f32) for _ in range(3)]


def workloads():
    r = np.random.RandomState(0)
    rows = r.standard_normal((1024, 1000)).astype(f32)
    return {
        "transformer_step": _transformer_step(r),
        "cnn_step": _cnn_step(r),
        "rnn_scan": _rnn_scan(r),
        "adam": _adam(r),
        "cross_entropy": _cross_entropy(r),
        "cumsum": (lambda x: jnp.cumsum(x, axis=1), [r.standard_normal((1024, 1024)).astype(f32)]),
        "top_k": (lambda x: lax.top_k(x, 10), [rows]),
        "attention": _attention(r),
        "sort": (lambda x: jnp.sort(x, axis=-1), [rows]),
        "argsort": (lambda x: jnp.argsort(x, axis=-1), [rows]),
    }
