// GLSL expressions for HLO's scalar semantics: elementwise ops, compares,
// conversions, with XLA's choices where IEEE or GLSL leave room (NaN-
// propagating max/min, integer division by zero, saturating float-to-int,
// shifts past the width). Helpers a kernel needs are collected in a
// GlslLibrary and written once at the top of its shader.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::vulkan {

class GlslLibrary {
 public:
  // Whether the device computes in double (elementary functions then do).
  explicit GlslLibrary(bool float64 = true) : float64_(float64) {}
  bool float64() const { return float64_; }
  // Asks for helper `name` (a family instantiated for one register type,
  // e.g. "xmax_float"); unknown names are a programming error caught by
  // the shader compiler.
  void Need(const std::string& name) { needed_.insert(name); }
  // Every macro family, then the instantiations asked for.
  std::string Text() const;

 private:
  bool float64_;
  std::set<std::string> needed_;
};

// The value of elementwise op `i` on register values `operands` (of
// i.operands' element types), normalised to i's element type.
hlo::StatusOr<std::string> ElementwiseExpr(const hlo::Instruction& i, const std::vector<std::string>& operands,
                                           GlslLibrary& library);

// The elementwise custom call `i` computing `function` (see
// hlo::ElementwiseCustomCall) on register values `operands`.
hlo::StatusOr<std::string> CustomCallExpr(const hlo::Instruction& i, const std::string& function,
                                          const std::vector<std::string>& operands, GlslLibrary& library);

// `value` of type `from` converted to `to` (XLA's convert).
std::string ConvertExpr(hlo::ElementType from, hlo::ElementType to, const std::string& value, GlslLibrary& library);

// The raw bits of a register value as uint (or uint64_t for 64-bit and wider
// types), and a register value from them: bitcast-convert of equal widths.
std::string BitsOf(hlo::ElementType type, const std::string& value);
std::string FromBits(hlo::ElementType type, const std::string& bits);

// The combiner computation `c` (scalar parameters; a scalar or a tuple of
// scalars as root) as a GLSL function `void NAME(in P0 p0, ..., out R0 r0, ...)`.
// Its text is appended to `functions`, callees first; returns its name.
hlo::StatusOr<std::string> EmitScalarComputation(const hlo::Computation& c, GlslLibrary& library,
                                                 std::string& functions, std::set<std::string>& emitted);

// Whether `c` computes `p0 + p1` of one element type (a sum reduction).
bool IsAddition(const hlo::Computation& c);

}  // namespace anvil::vulkan
