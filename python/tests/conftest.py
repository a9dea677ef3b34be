"""Runs each JAX program on Anvil and on JAX's own CPU backend (XLA) in one
process and compares the results.

Tolerances: integers and booleans compare exactly; floats compare with
rtol/atol by type: f64 1e-12/1e-12, f32 2e-5/1e-6, f16 2e-3/1e-3 and bf16
2e-2/1e-2 (one or two ulps of each type, since Anvil and XLA may fuse and
order arithmetic differently). A test may widen them, saying why.
"""

import os

# Both backends in this process: Anvil first, XLA's CPU as the reference.
os.environ.setdefault("JAX_PLATFORMS", "anvil,cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

TOLERANCES = {
    np.dtype("float64"): (1e-12, 1e-12),
    np.dtype("float32"): (2e-5, 1e-6),
    np.dtype("float16"): (2e-3, 1e-3),
    np.dtype(jax.numpy.bfloat16): (2e-2, 1e-2),
    np.dtype("complex64"): (2e-5, 1e-6),
}


def anvil_device():
    return jax.devices("anvil")[0]


def cpu_device():
    return jax.devices("cpu")[0]


def run_on(device, f, args):
    with jax.default_device(device):
        placed = jax.device_put(args, device)
        return jax.jit(f)(*placed)


def assert_close(got, want, rtol=None, atol=None, where="result"):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree, f"{where}: structure {got_tree} != {want_tree}"
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        g_np, w_np = np.asarray(g), np.asarray(w)
        assert g_np.dtype == w_np.dtype, f"{where}[{i}]: dtype {g_np.dtype} != {w_np.dtype}"
        assert g_np.shape == w_np.shape, f"{where}[{i}]: shape {g_np.shape} != {w_np.shape}"
        if g_np.dtype.kind in "biu":
            np.testing.assert_array_equal(g_np, w_np, err_msg=f"{where}[{i}]")
        else:
            default = TOLERANCES.get(g_np.dtype, (2e-5, 1e-6))
            np.testing.assert_allclose(
                g_np.astype(np.float64) if g_np.dtype.kind == "f" else g_np,
                w_np.astype(np.float64) if w_np.dtype.kind == "f" else w_np,
                rtol=default[0] if rtol is None else rtol,
                atol=default[1] if atol is None else atol,
                equal_nan=True,
                err_msg=f"{where}[{i}]",
            )


def check(f, *args, rtol=None, atol=None):
    """Runs `f` jitted on Anvil and on XLA's CPU backend; compares results.

    Also checks the results really live on the Anvil device."""
    want = run_on(cpu_device(), f, args)
    got = run_on(anvil_device(), f, args)
    for leaf in jax.tree_util.tree_leaves(got):
        assert leaf.devices() == {anvil_device()}, f"result on {leaf.devices()}, not Anvil"
    assert_close(got, want, rtol=rtol, atol=atol)
    return got


@pytest.fixture
def rng():
    return np.random.RandomState(0)
