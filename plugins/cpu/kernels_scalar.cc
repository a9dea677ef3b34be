// Kernels for what the typed kernels leave: ops on element types they are
// not instantiated for (sub-byte integers, narrow floats, complex, mixed
// types) and bodies that are not one recognised op (argmax's variadic
// reduce, complex sums, map, reduce-window and select-and-scatter by any
// body). Each element goes through hlo/scalar_ops, and
// each body through an hlo/scalar_program compiled when the plan is built:
// no literal, allocation or instruction dispatch per element, and the
// reference evaluator's answers bit for bit (same scalar functions, same
// roundings, reductions in the same order).
#include <algorithm>
#include <complex>
#include <cstring>
#include <numeric>
#include <optional>

#include "hlo/attributes.h"
#include "hlo/scalar_ops.h"
#include "hlo/scalar_program.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/reduced_dims.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;
using hlo::Scalar;

// Where one operand's elements are: its slot, type and size, and whether it
// is one element read for every result element (select's and clamp's
// scalar operands).
struct Operand {
  Slot slot;
  ElementType type;
  int64_t bytes;
  bool splat;
};

Operand OperandOf(const hlo::Instruction& operand, const Slot& slot, int64_t result_count) {
  const ElementType t = operand.shape.element_type();
  return {slot, t, hlo::Info(t).byte_size, operand.shape.ElementCount() == 1 && result_count != 1};
}

// The body of a reduce or reduce-window of N operands and N init values,
// each operand shaped `dims`, its init and its result of its type.
struct Reducer {
  hlo::ScalarProgram body;
  std::vector<ElementType> types;
  std::vector<int64_t> bytes;
};

std::optional<Reducer> ReducerOf(const hlo::Instruction& i, const std::vector<Slot>& in, size_t n,
                                 const std::vector<int64_t>& dims) {
  if (n == 0 || in.size() != 2 * n || i.operands.size() != 2 * n || i.called_computations.size() != 1) {
    return std::nullopt;
  }
  auto body = hlo::ScalarProgram::Compile(*i.called_computations[0]);
  if (!body.ok() || body->parameter_count() != static_cast<int>(2 * n) || body->result_count() != static_cast<int>(n)) {
    return std::nullopt;
  }
  Reducer r{*std::move(body), {}, {}};
  for (size_t v = 0; v < n; ++v) {
    const ElementType t = i.operands[v]->shape.element_type();
    if (!i.operands[v]->shape.IsArray() || i.operands[v]->shape.dims() != dims ||
        i.operands[n + v]->shape.element_type() != t || r.body.result_type(static_cast<int>(v)) != t) {
      return std::nullopt;
    }
    r.types.push_back(t);
    r.bytes.push_back(hlo::Info(t).byte_size);
  }
  return r;
}

// A reduction's operands, inits and results in one execution's memory.
struct ReducerBuffers {
  std::vector<const unsigned char*> x, init;
  std::vector<unsigned char*> y;
  ReducerBuffers(const Frame& frame, const std::vector<Slot>& in, const std::vector<Slot>& out) {
    const size_t n = out.size();
    for (size_t v = 0; v < n; ++v) {
      x.push_back(static_cast<const unsigned char*>(frame.At(in[v])));
      init.push_back(static_cast<const unsigned char*>(frame.At(in[n + v])));
      y.push_back(static_cast<unsigned char*>(frame.At(out[v])));
    }
  }
};

}  // namespace

Kernel ScalarElementwiseKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  auto op = hlo::ScalarOp::Of(i);
  if (!op.ok() || in.size() != i.operands.size() || in.size() > 3) return nullptr;
  const int64_t n = i.shape.ElementCount();
  std::vector<Operand> operands;
  for (size_t k = 0; k < in.size(); ++k) {
    operands.push_back(OperandOf(*i.operands[k], in[k], n));
    if (!operands.back().splat && i.operands[k]->shape.ElementCount() != n) return nullptr;
  }
  const ElementType result = i.shape.element_type();
  const int64_t result_bytes = hlo::Info(result).byte_size;
  return [op = *std::move(op), operands, out, n, result, result_bytes](const Frame& frame) {
    std::vector<const unsigned char*> from;
    for (const Operand& o : operands) from.push_back(static_cast<const unsigned char*>(frame.At(o.slot)));
    auto* to = static_cast<unsigned char*>(frame.At(out));
    frame.parallel->For(n, 4096, [&](int64_t lo, int64_t hi) {
      Scalar x[3];
      for (int64_t k = lo; k < hi; ++k) {
        for (size_t v = 0; v < operands.size(); ++v) {
          const Operand& o = operands[v];
          x[v] = hlo::LoadScalar(o.type, from[v] + (o.splat ? 0 : k) * o.bytes);
        }
        hlo::StoreScalar(result, op.Apply(x), to + k * result_bytes);
      }
    });
  };
}

