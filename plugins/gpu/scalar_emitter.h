// Kernel expressions for HLO's scalar semantics: elementwise ops, compares,
// conversions, with XLA's choices where IEEE or the kernel languages leave
// room (NaN-propagating max/min, integer division by zero, saturating
// float-to-int, shifts past the width). Helpers a kernel needs are
// collected in a KernelLibrary and written once at the top of its module.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/status.h"
#include "plugins/gpu/kernel_dialect.h"

namespace anvil::gpu {

class KernelLibrary {
 public:
  explicit KernelLibrary(const KernelDialect& dialect) : dialect_(dialect) {}
  const KernelDialect& dialect() const { return dialect_; }
  // Whether the device computes in double (elementary functions then do).
  bool float64() const { return dialect_.HasFloat64(); }
  // Asks for helper `name` (a family instantiated for one register type,
  // e.g. "xmax_float"); unknown names are a programming error caught by
  // the shader compiler.
  void Need(const std::string& name) { needed_.insert(name); }
  // Every macro family, then the instantiations asked for.
  std::string Text() const;

 private:
  const KernelDialect& dialect_;
  std::set<std::string> needed_;
};

// The value of elementwise op `i` on register values `operands` (of
// i.operands' element types), normalised to i's element type.
hlo::StatusOr<std::string> ElementwiseExpr(const hlo::Instruction& i, const std::vector<std::string>& operands,
                                           KernelLibrary& library);

// The elementwise custom call `i` computing `function` (see
// hlo::ElementwiseCustomCall) on register values `operands`.
hlo::StatusOr<std::string> CustomCallExpr(const hlo::Instruction& i, const std::string& function,
                                          const std::vector<std::string>& operands, KernelLibrary& library);

// `value` of type `from` converted to `to` (XLA's convert).
std::string ConvertExpr(hlo::ElementType from, hlo::ElementType to, const std::string& value, KernelLibrary& library);

// The raw bits of a register value as uint (or uint64_t for 64-bit and wider
// types), and a register value from them: bitcast-convert of equal widths.
std::string BitsOf(hlo::ElementType type, const std::string& value);
// A signed integer whose order is IEEE totalOrder of `value`, of float type
// `type` (the evaluator's TotalOrderKey: a narrow float's from its bits).
std::string TotalOrderKey(hlo::ElementType type, const std::string& value);
std::string FromBits(hlo::ElementType type, const std::string& bits);

// The combiner computation `c` (scalar parameters; a scalar or a tuple of
// scalars as root) as a function `void NAME(in P0 p0, ..., out R0 r0, ...)`
// (in the dialect's parameter syntax).
// Its text is appended to `functions`, callees first; returns its name.
hlo::StatusOr<std::string> EmitScalarComputation(const hlo::Computation& c, KernelLibrary& library,
                                                 std::string& functions, std::set<std::string>& emitted);

// Whether `c` computes `p0 + p1` of one element type (a sum reduction).
bool IsAddition(const hlo::Computation& c);

}  // namespace anvil::gpu
