// Recognisers for small computation shapes that the evaluator and plugins
// both special-case.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/ir.h"
#include "hlo/attributes.h"

namespace anvil::hlo {

// The op of a reducer `(a, b) -> a op b` when that single commutative op
// (add, multiply, maximum, minimum, and, or) is all it does.
std::optional<Opcode> SingleOpReducer(const Computation& body);

// A reduce-window that is a scan: a prefix window along one dimension of
// `length` elements, in `outer` blocks of `length * inner` (row-major), so
// that output o along it combines inputs 0..o in order, as the window walk
// takes them. Each output is then the one before it combined with one more
// input: the same combines in the same order, for any body, in O(n) rather
// than O(n^2) (JAX's cumsum, cummax, cumlogsumexp).
struct WindowScan {
  int64_t outer = 1, length = 1, inner = 1;
  int64_t lines() const { return outer * inner; }
  // Where line `line` (of lines()) starts; its elements are inner apart.
  int64_t LineStart(int64_t line) const { return (line / inner) * length * inner + line % inner; }
};
// The scan a window describes, if it is a prefix window along exactly one
// dimension (size n = the dimension, padded n-1 below and 0 above, stride 1,
// no dilation) with windows of one element everywhere else.
std::optional<WindowScan> PrefixScan(const std::vector<WindowDim>& window, const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& out_dims);
// The same for a suffix window (padded 0 below and n-1 above: JAX's
// reverse cumulative ops), whose output o combines inputs o..n-1 in order.
// Only a body that is exactly associative and commutative, or a sum that
// rounds once, can be scanned from the end for it.
std::optional<WindowScan> SuffixScan(const std::vector<WindowDim>& window, const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& out_dims);

}  // namespace anvil::hlo