// reduce of N operands with N init values by any scalar body: each result
// starts at the inits and takes its elements in row-major order of the
// reduced dimensions, as the evaluator's loop does.
Kernel ScalarReduceKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out) {
  const size_t n = out.size();
  if (i.operands.empty()) return nullptr;
  const std::vector<int64_t>& dims = i.operands[0]->shape.dims();
  std::optional<Reducer> reducer = ReducerOf(i, in, n, dims);
  auto reduced_list = hlo::IntListAttribute(i, "dimensions");
  if (!reducer || !reduced_list.ok()) return nullptr;
  ReducedDims split = SplitReduced(dims, *reduced_list);
  std::vector<int64_t> kept_dims = std::move(split.kept_dims), kept_strides = std::move(split.kept_strides),
                       reduced_dims = std::move(split.reduced_dims), reduced_strides = std::move(split.reduced_strides);
  const int64_t outputs = std::accumulate(kept_dims.begin(), kept_dims.end(), int64_t{1}, std::multiplies<>());
  const int64_t inner = std::accumulate(reduced_dims.begin(), reduced_dims.end(), int64_t{1}, std::multiplies<>());
  return [=, r = *std::move(reducer)](const Frame& frame) {
    const ReducerBuffers b(frame, in, out);
    const hlo::ScalarProgram& program = r.body;
    const std::vector<ElementType>& types = r.types;
    const std::vector<int64_t>& bytes = r.bytes;
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner));
    frame.parallel->For(outputs, grain, [&](int64_t lo, int64_t hi) {
      std::vector<Scalar> registers = program.NewRegisters();
      std::vector<Scalar> args(2 * n), acc(n);
      std::vector<int64_t> r(reduced_dims.size());
      for (int64_t o = lo; o < hi; ++o) {
        int64_t rest = o, base = 0;
        for (size_t d = kept_dims.size(); d-- > 0;) {
          base += (rest % kept_dims[d]) * kept_strides[d];
          rest /= kept_dims[d];
        }
        for (size_t v = 0; v < n; ++v) acc[v] = hlo::LoadScalar(types[v], b.init[v]);
        std::fill(r.begin(), r.end(), 0);
        for (int64_t k = 0; k < inner; ++k) {
          int64_t at = base;
          for (size_t d = 0; d < r.size(); ++d) at += r[d] * reduced_strides[d];
          for (size_t v = 0; v < n; ++v) {
            args[v] = acc[v];
            args[n + v] = hlo::LoadScalar(types[v], b.x[v] + at * bytes[v]);
          }
          program.Run(args.data(), registers, acc.data());
          for (size_t d = r.size(); d-- > 0;) {
            if (++r[d] < reduced_dims[d]) break;
            r[d] = 0;
          }
        }
        for (size_t v = 0; v < n; ++v) hlo::StoreScalar(types[v], acc[v], b.y[v] + o * bytes[v]);
      }
    });
  };
}

// A prefix window (PrefixScan) by any scalar body: each line's outputs in
// order, each the output before it (the inits, first) combined with one
// more input, the combines the window walk makes for it. JAX's
// cumlogsumexp of f32[129,4099] walked every window: about 100 s.
Kernel ScalarScanKernel(Reducer r, Scan s, const std::vector<Slot>& in, const std::vector<Slot>& out) {
  const size_t n = out.size();
  return [=, r = std::move(r)](const Frame& frame) {
    const ReducerBuffers b(frame, in, out);
    const int64_t grain = std::max<int64_t>(1, 4096 / s.length);
    frame.parallel->For(s.lines(), grain, [&](int64_t lo, int64_t hi) {
      std::vector<Scalar> registers = r.body.NewRegisters();
      std::vector<Scalar> args(2 * n), acc(n);
      for (int64_t line = lo; line < hi; ++line) {
        const int64_t base = s.LineStart(line);
        for (size_t v = 0; v < n; ++v) acc[v] = hlo::LoadScalar(r.types[v], b.init[v]);
        for (int64_t o = 0; o < s.length; ++o) {
          const int64_t at = base + o * s.inner;
          for (size_t v = 0; v < n; ++v) {
            args[v] = acc[v];
            args[n + v] = hlo::LoadScalar(r.types[v], b.x[v] + at * r.bytes[v]);
          }
          r.body.Run(args.data(), registers, acc.data());
          for (size_t v = 0; v < n; ++v) hlo::StoreScalar(r.types[v], acc[v], b.y[v] + at * r.bytes[v]);
        }
      }
    });
  };
}

