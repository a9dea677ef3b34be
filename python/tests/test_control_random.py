"""lax.scan, while_loop, fori_loop, cond and switch; jax.random; vmap; grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import check

R = np.random.RandomState(4)
X = R.standard_normal((5, 6)).astype(np.float32)


def _scan_cumsum(x):
    return jax.lax.scan(lambda c, r: (c + r, c * 2), jnp.zeros(x.shape[1], x.dtype), x)


def _while_halving(x):
    return jax.lax.while_loop(lambda s: jnp.max(jnp.abs(s[0])) > 0.01, lambda s: (s[0] / 2, s[1] + 1),
                              (x, jnp.int32(0)))


def _fori(x):
    return jax.lax.fori_loop(0, 7, lambda i, acc: acc * 0.9 + jnp.float32(i), x)


def _cond(x):
    return jax.lax.cond(jnp.sum(x) > 0, lambda v: v * 2, lambda v: v - 1, x)


def _switch(x):
    branches = [lambda v: v + 1, lambda v: v * v, lambda v: -v]
    return [jax.lax.switch(i, branches, x) for i in range(3)]


def _switch_dynamic(x, i):
    return jax.lax.switch(i, [lambda v: v + 1, lambda v: v * v, lambda v: -v], x)


def _scan_rnn(x):
    w = jnp.eye(6, dtype=x.dtype) * 0.5
    return jax.lax.scan(lambda h, r: (jnp.tanh(h @ w + r),) * 2, jnp.zeros(6, x.dtype), x)


CONTROL = {
    "scan": (_scan_cumsum, (X,)), "scan_rnn": (_scan_rnn, (X,)), "while_loop": (_while_halving, (X,)),
    "fori_loop": (_fori, (X,)), "cond": (_cond, (X,)), "cond_false": (_cond, (-np.abs(X),)), "switch": (_switch, (X,)),
    "switch_dynamic": (_switch_dynamic, (X, np.int32(1))),
    "switch_clamped": (_switch_dynamic, (X, np.int32(7))),
    "map": (lambda x: jax.lax.map(lambda r: jnp.sum(r * r), x), (X,)),
}


@pytest.mark.parametrize("name", sorted(CONTROL))
def test_control_flow(name):
    f, args = CONTROL[name]
    check(f, *args, rtol=1e-5)


RANDOM = {
    "uniform": lambda k: jax.random.uniform(k, (4, 5)), "normal": lambda k: jax.random.normal(k, (100,)),
    "randint": lambda k: jax.random.randint(k, (20,), 0, 10), "bernoulli": lambda k: jax.random.bernoulli(k, 0.3, (30,)),
    "split": lambda k: jax.random.key_data(jax.random.split(k, 3)),
    "permutation": lambda k: jax.random.permutation(k, 12),
    "fold_in_normal": lambda k: jax.random.normal(jax.random.fold_in(k, 7), (3, 3)),
    "truncated_normal": lambda k: jax.random.truncated_normal(k, -1.0, 1.0, (50,)),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random(name):
    # The key is made on each backend from the same seed; the bits must agree.
    check(lambda seed: RANDOM[name](jax.random.key(seed)), np.uint32(42), rtol=1e-5, atol=1e-6)


VMAPS = {
    "matvec": (jax.vmap(lambda m, v: m @ v), (R.standard_normal((4, 3, 5)).astype(np.float32),
                                               R.standard_normal((4, 5)).astype(np.float32))),
    "where": (jax.vmap(lambda r: jnp.where(r > 0, r, 0.1 * r)), (X,)),
    "in_axes": (jax.vmap(lambda a, b: a * b, in_axes=(1, None)), (X, np.float32(3.0))),
    "nested": (jax.vmap(jax.vmap(lambda a: jnp.sin(a) * a)), (X,)),
    "per_row_sort": (jax.vmap(jnp.sort), (X,)),
}


@pytest.mark.parametrize("name", sorted(VMAPS))
def test_vmap(name):
    f, args = VMAPS[name]
    check(f, *args, rtol=1e-5)


def _mlp_params(rng, sizes):
    return [(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m), np.zeros(n, np.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def _mlp(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def _loss(params, x, y):
    return jnp.mean((_mlp(params, x) - y) ** 2)


def test_grad_mlp_loss():
    rng = np.random.RandomState(5)
    params = _mlp_params(rng, [8, 16, 16, 1])
    x = rng.standard_normal((32, 8)).astype(np.float32)
    y = rng.standard_normal((32, 1)).astype(np.float32)
    check(jax.grad(_loss), params, x, y, rtol=1e-4, atol=1e-5)


def test_value_and_grad_mlp_loss():
    rng = np.random.RandomState(6)
    params = _mlp_params(rng, [4, 8, 1])
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 1)).astype(np.float32)
    check(jax.value_and_grad(_loss), params, x, y, rtol=1e-4, atol=1e-5)
