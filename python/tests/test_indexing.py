"""Indexing, .at[] updates, gather and scatter, sort, argsort, top_k, cumulative ops."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import check

R = np.random.RandomState(3)
X = R.standard_normal((8, 10)).astype(np.float32)
IDX = np.array([3, 0, 7, 3], dtype=np.int32)

INDEXING = {
    "slice": lambda x: x[1:5, 2:9], "strided": lambda x: x[::2, 1::3], "reverse": lambda x: x[::-1],
    "newaxis": lambda x: x[:, None, 3], "take_rows": lambda x: x[IDX], "take_cols": lambda x: x[:, IDX],
    "take_pairs": lambda x: x[IDX, IDX[::-1]], "negative_index": lambda x: x[-1, -2],
    "take_along": lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1),
    "dynamic_slice": lambda x: jax.lax.dynamic_slice(x, (2, 3), (4, 4)),
    "dynamic_update": lambda x: jax.lax.dynamic_update_slice(x, jnp.ones((2, 3), x.dtype), (5, 8)),
    "concatenate": lambda x: jnp.concatenate([x, 2 * x], axis=1), "stack": lambda x: jnp.stack([x, -x]),
    "pad": lambda x: jnp.pad(x, ((1, 2), (0, 3))), "transpose": lambda x: x.T, "reshape": lambda x: x.reshape(5, 16),
    "tile": lambda x: jnp.tile(x[:2], (2, 3)), "roll": lambda x: jnp.roll(x, 3, axis=1),
    "where_index": lambda x: jnp.where(x > 0, x, x[0]), "iota": lambda x: x + jnp.arange(10, dtype=x.dtype),
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing(name):
    check(INDEXING[name], X)


def test_dynamic_index_argument():
    check(lambda x, i: x[i], X, np.int32(5))


UPDATES = {
    "set": lambda x: x.at[IDX].set(1.0), "add_duplicates": lambda x: x.at[IDX].add(1.0),
    "mul": lambda x: x.at[2, 3].multiply(5.0), "min": lambda x: x.at[:, IDX].min(0.0),
    "max": lambda x: x.at[IDX, 1].max(0.5), "set_rows": lambda x: x.at[1:3].set(x[5:7]),
    "add_array": lambda x: x.at[IDX].add(jnp.arange(40, dtype=x.dtype).reshape(4, 10)),
}


@pytest.mark.parametrize("name", sorted(UPDATES))
def test_at_update(name):
    check(UPDATES[name], X)


def test_scatter_int32():
    i = R.randint(0, 100, size=(6, 5)).astype(np.int32)
    check(lambda x: x.at[jnp.array([0, 2, 2])].add(7), i)


def test_segment_sum():
    data = R.standard_normal((12, 3)).astype(np.float32)
    seg = np.array([0, 0, 1, 2, 2, 2, 3, 3, 4, 4, 4, 4], dtype=np.int32)
    check(lambda d, s: jax.ops.segment_sum(d, s, num_segments=5), data, seg, rtol=1e-5)


SORTS = {
    "sort": lambda x: jnp.sort(x, axis=1), "sort_axis0": lambda x: jnp.sort(x, axis=0),
    "argsort": lambda x: jnp.argsort(x, axis=1), "argsort_stable": lambda x: jnp.argsort(jnp.round(x), axis=1, stable=True),
    "top_k": lambda x: jax.lax.top_k(x, 3), "sort_descending": lambda x: jnp.sort(x, axis=1, descending=True),
}


@pytest.mark.parametrize("name", sorted(SORTS))
def test_sort(name):
    check(SORTS[name], X)


def test_sort_int32():
    check(lambda x: jnp.sort(x), R.randint(-5, 5, size=(30,)).astype(np.int32))


CUMULATIVE = {
    "cumsum": lambda x: jnp.cumsum(x, axis=1), "cumsum_axis0": lambda x: jnp.cumsum(x, axis=0),
    "cumprod": lambda x: jnp.cumprod(x[:, :5], axis=1), "cummax": lambda x: jax.lax.cummax(x, axis=1),
    "cumlogsumexp": lambda x: jax.lax.cumlogsumexp(x, axis=1),
}


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
def test_cumulative(name):
    check(CUMULATIVE[name], X, rtol=1e-4, atol=1e-5)


def test_cumsum_int32():
    check(lambda x: jnp.cumsum(x), R.randint(-9, 9, size=(50,)).astype(np.int32))
