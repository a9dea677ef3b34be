// ragged-dot for the reference evaluator, by the rewrite XLA itself uses:
// the ragged operand gains a group dimension in which group j keeps only
// the rows (or, when the ragged dimension contracts, the columns) that
// group_sizes assigns to j, and zeros elsewhere; an ordinary dot of the
// densified operands is the result.
//
// group_sizes is [prefix..., g]: g group sizes along the ragged dimension,
// one set per index of the prefix dimensions, which are the last of: the lhs
// batch dimensions, then the lhs dimensions of the ragged dimension's own
// kind (non-contracting or contracting) that precede it. Rows past the last group
// belong to none and give zeros.
#include <algorithm>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"

namespace anvil::hlo::eval {
namespace {

// `operand` with a group dimension inserted at `group_at`; element
// [..., j, ...] is the operand's where its index along `ragged_dim` falls in
// group j, zero elsewhere. `prefix_dims` are the operand dimensions that
// index group_sizes' leading dimensions.
StatusOr<Literal> Densify(const Literal& operand, int64_t ragged_dim, const Literal& group_sizes, int group_at,
                          const std::vector<int64_t>& prefix_dims) {
  const auto& od = operand.shape().dims();
  const auto& gd = group_sizes.shape().dims();
  const size_t prefix = gd.size() - 1;
  const int64_t groups = gd.back();
  bool fits = prefix == prefix_dims.size();
  for (size_t p = 0; fits && p < prefix; ++p) fits = od[prefix_dims[p]] == gd[p];
  if (!fits) {
    return InvalidArgument("ragged-dot group_sizes " + group_sizes.shape().ToString() + " does not match " +
                           operand.shape().ToString() + ": its leading dimensions must be the batch dimensions and "
                           "those of the ragged dimension's kind before it");
  }
  std::vector<int64_t> dims = od;
  dims.insert(dims.begin() + group_at, groups);
  Literal out(Shape(operand.shape().element_type(), dims));
  const auto operand_strides = Strides(od);
  const auto group_strides = Strides(gd);
  std::vector<int64_t> index, original, prefix_index(prefix + 1);
  for (int64_t k = 0, k_end = out.element_count(); k < k_end; ++k) {
    Unflatten(k, dims, index);
    const int64_t group = index[group_at];
    original = index;
    original.erase(original.begin() + group_at);
    for (size_t p = 0; p < prefix; ++p) prefix_index[p] = original[prefix_dims[p]];
    int64_t start = 0;
    for (int64_t j = 0; j < group; ++j) {
      prefix_index[prefix] = j;
      start += group_sizes.GetInt(Flatten(prefix_index, group_strides));
    }
    prefix_index[prefix] = group;
    const int64_t end = start + group_sizes.GetInt(Flatten(prefix_index, group_strides));
    const int64_t row = original[ragged_dim];
    if (row >= start && row < end) CopyElement(operand, Flatten(original, operand_strides), out, k);
  }
  return out;
}

// Dimension `d` of an operand after a dimension was inserted at `at`.
std::vector<int64_t> Shifted(const std::vector<int64_t>& dims, int64_t at) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(d >= at ? d + 1 : d);
  return out;
}

}  // namespace

