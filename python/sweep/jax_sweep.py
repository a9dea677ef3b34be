"""Sweep of small jitted JAX programs: Anvil (PJRT plugin) vs XLA's CPU backend.

About 3000 programs across jnp, jax.nn, jax.scipy, lax, jax.random, the
transformations and a few whole models (cases_dtypes.py, cases_structure.py
and cases_large.py beside this file hold the later three batches; the last
sizes its arrays to take the CPU plugin's fast paths), each run
on Anvil and on XLA's CPU in subprocess chunks (a crash or a hang loses
only its case). Not a CI test (about 7 minutes); the failures it found are
kept in python/tests. Run it in
the venv scripts/setup_python.sh makes, on the Anvil plugin of your choice:

  JAX_PLATFORMS=anvil,cpu [ANVIL_PJRT_PLUGIN=vulkan] build/jax-venv/bin/python python/sweep/jax_sweep.py

Results go to $ANVIL_SWEEP_DIR (default build/jax-sweep/): results.jsonl,
one record per case, and a line per failure on standard output.

Usage:
  jax_sweep.py                      # run everything, write results.jsonl
  jax_sweep.py --list               # list case names
  jax_sweep.py --only NAME [NAME..] # run selected cases (in-process, verbose)
Internally:
  jax_sweep.py --worker OUT X64 NAME...   # worker subprocess
"""

import json
import os
import re
import subprocess
import sys
import time
import traceback

