"""jnp elementwise functions over f32, bf16, f16, i32, u8, bool and f64."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import anvil_device, check, cpu_device, run_on

R = np.random.RandomState(1)
F32 = R.uniform(-3, 3, size=(4, 33)).astype(np.float32)
POS = R.uniform(0.1, 4, size=(4, 33)).astype(np.float32)
UNIT = R.uniform(-0.95, 0.95, size=(4, 33)).astype(np.float32)
F32B = R.uniform(-3, 3, size=(4, 33)).astype(np.float32)
I32 = R.randint(-1000, 1000, size=(5, 17)).astype(np.int32)
I32B = R.randint(1, 50, size=(5, 17)).astype(np.int32)
U8 = R.randint(0, 256, size=(5, 17)).astype(np.uint8)
U8B = R.randint(0, 256, size=(5, 17)).astype(np.uint8)
BOOL = R.rand(6, 7) > 0.5
BOOLB = R.rand(6, 7) > 0.3

UNARY_F32 = {
    "abs": (jnp.abs, F32), "negative": (jnp.negative, F32), "exp": (jnp.exp, F32), "exp2": (jnp.exp2, F32),
    "expm1": (jnp.expm1, F32), "log": (jnp.log, POS), "log1p": (jnp.log1p, POS), "log2": (jnp.log2, POS),
    "sqrt": (jnp.sqrt, POS), "rsqrt": (jax.lax.rsqrt, POS), "cbrt": (jnp.cbrt, F32), "sin": (jnp.sin, F32),
    "cos": (jnp.cos, F32), "tan": (jnp.tan, UNIT), "tanh": (jnp.tanh, F32), "arcsin": (jnp.arcsin, UNIT),
    "arccos": (jnp.arccos, UNIT), "arctan": (jnp.arctan, F32), "sinh": (jnp.sinh, F32), "cosh": (jnp.cosh, F32),
    "arcsinh": (jnp.arcsinh, F32), "arctanh": (jnp.arctanh, UNIT), "sigmoid": (jax.nn.sigmoid, F32),
    "relu": (jax.nn.relu, F32), "gelu": (jax.nn.gelu, F32), "softplus": (jax.nn.softplus, F32),
    "floor": (jnp.floor, F32), "ceil": (jnp.ceil, F32), "round": (jnp.round, F32), "sign": (jnp.sign, F32),
    "square": (jnp.square, F32), "reciprocal": (jnp.reciprocal, POS), "isfinite": (jnp.isfinite, F32),
    "erf": (jax.scipy.special.erf, F32), "trunc": (jnp.trunc, F32),
}


@pytest.mark.parametrize("name", sorted(UNARY_F32))
def test_unary_f32(name):
    f, x = UNARY_F32[name]
    check(f, x, rtol=1e-4 if name in ("gelu", "erf", "arcsinh", "cbrt") else None)


BINARY_F32 = {
    "add": jnp.add, "subtract": jnp.subtract, "multiply": jnp.multiply, "divide": jnp.divide,
    "maximum": jnp.maximum, "minimum": jnp.minimum, "arctan2": jnp.arctan2, "remainder": jnp.remainder,
    "hypot": jnp.hypot, "less": jnp.less, "less_equal": jnp.less_equal, "equal": jnp.equal,
    "not_equal": jnp.not_equal, "greater": jnp.greater, "greater_equal": jnp.greater_equal,
    "copysign": jnp.copysign, "where_pos": lambda a, b: jnp.where(a > 0, a, b),
}


@pytest.mark.parametrize("name", sorted(BINARY_F32))
def test_binary_f32(name):
    check(BINARY_F32[name], F32, F32B)


def test_power_f32():
    check(jnp.power, POS, F32B)


def test_broadcasting_f32():
    check(lambda a, b: a * b[:, None] + 1.0, F32, F32[:, 0])


def test_clip_f32():
    check(lambda a: jnp.clip(a, -1.0, 2.0), F32)


NARROW = {
    "add": (lambda a, b: a + b), "multiply": (lambda a, b: a * b), "exp": (lambda a, b: jnp.exp(a)),
    "tanh": (lambda a, b: jnp.tanh(a)), "maximum": (lambda a, b: jnp.maximum(a, b)),
    "divide": (lambda a, b: a / (jnp.abs(b) + 1)), "convert_up": (lambda a, b: a.astype(jnp.float32) * 3),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(NARROW))
def test_narrow_floats(name, dtype):
    dt = jnp.bfloat16 if dtype == "bfloat16" else jnp.float16
    check(NARROW[name], F32.astype(dt), F32B.astype(dt))


INT32 = {
    "add": jnp.add, "subtract": jnp.subtract, "multiply": jnp.multiply, "floor_divide": jnp.floor_divide,
    "remainder": jnp.remainder, "maximum": jnp.maximum, "minimum": jnp.minimum, "bitwise_and": jnp.bitwise_and,
    "bitwise_or": jnp.bitwise_or, "bitwise_xor": jnp.bitwise_xor, "left_shift": lambda a, b: a << (b % 8),
    "right_shift": lambda a, b: a >> (b % 8), "less": jnp.less, "equal": jnp.equal,
    "abs": lambda a, b: jnp.abs(a), "sign": lambda a, b: jnp.sign(a), "negative": lambda a, b: -a,
    "to_float": lambda a, b: a.astype(jnp.float32) / 7.0,
}


@pytest.mark.parametrize("name", sorted(INT32))
def test_int32(name):
    check(INT32[name], I32, I32B)


UINT8 = {
    "add_wraps": jnp.add, "multiply_wraps": jnp.multiply, "maximum": jnp.maximum, "bitwise_and": jnp.bitwise_and,
    "bitwise_not": lambda a, b: ~a, "greater": jnp.greater, "to_int32": lambda a, b: a.astype(jnp.int32) - b,
}


@pytest.mark.parametrize("name", sorted(UINT8))
def test_uint8(name):
    check(UINT8[name], U8, U8B)


BOOLEAN = {
    "and": jnp.logical_and, "or": jnp.logical_or, "xor": jnp.logical_xor, "not": lambda a, b: ~a,
    "select": lambda a, b: jnp.where(a, 1.5, -2.0), "count": lambda a, b: jnp.sum(a & b),
}


@pytest.mark.parametrize("name", sorted(BOOLEAN))
def test_bool(name):
    check(BOOLEAN[name], BOOL, BOOLB)


F64 = {
    "add": lambda a, b: a + b, "exp": lambda a, b: jnp.exp(a), "log": lambda a, b: jnp.log(jnp.abs(a) + 1),
    "sin": lambda a, b: jnp.sin(a), "divide": lambda a, b: a / (b * b + 1), "tanh": lambda a, b: jnp.tanh(a),
    "sum": lambda a, b: jnp.sum(a * b), "matmul": lambda a, b: a @ b.T, "sqrt": lambda a, b: jnp.sqrt(jnp.abs(a)),
}


@pytest.mark.parametrize("name", sorted(F64))
def test_float64_with_x64(name):
    with jax.enable_x64(True):
        a = F32.astype(np.float64)
        b = F32B.astype(np.float64)
        got = check(F64[name], a, b, rtol=1e-10 if name in ("matmul", "sum") else None)
        assert np.asarray(got).dtype == np.float64


def test_subnormal_results_are_flushed_to_zero_as_on_xla_cpu():
    # XLA's CPU client flushes denormals; the PJRT plugin compiles for the
    # CPU plugin with flush_denormals=true so that JAX computes the same.
    # Large enough that the plugin's helper threads compute part of it.
    x = np.full((1 << 22,), 1e-20, np.float32)
    f = lambda a: a * a  # noqa: E731
    got = np.asarray(run_on(anvil_device(), f, [x]))
    want = np.asarray(run_on(cpu_device(), f, [x]))
    assert np.array_equal(want, np.zeros_like(x)), "XLA's CPU client no longer flushes denormals"
    assert np.array_equal(got, want)