// reduce-window of N operands with N init values by any scalar body: each
// result starts at the inits and takes the window's taps in row-major
// window order, skipping those in the padding or between base-dilated
// elements, as the evaluator's walk does (a scan where the window is a
// prefix: ScalarScanKernel).
Kernel ScalarReduceWindowKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out) {
  const size_t n = out.size();
  if (i.operands.empty()) return nullptr;
  const std::vector<int64_t>& in_dims = i.operands[0]->shape.dims();
  std::optional<Reducer> reducer = ReducerOf(i, in, n, in_dims);
  const hlo::Attribute* attribute = i.FindAttribute("window");
  auto window = hlo::ParseWindow(attribute ? attribute->value : "");
  if (!reducer || !window.ok() || window->size() != in_dims.size()) return nullptr;
  const hlo::Shape& first = i.shape.IsTuple() ? i.shape.tuple_elements()[0] : i.shape;
  const std::vector<int64_t> out_dims = first.dims();
  if (out_dims.size() != in_dims.size()) return nullptr;
  if (const std::optional<Scan> scan = hlo::PrefixScan(*window, in_dims, out_dims)) {
    return ScalarScanKernel(*std::move(reducer), *scan, in, out);
  }
  std::optional<WindowTaps> window_taps = MakeWindowTaps(*window, in_dims, out_dims);
  if (!window_taps) return nullptr;
  const std::vector<int64_t> taps = window_taps->taps;
  const std::vector<std::vector<int64_t>> tap_input = std::move(window_taps->tap_input);
  const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  const int64_t outputs = std::accumulate(out_dims.begin(), out_dims.end(), int64_t{1}, std::multiplies<>());
  const int64_t window_count = std::accumulate(taps.begin(), taps.end(), int64_t{1}, std::multiplies<>());
  return [=, r = *std::move(reducer)](const Frame& frame) {
    const ReducerBuffers b(frame, in, out);
    const hlo::ScalarProgram& program = r.body;
    const std::vector<ElementType>& types = r.types;
    const std::vector<int64_t>& bytes = r.bytes;
    const size_t rank = out_dims.size();
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, window_count));
    frame.parallel->For(outputs, grain, [&](int64_t lo, int64_t hi) {
      std::vector<Scalar> registers = program.NewRegisters();
      std::vector<Scalar> args(2 * n), acc(n);
      std::vector<int64_t> o_index(rank), w_index(rank);
      for (int64_t o = lo; o < hi; ++o) {
        int64_t rest = o;
        for (size_t d = rank; d-- > 0;) {
          o_index[d] = rest % out_dims[d];
          rest /= out_dims[d];
        }
        for (size_t v = 0; v < n; ++v) acc[v] = hlo::LoadScalar(types[v], b.init[v]);
        std::fill(w_index.begin(), w_index.end(), 0);
        for (int64_t wk = 0; wk < window_count; ++wk) {
          int64_t at = 0;
          bool inside = true;
          for (size_t d = 0; d < rank && inside; ++d) {
            const int64_t p = tap_input[d][static_cast<size_t>(o_index[d] * taps[d] + w_index[d])];
            inside = p >= 0;
            at += p * in_strides[d];
          }
          if (inside) {
            for (size_t v = 0; v < n; ++v) {
              args[v] = acc[v];
              args[n + v] = hlo::LoadScalar(types[v], b.x[v] + at * bytes[v]);
            }
            program.Run(args.data(), registers, acc.data());
          }
          for (size_t d = rank; d-- > 0;) {
            if (++w_index[d] < taps[d]) break;
            w_index[d] = 0;
          }
        }
        for (size_t v = 0; v < n; ++v) hlo::StoreScalar(types[v], acc[v], b.y[v] + o * bytes[v]);
      }
    });
  };
}