HERE = os.environ.get("ANVIL_SWEEP_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "jax-sweep")
PY = sys.executable
CASE_TIMEOUT = 90  # seconds without progress => hang

# ----------------------------------------------------------------------------
# Case registry. Built lazily (after jax config) inside the worker.
# ----------------------------------------------------------------------------

CASES = {}  # name -> dict(fn=..., args=tuple, rtol, atol, x64, runner, static, note)


def case(name, fn, *args, rtol=None, atol=None, x64=False, runner=None, static=None, donate=None,
         compare="close", note=None):
    assert name not in CASES, name
    CASES[name] = dict(fn=fn, args=args, rtol=rtol, atol=atol, x64=x64, runner=runner, static=static,
                       donate=donate, compare=compare, note=note)


def build_cases(x64_enabled):
    import jax
    import jax.numpy as jnp
    import jax.scipy as jsp
    import jax.scipy.special  # noqa
    import jax.scipy.signal  # noqa
    import jax.scipy.linalg  # noqa
    import numpy as np
    from jax import lax

    R = np.random.RandomState(0)
    f32 = np.float32
    X = R.standard_normal((4, 5)).astype(f32)
    Y = R.standard_normal((4, 5)).astype(f32)
    P = R.uniform(0.1, 3.0, (4, 5)).astype(f32)
    U = R.uniform(-0.9, 0.9, (4, 5)).astype(f32)
    G = R.uniform(1.1, 4.0, (4, 5)).astype(f32)
    Z01 = R.uniform(0.05, 0.95, (4, 5)).astype(f32)
    SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, 1e30, -2.5], f32)
    I32 = R.randint(-20, 20, (4, 5)).astype(np.int32)
    I32b = R.randint(1, 7, (4, 5)).astype(np.int32)
    U32 = R.randint(0, 2**31, (4, 5)).astype(np.uint32)
    V = R.standard_normal((8,)).astype(f32)
    M = R.standard_normal((4, 4)).astype(f32)
    SPD = (M @ M.T + 4 * np.eye(4)).astype(f32)
    M35 = R.standard_normal((3, 5)).astype(f32)
    M53 = R.standard_normal((5, 3)).astype(f32)
    B5 = R.standard_normal((5, 2)).astype(f32)
    C64 = (R.standard_normal((4, 5)) + 1j * R.standard_normal((4, 5))).astype(np.complex64)
    C64m = (R.standard_normal((4, 4)) + 1j * R.standard_normal((4, 4))).astype(np.complex64)
    IMG = R.standard_normal((2, 3, 8, 8)).astype(f32)
    KER = R.standard_normal((4, 3, 3, 3)).astype(f32)
    NH = R.standard_normal((2, 8, 8, 3)).astype(f32)
    KEY = np.asarray(jax.random.key_data(jax.random.PRNGKey(0)))  # uint32[2]
    LT = 1e-4  # loose-ish tolerance for transcendental / linalg

    # ---------------- unary elementwise, f32 ----------------
    unary = {
        "sin": (jnp.sin, X), "cos": (jnp.cos, X), "tan": (jnp.tan, U), "arcsin": (jnp.arcsin, U),
        "arccos": (jnp.arccos, U), "arctan": (jnp.arctan, X), "sinh": (jnp.sinh, X), "cosh": (jnp.cosh, X),
        "tanh": (jnp.tanh, X), "arcsinh": (jnp.arcsinh, X), "arccosh": (jnp.arccosh, G),
        "arctanh": (jnp.arctanh, U), "exp": (jnp.exp, X), "exp2": (jnp.exp2, X), "expm1": (jnp.expm1, X),
        "log": (jnp.log, P), "log1p": (jnp.log1p, P), "log2": (jnp.log2, P), "log10": (jnp.log10, P),
        "sqrt": (jnp.sqrt, P), "cbrt": (jnp.cbrt, X), "rsqrt": (lax.rsqrt, P), "square": (jnp.square, X),
        "abs": (jnp.abs, X), "sign": (jnp.sign, X), "floor": (jnp.floor, X * 3), "ceil": (jnp.ceil, X * 3),
        "round": (jnp.round, X * 3), "round_dec": (lambda x: jnp.round(x, 2), X * 3), "rint": (jnp.rint, X * 3),
        "trunc": (jnp.trunc, X * 3), "reciprocal": (jnp.reciprocal, P),
        "negative": (jnp.negative, X), "sinc": (jnp.sinc, X), "deg2rad": (jnp.deg2rad, X),
        "rad2deg": (jnp.rad2deg, X), "signbit": (jnp.signbit, X), "isnan": (jnp.isnan, SPECIAL),
        "isinf": (jnp.isinf, SPECIAL), "isfinite": (jnp.isfinite, SPECIAL), "i0": (jnp.i0, X),
        "frexp": (jnp.frexp, X * 10), "modf": (jnp.modf, X * 3), "nan_to_num": (jnp.nan_to_num, SPECIAL),
        "clip": (lambda x: jnp.clip(x, -0.5, 0.7), X), "fabs": (jnp.fabs, X), "spacing": (jnp.spacing, X),
        "exp_special": (jnp.exp, SPECIAL), "log_special": (jnp.log, SPECIAL), "sqrt_special": (jnp.sqrt, SPECIAL),
        "tanh_special": (jnp.tanh, SPECIAL), "round_half": (jnp.round, np.array([0.5, 1.5, 2.5, -0.5, -1.5], f32)),
        "lax_round_away": (lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
                           np.array([0.5, 1.5, 2.5, -0.5, -1.5], f32)),
        "logistic": (lax.logistic, X), "lax_is_finite": (lax.is_finite, SPECIAL), "lax_cbrt": (lax.cbrt, X),
        "erf_lax": (lax.erf, X), "erf_inv_lax": (lax.erf_inv, U), "lgamma_lax": (lax.lgamma, P),
        "digamma_lax": (lax.digamma, P), "bessel_i0e_lax": (lax.bessel_i0e, X), "bessel_i1e_lax": (lax.bessel_i1e, X),
        "tan_lax": (lax.tan, U), "exp_f16": (jnp.exp, X.astype(np.float16)), "sin_bf16": (jnp.sin, X.astype(jnp.bfloat16)),
        "tanh_f16": (jnp.tanh, X.astype(np.float16)), "log_bf16": (jnp.log, P.astype(jnp.bfloat16)),
    }
    for k, (fn, a) in unary.items():
        case(f"unary/{k}", fn, a, rtol=LT, atol=1e-5)

    # ---------------- binary elementwise ----------------
    binary = {
        "add": (jnp.add, X, Y), "subtract": (jnp.subtract, X, Y), "multiply": (jnp.multiply, X, Y),
        "divide": (jnp.divide, X, P), "floor_divide": (jnp.floor_divide, X * 5, P), "mod": (jnp.mod, X * 5, P),
        "remainder_neg": (jnp.remainder, X * 5, -P), "fmod": (jnp.fmod, X * 5, P), "power": (jnp.power, P, X),
        "float_power": (jnp.float_power, P, X), "arctan2": (jnp.arctan2, X, Y), "hypot": (jnp.hypot, X, Y),
        "maximum": (jnp.maximum, X, Y), "minimum": (jnp.minimum, X, Y), "fmax_nan": (jnp.fmax, SPECIAL, SPECIAL[::-1]),
        "fmin_nan": (jnp.fmin, SPECIAL, SPECIAL[::-1]), "maximum_nan": (jnp.maximum, SPECIAL, SPECIAL[::-1]),
        "logaddexp": (jnp.logaddexp, X, Y), "logaddexp2": (jnp.logaddexp2, X, Y), "copysign": (jnp.copysign, X, Y),
        "nextafter": (jnp.nextafter, X, Y), "ldexp": (jnp.ldexp, X, I32 % 5), "heaviside": (jnp.heaviside, X, Y),
        "equal": (jnp.equal, X, X * (Y > 0)), "less": (jnp.less, X, Y), "greater_equal": (jnp.greater_equal, X, Y),
        "not_equal_nan": (jnp.not_equal, SPECIAL, SPECIAL), "logical_and": (jnp.logical_and, X > 0, Y > 0),
        "logical_xor": (jnp.logical_xor, X > 0, Y > 0), "isclose": (jnp.isclose, X, X + 1e-9),
        "int_add": (jnp.add, I32, I32b), "int_mul": (jnp.multiply, I32, I32b),
        "int_floor_divide": (jnp.floor_divide, I32, I32b), "int_mod": (jnp.mod, I32, I32b),
        "int_fmod": (jnp.fmod, I32, I32b), "int_power": (jnp.power, I32b, np.int32(3)),
        "gcd": (jnp.gcd, I32, I32b), "lcm": (jnp.lcm, I32, I32b), "left_shift": (jnp.left_shift, I32, I32b),
        "right_shift": (jnp.right_shift, I32, I32b), "right_shift_u32": (jnp.right_shift, U32, U32 % 33),
        "left_shift_big": (jnp.left_shift, I32, I32b * 6), "bitwise_and": (jnp.bitwise_and, I32, I32b),
        "bitwise_or": (jnp.bitwise_or, I32, I32b), "bitwise_xor": (jnp.bitwise_xor, U32, U32[::-1]),
        "int_div_trunc_lax": (lax.div, I32, I32b), "int_rem_lax": (lax.rem, I32, I32b),
        "shift_right_logical_lax": (lax.shift_right_logical, I32, I32b),
        "shift_right_arith_lax": (lax.shift_right_arithmetic, I32, I32b),
        "true_divide_int": (jnp.true_divide, I32, I32b), "atan2_special": (jnp.arctan2, SPECIAL, SPECIAL[::-1]),
        "pow_special": (jnp.power, SPECIAL, SPECIAL[::-1]), "lax_nextafter": (lax.nextafter, SPECIAL, SPECIAL[::-1]),
    }
    for k, (fn, a, b) in binary.items():
        case(f"binary/{k}", fn, a, b, rtol=LT, atol=1e-5)

    # int unary
    case("int/invert", jnp.invert, I32)
    case("int/popcount", lax.population_count, I32)
    case("int/popcount_u32", lax.population_count, U32)
    case("int/clz", lax.clz, I32)
    case("int/clz_u32", lax.clz, U32)
    case("int/abs", jnp.abs, I32)
    case("int/sign", jnp.sign, I32)
    case("int/bitwise_count", jnp.bitwise_count, I32)
    case("int/abs_min", jnp.abs, np.array([-2**31, -1, 0, 5], np.int32))
    case("int/div_by_zero", lambda a, b: (a // b, a % b), I32, I32 * 0)
    case("int/int_min_div_neg1", lambda a, b: lax.div(a, b), np.array([-2**31], np.int32), np.array([-1], np.int32))

    # ---------------- dtypes & casts ----------------
    small_dtypes = {"int8": np.int8, "int16": np.int16, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32}
    for dn, dt in small_dtypes.items():
        a = (R.randint(0, 100, (4, 5))).astype(dt)
        b = (R.randint(1, 20, (4, 5))).astype(dt)
        case(f"dtype/{dn}_arith", lambda a, b: (a + b, a * b, a - b, a // b, a % b, a > b, jnp.maximum(a, b)), a, b)
        case(f"dtype/{dn}_sum", lambda a: (jnp.sum(a), jnp.sum(a, axis=0, dtype=a.dtype), jnp.max(a), jnp.cumsum(a)), a)
        case(f"dtype/{dn}_to_f32", lambda a: a.astype(jnp.float32) * 0.5, a)
        case(f"dtype/{dn}_shift", lambda a, b: (a << (b % 4), a >> (b % 4), ~a), a, b)
    case("dtype/int8_wraparound", lambda a: a * np.int8(3) + np.int8(100), np.arange(-128, 128, 9).astype(np.int8))
    case("dtype/f32_to_int8_sat", lambda x: (x * 100).astype(jnp.int8), X)
    case("dtype/f32_to_uint8", lambda x: jnp.abs(x * 50).astype(jnp.uint8), X)
    case("dtype/f32_to_int32_special", lambda x: x.astype(jnp.int32), SPECIAL)
    case("dtype/f32_to_uint32_neg", lambda x: x.astype(jnp.uint32), X * 10)
    case("dtype/f32_to_bool", lambda x: x.astype(bool), X * (X > 0))
    case("dtype/bool_to_f32", lambda x: (x > 0).astype(jnp.float32).sum(), X)
    case("dtype/f32_to_f16_round", lambda x: (x * 1000).astype(jnp.float16), X)
    case("dtype/f32_to_bf16_round", lambda x: (x * 1000).astype(jnp.bfloat16), X)
    case("dtype/bf16_to_f16", lambda x: x.astype(jnp.bfloat16).astype(jnp.float16), X)
    case("dtype/bitcast_f32_i32", lambda x: lax.bitcast_convert_type(x, jnp.int32), X)
    case("dtype/bitcast_i32_f32", lambda x: lax.bitcast_convert_type(x, jnp.float32), I32b)
    case("dtype/bitcast_f32_u8", lambda x: lax.bitcast_convert_type(x, jnp.uint8), X)
    case("dtype/bitcast_u8x4_f32", lambda x: lax.bitcast_convert_type(x, jnp.float32),
         R.randint(0, 60, (3, 4)).astype(np.uint8))
    case("dtype/reduce_precision", lambda x: lax.reduce_precision(x * 1000, exponent_bits=5, mantissa_bits=10), X)
    case("dtype/reduce_precision_bf16", lambda x: lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7), X)
    case("dtype/f16_sum", lambda x: (jnp.sum(x), jnp.mean(x, axis=0), jnp.max(x)), X.astype(np.float16), rtol=1e-2, atol=1e-2)
    case("dtype/bf16_sum", lambda x: (jnp.sum(x), jnp.mean(x, axis=0), jnp.max(x)), X.astype(jnp.bfloat16),
         rtol=3e-2, atol=3e-2)
    case("dtype/f16_dot", lambda a, b: a @ b, M35.astype(np.float16), M53.astype(np.float16), rtol=1e-2, atol=1e-2)
    case("dtype/bf16_dot", lambda a, b: a @ b, M35.astype(jnp.bfloat16), M53.astype(jnp.bfloat16), rtol=3e-2, atol=3e-2)
    case("dtype/bf16_dot_pref_f32", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                                                 preferred_element_type=jnp.float32),
         M35.astype(jnp.bfloat16), M53.astype(jnp.bfloat16), rtol=1e-2, atol=1e-2)
    case("dtype/int8_dot_pref_i32", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                                                 preferred_element_type=jnp.int32),
         R.randint(-100, 100, (3, 5)).astype(np.int8), R.randint(-100, 100, (5, 3)).astype(np.int8))
    case("dtype/int8_dot", lambda a, b: a @ b, R.randint(-100, 100, (3, 5)).astype(np.int8),
         R.randint(-100, 100, (5, 3)).astype(np.int8))
    case("dtype/f16_softmax", lambda x: jax.nn.softmax(x), X.astype(np.float16), rtol=1e-2, atol=1e-3)
    case("dtype/bf16_layernorm", lambda x: (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5),
         X.astype(jnp.bfloat16), rtol=5e-2, atol=5e-2)
    case("dtype/f16_cumsum", jnp.cumsum, X.astype(np.float16), rtol=1e-2, atol=1e-2)
    case("dtype/bool_ops", lambda a, b: (a & b, a | b, a ^ b, ~a, jnp.sum(a), jnp.any(a, 0), jnp.argmax(a, 1)),
         X > 0, Y > 0)
    case("dtype/uint32_mul_overflow", lambda a: a * np.uint32(2654435761), U32)
    case("dtype/f8_e4m3_cast", lambda x: x.astype(jnp.float8_e4m3fn).astype(jnp.float32), X)
    case("dtype/f8_e5m2_cast", lambda x: x.astype(jnp.float8_e5m2).astype(jnp.float32), X)

    # ---------------- complex64 ----------------
    case("complex/abs", jnp.abs, C64)
    case("complex/angle", jnp.angle, C64)
    case("complex/conj", jnp.conj, C64)
    case("complex/exp", jnp.exp, C64, rtol=LT)
    case("complex/log", jnp.log, C64, rtol=LT)
    case("complex/sqrt", jnp.sqrt, C64, rtol=LT)
    case("complex/sin", jnp.sin, C64, rtol=LT)
    case("complex/tanh", jnp.tanh, C64, rtol=LT)
    case("complex/mul_div", lambda a, b: (a * b, a / b, a + b, a - b), C64, C64[::-1], rtol=LT)
    case("complex/matmul", lambda a, b: a @ b, C64m, C64m.T, rtol=LT, atol=1e-5)
    case("complex/real_imag", lambda a: (jnp.real(a), jnp.imag(a), lax.complex(jnp.real(a), -jnp.imag(a))), C64)
    case("complex/sum_mean", lambda a: (jnp.sum(a), jnp.mean(a, axis=0), jnp.prod(a[0])), C64, rtol=LT)
    case("complex/pow", lambda a: a ** 3, C64, rtol=LT)
    case("complex/from_f32", lambda x: x.astype(jnp.complex64) * 1j, X)
    case("complex/eq", lambda a, b: a == b, C64, C64 * (X > 0))
    case("complex/sort_complex", jnp.sort_complex, C64[0])
    case("complex/abs_grad", jax.grad(lambda x: jnp.sum(jnp.abs(x.astype(jnp.complex64) * (1 + 2j)))), X)

    # ---------------- reductions ----------------
    red = {
        "sum": jnp.sum, "sum_ax1": lambda x: jnp.sum(x, 1), "prod": jnp.prod, "mean": jnp.mean, "var": jnp.var,
        "std_ddof": lambda x: jnp.std(x, ddof=1), "max": jnp.max, "min": jnp.min, "argmax": jnp.argmax,
        "argmin_ax0": lambda x: jnp.argmin(x, 0), "ptp": jnp.ptp, "median": jnp.median,
        "median_ax": lambda x: jnp.median(x, axis=1), "percentile": lambda x: jnp.percentile(x, 30.0),
        "quantile_vec": lambda x: jnp.quantile(x, jnp.array([0.1, 0.5, 0.9]), axis=0),
        "quantile_nearest": lambda x: jnp.quantile(x, 0.3, method="nearest"),
        "nanmean": lambda x: jnp.nanmean(jnp.where(x > 1, jnp.nan, x)),
        "nansum": lambda x: jnp.nansum(jnp.where(x > 1, jnp.nan, x), 0),
        "nanmax": lambda x: jnp.nanmax(jnp.where(x > 1, jnp.nan, x), 1),
        "nanmin": lambda x: jnp.nanmin(jnp.where(x > 1, jnp.nan, x)),
        "nanstd": lambda x: jnp.nanstd(jnp.where(x > 1, jnp.nan, x)),
        "nanvar": lambda x: jnp.nanvar(jnp.where(x > 1, jnp.nan, x), 0),
        "nanargmax": lambda x: jnp.nanargmax(jnp.where(x > 1, jnp.nan, x), 1),
        "nanmedian": lambda x: jnp.nanmedian(jnp.where(x > 1, jnp.nan, x)),
        "nanpercentile": lambda x: jnp.nanpercentile(jnp.where(x > 1, jnp.nan, x), 75.0),
        "nanprod": lambda x: jnp.nanprod(jnp.where(x > 1, jnp.nan, x)),
        "nancumsum": lambda x: jnp.nancumsum(jnp.where(x > 1, jnp.nan, x), 1),
        "count_nonzero": lambda x: jnp.count_nonzero(x > 0, axis=0), "average_w": lambda x: jnp.average(x, 0, jnp.arange(4.0)),
        "cumsum": lambda x: jnp.cumsum(x, 1), "cumprod": lambda x: jnp.cumprod(x, 0),
        "cumsum_rev": lambda x: lax.cumsum(x, 1, reverse=True), "cumprod_rev": lambda x: lax.cumprod(x, 0, reverse=True),
        "cummax": lambda x: lax.cummax(x, 1), "cummax_rev": lambda x: lax.cummax(x, 1, reverse=True),
        "cummin": lambda x: lax.cummin(x, 0), "cumlogsumexp": lambda x: lax.cumlogsumexp(x, 1),
        "max_nan": lambda x: jnp.max(jnp.where(x > 1, jnp.nan, x), 1),
        "argmax_nan": lambda x: jnp.argmax(jnp.where(x > 1, jnp.nan, x), 1),
        "all_any": lambda x: (jnp.all(x > -2, 0), jnp.any(x > 2, 1)),
        "sum_where": lambda x: jnp.sum(x, where=x > 0), "max_initial": lambda x: jnp.max(x, initial=0.5, axis=1),
        "logsumexp_b": lambda x: jax.nn.logsumexp(x, axis=1, b=jnp.arange(5.0)),
        "reduce_multi": lambda x: lax.reduce((x, -x), (0.0, 0.0), lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])), (1,)),
        "int_cumsum": lambda x: (jnp.cumsum(x.astype(jnp.int32)), jnp.cumprod(jnp.sign(x).astype(jnp.int32), 1)),
    }
    for k, fn in red.items():
        case(f"reduce/{k}", fn, X, rtol=LT, atol=1e-5)
    case("reduce/argmax_ties", lambda x: (jnp.argmax(x, 1), jnp.argmin(x, 1)), np.array([[1, 3, 3, 0], [2, 2, 2, 2]], f32))
    case("reduce/int_argmin", lambda x: jnp.argmin(x, 0), I32)
    case("reduce/assoc_scan_add", lambda x: lax.associative_scan(jnp.add, x, axis=1), X, rtol=LT)
    case("reduce/assoc_scan_rev", lambda x: lax.associative_scan(jnp.maximum, x, reverse=True), X)
    case("reduce/assoc_scan_pytree", lambda x: lax.associative_scan(
        lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1]), (x, x + 1)), X, rtol=LT)

    # ---------------- array manipulation / indexing ----------------
    A3 = R.standard_normal((3, 4, 5)).astype(f32)
    idx = np.array([3, 0, 2, 2], np.int32)
    manip = {
        "transpose": (lambda x: jnp.transpose(x, (2, 0, 1)), A3), "reshape": (lambda x: x.reshape(5, 12), A3),
        "flip": (lambda x: jnp.flip(x, (0, 2)), A3), "roll": (lambda x: jnp.roll(x, 2, axis=1), A3),
        "roll_flat": (lambda x: jnp.roll(x, -7), A3), "rot90": (lambda x: jnp.rot90(x), X),
        "tile": (lambda x: jnp.tile(x, (2, 3)), X), "repeat": (lambda x: jnp.repeat(x, 2, axis=0), X),
        "repeat_arr": (lambda x: jnp.repeat(x, np.array([1, 0, 2, 3]), axis=0, total_repeat_length=6), X),
        "concat": (lambda x: jnp.concatenate([x, x * 2, x[:1]], 0), X), "stack": (lambda x: jnp.stack([x, x], -1), X),
        "split": (lambda x: jnp.split(x, [1, 3], axis=1), X), "pad_const": (lambda x: jnp.pad(x, ((1, 2), (0, 3))), X),
        "pad_reflect": (lambda x: jnp.pad(x, 2, mode="reflect"), X), "pad_edge": (lambda x: jnp.pad(x, 2, mode="edge"), X),
        "pad_wrap": (lambda x: jnp.pad(x, 3, mode="wrap"), X), "pad_symmetric": (lambda x: jnp.pad(x, 2, mode="symmetric"), X),
        "lax_pad_neg_interior": (lambda x: lax.pad(x, 0.0, ((-1, 2, 1), (1, -2, 2))), X),
        "tril": (jnp.tril, X), "triu_k": (lambda x: jnp.triu(x, 1), X), "trace": (jnp.trace, X),
        "diag": (jnp.diag, X), "diag_vec": (jnp.diag, V), "diagonal_off": (lambda x: jnp.diagonal(A3, 1, 1, 2), A3),
        "fill_diagonal": (lambda x: jnp.fill_diagonal(x, 0.0, inplace=False), M),
        "eye_like": (lambda x: x + jnp.eye(4, 5, k=1), X), "kron": (lambda x: jnp.kron(x[:2, :2], x[:3, :2]), X),
        "outer": (lambda v: jnp.outer(v, v[:3]), V), "cross": (lambda x: jnp.cross(x[:, :3], x[::-1, 2:]), X),
        "meshgrid": (lambda v: jnp.meshgrid(v[:3], v[:4], indexing="ij"), V), "where": (lambda x: jnp.where(x > 0, x, -1.0), X),
        "select": (lambda x: jnp.select([x > 1, x < -1], [x, -x], 0.0), X),
        "piecewise": (lambda x: jnp.piecewise(x, [x < 0, x >= 0], [lambda t: -t, lambda t: t * 2]), X),
        "diff": (lambda x: jnp.diff(x, n=2, axis=1), X), "ediff1d": (lambda v: jnp.ediff1d(v), V),
        "gradient": (lambda x: jnp.gradient(x), X), "gradient_ax": (lambda x: jnp.gradient(x, 0.5, axis=1), X),
        "take": (lambda x: jnp.take(x, idx, axis=1), X), "take_along": (lambda x: jnp.take_along_axis(x, jnp.argsort(x, 1), 1), X),
        "fancy": (lambda x: x[idx, idx % 3], X), "bool_mask_where": (lambda x: jnp.where(x > 0, size=6, fill_value=-1), X),
        "nonzero_size": (lambda x: jnp.nonzero(x > 0.5, size=5, fill_value=0), X),
        "argwhere_size": (lambda x: jnp.argwhere(x > 0.5, size=5), X),
        "flatnonzero": (lambda x: jnp.flatnonzero(x > 0, size=8), X),
        "extract": (lambda x: jnp.extract(x > 0, x, size=6), X),
        "compress": (lambda x: jnp.compress(np.array([True, False, True, True]), x, axis=0, size=3), X),
        "isin": (lambda a: jnp.isin(a, np.array([1, 3, 5, -2], np.int32)), I32b - 3),
        "searchsorted": (lambda v: jnp.searchsorted(jnp.sort(v), jnp.array([-1.0, 0.0, 0.5, 2.0])), V),
        "searchsorted_right": (lambda v: jnp.searchsorted(jnp.sort(v), v, side="right"), V),
        "digitize": (lambda v: jnp.digitize(v, jnp.array([-1.0, 0.0, 1.0])), V),
        "interp": (lambda v: jnp.interp(jnp.linspace(-2, 2, 7), jnp.sort(v), jnp.arange(8.0)), V),
        "unique_size": (lambda a: jnp.unique(a, size=10, fill_value=-99), I32 % 7),
        "unique_inv_counts": (lambda a: jnp.unique(a.ravel(), size=10, return_inverse=True, return_counts=True,
                                                   fill_value=0), I32 % 5),
        "bincount": (lambda a: jnp.bincount(a.ravel(), length=8), I32b),
        "bincount_w": (lambda a: jnp.bincount(a.ravel(), weights=jnp.arange(20.0), length=8), I32b),
        "histogram": (lambda v: jnp.histogram(v, bins=4, range=(-2, 2)), V),
        "histogram_edges": (lambda v: jnp.histogram(v, bins=jnp.array([-3.0, -1.0, 0.0, 0.5, 3.0]), density=True), V),
        "histogram2d": (lambda v: jnp.histogram2d(v, v[::-1], bins=3), V),
        "sort": (lambda x: jnp.sort(x, 1), X), "sort_desc": (lambda x: jnp.sort(x, 0, descending=True), X),
        "argsort": (lambda x: jnp.argsort(x, 1), X), "argsort_stable_ties": (lambda a: jnp.argsort(a, stable=True), I32b[0]),
        "sort_nan": (jnp.sort, SPECIAL), "lexsort": (lambda a: jnp.lexsort((a[0], a[1] % 3)), I32b),
        "partition": (lambda v: jnp.partition(v, 3), V), "argpartition": (lambda v: jnp.sort(jnp.argpartition(v, 3)[:3]), V),
        "top_k": (lambda x: lax.top_k(x, 3), X), "top_k_int": (lambda a: lax.top_k(a, 2), I32),
        "sort_multi_operand": (lambda a, x: lax.sort((a, x), dimension=1, num_keys=1), I32b % 3, X),
        "sort_two_keys": (lambda a, b, x: lax.sort((a, b, x), dimension=0, num_keys=2), I32b % 2, I32b % 3, X),
        "sort_int_desc": (lambda a: -jnp.sort(-a, 1), I32),
        "convolve": (lambda v: jnp.convolve(v, v[:3]), V), "convolve_same": (lambda v: jnp.convolve(v, v[:3], mode="same"), V),
        "correlate": (lambda v: jnp.correlate(v, v[:4], mode="full"), V),
        "polyval": (lambda v: jnp.polyval(v[:4], v), V), "polyfit": (lambda v: jnp.polyfit(jnp.arange(8.0), v, 2), V),
        "roots": (lambda v: jnp.sort_complex(jnp.roots(v[:4], strip_zeros=False)), V),
        "polymul": (lambda v: jnp.polymul(v[:3], v[3:6]), V), "polyder": (lambda v: jnp.polyder(v[:5], 2), V),
        "polyint": (lambda v: jnp.polyint(v[:4]), V), "vander": (lambda v: jnp.vander(v[:4], 3), V),
        "linspace_dyn": (lambda v: jnp.linspace(v[0], v[1], 5), V), "logspace": (lambda v: jnp.logspace(0, 2, 4) + v[0], V),
        "arange_like": (lambda v: v[:5] + jnp.arange(5), V), "tri": (lambda x: x[:4, :4] * jnp.tri(4, 4, -1), X),
        "ravel_multi_index": (lambda a: jnp.ravel_multi_index((a[0] % 4, a[1] % 5), (4, 5), mode="clip"), I32b),
        "unravel_index": (lambda a: jnp.unravel_index(a.ravel(), (2, 3)), I32b - 1),
        "cov": (lambda x: jnp.cov(x), X), "corrcoef": (lambda x: jnp.corrcoef(x), X),
        "trapezoid": (lambda x: jnp.trapezoid(x, dx=0.5, axis=1), X), "cumulative_sum": (lambda x: jnp.cumulative_sum(x, axis=1, include_initial=True), X),
        "apply_along_axis": (lambda x: jnp.apply_along_axis(lambda r: r.max() - r.min(), 1, x), X),
        "einsum_3": (lambda x: jnp.einsum("ij,kj,k->i", x, x, x[:, 0]), X), "tensordot": (lambda x: jnp.tensordot(A3, A3, ((1, 2), (1, 2))), A3),
        "inner": (lambda x: jnp.inner(x, x), X), "vdot": (lambda x: jnp.vdot(x, x), X), "matvec_T": (lambda x: x.T @ x[:, 0], X),
        "array_equal": (lambda x: (jnp.array_equal(x, x), jnp.allclose(x, x + 1e-3)), X),
        "clip_int": (lambda a: jnp.clip(a, -3, 4), I32), "round_int": (lambda a: jnp.round(a), I32),
        "setdiff1d": (lambda a: jnp.setdiff1d(a, np.array([1, 2], np.int32), size=5, fill_value=-1), I32b[0]),
        "union1d": (lambda a: jnp.union1d(a[0], a[1], size=8, fill_value=-1), I32b),
        "intersect1d": (lambda a: jnp.intersect1d(a[0], a[1], size=5, fill_value=-1), I32b),
        "expand_squeeze": (lambda x: jnp.squeeze(jnp.expand_dims(x, (0, 2)), 0), X),
        "moveaxis": (lambda x: jnp.moveaxis(A3, 0, -1), A3), "swapaxes": (lambda x: jnp.swapaxes(x, 0, 2), A3),
        "broadcast_to": (lambda v: jnp.broadcast_to(v, (3, 8)), V), "atleast_3d": (lambda v: jnp.atleast_3d(v), V),
        "block": (lambda x: jnp.block([[x, x], [x, x]]), X), "resize": (lambda v: jnp.resize(v, (3, 5)), V),
        "delete": (lambda v: jnp.delete(v, np.array([1, 3]), assume_unique_indices=True), V),
        "insert": (lambda v: jnp.insert(v, 2, 9.0), V), "append": (lambda v: jnp.append(v, v[:2]), V),
        "put": (lambda v: jnp.put(v, np.array([0, 2]), 5.0, inplace=False), V),
        "place": (lambda v: jnp.place(v, v > 0, jnp.arange(8.0), inplace=False), V),
        "mask_indices_tril_indices": (lambda x: x[jnp.tril_indices(4)], X[:, :4]),
    }
    for k, (fn, *a) in manip.items():
        case(f"array/{k}", fn, *a, rtol=LT, atol=1e-5)

    # --- lax indexing: dynamic_slice/update, gather/scatter modes, segments ---
    ii = np.array([0, 3, 7, -1, 2], np.int32)
    case("index/dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, i + 1), (2, 3)), X, np.int32(1))
    case("index/dynamic_slice_oob", lambda x, i: lax.dynamic_slice(x, (i, i), (2, 3)), X, np.int32(10))
    case("index/dynamic_update_slice", lambda x, i: lax.dynamic_update_slice(x, jnp.ones((2, 2)), (i, i)), X, np.int32(3))
    case("index/dus_in_fori", lambda x: lax.fori_loop(0, 4, lambda i, a: lax.dynamic_update_slice(
        a, lax.dynamic_slice(a, (i, 0), (1, 5)) * 2 + i, (i, 0)), x), X)
    case("index/gather_clip", lambda v, i: v.at[i].get(mode="clip"), V, ii)
    case("index/gather_fill", lambda v, i: v.at[i].get(mode="fill", fill_value=-5.0), V, ii * 3)
    case("index/gather_promise", lambda v, i: v.at[i].get(mode="promise_in_bounds"), V, np.abs(ii) % 8)
    case("index/gather_neg", lambda v, i: v[i], V, ii)
    case("index/scatter_set_drop", lambda v, i: v.at[i * 3].set(9.0, mode="drop"), V, ii)
    case("index/scatter_add_clip", lambda v, i: v.at[i * 3].add(1.0, mode="clip"), V, ii)
    case("index/scatter_add_dups", lambda v, i: v.at[i % 2].add(jnp.arange(5.0)), V, ii)
    case("index/scatter_mul", lambda v, i: v.at[i].multiply(2.0), V, ii)
    case("index/scatter_min_max", lambda v, i: (v.at[i].min(-1.0), v.at[i].max(1.0)), V, ii)
    case("index/scatter_2d", lambda x, i: x.at[i % 4, 1:3].set(0.0), X, ii)
    case("index/scatter_int", lambda a, i: a.ravel().at[i].add(7), I32, ii)
    case("index/segment_sum", lambda v, s: jax.ops.segment_sum(v, s, 4), V, np.array([0, 0, 1, 3, 3, 3, 1, 2], np.int32))
    case("index/segment_max", lambda v, s: jax.ops.segment_max(v, s, 5), V, np.array([0, 0, 1, 3, 3, 3, 1, 2], np.int32))
    case("index/segment_min_sorted", lambda v, s: jax.ops.segment_min(v, s, 4, indices_are_sorted=True), V,
         np.array([0, 0, 1, 1, 2, 2, 3, 3], np.int32))
    case("index/segment_prod", lambda v, s: jax.ops.segment_prod(v, s, 4), V, np.array([0, 0, 1, 3, 3, 3, 1, 2], np.int32))
    case("index/gather_2d_points", lambda x, i, j: x[i % 4, j % 5], X, ii, ii[::-1])
    case("index/slice_step", lambda x: (x[::2, ::-2], x[1:, :-1], x[..., None, 2]), X)
    case("index/boolean_static", lambda x: x[np.array([True, False, True, True])], X)
    case("index/scatter_apply", lambda v, i: v.at[i].apply(jnp.sin), V, np.abs(ii))
    case("index/dynamic_index_in_dim", lambda x, i: lax.dynamic_index_in_dim(x, i, 1, keepdims=False), X, np.int32(2))

    # ---------------- linalg ----------------
    linalg = {
        "det": (jnp.linalg.det, M), "inv": (jnp.linalg.inv, M), "solve": (jnp.linalg.solve, M, M[:, :2]),
        "cholesky": (jnp.linalg.cholesky, SPD), "qr": (jnp.linalg.qr, M35.T), "qr_complete": (lambda a: jnp.linalg.qr(a, mode="complete"), M53),
        "svd": (lambda a: jnp.linalg.svd(a, compute_uv=False), M35), "svd_uv": (lambda a: jnp.abs(jnp.linalg.svd(a, full_matrices=False)[0]), M35),
        "eigh": (lambda a: jnp.linalg.eigh(a)[0], SPD), "eigvalsh": (jnp.linalg.eigvalsh, SPD), "slogdet": (jnp.linalg.slogdet, M),
        "norm_fro": (jnp.linalg.norm, M), "norm_2": (lambda a: jnp.linalg.norm(a, 2), M), "norm_nuc": (lambda a: jnp.linalg.norm(a, "nuc"), M),
        "norm_inf_vec": (lambda v: jnp.linalg.norm(v, jnp.inf), V), "norm_axis": (lambda a: jnp.linalg.norm(a, axis=1), M),
        "pinv": (jnp.linalg.pinv, M35), "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], M53, B5),
        "matrix_power": (lambda a: jnp.linalg.matrix_power(a, 3), M), "matrix_rank": (jnp.linalg.matrix_rank, M35),
        "cond": (jnp.linalg.cond, SPD), "eig": (lambda a: jnp.sort_complex(jnp.linalg.eigvals(a)), M),
        "tensorsolve": (lambda a: jnp.linalg.tensorsolve(a, a[:, 0]), M), "multi_dot": (lambda a: jnp.linalg.multi_dot([a, a, a]), M),
        "batched_inv": (jnp.linalg.inv, np.stack([M, SPD])), "batched_det": (jnp.linalg.det, np.stack([M, SPD])),
        "solve_triangular": (lambda a, b: jsp.linalg.solve_triangular(a, b, lower=True), np.tril(SPD), M[:, :2]),
        "solve_triangular_T": (lambda a, b: jsp.linalg.solve_triangular(a, b, trans=1), np.triu(SPD), M[:, :2]),
        "lu": (jsp.linalg.lu, M), "lu_factor": (jsp.linalg.lu_factor, M), "cho_solve": (
            lambda a, b: jsp.linalg.cho_solve(jsp.linalg.cho_factor(a), b), SPD, M[:, :2]),
        "expm": (jsp.linalg.expm, M * 0.3), "schur": (lambda a: jnp.abs(jnp.diag(jsp.linalg.schur(a)[0])), SPD),
        "lax_triangular_solve": (lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True), np.tril(SPD), M),
        "cholesky_grad": (jax.grad(lambda a: jnp.sum(jnp.linalg.cholesky(a @ a.T + 4 * jnp.eye(4)))), M),
        "inv_grad": (jax.grad(lambda a: jnp.sum(jnp.linalg.inv(a + 4 * jnp.eye(4)))), M),
        "det_complex": (jnp.linalg.det, C64m), "sqrtm": (lambda a: jsp.linalg.sqrtm(a).real, SPD),
    }
    for k, (fn, *a) in linalg.items():
        case(f"linalg/{k}", fn, *a, rtol=1e-3, atol=1e-4)

    # ---------------- fft ----------------
    V16 = R.standard_normal((16,)).astype(f32)
    fft = {
        "fft": (jnp.fft.fft, V16), "ifft": (jnp.fft.ifft, C64[0]), "rfft": (jnp.fft.rfft, V16), "irfft": (jnp.fft.irfft, C64[0]),
        "fft2": (jnp.fft.fft2, X), "ifft2": (jnp.fft.ifft2, C64), "rfft2": (jnp.fft.rfft2, X), "fftn": (jnp.fft.fftn, A3),
        "fft_n": (lambda v: jnp.fft.fft(v, n=10), V16), "fftshift": (lambda v: jnp.fft.fftshift(jnp.fft.fftfreq(8)) + v[:8], V16),
        "fft_odd": (jnp.fft.fft, V16[:7]), "hfft": (jnp.fft.hfft, C64[0]),
    }
    for k, (fn, a) in fft.items():
        case(f"fft/{k}", fn, a, rtol=1e-3, atol=1e-4)

    # ---------------- nn ----------------
    nn = {
        "softmax": lambda x: jax.nn.softmax(x, -1), "log_softmax": lambda x: jax.nn.log_softmax(x, 0),
        "softmax_where": lambda x: jax.nn.softmax(x, where=x > -0.5), "gelu_exact": lambda x: jax.nn.gelu(x, approximate=False),
        "gelu_tanh": lambda x: jax.nn.gelu(x, approximate=True), "silu": jax.nn.silu, "elu": jax.nn.elu, "selu": jax.nn.selu,
        "celu": jax.nn.celu, "relu6": jax.nn.relu6, "leaky_relu": jax.nn.leaky_relu, "softplus": jax.nn.softplus,
        "sparse_plus": jax.nn.sparse_plus, "hard_tanh": jax.nn.hard_tanh, "mish": jax.nn.mish, "glu": lambda x: jax.nn.glu(x[:, :4]),
        "log_sigmoid": jax.nn.log_sigmoid, "sigmoid": jax.nn.sigmoid, "hard_swish": jax.nn.hard_swish,
        "logsumexp": lambda x: jax.nn.logsumexp(x, 0), "standardize": lambda x: jax.nn.standardize(x, axis=-1),
        "one_hot": lambda x: jax.nn.one_hot(jnp.argmax(x, 1), 5), "one_hot_int": lambda x: jax.nn.one_hot(jnp.array([0, 3, 7, -1]), 5),
        "relu_grad": jax.grad(lambda x: jnp.sum(jax.nn.relu(x))), "gelu_grad": jax.grad(lambda x: jnp.sum(jax.nn.gelu(x))),
        "softplus_grad": jax.grad(lambda x: jnp.sum(jax.nn.softplus(x))),
        "dot_product_attention": lambda x: jax.nn.dot_product_attention(x[None, :, None, :], x[None, :, None, :],
                                                                       x[None, :, None, :], is_causal=True),
    }
    for k, fn in nn.items():
        case(f"nn/{k}", fn, X, rtol=LT, atol=1e-5)

    # ---------------- scipy.special ----------------
    sp = jsp.special
    spec = {
        "erf": (sp.erf, X), "erfc": (sp.erfc, X), "erfinv": (sp.erfinv, U), "gammaln": (sp.gammaln, P),
        "digamma": (sp.digamma, P), "logit": (sp.logit, Z01), "expit": (sp.expit, X), "xlogy": (sp.xlogy, P, X),
        "xlog1py": (sp.xlog1py, X, P), "ndtr": (sp.ndtr, X), "ndtri": (sp.ndtri, Z01), "log_ndtr": (sp.log_ndtr, X * 5),
        "i0e": (sp.i0e, X), "i1e": (sp.i1e, X), "i0": (sp.i0, X), "i1": (sp.i1, X),
        "betainc": (sp.betainc, P, G, Z01), "gammainc": (sp.gammainc, P, G), "gammaincc": (sp.gammaincc, P, G),
        "betaln": (sp.betaln, P, G), "gamma": (sp.gamma, P), "polygamma": (lambda x: sp.polygamma(1, x), P),
        "zeta": (sp.zeta, G, P), "entr": (sp.entr, P), "logsumexp": (lambda x: sp.logsumexp(x, 1), X),
        "multigammaln": (lambda x: sp.multigammaln(x + 2, 2), P), "spence": (sp.spence, P), "sinc_grad": (jax.grad(lambda x: jnp.sum(jnp.sinc(x))), X),
        "bessel_jn": (lambda x: sp.bessel_jn(x, v=2), P), "factorial": (sp.factorial, P), "kl_div": (sp.kl_div, P, G),
        "rel_entr": (sp.rel_entr, P, G), "erfcx_like_logerfc": (lambda x: jnp.log(sp.erfc(x)), X),
        "gammaln_grad": (jax.grad(lambda x: jnp.sum(sp.gammaln(x))), P), "erf_inv_grad": (jax.grad(lambda x: jnp.sum(sp.erfinv(x))), U),
        "lpmn_values": (lambda x: sp.lpmn_values(2, 2, x.ravel(), False), U), "expi": (sp.expi, P), "exp1": (sp.exp1, P),
        "fresnel": (sp.fresnel, X), "sph_harm_like_poch": (sp.poch, P, G), "hyp1f1": (sp.hyp1f1, P, G, Z01),
    }
    for k, (fn, *a) in spec.items():
        case(f"special/{k}", fn, *a, rtol=1e-3, atol=1e-5)
    case("stats/norm_logpdf", lambda x: jsp.stats.norm.logpdf(x, 0.5, 2.0), X, rtol=LT)
    case("stats/gamma_logpdf", lambda x: jsp.stats.gamma.logpdf(x, 2.0), P, rtol=LT)
    case("stats/t_cdf", lambda x: jsp.stats.t.logpdf(x, 3.0), X, rtol=1e-3, atol=1e-5)
    case("stats/beta_logpdf", lambda x: jsp.stats.beta.logpdf(x, 2.0, 3.0), Z01, rtol=LT)

    # ---------------- scipy.signal ----------------
    case("signal/convolve_1d", lambda v: jsp.signal.convolve(v, v[:3]), V, rtol=LT, atol=1e-5)
    case("signal/convolve_2d", lambda x: jsp.signal.convolve2d(x, x[:2, :3], mode="same"), X, rtol=LT, atol=1e-5)
    case("signal/correlate_valid", lambda x: jsp.signal.correlate(x, x[:2, :2], mode="valid"), X, rtol=LT, atol=1e-5)
    case("signal/fftconvolve", lambda v: jsp.signal.fftconvolve(v, v[:3]), V16, rtol=1e-3, atol=1e-4)
    case("signal/detrend", lambda v: jsp.signal.detrend(v), V16, rtol=1e-3, atol=1e-4)
    case("signal/stft", lambda v: jnp.abs(jsp.signal.stft(jnp.tile(v, 4), nperseg=16)[2]), V16, rtol=1e-3, atol=1e-4)

    # ---------------- conv / pooling ----------------
    def maxpool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def avgpool(x):
        return lax.reduce_window(x, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 2, 2), "SAME") / 9.0

    case("conv/maxpool", maxpool, IMG)
    case("conv/avgpool_same", avgpool, IMG, rtol=LT)
    case("conv/reduce_window_dilated", lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 1, 1),
                                                                   ((0, 0), (0, 0), (1, 1), (1, 1)),
                                                                   base_dilation=(1, 1, 2, 1), window_dilation=(1, 1, 1, 2)),
         IMG, rtol=LT)
    case("conv/reduce_window_min_int", lambda a: lax.reduce_window(a, jnp.iinfo(jnp.int32).max, lax.min, (2, 2), (1, 2), "SAME"), I32)
    case("conv/maxpool_grad", jax.grad(lambda x: jnp.sum(maxpool(x) ** 2)), IMG, rtol=LT)
    case("conv/avgpool_grad", jax.grad(lambda x: jnp.sum(avgpool(x) ** 2)), IMG, rtol=LT)
    case("conv/conv_transpose", lambda x, k: lax.conv_transpose(x, k, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
         NH, R.standard_normal((3, 3, 3, 4)).astype(f32), rtol=LT, atol=1e-4)
    case("conv/conv_transpose_valid", lambda x, k: lax.conv_transpose(x, k, (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW")),
         IMG, R.standard_normal((4, 3, 2, 2)).astype(f32), rtol=LT, atol=1e-4)
    case("conv/batch_group_count", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "VALID", batch_group_count=2),
         R.standard_normal((4, 2, 6, 6)).astype(f32), R.standard_normal((4, 2, 3, 3)).astype(f32), rtol=LT, atol=1e-4)
    case("conv/depthwise", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", feature_group_count=3),
         IMG, R.standard_normal((6, 1, 3, 3)).astype(f32), rtol=LT, atol=1e-4)
    case("conv/conv1d", lambda x, k: lax.conv_general_dilated(x, k, (2,), ((1, 2),), rhs_dilation=(2,)),
         R.standard_normal((2, 3, 16)).astype(f32), R.standard_normal((5, 3, 3)).astype(f32), rtol=LT, atol=1e-4)
    case("conv/conv3d", lambda x, k: lax.conv_general_dilated(x, k, (1, 1, 1), "SAME"),
         R.standard_normal((1, 2, 5, 5, 5)).astype(f32), R.standard_normal((3, 2, 3, 3, 3)).astype(f32), rtol=LT, atol=1e-4)
    case("conv/conv_pref_f32_bf16", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", preferred_element_type=jnp.float32),
         IMG.astype(jnp.bfloat16), KER.astype(jnp.bfloat16), rtol=2e-2, atol=2e-2)
    case("conv/conv_int", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "VALID"),
         R.randint(-5, 5, (1, 2, 5, 5)).astype(np.int32), R.randint(-5, 5, (2, 2, 3, 3)).astype(np.int32))
    case("conv/conv_grad_grouped", jax.grad(lambda x, k: jnp.sum(lax.conv_general_dilated(x, k, (2, 2), "SAME", feature_group_count=3) ** 2), (0, 1)),
         IMG, R.standard_normal((6, 1, 3, 3)).astype(f32), rtol=1e-3, atol=1e-3)
    case("conv/dot_general_batch_contract2", lambda a, b: lax.dot_general(a, b, (((1, 3), (2, 1)), ((0,), (0,)))),
         R.standard_normal((2, 3, 4, 5)).astype(f32), R.standard_normal((2, 5, 3, 6)).astype(f32), rtol=LT, atol=1e-4)
    case("conv/dot_pref_f64_in_f32", lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float32), M35, M53, rtol=LT, atol=1e-5)
    case("conv/dot_highest", lambda a, b: jnp.matmul(a, b, precision=lax.Precision.HIGHEST), M35, M53, rtol=LT, atol=1e-5)
    case("conv/jnp_conv_image_resize", lambda x: jax.image.resize(x, (2, 3, 12, 12), "bilinear"), IMG, rtol=LT, atol=1e-5)
    case("conv/image_resize_nearest", lambda x: jax.image.resize(x, (2, 3, 4, 16), "nearest"), IMG)
    case("conv/image_resize_lanczos", lambda x: jax.image.resize(x, (2, 3, 5, 5), "lanczos3"), IMG, rtol=1e-3, atol=1e-4)

    # ---------------- control flow ----------------
    case("ctrl/while_pytree", lambda x: lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 1.1, {"s": c[2]["s"] + c[1].sum()}),
                                                      (0, x, {"s": jnp.float32(0)})), X, rtol=LT)
    case("ctrl/while_dyn_trip", lambda x, n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, x)), X, np.int32(7), rtol=LT)
    case("ctrl/while_zero_trip", lambda x: lax.while_loop(lambda c: c[0] < 0, lambda c: (c[0] + 1, c[1] + 1), (0, x)), X)
    case("ctrl/fori", lambda x: lax.fori_loop(0, 5, lambda i, a: a * 0.5 + i, x), X)
    case("ctrl/fori_dyn", lambda x, n: lax.fori_loop(0, n, lambda i, a: a + jnp.float32(i), x), X, np.int32(4))
    case("ctrl/scan", lambda x: lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(5), x), X, rtol=LT)
    case("ctrl/scan_reverse", lambda x: lax.scan(lambda c, r: (c * 0.9 + r, jnp.tanh(c)), jnp.zeros(5), x, reverse=True), X, rtol=LT)
    case("ctrl/scan_unroll", lambda x: lax.scan(lambda c, r: (c + r ** 2, c), jnp.ones(5), x, unroll=2), X, rtol=LT)
    case("ctrl/scan_unroll_full", lambda x: lax.scan(lambda c, r: (c + r, c.sum()), jnp.ones(5), x, unroll=True), X, rtol=LT)
    case("ctrl/scan_length_none_xs", lambda x: lax.scan(lambda c, _: (c * 2, c), x[0], None, length=6), X)
    case("ctrl/scan_pytree_xs", lambda x: lax.scan(lambda c, t: (c + t["a"] * t["b"], (t["a"], c)), 0.0, {"a": x[:, 0], "b": x[:, 1]}), X, rtol=LT)
    case("ctrl/cond_f32", lambda x, p: lax.cond(p, lambda a: jnp.sin(a), lambda a: jnp.cos(a), x), X, True, rtol=LT)
    case("ctrl/cond_multi_dtype", lambda x, a, p: lax.cond(p > 0, lambda x, a, b: (x * 2, a + 1, ~b, x.astype(jnp.float16)),
                                                           lambda x, a, b: (x, a - 1, b, (x * 3).astype(jnp.float16)), x, a, a > 0),
         X, I32, np.int32(-1), rtol=1e-3)
    case("ctrl/cond_bool_pred_false", lambda x, p: lax.cond(p, lambda: x.sum(), lambda: x.max()), X, False)
    case("ctrl/switch", lambda x, i: lax.switch(i, [jnp.sin, jnp.cos, lambda a: a * 3], x), X, np.int32(2))
    case("ctrl/switch_oob", lambda x, i: lax.switch(i, [jnp.sin, jnp.cos, lambda a: a * 3], x), X, np.int32(7))
    case("ctrl/switch_neg", lambda x, i: lax.switch(i, [jnp.sin, jnp.cos, lambda a: a * 3], x), X, np.int32(-3))
    case("ctrl/select_n", lambda x, i: lax.select_n(i, x, -x, x * 10), X, (I32 % 3 + 3) % 3)
    case("ctrl/select_n_bool", lambda x: lax.select_n(x > 0, x, -x), X)
    case("ctrl/scan_in_scan", lambda x: lax.scan(lambda c, r: (c + lax.scan(lambda d, t: (d * t, d), 1.0, r)[0], c), 0.0, x), X, rtol=LT)
    case("ctrl/while_in_cond", lambda x, p: lax.cond(p, lambda a: lax.fori_loop(0, 3, lambda i, b: b * 2, a), lambda a: a, x), X, True)
    case("ctrl/while_in_while_body_cond", lambda x: lax.while_loop(lambda c: lax.fori_loop(0, 2, lambda i, s: s + 1, c[0]) < 6, lambda c: (c[0] + 1, c[1] * 2), (0, x)), X)
    case("ctrl/two_sequential_whiles", lambda x: lax.fori_loop(0, 2, lambda j, b: b * 2.0, lax.fori_loop(0, 2, lambda j, b: b + 1.0, x)), X)
    case("ctrl/nested_loops", lambda x: lax.fori_loop(0, 3, lambda i, a: lax.fori_loop(0, 2, lambda j, b: b + i * j, a) * 0.5, x), X)
    case("ctrl/cond_in_scan", lambda x: lax.scan(lambda c, r: (lax.cond(r.sum() > 0, lambda: c + r, lambda: c - r), c.sum()), jnp.zeros(5), x), X, rtol=LT)
    case("ctrl/while_in_vmap", jax.vmap(lambda v: lax.while_loop(lambda c: c[1] < 5.0, lambda c: (c[0] + 1, c[1] + jnp.abs(c[1]) + 0.1), (0, v))), V)
    case("ctrl/cond_in_vmap", jax.vmap(lambda v: lax.cond(v > 0, jnp.sin, jnp.cos, v)), V, rtol=LT)
    case("ctrl/map", lambda x: lax.map(lambda r: jnp.sort(r)[::-1], x), X)
    case("ctrl/map_batch", lambda x: lax.map(lambda r: r @ r, x, batch_size=2), X, rtol=LT)
    case("ctrl/stop_gradient", jax.grad(lambda x: jnp.sum(x * lax.stop_gradient(x) ** 2)), X, rtol=LT)
    case("ctrl/optimization_barrier", lambda x: lax.optimization_barrier((x, x + 1)), X)
    case("ctrl/while_grad_via_fori_static", jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, a: jnp.sin(a) * 1.5, x).sum()), X, rtol=LT)
    case("ctrl/checkify_like_error_free", lambda x: jnp.where(jnp.isfinite(x), x, 0.0).sum(), X)

    # ---------------- random ----------------
    def rnd(fn, impl=None):
        def f(seed):
            key = jax.random.key(seed, impl=impl) if impl else jax.random.key(seed)
            return fn(key)
        return f
    rfns = {
        "normal": lambda k: jax.random.normal(k, (3, 4)), "uniform": lambda k: jax.random.uniform(k, (5,), minval=-2, maxval=3),
        "randint": lambda k: jax.random.randint(k, (6,), 0, 100), "bits": lambda k: jax.random.bits(k, (4,), jnp.uint32),
        "gamma": lambda k: jax.random.gamma(k, jnp.array([0.5, 1.0, 3.0])), "beta": lambda k: jax.random.beta(k, 2.0, 3.0, (4,)),
        "dirichlet": lambda k: jax.random.dirichlet(k, jnp.array([1.0, 2.0, 3.0]), (2,)),
        "categorical": lambda k: jax.random.categorical(k, jnp.log(jnp.array([0.1, 0.6, 0.3])), shape=(8,)),
        "choice": lambda k: jax.random.choice(k, 10, (4,), replace=False),
        "choice_p": lambda k: jax.random.choice(k, jnp.arange(5.0), (6,), p=jnp.array([0.1, 0.2, 0.3, 0.2, 0.2])),
        "permutation_arr": lambda k: jax.random.permutation(k, jnp.arange(10.0) * 2),
        "permutation_2d": lambda k: jax.random.permutation(k, jnp.arange(12).reshape(4, 3), axis=0, independent=True),
        "poisson": lambda k: jax.random.poisson(k, jnp.array([0.5, 3.0, 20.0]), (4, 3)),
        "bernoulli": lambda k: jax.random.bernoulli(k, 0.3, (8,)), "truncated_normal": lambda k: jax.random.truncated_normal(k, -1.0, 2.0, (5,)),
        "split_fold": lambda k: jax.random.normal(jax.random.fold_in(jax.random.split(k, 3)[1], 7), (3,)),
        "exponential": lambda k: jax.random.exponential(k, (4,)), "laplace": lambda k: jax.random.laplace(k, (4,)),
        "multivariate_normal": lambda k: jax.random.multivariate_normal(k, jnp.zeros(3), jnp.eye(3) * 2, (2,)),
        "orthogonal": lambda k: jax.random.orthogonal(k, 3), "binomial": lambda k: jax.random.binomial(k, 10, 0.3, (5,)),
        "gumbel": lambda k: jax.random.gumbel(k, (4,)), "student_t": lambda k: jax.random.t(k, 3.0, (4,)),
        "ball": lambda k: jax.random.ball(k, 3, shape=(2,)), "rademacher": lambda k: jax.random.rademacher(k, (6,)),
        "normal_bf16": lambda k: jax.random.normal(k, (4,), jnp.bfloat16),
    }
    for k, fn in rfns.items():
        case(f"random/{k}", rnd(fn), np.int32(42), rtol=1e-4, atol=1e-5)
    for k in ["normal", "uniform", "randint", "bits", "gamma", "categorical", "permutation_arr", "poisson", "choice", "dirichlet", "beta", "split_fold"]:
        case(f"random_rbg/{k}", rnd(rfns[k], "rbg"), np.int32(42), rtol=1e-4, atol=1e-5, compare="rbg")
        case(f"random_unsafe_rbg/{k}", rnd(rfns[k], "unsafe_rbg"), np.int32(7), rtol=1e-4, atol=1e-5, compare="rbg")
    case("random/legacy_prngkey_arg", lambda key: jax.random.normal(key, (4,)), KEY, rtol=1e-5)
    case("random/key_array_arg", lambda seed: jax.random.key_data(jax.random.split(jax.random.key(seed), 4)), np.int32(3))
    case("random/rng_bit_generator_threefry", lambda k: lax.rng_bit_generator(k, (4, 3), jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY),
         np.array([1, 2], np.uint32).repeat(1).astype(np.uint64).view(np.uint32) if False else np.array([1, 2, 3, 4], np.uint32))
    case("random/rng_bit_generator_philox", lambda k: lax.rng_bit_generator(k, (4, 3), jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_PHILOX),
         np.array([1, 2, 3, 4], np.uint32))
    case("random/rng_bit_generator_default", lambda k: lax.rng_bit_generator(k, (5,), jnp.uint8), np.array([1, 2, 3, 4], np.uint32),
         compare="rbg")
    case("random/rng_uniform", lambda a: lax.rng_uniform(0.0, 1.0, (3,)) * 0 + a, np.float32(1.0))

    # ---------------- transformations ----------------
    def f_scalar(x):
        return jnp.sum(jnp.sin(x) * x ** 2 + jnp.exp(-x))

    def f_vec(x):
        return jnp.tanh(x) * x[::-1] + jnp.cumsum(x)
    case("ad/grad", jax.grad(f_scalar), V, rtol=LT)
    case("ad/value_and_grad", jax.value_and_grad(f_scalar), V, rtol=LT)
    case("ad/jacfwd", jax.jacfwd(f_vec), V, rtol=LT)
    case("ad/jacrev", jax.jacrev(f_vec), V, rtol=LT)
    case("ad/hessian", jax.hessian(f_scalar), V, rtol=LT, atol=1e-4)
    case("ad/jvp", lambda x: jax.jvp(f_vec, (x,), (jnp.ones_like(x),)), V, rtol=LT)
    case("ad/vjp", lambda x: jax.vjp(f_vec, x)[1](x), V, rtol=LT)
    case("ad/linearize", lambda x: jax.linearize(f_vec, x)[1](x * 2), V, rtol=LT)
    case("ad/grad_of_grad", jax.grad(jax.grad(lambda s: jnp.sin(s) * s ** 3)), np.float32(0.7), rtol=LT)
    case("ad/checkpoint", jax.grad(lambda x: jnp.sum(jax.checkpoint(lambda y: jnp.sin(jnp.sin(y)) * y)(x))), V, rtol=LT)
    case("ad/checkpoint_policy", jax.grad(lambda x: jnp.sum(jax.checkpoint(lambda y: jnp.tanh(y @ y.T) @ y,
                                                                           policy=jax.checkpoint_policies.nothing_saveable)(x))), X, rtol=LT, atol=1e-4)
    case("ad/remat_scan", jax.grad(lambda x: lax.scan(jax.remat(lambda c, r: (jnp.tanh(c + r), None)), jnp.zeros(5), x)[0].sum()), X, rtol=LT)

    @jax.custom_jvp
    def clipped(x):
        return jnp.clip(x, -1, 1)
    clipped.defjvp(lambda p, t: (clipped(p[0]), t[0] * 0.5))
    case("ad/custom_jvp", jax.grad(lambda x: jnp.sum(clipped(x) ** 2)), X)

    @jax.custom_vjp
    def cv(x):
        return jnp.sin(x)
    cv.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda r, g: (g * r * 2,))
    case("ad/custom_vjp", jax.grad(lambda x: jnp.sum(cv(x))), X, rtol=LT)
    case("ad/grad_where_nan_safe", jax.grad(lambda x: jnp.sum(jnp.where(x > 0, jnp.sqrt(jnp.abs(x)), 0.0))), X, rtol=LT)
    case("ad/grad_sort", jax.grad(lambda x: jnp.sum(jnp.sort(x) * jnp.arange(8.0))), V)
    case("ad/grad_gather_scatter", jax.grad(lambda x: jnp.sum(x[jnp.array([0, 0, 3])] ** 2) + jnp.sum(x.at[1].set(0.0) ** 2)), V)
    case("ad/grad_cumprod", jax.grad(lambda x: jnp.sum(jnp.cumprod(x))), V * 0.5 + 1, rtol=LT)
    case("ad/grad_max", jax.grad(lambda x: jnp.max(x) + jnp.sum(jnp.max(x.reshape(2, 4), 1))), V)
    case("ad/grad_logsumexp", jax.grad(lambda x: jax.nn.logsumexp(x)), V, rtol=LT)
    case("ad/grad_norm", jax.grad(lambda x: jnp.linalg.norm(x)), V, rtol=LT)
    case("ad/jacrev_dict", jax.jacrev(lambda d: {"o": d["a"] * d["b"].sum()}), {"a": V[:3], "b": V[3:]}, rtol=LT)
    case("ad/grad_while_fwd", jax.jacfwd(lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))[1]), V, rtol=LT)
    case("ad/grad_cond", jax.grad(lambda x, p: lax.cond(p, lambda a: jnp.sum(a ** 3), lambda a: jnp.sum(a), x)), V, True, rtol=LT)
    case("ad/grad_dynamic_slice", jax.grad(lambda x, i: jnp.sum(lax.dynamic_slice(x, (i,), (3,)) ** 2)), V, np.int32(2))
    case("ad/grad_int_argnum", jax.grad(lambda x, n: jnp.sum(x ** 2) * n, argnums=0), V, np.float32(3.0))
    # vmap
    case("vmap/matmul", jax.vmap(lambda a, b: a @ b), np.stack([M] * 3), np.stack([M.T] * 3), rtol=LT, atol=1e-5)
    case("vmap/in_axes", jax.vmap(lambda a, b: a * b, in_axes=(1, None)), X, V[:4])
    case("vmap/sort", jax.vmap(jnp.sort), X)
    case("vmap/argsort_cols", jax.vmap(jnp.argsort, in_axes=1), X)
    case("vmap/dynamic_slice", jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,))), X, np.array([0, 1, 3, 4], np.int32))
    case("vmap/gather", jax.vmap(lambda x, i: x[i]), X, np.array([0, 1, 3, 4], np.int32))
    case("vmap/scatter", jax.vmap(lambda x, i: x.at[i].add(10.0)), X, np.array([0, 1, 3, 4], np.int32))
    case("vmap/fori", jax.vmap(lambda x, n: lax.fori_loop(0, n, lambda i, a: a * 2, x)), V, np.arange(8, dtype=np.int32))
    case("vmap/scan", jax.vmap(lambda x: lax.scan(lambda c, r: (c + r, c), 0.0, x)), X)
    case("vmap/switch", jax.vmap(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)), np.array([0, 1, 2, 1], np.int32), X, rtol=LT)
    case("vmap/random", jax.vmap(lambda s: jax.random.normal(jax.random.key(s), (3,))), np.arange(4, dtype=np.int32), rtol=LT)
    case("vmap/nested", jax.vmap(jax.vmap(lambda a, b: jnp.dot(a, b))), A3, A3, rtol=LT)
    case("vmap/grad_per_example", jax.vmap(jax.grad(lambda w, x: jnp.tanh(x @ w).sum()), in_axes=(None, 0)), M53[:, 0], np.stack([M35[0]] * 3), rtol=LT)
    case("vmap/conv", jax.vmap(lambda x, k: lax.conv_general_dilated(x[None], k, (1, 1), "SAME")[0]), IMG, np.stack([KER] * 2), rtol=LT, atol=1e-4)
    case("vmap/linalg_solve", jax.vmap(jnp.linalg.solve), np.stack([SPD, SPD * 2]), np.stack([V[:4], V[4:]]), rtol=1e-3, atol=1e-4)
    case("vmap/top_k", jax.vmap(lambda v: lax.top_k(v, 2)), X)
    case("vmap/cumsum", jax.vmap(jnp.cumsum, in_axes=1, out_axes=1), X, rtol=LT)
    case("vmap/unique", jax.vmap(lambda a: jnp.unique(a, size=4, fill_value=-1)), I32 % 3)
    case("vmap/searchsorted", jax.vmap(lambda a, v: jnp.searchsorted(a, v)), np.sort(X, 1), Y[:, 0])
    case("vmap/bincount", jax.vmap(lambda a: jnp.bincount(a, length=7)), I32b)
    case("vmap/histogram", jax.vmap(lambda v: jnp.histogram(v, 3, range=(-2.0, 2.0))[0]), X)

    # ---------------- bigger programs ----------------
    def cnn(params, x, y):
        k1, k2, w = params
        h = lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        mu = h.mean((0, 1, 2), keepdims=True)
        var = h.var((0, 1, 2), keepdims=True)
        h = jax.nn.relu((h - mu) / jnp.sqrt(var + 1e-5))
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = lax.conv_general_dilated(h, k2, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jax.nn.gelu(h).mean((1, 2))
        logits = h @ w
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 3), -1))
    cnn_params = (R.standard_normal((3, 3, 3, 8)).astype(f32) * 0.3, R.standard_normal((3, 3, 8, 6)).astype(f32) * 0.2,
                  R.standard_normal((6, 3)).astype(f32))
    case("prog/cnn_fwd_bwd", jax.value_and_grad(cnn), cnn_params, NH, np.array([0, 2], np.int32), rtol=1e-3, atol=1e-4)

    def attention(x, wq, wk, wv, mask):
        q, k, v = x @ wq, x @ wk, x @ wv
        q = q.reshape(2, 6, 2, 4).transpose(0, 2, 1, 3)
        k = k.reshape(2, 6, 2, 4).transpose(0, 2, 1, 3)
        v = v.reshape(2, 6, 2, 4).transpose(0, 2, 1, 3)
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(4.0)
        s = jnp.where(mask[:, None, None, :] & jnp.tril(jnp.ones((6, 6), bool)), s, -1e9)
        p = jax.nn.softmax(s, -1)
        o = jnp.einsum("bhqk,bhkd->bhqd", p, v).transpose(0, 2, 1, 3).reshape(2, 6, 8)
        o = o + x
        return (o - o.mean(-1, keepdims=True)) * lax.rsqrt(o.var(-1, keepdims=True) + 1e-6)
    AX = R.standard_normal((2, 6, 8)).astype(f32)
    AW = [R.standard_normal((8, 8)).astype(f32) * 0.3 for _ in range(3)]
    AM = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], bool)
    case("prog/attention_fwd", attention, AX, *AW, AM, rtol=1e-3, atol=1e-4)
    case("prog/attention_grad", jax.grad(lambda x, a, b, c, m: jnp.sum(attention(x, a, b, c, m) ** 2), argnums=(1, 2, 3)),
         AX, *AW, AM, rtol=1e-3, atol=1e-3)

    def lstm(params, xs):
        wx, wh, b = params
        def step(carry, x):
            h, c = carry
            z = x @ wx + h @ wh + b
            i, f, g, o = jnp.split(z, 4, -1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        (h, c), hs = lax.scan(step, (jnp.zeros((2, 5)), jnp.zeros((2, 5))), xs)
        return hs.sum() + h.sum()
    LP = (R.standard_normal((3, 20)).astype(f32) * 0.3, R.standard_normal((5, 20)).astype(f32) * 0.3, np.zeros(20, f32))
    LX = R.standard_normal((7, 2, 3)).astype(f32)
    case("prog/lstm_fwd", lstm, LP, LX, rtol=1e-4, atol=1e-5)
    case("prog/lstm_grad", jax.grad(lstm), LP, LX, rtol=1e-3, atol=1e-4)

    def mlp_adam(params, x, y, m, t):
        loss, g = jax.value_and_grad(lambda p: jnp.mean((jnp.tanh(x @ p[0]) @ p[1] - y) ** 2))(params)
        m = jax.tree_util.tree_map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        params = jax.tree_util.tree_map(lambda p, mm: p - 0.01 * mm / (1 - 0.9 ** t), params, m)
        return params, m, loss
    MP = (R.standard_normal((5, 8)).astype(f32), R.standard_normal((8, 1)).astype(f32))
    case("prog/mlp_adam_step", mlp_adam, MP, R.standard_normal((6, 5)).astype(f32), R.standard_normal((6, 1)).astype(f32),
         tuple(np.zeros_like(p) for p in MP), np.float32(1.0), rtol=1e-4, atol=1e-5)
    case("prog/kmeans_step", lambda x, c: jax.ops.segment_sum(x, jnp.argmin(((x[:, None] - c[None]) ** 2).sum(-1), 1), 3),
         R.standard_normal((20, 2)).astype(f32), R.standard_normal((3, 2)).astype(f32), rtol=LT)
    case("prog/newton_sqrt_while", lambda a: lax.while_loop(lambda s: jnp.max(jnp.abs(s[0] ** 2 - a)) > 1e-5,
                                                            lambda s: (0.5 * (s[0] + a / s[0]), s[1] + 1), (a, 0)), P + 1, rtol=1e-5)

    # ---------------- shapes, scalars, zero-size ----------------
    E0 = np.zeros((0, 3), f32)
    case("shape/zero_sum", lambda x: (jnp.sum(x, 0), jnp.sum(x, 1), jnp.max(x, 0, initial=-1.0)), E0)
    case("shape/zero_matmul", lambda x: x.T @ x, E0)
    case("shape/zero_matmul_inner", lambda a, b: a @ b, np.zeros((3, 0), f32), np.zeros((0, 4), f32))
    case("shape/zero_concat", lambda x, y: jnp.concatenate([x, y], 0), E0, X[:, :3])
    case("shape/zero_sort", lambda x: jnp.sort(x, 0), E0)
    case("shape/zero_cumsum", lambda x: jnp.cumsum(x, 0), E0)
    case("shape/zero_scan", lambda x: lax.scan(lambda c, r: (c + r, c), jnp.zeros(3), x), E0)
    case("shape/zero_gather", lambda v, i: v[i], V, np.zeros((0,), np.int32))
    case("shape/zero_output_only", lambda x: (x * 2, jnp.zeros((0, 5))), X)
    case("shape/scalar_ops", lambda a, b: (a * b + 1, jnp.sin(a), a > b, jnp.int32(a)), np.float32(2.5), np.float32(-1.0))
    case("shape/scalar_int_bool", lambda a, b: (a + 1, ~b, jnp.where(b, a, -a)), np.int32(3), np.bool_(True))
    case("shape/python_scalar_consts", lambda x: x * 3 + 2.5 - (x > 1) * 7 + jnp.float32(1e-3) ** 2, X)
    case("shape/no_args", lambda: jnp.arange(10.0) * 2 + jnp.eye(3).sum())
    case("shape/rank5", lambda x: jnp.sum(x.reshape(1, 2, 3, 2, 5), (1, 3)) + x.reshape(1, 2, 3, 2, 5)[:, 0, :, 0], np.arange(60, dtype=f32).reshape(12, 5))
    case("shape/sort_100k", lambda v: jnp.sort(v)[::997], R.standard_normal(100000).astype(f32))
    case("shape/cumsum_5k", lambda v: jnp.cumsum(v)[::97], R.standard_normal(5000).astype(f32), rtol=1e-3, atol=1e-3)
    case("shape/big_1d", lambda v: jnp.cumsum(jnp.sort(v))[::997], R.standard_normal(100000).astype(f32), rtol=1e-3, atol=1e-2)
    big = R.standard_normal((1000, 1000)).astype(f32)
    case("shape/large_constant_1000x1000", lambda v: big @ v + big[0], R.standard_normal(1000).astype(f32), rtol=1e-3, atol=1e-3)
    bigi = R.randint(0, 100, (300, 300)).astype(np.int32)
    case("shape/large_const_int", lambda a: (bigi * a).sum(0), np.int32(3))
    case("shape/const_f64_numpy_in_f32", lambda x: x + np.linspace(0, 1, 5), X)
    case("shape/iota_large", lambda: jnp.arange(1 << 20, dtype=jnp.int32).reshape(1024, 1024)[::100, ::100])
    case("shape/broadcast_scalar_shapes", lambda a, b: a + b, np.float32(1.0), np.ones((1, 3, 1), f32))

    # ---------------- outputs / structure / donation / static ----------------
    case("io/identity", lambda x: x, X)
    case("io/identity_two", lambda x, y: (y, x, x), X, I32)
    case("io/many_outputs", lambda x: tuple(x * i for i in range(40)), X)
    case("io/nested_dict", lambda x, d: {"a": (x, [x + 1, {"b": d["q"] * 2}]), "c": d, "n": None}, X, {"q": I32, "r": V})
    case("io/many_inputs", lambda *xs: sum(xs), *[np.float32(i) * X for i in range(30)])
    case("io/namedtuple_like_list", lambda xs: [a.sum() for a in xs], [X, Y, P])

    def donate_runner(dev, f=None):
        g = jax.jit(lambda a, b, c: (a + b, b * c, c - a), donate_argnums=(0, 1, 2))
        with jax.default_device(dev):
            args = jax.device_put((X, Y, P), dev)
            out = g(*args)
            out = jax.tree_util.tree_map(np.asarray, out)
            if dev.platform == "anvil":
                dels = [a.is_deleted() for a in args]
                assert all(dels), f"donated inputs not consumed: {dels}"
            return out
    case("io/donate_three", None, runner=donate_runner)

    def donate_alias_runner(dev, f=None):
        g = jax.jit(lambda a, b: (a, b * 2), donate_argnums=(0,))
        with jax.default_device(dev):
            a, b = jax.device_put((X, Y), dev)
            out = jax.tree_util.tree_map(np.asarray, g(a, b))
            return out
    case("io/donate_return_unchanged", None, runner=donate_alias_runner)

    def donate_mismatch_runner(dev, f=None):
        g = jax.jit(lambda a, b: (a.astype(jnp.int32), (b * 2).reshape(5, 4)), donate_argnums=(0, 1))
        with jax.default_device(dev):
            a, b = jax.device_put((X, Y), dev)
            return jax.tree_util.tree_map(np.asarray, g(a, b))
    case("io/donate_unusable", None, runner=donate_mismatch_runner)

    def donate_loop_runner(dev, f=None):
        g = jax.jit(lambda s, p: ({"w": s["w"] - 0.1 * p, "n": s["n"] + 1}, s["w"].sum()), donate_argnums=(0,))
        with jax.default_device(dev):
            s = jax.device_put({"w": X, "n": np.int32(0)}, dev)
            p = jax.device_put(Y, dev)
            hist = []
            for _ in range(5):
                s, t = g(s, p)
                hist.append(t)
            return jax.tree_util.tree_map(np.asarray, (s, hist))
    case("io/donate_loop_pytree", None, runner=donate_loop_runner, rtol=1e-5)

    def static_runner(dev, f=None):
        g = jax.jit(lambda x, n, mode: jnp.sum(x ** n) if mode == "pow" else jnp.max(x) * n, static_argnums=(1, 2))
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            return [np.asarray(g(x, 2, "pow")), np.asarray(g(x, 3, "pow")), np.asarray(g(x, 2, "max"))]
    case("io/static_args", None, runner=static_runner, rtol=1e-5)

    def static_names_runner(dev, f=None):
        g = jax.jit(lambda x, *, axis, keep: jnp.mean(x, axis=axis, keepdims=keep), static_argnames=("axis", "keep"))
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            return [np.asarray(g(x, axis=0, keep=True)), np.asarray(g(x, axis=1, keep=False))]
    case("io/static_argnames", None, runner=static_names_runner, rtol=1e-5)

    def reuse_runner(dev, f=None):
        g = jax.jit(lambda x: x * 2)
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            y = g(x)
            z = g(y)  # device-resident output fed back
            w = jnp.asarray(z) + x  # eager op on anvil
            return [np.asarray(y), np.asarray(z), np.asarray(w), np.asarray(x[1:3])]
    case("io/reuse_outputs_eager", None, runner=reuse_runner)

    def transfer_runner(dev, f=None):
        with jax.default_device(dev):
            x = jax.device_put(C64, dev)
            b = jax.device_put(X.astype(jnp.bfloat16), dev)
            i8 = jax.device_put(np.arange(-5, 5, dtype=np.int8), dev)
            bo = jax.device_put(X > 0, dev)
            e = jax.device_put(np.zeros((0, 4), f32), dev)
            nc = jax.device_put(np.asfortranarray(M), dev)
            return [np.asarray(t) for t in (x, b, i8, bo, e, nc)] + [np.asarray(jax.device_put(x, jax.devices("cpu")[0]))]
    case("io/transfers_roundtrip", None, runner=transfer_runner)

    def copy_between_runner(dev, f=None):
        other = jax.devices("cpu")[0]
        with jax.default_device(dev):
            x = jax.jit(lambda a: a + 1)(jax.device_put(X, dev))
            y = jax.device_put(x, other)
            return [np.asarray(y), np.asarray(jax.device_put(y, dev))]
    case("io/device_to_device", None, runner=copy_between_runner)

    def aot_runner(dev, f=None):
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            comp = jax.jit(lambda a: jnp.tanh(a) @ a.T).lower(x).compile()
            txt = comp.as_text()  # may be None
            out = comp(x)
            try:
                ca = comp.cost_analysis()
            except Exception:
                ca = None
            return [np.asarray(out), np.int32(0 if txt is None else 1) * 0]
    case("io/aot_lower_compile", None, runner=aot_runner, rtol=1e-5)

    def block_runner(dev, f=None):
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            y = jax.jit(lambda a: a * 3)(x)
            y.block_until_ready()
            return [np.asarray(y), np.asarray(y.copy_to_host_async() or y)]
    case("io/block_until_ready_async_copy", None, runner=block_runner)

    def print_runner(dev, f=None):
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            return np.asarray(jax.jit(lambda a: (jax.debug.print("v={v}", v=a.sum()), a * 2)[1])(x))
    case("io/debug_print_callback", None, runner=print_runner)

    def pure_cb_runner(dev, f=None):
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            return np.asarray(jax.jit(lambda a: jax.pure_callback(lambda t: np.sin(t), jax.ShapeDtypeStruct(a.shape, a.dtype), a) + 1)(x))
    case("io/pure_callback", None, runner=pure_cb_runner, rtol=1e-5)

    # ---------------- x64 ----------------
    if x64_enabled:
        D = R.standard_normal((4, 5))
        Dm = R.standard_normal((4, 4))
        I64 = R.randint(-2**40, 2**40, (4, 5)).astype(np.int64)
        case("x64/f64_arith", lambda a, b: (a + b, a * b, a / (b + 3), jnp.sin(a), jnp.exp(a), jnp.log(jnp.abs(a) + 1)), D, D[::-1], x64=True)
        case("x64/f64_special", lambda a: (jnp.tanh(a), jnp.arctan2(a, a[::-1]), jnp.cbrt(a), jnp.expm1(a), jnp.log1p(jnp.abs(a))), D, x64=True)
        case("x64/f64_erf_lgamma", lambda a: (jsp.special.erf(a), jsp.special.gammaln(jnp.abs(a) + 0.1), jsp.special.ndtri(jax.nn.sigmoid(a))), D, x64=True, rtol=1e-10)
        case("x64/f64_matmul", lambda a: a @ a.T, D, x64=True)
        case("x64/f64_reduce", lambda a: (a.sum(), a.mean(0), a.var(), jnp.cumsum(a, 1), jnp.prod(a)), D, x64=True)
        case("x64/f64_sort_argsort", lambda a: (jnp.sort(a, 1), jnp.argsort(a, 0)), D, x64=True)
        case("x64/i64_arith", lambda a, b: (a + b, a * 3, a // 7, a % 7, a >> 3, a << 2, jnp.max(a), a.sum()), I64, I64[::-1], x64=True)
        case("x64/i64_popcount_clz", lambda a: (lax.population_count(a), lax.clz(a)), I64, x64=True)
        case("x64/u64_ops", lambda a: (a * np.uint64(6364136223846793005) + np.uint64(1), a >> np.uint64(33)), I64.astype(np.uint64), x64=True)
        case("x64/casts", lambda a, i: (a.astype(jnp.float32), a.astype(jnp.int64), i.astype(jnp.float64), i.astype(jnp.int32),
                                        i.astype(jnp.uint32), (a * 1e12).astype(jnp.int64), a.astype(jnp.float16)), D, I64, x64=True)
        case("x64/f64_to_bits", lambda a: lax.bitcast_convert_type(a, jnp.int64), D, x64=True)
        case("x64/default_dtypes", lambda: (jnp.arange(5), jnp.linspace(0, 1, 5), jnp.ones(3) * 0.1), x64=True)
        case("x64/linalg_inv_det", lambda a: (jnp.linalg.inv(a), jnp.linalg.det(a)), Dm, x64=True, rtol=1e-9, atol=1e-10)
        case("x64/linalg_solve", lambda a: jnp.linalg.solve(a, a[:, :2]), Dm, x64=True, rtol=1e-9, atol=1e-10)
        case("x64/cholesky", jnp.linalg.cholesky, Dm @ Dm.T + 4 * np.eye(4), x64=True, rtol=1e-9)
        case("x64/fft", jnp.fft.fft, D[0], x64=True, rtol=1e-9, atol=1e-12)
        case("x64/complex128", lambda a: (a @ a.conj().T, jnp.abs(a), jnp.exp(a)), (D + 1j * D[::-1]), x64=True, rtol=1e-10)
        case("x64/random_normal_f64", lambda s: jax.random.normal(jax.random.key(s), (5,), jnp.float64), np.int64(3), x64=True, rtol=1e-10)
        case("x64/random_uniform_f64_rbg", lambda s: jax.random.uniform(jax.random.key(s, impl="rbg"), (5,), jnp.float64), np.int64(3),
             x64=True, compare="rbg")
        case("x64/scan_f64", lambda a: lax.scan(lambda c, r: (c * 0.5 + r, c), jnp.zeros(5), a), D, x64=True)
        case("x64/grad_f64", jax.grad(lambda a: jnp.sum(jnp.sin(a) ** 2 * a)), D, x64=True)
        case("x64/while_i64_counter", lambda n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 3 % 1000003), (np.int64(0), np.int64(1))),
             np.int64(25), x64=True)
        case("x64/searchsorted_i64", lambda a: jnp.searchsorted(jnp.sort(a.ravel()), a[0]), I64, x64=True)
        case("x64/int64_to_f32_large", lambda a: a.astype(jnp.float32), I64, x64=True)
        case("x64/f64_conv", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME"), IMG.astype(np.float64), KER.astype(np.float64), x64=True, rtol=1e-10)
        case("x64/f64_dot_pref", lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float64), M35, M53, x64=True, rtol=1e-6)
        case("x64/gather_i64_idx", lambda v, i: v[i], D[0], np.array([0, 4, -1], np.int64), x64=True)
        case("x64/nextafter_f64", lambda a: jnp.nextafter(a, a[::-1]), D, x64=True)
        case("x64/f64_special_values", lambda a: (jnp.exp(a), jnp.log(a), a.astype(jnp.int64)), SPECIAL.astype(np.float64), x64=True)


# ----------------------------------------------------------------------------
# Comparison
# ----------------------------------------------------------------------------

    # Two later batches, one module each beside this file.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cases_dtypes
    import cases_structure
    import cases_large

    cases_dtypes.build(case, x64_enabled)
    cases_structure.build(case, x64_enabled)
    cases_large.build(case, x64_enabled)


def default_tol(dt):
    import numpy as np
    import jax.numpy as jnp
    return {np.dtype("float64"): (1e-12, 1e-12), np.dtype("float32"): (2e-5, 1e-6), np.dtype("float16"): (2e-3, 1e-3),
            np.dtype(jnp.bfloat16): (2e-2, 1e-2), np.dtype("complex64"): (2e-5, 1e-6),
            np.dtype("complex128"): (1e-12, 1e-12)}.get(np.dtype(dt), (2e-5, 1e-6))


def compare(got, want, rtol, atol, mode):
    """Returns None if equal, else a description string."""
    import jax
    import numpy as np
    gl, gt = jax.tree_util.tree_flatten(got)
    wl, wt = jax.tree_util.tree_flatten(want)
    if gt != wt:
        return f"structure {gt} != {wt}"
    problems = []
    for i, (g, w) in enumerate(zip(gl, wl)):
        if hasattr(g, "dtype") and jax.dtypes.issubdtype(g.dtype, jax.dtypes.prng_key):
            g, w = jax.random.key_data(g), jax.random.key_data(w)
        g, w = np.asarray(g), np.asarray(w)
        if g.dtype != w.dtype:
            problems.append(f"[{i}] dtype {g.dtype} != {w.dtype}")
            continue
        if g.shape != w.shape:
            problems.append(f"[{i}] shape {g.shape} != {w.shape}")
            continue
        if g.size == 0:
            continue
        if g.dtype.kind in "biu" or g.dtype.name.startswith("float8"):
            gg, ww = g.astype(np.float64) if g.dtype.name.startswith("float8") else g, w.astype(np.float64) if w.dtype.name.startswith("float8") else w
            eq = (gg == ww) | (np.isnan(gg.astype(np.float64)) & np.isnan(ww.astype(np.float64)))
            if not np.all(eq):
                nbad = int((~eq).sum())
                d = np.abs(gg.astype(np.float64) - ww.astype(np.float64))
                problems.append(f"[{i}] {g.dtype}{list(g.shape)}: {nbad}/{g.size} elements differ, max abs diff {np.nanmax(d):.4g}; "
                                f"got {np.ravel(g)[:6].tolist()} want {np.ravel(w)[:6].tolist()}")
            continue
        dr, da = default_tol(g.dtype)
        r = dr if rtol is None else rtol
        a = da if atol is None else atol
        gc = g.astype(np.complex128) if g.dtype.kind == "c" else g.astype(np.float64)
        wc = w.astype(np.complex128) if w.dtype.kind == "c" else w.astype(np.float64)
        nan_g, nan_w = np.isnan(gc), np.isnan(wc)
        bad = ~(np.isclose(gc, wc, rtol=r, atol=a) | (nan_g & nan_w))
        if np.any(bad):
            fin = np.isfinite(gc) & np.isfinite(wc)
            d = np.abs(gc - wc)
            mabs = float(np.max(d[fin])) if fin.any() else float("nan")
            rel = d / np.maximum(np.abs(wc), 1e-30)
            mrel = float(np.max(rel[fin])) if fin.any() else float("nan")
            j = int(np.argmax(np.where(bad, 1, 0)))
            problems.append(f"[{i}] {g.dtype}{list(g.shape)}: {int(bad.sum())}/{g.size} bad, max abs {mabs:.4g} max rel {mrel:.4g}; "
                            f"first bad at flat {j}: got {np.ravel(g)[j]!r} want {np.ravel(w)[j]!r}")
    return "; ".join(problems) if problems else None


def rbg_stats_ok(got):
    """For implementation-defined RNG: are the samples plausible (finite, shape ok)?"""
    import jax
    import numpy as np
    for leaf in jax.tree_util.tree_leaves(got):
        a = np.asarray(leaf)
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            return False
    return True


# ----------------------------------------------------------------------------
# Worker
# ----------------------------------------------------------------------------

CC_RE = re.compile(r"custom_call @([\w.$-]+)|custom_call_target\s*=\s*\"([^\"]+)\"|stablehlo\.custom_call\s*@([\w.$-]+)")


def run_case(name, c):
    import jax
    import numpy as np
    anvil = jax.devices("anvil")[0]
    cpu = jax.devices("cpu")[0]
    rec = {"name": name}
    # Which custom calls appear when lowering for each platform.
    if c["fn"] is not None:
        for dev in (anvil, cpu):
            try:
                with jax.default_device(dev):
                    placed = jax.device_put(c["args"], dev)
                    txt = jax.jit(c["fn"]).lower(*placed).as_text()
                ccs = sorted({m for g in CC_RE.findall(txt) for m in g if m})
                rec[f"custom_calls_{dev.platform}"] = ccs
            except Exception as e:  # noqa
                rec[f"lower_error_{dev.platform}"] = f"{type(e).__name__}: {str(e)[:300]}"

    def on(dev):
        if c["runner"] is not None:
            return c["runner"](dev)
        with jax.default_device(dev):
            placed = jax.device_put(c["args"], dev)
            out = jax.jit(c["fn"])(*placed)
            jax.block_until_ready(out)
            return out

    try:
        want = on(cpu)
    except Exception as e:
        rec.update(status="ref_error", error=f"{type(e).__name__}: {str(e)[:600]}")
        return rec
    t0 = time.time()
    try:
        got = on(anvil)
        if c["runner"] is None:
            for leaf in jax.tree_util.tree_leaves(got):
                if hasattr(leaf, "devices") and leaf.devices() != {anvil}:
                    raise AssertionError(f"result on {leaf.devices()}, not Anvil")
        got = jax.tree_util.tree_map(lambda l: np.asarray(jax.random.key_data(l)) if hasattr(l, "dtype") and jax.dtypes.issubdtype(l.dtype, jax.dtypes.prng_key) else np.asarray(l), got)
    except Exception as e:
        msg = str(e)
        rec.update(status="error", etype=type(e).__name__, error=msg[:1500],
                   tb=traceback.format_exc()[-1500:])
        return rec
    rec["anvil_s"] = round(time.time() - t0, 3)
    want = jax.tree_util.tree_map(lambda l: np.asarray(jax.random.key_data(l)) if hasattr(l, "dtype") and jax.dtypes.issubdtype(l.dtype, jax.dtypes.prng_key) else np.asarray(l), want)
    diff = compare(got, want, c["rtol"], c["atol"], c["compare"])
    if diff is None:
        rec["status"] = "pass"
    elif c["compare"] == "rbg":
        # rng_bit_generator's default algorithm is implementation-defined.
        rec["status"] = "pass_impl_defined" if rbg_stats_ok(got) and "dtype" not in diff and "shape" not in diff else "wrong"
        rec["diff"] = diff[:800]
    else:
        rec.update(status="wrong", diff=diff[:1500])
    return rec


def worker(out_path, x64, names):
    os.environ.setdefault("JAX_PLATFORMS", "anvil,cpu")
    import warnings
    warnings.filterwarnings("ignore")
    import jax
    if x64:
        jax.config.update("jax_enable_x64", True)
    build_cases(x64)
    with open(out_path, "a") as f:
        for n in names:
            f.write(json.dumps({"name": n, "status": "start"}) + "\n")
            f.flush()
            try:
                rec = run_case(n, CASES[n])
            except BaseException as e:  # noqa
                rec = {"name": n, "status": "error", "etype": type(e).__name__, "error": str(e)[:1500],
                       "tb": traceback.format_exc()[-1500:]}
            f.write(json.dumps(rec, default=str) + "\n")
            f.flush()


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------

def run_chunk(names, x64, out_path):
    """Runs names in a worker; restarts after a crash/hang. Returns records."""
    results = {}
    todo = list(names)
    while todo:
        if os.path.exists(out_path):
            os.remove(out_path)
        env = dict(os.environ, JAX_PLATFORMS="anvil,cpu", PYTHONUNBUFFERED="1")
        log = open(out_path + ".log", "a")
        p = subprocess.Popen([PY, __file__, "--worker", out_path, str(int(x64))] + todo, env=env,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        last_size, last_change = -1, time.time()
        hung = False
        while p.poll() is None:
            time.sleep(0.2)
            sz = os.path.getsize(out_path) if os.path.exists(out_path) else 0
            if sz != last_size:
                last_size, last_change = sz, time.time()
            elif time.time() - last_change > CASE_TIMEOUT:
                os.killpg(p.pid, 9)
                p.wait()
                hung = True
                break
        rc = p.returncode
        started = None
        if os.path.exists(out_path):
            for line in open(out_path):
                try:
                    r = json.loads(line)
                except Exception:
                    continue
                if r["status"] == "start":
                    started = r["name"]
                else:
                    results[r["name"]] = r
                    started = None
        if started is not None:
            if hung:
                results[started] = {"name": started, "status": "hang", "error": f"no progress for {CASE_TIMEOUT}s; killed"}
            else:
                tail = open(out_path + ".log").read()[-1500:]
                results[started] = {"name": started, "status": "crash", "error": f"worker died rc={rc}; log tail: {tail}"}
        elif rc != 0 and not hung:
            tail = open(out_path + ".log").read()[-1500:]
            for n in todo:
                if n not in results:
                    results[n] = {"name": n, "status": "crash", "error": f"worker rc={rc} before case; {tail}"}
        todo = [n for n in todo if n not in results]
    return [results[n] for n in names]


def main():
    args = sys.argv[1:]
    if args and args[0] == "--worker":
        worker(args[1], args[2] == "1", args[3:])
        return
    os.environ.setdefault("JAX_PLATFORMS", "anvil,cpu")
    import warnings
    warnings.filterwarnings("ignore")
    import jax
    jax.config.update("jax_enable_x64", False)
    build_cases(False)
    names32 = list(CASES)
    CASES.clear()
    jax.config.update("jax_enable_x64", True)
    build_cases(True)
    names64 = [n for n in CASES if CASES[n]["x64"]]
    if args and args[0] == "--list":
        print("\n".join(names32 + names64))
        print(len(names32) + len(names64), file=sys.stderr)
        return
    if args and args[0] == "--only":
        sel = set(args[1:])
        names32 = [n for n in names32 if n in sel or any(n.startswith(s.rstrip("*")) for s in sel if s.endswith("*"))]
        names64 = [n for n in names64 if n in sel or any(n.startswith(s.rstrip("*")) for s in sel if s.endswith("*"))]
    from concurrent.futures import ThreadPoolExecutor
    chunk = 40
    jobs = []
    for x64, names in ((False, names32), (True, names64)):
        for i in range(0, len(names), chunk):
            jobs.append((names[i:i + chunk], x64, os.path.join(HERE, "work", f"chunk_{int(x64)}_{i}.jsonl")))
    os.makedirs(os.path.join(HERE, "work"), exist_ok=True)
    t0 = time.time()
    with ThreadPoolExecutor(2) as ex:
        outs = list(ex.map(lambda j: run_chunk(*j), jobs))
    recs = [r for o in outs for r in o]
    os.makedirs(HERE, exist_ok=True)
    out = os.path.join(HERE, "results.jsonl" if not (args and args[0] == "--only") else "results_only.jsonl")
    with open(out, "w") as f:
        for r in recs:
            f.write(json.dumps(r, default=str) + "\n")
    from collections import Counter
    print(Counter(r["status"] for r in recs), f"{time.time() - t0:.0f}s", file=sys.stderr)
    for r in recs:
        if r["status"] not in ("pass", "pass_impl_defined"):
            print(r["status"], r["name"], (r.get("error") or r.get("diff") or "")[:200].replace("\n", " "))


if __name__ == "__main__":
    main()
