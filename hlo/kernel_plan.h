// Target-independent kernel planning for device code generators (Vulkan
// today; CUDA, ROCm and a CPU code generator can take the same plan).
//
// A computation becomes a list of steps. Most steps are kernels: one
// instruction whose value is stored in memory (the kernel's root), plus the
// cheap per-element producers fused into it (elementwise ops, broadcasts,
// reshapes, transposes, slices, pads, concatenates, iotas, gathers...), which
// the kernel recomputes where it reads them instead of storing them. A
// producer is fused when it has exactly one use and its user reads each of
// its elements about once (an elementwise op, a reduction); a dot or a
// convolution, which read each operand element many times, read stored
// values. Control flow (while, conditional, call) stays on the host, which
// runs the planned computations it names.
//
// Index arithmetic for the kernels is in C syntax (`hlo/kernel_index.h`),
// which GLSL, CUDA C and HIP all read.
#pragma once

#include <map>
#include <vector>

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

// What an instruction is to a device code generator.
enum class Role : uint8_t {
  kParameter,  // a computation's argument: in memory
  kConstant,   // in memory, uploaded at compile (scalars are inlined where fused)
  kAlias,      // no work: the value is (part of) another (tuple, get-tuple-element, same-bytes reshape...)
  kControl,    // while, conditional, call: run by the host
  kLoop,       // computable one output element at a time from operand elements: fusible
  kKernel,     // needs a kernel of its own kind (reduce, dot, sort...)
  kUnsupported,
};
Role RoleOf(const Instruction& instruction);

// The function an elementwise custom call computes ("lgamma", "next_after",
// "mulhi", "acos"...: chlo's special functions and XLA's math library
// calls), or "" for any other custom call.
std::string ElementwiseCustomCall(const Instruction& instruction);

enum class KernelKind : uint8_t {
  kLoop,              // one output element per invocation, from fused element expressions
  kReduce,            // one output element per invocation, looping over the reduced elements
  kDot,               // dot_general
  kConvolution,
  kReduceWindow,
  kSelectAndScatter,  // one output element per invocation: the windows that can select it
  kScatter,           // a copy of the operands, then the updates in index order
  kSort,              // one invocation per sorted row, a stable sort
  kTriangularSolve,   // one invocation per right-hand side, by substitution
  kFft,               // per transformed dimension: radix-2 Stockham stages, Bluestein, or a direct DFT
  kCholesky,          // per column, the diagonal then the column below it, in double
  kQr,                // custom-call "Qr" (geqrf): per column, its reflector, then applied to the columns right of it
  kHouseholderProduct,  // custom-call "ProductOfElementaryHouseholderReflectors" (orgqr): reflectors applied last first
  kEigh,              // custom-call "Eigh": cyclic Jacobi sweeps, one invocation per matrix
  kTopK,              // one invocation per row, k selections
  kRaggedDot,         // dot_general whose rhs group follows the lhs row's group
};

struct KernelSpec {
  KernelKind kind = KernelKind::kLoop;
  const Instruction* root = nullptr;
  // Producers computed inside the kernel, in definition order (root excluded).
  std::vector<const Instruction*> fused;
  // Values the kernel reads from memory, in first-read order.
  std::vector<const Instruction*> inputs;
  bool Fuses(const Instruction* i) const;
};

struct PlanStep {
  enum class Kind : uint8_t { kKernel, kControl } kind = Kind::kKernel;
  KernelSpec kernel;                      // kKernel
  const Instruction* control = nullptr;   // kControl: a while, conditional or call
};

struct ComputationPlan {
  const Computation* computation = nullptr;
  std::vector<PlanStep> steps;
};

struct ProgramPlan {
  // The entry first, then every computation a control step runs.
  std::vector<ComputationPlan> computations;
  const ComputationPlan* Find(const Computation* c) const;
};

// Plans the entry and every computation its control flow runs. UNIMPLEMENTED
// names the first instruction with no role (a collective, an infeed...).
StatusOr<ProgramPlan> PlanKernels(const Module& module);

}  // namespace anvil::hlo
