"""Sweep cases: large and awkward shapes, sized to take the CPU plugin's
fast paths (fused tiles of kFusedTile elements, kGrain thread splits,
results that stream past the caches, rows reduced in blocks or chunks,
narrow and wide column reduces, lane reduces split across threads, row
chains, radix sorts, top-k heaps, many-index scatters and gathers, oneDNN
dots and convolutions, reduce-window rows, select-and-scatter blocks), with
sizes just below, at and just above their thresholds and odd primes. Many
cases return several results (one per axis, op or variant), so that a
failure's "[i]" names the variant. Registered by jax_sweep.py; every name
starts with "large/".

Inputs are made lazily, when a case runs (no array is over about 64 MB), so
building the registry costs nothing. f32 sums are compared with tolerances
scaled to their length: Anvil sums f32 in double, so a sum that differs
should be checked against numpy in float64 before it is called a bug.

Found with these cases (the "bug/" cases keep them), and since fixed:
 - bf16 loops reading x and a reverse / transpose / slice of x, x first,
   read the reverse for both (x - flip(x) == 0): kernels_fused.cc's
   AllocateRegisters freed x's register at the reverse's load;
 - reduce-windows of many-op bodies (lax.cumlogsumexp of f32[129, 4099]:
   about 100 s against XLA's 0.4 s) and reverse cumulative ops (reverse
   cummax of f32[3, 8193]: 48 s) walked every window: both are scans now.
Known departures that are not Anvil's bugs carry a note= (XLA drops NaN in
large max/min reduces, contracts multiply-adds into FMAs, rounds bf16
partial sums in bf16; Anvil scans long f32 reduce-windows in order).
Slow, not wrong: FFTs of large prime lengths (KissFFT's O(n^2) for a prime
factor: f32[100003] 11 s against XLA's 7 ms).
"""
import zlib

_ARGS = {}  # one case's inputs, made by its first run, reused by its second


def build(case, x64_enabled):
    import jax
    import numpy as np

    f32 = np.float32

    def rng(name):
        return np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)

    def L(name, fn, make, x64=False, donate=None, **kw):
        """A case whose inputs make(R) builds, R a RandomState seeded by the name."""
        full = "large/" + name

        def runner(dev):
            if full not in _ARGS:
                _ARGS.clear()
                _ARGS[full] = tuple(make(rng(full)))
            args = _ARGS[full]
            with jax.default_device(dev):
                placed = jax.device_put(args, dev)
                out = jax.jit(fn, donate_argnums=donate or ())(*placed)
                jax.block_until_ready(out)
            for leaf in jax.tree_util.tree_leaves(out):
                if hasattr(leaf, "devices") and leaf.devices() != {dev}:
                    raise AssertionError(f"result on {leaf.devices()}, not {dev}")
            return out

        case(full, None, runner=runner, x64=x64, **kw)

    def normal(*shape, dtype=f32):
        return lambda R: (R.standard_normal(shape).astype(dtype),)

    def sprinkle(a, R, frac=1e-3, values=(np.nan, np.inf, -np.inf, -0.0, 0.0)):
        a = np.array(a)
        flat = a.reshape(-1)
        n = max(1, int(flat.size * frac))
        pos = R.randint(0, flat.size, n)
        flat[pos] = np.array(values, a.dtype)[R.randint(0, len(values), n)]
        return a

    def sum_tol(n, scale=1.0):
        # an f32 sum of n terms of size `scale`: errors grow about like sqrt(n) * eps.
        return dict(rtol=2e-5, atol=float(4e-6 * np.sqrt(n) * scale))

    h = dict(L=L, normal=normal, sprinkle=sprinkle, sum_tol=sum_tol, x64=x64_enabled)
    for part in (_elementwise, _reductions, _norms, _dots, _convolutions, _pooling, _indexing, _sorts, _movement,
                 _loops, _random, _fft_linalg, _edges, _bugs):
        part(**h)


def _special_sort_data(R, n):
    import numpy as np
    a = R.randint(-50, 50, n).astype(np.float32) * 0.5  # many ties
    flat = a.reshape(-1)
    k = max(1, flat.size // 100)
    vals = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0], np.float32)
    flat[R.randint(0, flat.size, k)] = vals[R.randint(0, len(vals), k)]
    return a


def _layernorm(x, ax):
    import jax.numpy as jnp
    from jax import lax
    m = jnp.mean(x, axis=ax, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=ax, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5)


