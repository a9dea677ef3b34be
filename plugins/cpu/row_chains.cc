#include "plugins/cpu/row_chains.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "hlo/attributes.h"
#include "plugins/cpu/row_sums.h"

namespace anvil::cpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Elements of the widest step a block of rows holds: a block's values (a
// few of them, each this size at most) stay in L2 between steps.
constexpr int64_t kBlockElements = int64_t{1} << 14;
// Fewer blocks than this: too little to share between threads, and arrays
// small enough to stay in the caches between steps anyway.
constexpr int64_t kMinBlocks = 4;

bool LeadsWith(const hlo::Shape& s, const std::vector<int64_t>& lead) {
  return s.IsArray() && s.HasDefaultLayout() && s.rank() >= static_cast<int64_t>(lead.size()) &&
         std::equal(lead.begin(), lead.end(), s.dims().begin());
}

class ChainBuilder {
 public:
  ChainBuilder(const hlo::Computation& computation, const FusionPlan& fusion,
               const std::function<bool(const Instruction*)>& computed_by_reduce)
      : computation_(computation), fusion_(fusion), computed_by_reduce_(computed_by_reduce) {}

  std::vector<RowChain> Plan() {
    const auto& instructions = computation_.instructions;
    for (size_t s = 0; s < instructions.size(); ++s) {
      const Instruction& i = *instructions[s];
      if (fusion_.FusedAway(s, &i)) continue;  // computed by its group's step
      if (i.opcode == Opcode::kParameter || i.opcode == Opcode::kConstant) continue;
      if (computed_by_reduce_(&i)) {
        Close();
        continue;
      }
      if (SharesOperandMemory(i)) {
        // An alias of what the chain writes is the chain's too, if its rows
        // are where they were; an alias of anything else is read whole.
        if (const auto it = written_.find(i.operands[0]); it != written_.end()) {
          if (LeadsWith(i.shape, lead_)) {
            written_[&i] = it->second;
          } else {
            Close();
          }
        }
        continue;
      }
      if (!chain_.steps.empty() && Join(s, i)) continue;
      Close();
      Start(s, i);
    }
    Close();
    return std::move(chains_);
  }

 private:
  // A reduce of rows starts a chain: its kept dimensions are the chain's.
  void Start(size_t s, const Instruction& i) {
    if (!RowReduceInBlocks(i) || i.shape.rank() == 0) return;
    lead_ = i.shape.dims();
    chain_.rows = i.shape.ElementCount();
    if (!Join(s, i)) Reset();
  }

  // Adds step `s` to the open chain if all it reads of the chain is rows of
  // the chain's own.
  bool Join(size_t s, const Instruction& i) {
    const int position = static_cast<int>(chain_.steps.size());
    std::vector<int> reads;  // chain positions whose results this step reads
    std::vector<const Instruction*> results;
    int64_t row_elements = 0;
    const int reduce_group = fusion_.reduce_group[s];
    const int loop_group = fusion_.group_of[s];
    if (reduce_group >= 0 || RowReduceInBlocks(i)) {
      if (!RowReduceInBlocks(i) || i.shape.dims() != lead_) return false;
      if (written_.count(i.operands[1])) return false;  // an initial value the chain writes
      const Instruction* operand = i.operands[0];
      if (reduce_group >= 0) {
        const FusionGroup& group = fusion_.groups[reduce_group];
        if (!MembersReadRows(group.members, operand->shape, reads)) return false;
        if (group.root_stored) results.push_back(group.members.back());
      } else if (!ReadRows(operand, reads)) {
        return false;
      }
      results.push_back(&i);
      row_elements = operand->shape.ElementCount() / chain_.rows;
    } else if (loop_group >= 0 || IsLoopOp(i)) {
      if (loop_group >= 0 && (fusion_.groups[loop_group].reduce || !fusion_.IsRoot(s, &i))) return false;
      if (!LeadsWith(i.shape, lead_)) return false;
      const std::vector<const Instruction*> alone = {&i};
      const auto& members = loop_group >= 0 ? fusion_.groups[loop_group].members : alone;
      if (!MembersReadRows(members, i.shape, reads)) return false;
      results.push_back(&i);
      row_elements = i.shape.ElementCount() / chain_.rows;
    } else {
      return false;
    }
    for (int w : reads) read_later_[static_cast<size_t>(w)] = true;
    for (const Instruction* r : results) written_[r] = position;
    chain_.steps.push_back(s);
    chain_.row_elements.push_back(row_elements);
    read_later_.push_back(false);
    has_reduce_ = has_reduce_ || i.opcode == Opcode::kReduce;
    return true;
  }