// dot with a complex result (operands complex or real, of any float
// type): each result sums its products in contracting order, in
// std::complex<float> for c64 (rounding every step, as the evaluator does)
// and std::complex<double> for c128.
Kernel ComplexDotKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  const ElementType t = i.shape.element_type();
  if (!hlo::IsComplex(t) || i.operands.size() != 2 || in.size() != 2) return nullptr;
  const hlo::Shape& lhs = i.operands[0]->shape;
  const hlo::Shape& rhs = i.operands[1]->shape;
  for (const hlo::Shape* s : {&lhs, &rhs}) {
    if (!s->IsArray() || !(hlo::IsComplex(s->element_type()) || hlo::IsFloat(s->element_type()))) return nullptr;
  }
  auto lb = hlo::IntListAttribute(i, "lhs_batch_dims");
  auto rb = hlo::IntListAttribute(i, "rhs_batch_dims");
  auto lc = hlo::IntListAttribute(i, "lhs_contracting_dims");
  auto rc = hlo::IntListAttribute(i, "rhs_contracting_dims");
  if (!lb.ok() || !rb.ok() || !lc.ok() || !rc.ok() || lb->size() != rb->size() || lc->size() != rc->size()) {
    return nullptr;
  }
  auto free_dims = [](int64_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
    std::vector<int64_t> free;
    for (int64_t d = 0; d < rank; ++d) {
      if (!std::count(batch.begin(), batch.end(), d) && !std::count(contracting.begin(), contracting.end(), d)) {
        free.push_back(d);
      }
    }
    return free;
  };
  const std::vector<int64_t> lf = free_dims(lhs.rank(), *lb, *lc), rf = free_dims(rhs.rank(), *rb, *rc);
  const std::vector<int64_t> out_dims = i.shape.dims();
  if (lb->size() + lf.size() + rf.size() != out_dims.size()) return nullptr;
  const std::vector<int64_t> ls = RowMajorStrides(lhs.dims()), rs = RowMajorStrides(rhs.dims());
  // Each result dimension's step in the lhs and the rhs.
  std::vector<int64_t> out_l(out_dims.size(), 0), out_r(out_dims.size(), 0);
  size_t pos = 0;
  for (size_t b = 0; b < lb->size(); ++b, ++pos) {
    out_l[pos] = ls[static_cast<size_t>((*lb)[b])];
    out_r[pos] = rs[static_cast<size_t>((*rb)[b])];
  }
  for (int64_t d : lf) out_l[pos++] = ls[static_cast<size_t>(d)];
  for (int64_t d : rf) out_r[pos++] = rs[static_cast<size_t>(d)];
  // The contracting positions' offsets, in row-major order of lc.
  std::vector<int64_t> contract_dims;
  for (int64_t d : *lc) contract_dims.push_back(lhs.dim(static_cast<int>(d)));
  const int64_t depth = std::accumulate(contract_dims.begin(), contract_dims.end(), int64_t{1}, std::multiplies<>());
  if (depth > (int64_t{1} << 24)) return nullptr;
  std::vector<int64_t> l_off(static_cast<size_t>(depth)), r_off(static_cast<size_t>(depth)), c(contract_dims.size(), 0);
  for (int64_t k = 0; k < depth; ++k) {
    for (size_t j = 0; j < c.size(); ++j) {
      l_off[static_cast<size_t>(k)] += c[j] * ls[static_cast<size_t>((*lc)[j])];
      r_off[static_cast<size_t>(k)] += c[j] * rs[static_cast<size_t>((*rc)[j])];
    }
    for (size_t j = c.size(); j-- > 0;) {
      if (++c[j] < contract_dims[j]) break;
      c[j] = 0;
    }
  }
  const ElementType lt = lhs.element_type(), rt = rhs.element_type();
  const int64_t lbytes = hlo::Info(lt).byte_size, rbytes = hlo::Info(rt).byte_size, bytes = hlo::Info(t).byte_size;
  const int64_t outputs = i.shape.ElementCount();
  return [=](const Frame& frame) {
    const auto* x = static_cast<const unsigned char*>(frame.At(in[0]));
    const auto* y = static_cast<const unsigned char*>(frame.At(in[1]));
    auto* z = static_cast<unsigned char*>(frame.At(out));
    frame.parallel->For(outputs, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, depth)), [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) {
        int64_t rest = o, l0 = 0, r0 = 0;
        for (size_t d = out_dims.size(); d-- > 0;) {
          const int64_t index = rest % out_dims[d];
          rest /= out_dims[d];
          l0 += index * out_l[d];
          r0 += index * out_r[d];
        }
        Scalar sum;
        if (t == ElementType::kC64) {
          std::complex<float> acc = 0;
          for (int64_t k = 0; k < depth; ++k) {
            const Scalar a = hlo::LoadScalar(lt, x + (l0 + l_off[static_cast<size_t>(k)]) * lbytes);
            const Scalar b = hlo::LoadScalar(rt, y + (r0 + r_off[static_cast<size_t>(k)]) * rbytes);
            acc += std::complex<float>(std::complex<double>(a.re, a.im)) * std::complex<float>(std::complex<double>(b.re, b.im));
          }
          sum.re = acc.real();
          sum.im = acc.imag();
        } else {
          std::complex<double> acc = 0;
          for (int64_t k = 0; k < depth; ++k) {
            const Scalar a = hlo::LoadScalar(lt, x + (l0 + l_off[static_cast<size_t>(k)]) * lbytes);
            const Scalar b = hlo::LoadScalar(rt, y + (r0 + r_off[static_cast<size_t>(k)]) * rbytes);
            acc += std::complex<double>(a.re, a.im) * std::complex<double>(b.re, b.im);
          }
          sum.re = acc.real();
          sum.im = acc.imag();
        }
        hlo::StoreScalar(t, sum, z + o * bytes);
      }
    });
  };
}

