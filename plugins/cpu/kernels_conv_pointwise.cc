// Pointwise (1x1) f32 convolutions on batch-feature-spatial activations
// (NCHW, PyTorch's layout and MobileNet's) that expand few input features
// into a result too large to stay in the caches. Per image, the result is
// the product of the [cout, cin] weights and the image's [cin, positions]
// input; it is computed a block of columns at a time into a buffer that
// fits in L2 (oneDNN's sgemm) and copied out with non-temporal stores
// (streamed_stores.h).
//
// oneDNN's gemm convolution writes the same product straight into the
// result with plain stores, each of which first reads the line it writes:
// on an expanding layer (16 input features to 96, [96,96,112,112] out, the
// output 6x the input) that read doubles the memory traffic of the whole
// convolution. Streamed, the result is written once.
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <memory>

#include "plugins/cpu/conv_pointwise.h"
#include "plugins/cpu/openmp_threads.h"
#include "plugins/cpu/streamed_stores.h"

namespace anvil::cpu {
namespace {

// Whether dimensions `batch`, `feature` and `spatial` of an activation are
// 0, 1, then 2, 3... in order: each image a row-major [features, positions]
// matrix.
bool BatchFeatureSpatial(int64_t batch, int64_t feature, const std::vector<int64_t>& spatial) {
  if (batch != 0 || feature != 1) return false;
  for (size_t s = 0; s < spatial.size(); ++s) {
    if (spatial[s] != static_cast<int64_t>(s) + 2) return false;
  }
  return true;
}

// The L2-sized block of the result each step computes before streaming it:
// a [cout, columns] buffer of 64K floats at most, whole vectors wide.
constexpr int64_t kBlockFloats = int64_t{64} << 10;

// The most input features (the product's depth) this kernel takes.
constexpr int64_t kMaxInputFeatures = 128;

}  // namespace

std::optional<PointwiseProblem> PosePointwise(const hlo::Instruction& i, const ConvolutionAttributes& attributes) {
  const hlo::ConvDimensionNumbers& dn = attributes.dn;
  if (i.operands.size() != 2 || attributes.feature_groups != 1 || attributes.batch_groups != 1) return std::nullopt;
  const hlo::Instruction* lhs = i.operands[0];
  const hlo::Instruction* rhs = i.operands[1];
  for (const hlo::Instruction* operand : {lhs, rhs, &i}) {
    if (!operand->shape.IsArray() || operand->shape.element_type() != hlo::ElementType::kF32) return std::nullopt;
  }
  for (const hlo::WindowDim& w : attributes.window) {
    if (w.size != 1 || w.stride != 1 || w.pad_low != 0 || w.pad_high != 0 || w.base_dilation != 1 ||
        w.window_dilation != 1) {
      return std::nullopt;
    }
  }
  if (!BatchFeatureSpatial(dn.input_batch, dn.input_feature, dn.input_spatial) ||
      !BatchFeatureSpatial(dn.output_batch, dn.output_feature, dn.output_spatial)) {
    return std::nullopt;
  }
  const std::vector<int64_t>& ld = i.operands[0]->shape.dims();
  const std::vector<int64_t>& rd = i.operands[1]->shape.dims();
  const std::vector<int64_t>& od = i.shape.dims();
  if (ld.size() != od.size() || ld.size() < 2) return std::nullopt;
  PointwiseProblem p;
  p.batch = ld[0];
  p.cin = ld[1];
  p.cout = od[1];
  for (size_t d = 2; d < ld.size(); ++d) {
    if (od[d] != ld[d]) return std::nullopt;
    p.positions *= ld[d];
  }
  if (od[0] != p.batch || rd[dn.kernel_input_feature] != p.cin || rd[dn.kernel_output_feature] != p.cout) {
    return std::nullopt;
  }
  // The kernel's spatial dimensions are all 1: it is a [cout, cin] matrix
  // when its output feature comes first, else a [cin, cout] one.
  p.weights_out_first = dn.kernel_output_feature < dn.kernel_input_feature;
  return p;
}

void RunPointwiseConvolution(const PointwiseProblem& p, const float* x, const float* w, float* y,
                             const Parallel& parallel) {
  const int64_t columns = std::min(p.positions, std::clamp<int64_t>(kBlockFloats / p.cout / 16 * 16, 16, 1024));
  const int64_t blocks = (p.positions + columns - 1) / columns;  // per image
  parallel.ForEachThread(p.batch * blocks, [&](int64_t lo, int64_t hi) {
    OpenMpThreads one(1);  // each sgemm on this thread: the split is the arena's (kernels_dot.cc says why)
    std::unique_ptr<float[]> block(new float[static_cast<size_t>(p.cout * columns)]);
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t n = t / blocks, p0 = t % blocks * columns, count = std::min(columns, p.positions - p0);
      dnnl_sgemm(p.weights_out_first ? 'N' : 'T', 'N', p.cout, count, p.cin, 1.0f, w,
                 p.weights_out_first ? p.cin : p.cout, x + n * p.cin * p.positions + p0, p.positions, 0.0f,
                 block.get(), count);
      for (int64_t o = 0; o < p.cout; ++o) {
        StreamTile(block.get() + o * count, y + (n * p.cout + o) * p.positions + p0, count);
      }
    }
    FenceStreamedStores();
  });
}

Kernel StreamedPointwiseConvolutionKernel(const hlo::Instruction& i, const ConvolutionAttributes& attributes,
                                          const std::vector<Slot>& in, const Slot& out) {
  const std::optional<PointwiseProblem> problem = PosePointwise(i, attributes);
  if (!problem || in.size() != 2) return nullptr;
  const PointwiseProblem p = *problem;
  // Only where the stores are most of the traffic and the product is
  // cheap beside it: an expanding layer of few input features. With many
  // (1280 out of 320 at 7x7) the product itself is the work, and oneDNN
  // runs it as fast in its own layout; a contracting layer (96 in, 16 out)
  // reads far more than it writes, and streaming gained nothing there.
  if (p.cout < p.cin || p.cin > kMaxInputFeatures || p.batch * p.cin * p.positions == 0) return nullptr;
  const int64_t result_bytes = p.batch * p.cout * p.positions * 4;
  if (!ResultStreams(result_bytes, result_bytes + p.batch * p.cin * p.positions * 4)) return nullptr;
  const Slot x = in[0], w = in[1], y = out;
  return [=](const Frame& frame) {
    RunPointwiseConvolution(p, static_cast<const float*>(frame.At(x)), static_cast<const float*>(frame.At(w)),
                            static_cast<float*>(frame.At(y)), *frame.parallel);
  };
}

}  // namespace anvil::cpu