# =========================================================================
# ELEMENTWISE chains over odd sizes (fused tiles, kGrain splits), broadcasts
# along every axis, many-input fusions, long op chains
# =========================================================================
def _elementwise(L, normal, sprinkle, sum_tol, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    f32, bf16, f16 = np.float32, jnp.bfloat16, np.float16
    LT = dict(rtol=2e-5, atol=2e-6)

    for n in (1, 15, 17, 1023, 1025, 32767, 32769, 65537, 2**20 + 3, 3 * 2**20 + 7):
        L(f"ew/f32_chain_{n}", lambda x, y: jnp.sin(x) * jnp.exp(-x * x) + jnp.tanh(y) / (1 + y * y) - jnp.sqrt(jnp.abs(x)),
          lambda R, n=n: (R.standard_normal(n).astype(f32), R.standard_normal(n).astype(f32)), **LT)
    for n in (1025, 2**20 + 3):
        L(f"ew/f32_arith_{n}", lambda x, y, z: (x * y + z - x / (jnp.abs(y) + 1), jnp.maximum(x, y) * jnp.minimum(y, z)),
          lambda R, n=n: tuple(R.standard_normal(n).astype(f32) for _ in range(3)), rtol=1e-6, atol=2e-6)
        L(f"ew/bf16_chain_{n}", lambda x, y: (jnp.tanh(x) * y + x * x - jnp.exp(y * 0.5)).astype(bf16),
          lambda R, n=n: (R.standard_normal(n).astype(bf16), R.standard_normal(n).astype(bf16)), rtol=2e-2, atol=2e-2)
        L(f"ew/f16_chain_{n}", lambda x, y: jnp.log1p(jnp.abs(x)) * y + x / (1 + y * y),
          lambda R, n=n: (R.standard_normal(n).astype(f16), R.standard_normal(n).astype(f16)), rtol=3e-3, atol=3e-3)
        L(f"ew/int_chains_{n}", lambda a, b, c, d: (((a * 3 + b) >> 2) ^ (a & 0xFF) | (b << 3), c * d + c, c - d, jnp.maximum(c, d), c >> 1),
          lambda R, n=n: (R.randint(-2**31, 2**31 - 1, n).astype(np.int32), R.randint(-2**31, 2**31 - 1, n).astype(np.int32),
                          R.randint(-128, 128, n).astype(np.int8), R.randint(-128, 128, n).astype(np.int8)))
        L(f"ew/bool_select_{n}", lambda a, b, c, x, y: ((a & b) | ~c, a ^ c, jnp.where(a, x, y), x >= y, jnp.clip(x, -0.5, y)),
          lambda R, n=n: tuple(R.randint(0, 2, n).astype(bool) for _ in range(3)) + (sprinkle(R.standard_normal(n).astype(f32), R, 0.01),
                                                                                     R.standard_normal(n).astype(f32)))
        L(f"ew/converts_{n}", lambda x: (x.astype(bf16), x.astype(f16), (x * 1e9).astype(np.int32), x.astype(np.int8),
                                          x.astype(bf16).astype(f32), (x > 0).astype(f32), x.astype(np.uint8)),
          lambda R, n=n: (sprinkle(R.standard_normal(n).astype(f32) * 100, R, 0.01),))
    for shp in [(1023, 1025), (17, 65537), (65537, 17), (3, 2**20 + 3)]:
        tag = "x".join(map(str, shp))
        L(f"ew2d/chains_{tag}", lambda x, a: (jnp.exp(-x * x) * jnp.cos(x) + x, (a * 7 + 3) % 1000 - (a >> 3)),
          lambda R, shp=shp: (R.standard_normal(shp).astype(f32), R.randint(-10**7, 10**7, shp).astype(np.int32)), **LT)
    L("ew/f32_special_3M", lambda x: (jnp.exp(x), jnp.log(x), jnp.tanh(x), x * 0, jnp.sqrt(x), 1 / x),
      lambda R: (sprinkle(R.standard_normal(3 * 2**20 + 7).astype(f32) * 50, R, 0.05),), rtol=2e-5, atol=1e-6)
    L("ew/gelu_2M", lambda x: jax.nn.gelu(x, approximate=False) + jax.nn.gelu(x) * jax.nn.sigmoid(x), normal(2**21 + 5), **LT)
    L("ew/pow_1M", lambda x: (x ** 3, x ** 2.5, jnp.power(jnp.abs(x), 0.3)), lambda R: (R.uniform(0.0, 4.0, 2**20 + 3).astype(f32),),
      rtol=3e-5, atol=1e-6)

    # broadcasts along every axis
    L("bc/row_col_1023x1025", lambda x, r, c: x + r[None, :] * c[:, None] - r,
      lambda R: (R.standard_normal((1023, 1025)).astype(f32), R.standard_normal(1025).astype(f32), R.standard_normal(1023).astype(f32)),
      rtol=1e-6, atol=1e-6)
    L("bc/3d_each_axis", lambda x, b0, b1, b2: (x * b0 + b0, x * b1 + b1, x * b2 + b2, jnp.broadcast_to(b1, x.shape) * 2),
      lambda R: (R.standard_normal((257, 129, 33)).astype(f32), R.standard_normal((257, 1, 1)).astype(f32),
                 R.standard_normal((1, 129, 1)).astype(f32), R.standard_normal((1, 1, 33)).astype(f32)), rtol=1e-6, atol=1e-6)
    L("bc/4d_mixed", lambda a, b: a * b - jnp.sum(b),
      lambda R: (R.standard_normal((7, 1, 65, 1)).astype(f32), R.standard_normal((1, 33, 1, 129)).astype(f32)), rtol=1e-5, atol=1e-4)
    L("bc/scalar_big", lambda x, s: x * s + s, lambda R: (R.standard_normal(4 * 2**20 + 1).astype(f32), f32(1.5)))
    L("bc/iota_bcast", lambda x: x + jnp.arange(x.shape[1], dtype=f32)[None, :] * jnp.arange(x.shape[0], dtype=f32)[:, None],
      normal(4097, 1023), rtol=1e-6)
    L("bc/narrow_types", lambda x, r, a, c, p, q: (x * r, a + c[:, None], p[:, None] & q[None, :]),
      lambda R: (R.standard_normal((4097, 513)).astype(bf16), R.standard_normal(513).astype(bf16),
                 R.randint(-128, 128, (4097, 513)).astype(np.int8), R.randint(-128, 128, 4097).astype(np.int8),
                 R.randint(0, 2, 3001).astype(bool), R.randint(0, 2, 2999).astype(bool)))

    # many inputs, many readers, long chains (Horner and op chains)
    L("fuse/twenty_inputs", lambda *a: sum(a[i] * (i + 1) - jnp.abs(a[i]) for i in range(20)),
      lambda R: tuple(R.standard_normal(65537).astype(f32) for _ in range(20)), rtol=1e-5, atol=1e-4)
    L("fuse/many_readers", lambda x: (lambda t: (t * 2, t + 1, t - 3, t * t, jnp.sin(t), t / 7))(jnp.exp(x) * x), normal(1025, 1023),
      rtol=2e-5, atol=1e-4)
    for deg in (63, 64, 65, 130):
        L(f"fuse/polyval_{deg}", lambda c, x: jnp.polyval(c, x), lambda R, deg=deg: (R.uniform(-1, 1, deg).astype(f32) / np.arange(1, deg + 1),
                                                                                      R.uniform(-1, 1, 2**20 + 3).astype(f32)), rtol=1e-5, atol=1e-5)
    L("fuse/iota_onehot_compare", lambda i: jnp.sum((i[:, None] == jnp.arange(1023)[None, :]).astype(f32) * jnp.arange(1023.0), axis=1),
      lambda R: (R.randint(-1, 1025, 4097).astype(np.int32),))
    L("fuse/bf16_long_chain", lambda x: (x * 1.5 - x * x + jnp.maximum(x, 0.25) - jnp.abs(x) * 0.5).astype(bf16),
      normal(4 * 2**20 + 7, dtype=bf16), rtol=2e-2, atol=2e-2)
    L("fuse/mixed_int_float", lambda x, i: (x * i.astype(f32) + (i >> 2).astype(f32), (x * 100).astype(np.int32) + i),
      lambda R: (R.standard_normal(2**20 + 3).astype(f32), R.randint(-1000, 1000, 2**20 + 3).astype(np.int32)), rtol=2e-5, atol=1e-3,
      note="XLA fuses x * i + c into an FMA; Anvil rounds the product (the HLO's two ops): differences of an ulp of x * i")
    L("fuse/u8_quant", lambda x, s: jnp.clip(jnp.round(x / s), 0, 255).astype(np.uint8).astype(f32) * s,
      lambda R: (R.uniform(-10, 300, 2**20 + 3).astype(f32), f32(0.7)))
    L("fuse/select_chain_nan", lambda x: jnp.where(jnp.isnan(x), 0.0, jnp.where(x > 1, jnp.log(x), jnp.exp(x) - 1)),
      lambda R: (sprinkle(R.standard_normal(3 * 2**20 + 7).astype(f32), R, 0.01),), **LT)

    # results that stream past the caches (ResultStreams: at least 8 MB, and with the inputs read element
    # for element more than half the last-level cache: 192 MB where glibc reports 384 MB)
    NS = 10 * 2**20 + 7
    L("stream/five_inputs", lambda a, b, c, d, e: a * b + c * d - e, lambda R: tuple(R.standard_normal(NS).astype(f32) for _ in range(5)),
      rtol=1e-6, atol=1e-6)
    L("stream/five_inputs_2d_bcast", lambda a, b, c, d, r: jnp.tanh(a - b) * (c + d) + r[None, :],
      lambda R: tuple(R.standard_normal((10241, 1025)).astype(f32) for _ in range(4)) + (R.standard_normal(1025).astype(f32),),
      rtol=2e-6, atol=2e-6)
    L("stream/many_registers", lambda a, b, c, d: (lambda t: sum(jnp.sin(t * k) for k in range(1, 12)))(a * b - c / (1 + d * d)),
      lambda R: tuple(R.standard_normal(NS).astype(f32) for _ in range(4)), rtol=1e-5, atol=2e-4)
    L("stream/two_outputs", lambda a, b, c, d, e: (a * b + c, d * e - a),
      lambda R: tuple(R.standard_normal(NS).astype(f32) for _ in range(5)), rtol=1e-6, atol=1e-6)


# =========================================================================
# REDUCTIONS along each axis (row blocks, row chunks, lane sums, narrow and
# wide column reduces, lane reduces and their splits), cumulative ops
# =========================================================================
def _reductions(L, normal, sprinkle, sum_tol, x64):
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    f32, bf16, f16 = np.float32, jnp.bfloat16, np.float16

    for shp in [(4097, 1023), (1, 2**20 + 3), (2**20 + 3, 1), (16385, 3), (3, 16385), (2047, 127), (2049, 128), (4097, 129),
                (15, 16383), (17, 16385), (1000, 63), (1000, 65), (999, 513), (2, 3 * 2**20 + 1)]:
        tag = "x".join(map(str, shp))
        L(f"red/{tag}", lambda x: (jnp.sum(x, axis=0), jnp.sum(x, axis=1), jnp.sum(x), jnp.max(x, axis=0), jnp.min(x, axis=0), jnp.max(x, axis=1),
                                   jnp.min(x, axis=1)), normal(*shp), **sum_tol(shp[0] * shp[1]))
    for shp in [(33, 4097, 7), (7, 129, 1025), (1025, 3, 129), (65, 33, 129, 17)]:
        tag = "x".join(map(str, shp))
        axes = [(0,), (1,), (2,), (0, 2), (1, 2), (0, 1)] + ([(1, 3), (0, 2)] if len(shp) == 4 else [])
        L(f"red3/sum_{tag}", lambda x, axes=axes: tuple(jnp.sum(x, axis=a) for a in axes), normal(*shp), **sum_tol(int(np.prod(shp))))
        L(f"red3/max_{tag}", lambda x, axes=axes: tuple(jnp.max(x, axis=a) for a in axes), normal(*shp))
    for shp, ax in [((3, 100003), 1), ((100003, 3), 0), ((4097, 1023), 1), ((4097, 1023), 0)]:
        tag = "x".join(map(str, shp))
        L(f"red/prod_{tag}_ax{ax}", lambda x, ax=ax: jnp.prod(x, axis=ax), lambda R, shp=shp: (R.uniform(0.999, 1.001, shp).astype(f32),),
          rtol=2e-4, atol=0)
    L("red/init_values", lambda x, a: (lax.reduce(x, f32(5.0), lax.add, (1,)), lax.reduce(a, np.int32(7), lax.add, (1,)),
                                       lax.reduce(a, np.int32(7), lax.add, (0,)), lax.reduce(x, f32(0.5), lax.max, (0,))),
      lambda R: (R.standard_normal((513, 16385)).astype(f32), R.randint(-1000, 1000, (4097, 127)).astype(np.int32)), **sum_tol(16385),
      note="XLA departure: XLA's CPU applies a non-identity initial value more than once (int32 sums off by 4 x 7 and 134 x 7); "
           "Anvil combines it once, as numpy's sum + init does")

    # NaN / inf / -0 sprinkled
    for shp in [(4097, 1023), (1, 2**20 + 3), (16385, 3)]:
        tag = "x".join(map(str, shp))
        mk = lambda R, shp=shp: (sprinkle(R.standard_normal(shp).astype(f32), R, 2e-4),)
        L(f"rednan/sum_{tag}", lambda x: (jnp.sum(x, axis=0), jnp.sum(x, axis=1), jnp.nansum(x, axis=1)), mk, **sum_tol(max(shp)))
        L(f"rednan/maxmin_{tag}", lambda x: (jnp.max(x, axis=0), jnp.min(x, axis=1)), mk,
          note="XLA departure: XLA's CPU drops NaN in large max/min reduces; Anvil propagates it (numpy and HLO agree)")
        L(f"rednan/arg_{tag}", lambda x: (jnp.argmax(x, axis=0), jnp.argmin(x, axis=1), jnp.nanmax(x, axis=1)), mk)
    L("rednan/inf_cancel_1M", lambda x: (jnp.sum(x), jnp.max(x), jnp.min(x)),
      lambda R: (np.concatenate([R.standard_normal(2**20).astype(f32), np.array([np.inf, -np.inf, 1.0], f32)]),))
    L("rednan/neg_zero_max", lambda x: (jnp.max(x, axis=1), jnp.min(x, axis=0)),
      lambda R: (np.where(R.randint(0, 2, (4097, 129)) > 0, -0.0, 0.0).astype(f32) - (R.randint(0, 3, (4097, 129)) == 0).astype(f32),))

    # arg reductions with ties (integer-valued data): lane reduces and their splits across threads
    for shp in [(4097, 1023), (1, 2**20 + 3), (2**20 + 3, 1), (100003, 3), (3, 100003), (1000, 63), (1000, 64), (1000, 65), (129, 2049),
                (2, 4097)]:
        tag = "x".join(map(str, shp))
        L(f"arg/ties_{tag}", lambda x, a: (jnp.argmax(x, axis=0), jnp.argmin(x, axis=0), jnp.argmax(x, axis=1), jnp.argmin(x, axis=1),
                                           jnp.argmax(a, axis=1), jnp.argmin(a, axis=0)),
          lambda R, shp=shp: (R.randint(-3, 4, shp).astype(f32), R.randint(-5, 5, shp).astype(np.int32)))
    L("arg/flat_1M_nan_late", lambda x: (jnp.argmax(x), jnp.argmin(x), jnp.argmax(x[:-1])),
      lambda R: (np.concatenate([R.standard_normal(2**20).astype(f32), np.array([np.nan], f32)]),))
    L("arg/3d_ax1", lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=1)), lambda R: (R.randint(-2, 3, (33, 4097, 7)).astype(f32),))
    L("arg/bool_any_all", lambda a: (jnp.any(a, axis=1), jnp.all(~a, axis=0), jnp.any(a), jnp.argmax(a, axis=1)),
      lambda R: (np.pad(np.zeros((4095, 1021), bool), ((1, 1), (1, 1)), constant_values=True) & (R.rand(4097, 1023) < 0.001),))
    L("arg/any_last_only", lambda a: (jnp.any(a), jnp.all(a), jnp.any(a, axis=0), jnp.all(a, axis=1)),
      lambda R: (np.eye(1, 2**20 + 3, 2**20 + 2, dtype=bool).reshape(2**20 + 3, 1),))
    L("arg/value_and_index", lambda x: lax.reduce((x, lax.broadcasted_iota(np.int32, x.shape, 1)), (-np.inf, 0),
                                                  lambda a, b: (jnp.maximum(a[0], b[0]), jnp.where(a[0] >= b[0], a[1], b[1])), (1,)),
      lambda R: (R.randint(-3, 4, (513, 4099)).astype(f32),))

    # integer, bool and narrow-float reduces, mean and variance, losses
    L("red/int_types", lambda a, b, p, u: (jnp.sum(a, axis=0), jnp.sum(a, axis=1), jnp.sum(a), jnp.sum(b, axis=1), jnp.sum(b, axis=0, dtype=np.int8),
                                           jnp.max(b, axis=0), jnp.sum(p, axis=0), jnp.count_nonzero(p, axis=1), jnp.max(u, axis=1), jnp.min(u, axis=0)),
      lambda R: (R.randint(-2**30, 2**30, (4097, 1023)).astype(np.int32), R.randint(-128, 128, (4097, 1023)).astype(np.int8),
                 R.rand(4097, 1023) < 0.3, R.randint(0, 2**32, (4097, 1023), dtype=np.uint64).astype(np.uint32)))
    for shp, ax in [((4097, 1023), 0), ((4097, 1023), 1), ((3, 2**20 + 3), 1), ((2**20 + 3, 3), 0)]:
        tag = "x".join(map(str, shp))
        L(f"red/meanvar_{tag}_ax{ax}", lambda x, ax=ax: (jnp.mean(x, axis=ax), jnp.var(x, axis=ax), jnp.std(x, axis=ax)),
          lambda R, shp=shp: (R.standard_normal(shp).astype(f32) + 3,), rtol=5e-5, atol=5e-6)
    L("red/bf16_f16", lambda x, y: (jnp.sum(x, axis=1), jnp.mean(x, axis=0), jnp.max(x, axis=1), jnp.sum(y, axis=1), jnp.sum(y, axis=0)),
      lambda R: (R.standard_normal((4097, 1023)).astype(bf16), R.standard_normal((4097, 1023)).astype(f16)), rtol=1e-2, atol=0.1)
    L("red/losses", lambda x, y: (jnp.mean((x - y) ** 2), jnp.linalg.norm(x), jnp.sum(jnp.abs(x - y)), jnp.max(x * y)),
      lambda R: (R.standard_normal(3 * 2**20 + 1).astype(f32), R.standard_normal(3 * 2**20 + 1).astype(f32)), rtol=1e-5)
    L("red/norm_rows_cols", lambda x: (jnp.linalg.norm(x, axis=1), jnp.sum(jnp.abs(x), axis=0)), normal(4097, 1023), rtol=1e-5, atol=1e-4)
    L("red/sum_of_fused_3M", lambda x: jnp.sum(jnp.exp(jnp.sin(x)) * x), normal(3 * 2**20 + 1), rtol=1e-4, atol=0.5)
    L("red/nhwc_channel_stats", lambda x: (jnp.mean(x, axis=(0, 1, 2)), jnp.var(x, axis=(0, 1, 2))), normal(7, 113, 97, 96), rtol=1e-5, atol=1e-5)
    if x64:
        L("red/f64_sum", lambda x: (jnp.sum(x, axis=0), jnp.sum(x)), normal(4097, 1023, dtype=np.float64), x64=True, rtol=1e-12, atol=1e-10)

    # fused reduces: column blocks at the narrow / wide boundary, rows through strided reads
    for rows in (2047, 2049, 4097):
        L(f"colfuse/{rows}_rows", lambda *xs: tuple(r for x in xs for r in (jnp.sum(jnp.exp(x * 0.5) - x, axis=0), jnp.max(jnp.abs(x) * 2 - 1, axis=0))),
          lambda R, rows=rows: tuple(R.standard_normal((rows, cols)).astype(f32) for cols in (63, 64, 127, 128, 129, 513)), **sum_tol(rows, 2.0))
    L("colfuse/narrow_100003x33", lambda x: jnp.sum(jnp.tanh(x) * x, axis=0), normal(100003, 33), **sum_tol(100003))
    L("colfuse/wide_2049x4099", lambda x: jnp.sum(jnp.tanh(x) * x, axis=0), normal(2049, 4099), **sum_tol(2049))
    L("colfuse/softmax_ax0_2049x128", lambda x: jnp.exp(x - jnp.max(x, axis=0)) / jnp.sum(jnp.exp(x - jnp.max(x, axis=0)), axis=0),
      normal(2049, 128), rtol=1e-4, atol=1e-8)
    L("colfuse/prod_ax0_narrow", lambda x: jnp.prod(x, axis=0), lambda R: (R.uniform(0.999, 1.001, (20000, 7)).astype(f32),), rtol=2e-4)
    L("colfuse/strided_in", lambda x, y: (jnp.sum(x.T * 2, axis=0), jnp.sum(y[::-1] * y, axis=0), jnp.max(y[:, ::-1] + 1, axis=0)),
      lambda R: (R.standard_normal((129, 4099)).astype(f32), R.standard_normal((4099, 129)).astype(f32)), **sum_tol(4099, 3.0))
    L("rowfuse/strided_in", lambda x, y: (jnp.sum(jnp.exp(x.T), axis=1), jnp.max(y[::3, ::2] * 2, axis=1)),
      lambda R: (R.standard_normal((1023, 4097)).astype(f32), R.standard_normal((4097, 2049)).astype(f32)), **sum_tol(1023, 3.0))
    L("rowfuse/bcast_in", lambda x, c: jnp.sum(x * c[:, None], axis=1),
      lambda R: (R.standard_normal((4097, 1023)).astype(f32), R.standard_normal(4097).astype(f32)), **sum_tol(1023, 3.0))
    L("rowfuse/loss_chunks", lambda x, y: (jnp.sum(jnp.abs(x - y)), jnp.max(x * y), jnp.sum((x - y) ** 2, axis=1)),
      lambda R: (R.standard_normal((3, 3 * 2**20 + 1)).astype(f32), R.standard_normal((3, 3 * 2**20 + 1)).astype(f32)), rtol=1e-5, atol=0.05)
    L("rowfuse/keepdims_size1", lambda x: (jnp.sum(x, axis=1, keepdims=True), jnp.max(x, axis=2)), normal(4097, 1, 1023), **sum_tol(1))

    # cumulative ops along each axis
    for shp in [(1025, 257), (3, 100003), (100003, 3)]:
        tag = "x".join(map(str, shp))
        n = max(shp)
        L(f"cum/sum_{tag}", lambda x: (jnp.cumsum(x, axis=0), jnp.cumsum(x, axis=1)), normal(*shp), rtol=2e-5, atol=max(float(3e-8 * n), 2e-4),
          note="Anvil scans the reduce-window in order in f32 (numpy's float32 cumsum bit for bit); XLA sums a tree, "
               "more accurately: long rows differ by about eps * n")
        L(f"cum/maxmin_{tag}", lambda x: (lax.cummax(x, axis=0), lax.cummin(x, axis=1)), normal(*shp))
        L(f"cum/prod_{tag}", lambda x: (jnp.cumprod(x, axis=0), jnp.cumprod(x, axis=1)),
          lambda R, shp=shp: (R.uniform(0.999, 1.001, shp).astype(f32),), rtol=2e-4)
        L(f"cum/i32_{tag}", lambda a: (jnp.cumsum(a, axis=0), jnp.cumsum(a, axis=1)), lambda R, shp=shp: (R.randint(-1000, 1000, shp).astype(np.int32),))
    L("cum/reverse", lambda x, y: (lax.cumsum(x, axis=0, reverse=True), lax.cummax(y, axis=1, reverse=True), lax.cumsum(y, axis=1, reverse=True)),
      lambda R: (R.standard_normal((4097, 129)).astype(f32), R.standard_normal((3, 4097)).astype(f32)), rtol=2e-5, atol=3e-4,
      note="slow, not wrong: a reverse cumulative op (a window padded above) is no PrefixScan, so every window is walked, "
           "O(n^2), and past 2^26 table entries by the reference evaluator: f32[3, 8193] took 48 s against XLA's 0.3 ms")
    L("cum/nan_cummax", lambda x: (lax.cummax(x, axis=1), jnp.cumsum(x, axis=1)),
      lambda R: (sprinkle(R.standard_normal((33, 65537)).astype(f32), R, 1e-4),), rtol=2e-5, atol=3e-8 * 65537)
    L("cum/logsumexp", lambda x: lax.cumlogsumexp(x, axis=1), normal(16, 2049), rtol=1e-5, atol=2e-5,
      note="slow, not wrong: a reduce-window of a many-op body walks every window (O(n^2)): (129, 4099) took "
           "about 100 s on Anvil against 0.4 s on XLA, which rewrites long windows into a tree")


