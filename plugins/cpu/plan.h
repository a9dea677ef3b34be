// A compiled program: the steps to run, in order, each a typed kernel bound
// at compile time to the buffers it reads and writes. Executing walks the
// steps; it parses nothing, formats nothing, and no kernel switches on an
// opcode per element.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/ir.h"
#include "hlo/patterns.h"
#include "hlo/literal.h"
#include "plugins/cpu/parallel.h"

namespace anvil::cpu {

// Where an array lives during an execution.
struct Slot {
  enum class Kind : uint8_t { kParameter, kConstant, kScratch, kOutput } kind = Kind::kScratch;
  int64_t index = 0;   // parameter number, constant number or output number
  int64_t offset = 0;  // byte offset in the scratch block (kScratch)
};

// A 16-byte element (c128), for the kernels that move elements as they
// are (select, broadcast, transpose, slice...), as uint8_t..uint64_t are
// for the narrower ones.
struct Bytes16 {
  uint64_t lo, hi;
};

// The memory of one execution.
struct Frame {
  std::vector<void*> parameters;
  std::vector<void*> outputs;
  char* scratch = nullptr;
  const std::vector<const hlo::Literal*>* constants = nullptr;
  const Parallel* parallel = nullptr;

  void* At(const Slot& s) const {
    switch (s.kind) {
      case Slot::Kind::kParameter: return parameters[s.index];
      case Slot::Kind::kConstant: return const_cast<uint8_t*>((*constants)[s.index]->data().data());
      case Slot::Kind::kScratch: return scratch + s.offset;
      case Slot::Kind::kOutput: return outputs[s.index];
    }
    return nullptr;
  }
};

// A value of the program: one array in a slot, or a tuple of values. Its
// shape is the module's own (an instruction's, or an element of one), which
// the executable keeps, so a plan of thousands of values copies no shape.
struct Value {
  const hlo::Shape* shape = nullptr;
  Slot slot;                  // arrays
  std::vector<int> elements;  // tuples: indices of element values
};

using Kernel = std::function<void(const Frame&)>;

struct Step {
  Step(std::string description, Kernel kernel)
      : what(std::move(description)), kind(what.substr(0, what.find(" %"))), run(std::move(kernel)) {}
  std::string what;  // for error messages and profiles, never used while running
  std::string kind;  // what's head, "convolution", "fusion(7 ops)": profiles' and traces' name
  Kernel run;
};

struct Plan {
  // The module's own literals: the executable keeps the module, so they
  // outlive the plan, and are never copied.
  std::vector<const hlo::Literal*> constants;
  std::vector<Value> values;
  std::vector<Step> steps;
  std::vector<int> outputs;            // values copied to the outputs at the end (or already there)
  std::vector<bool> output_in_place;   // whether output k was computed straight into its memory
  // A nested plan's outputs that may be given their parameter's memory
  // (BuildNestedPlan; a while loop's state, updated in place): with
  // outputs[k] == parameters[k], the plan still computes every output.
  std::vector<bool> output_may_alias_parameter;
  std::vector<hlo::Shape> parameter_shapes, output_shapes;
  int64_t scratch_bytes = 0;
  // Which steps run a typed kernel and which the reference evaluator.
  int typed_steps = 0, reference_steps = 0;
  // Small enough to run on the caller's thread, inside the execute entry:
  // handing it to a host thread would cost more than running it.
  bool runs_inline = false;
};

class ConvLayoutBook;

// Where a plan's build spends its time, for traces: BuildPlan marks its
// phases in turn ("cpu: plan fusion", "cpu: plan buffers", "cpu: plan
// kernels", "cpu: plan steps"), each Begin followed by its End.
class PlanPhases {
 public:
  virtual ~PlanPhases() = default;
  virtual void Begin(const char* phase) = 0;
  virtual void End() = 0;
};

// Compiles the canonical module's entry into a plan. `layouts` (optional)
// gives oneDNN's choices for convolutions a compile described before (a
// load from the compile cache), and receives those it describes now.
// `parallel` (optional): the steps' kernels are built on its host threads.
// `phases` (optional) is told of each phase of the entry's build.
hlo::StatusOr<std::unique_ptr<Plan>> BuildPlan(const hlo::Module& module, ConvLayoutBook* layouts = nullptr,
                                                const Parallel* parallel = nullptr, PlanPhases* phases = nullptr);
// Compiles a computation a loop runs: its parameter's array leaves are the
// plan's parameters, in order, and its root's leaves its outputs.
hlo::StatusOr<std::unique_ptr<Plan>> BuildNestedPlan(const hlo::Computation& computation, ConvLayoutBook* layouts);
// Runs a plan's steps on `frame` (errors are thrown, as from any step).
void RunSteps(const Plan& plan, const Frame& frame);

// Element strides of a dense row-major array of `dims`.
inline std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  return strides;
}

