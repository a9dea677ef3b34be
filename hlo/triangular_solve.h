// triangular-solve of one batch, in std::complex<double> (real types
// widened exactly, the result rounded once by the caller): the reference
// evaluator's solver, shared with plugins that solve on their own buffers,
// so both give the same bits.
#pragma once

#include <complex>
#include <cstdint>

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

struct TriangularSolveOptions {
  bool left_side = false;  // solve op(A) X = B (else X op(A) = B)
  bool lower = false;      // A's lower triangle holds it (else the upper)
  bool unit_diagonal = false;
  enum class Transpose { kNone, kTranspose, kAdjoint } transpose = Transpose::kNone;
};

// The instruction's attributes, or InvalidArgument for an unknown transpose.
StatusOr<TriangularSolveOptions> TriangularSolveOptionsOf(const Instruction& i);

// One batch: `a` is m x m, `b` and `x` are rows x cols, all row-major.
// Only the triangle `lower` names is read (the diagonal as 1 when it is a
// unit one). Each system is solved by substitution, in the order the
// triangle gives.
void SolveTriangular(const TriangularSolveOptions& options, int64_t m, int64_t rows, int64_t cols,
                     const std::complex<double>* a, const std::complex<double>* b, std::complex<double>* x);

}  // namespace anvil::hlo
