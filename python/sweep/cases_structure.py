"""Sweep cases: indexing (gathers and scatters in every jnp and lax form,
out-of-bounds and negative indices, modes, batching dims), control flow
(loops with mixed carries, cond and switch, scans, remat, grads and vmaps
of them), data movement (concatenate, pad, transposes of rank 5-6, einsum,
dot_general, convolutions of every layout and grouping, reduce-window,
cumulative ops) and buffer semantics through jit (donation, aliasing,
many outputs). Registered by jax_sweep.py.
"""
import itertools


def build(case, x64_enabled):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    R = np.random.RandomState(1)
    f32 = np.float32
    bf16 = jnp.bfloat16
    X = R.standard_normal((4, 5)).astype(f32)
    A3 = R.standard_normal((3, 4, 5)).astype(f32)
    V = R.standard_normal((8,)).astype(f32)
    I32 = R.randint(-20, 20, (4, 5)).astype(np.int32)
    I3 = R.randint(-50, 50, (3, 4, 5)).astype(np.int32)
    LT = 1e-4

    # =====================================================================
    # INDEXING
    # =====================================================================
    i4 = np.array([3, 0, 2, 2, -1, -4], np.int32)
    case("ix/getitem_rows", lambda x, i: x[i], X, i4)
    case("ix/getitem_cols", lambda x, i: x[:, i], X, i4)
    case("ix/getitem_mid_axis", lambda x, i: x[:, i], A3, i4)
    case("ix/getitem_last_axis", lambda x, i: x[..., i], A3, np.array([4, 0, -5, 1], np.int32))
    case("ix/getitem_pair", lambda x, i, j: x[i, j], X, np.array([0, 3, -1, 2], np.int32), np.array([4, 0, 1, -2], np.int32))
    case("ix/getitem_pair_bcast", lambda x, i, j: x[i[:, None], j[None, :]], X, np.array([0, 3, -1], np.int32), np.array([4, 0, 1, -2], np.int32))
    case("ix/getitem_nonadjacent", lambda x, i, j: x[i, :, j], A3, np.array([0, 2, 1], np.int32), np.array([4, 0, 3], np.int32))
    case("ix/getitem_slice_and_idx", lambda x, i: x[1:3, i, ::2], A3, np.array([3, 1], np.int32))
    case("ix/getitem_2d_index", lambda x, i: x[i], X, np.array([[0, 1], [3, 3], [-1, 2]], np.int32))
    case("ix/getitem_int_and_array", lambda x, i: x[2, i], A3, np.array([0, 3, 3], np.int32))
    case("ix/getitem_none_ellipsis", lambda x, i: x[None, ..., i, None], A3, np.array([1, 4], np.int32))
    case("ix/getitem_scalar_traced", lambda x, i: (x[i], x[:, i], x[i, i]), X, np.int32(2))
    case("ix/getitem_scalar_traced_neg", lambda x, i: (x[i], x[:, i]), X, np.int32(-2))
    case("ix/getitem_oob_default", lambda v, i: v[i], V, np.array([100, -100, 7, -9], np.int32))
    case("ix/getitem_uint_idx", lambda v, i: v[i], V, np.array([7, 0, 3], np.uint32))
    case("ix/getitem_int8_idx", lambda v, i: v[i], V, np.array([7, 0, -3], np.int8))
    case("ix/getitem_int16_idx", lambda x, i: x[:, i], X, np.array([4, -5, 2], np.int16))
    case("ix/getitem_bool_data", lambda x, i: x[i], X > 0, np.array([3, 1], np.int32))
    case("ix/getitem_bf16", lambda x, i: x[:, i], X.astype(bf16), np.array([3, 1, 0], np.int32))
    case("ix/getitem_int8_data", lambda x, i: x[i], I32.astype(np.int8), np.array([3, 1, 1], np.int32))
    case("ix/getitem_rank1_of_rank3", lambda x, i, j, k: x[i, j, k], A3, np.array([0, 2, 1, 1], np.int32),
         np.array([3, 0, 1, 2], np.int32), np.array([4, 4, 0, 1], np.int32))
    case("ix/getitem_empty_idx_2d", lambda x, i: x[:, i], X, np.zeros((0,), np.int32))

    # .at[] modes
    oob = np.array([1, 9, -1, -12, 4, 4], np.int32)
    for mode in ("clip", "fill", "drop", "promise_in_bounds"):
        if mode == "promise_in_bounds":
            ii = np.array([1, 7, 3, 4, 4, 0], np.int32)
        else:
            ii = oob
        if mode != "drop":
            case(f"ix/at_get_{mode}", lambda v, i, m=mode: v.at[i].get(mode=m), V, ii)
            case(f"ix/at_get_{mode}_2d", lambda x, i, m=mode: x.at[:, i].get(mode=m), X, ii)
        for op in ("add", "mul", "min", "max"):
            def f(v, i, m=mode, op=op):
                u = jnp.arange(6.0, dtype=v.dtype) - 2.5
                ref = v.at[i]
                return {"add": ref.add, "mul": ref.multiply, "min": ref.min, "max": ref.max}[op](u, mode=m)
            case(f"ix/at_{op}_{mode}", f, V, ii, rtol=LT)
        case(f"ix/at_set_{mode}_unique", lambda v, i, m=mode: v.at[i].set(jnp.arange(2.0) + 10, mode=m), V,
             np.array([2, 12] if mode != "promise_in_bounds" else [2, 5], np.int32))
    case("ix/at_get_fill_neg", lambda v, i: v.at[i].get(mode="fill", fill_value=7.0), V, np.array([-1, -8, -9, 8], np.int32))
    case("ix/at_get_fill_int_default", lambda v, i: v.at[i].get(mode="fill"), np.arange(8, dtype=np.int32), np.array([-9, 8, 3], np.int32))
    case("ix/at_get_fill_bool_default", lambda v, i: v.at[i].get(mode="fill"), np.ones(8, bool), np.array([-9, 8, 3], np.int32))
    case("ix/at_set_2d_rows", lambda x, i: x.at[i].set(-1.0), X, np.array([0, 3], np.int32))
    case("ix/at_set_2d_pair", lambda x, i, j: x.at[i, j].set(jnp.arange(3.0)), X, np.array([0, 3, 1], np.int32), np.array([4, 0, 2], np.int32))
    case("ix/at_add_2d_cols_dups", lambda x, i: x.at[:, i].add(jnp.ones((4, 4), jnp.int32)), I32, np.array([0, 3, 3, 0], np.int32))
    case("ix/at_add_int_dups", lambda v, i: v.at[i].add(jnp.arange(6, dtype=jnp.int32)), np.arange(8, dtype=np.int32), np.array([1, 1, 1, 7, 7, 0], np.int32))
    case("ix/at_min_int_dups", lambda v, i: v.at[i].min(jnp.array([5, -3, 2, 9, -7, 0], jnp.int32)), np.arange(8, dtype=np.int32), np.array([1, 1, 1, 7, 7, 0], np.int32))
    case("ix/at_max_int_dups", lambda v, i: v.at[i].max(jnp.array([5, -3, 20, 9, -7, 0], jnp.int32)), np.arange(8, dtype=np.int32), np.array([1, 1, 1, 7, 7, 0], np.int32))
    case("ix/at_mul_int_dups", lambda v, i: v.at[i].multiply(jnp.array([2, 3, -1, 2, 2, 5], jnp.int32)), np.arange(1, 9, dtype=np.int32), np.array([1, 1, 1, 7, 7, 0], np.int32))
    case("ix/at_add_bf16", lambda v, i: v.at[i].add(jnp.ones(3, bf16)), V.astype(bf16), np.array([0, 2, 5], np.int32), rtol=2e-2, atol=1e-2)
    case("ix/at_max_bool", lambda v, i: v.at[i].max(True), np.zeros(8, bool), np.array([0, 2, 5, 5], np.int32))
    case("ix/at_min_bool", lambda v, i: v.at[i].min(False), np.ones(8, bool), np.array([0, 2, 5, 5], np.int32))
    case("ix/at_add_uint8_wrap", lambda v, i: v.at[i].add(jnp.uint8(200)), np.full(6, 100, np.uint8), np.array([0, 0, 3], np.int32))
    case("ix/at_add_unique_hint", lambda v, i: v.at[i].add(jnp.arange(3.0), unique_indices=True), V, np.array([6, 0, 3], np.int32))
    case("ix/at_set_unique_sorted_hint", lambda v, i: v.at[i].set(jnp.arange(3.0), unique_indices=True, indices_are_sorted=True), V, np.array([0, 3, 6], np.int32))
    case("ix/at_get_sorted_hint", lambda v, i: v.at[i].get(indices_are_sorted=True, unique_indices=True), V, np.array([0, 3, 6], np.int32))
    case("ix/at_add_scalar_idx", lambda x, i: x.at[i, 2].add(100.0), X, np.int32(-1))
    case("ix/at_set_slice_dyn", lambda x, i: x.at[i, 1:4].set(jnp.array([7.0, 8.0, 9.0])), X, np.int32(2))
    case("ix/at_set_rank3_mixed", lambda x, i: x.at[1, i, ::2].set(0.0), A3, np.array([0, 2], np.int32))
    case("ix/at_add_empty_idx", lambda v, i: v.at[i].add(1.0), V, np.zeros((0,), np.int32))
    case("ix/at_set_broadcast_upd", lambda x, i: x.at[i].set(jnp.arange(5.0)), X, np.array([0, 2], np.int32))
    case("ix/at_add_all_dups_float_ints", lambda v, i: v.at[i].add(jnp.ones(50)), np.zeros(4, f32), np.full(50, 2, np.int32))

    # take / take_along_axis
    ti = np.array([[0, 2], [1, 1], [4, 3]], np.int32)
    for ax in (0, 1, 2, -1, None):
        idx = np.array([2, 0, 1, 1], np.int32) if ax is not None else np.array([59, 0, 13, 13], np.int32)
        case(f"ix/take_ax{ax}", lambda x, i, a=ax: jnp.take(x, i, axis=a), A3, idx)
        case(f"ix/take_ax{ax}_2didx", lambda x, i, a=ax: jnp.take(x, i, axis=a), A3, ti % 3 if ax is not None else ti)
    case("ix/take_mode_clip", lambda x, i: jnp.take(x, i, axis=1, mode="clip"), X, np.array([-3, 9, 2], np.int32))
    case("ix/take_mode_wrap", lambda x, i: jnp.take(x, i, axis=1, mode="wrap"), X, np.array([-3, 9, 2], np.int32))
    case("ix/take_mode_fill", lambda x, i: jnp.take(x, i, axis=1, mode="fill", fill_value=-2.0), X, np.array([-3, 9, 2, -5], np.int32))
    for ax in (0, 1, 2):
        sh = list(A3.shape)
        sh[ax] = 2
        idx = R.randint(0, A3.shape[ax], sh).astype(np.int32)
        case(f"ix/take_along_ax{ax}", lambda x, i, a=ax: jnp.take_along_axis(x, i, axis=a), A3, idx)
        case(f"ix/take_along_ax{ax}_neg", lambda x, i, a=ax: jnp.take_along_axis(x, i - A3.shape[a], axis=a), A3, idx)
        case(f"ix/take_along_ax{ax}_int", lambda x, i, a=ax: jnp.take_along_axis(x, i, axis=a), I3, idx)
    case("ix/take_along_bcast", lambda x, i: jnp.take_along_axis(x, i, axis=2), A3, np.array([[[4, 0]]], np.int32))
    case("ix/take_along_fill", lambda x, i: jnp.take_along_axis(x, i, axis=1, mode="fill", fill_value=-9.0), X, np.array([[0, 9], [-1, 2], [5, 4], [1, 1]], np.int32))
    case("ix/put_along_axis", lambda x, i: jnp.put_along_axis(x, i, -1.0, axis=1, inplace=False), X, np.array([[0], [4], [2], [2]], np.int32))

    # dynamic_slice / dus
    for s0, s1 in ((0, 0), (2, 3), (-1, -1), (10, 10), (-10, 2), (3, -7)):
        case(f"ix/dslice_{s0}_{s1}", lambda x, a, b: lax.dynamic_slice(x, (a, b), (2, 3)), X, np.int32(s0), np.int32(s1))
        case(f"ix/dus_{s0}_{s1}", lambda x, a, b: lax.dynamic_update_slice(x, jnp.full((2, 3), 9.0), (a, b)), X, np.int32(s0), np.int32(s1))
    case("ix/dslice_rank3_mixed_dtypes", lambda x, a, b: lax.dynamic_slice(x, (a, b, np.int32(1)), (2, 2, 3)), A3, np.int32(2), np.int32(3))
    case("ix/dslice_int8_start", lambda x, a: lax.dynamic_slice(x, (a, a), (2, 2)), X, np.int8(3))
    case("ix/dslice_uint32_start", lambda x, a: lax.dynamic_slice(x, (a, a), (2, 2)), X, np.uint32(4000000000))
    case("ix/dslice_full", lambda x, a: lax.dynamic_slice(x, (a, a), (4, 5)), X, np.int32(2))
    case("ix/dus_full", lambda x, a: lax.dynamic_update_slice(x, -x, (a, a)), X, np.int32(1))
    case("ix/dus_bf16", lambda x, a: lax.dynamic_update_slice(x, jnp.ones((1, 2), bf16), (a, a)), X.astype(bf16), np.int32(3))
    case("ix/dus_bool", lambda x, a: lax.dynamic_update_slice(x, jnp.ones((2, 2), bool), (a, a + 2)), X > 0, np.int32(1))
    case("ix/dus_zero_size_update", lambda x, a: lax.dynamic_update_slice(x, jnp.zeros((0, 2)), (a, a)), X, np.int32(1))
    case("ix/dynamic_slice_in_dim_neg", lambda x, a: lax.dynamic_slice_in_dim(x, a, 2, axis=1), A3, np.int32(-2))
    case("ix/dynamic_update_index_in_dim", lambda x, a: lax.dynamic_update_index_in_dim(x, jnp.zeros((3, 5)), a, 1), A3, np.int32(3))
    case("ix/dslice_in_scan_clamp", lambda x: lax.scan(lambda c, i: (c, lax.dynamic_slice(x, (i, i), (2, 2))), 0.0, jnp.arange(-2, 7))[1], X)

    # lax.gather / scatter with unusual dimension numbers
    GD = lax.GatherDimensionNumbers
    SD = lax.ScatterDimensionNumbers
    B = R.standard_normal((3, 6, 4)).astype(f32)
    bidx = np.array([[1], [5], [0]], np.int32)  # per-batch index into dim 1
    case("ix/lax_gather_batching_dims",
         lambda x, i: lax.gather(x, i, GD(offset_dims=(1,), collapsed_slice_dims=(1,), start_index_map=(1,),
                                          operand_batching_dims=(0,), start_indices_batching_dims=(0,)),
                                 slice_sizes=(1, 1, 4), mode="clip"), B, bidx)
    bidx2 = np.array([[[1], [2]], [[5], [0]], [[3], [3]]], np.int32)  # (3,2,1)
    case("ix/lax_gather_batching_dims_2",
         lambda x, i: lax.gather(x, i, GD(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,),
                                          operand_batching_dims=(0,), start_indices_batching_dims=(0,)),
                                 slice_sizes=(1, 1, 4), mode="clip"), B, bidx2)
    case("ix/lax_gather_batch_dim_last",
         lambda x, i: lax.gather(x, i, GD(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                                          operand_batching_dims=(0, 2), start_indices_batching_dims=(1, 0)),
                                 slice_sizes=(1, 1, 1), mode="clip"), B, R.randint(0, 6, (4, 3, 1)).astype(np.int32))
    case("ix/lax_gather_index_vector_dim_0",
         lambda x, i: lax.gather(x, i, GD(offset_dims=(1,), collapsed_slice_dims=(0, 1), start_index_map=(1, 0)),
                                 slice_sizes=(1, 1, 2), mode="clip"), B, np.array([[1, 2, 5], [0, 2, 1]], np.int32).T.copy())
    case("ix/lax_gather_window",
         lambda x, i: lax.gather(x, i, GD(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0, 2)),
                                 slice_sizes=(1, 3, 2), mode="clip"), B, np.array([[0, 0], [2, 3], [1, 2]], np.int32))
    case("ix/lax_gather_window_fill",
         lambda x, i: lax.gather(x, i, GD(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0, 2)),
                                 slice_sizes=(1, 3, 2), mode="fill", fill_value=-1.0), B, np.array([[0, 0], [2, 3], [1, 2], [3, 0]], np.int32))
    case("ix/lax_gather_offset_dims_front",
         lambda x, i: lax.gather(x, i, GD(offset_dims=(0,), collapsed_slice_dims=(0, 1), start_index_map=(0, 1)),
                                 slice_sizes=(1, 1, 4), mode="clip"), B, np.array([[0, 0], [2, 3], [1, 5]], np.int32))
    case("ix/lax_gather_scalar_index_vec",
         lambda x, i: lax.gather(x, i[..., None], GD(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)),
                                 slice_sizes=(1,), mode="clip"), V, np.array([[1, 2], [7, 0]], np.int32))
    case("ix/lax_scatter_add_batching_dims",
         lambda x, i, u: lax.scatter_add(x, i, u, SD(update_window_dims=(1,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
                                                    operand_batching_dims=(0,), scatter_indices_batching_dims=(0,)), mode="clip"),
         B, bidx, np.ones((3, 4), f32))
    case("ix/lax_scatter_batching_dims_2",
         lambda x, i, u: lax.scatter_add(x, i, u, SD(update_window_dims=(2,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
                                                    operand_batching_dims=(0,), scatter_indices_batching_dims=(0,)), mode="clip"),
         B, bidx2, R.standard_normal((3, 2, 4)).astype(f32), rtol=LT)
    case("ix/lax_scatter_window",
         lambda x, i, u: lax.scatter(x, i, u, SD(update_window_dims=(1, 2), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0, 2)),
                                     mode="clip", unique_indices=True), B, np.array([[0, 0], [2, 2]], np.int32), R.standard_normal((2, 6, 2)).astype(f32))
    case("ix/lax_scatter_window_drop",
         lambda x, i, u: lax.scatter_add(x, i, u, SD(update_window_dims=(1, 2), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0, 2)),
                                         mode="drop"), B, np.array([[0, 0], [2, 3], [1, -1], [3, 0]], np.int32), R.standard_normal((4, 6, 2)).astype(f32))
    case("ix/lax_scatter_mul_window",
         lambda x, i, u: lax.scatter_mul(x, i, u, SD(update_window_dims=(1,), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1)),
                                         mode="clip"), B, np.array([[0, 0], [0, 0], [2, 5]], np.int32), R.standard_normal((3, 4)).astype(f32), rtol=LT)
    case("ix/lax_scatter_apply", lambda x, i: lax.scatter_apply(x, i, jnp.exp, SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)), update_shape=(2,), mode="clip"),
         V, np.array([[1], [4]], np.int32), rtol=LT)
    case("ix/scatter_update_window_dims_middle",
         lambda x, i, u: lax.scatter_add(x, i, u, SD(update_window_dims=(0, 2), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,)), mode="clip"),
         B, np.array([[1], [4]], np.int32), np.ones((3, 2, 4), f32))

    # segment ops
    seg = np.array([0, 2, 2, 1, 4, 4, 4, 0], np.int32)
    segi = np.array([3, -1, 2, 1, 0, 7, 4, 0], np.int32)
    case("ix/segment_sum_2d", lambda x, s: jax.ops.segment_sum(x, s, 5), R.standard_normal((8, 3)).astype(f32), seg, rtol=LT)
    case("ix/segment_sum_oob_ids", lambda x, s: jax.ops.segment_sum(x, s, 5), V, segi, rtol=LT)
    case("ix/segment_max_empty_segs", lambda x, s: jax.ops.segment_max(x, s, 6), V, seg)
    case("ix/segment_min_int", lambda x, s: jax.ops.segment_min(x, s, 6), np.arange(8, dtype=np.int32) * 3 - 10, seg)
    case("ix/segment_max_int_oob", lambda x, s: jax.ops.segment_max(x, s, 5), np.arange(8, dtype=np.int32) * 3 - 10, segi)
    case("ix/segment_sum_int_nseg_none_sorted", lambda x, s: jax.ops.segment_sum(x, s, 5, indices_are_sorted=True), np.arange(8, dtype=np.int32), np.sort(seg))
    case("ix/segment_sum_bucket", lambda x, s: jax.ops.segment_sum(x, s, 5, bucket_size=3), V, seg, rtol=LT)
    case("ix/segment_prod_int", lambda x, s: jax.ops.segment_prod(x, s, 5), np.array([1, 2, 3, -1, 2, 2, 2, 5], np.int32), seg)

    # searchsorted
    srt = np.sort(R.standard_normal(16).astype(f32))
    q = np.concatenate([srt[[0, 3, 3, 15]], np.array([-10, 10, 0.0], f32)])
    for meth in ("scan", "scan_unrolled", "sort", "compare_all"):
        for side in ("left", "right"):
            case(f"ix/searchsorted_{meth}_{side}", lambda a, v, m=meth, s=side: jnp.searchsorted(a, v, side=s, method=m), srt, q)
    dup = np.array([1, 2, 2, 2, 5, 5, 9], np.int32)
    case("ix/searchsorted_int_dups", lambda a, v: (jnp.searchsorted(a, v), jnp.searchsorted(a, v, side="right")), dup, np.array([0, 2, 5, 9, 10, 3], np.int32))
    case("ix/searchsorted_2d_queries", lambda a, v: jnp.searchsorted(a, v), srt, X)
    case("ix/searchsorted_nan", lambda a, v: jnp.searchsorted(a, v), np.array([0.0, 1.0, np.nan], f32), np.array([np.nan, 0.5, 2.0], f32))

    # sorting
    ties = np.array([3, 1, 3, 2, 1, 3, 0, 2, 1, 1, 3, 0], np.int32)
    case("sort/argsort_stable_ties_long", lambda a: jnp.argsort(a, stable=True), ties)
    case("sort/argsort_stable_desc_ties", lambda a: jnp.argsort(a, stable=True, descending=True), ties)
    case("sort/argsort_stable_2d_ax0", lambda a: jnp.argsort(a, axis=0, stable=True), (I32 % 3))
    case("sort/argsort_float_ties_negzero", lambda a: jnp.argsort(a, stable=True), np.array([0.0, -0.0, 1.0, -0.0, 0.0, np.nan, -1.0, np.nan], f32))
    case("sort/sort_negzero_nan_inf", lambda a: jnp.sort(a), np.array([0.0, -0.0, np.inf, np.nan, -np.inf, -0.0, 1.0, -np.nan], f32))
    case("sort/sort_bool", lambda a: jnp.sort(a, axis=1), X > 0)
    case("sort/sort_bf16", lambda a: jnp.sort(a, axis=0), X.astype(bf16))
    case("sort/sort_uint8", lambda a: jnp.sort(a), np.array([200, 3, 255, 0, 128, 127], np.uint8))
    case("sort/sort_int8", lambda a: jnp.sort(a), np.array([-128, 3, 127, 0, -1, 1], np.int8))
    case("sort/sort_uint32_big", lambda a: jnp.sort(a), np.array([2**32 - 1, 0, 2**31, 2**31 - 1, 5], np.uint32))
    case("sort/sort_int16_desc", lambda a: jnp.sort(a, descending=True), np.array([-300, 3, 32767, 0, -32768], np.int16))
    case("sort/sort_f16", lambda a: jnp.sort(a), X.ravel().astype(np.float16))
    case("sort/lax_sort_multi_num_keys1", lambda k, a, b: lax.sort((k, a, b), dimension=0, num_keys=1, is_stable=True),
         ties, np.arange(12, dtype=np.int32), np.arange(12, dtype=f32) * 0.5)
    case("sort/lax_sort_num_keys2_bool_key", lambda k1, k2, a: lax.sort((k1, k2, a), num_keys=2, is_stable=True),
         ties > 1, ties, np.arange(12, dtype=f32))
    case("sort/lax_sort_num_keys3", lambda k1, k2, k3, a: lax.sort((k1, k2, k3, a), num_keys=3, is_stable=True),
         ties % 2, ties % 3, (ties * 7) % 5, np.arange(12, dtype=np.int32))
    case("sort/lax_sort_bf16_keys_int_vals", lambda k, a: lax.sort((k, a), num_keys=1, is_stable=True),
         (ties * 0.37).astype(bf16), np.arange(12, dtype=np.int32))
    case("sort/lax_sort_rank3_dim1", lambda k, a: lax.sort((k, a), dimension=1, num_keys=1, is_stable=True), I3 % 4, np.broadcast_to(np.arange(4, dtype=np.int32)[None, :, None], I3.shape).copy())
    case("sort/lax_sort_keyval_f32key", lambda k, v: lax.sort_key_val(k, v), np.array([3.0, 1.0, np.nan, -0.0, 0.0, 1.0], f32), np.arange(6, dtype=np.int32))
    case("sort/top_k_ties", lambda a: lax.top_k(a, 5), ties.astype(f32))
    case("sort/top_k_ties_int", lambda a: lax.top_k(a, 6), ties)
    case("sort/top_k_2d_ties", lambda a: lax.top_k(a, 3), (I32 % 3).astype(f32))
    case("sort/top_k_k_equals_n", lambda a: lax.top_k(a, 8), V)
    case("sort/top_k_nan_inf", lambda a: lax.top_k(a, 4), np.array([1.0, np.nan, np.inf, -np.inf, 2.0, np.nan], f32))
    case("sort/top_k_bf16", lambda a: lax.top_k(a, 3), X.astype(bf16))
    case("sort/top_k_rank3", lambda a: lax.top_k(a, 2), A3)
    case("sort/argmax_rank3_ax1_ties", lambda a: (jnp.argmax(a, 1), jnp.argmin(a, 2)), I3 % 3)

    # =====================================================================
    # CONTROL FLOW
    # =====================================================================
    case("cf/while_mixed_dtypes", lambda x: lax.while_loop(
        lambda c: c[0] < 6,
        lambda c: (c[0] + 1, c[1] * 1.5, c[2] ^ (c[0] % 2 == 0), c[3] + jnp.int8(3), (c[4] * 2).astype(bf16), c[5] + jnp.uint32(7)),
        (jnp.int32(0), x, jnp.zeros(3, bool), jnp.zeros((2,), jnp.int8), x[:2].astype(bf16), jnp.uint32(1))), X)
    case("cf/while_dict_carry", lambda x: lax.while_loop(
        lambda c: c["i"] < 4, lambda c: {"i": c["i"] + 1, "acc": c["acc"] + c["x"][c["i"]], "x": c["x"]},
        {"i": jnp.int32(0), "acc": jnp.zeros(5), "x": x}), X, rtol=LT)
    case("cf/while_zero_size_carry", lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2, c[2] + 1), (0, jnp.zeros((0, 4)), x)), X)
    case("cf/while_only_zero_size", lambda n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + 1.0), (0, jnp.zeros((3, 0)))), np.int32(4))
    case("cf/while_cond_depends_on_array", lambda x: lax.while_loop(lambda c: jnp.sum(c) < 100.0, lambda c: c * 2 + 1, jnp.abs(x)), X)
    case("cf/while_carry_passthrough", lambda x, y: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[2], c[1]), (0, x, y)), X, X * 2)
    case("cf/while_swap_carry_3", lambda a, b, c: lax.fori_loop(0, 4, lambda i, s: (s[1], s[2], s[0] + 1), (a, b, c)), X, X + 10, X + 20)
    case("cf/while_int_overflow_counter", lambda s: lax.while_loop(lambda c: c[1] < 40, lambda c: (c[0] * 3 + 1, c[1] + 1), (s, 0)), np.int32(7))
    case("cf/fori_dyn_lower_upper", lambda x, lo, hi: lax.fori_loop(lo, hi, lambda i, a: a + i, x), X, np.int32(2), np.int32(7))
    case("cf/fori_dyn_empty", lambda x, lo, hi: lax.fori_loop(lo, hi, lambda i, a: a + i, x), X, np.int32(5), np.int32(2))
    case("cf/fori_negative_static", lambda x: lax.fori_loop(-3, 2, lambda i, a: a * 2 + i, x), X)
    case("cf/fori_tuple_carry_idx_update", lambda x: lax.fori_loop(0, 4, lambda i, c: (c[0].at[i].set(i * 1.0), c[1] + c[0][i].sum()), (x, 0.0)), X, rtol=LT)
    case("cf/fori_unroll", lambda x: lax.fori_loop(0, 7, lambda i, a: jnp.sin(a) + i, x, unroll=3), X, rtol=LT)
    case("cf/fori_unroll_dyn", lambda x, n: lax.fori_loop(0, n, lambda i, a: a * 0.9 + i, x), X, np.int32(5), rtol=LT)
    case("cf/cond_branch_consts", lambda p: lax.cond(p, lambda: (jnp.arange(3), jnp.float32(1)), lambda: (jnp.zeros(3, jnp.int32), jnp.float32(2))), True)
    case("cf/cond_branch_returns_operand", lambda x, y, p: lax.cond(p, lambda a, b: (a, b), lambda a, b: (b, a), x, y), X, X * 3, False)
    case("cf/cond_int_pred", lambda x, p: lax.cond(p, lambda a: a + 1, lambda a: a - 1, x), X, np.int32(5))
    case("cf/cond_zero_size", lambda x, p: lax.cond(p, lambda a: (a, jnp.zeros((0, 2))), lambda a: (a * 2, jnp.ones((0, 2))), x), X, True)
    case("cf/cond_nested", lambda x, p, q: lax.cond(p, lambda a: lax.cond(q, jnp.sin, jnp.cos, a), lambda a: -a, x), X, True, False, rtol=LT)
    case("cf/switch_pytree_out", lambda x, i: lax.switch(i, [lambda a: {"a": a, "b": a.sum()}, lambda a: {"a": a * 2, "b": a.max()},
                                                          lambda a: {"a": -a, "b": jnp.float32(0)}, lambda a: {"a": a[::-1], "b": a[0, 0]}], x), X, np.int32(3))
    case("cf/switch_int_outputs", lambda i: lax.switch(i, [lambda: jnp.int8(1), lambda: jnp.int8(-2), lambda: jnp.int8(3)]), np.int32(1))
    case("cf/switch_uint_index", lambda x, i: lax.switch(i, [jnp.sin, jnp.cos], x), X, np.uint32(1), rtol=LT)
    case("cf/switch_single_branch", lambda x, i: lax.switch(i, [lambda a: a * 5], x), X, np.int32(3))
    case("cf/scan_reverse_pytree_ys", lambda x: lax.scan(lambda c, r: (c + r, {"c": c, "r2": (r * 2).astype(jnp.int32)}), jnp.zeros(5), x, reverse=True), X, rtol=LT)
    case("cf/scan_reverse_unroll3", lambda x: lax.scan(lambda c, r: (c * 0.5 + r, c), jnp.zeros(5), x, reverse=True, unroll=3), X, rtol=LT)
    case("cf/scan_unroll_gt_length", lambda x: lax.scan(lambda c, r: (c + r, c), jnp.zeros(5), x, unroll=10), X, rtol=LT)
    case("cf/scan_int_bool_xs", lambda a, b: lax.scan(lambda c, t: (c + jnp.where(t[1], t[0], -t[0]), c), jnp.zeros(5, jnp.int32), (a, b)), I32, I32 > 0)
    case("cf/scan_bf16_xs", lambda x: lax.scan(lambda c, r: (c + r.astype(jnp.float32), (c * 2).astype(bf16)), jnp.zeros(5), x), X.astype(bf16), rtol=2e-2, atol=1e-2)
    case("cf/scan_uint8_xs", lambda x: lax.scan(lambda c, r: (c + r, c), jnp.uint8(250), x), np.arange(10, dtype=np.uint8))
    case("cf/scan_nested_dtypes", lambda x, k: lax.scan(lambda c, t: (c + lax.scan(lambda d, u: (d + u[0] * u[1], d), 0.0, (t[0], t[1].astype(jnp.float32)))[0], c),
                                                      0.0, (x, k)), X, I32, rtol=LT)
    case("cf/scan_nested_reverse_inner", lambda x: lax.scan(lambda c, r: (c + 1, lax.scan(lambda d, u: (d * 0.5 + u, d), 0.0, r, reverse=True)[1]), 0, x), X, rtol=LT)
    case("cf/scan_length0_with_ys", lambda x: lax.scan(lambda c, r: (c + r, r * 2), jnp.ones(5), x[:0]), X)
    case("cf/scan_zero_size_carry", lambda x: lax.scan(lambda c, r: ((c[0] + 1, c[1]), (r, c[1])), (0, jnp.zeros((2, 0))), x), X)
    case("cf/scan_remat_inside", lambda x: lax.scan(jax.checkpoint(lambda c, r: (jnp.sin(c) + r, c * r)), jnp.zeros(5), x), X, rtol=LT)
    case("cf/scan_remat_grad_nested", jax.grad(lambda x: lax.scan(lambda c, r: (jax.checkpoint(lambda a, b: jnp.tanh(a * b + lax.scan(lambda d, t: (d * t, None), 1.0, b)[0]))(c, r), None), jnp.ones(5), x)[0].sum()), X * 0.5, rtol=1e-3, atol=1e-5)
    case("cf/scan_remat_policy_grad", jax.grad(lambda x: lax.scan(jax.checkpoint(lambda c, r: (jnp.sin(c @ jnp.ones((5, 5)) * 0.1 + r), None), policy=jax.checkpoint_policies.dots_saveable), jnp.zeros(5), x)[0].sum()), X, rtol=1e-3, atol=1e-5)
    case("cf/grad_fori_static", jax.grad(lambda x, w: lax.fori_loop(0, 5, lambda i, a: jnp.tanh(a * w + i * 0.1), x).sum(), argnums=(0, 1)), X, np.float32(0.8), rtol=1e-3, atol=1e-5)
    case("cf/grad_fori_static_pytree", jax.grad(lambda p: lax.fori_loop(0, 3, lambda i, c: (c[0] * c[1], c[1] + 0.1), p)[0].sum()), (X, X * 0.5), rtol=1e-3, atol=1e-5)
    case("cf/grad_scan_reverse", jax.grad(lambda x: lax.scan(lambda c, r: (c * r + 1, None), jnp.ones(5), x, reverse=True)[0].sum()), X, rtol=1e-3)
    case("cf/vmap_cond_batched_pred", jax.vmap(lambda x, p: lax.cond(p, lambda a: (a * 2, a.sum()), lambda a: (a - 1, a.max()), x)), X, np.array([True, False, False, True]), rtol=LT)
    case("cf/vmap_switch_batched_idx_pytree", jax.vmap(lambda x, i: lax.switch(i, [lambda a: (a, 1), lambda a: (a * 2, 2), lambda a: (-a, 3)], x)), X, np.array([2, 0, 1, 7], np.int32))
    case("cf/vmap_while_varying_trip", jax.vmap(lambda x, n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.1 + 1), (0, x))), X, np.array([0, 3, 1, 7], np.int32), rtol=LT)
    case("cf/vmap_fori_dyn_bounds", jax.vmap(lambda x, n: lax.fori_loop(0, n, lambda i, a: a + x[i % 5], 0.0)), X, np.array([0, 3, 1, 9], np.int32), rtol=LT)
    case("cf/vmap_scan_in_axes1", jax.vmap(lambda x: lax.scan(lambda c, r: (c * r + 1, c), 1.0, x), in_axes=1), X, rtol=LT)
    case("cf/vmap_while_in_cond", jax.vmap(lambda x, p: lax.cond(p, lambda a: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2 + 1, a), lambda a: a, x)), jnp.abs(V), V > 0)
    case("cf/while_in_scan_body", lambda x: lax.scan(lambda c, r: (lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] + r), (0, c))[1], c), jnp.zeros(5), x), X, rtol=LT)
    case("cf/cond_in_while_in_scan", lambda x: lax.scan(lambda c, r: (lax.fori_loop(0, 3, lambda i, s: lax.cond(i % 2 == 0, lambda t: t + r, lambda t: t * 0.5, s), c), None), jnp.zeros(5), x)[0], X, rtol=LT)
    case("cf/while_large_trip", lambda x: lax.fori_loop(0, 10000, lambda i, a: a + 1, x), np.int32(0))
    case("cf/scan_long", lambda x: lax.scan(lambda c, r: (c + r, None), 0.0, x)[0], np.ones(5000, f32), rtol=1e-4)
    case("cf/associative_scan_rank3_ax1_rev", lambda x: lax.associative_scan(jnp.add, x, axis=1, reverse=True), A3, rtol=LT)

    # =====================================================================
    # DATA MOVEMENT
    # =====================================================================
    case("dm/concat_many", lambda x: jnp.concatenate([x[i:i + 1] * i for i in range(4)] * 10, 0), X)
    case("dm/concat_zero_pieces", lambda x: jnp.concatenate([x[:0], x, x[:, :0].reshape(0, 5), x[1:2], jnp.zeros((0, 5))], 0), X)
    case("dm/concat_ax1_zero_pieces", lambda x: jnp.concatenate([x[:, :0], x[:, 2:3], x[:, :0], x], 1), X)
    case("dm/concat_all_zero", lambda x: jnp.concatenate([x[:0], x[:0]], 0), X)
    case("dm/concat_int8_bool", lambda a, b: (jnp.concatenate([a, a[::-1], a[:, :1]], 1), jnp.concatenate([b, ~b], 0)), I32.astype(np.int8), I32 > 0)
    case("dm/concat_rank3_ax2_many", lambda x: jnp.concatenate([x[..., i:i + 1] for i in (4, 0, 3, 1, 2, 2)], 2), A3)
    case("dm/concat_bf16", lambda x: jnp.concatenate([x, x * 2], 0), X.astype(bf16))
    for lo, hi, it in ((-1, -1, 0), (-2, 3, 1), (2, -3, 2), (-3, -2, 3), (0, 0, 4), (-4, 0, 0), (1, 1, 1)):
        case(f"dm/pad_{lo}_{hi}_{it}", lambda x, lo=lo, hi=hi, it=it: lax.pad(x, jnp.float32(-7), ((lo, hi, it), (hi, lo, 0))), X)
    case("dm/pad_int_interior", lambda x: lax.pad(x, jnp.int32(5), ((1, -1, 2), (0, 0, 1))), I32)
    case("dm/pad_bool", lambda x: lax.pad(x, True, ((1, 0, 1), (0, 2, 0))), I32 > 0)
    case("dm/pad_rank3", lambda x: lax.pad(x, 0.0, ((0, 1, 1), (-1, 0, 0), (2, -2, 1))), A3)
    case("dm/pad_to_zero_size", lambda x: lax.pad(x, 0.0, ((-2, -2, 0), (0, 0, 0))), X)
    case("dm/pad_dynamic_value", lambda x, v: lax.pad(x, v, ((1, 1, 1), (0, 0, 0))), X, np.float32(3.5))
    case("dm/pad_bf16", lambda x: lax.pad(x, bf16(1), ((1, -1, 1), (2, 0, 0))), X.astype(bf16))
    case("dm/jnp_pad_linear_ramp", lambda x: jnp.pad(x, ((2, 1), (1, 3)), mode="linear_ramp", end_values=((1, -1), (2, 0))), X, rtol=LT)
    case("dm/jnp_pad_maximum", lambda x: jnp.pad(x, ((1, 2), (3, 0)), mode="maximum"), X)
    case("dm/jnp_pad_mean_stat_len", lambda x: jnp.pad(x, 2, mode="mean", stat_length=2), X, rtol=LT)
    case("dm/jnp_pad_reflect_odd", lambda x: jnp.pad(x, ((3, 3), (6, 6)), mode="reflect", reflect_type="odd"), X, rtol=LT)
    for axes in ((0,), (1,), (2,), (0, 2), (0, 1, 2)):
        case(f"dm/rev_{''.join(map(str, axes))}", lambda x, a=axes: lax.rev(x, a), I3)
    case("dm/rev_bf16", lambda x: lax.rev(x, (0, 1)), X.astype(bf16))
    case("dm/rev_zero_size", lambda x: lax.rev(x[:, :0], (0, 1)), X)

    # transposes rank 5-6
    T5 = np.arange(2 * 3 * 1 * 4 * 2, dtype=f32).reshape(2, 3, 1, 4, 2)
    perms5 = list(itertools.permutations(range(5)))
    sel5 = sorted(set([perms5[i] for i in range(0, 120, 7)] + [(4, 3, 2, 1, 0), (0, 2, 4, 1, 3)]))
    for p in sel5:
        case(f"dm/transpose5_{''.join(map(str, p))}", lambda x, p=p: jnp.transpose(x, p), T5)
    T6 = np.arange(2 * 1 * 3 * 2 * 2 * 3, dtype=np.int32).reshape(2, 1, 3, 2, 2, 3)
    perms6 = list(itertools.permutations(range(6)))
    for p in sorted(set([perms6[i] for i in range(0, 720, 61)] + [(5, 4, 3, 2, 1, 0), (1, 0, 3, 2, 5, 4)])):
        case(f"dm/transpose6_{''.join(map(str, p))}", lambda x, p=p: jnp.transpose(x, p), T6)
    case("dm/transpose6_bf16", lambda x: jnp.transpose(x, (3, 5, 0, 2, 4, 1)), T6.astype(bf16))
    case("dm/transpose_then_reshape", lambda x: jnp.transpose(x, (2, 0, 4, 1, 3)).reshape(4, -1).T.reshape(3, 4, 4), T5)
    case("dm/reshape_chain", lambda x: x.reshape(60).reshape(5, 12).T.reshape(2, 3, 10)[:, ::-1].reshape(6, 10).T, A3)
    case("dm/reshape_size1_dims", lambda x: x.reshape(1, 3, 1, 20, 1).transpose(4, 3, 2, 1, 0).reshape(20, 3), A3)
    case("dm/broadcast_in_dim_odd", lambda v: lax.broadcast_in_dim(v, (3, 8, 1, 2), (1,)), V)
    case("dm/broadcast_in_dim_size1_expand", lambda x: lax.broadcast_in_dim(x[:, :1], (2, 4, 5), (1, 2)), X)
    case("dm/broadcast_in_dim_perm", lambda x: lax.broadcast_in_dim(x, (5, 3, 4), (1, 2)), X[:3, :1])
    case("dm/broadcast_in_dim_scalar", lambda s: lax.broadcast_in_dim(s, (2, 3), ()), np.float32(2.5))
    case("dm/broadcast_to_zero", lambda v: jnp.broadcast_to(v, (0, 8)), V)
    case("dm/expand_squeeze_multi", lambda x: jnp.squeeze(jnp.expand_dims(x, (0, 2, 5)), (0, 5)), A3)
    case("dm/lax_squeeze", lambda x: lax.squeeze(x.reshape(1, 4, 1, 5, 1), (0, 4)), X)
    for sh, ax in ((3, 0), (-7, 1), (13, 2), (0, 1), (5, None)):
        case(f"dm/roll_{sh}_{ax}", lambda x, s=sh, a=ax: jnp.roll(x, s, axis=a), A3)
    case("dm/roll_multi", lambda x: jnp.roll(x, (1, -2), axis=(0, 2)), A3)
    case("dm/roll_traced_shift", lambda x, s: jnp.roll(x, s, axis=1), X, np.int32(-3))
    case("dm/roll_traced_shift_big", lambda x, s: jnp.roll(x, s), X, np.int32(1234))
    case("dm/tile_rank3", lambda x: jnp.tile(x, (2, 1, 3)), A3)
    case("dm/tile_expand_rank", lambda v: jnp.tile(v, (2, 3, 1)), V)
    case("dm/tile_zero", lambda x: jnp.tile(x, (0, 2)), X)
    case("dm/repeat_traced_total", lambda x, r: jnp.repeat(x, r, axis=1, total_repeat_length=9), X, np.array([0, 3, 1, 2, 1], np.int32))
    case("dm/repeat_traced_total_short", lambda x, r: jnp.repeat(x, r, axis=0, total_repeat_length=4), X, np.array([2, 2, 2, 2], np.int32))
    case("dm/repeat_traced_total_long", lambda v, r: jnp.repeat(v, r, total_repeat_length=12), V, np.array([1, 0, 1, 0, 1, 0, 1, 1], np.int32))
    case("dm/repeat_scalar_flat", lambda x: jnp.repeat(x, 3), X)
    case("dm/repeat_int_bool", lambda a, b: (jnp.repeat(a, 2, 0), jnp.repeat(b, 3, 1)), I32, I32 > 0)
    for k in (-3, -1, 0, 2, 6):
        case(f"dm/tril_{k}", lambda x, k=k: jnp.tril(x, k), A3)
        case(f"dm/triu_{k}", lambda x, k=k: jnp.triu(x, k), I32)
    for off in (-3, -1, 0, 1, 4, 5):
        case(f"dm/diagonal_{off}", lambda x, o=off: (jnp.diagonal(x, o), jnp.trace(x, o)), X)
    case("dm/diagonal_rank3_axes02", lambda x: jnp.diagonal(x, 1, 0, 2), A3)
    case("dm/diagonal_rank3_axes21", lambda x: jnp.diagonal(x, -1, 2, 1), A3)
    case("dm/trace_rank3_int", lambda x: jnp.trace(x, 1, 1, 2), I3)
    case("dm/diag_vec_offset", lambda v: (jnp.diag(v, 2), jnp.diag(v, -3)), V)
    case("dm/diagflat", lambda x: jnp.diagflat(x[:2, :2], -1), X)
    case("dm/meshgrid_xy_3", lambda a, b, c: jnp.meshgrid(a, b, c), V[:3], V[:2], V[:4])
    case("dm/meshgrid_sparse", lambda a, b: [m * 1 for m in jnp.meshgrid(a, b, sparse=True)], V[:3], V[:5])
    case("dm/meshgrid_int", lambda a, b: jnp.meshgrid(a, b, indexing="ij"), np.arange(3, dtype=np.int32), np.arange(4, dtype=np.int32))
    # einsum
    case("dm/einsum_repeated_diag", lambda x: jnp.einsum("ii->i", x), X[:4, :4])
    case("dm/einsum_repeated_trace3", lambda x: jnp.einsum("iii->", x), np.arange(27, dtype=f32).reshape(3, 3, 3))
    case("dm/einsum_repeated_partial", lambda x: jnp.einsum("iji->j", x), R.standard_normal((3, 4, 3)).astype(f32), rtol=LT)
    case("dm/einsum_broadcast_ellipsis", lambda a, b: jnp.einsum("...ij,...jk->...ik", a, b), R.standard_normal((2, 1, 3, 4)).astype(f32), R.standard_normal((3, 4, 2)).astype(f32), rtol=LT)
    case("dm/einsum_5_operands", lambda a, b, c, d, e: jnp.einsum("ij,jk,kl,lm,m->i", a, b, c, d, e), *[R.standard_normal(s).astype(f32) for s in ((3, 4), (4, 5), (5, 2), (2, 6), (6,))], rtol=LT, atol=1e-5)
    case("dm/einsum_outer_3", lambda a, b, c: jnp.einsum("i,j,k->kji", a, b, c), V[:2], V[:3], V[:4], rtol=LT)
    case("dm/einsum_batch_contract_multi", lambda a, b: jnp.einsum("bxyc,bcyz->bxz", a, b), R.standard_normal((2, 3, 4, 5)).astype(f32), R.standard_normal((2, 5, 4, 3)).astype(f32), rtol=LT, atol=1e-5)
    case("dm/einsum_int", lambda a, b: jnp.einsum("ij,kj->ik", a, b), I32, I32[:3])
    case("dm/einsum_sum_out_unmatched", lambda a, b: jnp.einsum("ij,kl->ik", a, b), X, X[:3], rtol=LT)
    case("dm/einsum_size1_bcast", lambda a, b: jnp.einsum("ij,ij->ij", a, b), X[:1], X)
    case("dm/einsum_bf16", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), A3.astype(bf16), A3.transpose(0, 2, 1).astype(bf16), rtol=2e-2, atol=5e-2)
    # dot_general
    DI1 = R.randint(-9, 9, (2, 3, 4, 5)).astype(np.int32)
    DI2 = R.randint(-9, 9, (3, 5, 2, 6, 4)).astype(np.int32)
    case("dm/dot_general_int_2batch_2contract", lambda a, b: lax.dot_general(a, b, (((2, 3), (4, 1)), ((0, 1), (2, 0)))), DI1, DI2)
    case("dm/dot_general_bf16_2batch_2contract", lambda a, b: lax.dot_general(a, b, (((2, 3), (4, 1)), ((0, 1), (2, 0)))),
         (DI1 * 0.25).astype(bf16), (DI2 * 0.25).astype(bf16), rtol=2e-2, atol=0.2)
    case("dm/dot_general_bf16_pref_f32_batch", lambda a, b: lax.dot_general(a, b, (((3,), (1,)), ((0,), (2,))), preferred_element_type=jnp.float32),
         (DI1 * 0.25).astype(bf16), (DI2 * 0.25).astype(bf16), rtol=1e-2, atol=1e-2)
    case("dm/dot_general_int8_to_i32_batch", lambda a, b: lax.dot_general(a, b, (((2, 3), (4, 1)), ((0, 1), (2, 0))), preferred_element_type=jnp.int32),
         (DI1 * 14).astype(np.int8), (DI2 * 14).astype(np.int8))
    case("dm/dot_general_int8_overflow", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
         np.full((2, 8), 100, np.int8), np.full((8, 3), 3, np.int8))
    case("dm/dot_general_uint8_pref_i32", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32),
         np.full((2, 8), 200, np.uint8), np.full((8, 3), 250, np.uint8))
    case("dm/dot_general_no_contract_batch", lambda a, b: lax.dot_general(a, b, (((), ()), ((0,), (0,)))), A3, A3[:, :2, :3], rtol=LT)
    case("dm/dot_general_contract_only_outer", lambda a, b: lax.dot_general(a, b, (((0, 1, 2), (0, 1, 2)), ((), ()))), A3, A3 * 2, rtol=LT)
    case("dm/dot_general_bool", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32) if False else jnp.matmul(a, b), X > 0, (X > 0).T)
    case("dm/dot_general_i16", lambda a, b: lax.dot_general(a, b, (((1,), (1,)), ((0,), (0,)))), I3.astype(np.int16), I3.astype(np.int16) // 2)
    case("dm/matmul_vec_mat_bcast", lambda a, b: (a @ b, b.transpose(0, 2, 1) @ a[:4]), V[:4], R.standard_normal((3, 4, 5)).astype(f32), rtol=LT)
    # conv
    IM = R.standard_normal((2, 4, 7, 6)).astype(f32)
    K6 = R.standard_normal((6, 2, 3, 2)).astype(f32)  # OIHW, fgc=2
    case("dm/conv_fgc2", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", feature_group_count=2), IM, K6, rtol=LT, atol=1e-4)
    case("dm/conv_fgc4_lhs_dil", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), ((1, 1), (2, 0)), lhs_dilation=(2, 1), feature_group_count=4), IM, R.standard_normal((8, 1, 3, 2)).astype(f32), rtol=LT, atol=1e-4)
    case("dm/conv_rhs_dil_stride", lambda x, k: lax.conv_general_dilated(x, k, (2, 3), ((0, 1), (1, 1)), rhs_dilation=(2, 2)), IM, R.standard_normal((3, 4, 2, 2)).astype(f32), rtol=LT, atol=1e-4)
    case("dm/conv_lhs_rhs_dil", lambda x, k: lax.conv_general_dilated(x, k, (1, 2), ((2, 2), (1, 0)), lhs_dilation=(2, 2), rhs_dilation=(1, 2)), IM, R.standard_normal((3, 4, 3, 2)).astype(f32), rtol=LT, atol=1e-4)
    case("dm/conv_neg_padding", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), ((-1, 0), (0, -2))), IM, R.standard_normal((3, 4, 2, 2)).astype(f32), rtol=LT, atol=1e-4)
    case("dm/conv_bgc2_fgc1", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", batch_group_count=2), IM, R.standard_normal((4, 4, 3, 3)).astype(f32), rtol=LT, atol=1e-4)
    case("dm/conv_bgc4", lambda x, k: lax.conv_general_dilated(x, k, (2, 1), "VALID", batch_group_count=4), R.standard_normal((4, 2, 6, 5)).astype(f32), R.standard_normal((8, 2, 2, 2)).astype(f32), rtol=LT, atol=1e-4)
    layouts = [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("NHWC", "OIHW", "NCHW"), ("NCHW", "HWIO", "NHWC"),
               ("HWNC", "IOHW", "CNHW"), ("CHWN", "WHOI", "HWCN"), ("NWHC", "OHWI", "WNCH"), ("HNWC", "HIWO", "NHCW")]
    for ln in layouts:
        lhs_shape = {"N": 2, "C": 4, "H": 7, "W": 6}
        rhs_shape = {"O": 6, "I": 2, "H": 3, "W": 2}
        xs = tuple(lhs_shape[c] for c in ln[0])
        ks = tuple(rhs_shape[c] for c in ln[1])
        name = "_".join(ln)
        case(f"dm/conv_layout_{name}", lambda x, k, ln=ln: lax.conv_general_dilated(x, k, (2, 1), ((1, 0), (1, 1)), rhs_dilation=(1, 2), dimension_numbers=ln, feature_group_count=2),
             R.standard_normal(xs).astype(f32), R.standard_normal(ks).astype(f32), rtol=LT, atol=1e-4)
    case("dm/conv1d_nwc_fgc", lambda x, k: lax.conv_general_dilated(x, k, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"), feature_group_count=3),
         R.standard_normal((2, 9, 6)).astype(f32), R.standard_normal((3, 2, 6)).astype(f32), rtol=LT, atol=1e-4)
    case("dm/conv3d_ndhwc_lhsdil", lambda x, k: lax.conv_general_dilated(x, k, (1, 1, 1), ((1, 0), (0, 1), (1, 1)), lhs_dilation=(1, 2, 1), dimension_numbers=("NDHWC", "DHWIO", "NDHWC")),
         R.standard_normal((1, 3, 4, 3, 2)).astype(f32), R.standard_normal((2, 2, 2, 2, 3)).astype(f32), rtol=LT, atol=1e-4)
    case("dm/conv_int8_pref_i32", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", preferred_element_type=jnp.int32),
         R.randint(-100, 100, (1, 2, 5, 5)).astype(np.int8), R.randint(-100, 100, (3, 2, 3, 3)).astype(np.int8))
    case("dm/conv_bf16_fgc", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", feature_group_count=2), IM.astype(bf16), K6.astype(bf16), rtol=3e-2, atol=0.1)
    case("dm/conv_1x1_stride_gt_kernel", lambda x, k: lax.conv_general_dilated(x, k, (3, 4), "VALID"), IM, R.standard_normal((5, 4, 1, 1)).astype(f32), rtol=LT, atol=1e-4)
    case("dm/conv_grad_lhs_dil_rhs_dil", jax.grad(lambda x, k: jnp.sum(lax.conv_general_dilated(x, k, (2, 1), "SAME", rhs_dilation=(2, 1)) ** 2), (0, 1)),
         IM, R.standard_normal((3, 4, 2, 3)).astype(f32), rtol=1e-3, atol=1e-3)
    # reduce_window
    RI = R.randint(-50, 50, (2, 7, 6)).astype(np.int32)
    rw_cfgs = [((1, 2, 2), (1, 1, 1), "VALID", None, None), ((1, 3, 2), (1, 2, 2), "SAME", None, None),
               ((1, 2, 3), (1, 3, 1), ((0, 0), (1, 2), (2, 0)), None, None),
               ((1, 2, 2), (1, 1, 2), ((0, 0), (0, 1), (1, 1)), (1, 2, 1), (1, 1, 2)),
               ((2, 2, 2), (1, 2, 2), "VALID", None, (1, 2, 2))]
    for ci, (wd, st, pad, bd, wdl) in enumerate(rw_cfgs):
        for opn, op, init in (("max", lax.max, jnp.iinfo(jnp.int32).min), ("min", lax.min, jnp.iinfo(jnp.int32).max), ("sum", lax.add, 0)):
            case(f"dm/reduce_window_{opn}_int_{ci}",
                 lambda x, wd=wd, st=st, pad=pad, bd=bd, wdl=wdl, op=op, init=init: lax.reduce_window(x, jnp.int32(init), op, wd, st, pad, base_dilation=bd, window_dilation=wdl), RI)
    case("dm/reduce_window_sum_f32_dil", lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2, 2), (1, 2, 1), ((0, 0), (1, 1), (0, 2)), (1, 2, 1), (1, 2, 2)), RI.astype(f32), rtol=LT)
    case("dm/reduce_window_max_bf16", lambda x: lax.reduce_window(x, -jnp.inf.astype(bf16) if False else bf16(-np.inf), lax.max, (1, 2, 2), (1, 2, 2), "SAME"), RI.astype(bf16))
    case("dm/reduce_window_max_uint8", lambda x: lax.reduce_window(x, jnp.uint8(0), lax.max, (2, 2), (1, 1), "SAME"), R.randint(0, 255, (5, 5)).astype(np.uint8))
    case("dm/reduce_window_and_bool", lambda x: lax.reduce_window(x, True, lax.bitwise_and, (2, 2), (1, 1), "VALID"), X > -0.5)
    case("dm/reduce_window_nonzero_init", lambda x: lax.reduce_window(x, jnp.int32(1000), lax.add, (2, 2), (2, 2), "SAME"), I32)
    case("dm/reduce_window_multi_operand", lambda x, y: lax.reduce_window((x, y), (-jnp.inf, 0), lambda a, b: (jnp.maximum(a[0], b[0]), a[1] + b[1]), (2, 2), (1, 1), "VALID"), X, I32)
    case("dm/reduce_window_window_bigger_than_input_pad", lambda x: lax.reduce_window(x, 0.0, lax.add, (6, 7), (1, 1), ((2, 2), (2, 2))), X, rtol=LT)
    # cumulative
    for fn_name, fn in (("cumsum", lax.cumsum), ("cummax", lax.cummax), ("cummin", lax.cummin), ("cumprod", lax.cumprod), ("cumlogsumexp", lax.cumlogsumexp)):
        for ax in (0, 1, 2):
            for rev in (False, True):
                data = A3 if fn_name in ("cumlogsumexp",) else (A3 * 0.5 + 1 if fn_name == "cumprod" else A3)
                case(f"dm/{fn_name}_ax{ax}_rev{int(rev)}", lambda x, f=fn, a=ax, r=rev: f(x, axis=a, reverse=r), data, rtol=LT, atol=1e-5)
    for fn_name, fn in (("cumsum", lax.cumsum), ("cummax", lax.cummax), ("cummin", lax.cummin)):
        case(f"dm/{fn_name}_int_rev_ax1", lambda x, f=fn: f(x, axis=1, reverse=True), I3)
        case(f"dm/{fn_name}_uint8_ax2", lambda x, f=fn: f(x, axis=2), (I3 + 60).astype(np.uint8))
    case("dm/cumsum_bf16_long", lambda x: lax.cumsum(x, axis=0), np.ones(300, bf16) * bf16(0.5), rtol=2e-2)
    case("dm/cumsum_bool", lambda x: jnp.cumsum(x, axis=1), X > 0)
    case("dm/cummax_nan", lambda x: lax.cummax(x, axis=0), np.array([1.0, np.nan, 0.5, 3.0, -np.inf], f32))
    case("dm/cumlogsumexp_neginf", lambda x: lax.cumlogsumexp(x, axis=0), np.array([-np.inf, -np.inf, 0.0, -np.inf, 1.0], f32), rtol=LT)
    case("dm/cumsum_long_rev", lambda x: lax.cumsum(x, axis=0, reverse=True)[::37], R.standard_normal(2000).astype(f32), rtol=1e-3, atol=1e-3)
    case("dm/iota_2d_dims", lambda: (lax.broadcasted_iota(jnp.int32, (3, 4, 2), 1), lax.broadcasted_iota(jnp.float32, (2, 5), 0), lax.iota(jnp.uint8, 7)))
    case("dm/clamp_bcast", lambda x: (lax.clamp(-0.5, x, 0.5), lax.clamp(jnp.full((4, 5), -1.0), x, jnp.full((4, 5), 0.2))), X)
    case("dm/slice_strided_rank3", lambda x: lax.slice(x, (0, 1, 0), (3, 4, 5), (2, 2, 3)), A3)
    case("dm/split_uneven", lambda x: jnp.array_split(x, 3, axis=2), A3)

    # =====================================================================
    # BUFFER SEMANTICS
    # =====================================================================
    def mk_runner(fn, args, donate=(), ncalls=1):
        def r(dev):
            g = jax.jit(fn, donate_argnums=donate)
            with jax.default_device(dev):
                outs = []
                for _ in range(ncalls):
                    a = jax.device_put(args, dev)
                    o = g(*a)
                    outs.append(jax.tree_util.tree_map(np.asarray, o))
                return outs
        return r
    case("buf/return_input_unchanged", None, runner=mk_runner(lambda x: x, (X,)))
    case("buf/return_same_twice", None, runner=mk_runner(lambda x: (x, x, x * 2, x), (X,)))
    case("buf/return_computed_twice", None, runner=mk_runner(lambda x: (x + 1, ) * 2, (X,)))
    case("buf/return_input_and_alias_other", None, runner=mk_runner(lambda x, y: (y, x, y), (X, I32)))
    case("buf/donate_return_same_twice", None, runner=mk_runner(lambda x: (x, x), (X,), donate=(0,)))
    case("buf/donate_result_reuses_input", None, runner=mk_runner(lambda x: x * 2 + 1, (X,), donate=(0,), ncalls=3))
    case("buf/donate_two_swap", None, runner=mk_runner(lambda x, y: (y * 1, x * 1), (X, X + 1), donate=(0, 1)))
    case("buf/donate_swap_passthrough", None, runner=mk_runner(lambda x, y: (y, x), (X, X + 1), donate=(0, 1)))
    case("buf/donate_dtype_mismatch_partial", None, runner=mk_runner(lambda x, y: (y + 1, (x * 2).astype(jnp.int32)), (X, I32), donate=(0, 1)))
    case("buf/donate_zero_size", None, runner=mk_runner(lambda x, y: (x + 1, y * 2), (np.zeros((0, 3), f32), X), donate=(0,)))
    case("buf/donate_scalar", None, runner=mk_runner(lambda s, x: (s + 1, x.sum() + s), (np.float32(2.0), X), donate=(0,)))
    case("buf/donate_in_while", None, runner=mk_runner(lambda x: lax.fori_loop(0, 5, lambda i, a: a * 1.5 + i, x), (X,), donate=(0,)))
    case("buf/donate_in_place_dus", None, runner=mk_runner(lambda x, i: lax.dynamic_update_slice(x, jnp.ones((1, 5)), (i, 0)), (X, np.int32(2)), donate=(0,), ncalls=2))
    case("buf/donate_in_place_scatter", None, runner=mk_runner(lambda x, i: x.at[i].add(100.0), (X, np.array([0, 0, 3], np.int32)), donate=(0,)))
    case("buf/donate_read_after_write", None, runner=mk_runner(lambda x: (x.at[0].set(0.0), x[0] * 1), (X,), donate=(0,)))
    case("buf/donate_transposed_use", None, runner=mk_runner(lambda x: x.T.reshape(4, 5) + x, (X,), donate=(0,)))
    case("buf/donate_reverse_use", None, runner=mk_runner(lambda v: v[::-1] * 2 + v, (V,), donate=(0,)))
    case("buf/donate_shifted_use", None, runner=mk_runner(lambda v: jnp.concatenate([v[1:], v[:1]]) + v, (V,), donate=(0,)))
    case("buf/donate_pytree_leaves", None, runner=mk_runner(lambda d: {k: v * 2 for k, v in d.items()}, ({f"k{i}": X + i for i in range(12)},), donate=(0,)))

    def donated_reuse_runner(dev):
        g = jax.jit(lambda x: x * 2, donate_argnums=(0,))
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            y = g(x)
            res = [np.asarray(y)]
            deleted = x.is_deleted()
            try:
                z = np.asarray(x + 1)
                err = "none"
            except Exception as e:  # noqa
                err = type(e).__name__
            try:
                z2 = np.asarray(g(x))
                err2 = "none"
            except Exception as e:  # noqa
                err2 = type(e).__name__
            # Platforms that don't implement donation keep x alive; we require Anvil (which consumes) to raise.
            return res, np.array(deleted), np.array([err != "none" or not deleted, err2 != "none" or not deleted])
    case("buf/use_after_donate_raises", None, runner=donated_reuse_runner)

    def donated_same_buffer_twice(dev):
        g = jax.jit(lambda x, y: x + y, donate_argnums=(0,))
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            try:
                o = np.asarray(g(x, x))
                return [o, np.array(True)]
            except Exception as e:  # noqa
                return [X * 2, np.array(True)] if "donat" in str(e).lower() else [np.asarray(0.0), np.array(False)]
    case("buf/donate_same_buffer_two_args", None, runner=donated_same_buffer_twice)

    def donated_after_delete(dev):
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            x.delete()
            try:
                jax.jit(lambda a: a + 1)(x)
                return np.array(False)
            except Exception:
                return np.array(True)
    case("buf/use_deleted_raises", None, runner=donated_after_delete)

    case("buf/many_outputs_120", lambda x: tuple(x[i % 4, i % 5] * i for i in range(120)), X)
    case("buf/pytree_60_leaves_in_out", lambda t: jax.tree_util.tree_map(lambda a: a * 2 + 1, t),
         {f"l{i}": [np.full((i % 4 + 1,), i, np.int32 if i % 3 == 0 else f32), (X[i % 4] * i).astype(bf16 if i % 5 == 0 else f32)] for i in range(30)})
    case("buf/pytree_mixed_in_passthrough", lambda t: (t, jax.tree_util.tree_leaves(t)[0] + 1), {"a": [X, I32, X > 0], "b": (np.float32(3), np.zeros((0,), np.int8))})
    case("buf/consts_only", lambda: (jnp.array([1, 2, 3]), jnp.float32(2.5), jnp.ones((2, 3), bf16), jnp.zeros((0,)), jnp.array(True), jnp.arange(4, dtype=jnp.uint8)))
    case("buf/consts_only_large", lambda: jnp.full((512, 512), 3.0))
    case("buf/const_and_input_passthrough", lambda x: (x, jnp.float32(1.0), x), X)
    case("buf/scalar_outputs_many_dtypes", lambda x: (x.sum(), x.sum().astype(jnp.int8), x.sum().astype(jnp.uint16), x.sum() > 0, x.sum().astype(bf16), x.sum().astype(jnp.float16)), X, rtol=1e-2)
    case("buf/unused_inputs", lambda a, b, c: b * 2, X, I32, V)
    case("buf/output_is_slice_of_input", lambda x: (x[1:3], x[:, 0], x.reshape(20), x.T), X)
    case("buf/bitcast_identity_output", lambda x: lax.bitcast_convert_type(x, jnp.int32), X)
    case("buf/jit_in_jit_twice", lambda x: jax.jit(lambda a: (a, a * 2))(x) + jax.jit(lambda a: (a,))(x), X)

    def repeated_calls_runner(dev):
        g = jax.jit(lambda x, i: (x.at[i].set(-1.0), x.sum()))
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            outs = []
            for k in range(5):
                y, s = g(x, np.int32(k % 4))
                outs.append((np.asarray(y), np.asarray(s)))
            outs.append(np.asarray(x))
            return outs
    case("buf/repeated_calls_input_unmodified", None, runner=repeated_calls_runner)

    def chain_device_runner(dev):
        g = jax.jit(lambda x: (x * 2, x + 1))
        with jax.default_device(dev):
            a = jax.device_put(X, dev)
            for _ in range(6):
                a, b = g(a)
                a = a - b
            return np.asarray(a)
    case("buf/chain_outputs_as_inputs", None, runner=chain_device_runner)

    def async_many_runner(dev):
        g = jax.jit(lambda x: jnp.tanh(x @ x.T) + x.sum())
        with jax.default_device(dev):
            xs = [jax.device_put(X[:, :4] * i, dev) for i in range(20)]
            outs = [g(x) for x in xs]
            return [np.asarray(o) for o in outs]
    case("buf/many_async_dispatch", None, runner=async_many_runner, rtol=LT)

    # =====================================================================
    # BATCH 2: in-place overlap, larger/odd sizes (vector/parallel paths)
    # =====================================================================
    Xb = R.standard_normal((37, 129)).astype(f32)
    Vb = R.standard_normal((1031,)).astype(f32)
    Ib = R.randint(-1000, 1000, (37, 129)).astype(np.int32)
    case("ov/shift_right_at_set", lambda x: x.at[1:].set(x[:-1]), X)
    case("ov/shift_left_at_set", lambda x: x.at[:-1].set(x[1:]), X)
    case("ov/shift_right_at_set_big", lambda v: v.at[3:].set(v[:-3]), Vb)
    case("ov/dus_overlap_read_fwd", lambda x, i: lax.dynamic_update_slice(x, lax.dynamic_slice(x, (i + 1, 0), (2, 5)), (i, 0)), X, np.int32(1))
    case("ov/dus_overlap_read_bwd", lambda x, i: lax.dynamic_update_slice(x, lax.dynamic_slice(x, (i, 0), (2, 5)), (i + 1, 0)), X, np.int32(1))
    case("ov/dus_overlap_big", lambda x, i: lax.dynamic_update_slice(x, lax.dynamic_slice(x, (i, 0), (30, 129)) * 2, (i + 3, 0)), Xb, np.int32(2))
    case("ov/dus_overlap_in_fori", lambda x: lax.fori_loop(0, 3, lambda i, a: lax.dynamic_update_slice(a, lax.dynamic_slice(a, (i, 0), (2, 5)) + 1.0, (i + 1, 0)), x), X)
    case("ov/dus_overlap_in_fori_big", lambda x: lax.fori_loop(0, 5, lambda i, a: lax.dynamic_update_slice(a, lax.dynamic_slice(a, (0, i), (37, 100)) + 1.0, (0, i + 1)), x), Xb)
    case("ov/scatter_from_self_perm", lambda v, i: v.at[i].set(v[i[::-1]]), V, np.array([0, 3, 5, 7], np.int32))
    case("ov/scatter_from_self_shift", lambda v: v.at[jnp.arange(1, 8)].set(v[jnp.arange(0, 7)]), V)
    case("ov/scatter_from_self_big", lambda v, i: v.at[i].set(v[(i + 1) % 1031] * 2), Vb, np.arange(0, 1031, 3, dtype=np.int32))
    case("ov/scatter_add_self_in_loop", lambda v: lax.fori_loop(0, 4, lambda k, a: a.at[jnp.arange(7) + 1].add(a[jnp.arange(7)]), v), V, rtol=LT)
    case("ov/swap_rows_in_loop", lambda x: lax.fori_loop(0, 3, lambda i, a: a.at[jnp.array([i, i + 1])].set(a[jnp.array([i + 1, i])]), x), X)
    case("ov/concat_self_pieces_loop", lambda x: lax.fori_loop(0, 5, lambda i, a: jnp.concatenate([a[1:], a[:1] * 2]), x), X)
    case("ov/kv_cache_scan", lambda xs: lax.scan(lambda c, t: (lax.dynamic_update_slice(c, t[1][None], (t[0], 0)), c.sum(0)), jnp.zeros((6, 5)), (jnp.arange(6), xs)), np.concatenate([X, X[:2]]), rtol=LT)
    case("ov/roll_in_loop", lambda x: lax.fori_loop(0, 7, lambda i, a: jnp.roll(a, 1, 1) + a * 0.5, x), X, rtol=LT)
    case("ov/transpose_in_loop_square", lambda x: lax.fori_loop(0, 3, lambda i, a: a.T + a * 0.5, x), X[:4, :4], rtol=LT)
    case("ov/transpose_in_loop_big_square", lambda x: lax.fori_loop(0, 3, lambda i, a: a.T - a[::-1], x), Xb[:37, :37], rtol=LT)
    case("ov/rev_in_loop", lambda v: lax.fori_loop(0, 3, lambda i, a: a[::-1] + a, v), Vb, rtol=LT)
    case("ov/while_carry_alias_two_same", lambda x: lax.fori_loop(0, 4, lambda i, c: (c[1] + 1, c[1]), (x, x)), X)
    case("ov/while_carry_same_buffer_updates", lambda x: lax.fori_loop(0, 3, lambda i, c: (c[0].at[i].set(-1.0), c[1]), (x, x)), X)
    case("ov/sort_in_loop_with_scatter", lambda v: lax.fori_loop(0, 3, lambda i, a: jnp.sort(a.at[i].set(-a[i] * 3)), v), V)
    # big / odd sizes
    case("big/transpose_37x129", lambda x: x.T, Xb)
    case("big/transpose_int_3d_odd", lambda x: jnp.transpose(x.reshape(37, 3, 43), (2, 0, 1)), Ib)
    case("big/transpose_5d_odd", lambda x: jnp.transpose(x.reshape(1, 37, 3, 43, 1), (3, 1, 4, 2, 0)), Xb)
    case("big/gather_rows_odd", lambda x, i: x[i], Xb, R.randint(-37, 37, (53,)).astype(np.int32))
    case("big/gather_cols_odd", lambda x, i: x[:, i], Xb, R.randint(-129, 129, (67,)).astype(np.int32))
    case("big/gather_1d_odd", lambda v, i: v[i], Vb, R.randint(-1031, 1031, (777,)).astype(np.int32))
    case("big/gather_1d_clip_fill", lambda v, i: (v.at[i].get(mode="clip"), v.at[i].get(mode="fill", fill_value=3.0)), Vb, R.randint(-3000, 3000, (777,)).astype(np.int32))
    case("big/gather_int8_big", lambda v, i: v[i], (Vb * 40).astype(np.int8), R.randint(0, 1031, (1000,)).astype(np.int32))
    case("big/gather_bf16_rows", lambda x, i: x[i], Xb.astype(bf16), R.randint(0, 37, (50,)).astype(np.int32))
    case("big/embedding_lookup", lambda e, i: e[i].sum(1), R.standard_normal((1000, 33)).astype(f32), R.randint(0, 1000, (17, 9)).astype(np.int32), rtol=LT, atol=1e-5)
    case("big/take_along_big", lambda x, i: jnp.take_along_axis(x, i, 1), Xb, R.randint(0, 129, (37, 65)).astype(np.int32))
    case("big/scatter_add_big_dups", lambda v, i, u: v.at[i].add(u), np.zeros(257, np.int32), R.randint(0, 257, (5000,)).astype(np.int32), R.randint(-5, 5, (5000,)).astype(np.int32))
    case("big/scatter_add_rows_dups", lambda x, i: x.at[i].add(1.0), Xb, R.randint(0, 37, (200,)).astype(np.int32))
    case("big/scatter_max_big_dups", lambda v, i, u: v.at[i].max(u), np.full(257, -1e9, f32), R.randint(0, 257, (5000,)).astype(np.int32), R.standard_normal(5000).astype(f32))
    case("big/scatter_set_unique_big", lambda v, i: v.at[i].set(-jnp.arange(i.shape[0], dtype=jnp.float32)), Vb, R.permutation(1031)[:700].astype(np.int32))
    case("big/segment_sum_big", lambda v, s: jax.ops.segment_sum(v, s, 100), R.standard_normal((3000, 7)).astype(f32), R.randint(0, 100, (3000,)).astype(np.int32), rtol=1e-4, atol=1e-4)
    case("big/segment_max_sorted_big", lambda v, s: jax.ops.segment_max(v, s, 100, indices_are_sorted=True), R.standard_normal(3000).astype(f32), np.sort(R.randint(0, 100, (3000,))).astype(np.int32))
    case("big/argsort_stable_big_ties", lambda a: jnp.argsort(a, stable=True), R.randint(0, 10, (2049,)).astype(np.int32))
    case("big/argsort_stable_2d_ties", lambda a: jnp.argsort(a, axis=0, stable=True), R.randint(0, 3, (100, 33)).astype(np.int32))
    case("big/sort_desc_stable_multi", lambda k, v: lax.sort((-k, v), num_keys=1, is_stable=True), R.randint(0, 5, (1000,)).astype(np.int32), np.arange(1000, dtype=np.int32))
    case("big/sort_bf16_big", lambda a: jnp.sort(a), R.standard_normal(1025).astype(bf16))
    case("big/sort_f32_nan_big", lambda a: jnp.sort(jnp.where(a > 1.5, jnp.nan, a)), Vb)
    case("big/top_k_big_ties", lambda a: lax.top_k(a, 50), R.randint(0, 20, (3, 1000)).astype(f32))
    case("big/top_k_int_big", lambda a: lax.top_k(a, 17), R.randint(-100, 100, (5, 513)).astype(np.int32))
    case("big/cumsum_int_big_ax0", lambda x: jnp.cumsum(x, 0), Ib)
    case("big/cumsum_f32_big_ax1_rev", lambda x: lax.cumsum(x, 1, reverse=True), Xb, rtol=1e-4, atol=1e-4)
    case("big/cummax_big_ax0_rev", lambda x: lax.cummax(x, 0, reverse=True), Xb)
    case("big/cumprod_int_big", lambda x: jnp.cumprod(x, 1), (Ib % 3))
    case("big/reduce_window_max_big", lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (3, 5), (2, 3), "SAME"), Xb)
    case("big/reduce_window_sum_int_big", lambda x: lax.reduce_window(x, 0, lax.add, (4, 7), (1, 2), ((1, 2), (3, 3))), Ib)
    case("big/pad_interior_big", lambda x: lax.pad(x, 0.0, ((3, -2, 2), (-5, 7, 1))), Xb)
    case("big/concat_many_odd", lambda x: jnp.concatenate([x[:, i:i + 7] for i in range(0, 122, 11)] + [x[:0, :7]], 0), Xb)
    case("big/concat_ax1_many", lambda x: jnp.concatenate([x[:, i:i + 3] * i for i in range(0, 126, 5)], 1), Xb)
    case("big/tile_repeat_big", lambda x: (jnp.tile(x, (2, 3)), jnp.repeat(x, 3, axis=1)), Xb)
    case("big/rev_big", lambda x: lax.rev(x, (0, 1)), Ib)
    case("big/roll_big", lambda x, s: jnp.roll(x, s, axis=1), Xb, np.int32(77))
    case("big/diag_trace_big", lambda x: (jnp.diagonal(x, 5), jnp.trace(x, -3), jnp.tril(x, 2)), Xb, rtol=LT)
    case("big/dot_int_big", lambda a, b: a @ b, Ib[:, :65], (Ib.T[:65, :33] % 17).copy())
    case("big/dot_bf16_big", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32), Xb.astype(bf16), Xb.T.astype(bf16), rtol=2e-2, atol=0.5)
    case("big/dot_batch_odd", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), R.standard_normal((7, 33, 17)).astype(f32), R.standard_normal((7, 17, 65)).astype(f32), rtol=LT, atol=1e-4)
    case("big/einsum_multi_contract_odd", lambda a, b: jnp.einsum("xabc,cbay->xy", a, b), R.standard_normal((9, 5, 7, 3)).astype(f32), R.standard_normal((3, 7, 5, 11)).astype(f32), rtol=LT, atol=1e-4)
    case("big/conv_fgc_big", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", feature_group_count=8, dimension_numbers=("NHWC", "HWIO", "NHWC")),
         R.standard_normal((2, 17, 19, 16)).astype(f32), R.standard_normal((3, 3, 2, 16)).astype(f32), rtol=1e-3, atol=1e-4)
    case("big/conv_depthwise_mult", lambda x, k: lax.conv_general_dilated(x, k, (2, 2), "SAME", feature_group_count=16, dimension_numbers=("NHWC", "HWIO", "NHWC")),
         R.standard_normal((2, 17, 19, 16)).astype(f32), R.standard_normal((5, 5, 1, 32)).astype(f32), rtol=1e-3, atol=1e-4)
    case("big/conv_lhs_dil_big", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), ((2, 2), (2, 2)), lhs_dilation=(2, 2), dimension_numbers=("NHWC", "HWIO", "NHWC")),
         R.standard_normal((2, 9, 11, 8)).astype(f32), R.standard_normal((3, 3, 8, 12)).astype(f32), rtol=1e-3, atol=1e-4)
    case("big/conv_bgc_big", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "VALID", batch_group_count=4, dimension_numbers=("NHWC", "HWIO", "NHWC")),
         R.standard_normal((8, 9, 11, 6)).astype(f32), R.standard_normal((3, 3, 6, 8)).astype(f32), rtol=1e-3, atol=1e-4)
    case("big/vmap_dus", jax.vmap(lambda x, i: lax.dynamic_update_slice(x, jnp.ones((3,)), (i,))), Xb, R.randint(-5, 140, (37,)).astype(np.int32))
    case("big/vmap_dslice", jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (7,))), Xb, R.randint(-5, 140, (37,)).astype(np.int32))
    case("big/vmap_dus_2d", jax.vmap(lambda x, i, j: lax.dynamic_update_slice(x, jnp.zeros((2, 3)), (i, j)), in_axes=(None, 0, 0)), X, np.array([-1, 0, 3, 2, 9], np.int32), np.array([4, -2, 0, 3, 1], np.int32))
    case("big/maxpool_grad_ties", jax.grad(lambda x: jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME") * jnp.arange(4.0).sum())), np.round(R.standard_normal((1, 2, 8, 7))).astype(f32))
    case("big/maxpool_grad_overlap_pad", jax.grad(lambda x: jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (3, 3), (1, 2), ((1, 2), (2, 0))) ** 2)), R.standard_normal((9, 10)).astype(f32), rtol=LT)
    case("big/minpool_grad", jax.grad(lambda x: jnp.sum(lax.reduce_window(x, jnp.inf, lax.min, (2, 3), (2, 1), "VALID") ** 2)), R.standard_normal((9, 10)).astype(f32), rtol=LT)
    case("big/argmax_bf16_nan_bool", lambda a, b: (jnp.argmax(a, 1), jnp.argmin(a, 0), jnp.argmax(b, 1), jnp.argmax(jnp.where(a > 1, jnp.nan, a.astype(jnp.float32)), 0)), Xb.astype(bf16), Xb > 0.5)
    case("big/int8_multi_axis_sum", lambda a: (jnp.sum(a, axis=(0, 2), dtype=jnp.int8), jnp.max(a, axis=(1, 2)), jnp.min(a, axis=(0, 1))), (I3 % 100).astype(np.int8))
    case("big/zero_size_ops", lambda x: (lax.reduce_window(x[:0], 0.0, lax.add, (1, 2), (1, 1), "VALID"), jnp.sort(x[:, :0], 1), jnp.cumsum(x[:0], 0), x[:0] @ x[:0].T if False else x[:0].T @ x[:0], lax.top_k(x[:0], 2)[0]), X)
    case("big/conv_zero_batch", lambda x, k: lax.conv_general_dilated(x[:0], k, (1, 1), "SAME"), IM, K6[:, :, :, :] if False else R.standard_normal((3, 4, 3, 3)).astype(f32))
    case("big/dot_zero_contract_int", lambda a, b: a @ b, np.zeros((3, 0), np.int32), np.zeros((0, 4), np.int32))

    # =====================================================================
    # BATCH 3: odd dtypes in data movement, unsigned/64-bit indices, callbacks in loops, aliasing lifetimes
    # =====================================================================
    C = (R.standard_normal((4, 5)) + 1j * R.standard_normal((4, 5))).astype(np.complex64)
    C3 = (R.standard_normal((3, 4, 5)) + 1j * R.standard_normal((3, 4, 5))).astype(np.complex64)
    case("cx/gather", lambda x, i: (x[i], x[:, i]), C, np.array([3, 0, -1], np.int32))
    case("cx/scatter_add_dups", lambda x, i: x.at[i].add(1 + 2j), C, np.array([3, 0, 0], np.int32), rtol=LT)
    case("cx/scatter_mul", lambda x, i: x.at[i].multiply(1j), C, np.array([3, 0], np.int32), rtol=LT)
    case("cx/dus", lambda x, i: lax.dynamic_update_slice(x, jnp.full((2, 2), 3 - 1j, jnp.complex64), (i, i)), C, np.int32(3))
    case("cx/pad_interior", lambda x: lax.pad(x, jnp.complex64(1j), ((1, -1, 1), (0, 2, 2))), C)
    case("cx/transpose_rev_concat", lambda x: (jnp.transpose(x, (2, 0, 1)), lax.rev(x, (1,)), jnp.concatenate([x, x[:, :1]], 1)), C3)
    case("cx/cumsum_rev", lambda x: lax.cumsum(x, 1, reverse=True), C3, rtol=LT)
    case("cx/cumprod", lambda x: jnp.cumprod(x * 0.5, 2), C3, rtol=LT)
    case("cx/sort_lexicographic", lambda x: jnp.sort(x.ravel()), np.array([1 + 2j, 1 + 1j, -1 + 5j, 1 - 3j, 0j, -1 - 5j], np.complex64))
    case("cx/dot_batch", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), C3, C3.transpose(0, 2, 1).copy(), rtol=LT, atol=1e-5)
    case("cx/reduce_window_sum", lambda x: lax.reduce_window(x, jnp.complex64(0), lax.add, (2, 2), (1, 2), "SAME"), C, rtol=LT)
    case("cx/while_carry", lambda x: lax.fori_loop(0, 4, lambda i, a: a * (1j) + 1, x), C, rtol=LT)
    case("cx/scan_xs", lambda x: lax.scan(lambda c, r: (c * r, c), jnp.ones(5, jnp.complex64), x), C, rtol=LT)
    case("cx/conv", lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME"), (IM[:1] + 1j * IM[1:]).astype(np.complex64), (K6[:3, :, :, :] + 0j).astype(np.complex64)[:, :, :, :].repeat(2, 1)[:, :4] if False else (R.standard_normal((3, 4, 2, 2)) + 1j * R.standard_normal((3, 4, 2, 2))).astype(np.complex64), rtol=1e-3, atol=1e-4)
    case("cx/select_where", lambda x: jnp.where(jnp.abs(x) > 1, x, jnp.conj(x)), C)
    F16 = X.astype(np.float16)
    case("f16/pad_transpose_gather", lambda x, i: (lax.pad(x, jnp.float16(1), ((1, 1, 1), (0, -1, 0))), x.T, x[i]), F16, np.array([0, 3, 3], np.int32))
    case("f16/scatter_add", lambda x, i: x.at[i].add(jnp.float16(0.5)), F16, np.array([0, 3, 3], np.int32), rtol=1e-2)
    case("f16/sort_top_k", lambda x: (jnp.sort(x, 1), lax.top_k(x, 2)), F16)
    case("f16/cumsum_cummax", lambda x: (jnp.cumsum(x, 0), lax.cummax(x, 1, reverse=True)), F16, rtol=1e-2, atol=1e-2)
    case("f16/reduce_window", lambda x: lax.reduce_window(x, jnp.float16(-np.inf), lax.max, (2, 2), (1, 1), "SAME"), F16)
    case("f16/while_scan", lambda x: lax.scan(lambda c, r: (c + r, c * 2), jnp.zeros(5, jnp.float16), x), F16, rtol=1e-2, atol=1e-2)
    for dn in ("float8_e4m3fn", "float8_e5m2"):
        dt = getattr(jnp, dn)
        case(f"f8/{dn}_data_movement", lambda x, i: (x.T, x[i], jnp.concatenate([x, x[::-1]]), lax.pad(x, jnp.zeros((), x.dtype), ((1, 0, 1), (0, 0, 0))), jnp.roll(x, 2, 1), lax.rev(x, (0,))),
             X.astype(dt), np.array([3, 1], np.int32))
        case(f"f8/{dn}_dus_scatter", lambda x, i: (lax.dynamic_update_slice(x, x[:1, :2], (i, i)), x.at[jnp.array([0, 2])].set(x[1])), X.astype(dt), np.int32(2))
        case(f"f8/{dn}_while", lambda x: lax.fori_loop(0, 3, lambda i, a: a[::-1], x), X.astype(dt))
    for dn in ("int4", "uint4"):
        dt = getattr(jnp, dn)
        A4 = (np.arange(20).reshape(4, 5) % 7 - (3 if dn == "int4" else 0)).astype(dt)
        case(f"i4/{dn}_transpose", lambda x: x.T, A4)
        case(f"i4/{dn}_gather", lambda x, i: x[i], A4, np.array([3, 1, 1], np.int32))
        case(f"i4/{dn}_concat_pad", lambda x: (jnp.concatenate([x, x[:, :1]], 1), lax.pad(x, jnp.zeros((), x.dtype), ((1, 0, 1), (0, 1, 0)))), A4)
        case(f"i4/{dn}_to_int32", lambda x: x.astype(jnp.int32) * 3, A4)
        case(f"i4/{dn}_slice_odd", lambda x: (x[:, 1::2], x.ravel()[3:16]), A4)
        case(f"i4/{dn}_from_int32", lambda x: (x % 5).astype(dt), np.arange(-6, 7, dtype=np.int32))
    # unsigned / narrow index dtypes with values that look negative when signed
    V300 = R.standard_normal((300,)).astype(f32)
    case("uix/uint8_idx_gt127", lambda v, i: v[i], V300, np.array([200, 255, 0, 128], np.uint8))
    case("uix/uint8_idx_at_add", lambda v, i: v.at[i].add(1.0), V300, np.array([200, 255, 128], np.uint8))
    case("uix/uint16_idx_big", lambda v, i: v.at[i].get(mode="fill", fill_value=-1.0), V300, np.array([299, 300, 40000, 65535], np.uint16))
    case("uix/uint32_idx_huge_fill", lambda v, i: v.at[i].get(mode="fill", fill_value=-1.0), V300, np.array([299, 2**31, 2**32 - 1], np.uint32))
    case("uix/uint32_idx_huge_clip", lambda v, i: v.at[i].get(mode="clip"), V300, np.array([299, 2**31, 2**32 - 1], np.uint32))
    case("uix/uint32_idx_huge_drop", lambda v, i: v.at[i].set(5.0, mode="drop"), V300, np.array([299, 2**31, 2**32 - 1], np.uint32))
    case("uix/uint8_dslice_start", lambda v, i: lax.dynamic_slice(v, (i,), (5,)), V300, np.uint8(200))
    case("uix/uint8_dus_start", lambda v, i: lax.dynamic_update_slice(v, jnp.ones(5), (i,)), V300, np.uint8(250))
    case("uix/int8_dslice_neg_start", lambda v, i: lax.dynamic_slice(v, (i,), (5,)), V300, np.int8(-100))
    case("uix/uint8_take_along", lambda x, i: jnp.take_along_axis(x, i, 0), V300, np.array([200, 255, 1], np.uint8))
    case("uix/uint8_segment_sum", lambda v, s: jax.ops.segment_sum(v, s, 256), V300[:10], np.array([200, 255, 0, 128, 128, 1, 2, 3, 255, 129], np.uint8), rtol=LT)
    case("uix/bool_index_as_int", lambda v, b: v[b.astype(jnp.int32)], V, np.array([True, False, True]))
    # callbacks inside control flow
    def cb_runner(fn, args):
        def r(dev):
            with jax.default_device(dev):
                return jax.tree_util.tree_map(np.asarray, jax.jit(fn)(*jax.device_put(args, dev)))
        return r
    cb = lambda t: np.asarray(np.sin(t) * 2, dtype=t.dtype)
    case("cb/pure_callback_in_scan", None, runner=cb_runner(lambda x: lax.scan(lambda c, r: (c + jax.pure_callback(cb, jax.ShapeDtypeStruct(r.shape, r.dtype), r), c), jnp.zeros(5), x), (X,)), rtol=1e-5)
    case("cb/pure_callback_in_while", None, runner=cb_runner(lambda x: lax.fori_loop(0, 3, lambda i, a: jax.pure_callback(cb, jax.ShapeDtypeStruct(a.shape, a.dtype), a) + i, x), (X,)), rtol=1e-5)
    case("cb/pure_callback_in_cond", None, runner=cb_runner(lambda x, p: lax.cond(p, lambda a: jax.pure_callback(cb, jax.ShapeDtypeStruct(a.shape, a.dtype), a), lambda a: a * 0, x), (X, True)), rtol=1e-5)
    case("cb/pure_callback_vmap_seq", None, runner=cb_runner(jax.vmap(lambda r: jax.pure_callback(cb, jax.ShapeDtypeStruct(r.shape, r.dtype), r, vmap_method="sequential")), (X,)), rtol=1e-5)
    case("cb/pure_callback_multi_out_dtypes", None, runner=cb_runner(lambda x: jax.pure_callback(lambda t: (np.asarray(t.sum(), np.float32), (t > 0), np.asarray(t.shape[0], np.int32)),
                                                                                                 (jax.ShapeDtypeStruct((), jnp.float32), jax.ShapeDtypeStruct(x.shape, jnp.bool_), jax.ShapeDtypeStruct((), jnp.int32)), x), (X,)), rtol=1e-5)
    case("cb/debug_print_in_fori", None, runner=cb_runner(lambda x: lax.fori_loop(0, 3, lambda i, a: (jax.debug.print("i={i}", i=i), a + 1)[1], x), (X,)))
    def io_cb_runner(dev):
        from jax.experimental import io_callback
        log = []
        def rec(v):
            log.append(float(v))
            return np.asarray(len(log), np.int32)
        f = jax.jit(lambda x: lax.fori_loop(0, 4, lambda i, c: c + io_callback(rec, jax.ShapeDtypeStruct((), jnp.int32), c.astype(jnp.float32) + x, ordered=True), jnp.int32(0)))
        with jax.default_device(dev):
            out = f(jax.device_put(np.float32(0.5), dev))
            return np.asarray(out), np.asarray(log, np.float32)
    case("cb/io_callback_ordered_in_loop", None, runner=io_cb_runner)
    # lifetimes: outputs aliasing inputs must survive deletion of the input
    def alias_life_runner(fn, n_in=1, delete=(0,)):
        def r(dev):
            g = jax.jit(fn)
            with jax.default_device(dev):
                ins = [jax.device_put(X * (k + 1), dev) for k in range(n_in)]
                out = g(*ins)
                jax.block_until_ready(out)
                for k in delete:
                    ins[k].delete()
                return jax.tree_util.tree_map(np.asarray, out)
        return r
    case("life/identity_then_delete_input", None, runner=alias_life_runner(lambda x: x))
    case("life/twice_then_delete_input", None, runner=alias_life_runner(lambda x: (x, x)))
    case("life/pytree_passthrough_delete", None, runner=alias_life_runner(lambda x, y: {"a": x, "b": [y, x]}, 2, (0, 1)))
    case("life/while_passthrough_delete", None, runner=alias_life_runner(lambda x: lax.fori_loop(0, 3, lambda i, c: (c[0], c[1] + 1), (x, 0))[0]))
    case("life/cond_passthrough_delete", None, runner=alias_life_runner(lambda x: lax.cond(True, lambda a: a, lambda a: a * 2, x)))
    case("life/reshape_passthrough_delete", None, runner=alias_life_runner(lambda x: (x.reshape(20), x.reshape(5, 4))))
    def alias_out_delete_runner(dev):
        g = jax.jit(lambda x: (x, x, x + 0))
        with jax.default_device(dev):
            x = jax.device_put(X, dev)
            a, b, c = g(x)
            a.delete()
            r1 = np.asarray(b)
            b.delete()
            return r1, np.asarray(c), np.asarray(x)
    case("life/duplicate_outputs_delete_one", None, runner=alias_out_delete_runner)
    def donate_passthrough_then_delete(dev):
        g = jax.jit(lambda x, y: (x, y + 1), donate_argnums=(0,))
        with jax.default_device(dev):
            x, y = jax.device_put((X, X), dev)
            a, b = g(x, y)
            y.delete()
            r = [np.asarray(a), np.asarray(b)]
            a2, b2 = g(a, b)  # donate the previous passthrough output
            return r + [np.asarray(a2), np.asarray(b2), np.asarray(b)]
    case("life/donate_passthrough_chain", None, runner=donate_passthrough_then_delete)
    def donate_pytree_partial(dev):
        g = jax.jit(lambda d, s: jax.tree_util.tree_map(lambda a: a * s, d), donate_argnums=(0,))
        with jax.default_device(dev):
            d = jax.device_put({"w": X, "b": V, "i": I32}, dev)
            s = jax.device_put(np.int32(3), dev)
            out = g(d, s)
            out2 = g(out, s)
            return jax.tree_util.tree_map(np.asarray, (out2,)), np.asarray(s)
    case("life/donate_pytree_twice", None, runner=donate_pytree_partial)
    def donate_argnames_runner(dev):
        g = jax.jit(lambda a, b: (a * 2, b - 1), donate_argnames=("b",))
        with jax.default_device(dev):
            a, b = jax.device_put((X, X), dev)
            out = g(a, b=b)
            return jax.tree_util.tree_map(np.asarray, out), np.asarray(a), np.array(b.is_deleted())
    case("life/donate_argnames", None, runner=donate_argnames_runner)

    # x64 indexing
    if x64_enabled:
        V64 = R.standard_normal((300,))
        big = np.array([2**32 + 1, 2**33, -2**32 - 2, 299, -1], np.int64)
        case("x64ix/gather_i64_huge_default", lambda v, i: v[i], V64, big, x64=True)
        case("x64ix/gather_i64_huge_fill", lambda v, i: v.at[i].get(mode="fill", fill_value=-7.0), V64, big, x64=True)
        case("x64ix/gather_i64_huge_clip", lambda v, i: v.at[i].get(mode="clip"), V64, big, x64=True)
        case("x64ix/scatter_i64_huge_drop", lambda v, i: v.at[i].add(100.0, mode="drop"), V64, big, x64=True)
        case("x64ix/dslice_i64_huge", lambda v, i: lax.dynamic_slice(v, (i,), (3,)), V64, np.int64(2**32 + 1), x64=True)
        case("x64ix/dslice_i64_neg_huge", lambda v, i: lax.dynamic_slice(v, (i,), (3,)), V64, np.int64(-2**32 + 5), x64=True)
        case("x64ix/dus_i64_huge", lambda v, i: lax.dynamic_update_slice(v, jnp.ones(3), (i,)), V64, np.int64(2**32 + 1), x64=True)
        case("x64ix/uint64_idx_huge", lambda v, i: v.at[i].get(mode="fill", fill_value=-1.0), V64, np.array([2**63 + 3, 5, 2**64 - 1], np.uint64), x64=True)
        case("x64ix/take_along_i64", lambda x, i: jnp.take_along_axis(x, i, 1), R.standard_normal((3, 5)), np.array([[0, 4], [-1, 2], [3, 3]], np.int64), x64=True)
        case("x64ix/segment_sum_i64", lambda v, s: jax.ops.segment_sum(v, s, 4), V64[:8], np.array([0, 3, 3, 1, 2**32, -1, 0, 2], np.int64), x64=True)
        case("x64ix/sort_i64_keys", lambda k, v: lax.sort((k, v), num_keys=1, is_stable=True), np.array([2**40, -2**40, 5, 2**40, -1, 0], np.int64), np.arange(6, dtype=np.float64), x64=True)
        case("x64ix/sort_u64", lambda k: jnp.sort(k), np.array([2**64 - 1, 0, 2**63, 2**63 - 1, 7], np.uint64), x64=True)
        case("x64ix/argsort_f64_ties", lambda a: jnp.argsort(a, stable=True), np.array([1.0, 0.5, 1.0, np.nan, 0.5, -0.0, 0.0]), x64=True)
        case("x64ix/top_k_f64", lambda a: lax.top_k(a, 3), V64, x64=True)
        case("x64ix/cumsum_i64_rev", lambda a: lax.cumsum(a, 0, reverse=True), np.array([2**40, 3, -2**41, 7], np.int64), x64=True)
        case("x64ix/while_i64_carry_mixed", lambda x: lax.while_loop(lambda c: c[0] < 2**33, lambda c: (c[0] * 2 + 1, c[1] + 1.5, c[2] + 1), (jnp.int64(1), x, jnp.int32(0))), V64[:3], x64=True)
        case("x64ix/searchsorted_f64", lambda a, v: jnp.searchsorted(a, v), np.sort(V64), V64[:20], x64=True)
        case("x64ix/scatter_f64_dups", lambda v, i: v.at[i].add(jnp.arange(6.0)), V64[:8], np.array([1, 1, 7, 7, 7, 0], np.int64), x64=True)
        case("x64ix/gather_batching_dims_i64", lambda x, i: lax.gather(x, i, GD(offset_dims=(1,), collapsed_slice_dims=(1,), start_index_map=(1,),
                                          operand_batching_dims=(0,), start_indices_batching_dims=(0,)), slice_sizes=(1, 1, 4), mode="clip"), B.astype(np.float64), bidx.astype(np.int64), x64=True)

    # =====================================================================
    # BATCH 4: fusion / row-chain / column-sum stress with odd, larger shapes
    # =====================================================================
    S1 = R.standard_normal((513, 1025)).astype(f32)
    S2 = R.standard_normal((17, 300, 9)).astype(f32)
    S3 = R.standard_normal((7, 8193)).astype(f32)
    S4 = R.standard_normal((2049, 3)).astype(f32)
    lab = R.randint(0, 1025, (513,)).astype(np.int32)
    sm = lambda x, a: jax.nn.softmax(x, axis=a)
    case("fz/softmax_last_big", lambda x: sm(x, -1), S1, rtol=1e-4, atol=1e-7)
    case("fz/softmax_ax0_big", lambda x: sm(x, 0), S1, rtol=1e-4, atol=1e-7)
    case("fz/softmax_mid_axis", lambda x: sm(x, 1), S2, rtol=1e-4, atol=1e-7)
    case("fz/softmax_first_axis_rank3", lambda x: sm(x, 0), S2, rtol=1e-4, atol=1e-7)
    case("fz/softmax_long_rows", lambda x: sm(x, -1), S3, rtol=1e-4, atol=1e-8)
    case("fz/softmax_short_rows", lambda x: sm(x, -1), S4, rtol=1e-4, atol=1e-7)
    case("fz/softmax_two_axes", lambda x: sm(x, (0, 2)), S2, rtol=1e-4, atol=1e-7)
    case("fz/xent_take_along", lambda x, y: -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(x), y[:, None], 1)), S1, lab, rtol=1e-4)
    case("fz/xent_grad", jax.grad(lambda x, y: -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(x), y[:, None], 1))), S1, lab, rtol=1e-3, atol=1e-8)
    case("fz/layernorm_odd", lambda x: (x - x.mean(-1, keepdims=True)) * lax.rsqrt(x.var(-1, keepdims=True) + 1e-5), S1, rtol=1e-3, atol=1e-4)
    case("fz/layernorm_ax0", lambda x: (x - x.mean(0)) / (x.std(0) + 1e-5), S1, rtol=1e-3, atol=1e-4)
    case("fz/multi_out_max_and_shifted", lambda x: (x.max(-1), x - x.max(-1, keepdims=True), x), S1)
    case("fz/col_norm", lambda x: x / x.sum(0), jnp.abs(S1) + 0.1, rtol=1e-4)
    case("fz/col_and_row_sums", lambda x: (x.sum(0), x.sum(1), x.sum(), x - x.sum(0) / 513 - x.sum(1, keepdims=True) / 1025), S1, rtol=1e-3, atol=1e-3)
    case("fz/int_row_sums_long", lambda x: (x.sum(1), x.max(1), x.min(0)), (S3 * 1000).astype(np.int32))
    case("fz/int8_sum_wrap", lambda x: (jnp.sum(x, axis=1, dtype=jnp.int8), jnp.sum(x, axis=0, dtype=jnp.int8)), (S1 * 50).astype(np.int8))
    case("fz/bool_count_rows", lambda x: (jnp.sum(x > 0, 1), jnp.any(x > 3.5, 0), jnp.all(x > -4, 1)), S1)
    case("fz/argmax_rows_big", lambda x: (jnp.argmax(x, 1), jnp.argmin(x, 0)), S1)
    case("fz/argmax_rows_ties", lambda x: (jnp.argmax(x, 1), jnp.argmin(x, 0)), (S1 > 0).astype(f32))
    case("fz/outer_bcast_sum", lambda a, b: (a[:, None] + b[None, :]) * (a[:, None] > 0), S1[:, 0], S1[0], rtol=1e-5)
    case("fz/bcast_col_times_transpose", lambda x, c: x.T * c[:, None] + x.T.sum(1, keepdims=True), S1[:, :513].copy(), S1[0, :513].copy(), rtol=1e-4, atol=1e-4)
    case("fz/dot_bias_gelu_odd", lambda a, w, b: jax.nn.gelu(a @ w + b), S1[:257, :129], S1[:129, :65], S1[0, :65], rtol=1e-4, atol=1e-4)
    case("fz/dot_transposed_inputs", lambda a, b: (a.T @ b, a[:, :65] @ b.T), S1[:257, :129], S1[:257, :65], rtol=1e-4, atol=1e-4)
    case("fz/dot_then_softmax_then_dot", lambda q, k, v: sm(q @ k.T / 8.0, -1) @ v, S1[:65, :64], S1[100:231, :64], S1[300:431, :33], rtol=1e-4, atol=1e-5)
    case("fz/attention_causal_odd", lambda x: jax.nn.dot_product_attention(x, x, x, is_causal=True), R.standard_normal((2, 37, 3, 16)).astype(f32), rtol=1e-4, atol=1e-5)
    case("fz/rank4_reduce_02", lambda x: (jnp.mean(x, (0, 2)), jnp.max(x, (1, 3)), jnp.sum(x, (0, 1, 2, 3))), R.standard_normal((5, 17, 9, 33)).astype(f32), rtol=1e-4, atol=1e-4)
    case("fz/big_elementwise_chain", lambda x: jnp.tanh(x * 1.5 + 0.5) * jnp.exp(-x * x) - jnp.where(x > 0, x, 0.1 * x), R.standard_normal((1 << 20) + 3).astype(f32), rtol=1e-4, atol=1e-6)
    case("fz/big_output_streamed", lambda v: jnp.outer(v, v[:2049]), R.standard_normal(4099).astype(f32), rtol=1e-5)
    case("fz/reduce_then_bcast_multi_consumers", lambda x: (sm(x, -1), jax.nn.log_softmax(x, -1), x.max(-1)), S2.reshape(153, 3 * 10) if False else S2.reshape(17 * 300, 9), rtol=1e-4, atol=1e-6)
    case("fz/logsumexp_where_mask", lambda x: jax.nn.logsumexp(x, axis=-1, where=x > 0.5), S1, rtol=1e-4)
    case("fz/masked_softmax_all_masked_rows", lambda x: jax.nn.softmax(x, axis=-1, where=x > 10.0), S1[:7], rtol=1e-4)
    case("fz/norm_rows_grad", jax.grad(lambda x: jnp.sum(((x - x.mean(-1, keepdims=True)) * lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)) ** 3)), S1[:65, :257], rtol=1e-3, atol=1e-3)
    case("fz/cumsum_1024x1024_rows", lambda x: jnp.cumsum(x, 1)[::97, ::31], R.standard_normal((1024, 1024)).astype(f32), rtol=1e-3, atol=1e-3)
    case("fz/cumsum_1024x1024_cols_rev", lambda x: lax.cumsum(x, 0, reverse=True)[::97, ::31], R.standard_normal((1024, 1024)).astype(f32), rtol=1e-3, atol=1e-3)
    case("fz/top_k_1000_rows", lambda x: lax.top_k(x, 10), R.standard_normal((64, 1000)).astype(f32))
    case("fz/sort_rows_and_argsort", lambda x: (jnp.sort(x, 1), jnp.argsort(x, 1)), R.standard_normal((64, 1000)).astype(f32))
    case("fz/adam_like", lambda p, g, m, v: (p - 1e-3 * (0.9 * m + 0.1 * g) / (jnp.sqrt(0.999 * v + 0.001 * g * g) + 1e-8), 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g),
         *[R.standard_normal(100003).astype(f32) for _ in range(3)], np.abs(R.standard_normal(100003)).astype(f32), rtol=1e-4, atol=1e-6)

    # =====================================================================
    # BATCH 5: recently optimised paths (slice-of-transpose, block transposes, splat broadcasts, conversions) at vector sizes
    # =====================================================================
    T3 = R.standard_normal((33, 65, 17)).astype(f32)
    W = R.standard_normal((65, 40)).astype(f32)
    case("rt/slice_of_transpose", lambda x: jnp.transpose(x, (1, 0, 2))[3:50:2, ::3, 1:], T3)
    case("rt/slice_of_transpose_neg_step", lambda x: x.T[::-2, 5:30], S1[:100, :77].copy())
    case("rt/slice_of_transpose_dot", lambda x, w: x.T[10:75] @ w[:33], S1[:33, :100].copy(), W, rtol=1e-4, atol=1e-4)
    case("rt/transpose_slice_dot_rank3", lambda x, w: jnp.einsum("abc,bd->acd", jnp.transpose(x, (2, 1, 0))[:, :, 1:30], w), T3, W, rtol=1e-4, atol=1e-4)
    case("rt/dot_transposed_lhs_rhs", lambda a, b: lax.dot_general(a, b, (((0,), (1,)), ((), ()))), S1[:129, :67].copy(), S1[200:233, :129].copy(), rtol=1e-4, atol=1e-4)
    case("rt/dot_batch_transposed", lambda a, b: lax.dot_general(a, b, (((1,), (2,)), ((2,), (0,)))), T3, R.standard_normal((17, 9, 65)).astype(f32), rtol=1e-4, atol=1e-4)
    for p in ((1, 0, 2), (0, 2, 1), (2, 1, 0), (1, 2, 0), (2, 0, 1)):
        case(f"rt/transpose_fused_add_{''.join(map(str, p))}", lambda x, p=p: jnp.transpose(x, p) * 2.0 + 1.0, T3)
        case(f"rt/transpose_fused_bf16_{''.join(map(str, p))}", lambda x, p=p: jnp.transpose(x, p) + x.reshape(-1)[:1], T3.astype(bf16))
        case(f"rt/transpose_int8_{''.join(map(str, p))}", lambda x, p=p: jnp.transpose(x, p) + jnp.int8(1), (T3 * 30).astype(np.int8))
    case("rt/transpose_4d_keep_last_fused", lambda x: jnp.transpose(x, (2, 0, 1, 3)) - x.mean(), R.standard_normal((5, 7, 9, 64)).astype(f32), rtol=1e-5, atol=1e-6)
    case("rt/transpose_4d_keep_last_two", lambda x: jnp.transpose(x, (1, 0, 2, 3)) * 3, R.standard_normal((5, 7, 9, 33)).astype(f32))
    case("rt/transpose_then_slice_then_transpose", lambda x: jnp.transpose(jnp.transpose(x, (2, 0, 1))[3:11, 1:30:3], (1, 2, 0)), T3)
    case("rt/splat_bcast_row", lambda x, b: x + b[:, None], S1, S1[:, 5].copy())
    case("rt/splat_bcast_row_bf16", lambda x, b: x * b[:, None], S1.astype(bf16), S1[:, 5].astype(bf16))
    case("rt/splat_bcast_col_bf16", lambda x, b: x + b[None, :], S1.astype(bf16), S1[5].astype(bf16))
    case("rt/splat_bcast_rank3_mid", lambda x, b: x - b[:, None, :], T3, T3[:, 0, :].copy())
    case("rt/splat_bcast_size1_odd", lambda x, b: jnp.where(x > b, x, b), T3, T3[:, :, :1].copy())
    case("rt/splat_const_bf16_in_select", lambda x: jnp.where(x > 0, x, jnp.bfloat16(0.3)) * jnp.bfloat16(1.5), S1.astype(bf16))
    case("rt/bcast_stored_bf16_read_fused", lambda x, b: (jnp.broadcast_to(b, (513, 1025)) + x, jnp.broadcast_to(b, (513, 1025))), S1.astype(bf16), S1[0].astype(bf16))
    case("rt/bcast_scalar_array_bf16", lambda x, s: x * s + s, S1.astype(bf16), bf16(0.7))
    case("rt/bcast_iota_fused", lambda x: x + lax.broadcasted_iota(jnp.float32, x.shape, 1) * lax.broadcasted_iota(jnp.float32, x.shape, 0), S1, rtol=1e-5)
    SPEC = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-8, -1e-8, 6e-8, 65504, 65519.99, 65520, 1e9, -1e9, 2**31, -2**31, 2**31 - 64, -2**31 - 129,
                     2.5, 3.5, -2.5, 1 + 2**-11, 1 + 3 * 2**-11, 5.96e-8, 2.98e-8, 3e-5, 2**32, 4.3e9, -1.0, 127.7, 128.0, -128.9, 255.5, 256.0, 32767.5, -32768.9], f32)
    SPECB = np.tile(SPEC, 9)[:317] * np.repeat(np.array([1.0, 1.0, -1.0], f32), 106)[:317]
    for dn in ("int32", "uint32", "int8", "uint8", "int16", "uint16"):
        case(f"cv/f32_to_{dn}_special_vec", lambda x, d=dn: x.astype(getattr(jnp, d)), SPECB)
    case("cv/f32_to_f16_special_vec", lambda x: x.astype(jnp.float16), SPECB)
    case("cv/f32_to_bf16_special_vec", lambda x: x.astype(bf16), SPECB)
    case("cv/f16_to_f32_vec", lambda x: x.astype(jnp.float32) * 1.0, np.arange(-65504, 65504, 411.3).astype(np.float16))
    case("cv/f16_subnormals_roundtrip", lambda x: (x.astype(jnp.float16), x.astype(jnp.float16).astype(jnp.float32)), (np.arange(1, 300, dtype=f32) * 2.0 ** -25))
    case("cv/f32_to_f16_ties_vec", lambda x: x.astype(jnp.float16), (1 + (np.arange(0, 300, dtype=f32) + 0.5) * 2 ** -10).astype(f32))
    case("cv/int_to_f16_vec", lambda x: x.astype(jnp.float16), np.arange(-100000, 100000, 613, dtype=np.int32))
    case("cv/f32_to_int_fused", lambda x: (x * 3.7).astype(jnp.int32) + (x > 0).astype(jnp.int32), S1 * 1e9)
    case("cv/bf16_to_int", lambda x: x.astype(jnp.int32), SPECB.astype(bf16))
    case("cv/f16_to_int8", lambda x: x.astype(jnp.int8), np.clip(SPECB, -60000, 60000).astype(np.float16))
    case("cv/uint32_to_f32_vec", lambda x: x.astype(jnp.float32), np.array([0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**24 + 1, 16777217, 4294967040] * 40, np.uint32))
    case("cv/int32_to_f32_round", lambda x: x.astype(jnp.float32), np.array([2**24 + 1, 2**24 + 3, -2**31, 2**31 - 1, 123456789] * 60, np.int32))
    if x64_enabled:
        for dn in ("int64", "uint64"):
            case(f"cv/f32_to_{dn}_special_vec", lambda x, d=dn: x.astype(getattr(jnp, d)), np.concatenate([SPECB, np.array([9.3e18, -9.3e18, 1.8e19, 2**63], f32)]), x64=True)
            case(f"cv/f64_to_{dn}_special_vec", lambda x, d=dn: x.astype(getattr(jnp, d)), np.concatenate([SPECB.astype(np.float64), np.array([9.3e18, -9.3e18, 1.8e19, 2.0**63, 2.0**64, 2.0**63 - 1024])]), x64=True)
        case("cv/f64_to_int32_special_vec", lambda x: x.astype(jnp.int32), SPECB.astype(np.float64), x64=True)
        case("cv/i64_to_f32_vec", lambda x: x.astype(jnp.float32), np.array([2**53 + 1, -2**63, 2**63 - 1, 2**24 + 1, 12345678901234] * 40, np.int64), x64=True)
        case("cv/u64_to_f64_vec", lambda x: x.astype(jnp.float64), np.array([2**64 - 1, 2**63, 2**53 + 1, 0] * 40, np.uint64), x64=True)

    # =====================================================================
    # BATCH 6: read-after-write in loops, host transfers of strided views, concurrency
    # =====================================================================
    BIG = R.standard_normal((300, 257)).astype(f32)
    case("raw/dus_and_old_sum_in_loop", lambda x: lax.fori_loop(0, 5, lambda i, c: (lax.dynamic_update_slice(c[0], jnp.full((10, 257), i * 1.0), (i * 7, 0)), c[1] + c[0].sum()), (x, 0.0)), BIG, rtol=1e-4, atol=1e-2)
    case("raw/dus_and_old_row_in_loop", lambda x: lax.fori_loop(0, 5, lambda i, c: (c[0].at[i].set(-1.0), c[1] + c[0][i]), (x, jnp.zeros(257))), BIG, rtol=1e-5)
    case("raw/scatter_and_old_in_loop", lambda x: lax.fori_loop(0, 4, lambda i, c: (c[0].at[jnp.arange(50) * 3 + i].add(1.0), c[0]), (x, x)), BIG)
    case("raw/dus_read_after_write_same_body", lambda x: lax.fori_loop(0, 6, lambda i, c: lax.dynamic_update_slice(c, lax.dynamic_slice(c, (i, 0), (1, 257)) + lax.dynamic_slice(c, (i + 1, 0), (1, 257)), (i + 1, 0)), x), BIG, rtol=1e-5)
    case("raw/out_old_and_new", lambda x: (x, x.at[5].set(0.0), lax.dynamic_update_slice(x, jnp.zeros((3, 3)), (1, 1))), BIG)
    case("raw/scan_carry_big_ys_big", lambda x: lax.scan(lambda c, r: (c.at[0].add(r), c[0] * 2), jnp.zeros((4, 257)), x[:20]), BIG, rtol=1e-5)
    case("raw/while_early_exit_big", lambda x: lax.while_loop(lambda c: (c[0] < 100) & (c[1].max() < 50.0), lambda c: (c[0] + 1, c[1] * 1.3 + 0.1), (0, x)), BIG, rtol=1e-4)
    case("raw/switch_in_scan_from_xs", lambda x, k: lax.scan(lambda c, t: (lax.switch(t[1], [lambda a: a + t[0], lambda a: a * 0.5, lambda a: a - t[0].max()], c), c.sum()), jnp.zeros(5), (x, k)), X, np.array([0, 2, 1, 0], np.int32), rtol=LT)
    case("raw/scan_size1_axis", lambda x: lax.scan(lambda c, r: (c * r, c), jnp.ones((5,)), x[:1]), X)
    case("raw/map_big", lambda x: lax.map(lambda r: jnp.sort(r)[::-1][:5] + r.sum(), x), BIG, rtol=1e-4, atol=1e-4)
    case("raw/cond_pred_from_big_reduce", lambda x: lax.cond(x.sum() > 0, lambda a: a[::-1] * 2, lambda a: a.T[:300, :257] if False else -a, x), BIG)

    def strided_put_runner(dev):
        base = np.arange(4 * 6 * 10, dtype=f32).reshape(4, 6, 10)
        views = [base.transpose(2, 0, 1), base[:, ::-1, ::2], base[::2, 1:5, ::-3], np.asfortranarray(base), base.astype(bf16).transpose(1, 2, 0),
                 (base % 100).astype(np.int8)[:, :, ::-1], base[..., 3], np.float32(5)[()], base[:, :0], np.ascontiguousarray(base).view(np.int32)[::3]]
        with jax.default_device(dev):
            outs = []
            for v in views:
                a = jax.device_put(v, dev)
                outs.append(np.asarray(a))
                outs.append(np.asarray(jax.jit(lambda t: t * 1)(a)))
            return outs
    case("xfer/strided_views_put", None, runner=strided_put_runner)

    def device_get_runner(dev):
        with jax.default_device(dev):
            t = jax.jit(lambda x: {"a": x, "b": [x > 0, (x * 100).astype(jnp.int8), x.astype(bf16)], "c": jnp.zeros((0, 2)), "d": x.sum()})(jax.device_put(BIG, dev))
            return jax.device_get(t)
    case("xfer/device_get_pytree", None, runner=device_get_runner, rtol=1e-4)

    AR = R.standard_normal((512, 512)).astype(f32)

    def async_read_runner(dev):
        with jax.default_device(dev):
            x = jax.device_put(AR, dev)
            f = jax.jit(lambda a: lax.fori_loop(0, 20, lambda i, b: jnp.tanh(b @ a * 0.05), a))
            outs = [f(x) for _ in range(3)]
            for o in outs:
                o.copy_to_host_async()
            return [np.asarray(o) for o in outs]
    case("xfer/async_copy_many", None, runner=async_read_runner, rtol=1e-4, atol=1e-5)

    def threads_runner(dev):
        import threading
        f = jax.jit(lambda a, b: (jnp.sort(a, 1) @ b, a.at[0].add(b[0, 0])))
        res = {}
        errs = []
        with jax.default_device(dev):
            ins = [jax.device_put((BIG[:64, :64] * (k + 1), BIG[64:128, :64] - k), dev) for k in range(8)]
            def work(k):
                try:
                    with jax.default_device(dev):
                        for rep in range(10):
                            out = f(*ins[k])
                            res[(k, rep)] = jax.tree_util.tree_map(np.asarray, out)
                except Exception as e:  # noqa
                    errs.append(repr(e))
            th = [threading.Thread(target=work, args=(k,)) for k in range(8)]
            [t.start() for t in th]
            [t.join() for t in th]
        if errs:
            raise RuntimeError(errs[0])
        # every repetition must be identical; return the first of each k
        for k in range(8):
            for rep in range(1, 10):
                for a, b in zip(jax.tree_util.tree_leaves(res[(k, 0)]), jax.tree_util.tree_leaves(res[(k, rep)])):
                    assert np.array_equal(a, b), f"thread {k} rep {rep} nondeterministic"
        return [res[(k, 0)] for k in range(8)]
    case("conc/threads_same_executable", None, runner=threads_runner, rtol=1e-4, atol=3e-3)  # 64-term f32 dots of terms ~40 cancelling to ~0.1: XLA itself is 1e-3 off f64

    def threads_donate_runner(dev):
        import threading
        f = jax.jit(lambda s, x: (s + x, (s * x).sum()), donate_argnums=(0,))
        out = {}
        errs = []
        def work(k):
            try:
                with jax.default_device(dev):
                    s = jax.device_put(np.zeros((128, 64), f32), dev)
                    x = jax.device_put(BIG[:128, :64] * (k + 1), dev)
                    tot = []
                    for _ in range(15):
                        s, t = f(s, x)
                        tot.append(t)
                    out[k] = (np.asarray(s), np.asarray(jnp.stack(tot)))
            except Exception as e:  # noqa
                errs.append(repr(e))
        th = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        [t.start() for t in th]
        [t.join() for t in th]
        if errs:
            raise RuntimeError(errs[0])
        return [out[k] for k in range(6)]
    case("conc/threads_donation_loops", None, runner=threads_donate_runner, rtol=1e-4, atol=1e-3)
