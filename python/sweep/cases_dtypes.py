"""Sweep cases: dtype corners (every convert pair, integer edges, shifts),
bf16 and f16 versions of fused patterns (layer norm, softmax, GELU, RMS
norm, attention), broadcasts of narrow types along each axis, odd shapes
(zero-size, size-1, rank 5-6, long rows), and reductions over every axis
subset with NaN, signed zeros and infinities. Registered by jax_sweep.py.

Known differences that are not Anvil's bugs: XLA's CPU backend drops NaN
in large max/min reductions (Anvil propagates it, as HLO says); XLA flushes
subnormals in some places and not others (bf16 to bool, f64 to bf16,
reduce_precision, a multiply-add it fuses); and XLA's simplifier gives
-0.0 + 0.0 = -0.0. Check those against numpy before calling them bugs.
"""
import itertools


def build_new_cases(case, x64_enabled):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    R = np.random.RandomState(1234)
    f32 = np.float32
    bf16 = jnp.bfloat16
    f16 = np.float16
    BF = dict(rtol=3e-2, atol=3e-2)
    HF = dict(rtol=3e-3, atol=3e-3)
    F = dict(rtol=1e-5, atol=1e-6)

    # ========================= converts (x64 on) =========================
    if x64_enabled:
        ints = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32,
                "u32": np.uint32, "i64": np.int64, "u64": np.uint64}
        flts = {"f16": np.float16, "bf16": bf16, "f32": np.float32, "f64": np.float64}
        alld = dict(ints, **flts, pred=np.bool_)

        def int_src(dt, n=300):
            info = np.iinfo(dt)
            edge = [info.min, info.min + 1, -1 if info.min < 0 else 0, 0, 1, 2, 127, 128, 255, 256, 32767, 32768,
                    65535, 65536, 2**24 + 1, 2**31 - 1, 2**31, 2**32 - 1, 2**53 + 1, 2**63 - 1, info.max - 1, info.max]
            edge = [v for v in edge if info.min <= v <= info.max]
            rnd = R.randint(0, 2**62, n, dtype=np.int64).astype(np.uint64).astype(dt) if dt != np.uint64 else \
                (R.randint(0, 2**62, n, dtype=np.int64).astype(np.uint64) * np.uint64(3))
            return np.concatenate([np.array(edge, dtype=object).astype(dt) if dt in (np.int64, np.uint64) else
                                   np.array(edge).astype(dt), rnd.astype(dt)])

        def flt_src(dt, n=300):
            sp = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, 127.5, 128.0, 255.5, 256.0, -128.5, -129.0,
                  32767.5, 65504.0, 65520.0, 1e5, -1e5, 2**31, -2**31, 2**31 + 2**8, 2**32, 2**53, 2**63, -2**63,
                  2**64, 1e20, -1e20, 3.4e38, np.inf, -np.inf, np.nan, -np.nan, 1e-8, 6e-8, 1e-40, -1e-40, 1e-45,
                  5.96e-8, 6.1e-5, 6.0e-5, 9.2e-41, 1.17549435e-38]
            with np.errstate(over="ignore", invalid="ignore"):
                base = np.array(sp, np.float64)
                rnd = R.standard_normal(n) * np.exp(R.uniform(-12, 12, n))
                return np.concatenate([base, rnd]).astype(dt)

        for sn, sd in alld.items():
            if sn == "pred":
                src = R.randint(0, 2, 300).astype(bool)
            elif sn in ints:
                src = int_src(sd)
            else:
                src = flt_src(sd)
            for dn, dd in alld.items():
                if dn == sn:
                    continue
                # in-range floats for float->int: take values exactly representable in dst (finite, within range)
                case(f"cvt/{sn}_to_{dn}", lambda x, dd=dd: lax.convert_element_type(x, dd), src, x64=True, rtol=0, atol=0)
                if sn in flts and dn in ints:
                    info = np.iinfo(dd)
                    s64 = src.astype(np.float64)
                    with np.errstate(invalid="ignore"):
                        ok = np.isfinite(s64) & (s64 > float(info.min) - 1) & (s64 < float(info.max) * 0.99)
                    case(f"cvt_inrange/{sn}_to_{dn}", lambda x, dd=dd: lax.convert_element_type(x, dd), src[ok],
                         x64=True, rtol=0, atol=0)
            # fused: convert inside an elementwise chain on a larger 2-D array
            big = np.resize(src, (37, 131))
            if sn in flts:
                case(f"cvtfused/{sn}_chain", lambda x: tuple(
                    (lax.convert_element_type(jnp.where(jnp.isfinite(x), x, 0) * 2, d) + d(1)) for d in
                    (np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint32, np.float16, bf16, np.float32, np.float64)),
                    big, x64=True, rtol=0, atol=0)
            elif sn in ints:
                case(f"cvtfused/{sn}_chain", lambda x: tuple(
                    (lax.convert_element_type(x + x, d) * d(3)) for d in
                    (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float16, bf16,
                     np.float32, np.float64)), big, x64=True, rtol=0, atol=0)

        # ---- integer ops on full-range values (signedness), per dtype ----
        for n_, dt in ints.items():
            a = int_src(dt, 200)
            b = a[::-1].copy()
            case(f"intfull/{n_}_cmp_minmax", lambda a, b: (a < b, a >= b, a == b, jnp.maximum(a, b), jnp.minimum(a, b),
                                                          jnp.where(a > b, a, b), jnp.sort(a), jnp.argsort(a, stable=True),
                                                          jnp.max(a), jnp.min(a), jnp.argmax(a), jnp.argmin(a)), a, b, x64=True)
            case(f"intfull/{n_}_wrap_arith", lambda a, b: (a + b, a - b, a * b, -a, a ^ b, a | b, a & b, ~a, jnp.abs(a),
                                                          jnp.sign(a)), a, b, x64=True)
            bits = np.dtype(dt).itemsize * 8
            sh = (np.arange(a.size) % bits).astype(dt)
            case(f"intfull/{n_}_shifts", lambda a, s: (a << s, a >> s, lax.shift_right_logical(a, s),
                                                      lax.shift_right_arithmetic(a, s), lax.shift_left(a, s)), a, sh, x64=True)
            case(f"intfull/{n_}_shift_oob", lambda a, s: (a << s, lax.shift_right_logical(a, s), lax.shift_right_arithmetic(a, s)),
                 a[:8], np.array([bits, bits + 1, 255 if bits > 8 else 200, 0, 1, bits - 1, bits * 2, 3]).astype(dt), x64=True)
            case(f"intfull/{n_}_popcnt_clz", lambda a: (lax.population_count(a), lax.clz(a)), a, x64=True)
            # division by constants (magic-number division in fused loops)
            big = np.resize(a, (23, 77))
            divs = [1, 2, 3, 5, 7, 16, 100, 127, 255, 641]
            if np.iinfo(dt).min < 0:
                divs += [-1, -2, -3, -7, -128]
            if bits >= 32:
                divs += [65537, 2**31 - 1]
            if n_ == "u64":
                divs += [2**63 + 5, 2**40 + 3]
            if n_ == "u32":
                divs += [2**31 + 7, 2**32 - 1]
            divs = [d for d in divs if np.iinfo(dt).min <= d <= np.iinfo(dt).max]
            for d in divs:
                dv = np.array(d, dtype=object).astype(dt) if dt in (np.int64, np.uint64) else np.array(d).astype(dt)
                dsc = dt(dv)
                case(f"intdiv/{n_}_by_{d}", lambda x, dsc=dsc: (lax.div(x, dsc), lax.rem(x, dsc), x // dsc, x % dsc),
                     big, x64=True)
            case(f"intdiv/{n_}_by_array", lambda x, y: (lax.div(x, y), lax.rem(x, y), x // y, x % y), big,
                 np.where(np.resize(b, (23, 77)) == 0, dt(1), np.resize(b, (23, 77))).astype(dt), x64=True)
            # integer reductions in the dtype
            case(f"intred/{n_}_sum_prod", lambda x: (jnp.sum(x, 0, dtype=x.dtype), jnp.sum(x, 1, dtype=x.dtype),
                                                    jnp.prod(x, 1, dtype=x.dtype), jnp.max(x, 0), jnp.min(x, 1),
                                                    jnp.cumsum(x, 1, dtype=x.dtype), lax.cummax(x, 0)), big, x64=True)

        # mixed promotions
        A8 = R.randint(-128, 128, (9, 17)).astype(np.int8)
        AU8 = R.randint(0, 256, (9, 17)).astype(np.uint8)
        AU16 = R.randint(0, 65536, (9, 17)).astype(np.uint16)
        AU32 = R.randint(0, 2**32, (9, 17), dtype=np.int64).astype(np.uint32)
        AI32 = R.randint(-2**31, 2**31, (9, 17), dtype=np.int64).astype(np.int32)
        AI64 = R.randint(-2**62, 2**62, (9, 17), dtype=np.int64)
        AF16 = (R.standard_normal((9, 17)) * 100).astype(f16)
        ABF = (R.standard_normal((9, 17)) * 100).astype(bf16)
        AF = (R.standard_normal((9, 17)) * 100).astype(f32)
        pairs = {"i8_u8": (A8, AU8), "u8_i32": (AU8, AI32), "u32_i32": (AU32, AI32), "u16_i8": (AU16, A8),
                 "bf16_f16": (ABF, AF16), "i32_f16": (AI32, AF16), "u8_bf16": (AU8, ABF), "i64_f32": (AI64, AF),
                 "u32_f32": (AU32, AF), "bf16_f32": (ABF, AF), "bool_i8": (A8 > 0, A8), "bool_bf16": (A8 > 0, ABF),
                 "i8_u64": (A8, AU32.astype(np.uint64) * np.uint64(2**31))}
        for k, (a, b) in pairs.items():
            tol = BF if (a.dtype == bf16 or b.dtype == bf16) else (HF if (a.dtype == f16 or b.dtype == f16) else {})
            case(f"promote/{k}", lambda a, b: (a + b, a * b, jnp.maximum(a, b), a < b, jnp.where(a > b, a, b)), a, b,
                 x64=True, **tol)
            case(f"promote/{k}_weak", lambda a, b: (a + 3, b * 2, a - 1.5, (b + 1) // 2 if b.dtype != jnp.bool_ else b),
                 a, b, x64=True, **tol)

        # bitcasts between widths
        bc = {
            "f32_to_u16": (R.standard_normal((5, 7)).astype(f32), np.uint16),
            "f32_to_i8": (R.standard_normal((5, 7)).astype(f32), np.int8),
            "f64_to_u32": (R.standard_normal((5, 7)), np.uint32),
            "f64_to_f32": (R.standard_normal((5, 7)), np.float32),
            "f64_to_u8": (R.standard_normal((3, 2)), np.uint8),
            "i64_to_i16": (R.randint(-2**62, 2**62, (4, 3), dtype=np.int64), np.int16),
            "f16_to_i16": (R.standard_normal((5, 7)).astype(f16), np.int16),
            "bf16_to_u16": (R.standard_normal((5, 7)).astype(bf16), np.uint16),
            "bf16_to_f16": (R.standard_normal((5, 7)).astype(bf16), np.float16),
            "f16_to_u8": (R.standard_normal((5, 7)).astype(f16), np.uint8),
            "u16x2_to_f32": (R.randint(0, 65536, (5, 7, 2)).astype(np.uint16), np.float32),
            "u8x8_to_f64": (R.randint(0, 64, (5, 8)).astype(np.uint8), np.float64),
            "i8x2_to_bf16": (R.randint(-128, 127, (5, 7, 2)).astype(np.int8), bf16),
            "u32x2_to_i64": (R.randint(0, 2**32, (5, 2), dtype=np.int64).astype(np.uint32), np.int64),
            "f32x2_to_f64": (R.standard_normal((6, 2)).astype(f32), np.float64),
            "u8x4_to_i32": (R.randint(0, 256, (7, 4)).astype(np.uint8), np.int32),
            "u64_to_f64": (np.array([0x7ff8000000000001, 0xfff0000000000000, 1, 0x8000000000000000], np.uint64), np.float64),
            "u32_to_f32_nan_payload": (np.array([0x7fc00001, 0xffc12345, 0x7f800001, 0x00000001, 0x80000000], np.uint32), np.float32),
            "u16_to_bf16_nan": (np.array([0x7fc1, 0xff81, 0x0001, 0x8000, 0x7f80], np.uint16), bf16),
        }
        for k, (a, t) in bc.items():
            if k.endswith("_nan") or k.endswith("payload") or k == "u64_to_f64":
                udt = {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(t).itemsize]
                case(f"bitcast/{k}", lambda x, t=t, udt=udt: lax.bitcast_convert_type(lax.bitcast_convert_type(x, t) * 1 if False else
                                                                                       lax.bitcast_convert_type(x, t), udt), a, x64=True)
            else:
                case(f"bitcast/{k}", lambda x, t=t: lax.bitcast_convert_type(x, t), a, x64=True, rtol=0, atol=0)
        case("bitcast/roundtrip_fused", lambda x: lax.bitcast_convert_type(
            lax.bitcast_convert_type(x * 2, np.uint16) + np.uint16(1), np.float32) - 1, R.standard_normal((33, 65)).astype(f32), x64=True)

        # s64/u64 broadcasts in fused loops
        I64R = R.randint(-2**50, 2**50, (1, 45), dtype=np.int64)
        I64C = R.randint(-2**50, 2**50, (37, 1), dtype=np.int64)
        I64M = R.randint(-2**50, 2**50, (37, 45), dtype=np.int64)
        case("bcast64/i64_row_col", lambda m, r, c: (m + r, m * c - r, jnp.where(m > r, c, r), m + r[0, 3], (m > c) & (m < r)),
             I64M, I64R, I64C, x64=True)
        case("bcast64/u64_row_col", lambda m, r, c: (m + r, m // (c | np.uint64(1)), jnp.maximum(m, r), m > c),
             I64M.astype(np.uint64) * np.uint64(1 << 13), I64R.astype(np.uint64), I64C.astype(np.uint64), x64=True)
        case("bcast64/f64_row_col", lambda m, r, c: ((m - r) / c, jnp.where(m > r, m, c), jnp.exp(m - c)),
             R.standard_normal((37, 45)), R.standard_normal((1, 45)), R.standard_normal((37, 1)) + 3, x64=True, rtol=1e-12)
        case("bcast64/i64_scalar_arg", lambda m, s: (m + s, m * s, jnp.where(m > s, m, s), m // (s + 1)), I64M, np.int64(-12345678901), x64=True)
        case("bcast64/i64_middle_axis", lambda m, v: m + v[None, :, None], R.randint(-9, 9, (3, 5, 7)).astype(np.int64),
             R.randint(-2**40, 2**40, 5, dtype=np.int64), x64=True)
        case("bcast64/i64_iota_mix", lambda m: m * jnp.arange(45, dtype=jnp.int64)[None] + jnp.arange(37, dtype=jnp.int64)[:, None] * 2**40,
             I64M, x64=True)
        case("bcast64/u64_large_cmp", lambda a, b: (a < b, jnp.maximum(a, b), jnp.sort(a), a.max(), a.min(), jnp.argmax(a)),
             np.array([2**63 + 1, 1, 2**64 - 1, 2**63 - 1, 0, 2**63], np.uint64),
             np.array([1, 2**63 + 1, 0, 2**63, 2**64 - 1, 5], np.uint64), x64=True)
        case("bcast64/f64_sum_long", lambda x: (x.sum(), x.reshape(40, -1).sum(1), jnp.cumsum(x)[::999]), R.standard_normal(40000), x64=True, rtol=1e-10, atol=1e-10)
        case("bcast64/i64_sum_overflow", lambda x: (x.sum(), x.reshape(6, -1).sum(0), jnp.prod(x[:10])), np.full(600, 2**61, np.int64) + np.arange(600), x64=True)

    if x64_enabled:
        return  # everything below runs in the 32-bit mode

    # ===================== f16/bf16 subnormals & specials =====================
    SUB16 = np.array([6e-8, 5.96e-8, 1e-7, 3e-6, 6e-5, 6.1e-5, 6.104e-5, -6e-8, -3e-6, 0.0, -0.0, 65504, 65519, 65520, 1e6, -1e6],
                     f32)
    case("sub/f32_to_f16_sub", lambda x: x.astype(f16), SUB16, rtol=0, atol=0)
    case("sub/f16_sub_to_f32", lambda x: x.astype(f32), SUB16.astype(f16), rtol=0, atol=0)
    case("sub/f16_sub_arith", lambda x, y: (x * y, x + y, x / f16(4), x * f16(0.001), jnp.sqrt(jnp.abs(x))),
         SUB16.astype(f16), SUB16[::-1].astype(f16), rtol=1e-3, atol=0)
    BSUB = np.array([1e-39, 9.2e-41, 1e-45, -1e-39, 1.17549435e-38, 1.1e-38, 3e38, 3.4e38, -3.39e38, 0.0, -0.0], f32)
    case("sub/f32_to_bf16_sub", lambda x: x.astype(bf16), BSUB, rtol=0, atol=0)
    case("sub/bf16_sub_to_f32", lambda x: x.astype(f32), BSUB.astype(bf16), rtol=0, atol=0)
    case("sub/bf16_sub_arith", lambda x: (x * bf16(2), x + x, x * bf16(0.5), -x), BSUB.astype(bf16), rtol=0, atol=0)
    case("sub/f32_subnormal_arith", lambda x: (x * f32(2), x / f32(3), x + x, x * f32(1e-3), jnp.sqrt(jnp.abs(x))),
         np.array([1e-39, 9.2e-41, 1e-45, -1e-39, 1.17549435e-38, 3e-38], f32), rtol=1e-6, atol=0)
    case("sub/f32_subnormal_big", lambda x: x * f32(0.5) + x, np.resize(np.array([1e-39, 1e-45, -3e-40, 2e-38], f32), (33, 67)), rtol=1e-6, atol=0)
    case("sub/f16_sub_big", lambda x: x * f16(0.5) + x, np.resize(SUB16, (33, 67)).astype(f16), rtol=1e-3, atol=0)
    case("sub/bf16_round_ties", lambda x: x.astype(bf16),
         np.array([1.00390625, 1.01171875, 1.0078125 + 2**-9, -1.00390625, 3.3895314e38, 3.4028235e38, 255.5, 256.5], f32), rtol=0, atol=0)
    case("sub/f16_round_ties", lambda x: x.astype(f16),
         np.array([1 + 2**-11, 1 + 3 * 2**-11, 2049, 2051, 65504 + 16, 65504 + 15.99, -(1 + 2**-11), 2**-25, 2**-24 * 1.5], f32), rtol=0, atol=0)
    case("sub/f16_nan_inf", lambda x: (x.astype(f16), x.astype(bf16), x.astype(f16).astype(bf16), x.astype(bf16).astype(f16)),
         np.array([np.nan, -np.nan, np.inf, -np.inf, 1e5, -1e5, 70000], f32), rtol=0, atol=0)
    case("sub/f16_to_int8", lambda x: (x.astype(np.int8), x.astype(np.uint8), x.astype(np.int32), x.astype(np.uint16)),
         np.array([0.5, 1.5, -1.5, 127.9, 128.0, -129, 255.9, 300, 65504, -65504, np.inf, np.nan, -0.0, -1.0], f16))
    case("sub/bf16_to_int", lambda x: (x.astype(np.int8), x.astype(np.uint8), x.astype(np.int32), x.astype(np.uint32), x.astype(np.int16)),
         np.array([0.5, 1.5, -1.5, 127.9, 128.0, -129, 255.9, 300, 3e9, -3e9, 1e20, np.inf, np.nan, -0.0, -1.0], bf16))
    case("sub/f32_to_small_int_sat", lambda x: (x.astype(np.int8), x.astype(np.uint8), x.astype(np.int16), x.astype(np.uint16), x.astype(np.uint32)),
         np.array([-1e10, -200, -1.5, -0.9, 0.9, 200.7, 3e4, 7e4, 5e9, 1e10, np.inf, -np.inf, np.nan], f32))
    case("sub/f32_to_small_int_inrange", lambda x: (x.astype(np.int8), x.astype(np.int16)),
         np.resize(np.array([-128.9, -127.5, -0.9, 0.9, 126.7, 127.9, -1.0, 3.0], f32), (21, 35)))
    case("sub/f32_to_uint_inrange", lambda x: (x.astype(np.uint8), x.astype(np.uint16), x.astype(np.uint32)),
         np.resize(np.array([0.0, 0.9, 1.5, 254.9, 255.0, 100.5, 3.0, 7.7], f32), (21, 35)))
    case("sub/u32_to_f32_round", lambda x: (x.astype(f32), x.astype(f16), x.astype(bf16)),
         np.array([2**32 - 1, 2**31, 2**31 + 1, 2**24 + 1, 2**24 + 3, 16777217, 65505, 65535, 0], np.uint32), rtol=0, atol=0)
    case("sub/i32_to_f32_round", lambda x: (x.astype(f32), x.astype(f16), x.astype(bf16)),
         np.array([-2**31, 2**31 - 1, 2**24 + 1, -(2**24 + 3), 16777219, 65505, -65520, 257, 0], np.int32), rtol=0, atol=0)
    case("sub/int_to_f16_bf16_big", lambda x, u: (x.astype(f16), x.astype(bf16), u.astype(f16), u.astype(bf16)),
         R.randint(-70000, 70000, (29, 41)).astype(np.int32), R.randint(0, 256, (29, 41)).astype(np.uint8), rtol=0, atol=0)
    case("sub/bool_to_all", lambda b: (b.astype(np.int8), b.astype(np.uint8), b.astype(np.int16), b.astype(f16), b.astype(bf16),
                                       b.astype(np.uint32), b.astype(f32) * 2 - 1), R.rand(19, 23) > 0.5)
    case("sub/all_to_bool", lambda a, b, c, d, e: (a.astype(bool), b.astype(bool), c.astype(bool), d.astype(bool), e.astype(bool)),
         np.array([0, 1, -1, 128, 256, 0], np.int16), np.array([0.0, -0.0, np.nan, 1e-45, -np.inf, 0.5], f32),
         np.array([0.0, -0.0, np.nan, 6e-8, -np.inf, 0.5], f16), np.array([0, 1e-40, -0.0, np.nan, 2, 0], bf16),
         np.array([0, 255, 1, 2, 128, 0], np.uint8))

    # ================= bf16 / f16 fused patterns =================
    shapes = {"s": (4, 5), "m": (33, 129), "l": (8, 1030)}
    for dname, dt, tol in (("bf16", bf16, BF), ("f16", f16, HF)):
        for sn, shp in shapes.items():
            X = R.standard_normal(shp).astype(dt)
            W = (1 + 0.1 * R.standard_normal(shp[-1:])).astype(dt)
            Bv = (0.1 * R.standard_normal(shp[-1:])).astype(dt)
            tag = f"{dname}_{sn}"
            ln_tol = dict(rtol=tol["rtol"] * 2, atol=tol["atol"] * 3)
            case(f"lp/{tag}_layernorm_affine", lambda x, w, b: ((x - x.mean(-1, keepdims=True)) *
                                                                  lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)) * w + b, X, W, Bv, **ln_tol)
            case(f"lp/{tag}_layernorm_f32acc", lambda x, w, b: (((x.astype(f32) - x.astype(f32).mean(-1, keepdims=True)) *
                                                                   lax.rsqrt(x.astype(f32).var(-1, keepdims=True) + 1e-5)).astype(x.dtype) * w + b),
                 X, W, Bv, **ln_tol)
            case(f"lp/{tag}_rmsnorm", lambda x, w: x * lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * w, X, W, **ln_tol)
            case(f"lp/{tag}_rmsnorm_f32acc", lambda x, w: (x.astype(f32) * lax.rsqrt(jnp.mean(jnp.square(x.astype(f32)), -1, keepdims=True) + 1e-6)).astype(x.dtype) * w,
                 X, W, **ln_tol)
            case(f"lp/{tag}_softmax", lambda x: jax.nn.softmax(x, -1), X, **tol)
            case(f"lp/{tag}_softmax_ax0", lambda x: jax.nn.softmax(x, 0), X, **tol)
            case(f"lp/{tag}_log_softmax", lambda x: jax.nn.log_softmax(x, -1), X, **ln_tol)
            case(f"lp/{tag}_gelu_tanh", lambda x: jax.nn.gelu(x, approximate=True), X, **tol)
            case(f"lp/{tag}_gelu_erf", lambda x: jax.nn.gelu(x, approximate=False), X, **tol)
            case(f"lp/{tag}_silu_mul", lambda x, w: jax.nn.silu(x) * (x * w), X, W, **tol)
            case(f"lp/{tag}_mean_var_axes", lambda x: (x.mean(0), x.mean(1), x.var(0), x.var(1), x.mean(), x.mean(0, keepdims=True) - x),
                 X, **ln_tol)
            case(f"lp/{tag}_cumsum", lambda x: (jnp.cumsum(x, 0), jnp.cumsum(x, 1)), (0.1 * X.astype(f32)).astype(dt),
                 rtol=tol["rtol"] * 3, atol=tol["atol"] * (10 if sn == "l" else 3))
            case(f"lp/{tag}_bias_row_col_scalar", lambda x, w, s: (x + w, x * w[:, None].T, x - x[:, :1], x * x[:1, :], x + s,
                                                                  jnp.where(x > w, x, w), (x > x[:, :1]), x * s + w),
                 X, W, dt(0.75), **tol)
            case(f"lp/{tag}_stored_bcast_chain", lambda x: (x - jnp.max(x, -1, keepdims=True)) * jnp.min(x, 0, keepdims=True)
                 + jnp.sum(x, 0, keepdims=True) / x.shape[0], X, **ln_tol)
        # attention scores in low precision
        Q = R.standard_normal((2, 3, 17, 16)).astype(dt)
        K = R.standard_normal((2, 3, 19, 16)).astype(dt)
        Vv = R.standard_normal((2, 3, 19, 16)).astype(dt)
        mask = R.rand(2, 1, 17, 19) > 0.3
        mask[..., 0] = True
        case(f"lp/{dname}_attn_scores", lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(16.0).astype(q.dtype), Q, K,
             rtol=tol["rtol"] * 2, atol=tol["atol"] * 5)
        case(f"lp/{dname}_attn_full", lambda q, k, v, m: jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(
            jnp.where(m, jnp.einsum("bhqd,bhkd->bhqk", q, k) * q.dtype.type(0.25), -jnp.inf), -1), v), Q, K, Vv, mask,
             rtol=tol["rtol"] * 2, atol=tol["atol"] * 5)
        if dname == "bf16": case(f"lp/{dname}_dpa", lambda q, k, v: jax.nn.dot_product_attention(q.transpose(0, 2, 1, 3)[:, :, :, :], k.transpose(0, 2, 1, 3)[:, :17],
                                                                        v.transpose(0, 2, 1, 3)[:, :17], is_causal=True),
             Q, K, Vv, rtol=tol["rtol"] * 2, atol=tol["atol"] * 5)
        case(f"lp/{dname}_grad_layernorm", jax.grad(lambda x: jnp.sum(((x - x.mean(-1, keepdims=True)) *
                                                                         lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)) ** 2 * jnp.arange(x.shape[-1], dtype=x.dtype))),
             R.standard_normal((6, 10)).astype(dt), rtol=0.1, atol=0.1)
        case(f"lp/{dname}_reduce_3d", lambda x: (x.sum(1), x.max(2), x.min(0), x.mean((0, 2)), jnp.argmax(x, 1)),
             R.standard_normal((5, 17, 9)).astype(dt), rtol=tol["rtol"] * 2, atol=tol["atol"] * 5)

    # ================== broadcasts of narrow vectors ==================
    bdt = {"bf16": (bf16, BF), "f16": (f16, HF), "i8": (np.int8, {}), "u8": (np.uint8, {}), "i16": (np.int16, {}),
           "u16": (np.uint16, {}), "pred": (np.bool_, {}), "u32": (np.uint32, {}), "f32": (f32, F)}

    def mk(dt, shape):
        if dt == np.bool_:
            return R.rand(*shape) > 0.5
        if np.dtype(dt).kind in "iu":
            info = np.iinfo(dt)
            lo, hi = max(info.min, -100), min(info.max, 100)
            return R.randint(lo, hi + 1, shape).astype(dt)
        return R.standard_normal(shape).astype(dt)

    for dn, (dt, tol) in bdt.items():
        for (rows, cols) in ((4, 5), (37, 45), (3, 1025)):
            M_ = mk(dt, (rows, cols))
            r = mk(dt, (cols,))
            c = mk(dt, (rows,))
            s = mk(dt, ())
            tag = f"{dn}_{rows}x{cols}"
            if dt == np.bool_:
                case(f"bcast/{tag}", lambda m, r, c, s: (m & r, m | c[:, None], m ^ s, jnp.where(r, m, c[:, None]),
                                                         jnp.where(c[:, None], r, s), r == c[:, None], (m & r).astype(np.int32) + c[:, None]),
                     M_, r, c, s)
            else:
                case(f"bcast/{tag}", lambda m, r, c, s: (m + r, m * c[:, None], m - s, jnp.where(m > r, c[:, None], r),
                                                         jnp.maximum(m, c[:, None]), m == r, jnp.where(m < s, r, c[:, None]),
                                                         (r[None, :] + c[:, None]), m * r + c[:, None] - s),
                     M_, r, c, s, **tol)
                # stored broadcasts (computed row/col that another op stores) read by a fused loop
                case(f"bcast_stored/{tag}", lambda m: (m - jnp.max(m, 0), m + jnp.min(m, 1, keepdims=True), jnp.where(m > jnp.max(m, 0), m, jnp.max(m, 1, keepdims=True)),
                                                       m > jnp.min(m, 1)[:, None], (m == jnp.max(m, 1, keepdims=True)).astype(m.dtype)),
                     M_, **tol)
        # rank-3 broadcasts along each axis
        T = mk(dt, (6, 7, 19))
        vs = (mk(dt, (6,)), mk(dt, (7,)), mk(dt, (19,)))
        if dt == np.bool_:
            case(f"bcast3/{dn}", lambda t, a, b, c: (t & a[:, None, None], t | b[None, :, None], t ^ c, jnp.where(t, a[:, None, None], b[:, None]),
                                                    a[:, None, None] & b[:, None] & c), T, *vs)
        else:
            case(f"bcast3/{dn}", lambda t, a, b, c: (t + a[:, None, None], t * b[None, :, None], t - c, jnp.where(t > b[:, None], a[:, None, None], c),
                                                    a[:, None, None] + b[:, None] + c, jnp.maximum(t, b[:, None]),
                                                    t[:, :1, :] * t[:1, :, :1]), T, *vs, **tol)
        # size-1 dims in odd places
        case(f"bcast1/{dn}", (lambda a, b: a ^ b) if dt == np.bool_ else (lambda a, b: (a + b, a * b - a)), mk(dt, (3, 1, 5, 1, 2)), mk(dt, (1, 4, 1, 6, 1)), **tol)

    # ==================== shapes ====================
    XS = R.standard_normal((4, 5)).astype(f32)
    case("shp/zero_dims_various", lambda a, b: (a.sum(0), a.sum(1), a.max(1, initial=0.0), jnp.prod(a, 0), a.mean(0), a.T @ a,
                                                b.astype(np.int8) + 1, jnp.any(a > 0, 0), jnp.min(b, 0, initial=3)),
         np.zeros((0, 5), f32), np.zeros((0, 3), np.int32))
    case("shp/zero_middle", lambda a: (a.sum(1), a.reshape(3, 0), jnp.concatenate([a, a], 1), jnp.transpose(a, (2, 1, 0)), jnp.cumsum(a, 2), a + 1),
         np.zeros((3, 0, 4), f32))
    case("shp/zero_bf16_i8", lambda a, b: (a * 2, a.sum(0), b + 1, b.max(1, initial=0), a.astype(np.int8)), np.zeros((0, 7), bf16), np.zeros((5, 0), np.int8))
    case("shp/zero_softmax", lambda a: (jax.nn.softmax(a, -1), jax.nn.softmax(a, 0)), np.zeros((0, 8), f32))
    case("shp/zero_slice_result", lambda a: (a[3:3], a[:, 5:], a[::-1][4:], jnp.pad(a[:0], ((1, 1), (0, 0)))), XS)
    case("shp/rank0_all_dtypes", lambda a, b, c, d, e, f: (a * b.astype(f32), b + 1, c.astype(np.int8) * 3, ~d, e * e, jnp.where(d, f, -f), f.astype(bf16)),
         np.float32(2.5), np.int32(-7), np.float16(3.5), np.bool_(True), bf16(1.25), np.uint8(200))
    case("shp/rank0_reduce", lambda a: (a.sum(), a.max(), jnp.argmax(a), jnp.cumsum(a), a.mean()), np.float32(3.0))
    case("shp/rank5_ops", lambda x: (x.sum((0, 2, 4)), x.max((1, 3)), jnp.transpose(x, (4, 2, 0, 3, 1)) * 2, x - x.mean(3, keepdims=True),
                                     jnp.flip(x, (1, 4)) + x), R.standard_normal((2, 3, 4, 5, 6)).astype(f32), rtol=1e-5, atol=1e-5)
    case("shp/rank6_ops", lambda x: (x.sum((1, 5)), jnp.transpose(x, (5, 4, 3, 2, 1, 0)) + 1, x * x[:, :, :1, :, :, :1], jnp.argmax(x, 3),
                                     jnp.cumsum(x, 4)), R.standard_normal((2, 3, 2, 3, 4, 5)).astype(f32), rtol=1e-5, atol=1e-5)
    case("shp/rank6_bf16", lambda x: (x.astype(f32).sum((0, 3)).astype(bf16), x * x[:1, :, :, :1], jnp.transpose(x, (1, 0, 3, 2, 5, 4)) - x[0, 0, 0, 0, 0, 0]),
         R.standard_normal((2, 3, 2, 3, 4, 5)).astype(bf16), **BF)
    case("shp/rank6_int8", lambda x: (x.sum((1, 4), dtype=np.int8), jnp.transpose(x, (2, 0, 1, 5, 3, 4)) + x[0, 0, 0, 0, 0, 0], x.max((0, 5))),
         R.randint(-50, 50, (2, 3, 2, 3, 4, 5)).astype(np.int8))
    for n in (17, 1023, 1025, 16385, 20000):
        v = R.standard_normal(n).astype(f32)
        case(f"shp/long_row_{n}", lambda v: (jax.nn.softmax(v), v.sum(), v.max(), jnp.argmax(v), jnp.argmin(v), jnp.cumsum(v)[-1], v - v.mean()),
             v, rtol=2e-5, atol=5e-4 if n > 2000 else 1e-5)
        case(f"shp/long_row2d_{n}", lambda v: (jax.nn.softmax(v, -1), v.sum(-1), v.max(-1), jnp.argmax(v, -1), (v - v.mean(-1, keepdims=True)) / v.std(-1, keepdims=True)),
             np.stack([v, v[::-1] * 2, -v]), rtol=2e-5, atol=5e-4 if n > 2000 else 1e-5)
        case(f"shp/long_row_bf16_{n}", lambda v: (jax.nn.softmax(v.astype(bf16)), jnp.max(v.astype(bf16)), jnp.argmax(v.astype(bf16)),
                                                 (v.astype(bf16) * bf16(2)).astype(f32).sum()), v, rtol=3e-2, atol=1e-2)
        case(f"shp/long_row_i8_{n}", lambda v: ((v * 30).astype(np.int8).max(), (v * 30).astype(np.int8).sum(), jnp.argmin((v * 30).astype(np.int8)),
                                               ((v > 0) & (v < 1)).sum(), jnp.any(v > 3.5), jnp.all(v > -5)), v)
    LONGC = R.standard_normal((20000, 3)).astype(f32)
    case("shp/long_col", lambda x: (x.sum(0), x.max(0), jnp.argmax(x, 0), jax.nn.softmax(x, 0)[::997], x.mean(0)), LONGC, rtol=1e-4, atol=1e-4)
    for k, fn in {"transpose": lambda x: x.T, "reverse0": lambda x: x[::-1], "reverse1": lambda x: x[:, ::-1],
                  "stride2": lambda x: x[::2, 1::3], "slice_off": lambda x: x[3:-2, 5:-7], "rev_t": lambda x: x[::-1, ::-2].T,
                  "bcast_t": lambda x: jnp.broadcast_to(x[:, :1], x.shape).T}.items():
        for dn, dt, tol in (("f32", f32, F), ("bf16", bf16, BF), ("f16", f16, HF), ("i8", np.int8, {}), ("u16", np.uint16, {}), ("pred", np.bool_, {})):
            A = mk(dt, (37, 45))
            if dt == np.bool_:
                case(f"strided/{k}_{dn}", lambda a, fn=fn: (fn(a) & fn(a[::-1, ::-1]), fn(a) ^ True, jnp.where(fn(a), 1, 2)), A)
            else:
                case(f"strided/{k}_{dn}", lambda a, fn=fn: (fn(a) + fn(a[::-1, ::-1]), fn(a) * 2 - 1 if a.dtype.kind == "f" else fn(a) * a.dtype.type(3),
                                                           jnp.where(fn(a) > fn(a[::-1, ::-1]), fn(a), fn(a[::-1, ::-1]))), A, **tol)
    case("strided/transpose_3d_perm", lambda a: tuple(jnp.transpose(a, p) + 1 for p in itertools.permutations(range(3))),
         R.standard_normal((7, 17, 33)).astype(f32))
    case("strided/transpose_3d_perm_bf16", lambda a: tuple(jnp.transpose(a, p) * bf16(2) for p in itertools.permutations(range(3))),
         R.standard_normal((7, 17, 33)).astype(bf16))
    case("strided/transpose_4d_i8", lambda a: (jnp.transpose(a, (3, 1, 0, 2)) + 1, jnp.transpose(a, (0, 2, 1, 3)) * 2, a[:, ::-1, :, ::2] - a[:, :, :, 1::2]),
         R.randint(-50, 50, (3, 5, 7, 18)).astype(np.int8))

    # ==================== reductions on rank-4 ====================
    base = R.standard_normal((3, 4, 5, 6)).astype(f32)
    FN = base.copy()
    FN[0, 1, 2, 3] = np.nan
    FN[2, 0, 4, 5] = np.inf
    FN[1, 3, 0, 0] = -np.inf
    FN[1, 2, 3, 4] = -0.0
    FN[0, 0, 0, 0] = 0.0
    FN[2, 3, :, 1] = np.nan
    IN = R.randint(-9, 9, (3, 4, 5, 6)).astype(np.int32)
    BN = R.rand(3, 4, 5, 6) > 0.3
    BN[:, :, 2, :] = True
    BN[1, :, :, 4] = False
    I8N = R.randint(-128, 128, (3, 4, 5, 6)).astype(np.int8)
    U8N = R.randint(0, 256, (3, 4, 5, 6)).astype(np.uint8)
    BFN = base.astype(bf16)
    F16N = FN.astype(f16)
    for k in range(1, 5):
        for axes in itertools.combinations(range(4), k):
            an = "".join(map(str, axes))
            case(f"red4/f32_{an}", lambda x, axes=axes: (x.sum(axes), x.prod(axes), x.max(axes), x.min(axes), x.mean(axes, keepdims=True),
                                                         x.sum(axes, keepdims=True)), base, rtol=1e-5, atol=1e-5)
            case(f"red4/f32nan_{an}", lambda x, axes=axes: (x.sum(axes), x.max(axes, keepdims=True), x.min(axes), jnp.nanmax(x, axes),
                                                            jnp.isnan(x).any(axes), x.prod(axes)), FN, rtol=1e-5, atol=1e-5)
            case(f"red4/i32_{an}", lambda x, axes=axes: (x.sum(axes), x.prod(axes), x.max(axes), x.min(axes, keepdims=True)), IN)
            case(f"red4/bool_{an}", lambda x, axes=axes: (x.any(axes), x.all(axes), x.sum(axes), jnp.any(x, axes, keepdims=True),
                                                          lax.reduce_or(x, axes), lax.reduce_and(x, axes), lax.reduce_xor(x, axes)), BN)
            case(f"red4/i8u8_{an}", lambda x, u, axes=axes: (x.max(axes), x.min(axes), u.max(axes), u.min(axes), x.sum(axes, dtype=np.int8),
                                                             u.sum(axes, dtype=np.uint8), u.sum(axes)), I8N, U8N)
            case(f"red4/lp_{an}", lambda x, h, axes=axes: (x.max(axes), x.min(axes), h.max(axes), h.min(axes, keepdims=True),
                                                           x.astype(f32).sum(axes), h.astype(f32).sum(axes)), BFN, F16N, rtol=1e-5, atol=1e-5)
            if k == 1:
                ax = axes[0]
                case(f"argred4/f32nan_{ax}", lambda x, ax=ax: (jnp.argmax(x, ax), jnp.argmin(x, ax), jnp.argmax(x, ax, keepdims=True)), FN)
                case(f"argred4/f32_{ax}", lambda x, ax=ax: (jnp.argmax(x, ax), jnp.argmin(x, ax)), base)
                case(f"argred4/i32ties_{ax}", lambda x, ax=ax: (jnp.argmax(x, ax), jnp.argmin(x, ax)), IN % 3)
                case(f"argred4/bool_{ax}", lambda x, ax=ax: (jnp.argmax(x, ax), jnp.argmin(x, ax)), BN)
                case(f"argred4/bf16_{ax}", lambda x, ax=ax: (jnp.argmax(x, ax), jnp.argmin(x, ax)), BFN)
                case(f"argred4/u8_{ax}", lambda x, ax=ax: (jnp.argmax(x, ax), jnp.argmin(x, ax)), U8N)
    ZZ = np.array([[0.0, -0.0, 1.0], [-0.0, 0.0, -1.0], [np.nan, 0.0, -0.0], [-0.0, -0.0, -0.0], [np.inf, np.nan, -np.inf]], f32)
    case("red_special/zero_signs_argmax", lambda x: (jnp.argmax(x, 0), jnp.argmin(x, 0), jnp.argmax(x, 1), jnp.argmin(x, 1)), ZZ)
    case("red_special/nan_max_min", lambda x: (x.max(0), x.min(0), x.max(1), x.min(1), jnp.maximum(x, x[::-1]), jnp.minimum(x, x[::-1])), ZZ)
    case("red_special/inf_sum", lambda x: (x.sum(0), x.sum(1), x.prod(0), jnp.cumsum(x, 0)), ZZ)
    case("red_special/all_nan_row", lambda x: (x.max(1), jnp.argmax(x, 1), jnp.argmin(x, 1), jnp.nanmax(x, 1), jax.nn.softmax(x, 1)),
         np.array([[np.nan] * 5, [1, 2, np.nan, 3, 0], [-np.inf] * 5, [np.inf, 1, 2, np.inf, 0]], f32))
    case("red_special/argmax_big", lambda x: (jnp.argmax(x, 0), jnp.argmax(x, 1), jnp.argmin(x, 1), jnp.argmax(x)),
         np.where(R.rand(67, 133) > 0.97, np.nan, R.standard_normal((67, 133))).astype(f32))
    case("red_special/argmax_big_bf16", lambda x: (jnp.argmax(x, 0), jnp.argmax(x, 1), jnp.argmin(x, 1)),
         np.where(R.rand(67, 133) > 0.97, np.nan, R.randint(-5, 5, (67, 133))).astype(bf16))
    case("red_special/argmax_ties_big", lambda x: (jnp.argmax(x, 0), jnp.argmax(x, 1), jnp.argmin(x, 0), jnp.argmin(x, 1)),
         R.randint(0, 3, (67, 1030)).astype(np.int32))
    case("red_special/min_max_i64like_ties", lambda x: (jnp.max(x, 1), jnp.min(x, 0)), R.randint(-3, 3, (67, 1030)).astype(np.int16))
    case("red_special/bool_reduce_big", lambda x: (x.any(0), x.all(1), x.sum(1), jnp.argmax(x, 1), x.any(), x.all()),
         R.rand(67, 1030) > 0.999)
    case("red_special/keepdims_chain", lambda x: (x - x.max((1, 3), keepdims=True)) / x.sum((0, 2), keepdims=True), base, rtol=1e-4, atol=1e-5)
    case("red_special/reduce_precision_lp", lambda x: (lax.reduce_precision(x, 5, 10), lax.reduce_precision(x, 8, 7), lax.reduce_precision(x, 4, 3)),
         np.array([1e-40, 6e-8, 1e5, 70000, np.nan, -np.inf, 1.0009765625, 3.0e-5, 1 + 2**-8, 1 + 2**-7 + 2**-8], f32), rtol=0, atol=0)


def build_batch2(case, x64_enabled):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    if x64_enabled:
        return
    R = np.random.RandomState(99)
    f32 = np.float32
    bf16 = jnp.bfloat16

    def nanify(a, p=0.001, seed=0):
        r = np.random.RandomState(seed)
        a = a.copy()
        a[r.rand(*a.shape) < p] = np.nan
        a[r.rand(*a.shape) < p] = np.inf
        a[r.rand(*a.shape) < p] = -np.inf
        return a

    # ---- fused row reduces (blocks and chunks) ----
    for rows, row in ((3, 7), (64, 1000), (40, 16383), (3, 16384), (3, 16385), (2, 40000), (1, 100003), (5000, 3)):
        X = R.standard_normal((rows, row)).astype(f32)
        XN = nanify(X, 0.0005)
        t = f"{rows}x{row}"
        tol = dict(rtol=1e-4, atol=1e-3 if row > 1000 else 1e-5)
        case(f"fred_row/sum_expr_{t}", lambda x, b: (jnp.sum(x * 2.0 + b, 1), jnp.sum(jnp.exp(x - 1.0), 1), jnp.mean(jnp.square(x - b), 1)),
             X, np.float32(0.5), **tol)
        case(f"fred_row/max_min_expr_{t}", lambda x: (jnp.max(x * -3.0 + 1.0, 1), jnp.min(jnp.abs(x) - 2.0, 1), jnp.max(x, 1, initial=0.25),
                                                     lax.reduce(x + 1.0, np.float32(7.0), lax.add, (1,)), lax.reduce(x * 2.0, np.float32(-0.5), lax.max, (1,))),
             X, **tol)
        case(f"fred_row/nan_{t}", lambda x: (jnp.max(x * 2.0, 1), jnp.min(x + 1.0, 1), jnp.sum(x * 0.5, 1), jnp.argmax(x, 1), jnp.argmin(x * 1.0, 1)),
             XN, **tol)
        case(f"fred_row/softmax_stored_{t}", lambda x: (jax.nn.softmax(x, -1), jax.nn.log_softmax(x * 0.5, -1)), X, **tol)
        case(f"fred_row/layernorm_{t}", lambda x, w: ((x - x.mean(-1, keepdims=True)) * lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)) * w,
             X, (1 + 0.1 * R.standard_normal(row)).astype(f32), **tol)
        case(f"fred_row/strided_operand_{t}", lambda x: (jnp.sum(x[:, ::-1] * 3.0, 1), jnp.max(x[::-1, ::2] + 1.0, 1), jnp.sum(x[:, 1:] - x[:, :-1], 1)),
             X, **tol)
    # ---- fused column reduces (blocks and narrow chunks) ----
    for rows, cols in ((4096, 2), (4097, 3), (5000, 33), (8193, 127), (4100, 128), (300, 129), (2000, 1000), (10000, 1)):
        X = R.standard_normal((rows, cols)).astype(f32)
        XN = nanify(X, 0.0005, seed=rows)
        t = f"{rows}x{cols}"
        tol = dict(rtol=1e-4, atol=1e-3)
        case(f"fred_col/sum_expr_{t}", lambda x, b: (jnp.sum(x * 2.0 + b, 0), jnp.sum(jnp.exp(x - 1.0), 0), jnp.mean(jnp.square(x - b), 0),
                                                    lax.reduce(x + 1.0, np.float32(7.0), lax.add, (0,))),
             X, np.float32(0.5), **tol)
        case(f"fred_col/max_min_{t}", lambda x: (jnp.max(x * -3.0 + 1.0, 0), jnp.min(jnp.abs(x) - 2.0, 0), jnp.max(x, 0, initial=0.25),
                                                lax.reduce(x * 2.0, np.float32(3.5), lax.max, (0,)), lax.reduce(x * 2.0, np.float32(-3.5), lax.min, (0,))),
             X, **tol)
        case(f"fred_col/nan_{t}", lambda x: (jnp.max(x * 2.0, 0), jnp.min(x + 1.0, 0), jnp.sum(x * 0.5, 0), jnp.argmax(x, 0), jnp.argmin(x, 0)),
             XN, **tol)
        case(f"fred_col/softmax0_stored_{t}", lambda x: (jax.nn.softmax(x, 0), x - jnp.max(x, 0)), X, **tol)
        case(f"fred_col/bias_row_{t}", lambda x, b: (jnp.sum((x + b) * (x - b), 0), jnp.max(jnp.where(x > b, x, b), 0)),
             X, R.standard_normal(cols).astype(f32), **tol)
    IMG = R.standard_normal((8, 32, 32, 32)).astype(f32)
    case("fred_col/nhwc_stats", lambda x: (x.mean((0, 1, 2)), x.var((0, 1, 2)), jnp.max(x * 2.0, (0, 1, 2)), (x - x.mean((0, 1, 2))) / jnp.sqrt(x.var((0, 1, 2)) + 1e-5)),
         IMG, rtol=1e-4, atol=1e-4)
    case("fred_col/nhwc_stats_nan", lambda x: (jnp.max(x, (0, 1, 2)), jnp.min(x, (0, 1, 2)), jnp.sum(x, (0, 1, 2))), nanify(IMG, 0.0001, 3), rtol=1e-4, atol=1e-3)
    case("fred_col/all_neg_inf_col", lambda x: (jnp.max(x, 0), jnp.min(-x, 0), jnp.sum(x, 0)),
         np.where(np.arange(5)[None] == 2, -np.inf, R.standard_normal((5000, 5))).astype(f32))
    NN = R.standard_normal((5000, 6)).astype(f32)
    NN[0, 0] = np.nan; NN[2047, 1] = np.nan; NN[2048, 2] = np.nan; NN[4999, 3] = np.nan; NN[4096, 4] = np.nan
    case("fred_col/nan_at_chunk_edges", lambda x: (jnp.max(x, 0), jnp.min(x, 0), jnp.max(x * 1.0 + 0.0, 0), jnp.min(jnp.abs(x), 0)), NN)
    RN = R.standard_normal((6, 40000)).astype(f32)
    RN[0, 0] = np.nan; RN[1, 16383] = np.nan; RN[2, 16384] = np.nan; RN[3, 39999] = np.nan; RN[4, 32768] = np.nan
    case("fred_row/nan_at_chunk_edges", lambda x: (jnp.max(x, 1), jnp.min(x, 1), jnp.max(x * 1.0 + 0.0, 1), jnp.min(jnp.abs(x), 1), jnp.argmax(x, 1)), RN)
    case("fred_row/rank3_outer_inner", lambda x: (x.sum((0, 1)), x.sum(2), x.max((1, 2)), x.sum((0, 2)), (x * 2).max(0)),
         R.standard_normal((64, 70, 33)).astype(f32), rtol=1e-4, atol=1e-4)

    # ---- strided read chains (four-byte types) ----
    for dn, dt in (("f32", f32), ("s32", np.int32), ("u32", np.uint32)):
        A = (R.standard_normal((37, 130)) * 50).astype(dt) if dt == f32 else R.randint(0, 1000, (37, 130)).astype(dt)
        A4 = R.randint(0, 100, (5, 6, 7, 70)).astype(dt)
        two = dt(2)
        case(f"chain/{dn}_slice_rev", lambda x: (x[::2, ::-3][1:, ::-1] * two, x[::-1][2:-3][::-2] + x[2:-3][::-2], x[3:, ::-1][::-1, 5:] - x[:-3, :-5][::-1]), A)
        case(f"chain/{dn}_rev_bcast", lambda x, r: (x[::-1, ::-1] + r, x[:, ::-1] * r[::-1], jnp.where(x[::-1] > r, x[::-1], r[::-1])), A, A[0])
        case(f"chain/{dn}_transpose_small_last", lambda x: (jnp.transpose(x, (0, 2, 1, 3)) + two, jnp.transpose(x, (1, 0, 3, 2)) * two,
                                                           jnp.transpose(x, (3, 2, 1, 0)) + x[0, 0, 0, 0], jnp.transpose(x[:, :, :, :16], (0, 1, 3, 2)) + two,
                                                           jnp.transpose(x[:, :, :, :64], (0, 1, 3, 2)) + two, jnp.transpose(x[:, :, :, :65], (0, 1, 3, 2)) + two), A4)
        case(f"chain/{dn}_transpose_of_strided", lambda x: (jnp.transpose(x[::-1, :, ::2], (0, 2, 1, 3)) + two, jnp.transpose(x, (0, 2, 1, 3))[::-1, 1:] * two,
                                                            jnp.transpose(jnp.transpose(x, (0, 2, 1, 3)), (1, 0, 2, 3)) + two), A4)
        case(f"chain/{dn}_strided_reduce", lambda x: (jnp.sum(x[::-1, ::2] * two, 1), jnp.max(x[:, ::-1][:, 3:], 1), jnp.min(x.T[::-1] + two, 0),
                                                      jnp.sum(x[::3], 0)), A, rtol=1e-5)
        case(f"chain/{dn}_strided_shared", lambda x: (x[::-1] * two, x[::-1] + x[::-1] * x[::-1], x[::-1], (x[::-1] * two)[::-1]), A)
        case(f"chain/{dn}_strided_rank5", lambda x: x[::-1, 1::2, :, ::-2, 3:-1] + x[:, 1::2, ::-1, ::2, :-4], R.randint(0, 100, (3, 5, 4, 7, 9)).astype(dt))
    # ---- iota in fused loops ----
    for dn, dt in (("s32", np.int32), ("u32", np.uint32), ("f32", f32), ("i8", np.int8), ("u8", np.uint8), ("bf16", bf16), ("f16", np.float16), ("i16", np.int16)):
        case(f"iota/{dn}_dims", lambda x, dt=dt: tuple(lax.broadcasted_iota(dt, x.shape, d) + x for d in range(3)) + (jnp.arange(x.shape[2], dtype=dt) * x,),
             np.ones((6, 7, 19), dt))
        case(f"iota/{dn}_big", lambda x, dt=dt: (lax.broadcasted_iota(dt, x.shape, 1) * x + lax.broadcasted_iota(dt, x.shape, 0),
                                                 jnp.where(lax.broadcasted_iota(jnp.int32, x.shape, 1) > 500, x, lax.broadcasted_iota(dt, x.shape, 0))),
             np.ones((131, 1030), dt), rtol=2e-2 if dt in (bf16, np.float16) else 1e-6, atol=0)
    case("iota/masks", lambda x: (jnp.where(jnp.tril(jnp.ones(x.shape, bool)), x, -1e9), jnp.triu(x, 3), jnp.where(jnp.arange(x.shape[1]) % 7 == 3, x, 0.0),
                                  x * (jnp.arange(x.shape[0])[:, None] == jnp.arange(x.shape[1])[None])),
         R.standard_normal((300, 301)).astype(f32))
    case("iota/mod_div_const", lambda: (jnp.arange(100000, dtype=jnp.int32) // 7 % 13, jnp.arange(100000, dtype=jnp.uint32) % 641, -jnp.arange(100000, dtype=jnp.int32) // 3,
                                         (-jnp.arange(100000, dtype=jnp.int32)) % 5, lax.rem(-jnp.arange(100000, dtype=jnp.int32), 9), lax.div(-jnp.arange(1000, dtype=jnp.int32), 6)))
    # ---- Horner chains ----
    for deg in (3, 20, 63, 64, 65, 90):
        cs = R.standard_normal(deg + 1) / np.arange(1, deg + 2) ** 1.5
        cs = cs.astype(f32)
        def horner(x, cs=cs):
            p = jnp.full_like(x, cs[0])
            for c in cs[1:]:
                p = p * x + c
            return p
        def horner_rev(x, cs=cs):
            p = jnp.float32(cs[0]) * x
            for c in cs[1:-1]:
                p = (p + c) * x
            return p + cs[-1]
        case(f"horner/deg{deg}", lambda x, h=horner, h2=horner_rev: (h(x), h2(x), h(x * 0.5) - h(x[::-1]), jnp.sum(h(x), 0)),
             R.uniform(-1, 1, (67, 301)).astype(f32), rtol=1e-4, atol=1e-5)
        case(f"horner/deg{deg}_small", lambda x, h=horner: (h(x), h(jnp.float32(0.3) + x)), R.uniform(-1, 1, (5,)).astype(f32), rtol=1e-4, atol=1e-5)
    case("horner/erf_inv_big", lambda x: (lax.erf_inv(x), jax.scipy.special.ndtri((x + 1) / 2), jax.scipy.special.erf(x * 3), jnp.tanh(x * 5)),
         R.uniform(-0.999, 0.999, (131, 517)).astype(f32), rtol=1e-4, atol=1e-5)
    # ---- threads: big elementwise with broadcasts, odd sizes ----
    for shp in ((1023, 1025), (3, 1000003), (1000003, 2), (129, 130, 67)):
        X = R.standard_normal(shp).astype(f32)
        case(f"big/{'x'.join(map(str, shp))}", lambda x: (x * x[..., :1] + x[:1] - jnp.max(x, -1, keepdims=True), jnp.where(x > 0, x, x[..., ::-1]),
                                                          jnp.sum(jnp.tanh(x), -1)[..., :50], jnp.argmax(x, 0).ravel()[:100]), X, rtol=1e-4, atol=1e-4)
    # ---- mixed-size registers in one loop ----
    I = R.randint(-50, 50, (131, 517)).astype(np.int32)
    Xf = R.standard_normal((131, 517)).astype(f32)
    case("regs/mixed_pred_f32_s32", lambda x, i: tuple([(lambda m: jnp.where(m, x * 2.0, (i * 3).astype(f32)) + m.astype(f32) - jnp.where(~m & (i > 0), 1.0, x))(i > x * 10),
                                                        jnp.where((i % 3 == 0) | (x > 0.5), i.astype(f32), -x) * jnp.where(i > 0, 2.0, 3.0),
                                                        jnp.clip(x, -0.5, 0.5) + jnp.clip(x, x[:1], x[:, :1]) * (i > 0)]), Xf, I, rtol=1e-6)
    def dag(x, n=40):
        vals = [x, x * 1.5, jnp.sin(x)]
        for k in range(n):
            a, b = vals[(k * 7) % len(vals)], vals[(k * 3 + 1) % len(vals)]
            vals.append(jnp.where(a > b, a - b * 0.5, a * 0.25 + b) if k % 3 == 0 else (a * b + 0.1 if k % 3 == 1 else jnp.maximum(a, -b)))
        return sum(vals[-10:])
    case("regs/deep_dag", dag, Xf, rtol=1e-4, atol=1e-4)
    case("regs/deep_dag_bf16", dag, Xf.astype(bf16), rtol=5e-2, atol=5e-2)
    case("regs/many_inputs", lambda *xs: sum(x * (k + 1) for k, x in enumerate(xs)) + jnp.prod(jnp.stack(xs[:5]), 0),
         *[R.standard_normal((33, 129)).astype(f32) for _ in range(20)], rtol=1e-5, atol=1e-5)
    case("regs/select_scalars", lambda x, m: (jnp.where(m, 1.0, 2.0), jnp.where(m, x, 0.0), jnp.where(m, 0.0, x), jnp.where(m, -1, 7), jnp.where(m, jnp.float32(np.nan), x),
                                              jnp.where(x > 0, jnp.where(m, 3.0, x), jnp.where(m, x, 4.0))), Xf, R.rand(131, 517) > 0.5)
    case("regs/bf16_pairs", lambda a, b, c: (a * b + c, (a - b) * c, a * b - c * a, (a + b) * (a - b), jnp.maximum(a * b, c) + a / (jnp.abs(c) + bf16(1))),
         *[R.standard_normal((131, 517)).astype(bf16) for _ in range(3)], rtol=3e-2, atol=3e-2)
    case("regs/narrow_int_chain", lambda a, b: ((a * 3 + b) >> 1, (a ^ b) & 0x3f, jnp.where(a > b, a - b, b - a), (a.astype(np.int16) * b).astype(np.int8),
                                                (a > 0) & (b < 0) | (a == b)), R.randint(-128, 128, (131, 517)).astype(np.int8), R.randint(-128, 128, (131, 517)).astype(np.int8))
    case("regs/u8_u16_chain", lambda a, b: (a + b, a * b, a - b, a // (b | 1), a % (b | 1), jnp.maximum(a, b), a > b, (a.astype(np.uint16) << 8) | b.astype(np.uint16)),
         R.randint(0, 256, (131, 517)).astype(np.uint8), R.randint(0, 256, (131, 517)).astype(np.uint8))
    case("regs/convert_chain", lambda x: ((x * 100).astype(np.int32).astype(f32) / 100, (x * 100).astype(np.int8).astype(bf16), (x > 0).astype(np.int32) * 5 + (x < 0),
                                          (x * 1000).astype(np.float16).astype(np.int16), x.astype(bf16).astype(np.float16).astype(f32)), Xf, rtol=1e-6)


def build_batch3(case, x64_enabled):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    R = np.random.RandomState(7)
    f32 = np.float32
    bf16 = jnp.bfloat16
    if x64_enabled:
        F = (R.standard_normal((67, 131)) * np.exp(R.uniform(0, 50, (67, 131)))).astype(f32)
        F[0, :8] = [np.nan, np.inf, -np.inf, -1.5, 9.3e18, 1.9e19, -9.3e18, 4.3e9]
        case("x64fused/f32_to_s64_u64_sat", lambda x: ((x * 1.0).astype(jnp.int64) + 1, (x * 1.0).astype(jnp.uint64) * np.uint64(3),
                                                       (x + 0.0).astype(jnp.int32) - 1, (x + 0.0).astype(jnp.uint32) + np.uint32(1)), F, x64=True)
        U = R.randint(0, 2**32, (67, 131), dtype=np.int64).astype(np.uint32)
        V = R.randint(0, 2**32, (67, 131), dtype=np.int64).astype(np.uint32)
        case("x64fused/u32_pack_u64", lambda a, b: (((a.astype(jnp.uint64) << np.uint64(32)) | b.astype(jnp.uint64)) >> np.uint64(7),
                                                    ((a.astype(jnp.uint64) * b.astype(jnp.uint64)) >> np.uint64(32)).astype(jnp.uint32),
                                                    (a.astype(jnp.int64) - b.astype(jnp.int64)).astype(jnp.int32),
                                                    (a.astype(jnp.uint64) * np.uint64(0x9E3779B97F4A7C15)).astype(jnp.float32),
                                                    (a.astype(jnp.int64) - 2**31).astype(jnp.float64) / 3), U, V, x64=True)
        S = R.randint(-2**62, 2**62, (67, 131), dtype=np.int64)
        case("x64fused/s64_divrem_const", lambda s: (s // 7, s % 7, lax.div(s, np.int64(-3)), lax.rem(s, np.int64(1000000007)), s // np.int64(2**33), s >> 40, s.astype(jnp.int32)),
             S, x64=True)
        case("x64fused/s64_select_f32", lambda s, x: (jnp.where(s > 0, x, -x), jnp.where(s % 2 == 0, s, -s), (s > 0).astype(jnp.float32) * jnp.nan_to_num(x, posinf=0.0, neginf=0.0), s.astype(jnp.float32) * x), S, F, x64=True)
        case("x64fused/s64_scalar_splat", lambda s, c: (s + c, s * c, jnp.where(s > c, c, s), s - c // 3), S, np.int64(-2**40 - 17), x64=True)
        case("x64fused/u64_scalar_splat", lambda s, c: (s + c, s * c, jnp.maximum(s, c), s > c), S.astype(np.uint64), np.uint64(2**63 + 12345), x64=True)
        case("x64fused/threefry_big", lambda k: (jax.random.bits(jax.random.key(k), (1000, 1003)), jax.random.uniform(jax.random.key(k), (3, 100001))[:, ::997]), np.int64(5), x64=True)
        case("x64fused/iota_s64", lambda x: (jnp.arange(x.shape[1], dtype=jnp.int64) * x + jnp.arange(x.shape[0], dtype=jnp.int64)[:, None] * (2**40),
                                             lax.broadcasted_iota(jnp.uint64, x.shape, 1) * np.uint64(2**35)), S, x64=True)
        case("x64fused/f64_chain", lambda a, b: (jnp.exp(a) * b - jnp.log1p(jnp.abs(b)), jnp.where(a > b, a, b) / (b * b + 1), jnp.sum(a * b, 1), jnp.max(a - b, 0)),
             R.standard_normal((67, 1031)), R.standard_normal((67, 1031)), x64=True, rtol=1e-12, atol=1e-12)
        return
    # ---- transposes / reverses / concats of every element size ----
    dts = {"i8": np.int8, "u8": np.uint8, "pred": np.bool_, "i16": np.int16, "f16": np.float16, "bf16": bf16, "f32": f32, "i32": np.int32, "c64": np.complex64}

    def mk(dt, shape):
        if dt == np.bool_:
            return R.rand(*shape) > 0.5
        if np.dtype(dt).kind in "iu":
            return R.randint(0, 100, shape).astype(dt)
        if dt == np.complex64:
            return (R.standard_normal(shape) + 1j * R.standard_normal(shape)).astype(dt)
        return R.standard_normal(shape).astype(dt)

    for dn, dt in dts.items():
        A = mk(dt, (17, 1025))
        B = mk(dt, (3, 5, 7, 9))
        C = mk(dt, (33, 65, 3))
        case(f"move/{dn}_t2d", lambda a: (a.T, a[::-1].T, a.T[::-1, 1::3], jnp.flip(a, 1), jnp.roll(a, 5, 1)), A)
        case(f"move/{dn}_t4d", lambda b: tuple(jnp.transpose(b, p) for p in ((3, 2, 1, 0), (0, 2, 1, 3), (1, 3, 0, 2), (2, 0, 3, 1), (0, 1, 3, 2))), B)
        case(f"move/{dn}_t3d_small_last", lambda c: (jnp.transpose(c, (1, 0, 2)), jnp.transpose(c, (2, 1, 0)), jnp.transpose(c, (0, 2, 1)), c[:, ::-1, ::-1]), C)
        case(f"move/{dn}_concat_pad", lambda a, c: (jnp.concatenate([a[:, :3], a[:, 7:], a[:, 1:2]], 1), jnp.concatenate([a, a[::-1]], 0),
                                                   jnp.pad(c, ((1, 2), (0, 3), (2, 0))), lax.pad(c, jnp.zeros((), c.dtype), ((1, -2, 1), (0, 0, 2), (-1, 1, 0))),
                                                   jnp.tile(c[:2, :2], (2, 1, 3)), jnp.repeat(c[:3], 2, axis=2)), A, C)
        case(f"move/{dn}_gather_scatter", lambda a, i: (a[i % 17], a[:, i * 7 % 1025], a.at[i % 17].set(a[0]), jnp.take(a, i, axis=1, mode="clip"),
                                                       lax.dynamic_update_slice(a, a[:3, :5], (np.int32(15), np.int32(1022))),
                                                       lax.dynamic_slice(a, (np.int32(16), np.int32(1023)), (2, 3))),
             A, R.randint(-20, 2000, 13).astype(np.int32))
        if dt != np.complex64:
            S = mk(dt, (5, 33)).copy()
            if np.dtype(dt).kind == "f" or dt == bf16:
                S[0, :6] = np.array([np.nan, -0.0, 0.0, -np.inf, np.inf, -np.nan], f32).astype(dt)
            case(f"sortlike/{dn}", lambda s: (jnp.sort(s, 1), jnp.argsort(s, 1, stable=True), jnp.sort(s, 0, descending=True), lax.top_k(s, 4),
                                             jnp.argmax(s, 1), jnp.argmin(s, 0), lax.cummax(s, 1) if s.dtype != jnp.bool_ else s, lax.cummin(s, 0) if s.dtype != jnp.bool_ else s), S)
            case(f"scatter/{dn}", lambda s, i: (s.at[:, i].max(s[:, ::-1][:, :7]), s.at[:, i].min(s[:, :7]), s.at[i % 5].set(s[0, 0]),
                                               jnp.zeros_like(s).at[:, i].add(s[:, :7]) if s.dtype != jnp.bool_ else s.at[:, i].set(True)),
                 S, np.array([0, 3, 3, 32, 7, 0, 31], np.int32), rtol=2e-2, atol=2e-2)
    # sort with -0.0/NaN f32 total order; and keys/values
    Z = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, np.inf, -np.inf, 0.0, -0.0], f32)
    case("sortlike/f32_signed_zero_bits", lambda z: lax.bitcast_convert_type(jnp.sort(z), jnp.uint32), Z)
    case("sortlike/bf16_signed_zero_bits", lambda z: lax.bitcast_convert_type(jnp.sort(z.astype(bf16)), jnp.uint16), Z)
    case("sortlike/f16_signed_zero_bits", lambda z: lax.bitcast_convert_type(jnp.sort(z.astype(np.float16)), jnp.uint16), Z)
    case("sortlike/minmax_signed_zero_bits", lambda a, b: (lax.bitcast_convert_type(jnp.maximum(a, b), jnp.uint32), lax.bitcast_convert_type(jnp.minimum(a, b), jnp.uint32)),
         np.array([0.0, -0.0, 0.0, -0.0], f32), np.array([-0.0, 0.0, 0.0, -0.0], f32))
    case("sortlike/neg_zero_arith_bits", lambda a: (lax.bitcast_convert_type(a * 0.0, jnp.uint32), lax.bitcast_convert_type(-a, jnp.uint32),
                                                    lax.bitcast_convert_type(a + (-0.0), jnp.uint32), lax.bitcast_convert_type(a - a, jnp.uint32),
                                                    lax.bitcast_convert_type(jnp.abs(a), jnp.uint32), lax.bitcast_convert_type(jnp.round(a), jnp.uint32),
                                                    lax.bitcast_convert_type(jnp.floor(a * -1e-3), jnp.uint32), lax.bitcast_convert_type(jnp.sqrt(-0.0 * jnp.abs(a)), jnp.uint32)),
         np.array([-0.0, 0.0, -1.0, 1.0, -0.3, 0.3], f32))
    case("sortlike/neg_zero_bf16_bits", lambda a: (lax.bitcast_convert_type(a * bf16(0.0), jnp.uint16), lax.bitcast_convert_type(-a, jnp.uint16),
                                                   lax.bitcast_convert_type(a - a, jnp.uint16), lax.bitcast_convert_type(jnp.round(a), jnp.uint16),
                                                   lax.bitcast_convert_type(jnp.ceil(a), jnp.uint16)), np.array([-0.0, 0.0, -1.0, 1.0, -0.3, 0.3], bf16))
    # low-precision elementwise math on big arrays (fused bf16 math in f32)
    for dn, dt, tol in (("bf16", bf16, dict(rtol=2e-2, atol=1e-2)), ("f16", np.float16, dict(rtol=2e-3, atol=1e-3))):
        X = R.uniform(-4, 4, (131, 517)).astype(dt)
        P = R.uniform(0.01, 10, (131, 517)).astype(dt)
        case(f"lpmath/{dn}_unary", lambda x, p: (jnp.exp(x), jnp.tanh(x), jnp.log(p), jnp.sqrt(p), lax.rsqrt(p), jax.nn.sigmoid(x), jnp.sin(x), jnp.cos(x),
                                                jnp.log1p(p), jnp.expm1(x), lax.logistic(x), jnp.floor(x), jnp.round(x), jnp.sign(x), jnp.abs(x), x * x, 1 / p),
             X, P, **tol)
        case(f"lpmath/{dn}_binary", lambda x, p: (x + p, x * p, x / p, jnp.maximum(x, p), jnp.minimum(x, -p), x ** 2, jnp.power(p, x * 0.5), jnp.arctan2(x, p),
                                                 jnp.fmod(x, p), jnp.where(x > p * 0.1, x, p), jnp.clip(x, -1, 1)), X, P, **tol)
        case(f"lpmath/{dn}_special", lambda x: (jnp.exp(x), jnp.log(x), jnp.tanh(x), jnp.sqrt(x), x * 0, x / x, jnp.maximum(x, 0), jnp.minimum(x, 0)),
             np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-3, 60000, -60000, 300, -300], f32).astype(dt), **tol)


def build_batch4(case, x64_enabled):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    if x64_enabled:
        return
    R = np.random.RandomState(11)
    bf16 = jnp.bfloat16
    for dn, dt, tol in (("bf16", bf16, dict(rtol=6e-2, atol=6e-2)), ("f16", np.float16, dict(rtol=6e-3, atol=6e-3)), ("f32", np.float32, dict(rtol=1e-5, atol=1e-5))):
        X = R.standard_normal((6, 17, 9, 33)).astype(dt)
        for axes in ((0,), (1,), (2,), (3,), (0, 2), (1, 3), (1, 2), (0, 3)):
            an = "".join(map(str, axes))
            case(f"norm4/{dn}_{an}", lambda x, axes=axes: (lambda m, v, mx: ((x - m) * lax.rsqrt(v + 1e-5), m, x - mx, jnp.where(x > m, x, mx), (x == mx)))(
                x.mean(axes, keepdims=True), x.var(axes, keepdims=True), x.max(axes, keepdims=True)), X, **tol)
    I8 = R.randint(-100, 100, (6, 17, 9, 33)).astype(np.int8)
    for axes in ((0,), (1,), (3,), (1, 2)):
        an = "".join(map(str, axes))
        case(f"norm4/i8_{an}", lambda x, axes=axes: (lambda mx, mn: (x - mx, jnp.where(x > mn + 5, x, mn), x == mx, (x > mn) & (x < mx)))(
            x.max(axes, keepdims=True), x.min(axes, keepdims=True)), I8)
        case(f"norm4/pred_{an}", lambda x, axes=axes: (lambda a, o: (x & a, x | o, jnp.where(a, x, ~o), a ^ o))(
            jnp.all(x > -90, axes, keepdims=True), jnp.any(x > 95, axes, keepdims=True)), I8)


def build(case, x64_enabled):
    build_new_cases(case, x64_enabled)
    build_batch2(case, x64_enabled)
    build_batch3(case, x64_enabled)
    build_batch4(case, x64_enabled)
