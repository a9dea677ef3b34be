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

inline ReducedDims SplitReduced(const std::vector<int64_t>& dims, const std::vector<int64_t>& reduced) {
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  ReducedDims r;
  for (size_t d = 0; d < dims.size(); ++d) {
    const bool is_reduced = std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) != reduced.end();
    (is_reduced ? r.reduced_dims : r.kept_dims).push_back(dims[d]);
    (is_reduced ? r.reduced_strides : r.kept_strides).push_back(strides[d]);
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
