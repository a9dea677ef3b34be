// The lowering of a StableHLO syntax tree (from MLIR text or from a VHLO
// portable artifact) into the IR. Internal to hlo/; the front doors are in
// stablehlo_parser.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/mlir_source.h"
#include "hlo/mlir_syntax.h"
#include "hlo/stablehlo_parser.h"

namespace anvil::hlo {

// Every function into one module; a function the reader refused fails it.
StatusOr<std::unique_ptr<Module>> LowerModule(mlir::SyntaxSource& source, const mlir::ModuleSyntax& syntax,
                                              const std::string& file);
// Each public function as the entry of a module of its own.
std::vector<FunctionModule> LowerFunctions(mlir::SyntaxSource& source, const mlir::ModuleSyntax& syntax,
                                           const std::string& file);

}  // namespace anvil::hlo
