// Dots through oneDNN's sgemm, split across core's arena (SplitSgemm). f32 operands in the layouts sgemm takes
// directly (batch dimensions first on both sides, one contracting dimension,
// at most one free dimension per side, either order) go straight in. Every
// other dot with an f32, bf16, f16 or f8 result is packed first: each operand is
// gathered (and widened to f32; f8 by a table) into [batch][rows][depth] and
// [batch][depth][cols], multiplied, and the result rounded to its type, as
// the reference evaluator computes such dots in f32.
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

#include "hlo/attributes.h"
#include "plugins/cpu/f16_conversions.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/openmp_float_mode.h"
#include "plugins/cpu/openmp_threads.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/vector_dots.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;

// Debian's oneDNN threads its sgemm with OpenMP. Left to itself it would
// start OpenMP threads beside core's arena, and on two cores the two pools
// wait for each other (MLP layers of 256x1024x1024: 3.4 ms median with
// passive OpenMP waits, 1.6 ms spinning, against 1.4 ms for halves run on
// the arena's two threads). So an sgemm runs on the calling thread alone,
// and the kernel splits it across the arena; except one product so large
// (kOwnThreadsWork) that oneDNN's own split is worth its OpenMP threads:
// a 2048^3 dot split by rows, each half packing all of B, took 53.5-59.6 ms
// (medians of 15 runs) against 53.7-54.6 ms threaded by oneDNN, which
// matches oneDNN's own sgemm run alone (bench/sgemm_peer.cc); the spin of
// libgomp's threads after it is small beside such a product.

// M * N * K from which a single product runs on oneDNN's own threads.
constexpr int64_t kOwnThreadsWork = int64_t{1} << 30;

// C = op(A) op(B) for `batch` row-major products of M x K and K x N
// (batched operands and results dense one after another), split across
// the arena: by products when there are enough of them, otherwise each
// product by blocks of rows of C, or of columns where C is wider than tall.
void SplitSgemm(const Parallel& parallel, char transa, char transb, int64_t batch, int64_t M, int64_t N, int64_t K,
                const float* x, int64_t lda, const float* y, int64_t ldb, float* z) {
  auto gemm = [&](int64_t t, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const float* a = x + t * M * K + (transa == 'N' ? r0 * lda : r0);
    const float* b = y + t * K * N + (transb == 'N' ? c0 : c0 * ldb);
    dnnl_sgemm(transa, transb, r1 - r0, c1 - c0, K, 1.0f, a, lda, b, ldb, 0.0f, z + t * M * N + r0 * N + c0, N);
  };
  if (batch >= Parallel::Threads() || batch * M * N * K < (int64_t{1} << 18)) {
    parallel.ForEachThread(batch, [&](int64_t lo, int64_t hi) {
      OpenMpThreads one(1);
      for (int64_t t = lo; t < hi; ++t) gemm(t, 0, M, 0, N);
    });
    return;
  }
  // Only where OpenMP may use every thread the arena has: a process that
  // limits OpenMP (OMP_NUM_THREADS=1, as the TSan run does) keeps the split.
  const int threads = static_cast<int>(Parallel::Threads());
  if (M * N * K >= kOwnThreadsWork && omp_get_max_threads() >= threads) {
    OpenMpThreads all(threads);
    MatchTeamFloatMode();  // the team computes in this execution's float mode
    for (int64_t t = 0; t < batch; ++t) gemm(t, 0, M, 0, N);
    return;
  }
  for (int64_t t = 0; t < batch; ++t) {
    if (M >= N) {
      parallel.ForEachThread(M, [&](int64_t lo, int64_t hi) {
        OpenMpThreads one(1);
        gemm(t, lo, hi, 0, N);
      });
    } else {
      parallel.ForEachThread(N, [&](int64_t lo, int64_t hi) {
        OpenMpThreads one(1);
        gemm(t, 0, M, lo, hi);
      });
    }
  }
}