// select-and-scatter of any element type with any select and scatter
// bodies: the result starts at the init value; each source element, in
// order, picks its window's element by the select body (the first tap
// inside the operand, replaced by each later one the body does not keep)
// and combines into the result there by the scatter body, as the
// evaluator does. Sequential: two windows may pick one element, and the
// scatter body need not commute.
Kernel ScalarSelectAndScatterKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 3 || in.size() != 3 || i.called_computations.size() != 2 || !i.shape.IsArray()) {
    return nullptr;
  }
  const hlo::Attribute* select_attribute = i.FindAttribute("select");
  const hlo::Attribute* scatter_attribute = i.FindAttribute("scatter");
  const bool select_first = select_attribute < scatter_attribute;
  auto select = hlo::ScalarProgram::Compile(*i.called_computations[select_first ? 0 : 1]);
  auto scatter = hlo::ScalarProgram::Compile(*i.called_computations[select_first ? 1 : 0]);
  const ElementType t = i.shape.element_type();
  if (!select.ok() || !scatter.ok() || select->parameter_count() != 2 || select->result_count() != 1 ||
      select->result_type(0) != ElementType::kPred || scatter->parameter_count() != 2 || scatter->result_count() != 1 ||
      scatter->result_type(0) != t) {
    return nullptr;
  }
  const hlo::Attribute* w = i.FindAttribute("window");
  auto window = hlo::ParseWindow(w ? w->value : "");
  const std::vector<int64_t> dims = i.operands[0]->shape.dims();
  const std::vector<int64_t> source_dims = i.operands[1]->shape.dims();
  if (!window.ok() || window->size() != dims.size() || source_dims.size() != dims.size() || i.shape.dims() != dims ||
      i.operands[0]->shape.element_type() != t || i.operands[1]->shape.element_type() != t) {
    return nullptr;
  }
  std::vector<int64_t> taps;
  for (const hlo::WindowDim& d : *window) taps.push_back(d.size);
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  const int64_t sources = i.operands[1]->shape.ElementCount();
  const int64_t window_count = std::accumulate(taps.begin(), taps.end(), int64_t{1}, std::multiplies<>());
  const int64_t bytes = hlo::Info(t).byte_size;
  const int64_t n = i.shape.ElementCount();
  return [=, window = *window, select = *std::move(select), scatter = *std::move(scatter)](const Frame& frame) {
    const auto* operand = static_cast<const unsigned char*>(frame.At(in[0]));
    const auto* source = static_cast<const unsigned char*>(frame.At(in[1]));
    const auto* init = static_cast<const unsigned char*>(frame.At(in[2]));
    auto* result = static_cast<unsigned char*>(frame.At(out));
    for (int64_t k = 0; k < n; ++k) std::memcpy(result + k * bytes, init, static_cast<size_t>(bytes));
    std::vector<Scalar> select_registers = select.NewRegisters(), scatter_registers = scatter.NewRegisters();
    const size_t rank = dims.size();
    std::vector<int64_t> s_index(rank), w_index(rank);
    for (int64_t s = 0; s < sources; ++s) {
      int64_t rest = s;
      for (size_t d = rank; d-- > 0;) {
        s_index[d] = rest % source_dims[d];
        rest /= source_dims[d];
      }
      int64_t selected = -1;
      Scalar args[2];
      std::fill(w_index.begin(), w_index.end(), 0);
      for (int64_t wk = 0; wk < window_count; ++wk) {
        int64_t candidate = 0;
        bool inside = true;
        for (size_t d = 0; d < rank && inside; ++d) {
          const hlo::WindowDim& wd = window[d];
          const int64_t at = s_index[d] * wd.stride + w_index[d] * wd.window_dilation - wd.pad_low;
          inside = at >= 0 && at < dims[d];
          candidate += at * strides[d];
        }
        for (size_t d = rank; d-- > 0;) {
          if (++w_index[d] < taps[d]) break;
          w_index[d] = 0;
        }
        if (!inside) continue;
        if (selected < 0) {
          selected = candidate;
          continue;
        }
        args[0] = hlo::LoadScalar(t, operand + selected * bytes);
        args[1] = hlo::LoadScalar(t, operand + candidate * bytes);
        Scalar keep;
        select.Run(args, select_registers, &keep);
        if (!keep.bits) selected = candidate;
      }
      if (selected < 0) continue;
      args[0] = hlo::LoadScalar(t, result + selected * bytes);
      args[1] = hlo::LoadScalar(t, source + s * bytes);
      Scalar combined;
      scatter.Run(args, scatter_registers, &combined);
      hlo::StoreScalar(t, combined, result + selected * bytes);
    }
  };
}

