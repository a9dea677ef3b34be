"""Reductions, dot and einsum, and convolutions."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import check

R = np.random.RandomState(2)
X = R.standard_normal((6, 7, 8)).astype(np.float32)
I = R.randint(-50, 50, size=(6, 7, 8)).astype(np.int32)

REDUCTIONS = {
    "sum": lambda x: jnp.sum(x), "sum_axis": lambda x: jnp.sum(x, axis=1), "mean": lambda x: jnp.mean(x, axis=(0, 2)),
    "max": lambda x: jnp.max(x, axis=2), "min": lambda x: jnp.min(x), "prod": lambda x: jnp.prod(x[:2, :3], axis=0),
    "argmax": lambda x: jnp.argmax(x, axis=1), "argmin": lambda x: jnp.argmin(x, axis=0),
    "var": lambda x: jnp.var(x, axis=0), "std": lambda x: jnp.std(x, axis=-1),
    "logsumexp": lambda x: jax.nn.logsumexp(x, axis=1), "softmax": lambda x: jax.nn.softmax(x, axis=-1),
    "keepdims": lambda x: jnp.sum(x, axis=1, keepdims=True), "norm": lambda x: jnp.linalg.norm(x[0]),
    "any": lambda x: jnp.any(x > 2.0, axis=0), "all": lambda x: jnp.all(x > -3.0),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_f32(name):
    check(REDUCTIONS[name], X, rtol=1e-4)


INT_REDUCTIONS = {
    "sum": lambda x: jnp.sum(x, axis=0), "max": lambda x: jnp.max(x, axis=(1, 2)), "min": lambda x: jnp.min(x),
    "argmax": lambda x: jnp.argmax(x, axis=2),
}


@pytest.mark.parametrize("name", sorted(INT_REDUCTIONS))
def test_reduction_int32(name):
    check(INT_REDUCTIONS[name], I)


A = R.standard_normal((16, 32)).astype(np.float32)
B = R.standard_normal((32, 24)).astype(np.float32)
BA = R.standard_normal((3, 16, 32)).astype(np.float32)
BB = R.standard_normal((3, 32, 8)).astype(np.float32)
V = R.standard_normal((32,)).astype(np.float32)

DOTS = {
    "matmul": (lambda a, b: a @ b, A, B), "matvec": (lambda a, v: a @ v, A, V), "vdot": (lambda v, w: jnp.dot(v, w), V, V),
    "batched": (lambda a, b: jnp.matmul(a, b), BA, BB),
    "einsum_ij_jk": (lambda a, b: jnp.einsum("ij,jk->ik", a, b), A, B),
    "einsum_bij_bjk": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), BA, BB),
    "einsum_outer": (lambda v, w: jnp.einsum("i,j->ij", v, w), V, V),
    "einsum_trace_like": (lambda a, b: jnp.einsum("ij,jk->", a, b), A, B),
    "transposed": (lambda a, b: a.T.T @ b, A, B), "dot_general": (
        lambda a, b: jax.lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), BA, BB),
}


@pytest.mark.parametrize("name", sorted(DOTS))
def test_dot(name):
    f, a, b = DOTS[name]
    check(f, a, b, rtol=1e-4, atol=1e-4)


def test_dot_bf16_inputs_f32_accumulation():
    a, b = A.astype(jnp.bfloat16), B.astype(jnp.bfloat16)
    check(lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float32), a, b, rtol=1e-2, atol=1e-2)


def test_dot_int32():
    a = R.randint(-9, 9, size=(5, 6)).astype(np.int32)
    b = R.randint(-9, 9, size=(6, 4)).astype(np.int32)
    check(lambda a, b: a @ b, a, b)


IMG = R.standard_normal((2, 3, 9, 9)).astype(np.float32)
KER = R.standard_normal((4, 3, 3, 3)).astype(np.float32)

CONVS = {
    "valid": dict(window_strides=(1, 1), padding="VALID"),
    "same": dict(window_strides=(1, 1), padding="SAME"),
    "strided": dict(window_strides=(2, 2), padding=((1, 1), (1, 1))),
    "rhs_dilated": dict(window_strides=(1, 1), padding="VALID", rhs_dilation=(2, 2)),
    "lhs_dilated": dict(window_strides=(1, 1), padding=((2, 2), (2, 2)), lhs_dilation=(2, 2)),
}


@pytest.mark.parametrize("name", sorted(CONVS))
def test_conv_nchw(name):
    check(lambda x, k: jax.lax.conv_general_dilated(x, k, **CONVS[name]), IMG, KER, rtol=1e-4, atol=1e-4)


def test_conv_nhwc_hwio():
    x = np.transpose(IMG, (0, 2, 3, 1))
    k = np.transpose(KER, (2, 3, 1, 0))
    check(lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
          x, k, rtol=1e-4, atol=1e-4)


def test_conv_grouped():
    x = R.standard_normal((1, 4, 8, 8)).astype(np.float32)
    k = R.standard_normal((6, 2, 3, 3)).astype(np.float32)
    check(lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", feature_group_count=2), x, k,
          rtol=1e-4, atol=1e-4)


def test_conv_gradient():
    def loss(x, k):
        return jnp.sum(jax.lax.conv_general_dilated(x, k, (1, 1), "SAME") ** 2)
    check(jax.grad(loss, argnums=(0, 1)), IMG, KER, rtol=1e-3, atol=1e-3)