// An operand's dimensions in packing order with their element strides in
// the operand; the packed array is their row-major order.
struct Packing {
  std::vector<int64_t> dims, strides;
  int64_t rows = 1, cols = 1;  // the product of all dimensions but the last, and the last
  // Where packed row `row` starts in the operand, in elements.
  int64_t RowOffset(int64_t row) const {
    int64_t offset = 0;
    for (size_t d = dims.size() - 1; d-- > 0;) {
      offset += (row % dims[d]) * strides[d];
      row /= dims[d];
    }
    return offset;
  }
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

template <typename T, typename Widen>
void PackRowsBy(const void* source, float* packed, const Packing& p, int64_t begin, int64_t end, Widen widen) {
  const T* x = static_cast<const T*>(source);
  const int64_t step = p.strides.back();
  for (int64_t row = begin; row < end; ++row) {
    const int64_t offset = p.RowOffset(row);
    float* out = packed + row * p.cols;
    for (int64_t j = 0; j < p.cols; ++j) out[j] = widen(x[offset + j * step]);
  }
}

template <typename T>
void PackRows(const void* source, float* packed, const Packing& p, int64_t begin, int64_t end) {
  PackRowsBy<T>(source, packed, p, begin, end, [](T v) { return ToFloat(v); });
}

// f16 rows of at least a vector of consecutive elements widen with the
// CPU's conversion instructions (f16_conversions.h); others element by
// element (a shorter row would go through their padded tail copy).
template <>
void PackRows<F16>(const void* source, float* packed, const Packing& p, int64_t begin, int64_t end) {
  if (p.strides.back() != 1 || p.cols < 16) {
    return PackRowsBy<F16>(source, packed, p, begin, end, [](F16 v) { return ToFloat(v); });
  }
  const F16* x = static_cast<const F16*>(source);
  for (int64_t row = begin; row < end; ++row) WidenF16(x + p.RowOffset(row), packed + row * p.cols, p.cols);
}

// Whether `t` is an 8-bit float (the f8 family): exact in f32, decoded by
// a table of its 256 patterns.
bool IsByteFloat(ElementType t) {
  const hlo::ElementTypeInfo& info = hlo::Info(t);
  return info.float_format != nullptr && info.bit_width == 8 && info.byte_size == 1;
}

template <ElementType E>
void PackByteFloats(const void* source, float* packed, const Packing& p, int64_t begin, int64_t end) {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> values{};
    for (uint32_t bits = 0; bits < 256; ++bits) {
      values[bits] = static_cast<float>(hlo::DecodeFloat(*hlo::Info(E).float_format, bits));
    }
    return values;
  }();
  PackRowsBy<uint8_t>(source, packed, p, begin, end, [](uint8_t v) { return table[v]; });
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
    case ElementType::kF8E3M4: return PackByteFloats<ElementType::kF8E3M4>;
    case ElementType::kF8E4M3: return PackByteFloats<ElementType::kF8E4M3>;
    case ElementType::kF8E4M3FN: return PackByteFloats<ElementType::kF8E4M3FN>;
    case ElementType::kF8E4M3FNUZ: return PackByteFloats<ElementType::kF8E4M3FNUZ>;
    case ElementType::kF8E4M3B11FNUZ: return PackByteFloats<ElementType::kF8E4M3B11FNUZ>;
    case ElementType::kF8E5M2: return PackByteFloats<ElementType::kF8E5M2>;
    case ElementType::kF8E5M2FNUZ: return PackByteFloats<ElementType::kF8E5M2FNUZ>;
    case ElementType::kF8E8M0FNU: return PackByteFloats<ElementType::kF8E8M0FNU>;
    default: return nullptr;
  }
}

Kernel PackedDotKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out, Temp* temp) {
  const ElementType t = i.shape.element_type();
  if (t != ElementType::kF32 && t != ElementType::kBF16 && t != ElementType::kF16 && !IsByteFloat(t)) return nullptr;
  const hlo::FloatFormat* byte_format = IsByteFloat(t) ? hlo::Info(t).float_format : nullptr;
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
  // The packed operands and a narrow result's f32 sums live in the plan's
  // temp region (scratch the executable keeps), not in memory allocated,
  // zeroed and faulted in at every execution: an f16 dot of 512x1024 by
  // 1024x512 spent a fifth of its time in the kernel's page faults.
  auto floats = [](int64_t count) { return (count * static_cast<int64_t>(sizeof(float)) + 63) / 64 * 64; };
  const int64_t x_at = 0, y_at = x_at + floats(batch * m * k), z_at = y_at + floats(batch * k * n);
  temp->bytes = std::max(temp->bytes, z_at + (t == ElementType::kF32 ? 0 : floats(batch * m * n)));
  const Slot a = in[0], b = in[1], c = out, region = temp->slot;
  return [=](const Frame& frame) {
    char* base = static_cast<char*>(frame.At(region));
    float* x = reinterpret_cast<float*>(base + x_at);
    float* y = reinterpret_cast<float*>(base + y_at);
    frame.parallel->For(lhs_packing->rows, 64, [&](int64_t lo, int64_t hi) {
      pack_lhs(frame.At(a), x, *lhs_packing, lo, hi);
    });
    frame.parallel->For(rhs_packing->rows, 64, [&](int64_t lo, int64_t hi) {
      pack_rhs(frame.At(b), y, *rhs_packing, lo, hi);
    });
    float* z = t == ElementType::kF32 ? static_cast<float*>(frame.At(c)) : reinterpret_cast<float*>(base + z_at);
    if (k == 0) {
      std::fill(z, z + batch * m * n, 0.0f);
    } else if (m > 0 && n > 0) {
      SplitSgemm(*frame.parallel, 'N', 'N', batch, m, n, k, x, k, y, n, z);
    }
    if (t == ElementType::kF32) return;
    frame.parallel->For(batch * m * n, 1 << 15, [&](int64_t lo, int64_t hi) {
      if (byte_format) {
        // f8 results: the f32 sum rounded once, as the evaluator rounds it.
        uint8_t* o = static_cast<uint8_t*>(frame.At(c));
        for (int64_t e = lo; e < hi; ++e) o[e] = static_cast<uint8_t>(hlo::EncodeFloat(*byte_format, z[e]));
      } else if (t == ElementType::kBF16) {
        Bf16* o = static_cast<Bf16*>(frame.At(c));
        for (int64_t e = lo; e < hi; ++e) o[e] = ToBf16(z[e]);
      } else {
        NarrowToF16(z + lo, static_cast<F16*>(frame.At(c)) + lo, hi - lo);
      }
    });
  };
}