// A convolution's attributes, read once for the f32 kernels.
struct ConvolutionAttributes {
  hlo::ConvDimensionNumbers dn;
  int64_t feature_groups = 1, batch_groups = 1;  // at most one is above 1
  std::vector<hlo::WindowDim> window;            // one per spatial dimension
};

// A reduce-window's taps along each dimension, for kernels that walk its
// windows: tap_input[d][o * taps[d] + w] is the input index along d that
// output position o reads through tap w, or -1 where the tap falls in the
// padding or between base-dilated elements. nullopt when the tables would
// pass 2^26 entries (kernels_reduce_window.cc).
struct WindowTaps {
  std::vector<int64_t> taps;
  std::vector<std::vector<int64_t>> tap_input;
};
std::optional<WindowTaps> MakeWindowTaps(const std::vector<hlo::WindowDim>& window, const std::vector<int64_t>& in_dims,
                                         const std::vector<int64_t>& out_dims);
// (Scans: hlo/patterns.h's PrefixScan.)
using Scan = hlo::WindowScan;
// A dimension's interior: the first run of output positions [begin, end)
// whose taps all read inside the input (its tap table `table`, `taps` taps
// per position), where (no base dilation) tap w of position o reads input
// o * stride + tap_offsets[w]. Empty for a base-dilated dimension.
struct WindowInterior {
  int64_t begin = 0, end = 0, stride = 1;
  std::vector<int64_t> tap_offsets;
};
WindowInterior InteriorOf(const hlo::WindowDim& window, const std::vector<int64_t>& table, int64_t taps,
                          int64_t positions);

// Memory a kernel needs only while it runs. Steps run one at a time, so all
// kernels' temporaries share one region of the scratch block, after the
// plan's buffers: a builder is handed the region's slot and says how many
// bytes it needs.
struct Temp {
  Slot slot;
  int64_t bytes = 0;
};

// Kernel builders (one file each). Each returns nullptr when it has no
// typed kernel for this instruction and element type.
Kernel ElementwiseKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
Kernel DataMovementKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
Kernel IotaKernel(const hlo::Instruction& i, const Slot& out);
Kernel ComplexPartsKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
Kernel ScatterKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
Kernel ReduceWindowKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
Kernel GatherKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
Kernel SelectAndScatterKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
// while: its condition and body compiled as nested plans, run in turn on the
// loop state (the operand's and the result's array leaves).
// `nested_reference_steps` gets the reference steps of both plans (the
// profile counts them with the entry's). Both in kernels_control_flow.cc.
hlo::StatusOr<Kernel> WhileKernel(const hlo::Instruction& i, const std::vector<Slot>& state_in,
                                  const std::vector<Slot>& state_out, Temp* temp, int* nested_reference_steps,
                                  ConvLayoutBook* layouts);
// conditional: each branch a nested plan reading its operand's leaves and
// writing the result's leaves.
hlo::StatusOr<Kernel> ConditionalKernel(const hlo::Instruction& i, const Slot& selector,
                                        const std::vector<std::vector<Slot>>& branch_operands,
                                        const std::vector<Slot>& result, Temp* temp, int* nested_reference_steps,
                                        ConvLayoutBook* layouts);
// Sort of one or more operands: `out` holds the result leaves' slots.
Kernel SortKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out);
// topk: `out` holds the values' and the indices' slots.
Kernel TopKKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out);
Kernel ReduceKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
// The same loops for an f32 reduce by `op` of `rows` dense rows of
// `row_length` into `rows` results: a block of a fused reduce's rows.
Kernel RowReduceKernel(hlo::Opcode op, int64_t rows, int64_t row_length, const Slot& in, const Slot& init,
                       const Slot& out);
