"""Scatters in JAX's FILL_OR_DROP mode, lowered for the anvil platform.

JAX documents that mode as dropping a scattered window whole when any part
of it falls out of bounds, and lowers it to a plain stablehlo.scatter,
relying on XLA, which checks each window's start before it writes any of
it. The StableHLO spec (and Anvil, which follows it) instead skips the
out-of-bounds elements one by one, so a window hanging over an edge had
its in-bounds part written: lax.scatter_add of a 2-wide window at index 3
of an f32[4] gave [0, 0, 0, 10] where XLA gives [0, 0, 0, 0].

So for this mode the lowering first moves the start of every window that
does not fit wholly to the operand's extent along each scattered
dimension, out of bounds with every element of its window; the plain
scatter then drops exactly the windows XLA drops. This is what JAX's own
CLIP mode does with its indices (it clamps them), and what it does for a
FILL_OR_DROP gather (a mask).
"""

from functools import partial


def register(mlir, platform: str) -> None:
    from jax._src.lax import slicing

    rule = partial(_lower, slicing)
    for primitive in (slicing.scatter_p, slicing.scatter_add_p, slicing.scatter_sub_p, slicing.scatter_mul_p,
                      slicing.scatter_min_p, slicing.scatter_max_p):
        mlir.register_lowering(primitive, rule, platform=platform)


def _window_sizes(operand_shape, updates_shape, dnums):
    """The window's extent along each operand dimension (1 where inserted or batched)."""
    sizes, window = [], 0
    for d in range(len(operand_shape)):
        if d in dnums.inserted_window_dims or d in dnums.operand_batching_dims:
            sizes.append(1)
        else:
            sizes.append(updates_shape[dnums.update_window_dims[window]])
            window += 1
    return sizes


def _drop_partial_windows(operand, indices, updates, *, dnums):
    """`indices` with each window that does not fit wholly moved out of bounds.

    They are widened first (to int32, or int64 for extents past 2^31 - 2):
    an int8 or uint16 index may be unable to hold a start past the end (the
    extent itself), and a start its type cannot reach would be written
    inside the operand. Widening keeps every value's meaning: an unsigned
    index too large for the wider signed type wraps negative, and it was out
    of bounds already.
    """
    import numpy as np
    from jax import lax

    sizes = _window_sizes(operand.shape, updates.shape, dnums)
    dims = dnums.scatter_dims_to_operand_dims
    if not dims:
        return indices
    wide = np.int64 if max(operand.shape[d] for d in dims) >= np.iinfo(np.int32).max else np.int32
    if indices.dtype != wide:
        indices = lax.convert_element_type(indices, wide)
    # The last start at which the window fits, and a start past the end.
    last = np.array([operand.shape[d] - sizes[d] for d in dims], dtype=wide)
    past = np.array([operand.shape[d] for d in dims], dtype=wide)
    vector = (len(indices.shape) - 1,)  # JAX puts the index vector last
    last = lax.broadcast_in_dim(last, indices.shape, vector)
    past = lax.broadcast_in_dim(past, indices.shape, vector)
    fits = lax.bitwise_and(lax.ge(indices, lax.full_like(indices, 0)), lax.le(indices, last))
    whole = lax.reduce_and(fits, axes=vector)
    whole = lax.broadcast_in_dim(whole, indices.shape, tuple(range(len(indices.shape) - 1)))
    return lax.select(whole, indices, past)


def _lower(slicing, ctx, operand, indices, updates, *, dimension_numbers, mode, **params):
    if mode == slicing.GatherScatterMode.FILL_OR_DROP:
        mlir = slicing.mlir
        drop = mlir.lower_fun(_drop_partial_windows, multiple_results=False)
        (indices,) = drop(ctx.replace(avals_out=None), operand, indices, updates, dnums=dimension_numbers)
    return slicing._scatter_lower(ctx, operand, indices, updates, dimension_numbers=dimension_numbers, mode=mode,
                                  **params)