// Dots with an f64 or integer result, as the evaluator computes them:
// operands gathered into [batch][rows][depth] and [batch][depth][cols] of T
// (double for f64, wrapping uint64 for integers), each sum taken over k in
// order, so the two agree bit for bit. No BLAS has these; the loop keeps a
// row of sums in cache while k streams.
template <typename T>
T ReadAs(const void* p, ElementType t, int64_t e) {
  switch (t) {
    case ElementType::kF64: return static_cast<T>(static_cast<const double*>(p)[e]);
    case ElementType::kF32: return static_cast<T>(static_cast<const float*>(p)[e]);
    case ElementType::kBF16: return static_cast<T>(ToFloat(static_cast<const Bf16*>(p)[e]));
    case ElementType::kF16: return static_cast<T>(ToFloat(static_cast<const F16*>(p)[e]));
    case ElementType::kS8: case ElementType::kS4: return static_cast<T>(static_cast<const int8_t*>(p)[e]);
    case ElementType::kS16: return static_cast<T>(static_cast<const int16_t*>(p)[e]);
    case ElementType::kS32: return static_cast<T>(static_cast<const int32_t*>(p)[e]);
    case ElementType::kS64: return static_cast<T>(static_cast<const int64_t*>(p)[e]);
    case ElementType::kU8: case ElementType::kU4: case ElementType::kPred: return static_cast<T>(static_cast<const uint8_t*>(p)[e]);
    case ElementType::kU16: return static_cast<T>(static_cast<const uint16_t*>(p)[e]);
    case ElementType::kU32: return static_cast<T>(static_cast<const uint32_t*>(p)[e]);
    case ElementType::kU64: return static_cast<T>(static_cast<const uint64_t*>(p)[e]);
    default: return T{0};
  }
}

template <typename T>
void PackAs(const void* source, ElementType type, T* packed, const Packing& p, int64_t begin, int64_t end) {
  const int64_t step = p.strides.back();
  for (int64_t row = begin; row < end; ++row) {
    const int64_t offset = p.RowOffset(row);
    T* out = packed + row * p.cols;
    for (int64_t j = 0; j < p.cols; ++j) out[j] = ReadAs<T>(source, type, offset + j * step);
  }
}

template <typename T>
Kernel ExactDotOf(std::shared_ptr<const Packing> lp, std::shared_ptr<const Packing> rp, ElementType lt, ElementType rt,
                  ElementType result, int64_t batch, int64_t m, int64_t k, int64_t n, Slot a, Slot b, Slot c) {
  const int64_t result_bytes = hlo::Info(result).byte_size;
  return [=](const Frame& frame) {
    std::vector<T> x(static_cast<size_t>(batch * m * k)), y(static_cast<size_t>(batch * k * n));
    PackAs<T>(frame.At(a), lt, x.data(), *lp, 0, lp->rows);
    PackAs<T>(frame.At(b), rt, y.data(), *rp, 0, rp->rows);
    char* z = static_cast<char*>(frame.At(c));
    frame.parallel->For(batch * m, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, k * n)), [&](int64_t lo, int64_t hi) {
      std::vector<T> sums(static_cast<size_t>(n));
      for (int64_t row = lo; row < hi; ++row) {
        const int64_t s = row / m;
        std::fill(sums.begin(), sums.end(), T{0});
        for (int64_t kk = 0; kk < k; ++kk) {
          const T scale = x[static_cast<size_t>(row * k + kk)];
          const T* y_row = y.data() + (s * k + kk) * n;
          for (int64_t j = 0; j < n; ++j) sums[static_cast<size_t>(j)] += scale * y_row[j];
        }
        for (int64_t j = 0; j < n; ++j) {
          // Little-endian: an integer result is the sum's low bytes.
          std::memcpy(z + (row * n + j) * result_bytes, &sums[static_cast<size_t>(j)], static_cast<size_t>(result_bytes));
        }
      }
    });
  };
}

