// Dots through oneDNN's sgemm. f32 operands in the layouts sgemm takes
// directly (batch dimensions first on both sides, one contracting dimension,
// at most one free dimension per side, either order) go straight in. Every
// other dot with an f32, bf16 or f16 result is packed first: each operand is
// gathered (and widened to f32) into [batch][rows][depth] and
// [batch][depth][cols], multiplied, and the result rounded to its type, as
// the reference evaluator computes such dots in f32.
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <memory>

#include "hlo/attributes.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;

// An operand's dimensions in packing order with their element strides in
// the operand; the packed array is their row-major order.
struct Packing {
  std::vector<int64_t> dims, strides;
  int64_t rows = 1, cols = 1;  // the product of all dimensions but the last, and the last
};

Packing MakePacking(const hlo::Shape& shape, const std::vector<int64_t>& order) {
  const std::vector<int64_t> source = RowMajorStrides(shape.dims());
  Packing p;
  for (int64_t d : order) {
    p.dims.push_back(shape.dim(static_cast<int>(d)));
    p.strides.push_back(source[d]);
  }
  if (p.dims.empty()) {
    p.dims = {1};
    p.strides = {0};
  }
  p.cols = p.dims.back();
  for (size_t d = 0; d + 1 < p.dims.size(); ++d) p.rows *= p.dims[d];
  return p;
}

template <typename T>
void PackRows(const void* source, float* packed, const Packing& p, int64_t begin, int64_t end) {
  const T* x = static_cast<const T*>(source);
  const size_t last = p.dims.size() - 1;
  const int64_t step = p.strides[last];
  for (int64_t row = begin; row < end; ++row) {
    int64_t rest = row, offset = 0;
    for (size_t d = last; d-- > 0;) {
      offset += (rest % p.dims[d]) * p.strides[d];
      rest /= p.dims[d];
    }
    float* out = packed + row * p.cols;
    for (int64_t j = 0; j < p.cols; ++j) out[j] = ToFloat(x[offset + j * step]);
  }
}

using PackFn = void (*)(const void*, float*, const Packing&, int64_t, int64_t);

PackFn PackerFor(ElementType t) {
  switch (t) {
    case ElementType::kF32: return PackRows<float>;
    case ElementType::kBF16: return PackRows<Bf16>;
    case ElementType::kF16: return PackRows<F16>;
    case ElementType::kF64: return PackRows<double>;
    case ElementType::kS4: case ElementType::kS8: return PackRows<int8_t>;  // sub-byte values sit sign-extended in a byte
    case ElementType::kU4: case ElementType::kU8: case ElementType::kPred: return PackRows<uint8_t>;
    case ElementType::kS16: return PackRows<int16_t>;
    case ElementType::kU16: return PackRows<uint16_t>;
    case ElementType::kS32: return PackRows<int32_t>;
    case ElementType::kU32: return PackRows<uint32_t>;
    default: return nullptr;
  }
}

Kernel PackedDotKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  const ElementType t = i.shape.element_type();
  if (t != ElementType::kF32 && t != ElementType::kBF16 && t != ElementType::kF16) return nullptr;
  const hlo::Shape& l = i.operands[0]->shape;
  const hlo::Shape& r = i.operands[1]->shape;
  const PackFn pack_lhs = PackerFor(l.element_type()), pack_rhs = PackerFor(r.element_type());
  if (!pack_lhs || !pack_rhs) return nullptr;
  auto lb = hlo::IntListAttribute(i, "lhs_batch_dims");
  auto rb = hlo::IntListAttribute(i, "rhs_batch_dims");
  auto lc = hlo::IntListAttribute(i, "lhs_contracting_dims");
  auto rc = hlo::IntListAttribute(i, "rhs_contracting_dims");
  if (!lb.ok() || !rb.ok() || !lc.ok() || !rc.ok()) return nullptr;
  auto free_dims = [](int rank, const std::vector<int64_t>& b, const std::vector<int64_t>& c) {
    std::vector<int64_t> f;
    for (int64_t d = 0; d < rank; ++d) {
      if (std::find(b.begin(), b.end(), d) == b.end() && std::find(c.begin(), c.end(), d) == c.end()) f.push_back(d);
    }
    return f;
  };
  const std::vector<int64_t> lf = free_dims(l.rank(), *lb, *lc), rf = free_dims(r.rank(), *rb, *rc);
  auto product = [](const hlo::Shape& s, const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= s.dim(static_cast<int>(d));
    return n;
  };
  const int64_t batch = product(l, *lb), m = product(l, lf), k = product(l, *lc), n = product(r, rf);
  if (batch * m * n != i.shape.ElementCount()) return nullptr;
  std::vector<int64_t> lhs_order = *lb, rhs_order = *rb;
  lhs_order.insert(lhs_order.end(), lf.begin(), lf.end());
  lhs_order.insert(lhs_order.end(), lc->begin(), lc->end());
  rhs_order.insert(rhs_order.end(), rc->begin(), rc->end());
  rhs_order.insert(rhs_order.end(), rf.begin(), rf.end());
  auto lhs_packing = std::make_shared<Packing>(MakePacking(l, lhs_order));
  auto rhs_packing = std::make_shared<Packing>(MakePacking(r, rhs_order));
  const Slot a = in[0], b = in[1], c = out;
  return [=](const Frame& frame) {
    std::vector<float> x(static_cast<size_t>(batch * m * k)), y(static_cast<size_t>(batch * k * n));
    frame.parallel->For(lhs_packing->rows, 64, [&](int64_t lo, int64_t hi) {
      pack_lhs(frame.At(a), x.data(), *lhs_packing, lo, hi);
    });
    frame.parallel->For(rhs_packing->rows, 64, [&](int64_t lo, int64_t hi) {
      pack_rhs(frame.At(b), y.data(), *rhs_packing, lo, hi);
    });
    std::vector<float> widened;
    float* z = static_cast<float*>(frame.At(c));
    if (t != ElementType::kF32) {
      widened.resize(static_cast<size_t>(batch * m * n));
      z = widened.data();
    }
    if (k == 0) {
      std::fill(z, z + batch * m * n, 0.0f);
    } else if (m > 0 && n > 0) {
      for (int64_t s = 0; s < batch; ++s) {
        dnnl_sgemm('N', 'N', m, n, k, 1.0f, x.data() + s * m * k, k, y.data() + s * k * n, n, 0.0f, z + s * m * n, n);
      }
    }
    if (t == ElementType::kF32) return;
    frame.parallel->For(batch * m * n, 1 << 15, [&](int64_t lo, int64_t hi) {
      if (t == ElementType::kBF16) {
        Bf16* o = static_cast<Bf16*>(frame.At(c));
        for (int64_t e = lo; e < hi; ++e) o[e] = ToBf16(z[e]);
      } else {
        F16* o = static_cast<F16*>(frame.At(c));
        for (int64_t e = lo; e < hi; ++e) o[e] = ToF16(z[e]);
      }
    });
  };
}

// f32 operands in a layout sgemm reads in place.
Kernel DirectDotKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.shape.element_type() != hlo::ElementType::kF32) return nullptr;
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

}  // namespace

Kernel DotKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 2 || in.size() != 2) return nullptr;
  if (Kernel direct = DirectDotKernel(i, in, out)) return direct;
  return PackedDotKernel(i, in, out);
}

}  // namespace anvil::cpu