// reduce of one or more f32, s32 or pred operands by a body of compares,
// selects and simple arithmetic (argmax, argmin), lanes of outputs at a
// time (kernels_lane_reduce.cc); `out` holds the result leaves' slots.
// `computed_iotas[v]`: operand v is an s32 iota the kernel computes as it
// goes instead of reading (its slot is never read; LaneReduceComputesIota
// says which it can).
Kernel LaneReduceKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out,
                        const std::vector<bool>& computed_iotas = {});
bool LaneReduceComputesIota(const hlo::Instruction& reduce, size_t operand);
Kernel DotKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out, Temp* temp);
Kernel ConvolutionKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out, Temp* temp,
                         ConvLayoutBook* layouts);
// f32 convolutions through oneDNN's forward, backward-data and
// backward-weights primitives (ConvolutionKernel tries it first).
Kernel OnednnConvolutionKernel(const hlo::Instruction& i, const ConvolutionAttributes& attributes,
                               const std::vector<Slot>& in, const Slot& out, Temp* temp, ConvLayoutBook* layouts);
// Pointwise f32 convolutions on batch-feature-spatial activations whose
// result streams past the caches: sgemm by blocks, streamed out
// (kernels_conv_pointwise.cc; ConvolutionKernel tries it before oneDNN).
Kernel StreamedPointwiseConvolutionKernel(const hlo::Instruction& i, const ConvolutionAttributes& attributes,
                                          const std::vector<Slot>& in, const Slot& out);
// 2-D f32 convolutions with at most a few output features per group,
// computed directly, with the attributes ConvolutionKernel has read. With
// `contiguous_depthwise_only`, only depthwise convolutions and their
// gradients whose rows its vectorised loops take (ConvolutionKernel asks
// that before oneDNN, and anything else after).
Kernel DirectConvolutionKernel(const hlo::Instruction& i, const ConvolutionAttributes& attributes,
                               const std::vector<Slot>& in, const Slot& out, bool contiguous_depthwise_only);
Kernel NarrowFloatConvolutionKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out,
                                    Temp* temp, ConvLayoutBook* layouts);
// triangular-solve of float and complex types (kernels_triangular_solve.cc).
Kernel TriangularSolveKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
// bitcast-convert through pred, bit by bit, and get-dimension-size
// (kernels_bits.cc).
Kernel BitcastConvertKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
Kernel GetDimensionSizeKernel(const hlo::Instruction& i, const Slot& out);
// custom-call "chlo.NAME" of a function of real arguments (lgamma, erf_inv,
// igamma...) of f64, f32, bf16 and f16, as the evaluator computes it
// (kernels_chlo.cc).
Kernel ChloKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
// cholesky of f32, f64, c64 and c128 through LAPACK's potrf (kernels_cholesky.cc).
Kernel CholeskyKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
// fft of complex64, complex128, f32 and f64 (kernels_fft.cc); its complex signal in `temp`.
Kernel FftKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out, Temp* temp);
Kernel ClampKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
// Element by element through hlo/scalar_ops and hlo/scalar_program
// (kernels_scalar.cc): any elementwise op the typed kernels have no
// instance for; reduce by any scalar body, of one or more operands (`out`
// holds the result leaves' slots); reduce-window likewise; map; iota of
// any element type; select-and-scatter by any bodies.
Kernel ScalarElementwiseKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
Kernel ScalarReduceKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out);
Kernel ScalarReduceWindowKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out);
Kernel MapKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
Kernel ScalarIotaKernel(const hlo::Instruction& i, const Slot& out);
Kernel ScalarSelectAndScatterKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
// dot with a complex result, in the evaluator's order and precision.
Kernel ComplexDotKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
// rng-get-and-update-state, with its state kept by the kernel across executions.
Kernel RngStateKernel(const hlo::Instruction& i, const Slot& out);
// rng (rng_uniform, rng_normal): the evaluator's values (hlo/rng_values.h).
Kernel RngKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out);
// rng-bit-generator: hlo/rng_bit_stream's bits (the evaluator's), elements
// split across threads; `out` is (state, bits).
Kernel RngBitGeneratorKernel(const hlo::Instruction& i, const Slot& state, const std::vector<Slot>& out);
// Batch norm produces a tuple: `out` holds its leaves' slots.
Kernel BatchNormKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out);

}  // namespace anvil::cpu
