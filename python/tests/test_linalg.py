"""jnp.linalg and jax.scipy.linalg on Anvil against XLA's CPU backend.

Where a decomposition is unique only up to signs (QR, eigenvectors,
singular vectors), the programs return what is unique: products that
rebuild the input, eigenvalues, singular values, |Q|."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import check

R = np.random.RandomState(9)
M = R.standard_normal((6, 6)).astype(np.float32)
SPD = (M @ M.T + 6 * np.eye(6)).astype(np.float32)
SYM = (M + M.T).astype(np.float32)
TALL = R.standard_normal((9, 4)).astype(np.float32)
BIG_SYM = R.standard_normal((48, 48)).astype(np.float32)
BIG_SYM = BIG_SYM + BIG_SYM.T


def _qr_rebuilt(a):
    q, r = jnp.linalg.qr(a)
    return q @ r, jnp.abs(q), jnp.abs(r)


def _eigh_parts(a):
    w, v = jnp.linalg.eigh(a)
    return w, (v * w) @ v.T, jnp.abs(v.T @ v)


CASES = {
    "det": (jnp.linalg.det, (M,)),
    "slogdet": (lambda a: jnp.linalg.slogdet(a)[1], (M,)),
    "inv": (jnp.linalg.inv, (SPD,)),
    "solve": (lambda a, b: jnp.linalg.solve(a, b), (SPD, M)),
    "cholesky": (jnp.linalg.cholesky, (SPD,)),
    "triangular_solve": (lambda a, b: jax.scipy.linalg.solve_triangular(jnp.tril(a) + 6 * jnp.eye(6), b, lower=True),
                         (M, M)),
    "lu_factor": (lambda a: jax.scipy.linalg.lu_factor(a)[0], (M,)),
    "qr": (_qr_rebuilt, (TALL,)),
    "qr_complete": (lambda a: jnp.abs(jnp.linalg.qr(a, mode="complete")[0]), (TALL,)),
    "eigh": (_eigh_parts, (SYM,)),
    "eigh_48": (lambda a: jnp.linalg.eigh(a)[0], (BIG_SYM,)),
    "eigvalsh": (jnp.linalg.eigvalsh, (SPD,)),
    "svd_values": (lambda a: jnp.linalg.svd(a, compute_uv=False), (TALL,)),
    "svd_rebuilt": (lambda a: (lambda u, s, vt: (u * s) @ vt)(*jnp.linalg.svd(a, full_matrices=False)), (TALL,)),
    "pinv": (jnp.linalg.pinv, (TALL,)),
    "norm_2": (lambda a: jnp.linalg.norm(a, 2), (M,)),
    "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], (TALL, TALL[:, :2])),
    "matrix_rank": (jnp.linalg.matrix_rank, (TALL,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg(name):
    f, args = CASES[name]
    check(f, *args, rtol=2e-3, atol=2e-4)