Kernel ExactDotKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  const ElementType t = i.shape.element_type();
  const bool f64 = t == ElementType::kF64;
  const bool integer = t == ElementType::kS8 || t == ElementType::kS16 || t == ElementType::kS32 || t == ElementType::kS64 ||
                       t == ElementType::kU8 || t == ElementType::kU16 || t == ElementType::kU32 || t == ElementType::kU64;
  if (!f64 && !integer) return nullptr;
  const hlo::Shape& l = i.operands[0]->shape;
  const hlo::Shape& r = i.operands[1]->shape;
  auto is_float = [](ElementType e) {
    return e == ElementType::kF64 || e == ElementType::kF32 || e == ElementType::kBF16 || e == ElementType::kF16;
  };
  // An integer result from integer (or pred) operands; an f64 one from floats.
  if (integer && (is_float(l.element_type()) || is_float(r.element_type()))) return nullptr;
  if (f64 && (!is_float(l.element_type()) || !is_float(r.element_type()))) return nullptr;
  auto lb = hlo::IntListAttribute(i, "lhs_batch_dims");
  auto rb = hlo::IntListAttribute(i, "rhs_batch_dims");
  auto lc = hlo::IntListAttribute(i, "lhs_contracting_dims");
  auto rc = hlo::IntListAttribute(i, "rhs_contracting_dims");
  if (!lb.ok() || !rb.ok() || !lc.ok() || !rc.ok()) return nullptr;
  auto free_dims = [](int rank, const std::vector<int64_t>& bd, const std::vector<int64_t>& cd) {
    std::vector<int64_t> f;
    for (int64_t d = 0; d < rank; ++d) {
      if (std::find(bd.begin(), bd.end(), d) == bd.end() && std::find(cd.begin(), cd.end(), d) == cd.end()) f.push_back(d);
    }
    return f;
  };
  const std::vector<int64_t> lf = free_dims(l.rank(), *lb, *lc), rf = free_dims(r.rank(), *rb, *rc);
  auto product = [](const hlo::Shape& sh, const std::vector<int64_t>& dims) {
    int64_t v = 1;
    for (int64_t d : dims) v *= sh.dim(static_cast<int>(d));
    return v;
  };
  const int64_t batch = product(l, *lb), m = product(l, lf), k = product(l, *lc), n = product(r, rf);
  if (batch * m * n != i.shape.ElementCount() || batch * m * n == 0) return nullptr;
  std::vector<int64_t> lhs_order = *lb, rhs_order = *rb;
  lhs_order.insert(lhs_order.end(), lf.begin(), lf.end());
  lhs_order.insert(lhs_order.end(), lc->begin(), lc->end());
  rhs_order.insert(rhs_order.end(), rc->begin(), rc->end());
  rhs_order.insert(rhs_order.end(), rf.begin(), rf.end());
  auto lp = std::make_shared<const Packing>(MakePacking(l, lhs_order));
  auto rp = std::make_shared<const Packing>(MakePacking(r, rhs_order));
  if (f64) return ExactDotOf<double>(lp, rp, l.element_type(), r.element_type(), t, batch, m, k, n, in[0], in[1], out);
  return ExactDotOf<uint64_t>(lp, rp, l.element_type(), r.element_type(), t, batch, m, k, n, in[0], in[1], out);
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
    if (K == 0) {
      // An empty sum is zero; sgemm refuses leading dimensions of 0 and
      // would leave the output as it found it.
      std::fill(z, z + batch * M * N, 0.0f);
      return;
    }
    if (M == 0 || N == 0) return;
    if (M == 1 && N == 1) return VectorDots(*frame.parallel, batch, K, x, y, z);  // vector_dots.h
    SplitSgemm(*frame.parallel, transa, transb, batch, M, N, K, x, lda, y, ldb, z);
  };
}

}  // namespace

Kernel DotKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out, Temp* temp) {
  if (i.operands.size() != 2 || in.size() != 2) return nullptr;
  if (Kernel direct = DirectDotKernel(i, in, out)) return direct;
  if (Kernel packed = PackedDotKernel(i, in, out, temp)) return packed;
  return ExactDotKernel(i, in, out);
}

}  // namespace anvil::cpu
