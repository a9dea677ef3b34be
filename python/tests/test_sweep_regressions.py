"""Programs a broad sweep of JAX found failing on Anvil, kept as tests."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from conftest import anvil_device, check, cpu_device, run_on

R = np.random.RandomState(8)
V = np.array([1.5, -0.5, 2, 0.7, 0.1, 3], np.float32)
M = R.standard_normal((4, 4)).astype(np.float32)

CASES = {
    # A select of scalars fused with its consumer (the mask was overwritten).
    "where_any_then_negate": (lambda v: -jnp.where(jnp.any(v > 100), 5.0, jnp.sum(v)), (V,)),
    "det": (jnp.linalg.det, (M,)),
    "nanstd": (jnp.nanstd, (M,)),
    "nanvar": (jnp.nanvar, (M,)),
    "grad_logsumexp": (jax.grad(jax.nn.logsumexp), (V,)),
    # Loops nested in loops (two computations once took one name).
    "fori_in_fori": (lambda x: lax.fori_loop(0, 3, lambda i, a: lax.fori_loop(0, 2, lambda j, b: b * 1.5 + i, a), x),
                     (V,)),
    "scan_in_scan": (lambda x: lax.scan(lambda c, r: (lax.scan(lambda d, s: (d + s, d), c, r)[0], c), 0.0,
                                        x.reshape(2, 3))[0], (V,)),
    "gamma": (lambda s: jax.random.gamma(jax.random.key(s), 2.5, (16,)), (np.uint32(3),)),
    "dirichlet": (lambda s: jax.random.dirichlet(jax.random.key(s), jnp.array([1.0, 2.0, 3.0])), (np.uint32(4),)),
    # Sharding annotations pass through on one device.
    "sharding_constraint": (lambda x: jax.lax.with_sharding_constraint(
        x * 2, jax.sharding.SingleDeviceSharding(anvil_device())) + 1, (V,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sweep_case(name):
    f, args = CASES[name]
    if name == "sharding_constraint":
        # Its sharding names the Anvil device, so it runs only there.
        with jax.default_device(anvil_device()):
            got = jax.jit(f)(*jax.device_put(args, anvil_device()))
        np.testing.assert_allclose(np.asarray(got), V * 2 + 1)
        return
    check(f, *args, rtol=1e-4, atol=1e-5)


def test_random_outside_jit_with_typed_keys():
    # Eager random ops send casts between uint32 data and key types.
    got = {}
    for device in (cpu_device(), anvil_device()):
        with jax.default_device(device):
            key = jax.random.key(0)
            got[device.platform] = (np.asarray(jax.random.gamma(key, 2.0, (3,))),
                                    np.asarray(jax.random.beta(key, 2.0, 3.0, (3,))))
    for a, b in zip(got["anvil"], got["cpu"]):
        np.testing.assert_allclose(a, b, rtol=1e-5)


@pytest.mark.parametrize("algorithm", [lax.RandomAlgorithm.RNG_THREE_FRY, lax.RandomAlgorithm.RNG_PHILOX])
def test_rng_bit_generator_algorithm_reaches_the_plugin(algorithm):
    # JAX sends bytecode, which names the attribute rng_algorithm; it was
    # looked up under the pretty form's name only, and THREE_FRY drew from
    # the default algorithm. Both named algorithms match XLA bit for bit.
    key = np.array([1, 2, 3, 4], np.uint32)
    check(lambda k: lax.rng_bit_generator(k, (4, 3), jnp.uint32, algorithm=algorithm), key, rtol=0, atol=0)


def test_bf16_layer_norm_reads_stored_row_broadcasts():
    # The mean and the deviation, broadcast from [rows, 1] in bf16, are
    # stored arrays to the loops reading them; they were read as one
    # scalar for every row. bf16 rounds each op, so XLA's fused loop may
    # differ by a few bf16 units in the last place.
    x = R.standard_normal((4, 5)).astype(jnp.bfloat16)
    check(lambda x: (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5), x,
          rtol=5e-2, atol=5e-2)


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"])
def test_scatter_drop_mode_drops_windows_hanging_over_an_edge(op):
    # JAX's FILL_OR_DROP (lax.scatter*'s default mode) drops a window whole
    # when any part of it is out of bounds, as XLA does; Anvil's scatter
    # skips out-of-bounds elements one by one (the StableHLO spec), so
    # anvil_jax moves such windows wholly out of bounds first. Windows of
    # 2 x 3 into f32[5, 6]: in bounds, over the last row, over the last
    # column, from a negative start, and far out.
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0, 1))
    fn = getattr(lax, op)
    operand = R.standard_normal((5, 6)).astype(np.float32)
    indices = np.array([[1, 2], [4, 0], [0, 4], [-1, 1], [9, 9], [3, 3]], np.int32)
    updates = R.standard_normal((6, 2, 3)).astype(np.float32)
    got = check(lambda x, i, u: fn(x, i, u, dn, mode="drop"), operand, indices, updates, rtol=1e-6, atol=1e-6)
    # The windows at [1, 2] and [3, 3] land, and nothing else changes.
    touched = np.zeros((5, 6), bool)
    touched[1:3, 2:5] = touched[3:5, 3:6] = True
    np.testing.assert_array_equal(np.asarray(got)[~touched], operand[~touched])


def test_scatter_clip_mode_is_unchanged():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
    check(lambda x, i, u: lax.scatter_add(x, i, u, dn, mode="clip"), np.zeros(4, np.float32),
          np.array([[3], [-2]], np.int32), np.array([[10.0, 20.0], [1.0, 2.0]], np.float32))


def test_bf16_sums_carry_more_than_bf16():
    # Rounded to bf16 after every add, a sum stops growing once its terms
    # fall below half its last place: 300 halves summed to 128. XLA's CPU
    # backend sums bf16 in f32; Anvil carries a double and rounds once.
    halves = np.full(300, 0.5, jnp.bfloat16)
    got = check(lambda x: (jnp.sum(x), jnp.sum(x.reshape(3, 100), axis=1)), halves, rtol=0, atol=0)
    assert float(got[0]) == 150.0


def test_bf16_cumsum_carries_more_than_bf16():
    # JAX lowers cumsum to a prefix reduce-window; rounded to bf16 at every
    # step it stopped growing at 128. XLA sums in f32 and rounds each output.
    halves = np.full(300, 0.5, jnp.bfloat16)
    got = check(jnp.cumsum, halves, rtol=0, atol=0)
    assert float(got[-1]) == 150.0


@pytest.mark.parametrize("index_dtype", [np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.int64])
def test_scatter_drop_mode_with_narrow_indices(index_dtype):
    # The start that puts a window out of bounds is the operand's extent,
    # which an int8 or uint8 index cannot hold: the lowering widens the
    # indices first (a start clamped to the type's maximum would land
    # inside). A 1-wide scatter_add into f32[300] at -1, 5 and the type's
    # largest value, and a 50-wide one hanging over the end.
    info = np.iinfo(index_dtype)
    one = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    starts = [5, int(info.max)] + ([-1] if info.min < 0 else [])
    indices = np.array([[s] for s in starts], index_dtype)
    updates = np.arange(1, len(starts) + 1, dtype=np.float32)
    check(lambda x, i, u: lax.scatter_add(x, i, u, one, mode="drop"), np.zeros(300, np.float32), indices, updates,
          rtol=0, atol=0)
    wide = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
    check(lambda x, i, u: lax.scatter_add(x, i, u, wide, mode="drop"), np.zeros(300, np.float32),
          np.array([[min(int(info.max), 299)], [10]], index_dtype), np.ones((2, 50), np.float32), rtol=0, atol=0)


def test_int4_host_buffers_hold_their_nibble_only():
    # ml_dtypes keeps an int4 in the low half of its byte (-3 is 0x0D) and
    # PJRT hands those bytes over as they are; Anvil's devices hold sub-byte
    # integers sign-extended to the byte, so the PJRT layer widens them on
    # the way in. The dot read 0x0D as 13.
    import ml_dtypes

    x = np.array([-3, -2, -1, 0, 1, 7, -8], ml_dtypes.int4)
    m = np.array([[-3, 2], [1, -1]], ml_dtypes.int4)
    check(lambda x: (x.astype(jnp.int32), x < 0, x * 2), x, rtol=0, atol=0)
    # XLA's CPU backend refuses this dot (custom element sizes), so numpy
    # is the reference.
    got = run_on(anvil_device(), lambda a: jnp.dot(a, a, preferred_element_type=jnp.int32), (m,))
    np.testing.assert_array_equal(np.asarray(got), m.astype(np.int32) @ m.astype(np.int32))
    u = np.array([0, 1, 7, 8, 15], ml_dtypes.uint4)
    check(lambda u: (u.astype(jnp.int32), u > 7), u, rtol=0, atol=0)
