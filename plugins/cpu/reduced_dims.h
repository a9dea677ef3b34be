// A reduction's input dimensions split into those its outputs keep and those
// it reduces, with their row-major element strides, and the walk over the
// reduced positions of one output in the order the evaluator combines them.
// Shared by the reduce kernels (kernels_reduce.cc, kernels_lane_reduce.cc,
// kernels_scalar.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "plugins/cpu/plan.h"

namespace anvil::cpu {

struct ReducedDims {
  std::vector<int64_t> kept_dims, kept_strides, reduced_dims, reduced_strides;
};

// Dimensions of size 1 are dropped (their index is always 0), and runs of
// neighbouring kept dimensions, or of neighbouring reduced ones, are merged
// into one (row-major, a run is one dimension of their product with the
// innermost's stride): the positions come in the same order, and a reduce
// of a whole [4096, 4096] is one contiguous row of 16M elements for the
// kernels' row loops rather than an odometer of two dimensions walked an
// element at a time. (An f32 sum over several trailing dimensions, [8, 64,
// 64] over {1, 2}, is then one row of 4096 and summed in lanes, as its
// fused reduce already summed it, where it was summed in order.) A reduce that reduces only
// dimensions of size 1 keeps one, so reduced_dims is never empty when
// `reduced` is not.
inline ReducedDims SplitReduced(const std::vector<int64_t>& dims, const std::vector<int64_t>& reduced) {
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  ReducedDims r;
  int last_kind = -1;  // of the last dimension taken: 0 kept, 1 reduced
  for (size_t d = 0; d < dims.size(); ++d) {
    const bool is_reduced = std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) != reduced.end();
    if (dims[d] == 1) continue;
    std::vector<int64_t>& to_dims = is_reduced ? r.reduced_dims : r.kept_dims;
    std::vector<int64_t>& to_strides = is_reduced ? r.reduced_strides : r.kept_strides;
    if (last_kind == static_cast<int>(is_reduced)) {
      to_dims.back() *= dims[d];
      to_strides.back() = strides[d];
    } else {
      to_dims.push_back(dims[d]);
      to_strides.push_back(strides[d]);
    }
    last_kind = static_cast<int>(is_reduced);
  }
  if (r.reduced_dims.empty() && !reduced.empty()) {
    r.reduced_dims.push_back(1);
    r.reduced_strides.push_back(1);
  }
  return r;
}

// The reduced positions of one output: an odometer over the reduced
// dimensions (the last moving fastest), giving each position's element
// offset from the output's base.
class ReducedWalk {
 public:
  ReducedWalk(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides)
      : dims_(dims), strides_(strides), index_(dims.size(), 0) {}
  // The walk from position `start` (a chunk's first reduced row).
  ReducedWalk(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t start)
      : ReducedWalk(dims, strides) {
    for (size_t d = dims_.size(); d-- > 0;) {
      index_[d] = dims_[d] > 0 ? start % dims_[d] : 0;
      offset_ += index_[d] * strides_[d];
      start = dims_[d] > 0 ? start / dims_[d] : 0;
    }
  }
  int64_t offset() const { return offset_; }
  void Next() {
    for (size_t d = dims_.size(); d-- > 0;) {
      offset_ += strides_[d];
      if (++index_[d] < dims_[d]) return;
      offset_ -= index_[d] * strides_[d];
      index_[d] = 0;
    }
  }

 private:
  const std::vector<int64_t>& dims_;
  const std::vector<int64_t>& strides_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

}  // namespace anvil::cpu
