// f32 dot through oneDNN's sgemm, for the layouts it takes directly: batch
// dimensions first on both sides, one contracting dimension, at most one
// free dimension per side (either order: sgemm transposes).
#include <oneapi/dnnl/dnnl.h>

#include "hlo/attributes.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {

Kernel DotKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.shape.element_type() != hlo::ElementType::kF32 || i.operands.size() != 2) return nullptr;
  const hlo::Shape& l = i.operands[0]->shape;
  const hlo::Shape& r = i.operands[1]->shape;
  if (l.element_type() != hlo::ElementType::kF32 || r.element_type() != hlo::ElementType::kF32) return nullptr;
  auto lb = hlo::IntListAttribute(i, "lhs_batch_dims");
  auto rb = hlo::IntListAttribute(i, "rhs_batch_dims");
  auto lc = hlo::IntListAttribute(i, "lhs_contracting_dims");
  auto rc = hlo::IntListAttribute(i, "rhs_contracting_dims");
  if (!lb.ok() || !rb.ok() || !lc.ok() || !rc.ok() || lc->size() != 1 || rc->size() != 1) return nullptr;
  const int64_t nb = static_cast<int64_t>(lb->size());
  int64_t batch = 1;
  for (int64_t d = 0; d < nb; ++d) {
    if ((*lb)[d] != d || (*rb)[d] != d) return nullptr;  // batch dims must lead, in order
    batch *= l.dim(static_cast<int>(d));
  }
  const int64_t lfree = l.rank() - nb - 1, rfree = r.rank() - nb - 1;
  if (lfree < 0 || lfree > 1 || rfree < 0 || rfree > 1) return nullptr;
  const int64_t K = l.dim(static_cast<int>((*lc)[0]));
  const int64_t M = lfree ? l.dim(static_cast<int>((*lc)[0] == nb ? nb + 1 : nb)) : 1;
  const int64_t N = rfree ? r.dim(static_cast<int>((*rc)[0] == nb ? nb + 1 : nb)) : 1;
  // Row-major A is MxK unless the contracting dim comes first (then KxM).
  const char transa = lfree && (*lc)[0] == nb ? 'T' : 'N';
  const char transb = rfree && (*rc)[0] == nb + 1 ? 'T' : 'N';
  const int64_t lda = transa == 'N' ? K : M, ldb = transb == 'N' ? N : K;
  const Slot a = in[0], b = in[1], c = out;
  return [=](const Frame& frame) {
    const float* x = static_cast<const float*>(frame.At(a));
    const float* y = static_cast<const float*>(frame.At(b));
    float* z = static_cast<float*>(frame.At(c));
    for (int64_t t = 0; t < batch; ++t) {
      dnnl_sgemm(transa, transb, M, N, K, 1.0f, x + t * M * K, lda, y + t * K * N, ldb, 0.0f, z + t * M * N, N);
    }
  };
}

}  // namespace anvil::cpu
