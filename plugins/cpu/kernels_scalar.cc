// Kernels for what the typed kernels leave: ops on element types they are
// not instantiated for (sub-byte integers, narrow floats, complex, mixed
// types) and bodies that are not one recognised op (argmax's variadic
// reduce, complex sums, map). Each element goes through hlo/scalar_ops, and
// each body through an hlo/scalar_program compiled when the plan is built:
// no literal, allocation or instruction dispatch per element, and the
// reference evaluator's answers bit for bit (same scalar functions, same
// roundings, reductions in the same order).
#include <algorithm>
#include <numeric>

#include "hlo/attributes.h"
#include "hlo/scalar_ops.h"
#include "hlo/scalar_program.h"
#include "plugins/cpu/plan.h"

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
  if (n == 0 || in.size() != 2 * n || i.operands.size() != 2 * n || i.called_computations.size() != 1) return nullptr;
  auto program = hlo::ScalarProgram::Compile(*i.called_computations[0]);
  if (!program.ok() || program->parameter_count() != static_cast<int>(2 * n) ||
      program->result_count() != static_cast<int>(n)) {
    return nullptr;
  }
  auto reduced_list = hlo::IntListAttribute(i, "dimensions");
  if (!reduced_list.ok()) return nullptr;
  const std::vector<int64_t>& dims = i.operands[0]->shape.dims();
  std::vector<ElementType> types;
  for (size_t v = 0; v < n; ++v) {
    if (!i.operands[v]->shape.IsArray() || i.operands[v]->shape.dims() != dims) return nullptr;
    types.push_back(i.operands[v]->shape.element_type());
    if (i.operands[n + v]->shape.element_type() != types[v] || program->result_type(static_cast<int>(v)) != types[v]) {
      return nullptr;
    }
  }
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> kept_dims, kept_strides, reduced_dims, reduced_strides;
  for (size_t d = 0; d < dims.size(); ++d) {
    const bool reduced = std::count(reduced_list->begin(), reduced_list->end(), static_cast<int64_t>(d)) > 0;
    (reduced ? reduced_dims : kept_dims).push_back(dims[d]);
    (reduced ? reduced_strides : kept_strides).push_back(strides[d]);
  }
  const int64_t outputs = std::accumulate(kept_dims.begin(), kept_dims.end(), int64_t{1}, std::multiplies<>());
  const int64_t inner = std::accumulate(reduced_dims.begin(), reduced_dims.end(), int64_t{1}, std::multiplies<>());
  return [=, program = *std::move(program)](const Frame& frame) {
    std::vector<const unsigned char*> x(n), init(n);
    std::vector<unsigned char*> y(n);
    std::vector<int64_t> bytes(n);
    for (size_t v = 0; v < n; ++v) {
      x[v] = static_cast<const unsigned char*>(frame.At(in[v]));
      init[v] = static_cast<const unsigned char*>(frame.At(in[n + v]));
      y[v] = static_cast<unsigned char*>(frame.At(out[v]));
      bytes[v] = hlo::Info(types[v]).byte_size;
    }
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
        for (size_t v = 0; v < n; ++v) acc[v] = hlo::LoadScalar(types[v], init[v]);
        std::fill(r.begin(), r.end(), 0);
        for (int64_t k = 0; k < inner; ++k) {
          int64_t at = base;
          for (size_t d = 0; d < r.size(); ++d) at += r[d] * reduced_strides[d];
          for (size_t v = 0; v < n; ++v) {
            args[v] = acc[v];
            args[n + v] = hlo::LoadScalar(types[v], x[v] + at * bytes[v]);
          }
          program.Run(args.data(), registers, acc.data());
          for (size_t d = r.size(); d-- > 0;) {
            if (++r[d] < reduced_dims[d]) break;
            r[d] = 0;
          }
        }
        for (size_t v = 0; v < n; ++v) hlo::StoreScalar(types[v], acc[v], y[v] + o * bytes[v]);
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