StatusOr<Literal> EvalRaggedDot(const Instruction& i, const Literal& lhs, const Literal& rhs,
                                const Literal& group_sizes) {
  ANVIL_ASSIGN_OR_RETURN(auto lb, IntListAttribute(i, "lhs_batch_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto rb, IntListAttribute(i, "rhs_batch_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto lc, IntListAttribute(i, "lhs_contracting_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto rc, IntListAttribute(i, "rhs_contracting_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto ragged, IntListAttribute(i, "lhs_ragged_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto group, IntListAttribute(i, "rhs_group_dims"));
  if (ragged.size() != 1) return Unimplemented("ragged-dot needs exactly one lhs ragged dimension");
  if (group_sizes.shape().rank() < 1) return InvalidArgument("ragged-dot group_sizes must have a group dimension");
  const int64_t r = ragged[0];
  Instruction dot;
  dot.name = i.name;
  dot.opcode = Opcode::kDot;
  dot.shape = i.shape;
  auto set_dims = [&](const std::vector<int64_t>& nlb, const std::vector<int64_t>& nrb, const std::vector<int64_t>& nlc,
                      const std::vector<int64_t>& nrc) {
    dot.attributes = {{"lhs_batch_dims", FormatIntList(nlb)},
                      {"lhs_contracting_dims", FormatIntList(nlc)},
                      {"rhs_batch_dims", FormatIntList(nrb)},
                      {"rhs_contracting_dims", FormatIntList(nrc)}};
  };
  // The lhs dimensions that index group_sizes' prefix: the last of the
  // batch dimensions followed by the dimensions of `kind` before `r`.
  auto prefix_of = [&](const std::vector<int64_t>& kind) {
    std::vector<int64_t> dims = lb;
    for (int64_t d = 0; d < r; ++d) {
      if (std::count(kind.begin(), kind.end(), d)) dims.push_back(d);
    }
    const size_t wanted = static_cast<size_t>(group_sizes.shape().rank() - 1);
    if (dims.size() > wanted) dims.erase(dims.begin(), dims.end() - wanted);
    return dims;
  };
  if (std::count(lb.begin(), lb.end(), r)) {
    // Ragged batch dimension: every batch row meets its own rhs row already.
    set_dims(lb, rb, lc, rc);
    return EvalDot(dot, lhs, rhs);
  }
  auto contracting = std::find(lc.begin(), lc.end(), r);
  if (contracting == lc.end()) {
    // Ragged non-contracting dimension: the new group dimension of lhs
    // contracts with rhs's group dimension.
    if (group.size() != 1) return InvalidArgument("ragged-dot with a ragged non-contracting dimension needs one rhs group dimension");
    ANVIL_ASSIGN_OR_RETURN(Literal dense, Densify(lhs, r, group_sizes, 0, prefix_of(FreeDims(lhs.shape().rank(), lb, lc))));
    std::vector<int64_t> nlc = {0};
    for (int64_t d : Shifted(lc, 0)) nlc.push_back(d);
    std::vector<int64_t> nrc = {group[0]};
    nrc.insert(nrc.end(), rc.begin(), rc.end());
    set_dims(Shifted(lb, 0), rb, nlc, nrc);
    return EvalDot(dot, dense, rhs);
  }
  // Ragged contracting dimension: both operands are split by group, and the
  // group becomes the result's leading batch dimension.
  const int64_t rhs_ragged = rc[contracting - lc.begin()];
  const std::vector<int64_t> lhs_prefix = prefix_of(lc);
  // The rhs dimensions paired with the lhs prefix dimensions.
  std::vector<int64_t> rhs_prefix;
  for (int64_t d : lhs_prefix) {
    auto b = std::find(lb.begin(), lb.end(), d);
    rhs_prefix.push_back(b != lb.end() ? rb[b - lb.begin()] : rc[std::find(lc.begin(), lc.end(), d) - lc.begin()]);
  }
  ANVIL_ASSIGN_OR_RETURN(Literal dense_lhs, Densify(lhs, r, group_sizes, 0, lhs_prefix));
  ANVIL_ASSIGN_OR_RETURN(Literal dense_rhs, Densify(rhs, rhs_ragged, group_sizes, 0, rhs_prefix));
  std::vector<int64_t> nlb = {0}, nrb = {0};
  for (int64_t d : Shifted(lb, 0)) nlb.push_back(d);
  for (int64_t d : Shifted(rb, 0)) nrb.push_back(d);
  set_dims(nlb, nrb, Shifted(lc, 0), Shifted(rc, 0));
  return EvalDot(dot, dense_lhs, dense_rhs);
}

}  // namespace anvil::hlo::eval
