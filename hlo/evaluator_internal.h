// Shared pieces of the reference evaluator's op files. Internal to hlo/.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/ir.h"
#include "hlo/literal.h"
#include "hlo/status.h"

namespace anvil::hlo::eval {

// Row-major strides of `dims`.
std::vector<int64_t> Strides(const std::vector<int64_t>& dims);
// The multi-index of linear element `linear`.
void Unflatten(int64_t linear, const std::vector<int64_t>& dims, std::vector<int64_t>& index);
int64_t Flatten(const std::vector<int64_t>& index, const std::vector<int64_t>& strides);

// The dimensions of a dot operand of `rank` that are neither batch nor
// contracting, in order.
std::vector<int64_t> FreeDims(int rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting);

// Copies element `from` of `src` into element `to` of `dst` (same type).
void CopyElement(const Literal& src, int64_t from, Literal& dst, int64_t to);

// Evaluates a called computation (a reducer, a comparator, a loop body).
using CallFn = std::function<StatusOr<Literal>(const Computation&, const std::vector<const Literal*>&)>;

// Each returns the value of `i` given its operands' values.
StatusOr<Literal> EvalElementwise(const Instruction& i, const std::vector<const Literal*>& operands);
StatusOr<Literal> EvalConvert(const Instruction& i, const Literal& operand);
StatusOr<Literal> EvalBitcastConvert(const Instruction& i, const Literal& operand);
StatusOr<Literal> EvalShapeOp(const Instruction& i, const std::vector<const Literal*>& operands);
StatusOr<Literal> EvalReduce(const Instruction& i, const std::vector<const Literal*>& operands, const CallFn& call);
StatusOr<Literal> EvalReduceWindow(const Instruction& i, const std::vector<const Literal*>& operands,
                                   const CallFn& call);
StatusOr<Literal> EvalDot(const Instruction& i, const Literal& lhs, const Literal& rhs);
StatusOr<Literal> EvalSort(const Instruction& i, const std::vector<const Literal*>& operands, const CallFn& call);
StatusOr<Literal> EvalScatter(const Instruction& i, const std::vector<const Literal*>& operands, const CallFn& call);
StatusOr<Literal> EvalSelectAndScatter(const Instruction& i, const std::vector<const Literal*>& operands,
                                       const CallFn& call);
StatusOr<Literal> EvalConvolution(const Instruction& i, const Literal& lhs, const Literal& rhs);
// Convolution of float operands (EvalConvolution's dimension numbers and
// window already read), as patches times filters.
StatusOr<Literal> EvalRealConvolution(const Instruction& i, const Literal& lhs, const Literal& rhs,
                                      const ConvDimensionNumbers& dn, const std::vector<WindowDim>& window,
                                      int64_t feature_groups, int64_t batch_groups);
StatusOr<Literal> EvalTriangularSolve(const Instruction& i, const Literal& a, const Literal& b);
// Cholesky of each [..., n, n] matrix; the other triangle is zero.
StatusOr<Literal> EvalCholesky(const Instruction& i, const Literal& a);
StatusOr<Literal> EvalFft(const Instruction& i, const Literal& operand);
StatusOr<Literal> EvalTopK(const Instruction& i, const Literal& operand);
StatusOr<Literal> EvalScan(const Instruction& i, const std::vector<const Literal*>& operands, const CallFn& call);
// `op` is the chlo name after "chlo." (lgamma, digamma, erf_inv, mulhi...).
StatusOr<Literal> EvalChlo(const Instruction& i, const std::string& op, const std::vector<const Literal*>& operands);
StatusOr<Literal> EvalBatchNorm(const Instruction& i, const std::vector<const Literal*>& operands);
// (new state, bits) as XLA's THREE_FRY and PHILOX generators give them.
StatusOr<Literal> EvalRngBitGenerator(const Instruction& i, const Literal& state);
// rng: uniform in [a, b) or normal with mean a and deviation b, from
// THREE_FRY bits keyed by the instruction's name (the same on every run).
StatusOr<Literal> EvalRng(const Instruction& i, const Literal& a, const Literal& b);
// An rng-get-and-update-state's 128-bit state.
using RngState = unsigned __int128;
// The state as u64[2] {low, high}; then the state advances by the op's delta.
StatusOr<Literal> EvalRngGetAndUpdateState(const Instruction& i, RngState& state);
// XLA builder's ScramblePhiloxKey, key by key.
StatusOr<Literal> EvalScramblePhiloxKey(const Instruction& i, const Literal& keys);
StatusOr<Literal> EvalRaggedDot(const Instruction& i, const Literal& lhs, const Literal& rhs,
                                const Literal& group_sizes);
// A custom call XLA's backends or builder emit (__cublas$gemm, Einsum,
// SliceToDynamic, PadToStatic), or nullopt when `target` is none of them.
// Decompositions (evaluator_decompositions.cc): "Qr" and
// "ProductOfElementaryHouseholderReflectors", LAPACK's geqrf and orgqr, and
// "Eigh", symmetric eigendecomposition by Jacobi rotations.
StatusOr<Literal> HouseholderQr(const Instruction& i, const std::vector<const Literal*>& operands);
StatusOr<Literal> HouseholderProduct(const Instruction& i, const std::vector<const Literal*>& operands);
StatusOr<Literal> JacobiEigh(const Instruction& i, const std::vector<const Literal*>& operands);
// Whether EvalBackendCustomCall knows `target`.
bool IsBackendCustomCall(const std::string& target);
std::optional<StatusOr<Literal>> EvalBackendCustomCall(const Instruction& i, const std::string& target,
                                                       const std::vector<const Literal*>& operands);
StatusOr<Literal> EvalMap(const Instruction& i, const std::vector<const Literal*>& operands, const CallFn& call);

// Float element k as a key of the total order compare's TOTALORDER and
// top-k use: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
int64_t TotalOrderKey(const Literal& l, int64_t k);

// Scalars of every class, for the element loops.
bool IsIntegral(ElementType t);
// A real number's value as double (floats, integers, pred).
double RealAt(const Literal& l, int64_t k);
std::complex<double> ComplexAt(const Literal& l, int64_t k);
// Integers as 64-bit two's complement (sign- or zero-extended).
uint64_t BitsAt(const Literal& l, int64_t k);
void SetReal(Literal& l, int64_t k, double v);
void SetBits(Literal& l, int64_t k, uint64_t v);

}  // namespace anvil::hlo::eval