// iota of any element type: each element's index along the dimension,
// stored as the evaluator stores it (floats and complex from the double,
// integers wrapped to their width).
Kernel ScalarIotaKernel(const hlo::Instruction& i, const Slot& out) {
  if (!i.shape.IsArray() || i.shape.rank() == 0 || !hlo::IsArrayType(i.shape.element_type())) return nullptr;
  auto dim = hlo::IntAttribute(i, "iota_dimension", std::nullopt);
  if (!dim.ok() || *dim < 0 || *dim >= i.shape.rank()) return nullptr;
  const int64_t n = i.shape.ElementCount();
  const int64_t stride = RowMajorStrides(i.shape.dims())[static_cast<size_t>(*dim)];
  const int64_t extent = i.shape.dim(static_cast<int>(*dim));
  const ElementType t = i.shape.element_type();
  const int64_t bytes = hlo::Info(t).byte_size;
  const bool real = hlo::IsFloat(t) || hlo::IsComplex(t);
  return [=](const Frame& frame) {
    auto* to = static_cast<unsigned char*>(frame.At(out));
    frame.parallel->For(n, 4096, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) {
        const int64_t index = extent == 0 ? 0 : (k / stride) % extent;
        Scalar s;
        if (real) {
          s.re = static_cast<double>(index);
        } else {
          s.bits = static_cast<uint64_t>(index);
        }
        hlo::StoreScalar(t, s, to + k * bytes);
      }
    });
  };
}

// map: the body applied to the operands' elements at each index.
Kernel MapKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.called_computations.size() != 1 || in.size() != i.operands.size()) return nullptr;
  auto program = hlo::ScalarProgram::Compile(*i.called_computations[0]);
  const ElementType result = i.shape.element_type();
  if (!program.ok() || program->parameter_count() != static_cast<int>(in.size()) || program->result_count() != 1 ||
      program->result_type(0) != result) {
    return nullptr;
  }
  const int64_t n = i.shape.ElementCount();
  std::vector<Operand> operands;
  for (size_t k = 0; k < in.size(); ++k) {
    if (i.operands[k]->shape.ElementCount() != n) return nullptr;
    operands.push_back(OperandOf(*i.operands[k], in[k], n));
  }
  const int64_t result_bytes = hlo::Info(result).byte_size;
  return [=, program = *std::move(program)](const Frame& frame) {
    std::vector<const unsigned char*> from;
    for (const Operand& o : operands) from.push_back(static_cast<const unsigned char*>(frame.At(o.slot)));
    auto* to = static_cast<unsigned char*>(frame.At(out));
    frame.parallel->For(n, 1024, [&](int64_t lo, int64_t hi) {
      std::vector<Scalar> registers = program.NewRegisters();
      std::vector<Scalar> args(operands.size());
      Scalar r;
      for (int64_t k = lo; k < hi; ++k) {
        for (size_t v = 0; v < operands.size(); ++v) args[v] = hlo::LoadScalar(operands[v].type, from[v] + k * operands[v].bytes);
        program.Run(args.data(), registers, &r);
        hlo::StoreScalar(result, r, to + k * result_bytes);
      }
    });
  };
}

}  // namespace anvil::cpu