  // Whether a reduce's operand `o`, read row by row, is the chain's rows.
  bool ReadRows(const Instruction* o, std::vector<int>& reads) {
    const auto it = written_.find(o);
    if (it == written_.end()) return true;
    if (!LeadsWith(o->shape, lead_)) return false;
    reads.push_back(it->second);
    return true;
  }

  // Whether every read by a loop's `members` (all of `dims`, the loop's)
  // of a value the chain writes is of the same rows.
  bool MembersReadRows(const std::vector<const Instruction*>& members, const hlo::Shape& loop,
                       std::vector<int>& reads) {
    for (const Instruction* m : members) {
      if (m->shape.dims() != loop.dims()) return false;
      for (const Instruction* o : m->operands) {
        const auto it = written_.find(o);
        if (it == written_.end()) continue;
        if (!LeadsWith(o->shape, lead_)) return false;
        // A fused transpose, slice or reverse reads its operand out of
        // order: other rows.
        if (IsStridedReadOp(*m)) return false;
        if (m->opcode == Opcode::kBroadcast) {
          // Operand dimension j (j < the chain's) must stay dimension j.
          auto dims = hlo::IntListAttribute(*m, "dimensions");
          if (!dims.ok() || dims->size() < lead_.size()) return false;
          for (size_t j = 0; j < lead_.size(); ++j) {
            if ((*dims)[j] != static_cast<int64_t>(j)) return false;
          }
        } else if (o->shape.dims() != m->shape.dims()) {
          return false;  // elementwise reads are of the same element
        }
        reads.push_back(it->second);
      }
    }
    return true;
  }

  void Close() {
    if (chain_.steps.empty()) return;  // nothing open (Start resets what fails)
    if (chain_.steps.size() >= 2 && Finish()) chains_.push_back(std::move(chain_));
    Reset();
  }

  void Reset() {
    chain_ = RowChain{};
    lead_.clear();
    written_.clear();
    read_later_.clear();
    has_reduce_ = false;
  }

  // Sizes the blocks; false when the chain is not worth running as one.
  bool Finish() {
    const int64_t widest = *std::max_element(chain_.row_elements.begin(), chain_.row_elements.end());
    if (widest < 1 || widest > kMaxBlockedRow || chain_.rows < 1) return false;
    int64_t block = std::max<int64_t>(1, kBlockElements / widest);
    // Whole groups of the row-sum loop's rows.
    if (has_reduce_) block = std::max(kSumRows, block / kSumRows * kSumRows);
    chain_.block_rows = block;
    if ((chain_.rows + block - 1) / block < kMinBlocks) return false;
    chain_.result_streams.assign(read_later_.size(), false);
    for (size_t k = 0; k < read_later_.size(); ++k) chain_.result_streams[k] = !read_later_[k];
    return true;
  }

  const hlo::Computation& computation_;
  const FusionPlan& fusion_;
  const std::function<bool(const Instruction*)>& computed_by_reduce_;
  std::vector<RowChain> chains_;
  RowChain chain_;
  std::vector<int64_t> lead_;  // the chain's leading dimensions
  std::unordered_map<const Instruction*, int> written_;  // what the chain writes -> the step's position
  std::vector<bool> read_later_;  // per step: a later step reads its results
  bool has_reduce_ = false;
};

}  // namespace

std::vector<RowChain> PlanRowChains(const hlo::Computation& computation, const FusionPlan& fusion,
                                    const std::function<bool(const hlo::Instruction*)>& computed_by_reduce) {
  return ChainBuilder(computation, fusion, computed_by_reduce).Plan();
}

Kernel RowChainKernel(std::vector<RowRunner> runners, const RowChain& chain) {
  const int64_t rows = chain.rows, block = chain.block_rows;
  const int64_t blocks = (rows + block - 1) / block;
  const int64_t scratch = block * *std::max_element(chain.row_elements.begin(), chain.row_elements.end());
  return [runners = std::move(runners), rows, block, blocks, scratch](const Frame& frame) {
    frame.parallel->For(blocks, 1, [&](int64_t lo, int64_t hi) {
      const std::unique_ptr<float[]> buffer(new float[static_cast<size_t>(scratch)]);
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t r0 = b * block, r1 = std::min(rows, r0 + block);
        for (const RowRunner& run : runners) run(frame, r0, r1, buffer.get());
      }
    });
  };
}

}  // namespace anvil::cpu
