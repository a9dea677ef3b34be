// reduce of one or more f32, s32 or pred operands by a body a LaneProgram
// runs (lane_program.h): argmax and argmin, a value with its index, any
// body of compares, selects and simple arithmetic. kLanes outputs advance
// together, each combining its elements in the evaluator's order (init
// first, then the reduced positions in row-major order), so the results
// are the evaluator's bit for bit; each body step is one loop over the
// lanes. An argmax over rows of 1000: 700 ms through hlo::ScalarProgram,
// one element at a time.
#include <algorithm>
#include <cstring>

#include "hlo/attributes.h"
#include "plugins/cpu/lane_program.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/reduced_dims.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;

int64_t BytesOf(ElementType t) { return t == ElementType::kPred ? 1 : 4; }

}  // namespace

Kernel LaneReduceKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out) {
  const size_t n = out.size();
  if (n == 0 || in.size() != 2 * n || i.operands.size() != 2 * n || i.called_computations.size() != 1) return nullptr;
  std::optional<LaneProgram> body = LaneProgram::Compile(*i.called_computations[0]);
  if (!body || body->parameter_count() != static_cast<int>(2 * n) || body->result_count() != static_cast<int>(n)) {
    return nullptr;
  }
  const std::vector<int64_t>& dims = i.operands[0]->shape.dims();
  std::vector<int64_t> bytes;
  for (size_t v = 0; v < n; ++v) {
    const ElementType t = i.operands[v]->shape.element_type();
    if (!i.operands[v]->shape.IsArray() || i.operands[v]->shape.dims() != dims ||
        i.operands[n + v]->shape.element_type() != t || body->parameter_type(static_cast<int>(v)) != t ||
        body->parameter_type(static_cast<int>(n + v)) != t || body->result_type(static_cast<int>(v)) != t) {
      return nullptr;
    }
    bytes.push_back(BytesOf(t));
  }
  auto reduced_list = hlo::IntListAttribute(i, "dimensions");
  if (!reduced_list.ok()) return nullptr;
  ReducedDims split = SplitReduced(dims, *reduced_list);
  std::vector<int64_t> kept_dims = std::move(split.kept_dims), kept_strides = std::move(split.kept_strides),
                       reduced_dims = std::move(split.reduced_dims), reduced_strides = std::move(split.reduced_strides);
  int64_t outputs = 1, inner = 1;
  for (int64_t d : kept_dims) outputs *= d;
  for (int64_t d : reduced_dims) inner *= d;
  constexpr int64_t kLanes = LaneProgram::kLanes;
  const int64_t units = (outputs + kLanes - 1) / kLanes;
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, inner * kLanes));
  // A result that is another accumulator's register (a body returning its
  // accumulators swapped) is read before any accumulator is written.
  bool staged = false;
  for (size_t v = 0; v < n; ++v) {
    const int result = body->result_register(static_cast<int>(v));
    staged = staged || (result < static_cast<int>(n) && result != static_cast<int>(v));
  }
  return [=, program = *std::move(body)](const Frame& frame) {
    std::vector<const unsigned char*> x(n), init(n);
    std::vector<unsigned char*> y(n);
    for (size_t v = 0; v < n; ++v) {
      x[v] = static_cast<const unsigned char*>(frame.At(in[v]));
      init[v] = static_cast<const unsigned char*>(frame.At(in[n + v]));
      y[v] = static_cast<unsigned char*>(frame.At(out[v]));
    }
    frame.parallel->For(units, grain, [&](int64_t lo, int64_t hi) {
      std::vector<LaneProgram::Register> r = program.NewRegisters(), stage(staged ? n : 0);
      std::vector<int64_t> bases(kLanes);
      for (int64_t u = lo; u < hi; ++u) {
        const int64_t first = u * kLanes;
        const int lanes = static_cast<int>(std::min(kLanes, outputs - first));
        for (int j = 0; j < lanes; ++j) {
          int64_t o = first + j, base = 0;
          for (size_t d = kept_dims.size(); d-- > 0;) {
            base += (o % kept_dims[d]) * kept_strides[d];
            o /= kept_dims[d];
          }
          bases[j] = base;
        }
        // Accumulators (parameters 0..n-1) start at the inits.
        for (size_t v = 0; v < n; ++v) {
          if (bytes[v] == 4) {
            for (int j = 0; j < lanes; ++j) std::memcpy(r[v].bytes + 4 * j, init[v], 4);
          } else {
            for (int j = 0; j < lanes; ++j) r[v].bytes[j] = *init[v] != 0;
          }
        }
        ReducedWalk walk(reduced_dims, reduced_strides);
        for (int64_t k = 0; k < inner; ++k, walk.Next()) {
          const int64_t at = walk.offset();
          // The elements (parameters n..2n-1), one per lane.
          for (size_t v = 0; v < n; ++v) {
            unsigned char* lane = r[n + v].bytes;
            const unsigned char* from = x[v] + at * bytes[v];
            if (bytes[v] == 4) {
              for (int j = 0; j < lanes; ++j) std::memcpy(lane + 4 * j, from + 4 * bases[j], 4);
            } else {
              for (int j = 0; j < lanes; ++j) lane[j] = from[bases[j]] != 0;
            }
          }
          program.Run(r, lanes);
          if (staged) {
            for (size_t v = 0; v < n; ++v) stage[v] = r[program.result_register(static_cast<int>(v))];
            for (size_t v = 0; v < n; ++v) r[v] = stage[v];
          } else {
            for (size_t v = 0; v < n; ++v) {
              const int result = program.result_register(static_cast<int>(v));
              if (result != static_cast<int>(v)) std::memcpy(r[v].bytes, r[result].bytes, lanes * bytes[v]);
            }
          }
        }
        for (size_t v = 0; v < n; ++v) std::memcpy(y[v] + bytes[v] * first, r[v].bytes, bytes[v] * lanes);
      }
    });
  };
}

}  // namespace anvil::cpu