# =========================================================================
# NORMS (row chains, fused row and column reduces) along last and first axes
# =========================================================================
def _norms(L, normal, sprinkle, sum_tol, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    f32, bf16 = np.float32, jnp.bfloat16

    def rmsnorm(x, ax):
        return x * lax.rsqrt(jnp.mean(x * x, axis=ax, keepdims=True) + 1e-6)

    for shp in [(4097, 1023), (3, 2**20 + 3), (2**20 + 3, 3), (1000, 16385), (16383, 17), (1, 16385), (64, 64), (2049, 129), (65537, 2)]:
        tag = "x".join(map(str, shp))
        for ax in (0, 1):
            L(f"norm/{tag}_ax{ax}", lambda x, ax=ax: (_layernorm(x, ax), jax.nn.softmax(x, axis=ax), jax.nn.logsumexp(x, axis=ax),
                                                      jax.nn.log_softmax(x, axis=ax), rmsnorm(x, ax)),
              normal(*shp), rtol=1e-4, atol=1e-4)
    L("norm/softmax_masked", lambda x, m: jax.nn.softmax(jnp.where(m, x, -jnp.inf), axis=-1),
      lambda R: (R.standard_normal((1025, 4099)).astype(f32) * 30, R.rand(1025, 4099) < 0.5), rtol=1e-4, atol=1e-8)
    L("norm/softmax_all_masked_row", lambda x: jax.nn.softmax(x, axis=-1),
      lambda R: (np.where(np.arange(1025)[:, None] % 7 == 0, -np.inf, R.standard_normal((1025, 2049))).astype(f32),), rtol=1e-4, atol=1e-8)
    L("norm/layernorm_affine_bf16", lambda x, g, b: (_layernorm(x.astype(f32), -1) * g + b).astype(bf16),
      lambda R: (R.standard_normal((4097, 1023)).astype(bf16), R.standard_normal(1023).astype(f32), R.standard_normal(1023).astype(f32)),
      rtol=2e-2, atol=2e-2)
    L("norm/softmax_grad", jax.grad(lambda x: jnp.sum(jax.nn.softmax(x, axis=-1) * jnp.arange(x.shape[-1], dtype=f32))),
      normal(1023, 4099), rtol=1e-3, atol=1e-6)
    L("norm/layernorm_grad", jax.grad(lambda x: jnp.sum(_layernorm(x, -1) ** 3)), normal(2049, 1025), rtol=1e-3, atol=1e-4)
    L("norm/batchnorm_nhwc", lambda x, y: (_layernorm(x, (0, 1, 2)), _layernorm(y, (0, 1, 2))),
      lambda R: (R.standard_normal((7, 65, 67, 96)).astype(f32), R.standard_normal((3, 65, 67, 129)).astype(f32)), rtol=1e-4, atol=2e-5)
    L("norm/attention", lambda q, k, v: jax.nn.softmax(q @ k.T / 8.0, axis=-1) @ v,
      lambda R: tuple(R.standard_normal((1025, 64)).astype(f32) for _ in range(3)), rtol=2e-4, atol=2e-5)

    # row chains whose later steps read other rows
    L("chain/layernorm_then_reverse_rows", lambda x: (lambda y: y[::-1] * 2 + y)(_layernorm(x, -1)), normal(4097, 1023), rtol=1e-4, atol=1e-4)
    L("chain/softmax_then_row_diff", lambda x: (lambda y: y[1:] - y[:-1])(jax.nn.softmax(x, axis=-1)), normal(4097, 1023), rtol=1e-4, atol=1e-8)
    L("chain/centered_then_roll", lambda x: (lambda m: m + jnp.roll(m, 3, axis=0))(x - jnp.max(x, axis=1, keepdims=True)), normal(4097, 1023))
    L("chain/reduce_reversed_rolled_bcast", lambda x: (x * jnp.sum(x, axis=1)[::-1, None], x - jnp.roll(jnp.max(x, axis=1), 1)[:, None]),
      normal(4097, 1023), rtol=1e-5, atol=1e-4)
    L("chain/3d_two_reduces", lambda x: (lambda y: y * jnp.sum(y * y, axis=(1, 2))[:, None, None])(x - jnp.mean(x, axis=2, keepdims=True)),
      normal(513, 33, 129), rtol=1e-4, atol=1e-4)
    L("chain/3d_lead_change", lambda x: x - jnp.sum(jnp.max(x, axis=2), axis=1)[:, None, None], normal(513, 33, 129), rtol=1e-5, atol=1e-4)
    L("chain/transpose_after", lambda x: (lambda y: y.T + 1)(jax.nn.softmax(x, axis=-1)), normal(4097, 1023), rtol=1e-4, atol=1e-8)
    L("chain/reshapes", lambda x: (jnp.sum((x - jnp.mean(x, -1, keepdims=True)).reshape(4096, 32, 32), axis=-1),
                                   (x - jnp.mean(x, -1, keepdims=True)).reshape(2048, 2048) * jnp.arange(2048.0)),
      normal(4096, 1024), rtol=1e-5, atol=1e-3)
    L("chain/row_of_other_row", lambda x: x - jnp.max(x, axis=1, keepdims=True)[jnp.arange(4097) // 2], normal(4097, 1023))
    L("chain/softmax_dot", lambda x, w: jax.nn.softmax(x, axis=-1) @ w,
      lambda R: (R.standard_normal((4097, 1023)).astype(f32), R.standard_normal((1023, 65)).astype(f32)), rtol=1e-4, atol=1e-5)
    L("chain/layernorm_three_outputs", lambda x: (_layernorm(x, -1), jnp.mean(x, axis=-1), jnp.var(x, axis=-1)), normal(4097, 1023),
      rtol=1e-4, atol=1e-4)
    L("chain/dus_into_normed", lambda x, u: lax.dynamic_update_slice(_layernorm(x, -1), u, (7, 0)),
      lambda R: (R.standard_normal((4097, 1023)).astype(f32), R.standard_normal((5, 1023)).astype(f32)), rtol=1e-4, atol=1e-4)
    L("chain/concat_rows_after", lambda x: jnp.concatenate([jax.nn.softmax(x, -1)[2000:], jax.nn.softmax(x, -1)[:2000]]), normal(4097, 1023),
      rtol=1e-4, atol=1e-8)
    L("chain/softmax_grad_rows", jax.grad(lambda x: jnp.sum(jax.nn.log_softmax(x, -1)[::-1] * jnp.arange(1023.0) / 1023)), normal(4097, 1023),
      rtol=1e-3, atol=1e-4)


# =========================================================================
# DOTS with odd M, N, K (oneDNN sgemm splits, packed operands, vector dots)
# =========================================================================
def _dots(L, normal, sprinkle, sum_tol, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    f32, bf16, f16 = np.float32, jnp.bfloat16, np.float16

    for m, k, n in [(1, 1, 1), (1, 4097, 1), (4097, 1, 4097), (1, 4097, 1023), (1023, 4097, 1), (1023, 1025, 1021), (17, 65537, 3),
                    (2049, 7, 2051), (127, 129, 131), (1031, 1031, 1031), (2, 2**20 + 3, 2)]:
        L(f"dot/f32_{m}x{k}x{n}", lambda a, b: a @ b,
          lambda R, m=m, k=k, n=n: (R.standard_normal((m, k)).astype(f32), R.standard_normal((k, n)).astype(f32)),
          rtol=1e-4, atol=float(2e-5 * np.sqrt(k)))
    for m, k, n in [(1023, 1025, 1021), (17, 4099, 3), (1, 4097, 1023)]:
        L(f"dot/transposed_{m}x{k}x{n}", lambda a, b, at, bt: (at.T @ b, a @ bt.T, at.T @ bt.T),
          lambda R, m=m, k=k, n=n: (R.standard_normal((m, k)).astype(f32), R.standard_normal((k, n)).astype(f32),
                                    R.standard_normal((k, m)).astype(f32), R.standard_normal((n, k)).astype(f32)),
          rtol=1e-4, atol=float(2e-5 * np.sqrt(k)))
    L("dot/matvec", lambda a, v: (a @ v, v @ a.T), lambda R: (R.standard_normal((4097, 1023)).astype(f32), R.standard_normal(1023).astype(f32)),
      rtol=1e-4, atol=1e-3)
    L("dot/outer_4097", lambda a, b: jnp.outer(a, b), lambda R: (R.standard_normal(4097).astype(f32), R.standard_normal(2049).astype(f32)))
    for b, m, k, n in [(7, 129, 257, 63), (1, 1023, 65, 1025), (513, 3, 17, 5), (64, 64, 64, 64), (3, 1, 4097, 1)]:
        L(f"bmm/f32_{b}x{m}x{k}x{n}", jnp.matmul,
          lambda R, b=b, m=m, k=k, n=n: (R.standard_normal((b, m, k)).astype(f32), R.standard_normal((b, k, n)).astype(f32)),
          rtol=1e-4, atol=float(2e-5 * np.sqrt(k)))
    L("bmm/einsums", lambda a, c, d, e: (jnp.einsum("ibj,jbk->bik", a, c), jnp.einsum("abcd,cdbe->ae", d, e)),
      lambda R: (R.standard_normal((129, 7, 65)).astype(f32), R.standard_normal((65, 7, 33)).astype(f32),
                 R.standard_normal((65, 9, 17, 33)).astype(f32), R.standard_normal((17, 33, 9, 31)).astype(f32)), rtol=1e-4, atol=1e-3)
    L("bmm/broadcast_batch", jnp.matmul, lambda R: (R.standard_normal((5, 1, 65, 33)).astype(f32), R.standard_normal((1, 7, 33, 129)).astype(f32)),
      rtol=1e-4, atol=1e-4)
    for dt, name, tol in [(f16, "f16", dict(rtol=2e-3, atol=2e-2)), (bf16, "bf16", dict(rtol=1e-2, atol=0.1))]:
        L(f"dot/{name}_pref_f32", lambda a, c, d, e: (jnp.matmul(a, c, preferred_element_type=f32), jnp.matmul(d, e, preferred_element_type=f32)),
          lambda R, dt=dt: (R.standard_normal((513, 1025)).astype(dt), R.standard_normal((1025, 257)).astype(dt),
                            R.standard_normal((7, 65, 257)).astype(dt), R.standard_normal((7, 257, 33)).astype(dt)), rtol=1e-4, atol=1e-3)
        L(f"dot/{name}_plain", lambda a, c: a @ c,
          lambda R, dt=dt: (R.standard_normal((513, 1025)).astype(dt), R.standard_normal((1025, 257)).astype(dt)), **tol)
    L("dot/f8_pref_f32", lambda a, b: jnp.matmul(a, b, preferred_element_type=f32),
      lambda R: (R.standard_normal((257, 513)).astype(jnp.float8_e4m3fn), R.standard_normal((513, 129)).astype(jnp.float8_e4m3fn)),
      rtol=1e-4, atol=1e-3)
    L("dot/ints", lambda a, c, d, e: (jnp.matmul(a, c, preferred_element_type=np.int32), d @ e),
      lambda R: (R.randint(-128, 128, (513, 1025)).astype(np.int8), R.randint(-128, 128, (1025, 257)).astype(np.int8),
                 R.randint(-2**31, 2**31 - 1, (65, 1025)).astype(np.int32), R.randint(-2**31, 2**31 - 1, (1025, 33)).astype(np.int32)))
    L("dot/mlp_grad", jax.grad(lambda w1, w2, x: jnp.sum(jnp.tanh(x @ w1) @ w2), argnums=(0, 1)),
      lambda R: (R.standard_normal((257, 513)).astype(f32) * 0.05, R.standard_normal((513, 65)).astype(f32) * 0.05,
                 R.standard_normal((1025, 257)).astype(f32)), rtol=1e-3, atol=1e-3)
    L("dot/complex", lambda a, b: a @ b,
      lambda R: tuple((R.standard_normal(s) + 1j * R.standard_normal(s)).astype(np.complex64) for s in ((257, 1025), (1025, 129))),
      rtol=1e-4, atol=1e-3)
    if x64:
        L("dot/f64_odd", lambda a, c: a @ c, lambda R: (R.standard_normal((257, 1025)), R.standard_normal((1025, 129))), x64=True,
          rtol=1e-10, atol=1e-10)


# =========================================================================
# CONVOLUTIONS (oneDNN forward and backward, direct, pointwise) and grads
# =========================================================================
def _convolutions(L, normal, sprinkle, sum_tol, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    f32, bf16, f16 = np.float32, jnp.bfloat16, np.float16
    NHWC, NCHW = ("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW")
    conv_cases = [
        # name, layout, x shape, kernel shape, strides, padding, rhs dilation, lhs dilation, groups, with gradient
        ("nhwc_3x3_same_b1", NHWC, (1, 67, 65, 16), (3, 3, 16, 32), (1, 1), "SAME", (1, 1), (1, 1), 1, True),
        ("nhwc_3x3_same_b7", NHWC, (7, 33, 35, 8), (3, 3, 8, 24), (1, 1), "SAME", (1, 1), (1, 1), 1, True),
        ("nhwc_3x3_s2_valid", NHWC, (7, 65, 63, 16), (3, 3, 16, 16), (2, 2), "VALID", (1, 1), (1, 1), 1, True),
        ("nhwc_5x5_dil2", NHWC, (3, 65, 67, 8), (5, 5, 8, 16), (1, 1), "SAME", (2, 2), (1, 1), 1, False),
        ("nhwc_7x7_s2_pad3", NHWC, (2, 113, 115, 3), (7, 7, 3, 64), (2, 2), ((3, 3), (3, 3)), (1, 1), (1, 1), 1, True),
        ("nhwc_asym_pad", NHWC, (3, 31, 37, 8), (3, 4, 8, 8), (1, 2), ((2, 0), (0, 3)), (1, 1), (1, 1), 1, True),
        ("nhwc_neg_pad", NHWC, (3, 33, 35, 8), (3, 3, 8, 16), (1, 1), ((-2, 1), (3, -1)), (1, 1), (1, 1), 1, False),
        ("nhwc_grouped4", NHWC, (7, 33, 33, 32), (3, 3, 8, 32), (1, 1), "SAME", (1, 1), (1, 1), 4, True),
        ("nhwc_depthwise", NHWC, (7, 65, 67, 32), (3, 3, 1, 32), (1, 1), "SAME", (1, 1), (1, 1), 32, True),
        ("nhwc_depthwise_s2", NHWC, (1, 113, 111, 96), (3, 3, 1, 96), (2, 2), "SAME", (1, 1), (1, 1), 96, False),
        ("nhwc_depthwise_mult2", NHWC, (3, 33, 35, 16), (5, 5, 1, 32), (1, 1), "SAME", (1, 1), (1, 1), 16, True),
        ("nhwc_1x1_c96", NHWC, (7, 57, 59, 96), (1, 1, 96, 64), (1, 1), "VALID", (1, 1), (1, 1), 1, False),
        ("nhwc_1x1_c128", NHWC, (3, 57, 59, 128), (1, 1, 128, 33), (1, 1), "VALID", (1, 1), (1, 1), 1, False),
        ("nhwc_1x1_c129", NHWC, (3, 57, 59, 129), (1, 1, 129, 33), (1, 1), "VALID", (1, 1), (1, 1), 1, True),
        ("nhwc_1x1_c3_b1", NHWC, (1, 513, 511, 3), (1, 1, 3, 8), (1, 1), "VALID", (1, 1), (1, 1), 1, False),
        ("nhwc_1x1_s2", NHWC, (7, 57, 59, 32), (1, 1, 32, 64), (2, 2), "VALID", (1, 1), (1, 1), 1, False),
        ("nhwc_lhs_dilated", NHWC, (3, 33, 31, 16), (4, 4, 16, 8), (1, 1), ((2, 2), (2, 2)), (1, 1), (2, 2), 1, True),
        ("nhwc_stride_and_dilation", NHWC, (5, 67, 65, 8), (3, 3, 8, 8), (3, 2), "SAME", (2, 3), (1, 1), 1, False),
        ("nhwc_lhs_and_rhs_dilation", NHWC, (3, 17, 19, 8), (3, 3, 8, 8), (1, 1), ((1, 2), (2, 1)), (2, 1), (3, 2), 1, False),
        ("nchw_3x3_same_b1", NCHW, (1, 16, 67, 65), (32, 16, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), 1, True),
        ("nchw_3x3_s2_b7", NCHW, (7, 8, 65, 63), (16, 8, 3, 3), (2, 2), "SAME", (1, 1), (1, 1), 1, False),
        ("nchw_grouped2_dil", NCHW, (3, 16, 41, 43), (16, 8, 3, 3), (1, 1), "VALID", (2, 3), (1, 1), 2, True),
        ("nchw_depthwise", NCHW, (7, 24, 33, 35), (24, 1, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), 24, False),
        ("nchw_1x1_b1", NCHW, (1, 64, 97, 99), (48, 64, 1, 1), (1, 1), "VALID", (1, 1), (1, 1), 1, False),
        ("nchw_thin_row", NCHW, (1, 1, 3, 4099), (4, 1, 3, 5), (1, 1), "SAME", (1, 1), (1, 1), 1, True),
        ("nhwc_wide_row_95", NHWC, (1, 5, 95, 4), (3, 3, 4, 4), (1, 1), "SAME", (1, 1), (1, 1), 1, False),
        ("nhwc_wide_row_97", NHWC, (1, 5, 97, 4), (3, 3, 4, 4), (1, 1), "SAME", (1, 1), (1, 1), 1, False),
        ("nhwc_big_kernel_17", NHWC, (2, 40, 41, 4), (17, 17, 4, 4), (1, 1), "SAME", (1, 1), (1, 1), 1, True),
        ("nhwc_out1x1", NHWC, (7, 9, 9, 16), (9, 9, 16, 32), (1, 1), "VALID", (1, 1), (1, 1), 1, False),
    ]
    for name, dn, xs, ks, st, pad, rd, ld, g, grad in conv_cases:
        def fwd(x, k, dn=dn, st=st, pad=pad, rd=rd, ld=ld, g=g):
            return lax.conv_general_dilated(x, k, st, pad, lhs_dilation=ld, rhs_dilation=rd, dimension_numbers=dn, feature_group_count=g)
        cin = int(np.prod(ks)) // (ks[3] if dn == NHWC else ks[0])
        mk = lambda R, xs=xs, ks=ks: (R.standard_normal(xs).astype(f32), R.standard_normal(ks).astype(f32))
        L(f"conv/{name}", fwd, mk, rtol=1e-4, atol=float(3e-5 * np.sqrt(cin)))
        if grad:
            L(f"convgrad/{name}", jax.grad(lambda x, k, fwd=fwd: jnp.sum(jnp.sin(fwd(x, k))), argnums=(0, 1)), mk,
              rtol=2e-4, atol=float(2e-3 * max(1.0, np.sqrt(cin) / 4)))
    L("conv/1d_long", lambda x, k: lax.conv_general_dilated(x, k, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")),
      lambda R: (R.standard_normal((3, 100003, 4)).astype(f32), R.standard_normal((9, 4, 8)).astype(f32)), rtol=1e-4, atol=1e-4)
    L("conv/1d_causal_dil", lambda x, k: lax.conv_general_dilated(x, k, (1,), ((16, 0),), rhs_dilation=(8,), dimension_numbers=("NCW", "OIW", "NCW")),
      lambda R: (R.standard_normal((2, 16, 8193)).astype(f32), R.standard_normal((16, 16, 3)).astype(f32)), rtol=1e-4, atol=1e-4)
    L("conv/3d", lambda x, k: lax.conv_general_dilated(x, k, (1, 2, 1), "SAME", dimension_numbers=("NDHWC", "DHWIO", "NDHWC")),
      lambda R: (R.standard_normal((2, 9, 33, 31, 8)).astype(f32), R.standard_normal((3, 3, 3, 8, 16)).astype(f32)), rtol=1e-4, atol=1e-4)
    L("conv/transpose_kernel", lambda x, k: lax.conv_transpose(x, k, (2, 2), "SAME", dimension_numbers=NHWC, transpose_kernel=True),
      lambda R: (R.standard_normal((3, 33, 35, 16)).astype(f32), R.standard_normal((3, 3, 8, 16)).astype(f32)), rtol=1e-4, atol=1e-4)
    L("conv/mixed_layout", lambda x, k: lax.conv_general_dilated(x, k, (2, 1), "SAME", dimension_numbers=("NCHW", "HWIO", "NHWC")),
      lambda R: (R.standard_normal((3, 8, 33, 35)).astype(f32), R.standard_normal((3, 3, 8, 16)).astype(f32)), rtol=1e-4, atol=1e-4)
    L("conv/batch_group", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "VALID", dimension_numbers=NHWC, batch_group_count=4),
      lambda R: (R.standard_normal((8, 17, 19, 8)).astype(f32), R.standard_normal((3, 3, 8, 16)).astype(f32)), rtol=1e-4, atol=1e-4)
    L("conv/narrow_types", lambda x, k, y, q, u, v: (lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=NHWC),
                                                     lax.conv_general_dilated(y, q, (2, 2), "SAME", dimension_numbers=NCHW),
                                                     lax.conv_general_dilated(u, v, (1, 1), "SAME", dimension_numbers=NHWC, preferred_element_type=f32)),
      lambda R: (R.standard_normal((3, 33, 35, 16)).astype(bf16), R.standard_normal((3, 3, 16, 32)).astype(bf16),
                 R.standard_normal((3, 16, 33, 35)).astype(f16), R.standard_normal((32, 16, 3, 3)).astype(f16),
                 R.standard_normal((3, 33, 35, 16)).astype(bf16), R.standard_normal((3, 3, 16, 32)).astype(bf16)), rtol=3e-2, atol=0.15)
    L("conv/fused_bias_relu", lambda x, k, b: jax.nn.relu(lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=NHWC) + b),
      lambda R: (R.standard_normal((7, 33, 35, 16)).astype(f32), R.standard_normal((3, 3, 16, 32)).astype(f32), R.standard_normal(32).astype(f32)),
      rtol=1e-4, atol=1e-4)
    if x64:
        L("conv/f64", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=NHWC),
          lambda R: (R.standard_normal((3, 33, 35, 8)), R.standard_normal((3, 3, 8, 16))), x64=True, rtol=1e-10, atol=1e-10)


# =========================================================================
# POOLING through reduce_window, and the gradients (select-and-scatter)
# =========================================================================
def _pooling(L, normal, sprinkle, sum_tol, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    f32, bf16 = np.float32, jnp.bfloat16

    def maxpool(x, w, s, pad):
        return lax.reduce_window(x, -jnp.inf, lax.max, w, s, pad)

    def avgpool(x, w, s, pad):
        return lax.reduce_window(x, 0.0, lax.add, w, s, pad) / np.prod(w)

    pools = [
        ("nhwc_3x3s2_same", (7, 113, 97, 5), (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
        ("nhwc_2x2s2_valid", (7, 64, 66, 32), (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
        ("nchw_3x3s1_same", (1, 3, 257, 259), (1, 1, 3, 3), (1, 1, 1, 1), "SAME"),
        ("nchw_wide_row", (2, 2, 5, 1001), (1, 1, 2, 5), (1, 1, 1, 3), "VALID"),
        ("nchw_global", (7, 16, 33, 35), (1, 1, 33, 35), (1, 1, 1, 1), "VALID"),
        ("nhwc_overlap_5x5s1", (3, 65, 67, 16), (1, 5, 5, 1), (1, 1, 1, 1), "SAME"),
        ("1d_long_w7s3", (3, 100003), (1, 7), (1, 3), "SAME"),
        # one-wide windows that stride or pad, windows on the batch dimension
        ("w1_stride2_h", (7, 65, 67, 8), (1, 1, 3, 1), (1, 2, 2, 1), "VALID"),
        ("w1_stride3_c", (7, 33, 35, 9), (1, 3, 3, 1), (1, 2, 2, 3), "VALID"),
        ("w1_padded_c", (7, 33, 35, 8), (1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), (1, 1), (1, 1), (2, 1))),
        ("w1_padded_n_nchw", (7, 8, 33, 35), (1, 1, 3, 3), (1, 1, 2, 2), ((1, 0), (0, 0), (1, 1), (1, 1))),
        ("window_on_batch", (9, 8, 17, 65), (3, 1, 1, 3), (2, 1, 1, 2), "SAME"),
    ]
    for name, xs, w, s, pad in pools:
        mk = lambda R, xs=xs: (R.standard_normal(xs).astype(f32),)
        mkties = lambda R, xs=xs: (R.randint(-2, 3, xs).astype(f32),)
        L(f"pool/{name}", lambda x, t, w=w, s=s, pad=pad: (
            maxpool(x, w, s, pad), avgpool(x, w, s, pad), jax.grad(lambda x: jnp.sum(jnp.sin(maxpool(x, w, s, pad))))(x),
            jax.grad(lambda x: jnp.sum(jnp.sin(avgpool(x, w, s, pad))))(x),
            jax.grad(lambda t: jnp.sum(maxpool(t, w, s, pad) * jnp.arange(1.0, 1.0 + maxpool(t, w, s, pad).shape[-1])))(t)),
          lambda R, xs=xs: (R.standard_normal(xs).astype(f32), R.randint(-2, 3, xs).astype(f32)), rtol=1e-5, atol=1e-5)
    L("pool/nan", lambda x: maxpool(x, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), lambda R: (sprinkle(R.standard_normal((7, 65, 67, 8)).astype(f32), R, 1e-3),))
    L("poolgrad/nan", jax.grad(lambda x: jnp.sum(jnp.nan_to_num(maxpool(x, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")))),
      lambda R: (sprinkle(R.standard_normal((7, 65, 67, 8)).astype(f32), R, 1e-3, values=(np.nan, -0.0, 0.0)),))
    L("pool/other_types", lambda x, a, b: (maxpool(x, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                                           lax.reduce_window(a, np.int32(-2**31), lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                                           lax.reduce_window(b, False, lax.bitwise_or, (3, 3), (1, 1), "SAME")),
      lambda R: (R.standard_normal((7, 65, 67, 16)).astype(bf16), R.randint(-10**6, 10**6, (7, 65, 67, 16)).astype(np.int32), R.rand(1025, 1023) < 0.01))
    L("pool/dilations", lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "VALID",
                                                    window_dilation=(1, 2, 2, 1), base_dilation=(1, 2, 1, 1)), normal(3, 33, 35, 8))
    L("pool/argmax_pool", lambda x: lax.reduce_window((x, lax.broadcasted_iota(np.int32, x.shape, 2)), (-jnp.inf, np.int32(0)),
                                                        lambda a, b: (jnp.maximum(a[0], b[0]), jnp.where(a[0] >= b[0], a[1], b[1])),
                                                        (1, 1, 3, 3), (1, 1, 2, 2), "SAME"),
      lambda R: (R.randint(-2, 3, (3, 8, 65, 67)).astype(f32),))
    L("pool/odd_windows", lambda x: (lax.reduce_window(x, 5.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                                     lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 3, 5, 1), ((0, 0), (1, 2), (3, 0), (0, 0))),
                                     lax.reduce_window(x, jnp.inf, lax.min, (1, 3, 3, 1), (1, 1, 1, 1), ((0, 0), (-2, 1), (1, -3), (0, 0))),
                                     lax.reduce_window(jnp.abs(x) * 0.01 + 0.99, 1.0, lax.mul, (1, 4, 4, 1), (1, 2, 2, 1), "VALID")),
      normal(7, 65, 67, 8), rtol=1e-5, atol=1e-5)
    L("poolgrad/min_pool", jax.grad(lambda x: jnp.sum(-lax.reduce_window(-x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") * 1.5)),
      lambda R: (R.randint(-2, 3, (7, 65, 67, 8)).astype(f32),))
    L("poolgrad/max_3d", jax.grad(lambda x: jnp.sum(jnp.sin(lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 3, 3, 1), (1, 2, 2, 2, 1), "SAME")))),
      normal(2, 9, 33, 31, 8), rtol=1e-5, atol=1e-6)
    L("poolgrad/max_bf16", jax.grad(lambda x: jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME").astype(f32) ** 2)),
      lambda R: (R.randint(-3, 4, (7, 65, 67, 8)).astype(bf16),))
    L("pool/bf16_sum_window", lambda x: lax.reduce_window(x, jnp.array(0, bf16), lax.add, (7, 4, 7), (3, 2, 1), "VALID"),
      lambda R: ((R.standard_normal((129, 33, 64)) * 3).astype(bf16),), rtol=0, atol=0,
      note="XLA departure: XLA rounds the window's partial sums in bf16 (off by up to 6 here); Anvil's is the exact sum rounded once")


# =========================================================================
# GATHER / SCATTER with many (duplicate, out-of-bounds) indices
# =========================================================================
def _indexing(L, normal, sprinkle, sum_tol, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    f32, bf16 = np.float32, jnp.bfloat16
    NI = 100003
    idx = lambda R, n=1009: R.randint(0, n, NI).astype(np.int32)
    ST = dict(rtol=1e-5, atol=1e-4)
    L("sc/add_dup", lambda x, i, u, a, v: (x.at[i].add(u), a.at[i].add(v)),
      lambda R: (R.standard_normal(1009).astype(f32), idx(R), R.standard_normal(NI).astype(f32), R.randint(-100, 100, 1009).astype(np.int32),
                 R.randint(-2**30, 2**30, NI).astype(np.int32)), **ST)
    L("sc/set_unique_and_dup", lambda x, i, u, y, j: (x.at[i].set(u), y.at[j].set(u)),
      lambda R: (R.standard_normal(2**20 + 3).astype(f32), R.permutation(2**20 + 3)[:NI].astype(np.int32), R.standard_normal(NI).astype(f32),
                 R.standard_normal(1009).astype(f32), idx(R)))
    L("sc/max_min_mul_dup", lambda x, i, u, w: (x.at[i].max(u), x.at[i].min(u), x.at[i].multiply(w)),
      lambda R: (R.standard_normal(1009).astype(f32), idx(R), sprinkle(R.standard_normal(NI).astype(f32), R, 1e-4), R.uniform(0.99, 1.01, NI).astype(f32)),
      rtol=1e-4, atol=1e-4)
    L("sc/add_rows", lambda x, i, u: x.at[i].add(u),
      lambda R: (R.standard_normal((4097, 17)).astype(f32), R.randint(0, 4097, NI).astype(np.int32), R.standard_normal((NI, 17)).astype(f32)), **ST)
    L("sc/oob_modes", lambda x, i, u: (x.at[i].add(u, mode="drop"), x.at[i].add(u, mode="clip")),
      lambda R: (R.standard_normal(1009).astype(f32), R.randint(-1100, 1100, NI).astype(np.int32), R.standard_normal(NI).astype(f32)), **ST)
    L("sc/add_2d_pairs", lambda x, i, j, u: x.at[i, j].add(u),
      lambda R: (R.standard_normal((513, 257)).astype(f32), R.randint(0, 513, NI).astype(np.int32), R.randint(0, 257, NI).astype(np.int32),
                 R.standard_normal(NI).astype(f32)), **ST)
    L("sc/add_cols", lambda x, i, u: x.at[:, i].add(u),
      lambda R: (R.standard_normal((17, 4097)).astype(f32), R.randint(0, 4097, 10007).astype(np.int32), R.standard_normal((17, 10007)).astype(f32)), **ST)
    L("sc/segments", lambda d, s, e, t: (jax.ops.segment_sum(d, s, num_segments=1001), jax.ops.segment_max(e, t, num_segments=1001, indices_are_sorted=True)),
      lambda R: (R.standard_normal((NI, 9)).astype(f32), R.randint(0, 1001, NI).astype(np.int32), R.standard_normal(NI).astype(f32),
                 np.sort(R.randint(0, 1001, NI)).astype(np.int32)), **ST)
    L("sc/histograms", lambda i, w: (jnp.bincount(i, length=4099), jnp.zeros(4099, f32).at[i].add(w)),
      lambda R: (R.randint(0, 4099, 10**6).astype(np.int32), R.uniform(0, 1, 10**6).astype(f32)), rtol=1e-5, atol=1e-3)
    L("sc/narrow_types", lambda x, i, u, b, j, z, k, v: (x.at[i].add(u), b.at[j].set(True), z.at[k].add(v)),
      lambda R: (R.standard_normal(1009).astype(bf16), idx(R), R.standard_normal(NI).astype(bf16), np.zeros(2**20 + 3, bool),
                 R.randint(0, 2**20 + 3, NI).astype(np.int32), np.zeros(256, f32), R.randint(0, 256, NI).astype(np.uint8), R.standard_normal(NI).astype(f32)),
      rtol=5e-2, atol=0.5)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
    L("sc/partial_windows", lambda x, i, u: (lax.scatter_add(x, i, u, dn, mode=lax.GatherScatterMode.FILL_OR_DROP),
                                             lax.scatter_add(x, i, u, dn, mode=lax.GatherScatterMode.CLIP)),
      lambda R: (np.zeros(1009, f32), R.randint(995, 1009, (2001, 1)).astype(np.int32), np.ones((2001, 5), f32)))
    L("sc/vmap_add", jax.vmap(lambda x, i, u: x.at[i].add(u)),
      lambda R: (R.standard_normal((64, 1009)).astype(f32), R.randint(0, 1009, (64, 10007)).astype(np.int32), R.standard_normal((64, 10007)).astype(f32)),
      **ST)
    L("sc/sorted_unique_hint", lambda x, i, u: x.at[i].add(u, indices_are_sorted=True, unique_indices=True),
      lambda R: (R.standard_normal(2**20 + 3).astype(f32), np.sort(R.permutation(2**20 + 3)[:NI]).astype(np.int32), R.standard_normal(NI).astype(f32)))
    L("sc/rows_set_min_i32", lambda x, i, u, a, j, v: (x.at[i, :].set(u), a.at[j].min(v)),
      lambda R: (R.standard_normal((4097, 129)).astype(f32), R.permutation(4097)[:1001].astype(np.int32), R.standard_normal((1001, 129)).astype(f32),
                 R.randint(-100, 100, 1009).astype(np.int32), R.randint(-1009, 1009, NI).astype(np.int32), R.randint(-10**6, 10**6, NI).astype(np.int32)))

    L("ga/rows", lambda x, i, y: (x[i], y[i % 4097]),
      lambda R: (R.standard_normal((4097, 64)).astype(f32), R.randint(-4097, 4097, NI).astype(np.int32), R.randint(-128, 128, (4097, 63)).astype(np.int8)))
    L("ga/elements_1M", lambda x, i: x[i], lambda R: (R.standard_normal(2**20 + 3).astype(f32), R.randint(0, 2**20 + 3, 2**20).astype(np.int32)))
    L("ga/oob_clip_fill", lambda x, i: (jnp.take(x, i, mode="clip"), jnp.take(x, i, mode="fill", fill_value=-7.0)),
      lambda R: (R.standard_normal(1009).astype(f32), R.randint(-2000, 2000, NI).astype(np.int32)))
    gdn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
    L("ga/partial_windows", lambda x, i: (lax.gather(x, i, gdn, (5,), mode=lax.GatherScatterMode.FILL_OR_DROP, fill_value=-1.0),
                                          lax.gather(x, i, gdn, (5,), mode=lax.GatherScatterMode.CLIP)),
      lambda R: (R.standard_normal(1009).astype(f32), R.randint(995, 1012, (2001, 1)).astype(np.int32)))
    L("ga/cols_pairs", lambda x, i, y, j, k: (x[:, i], y[j, k]),
      lambda R: (R.standard_normal((65, 4097)).astype(f32), R.randint(0, 4097, 10007).astype(np.int32), R.standard_normal((1025, 1023)).astype(f32),
                 R.randint(0, 1025, NI).astype(np.int32), R.randint(0, 1023, NI).astype(np.int32)))
    L("ga/take_along_axis", lambda x, i: (jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1), jnp.take_along_axis(x, i, axis=0)),
      lambda R: (R.standard_normal((1001, 1003)).astype(f32), R.randint(0, 1001, (517, 1003)).astype(np.int32)))
    L("ga/embedding_grad", jax.grad(lambda e, i: jnp.sum(jnp.sin(e[i]))),
      lambda R: (R.standard_normal((5003, 33)).astype(f32), R.randint(0, 5003, (257, 129)).astype(np.int32)), **ST)
    L("ga/vmapped", lambda x, s, y, i: (jax.vmap(lambda x, s: lax.dynamic_slice(x, (s,), (129,)))(x, s), jax.vmap(lambda y, i: y[i])(y, i)),
      lambda R: (R.standard_normal((4097, 1023)).astype(f32), R.randint(-100, 1100, 4097).astype(np.int32),
                 R.standard_normal((64, 1009)).astype(f32), R.randint(-1009, 1009, (64, 10007)).astype(np.int32)))


# =========================================================================
# SORTS (radix from kRadixSortMinLength, merges, keyed comparators), TOP-K
# =========================================================================
def _sorts(L, normal, sprinkle, sum_tol, x64):
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    f32, bf16, f16 = np.float32, jnp.bfloat16, np.float16
    sd = _special_sort_data

    for n in (511, 512, 513, 100003, 10**6):
        L(f"sort/{n}", lambda x, y, a: (jnp.sort(x), jnp.sort(y), jnp.argsort(y, stable=True), jnp.sort(a), jnp.argsort(a, stable=True)),
          lambda R, n=n: (R.standard_normal(n).astype(f32), sd(R, n), R.randint(-2**31, 2**31 - 1, n).astype(np.int32)))
    L("sort/f32_nozero_nonan_1M", jnp.sort, lambda R: (R.randint(-1000, 1000, 10**6).astype(f32) + 0.5,))
    L("sort/descending", lambda x, a: (jnp.sort(x, descending=True), jnp.argsort(x, descending=True, stable=True),
                                       jnp.argsort(a, descending=True, stable=True), jnp.sort(a, descending=True)),
      lambda R: (sd(R, 100003), R.randint(-5, 5, 100003).astype(np.int32)))
    L("sort/rows_axes", lambda x: (jnp.sort(x, axis=1), jnp.argsort(x, axis=1), jnp.sort(x, axis=0), jnp.argsort(x, axis=0)),
      lambda R: (sd(R, (1001, 513)),))
    L("sort/3d_axis1", lambda x: jnp.sort(x, axis=1), lambda R: (sd(R, (7, 1025, 33)),))
    L("sort/short_rows", lambda x, y, z: (jnp.sort(x, axis=1), jnp.argsort(x, axis=1), jnp.sort(y, axis=-1), jnp.argsort(y, axis=-1),
                                          jnp.sort(z, axis=0), jnp.argsort(z, axis=0, stable=True)),
      lambda R: (sd(R, (100003, 5)), R.randint(-2, 2, (2**19 + 1, 2)).astype(f32), R.randint(-20, 20, (100003, 3)).astype(f32)))
    L("sort/narrow_floats", lambda x, y: (jnp.sort(x), jnp.argsort(x), jnp.sort(y), jnp.argsort(y)),
      lambda R: (sd(R, 100003).astype(bf16), sd(R, 100003).astype(f16)))
    L("sort/ints", lambda u, i, b: (jnp.sort(u), jnp.argsort(u), jnp.sort(i), jnp.argsort(i), jnp.sort(b), jnp.argsort(b)),
      lambda R: (R.randint(0, 2**32, 100003, dtype=np.uint64).astype(np.uint32), R.randint(-128, 128, 100003).astype(np.int8), R.rand(100003) < 0.5))
    L("sort/neg_zero_only", lambda x: (jnp.sort(x), jnp.argsort(x, stable=True)), lambda R: (np.where(R.rand(100003) < 0.5, -0.0, 0.0).astype(f32),))
    L("sort/key_val", lambda k, v, ki, vi: (lax.sort_key_val(k, v), lax.sort_key_val(ki, vi)),
      lambda R: (sd(R, 100003), R.standard_normal(100003).astype(f32), R.randint(-3, 3, (65, 4099)).astype(np.int32), R.standard_normal((65, 4099)).astype(f32)))
    L("sort/multi_operand", lambda a, b, c, d, e, f: (lax.sort((a, b, c), num_keys=2), lax.sort((d, e, f), num_keys=3)),
      lambda R: (R.randint(0, 10, 100003).astype(np.int32), sd(R, 100003), np.arange(100003, dtype=np.int32),
                 R.randint(0, 3, 100003).astype(np.uint32), R.randint(0, 3, 100003).astype(np.int32), R.randint(-3, 3, 100003).astype(f32)))
    L("sort/lexsort_searchsorted", lambda a, b, s, q: (jnp.lexsort((a, b)), jnp.searchsorted(jnp.sort(s), q)),
      lambda R: (R.randint(0, 100, 100003).astype(np.int32), R.randint(0, 100, 100003).astype(f32), sd(R, 100003), sd(R, 100003)))
    L("sort/median_quantile", lambda x: (jnp.median(x, axis=1), jnp.quantile(x, 0.3, axis=0)), normal(1001, 1025), rtol=1e-6)
    if x64:
        L("sort/64bit", lambda x, a: (jnp.sort(x), jnp.argsort(x), jnp.sort(a), jnp.argsort(a)),
          lambda R: (sd(R, 100003).astype(np.float64), R.randint(-2**62, 2**62, 100003).astype(np.int64)), x64=True)

    for k in (1, 5, 100):
        L(f"topk/k{k}", lambda x, y, a, k=k: (lax.top_k(x, k), lax.top_k(y, k), lax.top_k(a, k)),
          lambda R: (R.standard_normal((257, 10007)).astype(f32), sd(R, (257, 10007)), R.randint(-50, 50, (257, 10007)).astype(np.int32)))
    L("topk/bf16_u32", lambda x, u: (lax.top_k(x, 5), lax.top_k(u, 5)),
      lambda R: (sd(R, (257, 10007)).astype(bf16), R.randint(0, 2**32, (65, 10007), dtype=np.uint64).astype(np.uint32)))
    L("topk/long_rows", lambda x, y: (lax.top_k(x, 100), lax.top_k(y, 100)), lambda R: (R.standard_normal((3, 10**6)).astype(f32), sd(R, 2**20 + 3)))
    L("topk/k_eq_n_and_big_k", lambda x, y: (lax.top_k(x, 1025), lax.top_k(y, 257)),
      lambda R: (sd(R, (65, 1025)), R.randint(-2, 3, (129, 10007)).astype(f32)))
    L("topk/3d_and_negated", lambda x, y: (lax.top_k(x, 7), lax.top_k(-y, 5)), lambda R: (sd(R, (7, 33, 4099)), sd(R, (257, 10007))))
    if x64:
        L("topk/f64", lambda x: lax.top_k(x, 5), lambda R: (sd(R, (65, 10007)).astype(np.float64),), x64=True)


# =========================================================================
# WHERE / SELECT and data movement: transposes, slices, pads, concats,
# dynamic slices; intermediates an in-place kernel might overwrite
# =========================================================================
def _movement(L, normal, sprinkle, sum_tol, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    f32, bf16 = np.float32, jnp.bfloat16

    for shp in [(1023, 1025), (4097, 3), (3, 4097), (2048, 2048), (65537, 2), (63, 65), (64, 1031)]:
        tag = "x".join(map(str, shp))
        L(f"tr/2d_{tag}", lambda x: (x.T, x.T * 2 + 1), normal(*shp))
    L("tr/3d_perms", lambda x, y: tuple(jnp.transpose(x, p) for p in [(0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]) + (jnp.transpose(x, (2, 0, 1)) + y,),
      lambda R: (R.standard_normal((65, 129, 257)).astype(f32), R.standard_normal((257, 65, 129)).astype(f32)))
    L("tr/3d_last_run_32_65", lambda x, y: (x.transpose(0, 2, 1) * 3, y.transpose(0, 2, 1) * 3),
      lambda R: (R.standard_normal((64, 32, 1024)).astype(f32), R.standard_normal((64, 65, 1024)).astype(f32)))
    L("tr/4d_perms", lambda x: tuple(jnp.transpose(x, p) for p in [(0, 2, 3, 1), (0, 3, 1, 2), (3, 2, 1, 0), (1, 0, 3, 2)]), normal(17, 33, 65, 9))
    L("tr/narrow_types", lambda x, a, b: (x.T, a.T, b.transpose(2, 0, 1)),
      lambda R: (R.standard_normal((1023, 1025)).astype(bf16), R.randint(-128, 128, (4097, 513)).astype(np.int8),
                 R.randint(0, 2, (129, 65, 257)).astype(bool)))
    L("tr/slice_rev_strided", lambda x: (x[:-1:2, ::-3] * 2 + x[1::2, 1::3], x[::-1], x[:, ::-1], x[::-1, ::-1].T), normal(4097, 1025))
    if x64:
        L("tr/f64", lambda x: x.T + 1, normal(1023, 1025, dtype=np.float64), x64=True)

    L("mv/where_big", lambda m, x, y: (jnp.where(m, x, y), jnp.where(m, x, 0.0), jnp.where(m[:, :1], x, y[0])),
      lambda R: (R.rand(4097, 1023) < 0.5, R.standard_normal((4097, 1023)).astype(f32), R.standard_normal((4097, 1023)).astype(f32)))
    L("mv/select_n_clamp", lambda i, a, b, c: (lax.select_n(i, a, b, c), lax.clamp(f32(-0.5), a, f32(0.5)), jnp.clip(b, -0.3, 0.7)),
      lambda R: (R.randint(0, 3, 2**20 + 3).astype(np.int32), sprinkle(R.standard_normal(2**20 + 3).astype(f32), R, 1e-3),
                 R.standard_normal(2**20 + 3).astype(f32), R.standard_normal(2**20 + 3).astype(f32)))
    L("mv/concats", lambda a, b, c, d, e, f, g, p: (jnp.concatenate([a, b, c], axis=0), jnp.concatenate([d, e * 2, f], axis=1), jnp.concatenate([g, p], axis=1)),
      lambda R: (R.standard_normal((1023, 1025)).astype(f32), R.standard_normal((1, 1025)).astype(f32), R.standard_normal((3001, 1025)).astype(f32),
                 R.standard_normal((1025, 1023)).astype(f32), R.standard_normal((1025, 1)).astype(f32), R.standard_normal((1025, 3001)).astype(f32),
                 R.randint(-128, 128, (33, 1025, 17)).astype(np.int8), R.randint(-128, 128, (33, 7, 17)).astype(np.int8)))
    L("mv/pads", lambda x: (jnp.pad(x, ((3, 5), (1, 1023))), lax.pad(x, 1.5, ((-3, 2, 1), (5, -7, 0))), jnp.pad(x, ((17, 3), (2, 65)), mode="edge"),
                            jnp.pad(x, ((5, 7), (9, 1)), mode="reflect")), normal(1025, 1023))
    L("mv/slices_dynamic", lambda x, u, i, j: (x[1:-1:3, 7:1000:7], x[2049:, :5], lax.slice(x, (13, 17), (4000, 1020), (5, 2)),
                                               lax.dynamic_slice(x, (i, j), (1025, 513)), lax.dynamic_slice(x, (j, i), (4000, 1000)),
                                               lax.dynamic_update_slice(x, u, (i, j)), lax.dynamic_update_slice(x, u * 2, (j, i))),
      lambda R: (R.standard_normal((4097, 1023)).astype(f32), R.standard_normal((1025, 513)).astype(f32), np.int32(3500), np.int32(-7)))
    L("mv/roll_tile_repeat", lambda x: (jnp.roll(x, (1234, -17), (0, 1)), jnp.tile(x[:65], (3, 2)), jnp.repeat(x[:, :33], 3, axis=0)), normal(4097, 1023))
    L("mv/reshape_transpose_chain", lambda x: x.reshape(17, 241, 33, 31).transpose(2, 0, 3, 1).reshape(33, -1) + 1, normal(17 * 241, 33 * 31))
    L("mv/iotas", lambda: (lax.broadcasted_iota(np.int32, (4097, 1023), 1), jnp.arange(3 * 2**20 + 7, dtype=f32) * 0.5,
                           lax.broadcasted_iota(np.uint32, (1023, 4097), 0), jnp.arange(100003).astype(bf16), jnp.arange(70001).astype(np.float16)),
      lambda R: ())
    L("mv/eye_tri", lambda x: (jnp.tril(x, -3), jnp.triu(x, 100), x * jnp.eye(4097, 1023, 5)), normal(4097, 1023))
    L("mv/one_hot", lambda i, w, j: (jax.nn.one_hot(i, 5003) @ w, jax.nn.one_hot(j, 50000, dtype=bf16)),
      lambda R: (R.randint(-1, 5004, 2049).astype(np.int32), R.standard_normal((5003, 8)).astype(f32), R.randint(0, 50000, 257).astype(np.int32)),
      rtol=1e-6, atol=1e-6)
    L("mv/rev_bf16_bitcast", lambda x, y: (x[::-1, ::-1], jnp.flip(x, 0), lax.bitcast_convert_type(y, np.int32) >> 3,
                                           lax.bitcast_convert_type(y.astype(bf16), np.uint16)),
      lambda R: (R.standard_normal((4097, 1023)).astype(bf16), R.standard_normal(2**20 + 3).astype(f32)))
    L("mv/many_outputs", lambda x: tuple(x[i::17] * i for i in range(17)), normal(100003, 9))

    # intermediates read after an op that could have been done in place
    L("alias/transpose_of_temp", lambda x: (lambda a: (a.T * 3 + 1, a.T + a, a.T @ a[:, :3]))(x * 2), normal(2048, 2048), rtol=1e-5, atol=1e-3)
    L("alias/reverse_of_temp", lambda x: (lambda a: (a[::-1] + a, a[:, ::-1] - a, a[1:] + a[:-1]))(jnp.sin(x)), normal(4097, 1023), rtol=1e-6, atol=1e-6)
    L("alias/update_keep_old", lambda x, u, i, v: (lambda a: (lax.dynamic_update_slice(a, u, (100, 7)), jnp.sum(a, axis=0), a.at[i].add(v), a * 1))(x * 2),
      lambda R: (R.standard_normal((4097, 129)).astype(f32), R.standard_normal((33, 65)).astype(f32), R.randint(0, 4097, 10007).astype(np.int32),
                 R.standard_normal((10007, 129)).astype(f32)), rtol=1e-5, atol=1e-3)
    L("alias/sort_keep_old", lambda x: (lambda a: (jnp.sort(a, axis=1), a[:, :5], jnp.argsort(a, axis=1)))(x * 2), normal(1025, 1023))
    L("alias/concat_pad_self", lambda x: (lambda a: (jnp.concatenate([a, a[::-1], a.T]), lax.pad(a, 0.5, ((1, -2, 1), (-3, 4, 2))),
                                                     jnp.concatenate([a[7:], a[:7]]) * a))(x + 1), normal(1023, 1023))
    L("alias/gather_of_temp", lambda x, i: (lambda a: a[i] + a[:i.shape[0]])(x * 3),
      lambda R: (R.standard_normal((4097, 255)).astype(f32), R.randint(0, 4097, 4000).astype(np.int32)))
    L("alias/reshaped_views", lambda x: (lambda a: (a.reshape(1023, 4097).T.reshape(4097, 1023) + a))(x * 2), normal(4097, 1023))
    L("donate/inplace_update", lambda x, u: x.at[100:200].set(u) * 2,
      lambda R: (R.standard_normal((4097, 1023)).astype(f32), R.standard_normal((100, 1023)).astype(f32)), donate=(0,))
    L("donate/swap_outputs", lambda x, y: (y + 1, x * 2),
      lambda R: (R.standard_normal(3 * 2**20 + 7).astype(f32), R.standard_normal(3 * 2**20 + 7).astype(f32)), donate=(0, 1))
    L("donate/transpose_self", lambda x: x.T.reshape(x.shape) + x, normal(2048, 2048), donate=(0,))
    L("donate/reverse_self", lambda x: x[::-1] - x, normal(2**22 + 1), donate=(0,))

    # zero-size dimensions beside big ones
    L("zero/reduces", lambda x, y: (jnp.sum(x, axis=1), jnp.max(x, axis=1, initial=-jnp.inf), jnp.prod(x, axis=1), jnp.any(x > 0, axis=1),
                                    jnp.sum(y, axis=0), jnp.min(y, axis=0, initial=3.0)),
      lambda R: (np.zeros((4097, 0), f32), np.zeros((0, 4097), f32)))
    L("zero/ops", lambda x, i, z: (x.T, jnp.sort(x, axis=0), jnp.cumsum(x, axis=1), x @ np.ones((0, 7), f32), jnp.concatenate([x, x]),
                                   z[i], z.at[i].add(1.0), lax.top_k(np.zeros((0, 4099), f32), 3)),
      lambda R: (np.zeros((4097, 0), f32), np.zeros((0,), np.int32), R.standard_normal((4097, 33)).astype(f32)))


# =========================================================================
# LOOPS and conditionals with big carries
# =========================================================================
def _loops(L, normal, sprinkle, sum_tol, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    f32 = np.float32
    L("loop/scan_big_carry", lambda c0, xs: lax.scan(lambda c, x: (c * 0.9 + jnp.tanh(x), jnp.sum(c)), c0, xs),
      lambda R: (R.standard_normal(2**18 + 3).astype(f32), R.standard_normal((7, 2**18 + 3)).astype(f32)), rtol=1e-4, atol=1e-3)
    L("loop/fori_dus", lambda buf, v: lax.fori_loop(0, 37, lambda t, b: lax.dynamic_update_slice(b, v * t, (t * 100, 0)), buf),
      lambda R: (R.standard_normal((4097, 1023)).astype(f32), R.standard_normal((101, 1023)).astype(f32)))
    L("loop/while_norm", lambda x: lax.while_loop(lambda c: c[1] < 10, lambda c: (c[0] / jnp.linalg.norm(c[0]) * 2 + 0.1, c[1] + 1), (x, 0))[0],
      normal(1025, 1023), rtol=1e-4, atol=1e-6)
    L("loop/scan_matmul", lambda w, xs: lax.scan(lambda c, x: (jnp.tanh(c @ w + x), c[0]), jnp.zeros((129, 257), f32), xs),
      lambda R: (R.standard_normal((257, 257)).astype(f32) * 0.1, R.standard_normal((9, 129, 257)).astype(f32)), rtol=1e-4, atol=1e-4)
    L("loop/swap_carries", lambda x, y: lax.fori_loop(0, 5, lambda i, c: (c[1] + 1.0, c[0] * 2.0), (x, y)),
      lambda R: (R.standard_normal(2**20 + 3).astype(f32), R.standard_normal(2**20 + 3).astype(f32)))
    L("loop/permute_each_iter", lambda x, y, z: (lax.fori_loop(0, 3, lambda i, c: c.T * 1.5 + jnp.float32(1), x),
                                                 lax.fori_loop(0, 5, lambda i, c: c[::-1] - c * 0.5, y),
                                                 lax.fori_loop(0, 7, lambda i, c: jnp.roll(c, 3, axis=0) + c, z),
                                                 lax.fori_loop(0, 3, lambda i, c: jnp.sort(c * -1.0, axis=1), x)),
      lambda R: (R.standard_normal((1025, 1025)).astype(f32), R.standard_normal(2**20 + 3).astype(f32), R.standard_normal((4097, 257)).astype(f32)),
      rtol=1e-5, atol=1e-4)
    L("loop/scan_dus_rows", lambda x: lax.scan(lambda c, i: (lax.dynamic_update_slice(c, c[i][None] * 2, (i + 1, 0)), c[i, 0]), x, jnp.arange(100))[0],
      normal(4097, 129))
    L("loop/while_dynamic_trip", lambda x: lax.while_loop(lambda c: jnp.max(c[0]) < 100.0, lambda c: (c[0] * 1.7 + 0.1, c[1] + 1), (x, 0)),
      lambda R: (R.uniform(0, 1, (1025, 1023)).astype(f32),), rtol=1e-5)
    for p in (True, False):
        L(f"loop/cond_passthrough_{p}", lambda p, x, y: lax.cond(p, lambda a, b: (a, b * 2), lambda a, b: (b, a), x, y),
          lambda R, p=p: (np.bool_(p), R.standard_normal(2**20 + 3).astype(f32), R.standard_normal(2**20 + 3).astype(f32)))
    L("loop/switch_big", lambda i, x: lax.switch(i, [lambda a: a.T, lambda a: a[::-1], lambda a: jnp.sort(a, axis=0)], x),
      lambda R: (np.int32(1), R.standard_normal((1025, 1025)).astype(f32)))
    L("loop/scan_xs_transposed", lambda xs: lax.scan(lambda c, x: (c + x.T, jnp.sum(x, axis=0)), jnp.zeros((257, 129), f32), xs),
      normal(9, 129, 257), rtol=1e-5, atol=1e-4)
    L("loop/map_layernorm", lambda xs: lax.map(lambda x: _layernorm(x, -1), xs), normal(5, 1025, 1023), rtol=1e-4, atol=1e-4)
    L("loop/vmap_of_while", jax.vmap(lambda x: lax.while_loop(lambda c: c[1] < 3 + (x[0] > 0), lambda c: (c[0] * 2 + 1, c[1] + 1), (x, 0))[0]),
      normal(257, 4099))


# =========================================================================
# RANDOM: threefry's bits are fixed, so most compare exactly
# =========================================================================
def _random(L, normal, sprinkle, sum_tol, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    f32 = np.float32
    key = jax.random.key
    N = 10**6 + 3
    L("rng/bits_ints", lambda s: (jax.random.randint(key(s), (N,), -1000, 1000), jax.random.bits(key(s), (N,)),
                                  jax.random.randint(key(s), (100003,), -128, 127, np.int8), jax.random.bits(key(s), (100001,), np.uint8),
                                  jax.random.bits(key(s), (100001,), np.uint16), jax.random.bernoulli(key(s), 0.3, (N,))),
      lambda R: (np.uint32(11),))
    L("rng/uniform", lambda s: (jax.random.uniform(key(s), (1023, 1025)), jax.random.normal(key(s), (1023, 1025), jnp.bfloat16),
                                jax.random.normal(key(s), (100003,), np.float16)), lambda R: (np.uint32(7),), rtol=0, atol=0)
    L("rng/normal_f32", lambda s: (jax.random.normal(key(s), (N,)), jax.random.normal(jax.random.fold_in(jax.random.split(key(s), 1025)[1000], 3), (2**20 + 3,)),
                                   jax.vmap(lambda k: jax.random.normal(k, (1025,)))(jax.random.split(key(s), 1023))),
      lambda R: (np.uint32(7),), rtol=1e-6, atol=1e-7, note="1-ulp differences: XLA contracts the erf_inv polynomial into FMAs")
    L("rng/uniform_range_odd", lambda s: jax.random.uniform(key(s), (3, 333333), minval=-5.0, maxval=7.0), lambda R: (np.uint32(17),), rtol=3e-7, atol=0,
      note="XLA fuses u * (max - min) + min into an FMA (1 ulp apart on 17% of elements); Anvil rounds twice as the HLO says")
    L("rng/categorical_dropout", lambda s, l, x: (jax.random.categorical(key(s), l, axis=-1),
                                                  jnp.where(jax.random.bernoulli(key(s), 0.9, x.shape), x / 0.9, 0)),
      lambda R: (np.uint32(7), R.standard_normal((4099, 257)).astype(f32), R.standard_normal((1025, 4099)).astype(f32)), rtol=1e-6)
    L("rng/permutation_choice_split", lambda s: (jax.random.permutation(key(s), 100003), jax.random.choice(key(s), 100003, (1001,), replace=False),
                                                 jax.random.key_data(jax.random.split(key(s), 100003))), lambda R: (np.uint32(5),))
    L("rng/continuous", lambda s: (jax.random.truncated_normal(key(s), -1.5, 2.0, (100003,)), jax.random.gamma(key(s), 2.5, (10007,)),
                                   jax.random.exponential(key(s), (100003,)), jax.random.gumbel(key(s), (100003,))),
      lambda R: (np.uint32(3),), rtol=1e-5, atol=1e-6)


# =========================================================================
# FFTs of odd and prime lengths, complex ops, triangular solves and factorisations
# =========================================================================
def _fft_linalg(L, normal, sprinkle, sum_tol, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    f32, c64 = np.float32, np.complex64
    cn = lambda R, s: (R.standard_normal(s) + 1j * R.standard_normal(s)).astype(c64)
    for n in (1, 15, 16, 17, 1023, 1025, 4097, 10007, 2**20):
        L(f"fft/1d_{n}", lambda x, y, z, n=n: (jnp.fft.fft(x), jnp.fft.ifft(x), jnp.fft.rfft(y)) + ((jnp.fft.irfft(z, n=n),) if n > 1 else ()),
          lambda R, n=n: (cn(R, n), R.standard_normal(n).astype(f32), cn(R, n // 2 + 1)), rtol=1e-4, atol=float(3e-5 * np.sqrt(n)) + 1e-5)
    # A prime length: KissFFT's generic butterflies took 4.4 s; the CPU
    # plugin's chirp-z transform (chirp_transform.h) 0.05 s.
    L("fft/prime_65537", lambda x: jnp.fft.rfft(x), normal(65537), rtol=1e-4, atol=0.01)
    L("fft/multi_dim", lambda a, b, c, d, e: (jnp.fft.fft2(a), jnp.fft.rfftn(b, axes=(1, 2)), jnp.fft.fft(c, axis=0), jnp.fft.fftn(d),
                                              jnp.fft.irfft2(e, s=(129, 257))),
      lambda R: (cn(R, (1023, 1025)), R.standard_normal((7, 129, 255)).astype(f32), cn(R, (4097, 33)), cn(R, (17, 33, 65)), cn(R, (129, 129))),
      rtol=1e-4, atol=0.03)
    L("fft/conv_via_fft", lambda a, b: jnp.fft.irfft(jnp.fft.rfft(a, 2**18) * jnp.fft.rfft(b, 2**18), 2**18)[:100003 + 1023 - 1],
      lambda R: (R.standard_normal(100003).astype(f32), R.standard_normal(1023).astype(f32)), rtol=1e-4, atol=1e-3)
    if x64:
        L("fft/c128_f64", lambda x, y: (jnp.fft.fft(x), jnp.fft.rfft(y)), lambda R: (R.standard_normal(10007) + 1j * R.standard_normal(10007),
                                                                                     R.standard_normal(65536)), x64=True, rtol=1e-10, atol=1e-8)
    L("cplx/elementwise_sum", lambda x, y: (x * y, jnp.exp(x * 0.1), jnp.abs(x), x / (y + 2), jnp.sum(x.reshape(1024, -1), axis=0)),
      lambda R: (cn(R, 2**20), cn(R, 2**20)), rtol=1e-5, atol=2e-3)

    def tri(R, n):
        return (np.tril(R.standard_normal((n, n))) * 0.1 + np.eye(n) * 2).astype(f32)

    def spd(R, n):
        m = R.standard_normal((n, n))
        return ((m @ m.T) / n + np.eye(n)).astype(f32)
    LA = dict(rtol=1e-3, atol=1e-4)
    L("linalg/trsm_left", lambda a, b1, b15, b16, b17, b257: tuple(jax.scipy.linalg.solve_triangular(a, b, lower=True) for b in (b1, b15, b16, b17, b257)),
      lambda R: (tri(R, 1025),) + tuple(R.standard_normal((1025, k)).astype(f32) for k in (1, 15, 16, 17, 257)), **LA)
    L("linalg/trsm_right_batched", lambda a, b, c, d: (lax.linalg.triangular_solve(a, b, left_side=False, lower=True, transpose_a=True),
                                                       jax.scipy.linalg.solve_triangular(c, d, lower=True)),
      lambda R: (tri(R, 513), R.standard_normal((1025, 513)).astype(f32), np.stack([tri(R, 129) for _ in range(33)]), R.standard_normal((33, 129, 17)).astype(f32)),
      **LA)
    L("linalg/factorisations", lambda a, b, c: (jnp.linalg.cholesky(a), jnp.linalg.solve(b, b[:, :33]), jnp.linalg.inv(c), jnp.linalg.slogdet(b)),
      lambda R: (spd(R, 513), spd(R, 257), spd(R, 129)), **LA)
    L("linalg/qr_lu", lambda a, b: (jnp.abs(jnp.linalg.qr(a)[1]), jax.scipy.linalg.lu_factor(b)[0]),
      lambda R: (R.standard_normal((257, 129)).astype(f32), R.standard_normal((17, 65, 65)).astype(f32)), **LA)


# =========================================================================
# EDGE VALUES through the vector bodies of elementwise kernels (the small
# sweeps' 4x5 arrays reach only the scalar remainders): sizes 2^16 + 17
# =========================================================================
def _edges(L, normal, sprinkle, sum_tol, x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    f32, bf16, f16 = np.float32, jnp.bfloat16, np.float16
    n = 65536 + 17

    def wide_floats(R, n, dtype=f32):
        # a mixture: normal, moderate, huge, tiny (subnormal in f32), and the specials
        parts = [R.standard_normal(n), R.uniform(-1e4, 1e4, n), R.uniform(-1, 1, n) * 1e30, R.uniform(-1, 1, n) * 1e-40, R.uniform(-100, 100, n)]
        a = np.choose(R.randint(0, len(parts), n), parts).astype(dtype)
        return sprinkle(a, R, 0.02, values=(np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5))

    unary = [
        ("trig", (jnp.sin, jnp.cos, jnp.tan, jnp.arcsin, jnp.arctan)),
        ("exp_log", (jnp.exp, jnp.expm1, jnp.log, jnp.log1p, jnp.exp2, jnp.log2)),
        ("hyperbolic", (jnp.tanh, jax.nn.sigmoid, jnp.sinh, jnp.cosh, jnp.arcsinh, jnp.arccosh, jnp.arctanh)),
        ("roots", (jnp.sqrt, lax.rsqrt, jnp.cbrt, jnp.reciprocal, jnp.square)),
        ("special", (lax.erf, lax.erf_inv, lax.lgamma)),
        ("rounding", (jnp.round, jnp.floor, jnp.ceil, jnp.trunc, jnp.sign, jnp.abs, lax.is_finite, lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO))),
    ]
    for name, fns in unary:
        L(f"edge/{name}", lambda x, fns=fns: tuple(f(x) for f in fns), lambda R: (wide_floats(R, n),), rtol=5e-5, atol=1e-6)
    L("edge/narrow_float_math", lambda x, y: tuple(f(x) for f in (jnp.exp, jnp.tanh, jnp.sin, jnp.log, jnp.sqrt, jax.nn.sigmoid)) +
      tuple(f(y).astype(f32) for f in (jnp.exp, jnp.tanh, jnp.sin, jnp.log, jnp.sqrt, jax.nn.sigmoid)),
      lambda R: (wide_floats(R, n, bf16), np.clip(wide_floats(R, n), -6e4, 6e4).astype(f16)), rtol=1e-2, atol=1e-3)
    binary = [("atan2_pow", (jnp.arctan2, jnp.power, jnp.hypot, jnp.logaddexp)),
              ("remainders", (jnp.fmod, lax.rem, jnp.remainder, jnp.floor_divide, jnp.divide)),
              ("order", (jnp.maximum, jnp.minimum, jnp.nextafter, jnp.copysign, lambda a, b: (a == b, a < b, a >= b, a != b)))]
    for name, fns in binary:
        L(f"edge2/{name}", lambda x, y, fns=fns: tuple(f(x, y) for f in fns), lambda R: (wide_floats(R, n), wide_floats(R, n)), rtol=5e-5, atol=1e-6)
    L("edge2/int_exponents", lambda a, b: (jnp.power(a, b), lax.integer_pow(a, 3), lax.integer_pow(a, -2), lax.integer_pow(a, 7)),
      lambda R: (wide_floats(R, n), R.randint(-5, 6, n).astype(f32)), rtol=5e-5, atol=1e-6)
    L("edge/subnormal_arith", lambda a, b: (a * b, a + b, a * 1e-10, a / 1e30, (a * 1e-30).astype(bf16)),
      lambda R: (R.uniform(-1e-36, 1e-36, n).astype(f32), R.uniform(-1e-3, 1e-3, n).astype(f32)), rtol=1e-6, atol=0)

    def ints(R, n, dt):
        info = np.iinfo(dt)
        wide = np.uint64 if dt == np.uint64 else np.int64
        a = R.randint(int(info.min), int(info.max), n, dtype=wide).astype(dt)
        edges = np.array([int(info.min), int(info.min) + 1, -1 if info.min < 0 else 0, 0, 1, 2, int(info.max) - 1, int(info.max)], dtype=dt)
        pos = R.randint(0, n, n // 8)
        a[pos] = edges[R.randint(0, len(edges), n // 8)]
        return a

    idts = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32}
    if x64:
        idts = {"i64": np.int64, "u64": np.uint64}
    for dn, dt in idts.items():
        bits = 8 * np.dtype(dt).itemsize
        signed = np.issubdtype(dt, np.signedinteger)
        L(f"int/{dn}_elementwise", lambda a, b, c, x, dt=dt, signed=signed: (
            lax.div(a, b), lax.rem(a, b), a + b, a - b, a * b, -a, jnp.abs(a) if signed else a, a & b, a | b, a ^ b, ~a, a < b, a >= b, a == b,
            jnp.maximum(a, b), jnp.minimum(a, b), lax.population_count(a), lax.clz(a),
            lax.shift_left(a, c), lax.shift_right_logical(a, c), lax.shift_right_arithmetic(a, c),
            a.astype(f32), a.astype(bf16), a.astype(f16), x.astype(dt), x.astype(bf16).astype(dt), jnp.round(x).astype(dt)),
          lambda R, dt=dt, bits=bits: (ints(R, n, dt), ints(R, n, dt), R.randint(-3, bits + 5, n).astype(dt),
                                       wide_floats(R, n) * np.where(R.rand(n) < 0.5, 1, 1e5).astype(f32)), x64=x64)
        if x64:
            continue
        L(f"int/{dn}_reduce_sort", lambda a, v, c: (jnp.sum(a, axis=0, dtype=a.dtype), jnp.max(a, axis=1), jnp.min(a, axis=0), jnp.prod(a, axis=1, dtype=a.dtype),
                                                    jnp.argmax(a, axis=1), jnp.argmin(a, axis=0), jnp.sort(v), jnp.argsort(v, stable=True),
                                                    jnp.cumsum(c, axis=1, dtype=c.dtype), lax.cummax(c, axis=0)),
          lambda R, dt=dt: (ints(R, 4097 * 129, dt).reshape(4097, 129), ints(R, 100003, dt), ints(R, 4097 * 33, dt).reshape(4097, 33)))
        L(f"int/{dn}_dot", lambda a, b: jnp.matmul(a, b, preferred_element_type=np.int32 if np.issubdtype(a.dtype, np.signedinteger) else np.uint32),
          lambda R, dt=dt: (ints(R, 257 * 513, dt).reshape(257, 513), ints(R, 513 * 65, dt).reshape(513, 65)))
    if not x64:
        L("int/u32_float_high", lambda a, x: (a.astype(f32), (a >> 1).astype(f32), a.astype(f32).astype(np.uint32), x.astype(np.uint32)),
          lambda R: (R.randint(2**31, 2**32, n, dtype=np.int64).astype(np.uint32), R.uniform(2**31, 2**32, n).astype(f32)))
    else:
        L("int/f64_math", lambda x: (jnp.exp(x), jnp.log(x), jnp.sin(x), jnp.tanh(x), jnp.round(x), x.astype(f32)),
          lambda R: (wide_floats(R, n).astype(np.float64),), x64=True, rtol=1e-12, atol=1e-300)


# =========================================================================
# Cases that found Anvil bugs (kept to document them), and narrow-type sums
# where Anvil is the more accurate of the two (notes say so)
# =========================================================================
def _bugs(L, normal, sprinkle, sum_tol, x64):
    import jax.numpy as jnp
    import numpy as np
    bf16 = jnp.bfloat16
    small = lambda R: (jnp.array([[1, 2, 3, 4], [5, 6, 7, 8]], bf16),)

    # BUG: a bf16 loop reading x and a transpose / reverse / slice of x (stored by a step of its own), x
    # first: kernels_fused.cc's AllocateRegisters frees x's register when its scan reaches the reverse's
    # load (it releases the reverse's operand, a read CountReads never counted), so the reverse is loaded
    # over x and both operands read the reverse. Anvil: x - flip(x) == 0; flip(x) - x is right.
    L("bug/bf16_x_minus_flip_2x4", lambda x: x - jnp.flip(x, 1), small)
    L("bug/bf16_x_minus_transpose_3x3", lambda x: x - x.T, lambda R: (jnp.arange(9, dtype=bf16).reshape(3, 3),))
    L("bug/bf16_where_x_flip_big", lambda x: jnp.where(x > 0, x, jnp.flip(x, 0)), normal(1025, 1023, dtype=bf16))
    L("bug/bf16_max_x_transpose_big", lambda x: jnp.maximum(x, x.T), normal(1023, 1023, dtype=bf16))
    L("bug/bf16_x_times_reversed_1d", lambda x: x * x[::-1], lambda R: (jnp.arange(65537, dtype=jnp.float32).astype(bf16),))
    L("bug/bf16_flip_minus_x_ok", lambda x: jnp.flip(x, 1) - x, small)

    ints = lambda shape: (lambda R: ((R.randint(-40, 40, shape).astype(np.float32) * 0.25).astype(bf16),))
    L("narrow/bf16_sum_in_bf16", lambda x: jnp.sum(x, axis=1, dtype=bf16), ints((127, 63, 129)),
      note="XLA departure: XLA rounds partial sums in bf16; Anvil's result is the exact sum rounded once (numpy float64 agrees)")
    L("narrow/bf16_cumsum_in_bf16", lambda x: jnp.cumsum(x, axis=1, dtype=bf16), ints((129, 1025)),
      note="XLA departure: XLA rounds partial sums in bf16; Anvil's result is the exact sum rounded once (numpy float64 agrees)")
