"""A training loop on Anvil against XLA's CPU, donation, and the errors a JAX
user gets."""

import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import anvil_device, cpu_device


def _init(rng):
    sizes = [10, 32, 32, 1]
    return [(jnp.asarray(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m)), jnp.zeros(n, jnp.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def _loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    return jnp.mean((h @ w + b - y) ** 2)


@jax.jit
def _sgd_step(params, x, y):
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads), loss


def _train(device, steps=100):
    rng = np.random.RandomState(7)
    x = rng.standard_normal((64, 10)).astype(np.float32)
    y = (np.sin(x[:, :1]) + 0.1 * x[:, 1:2]).astype(np.float32)
    with jax.default_device(device):
        params = jax.device_put(_init(rng), device)
        xd, yd = jax.device_put((x, y), device)
        losses = []
        for _ in range(steps):
            params, loss = _sgd_step(params, xd, yd)
            losses.append(float(loss))
    return np.array(losses)


def test_training_loop_matches_xla_cpu():
    want = _train(cpu_device())
    got = _train(anvil_device())
    assert got[-1] < got[0] * 0.5, f"the loss did not fall: {got[0]} -> {got[-1]}"
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_softmax_cross_entropy_with_one_hot_labels_matches_xla_cpu():
    # jax.nn.one_hot compares broadcast s32 labels with an iota: the CPU
    # plugin runs that compare, the convert and the loss's arithmetic in one
    # fused loop. Labels out of range give all-zero rows, as on XLA.
    def loss(logits, labels):
        return -(jax.nn.log_softmax(logits) * jax.nn.one_hot(labels, logits.shape[-1])).sum(-1).mean()

    rng = np.random.RandomState(3)
    logits = rng.standard_normal((16, 37)).astype(np.float32)
    labels = rng.randint(0, 37, 16).astype(np.int32)
    labels[:3] = [-1, 37, 36]
    f = jax.jit(jax.value_and_grad(loss))
    want = f(*jax.device_put((logits, labels), cpu_device()))
    got = f(*jax.device_put((logits, labels), anvil_device()))
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), rtol=1e-5, atol=1e-7)


def test_donated_argument_is_consumed():
    f = jax.jit(lambda x, y: x + y, donate_argnums=(0,))
    with jax.default_device(anvil_device()):
        x = jax.device_put(np.arange(8, dtype=np.float32), anvil_device())
        y = jax.device_put(np.ones(8, dtype=np.float32), anvil_device())
        out = f(x, y)
        np.testing.assert_array_equal(np.asarray(out), np.arange(8, dtype=np.float32) + 1)
        assert x.is_deleted(), "the donated input should be consumed"
        assert not y.is_deleted()
        with pytest.raises(RuntimeError, match="deleted"):
            np.asarray(x)


def test_donation_in_a_loop_keeps_results_right():
    step = jax.jit(lambda s: s * 2.0 + 1.0, donate_argnums=(0,))
    with jax.default_device(anvil_device()):
        s = jax.device_put(np.zeros(16, np.float32), anvil_device())
        for _ in range(10):
            s = step(s)
        np.testing.assert_array_equal(np.asarray(s), np.full(16, 1023.0, np.float32))


def test_unsupported_op_raises_naming_it():
    # A foreign function call Anvil has no kernel for reaches the plugin as a
    # custom call: compiling raises a Python exception naming it and where
    # the program asked for it, and the process goes on.
    def f(v):
        return jax.ffi.ffi_call("vendor_kernel_anvil_lacks", jax.ShapeDtypeStruct(v.shape, v.dtype))(v) * 2

    with jax.default_device(anvil_device()):
        x = jax.device_put(np.ones(4, np.float32), anvil_device())
        with pytest.raises(jax.errors.JaxRuntimeError) as info:
            jax.jit(f)(x)
        message = str(info.value)
        assert message.startswith("UNIMPLEMENTED"), message
        assert 'custom-call "vendor_kernel_anvil_lacks"' in message, message
        assert "test_training_and_errors.py:" in message, message
        assert float(jax.jit(lambda v: v.sum())(x)) == 4.0


def test_readme_one_liner_in_a_fresh_process():
    code = "import jax, jax.numpy as jnp; print(jax.jit(lambda x: x * 2 + 1)(jnp.arange(4.0)))"
    env = dict(__import__("os").environ, JAX_PLATFORMS="anvil")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1. 3. 5. 7.]"


def test_anvil_is_the_device_of_the_result():
    code = textwrap.dedent("""
        import jax, jax.numpy as jnp
        y = jax.jit(lambda x: x + 1)(jnp.arange(3.0))
        print(jax.default_backend(), list(y.devices())[0].platform)
    """)
    env = dict(__import__("os").environ, JAX_PLATFORMS="anvil")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["anvil", "anvil"]


def test_vulkan_plugin_serves_jax_too():
    # ANVIL_PJRT_PLUGIN picks the Anvil plugin behind the PJRT client.
    code = textwrap.dedent("""
        import jax, jax.numpy as jnp, numpy as np
        d = jax.devices()[0]
        x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
        y = jax.jit(lambda a: jnp.tanh(a @ a.T) + 1)(x)
        np.testing.assert_allclose(np.asarray(y), np.tanh(x @ x.T) + 1, rtol=1e-5, atol=1e-6)
        # .at[] with JAX's s32 indices, a repeated one among them.
        z = jax.jit(lambda v: v.at[jnp.array([1, 3, 3])].add(1.0))(np.zeros(6, np.float32))
        np.testing.assert_array_equal(np.asarray(z), [0, 1, 0, 2, 0, 0])
        print(d.platform, "vulkan" in str(d))
    """)
    env = dict(__import__("os").environ, JAX_PLATFORMS="anvil", ANVIL_PJRT_PLUGIN="vulkan")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["anvil", "True"]
