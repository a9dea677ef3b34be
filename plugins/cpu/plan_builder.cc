// Compiles a canonical module's entry into a Plan: values, buffer
// assignment with reuse, and one kernel per instruction.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <functional>
#include <stdexcept>
#include <exception>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "hlo/attributes.h"
#include "hlo/cost.h"
#include "hlo/evaluator.h"
#include "plugins/cpu/fusion_planner.h"
#include "plugins/cpu/instruction_index.h"
#include "plugins/cpu/kernels_fused.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/row_chains.h"

namespace anvil::cpu {
namespace {

// ANVIL_CPU_REFERENCE_REPORT=FILE appends a line for every reference step
// planned: opcode, result shape, instruction and module. It is how the
// reference steps left in a corpus are counted
// (scripts/cpu_reference_steps.py); plans are the same either way.
// The module being planned on this thread (nested plans are built inside
// their entry's BuildPlan), for the report.
thread_local const std::string* planned_module = nullptr;

void ReportReferenceStep(const hlo::Instruction& i) {
  static const char* const path = std::getenv("ANVIL_CPU_REFERENCE_REPORT");
  if (!path || !*path) return;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\t%s\t%%%s\t%s\n", std::string(i.OpcodeSpelling()).c_str(), i.shape.ToString(false).c_str(),
                 i.name.c_str(), planned_module ? planned_module->c_str() : "");
    std::fclose(f);
  }
}

using hlo::Instruction;
using hlo::Opcode;

int64_t AlignUp(int64_t v) { return (v + 63) / 64 * 64; }

// The distinct operands of `i` and their slots, as a loop of `i` alone
// reads them.
void DistinctOperands(const Instruction& i, const std::vector<Slot>& in, std::vector<const Instruction*>& inputs,
                      std::vector<Slot>& input_slots) {
  for (size_t k = 0; k < i.operands.size(); ++k) {
    if (std::find(inputs.begin(), inputs.end(), i.operands[k]) != inputs.end()) continue;
    inputs.push_back(i.operands[k]);
    input_slots.push_back(in[k]);
  }
}

// The fused loop kernel of `i` alone, reading its distinct operands.
Kernel LoopOfOne(const Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  std::vector<const Instruction*> inputs;
  std::vector<Slot> input_slots;
  DistinctOperands(i, in, inputs, input_slots);
  return FusedElementwiseKernel({&i}, inputs, input_slots, out);
}

// Whether a bitcast-convert from or to `t` is the same bytes.
bool BitcastsInPlace(hlo::ElementType t) {
  const auto& info = hlo::Info(t);
  return t != hlo::ElementType::kPred && info.bit_width % 8 == 0 && info.byte_size * 8 == info.bit_width;
}

// A scratch buffer during planning: its size and the steps it lives across.
struct Buffer {
  int64_t bytes = 0;
  int first = 0, last = 0;
  int output = -1;  // computed straight into output `output`
  int64_t offset = 0;
};

// Whether a computation's work is small enough to run inline: at most
// kInlineWork element-terms in all (elements times the terms each sums,
// hlo/cost.h), and no loop, call or conditional, whose work a static count
// cannot bound. About 10 microseconds at most.
constexpr double kInlineWork = 1 << 15;
bool RunsInline(const hlo::Computation& entry) {
  double work = 0;
  for (const auto& i : entry.instructions) {
    switch (i->opcode) {
      case Opcode::kWhile: case Opcode::kCall: case Opcode::kConditional: case Opcode::kCustomCall:
        return false;
      case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple: case Opcode::kGetTupleElement:
      case Opcode::kReshape: case Opcode::kBitcast:
        continue;
      default: {
        double elements = 0;
        std::function<void(const hlo::Shape&)> count = [&](const hlo::Shape& s) {
          if (s.IsTuple()) {
            for (const auto& e : s.tuple_elements()) count(e);
          } else {
            elements += static_cast<double>(s.ElementCount());
          }
        };
        count(i->shape);
        work += elements * std::max(1.0, hlo::TermsPerElement(*i));
        if (work > kInlineWork) return false;
      }
    }
  }
  return true;
}

// What pass 3 builds for one instruction: its step, or why it has none.
struct BuiltStep {
  std::optional<Step> step;
  bool typed = false;  // a typed kernel, not the evaluator
  int nested_reference_steps = 0;
  int64_t temp_bytes = 0;
  RowRunner row_runner;  // a row chain's step: its work on a block of rows
  hlo::Status status;
  std::exception_ptr exception;
};

// The fewest instructions a host thread takes at a time when steps are
// built at once (below it, one thread builds them all). Parallel::For splits
// the instructions into at most four chunks per thread, which the threads
// take in turn, so one ending early takes the next: kernels take from a few
// microseconds (a loop of one) to a hundred (a convolution oneDNN
// describes), and a chunk heavy with convolutions can still leave the other
// thread idle at the end.
constexpr int64_t kStepsPerTask = 16;

class Builder {
 public:
  // `nested`: a computation a while loop runs, whose one parameter may be a
  // tuple (its leaves become parameters 0, 1, ... in order). `parallel`
  // (may be null) builds the steps' kernels on the host threads at once.
  Builder(const hlo::Computation& entry, bool nested, ConvLayoutBook* layouts, const Parallel* parallel = nullptr,
          PlanPhases* phases = nullptr)
      : entry_(entry), nested_(nested), layouts_(layouts), parallel_(parallel), phases_(phases) {}
  hlo::StatusOr<std::unique_ptr<Plan>> Build();

 private:
  // A new array value in a fresh scratch buffer defined at step `step`.
  int NewArray(const hlo::Shape& shape, int step);
  // A value for `shape` made of fresh arrays (tuples recurse).
  int NewValue(const hlo::Shape& shape, int step);
  void Use(int value, int step);
  void Leaves(int value, std::vector<int>& out) const;
  Slot SlotOf(int value) const;
  Kernel Fallback(const Instruction& i, std::vector<int> operands, int result);

  const hlo::Computation& entry_;
  const bool nested_;
  ConvLayoutBook* const layouts_;  // may be null
  const Parallel* const parallel_;  // may be null
  PlanPhases* const phases_;        // may be null
  // The phase of the build now running (PlanPhases), ended by the next.
  void Phase(const char* name) {
    if (!phases_) return;
    if (in_phase_) phases_->End();
    phases_->Begin(name);
    in_phase_ = true;
  }
  bool in_phase_ = false;
  // Ends the last phase however Build returns.
  struct PhasesEnd {
    Builder* builder;
    ~PhasesEnd() {
      if (builder->phases_ && builder->in_phase_) builder->phases_->End();
      builder->in_phase_ = false;
    }
  };
  int64_t next_parameter_ = 0;  // leaves of a nested computation's tuple parameter
  // A value for a parameter of `shape`, its array leaves parameter slots.
  int ParameterValue(const hlo::Shape& shape);
  void MarkOutputsThatMayAliasTheirParameters(const FusionPlan& fusion, const std::vector<bool>& computes,
                                              const std::vector<std::vector<int>>& operand_values,
                                              const std::vector<int>& result_value);
  std::unique_ptr<Plan> plan_ = std::make_unique<Plan>();
  std::vector<int> buffer_of_;  // value -> scratch buffer, or -1
  std::vector<Buffer> buffers_;
  InstructionIndex value_of_{entry_.instructions.size()};
  // The value of an instruction planned already.
  int ValueOf(const Instruction* i) const {
    const int v = value_of_.Find(i);
    if (v < 0) throw std::out_of_range("%" + i->name + " is read before it is planned");
    return v;
  }
  std::unordered_set<const Instruction*> computed_by_reduce_;  // iotas a reduce computes (Build)
};

int Builder::NewArray(const hlo::Shape& shape, int step) {
  Value v;
  v.shape = &shape;
  plan_->values.push_back(v);
  buffers_.push_back(Buffer{AlignUp(std::max<int64_t>(shape.ByteSize(), 1)), step, step});
  buffer_of_.push_back(static_cast<int>(buffers_.size()) - 1);
  return static_cast<int>(plan_->values.size()) - 1;
}

int Builder::NewValue(const hlo::Shape& shape, int step) {
  if (!shape.IsTuple()) return NewArray(shape, step);
  std::vector<int> elements;
  for (const hlo::Shape& e : shape.tuple_elements()) elements.push_back(NewValue(e, step));
  Value v;
  v.shape = &shape;
  v.elements = std::move(elements);
  plan_->values.push_back(v);
  buffer_of_.push_back(-1);
  return static_cast<int>(plan_->values.size()) - 1;
}

int Builder::ParameterValue(const hlo::Shape& shape) {
  Value value;
  value.shape = &shape;
  if (shape.IsTuple()) {
    for (const hlo::Shape& e : shape.tuple_elements()) value.elements.push_back(ParameterValue(e));
  } else {
    value.slot.kind = Slot::Kind::kParameter;
    value.slot.index = next_parameter_++;
    plan_->parameter_shapes.push_back(shape);
  }
  plan_->values.push_back(value);
  buffer_of_.push_back(-1);
  return static_cast<int>(plan_->values.size()) - 1;
}

void Builder::Use(int value, int step) {
  const Value& v = plan_->values[value];
  if (v.shape->IsTuple()) {
    for (int e : v.elements) Use(e, step);
    return;
  }
  if (buffer_of_[value] >= 0) {
    Buffer& b = buffers_[buffer_of_[value]];
    b.last = std::max(b.last, step);
  }
}

void Builder::Leaves(int value, std::vector<int>& out) const {
  const Value& v = plan_->values[value];
  if (!v.shape->IsTuple()) {
    out.push_back(value);
    return;
  }
  for (int e : v.elements) Leaves(e, out);
}

Slot Builder::SlotOf(int value) const {
  int b = buffer_of_[value];
  if (b < 0) return plan_->values[value].slot;
  Slot s;
  if (buffers_[b].output >= 0) {
    s.kind = Slot::Kind::kOutput;
    s.index = buffers_[b].output;
  } else {
    s.kind = Slot::Kind::kScratch;
    s.offset = buffers_[b].offset;
  }
  return s;
}

// The reference evaluator runs an instruction without a typed kernel yet:
// operands are copied into literals and the result copied back.
Kernel Builder::Fallback(const Instruction& i, std::vector<int> operands, int result) {
  struct Part {
    hlo::Shape shape;
    Slot slot;
  };
  auto describe = [&](int value) {
    std::vector<int> leaves;
    Leaves(value, leaves);
    std::vector<Part> parts;
    for (int leaf : leaves) parts.push_back({*plan_->values[leaf].shape, SlotOf(leaf)});
    return parts;
  };
  std::vector<std::pair<hlo::Shape, std::vector<Part>>> inputs;
  for (int o : operands) inputs.emplace_back(*plan_->values[o].shape, describe(o));
  std::vector<Part> outputs = describe(result);
  const Instruction* instruction = &i;
  return [=](const Frame& frame) {
    std::vector<hlo::Literal> literals;
    literals.reserve(inputs.size());
    for (const auto& [shape, parts] : inputs) {
      hlo::Literal l(shape);
      std::vector<hlo::Literal*> leaves;
      std::function<void(hlo::Literal&)> collect = [&](hlo::Literal& x) {
        if (x.shape().IsTuple()) {
          for (auto& e : x.mutable_tuple_elements()) collect(e);
        } else {
          leaves.push_back(&x);
        }
      };
      collect(l);
      for (size_t k = 0; k < leaves.size(); ++k) {
        auto& data = leaves[k]->mutable_data();
        if (!data.empty()) std::memcpy(data.data(), frame.At(parts[k].slot), data.size());
      }
      literals.push_back(std::move(l));
    }
    std::vector<const hlo::Literal*> args;
    for (const auto& l : literals) args.push_back(&l);
    auto r = hlo::EvaluateInstruction(*instruction, args);
    if (!r.ok()) throw std::runtime_error(r.status().message());
    std::vector<const hlo::Literal*> leaves;
    std::function<void(const hlo::Literal&)> collect = [&](const hlo::Literal& x) {
      if (x.shape().IsTuple()) {
        for (const auto& e : x.tuple_elements()) collect(e);
      } else {
        leaves.push_back(&x);
      }
    };
    collect(*r);
    for (size_t k = 0; k < leaves.size() && k < outputs.size(); ++k) {
      const auto& data = leaves[k]->data();
      if (!data.empty()) std::memcpy(frame.At(outputs[k].slot), data.data(), data.size());
    }
  };
}

// A loop's body plan may run with output k in the memory of parameter k,
// its state leaf, so that the loop copies nothing back (Plan::
// output_may_alias_parameter): when output k is parameter k itself (a leaf
// the body passes through: nothing writes it), or when it is written in
// place by a dynamic-update-slice whose operand is parameter k and nothing
// else reads parameter k (a scan's stacked outputs: the update alone is
// written, where the operand was copied whole, twice, every iteration).
void Builder::MarkOutputsThatMayAliasTheirParameters(const FusionPlan& fusion, const std::vector<bool>& computes,
                                                     const std::vector<std::vector<int>>& operand_values,
                                                     const std::vector<int>& result_value) {
  const auto& instructions = entry_.instructions;
  const size_t parameters = plan_->parameter_shapes.size();
  // Reads of each parameter's memory by the steps and by the outputs, and
  // the one dynamic-update-slice (by its result value) reading it as its
  // operand, when that is its only reader.
  std::vector<int> reads(parameters, 0), updated_by(parameters, -1);
  auto parameter_of = [&](int value) -> int {
    const Slot slot = SlotOf(value);
    return slot.kind == Slot::Kind::kParameter ? static_cast<int>(slot.index) : -1;
  };
  auto count = [&](int value, int updating) {
    std::vector<int> leaves;
    Leaves(value, leaves);
    for (int leaf : leaves) {
      const int p = parameter_of(leaf);
      if (p < 0) continue;
      ++reads[static_cast<size_t>(p)];
      updated_by[static_cast<size_t>(p)] = updating;
    }
  };
  for (size_t s = 0; s < instructions.size(); ++s) {
    const Instruction& i = *instructions[s];
    if (!computes[s]) continue;
    if (fusion.group_of[s] >= 0 || fusion.reduce_group[s] >= 0) {
      const int g = fusion.group_of[s] >= 0 ? fusion.group_of[s] : fusion.reduce_group[s];
      for (const Instruction* o : fusion.groups[g].inputs) count(ValueOf(o), -1);
      if (fusion.reduce_group[s] >= 0) count(ValueOf(i.operands[1]), -1);
      continue;
    }
    for (size_t j = 0; j < operand_values[s].size(); ++j) {
      const bool update_operand = i.opcode == Opcode::kDynamicUpdateSlice && j == 0;
      count(operand_values[s][j], update_operand ? result_value[s] : -1);
    }
  }
  for (int o : plan_->outputs) count(o, -1);
  plan_->output_may_alias_parameter.assign(plan_->outputs.size(), false);
  for (size_t k = 0; k < plan_->outputs.size() && k < parameters; ++k) {
    const int v = plan_->outputs[k];
    if (!plan_->values[v].shape->IsArray() || *plan_->values[v].shape != plan_->parameter_shapes[k]) continue;
    const bool passed_through = parameter_of(v) == static_cast<int>(k);
    const bool updated_in_place = plan_->output_in_place[k] && reads[k] == 1 && updated_by[k] == v;
    plan_->output_may_alias_parameter[k] = passed_through || updated_in_place;
  }
}

hlo::StatusOr<std::unique_ptr<Plan>> Builder::Build() {
  const auto& instructions = entry_.instructions;
  const PhasesEnd phases_end{this};
  Phase("cpu: plan fusion");
  // Fusion first: a fused instruction gets no value of its own; its group's
  // root computes it in its loop, so what it reads must live until then.
  std::vector<const Instruction*> stored;
  std::function<void(const Instruction*)> leaves = [&](const Instruction* i) {
    if (i->opcode == Opcode::kTuple) {
      for (const Instruction* o : i->operands) leaves(o);
    } else {
      stored.push_back(i);
    }
  };
  leaves(entry_.root);
  const FusionPlan fusion = PlanElementwiseFusion(entry_, stored);
  // Iotas that a variadic reduce reading them alone computes as it goes
  // (argmax's and argmin's indices): never stored, never read.
  std::unordered_map<const Instruction*, std::vector<bool>> computed_iotas;  // reduce -> per operand
  {
    InstructionIndex reads(instructions.size());
    for (const auto& i : instructions) {
      for (const Instruction* o : i->operands) ++reads[o];
    }
    for (const Instruction* o : stored) ++reads[o];
    for (size_t s = 0; s < instructions.size(); ++s) {
      const Instruction& i = *instructions[s];
      if (i.opcode != Opcode::kReduce || i.shape.IsArray() || fusion.FusedAway(s, &i)) continue;
      for (size_t v = 0; v < i.operands.size() / 2; ++v) {
        const Instruction* o = i.operands[v];
        if (o->opcode != Opcode::kIota || reads[o] != 1 || !LaneReduceComputesIota(i, v)) continue;
        std::vector<bool>& fused = computed_iotas[&i];
        fused.resize(i.operands.size() / 2, false);
        fused[v] = true;
        computed_by_reduce_.insert(o);
      }
    }
  }
  // Row chains (row_chains.h): their steps run interleaved, block by block.
  const std::vector<RowChain> chains =
      PlanRowChains(entry_, fusion, [&](const Instruction* i) { return computed_by_reduce_.count(i) > 0; });
  std::vector<int> chain_of(instructions.size(), -1);
  for (size_t c = 0; c < chains.size(); ++c) {
    for (size_t s : chains[c].steps) chain_of[s] = static_cast<int>(c);
  }
  Phase("cpu: plan buffers");
  // Pass 1: values, aliases and buffer lifetimes, step by step.
  std::vector<std::vector<int>> operand_values(instructions.size());
  std::vector<int> result_value(instructions.size(), -1);
  std::vector<bool> computes(instructions.size(), false);
  for (size_t s = 0; s < instructions.size(); ++s) {
    const Instruction& i = *instructions[s];
    const int step = static_cast<int>(s);
    // What a chain's step reads or writes lives from the chain's first step
    // to its last: its steps' blocks interleave, so none of it may share
    // memory with another.
    const int chain = chain_of[s];
    const int defined_at = chain >= 0 ? static_cast<int>(chains[chain].steps.front()) : step;
    const int used_at = chain >= 0 ? static_cast<int>(chains[chain].steps.back()) : step;
    if (fusion.FusedAway(s, &i)) continue;  // computed in its group's loop
    if (computed_by_reduce_.count(&i)) {
      // A value with no memory: its reader computes it (never reads the slot).
      Value value;
      value.shape = &i.shape;
      plan_->values.push_back(value);
      buffer_of_.push_back(-1);
      value_of_[&i] = static_cast<int>(plan_->values.size()) - 1;
      continue;
    }
    if (fusion.group_of[s] >= 0 || fusion.reduce_group[s] >= 0) {
      // A group's root reads, at its step, everything its members read; so
      // does a reduce computing a group's root, and its initial value.
      const int g = fusion.group_of[s] >= 0 ? fusion.group_of[s] : fusion.reduce_group[s];
      for (const Instruction* o : fusion.groups[g].inputs) Use(ValueOf(o), used_at);
      if (fusion.reduce_group[s] >= 0) Use(ValueOf(i.operands[1]), used_at);
      const int v = NewValue(i.shape, defined_at);
      computes[s] = true;
      value_of_[&i] = v;
      result_value[s] = v;
      // A root others read after the reduce is stored by the reduce's step.
      if (fusion.reduce_group[s] >= 0 && fusion.groups[g].root_stored) {
        value_of_[fusion.groups[g].members.back()] = NewValue(fusion.groups[g].members.back()->shape, defined_at);
      }
      continue;
    }
    for (const Instruction* o : i.operands) {
      int v = ValueOf(o);
      operand_values[s].push_back(v);
      Use(v, used_at);
    }
    int v = -1;
    switch (i.opcode) {
      case Opcode::kParameter: {
        if (nested_) {
          v = ParameterValue(i.shape);
          break;
        }
        Value value;
        value.shape = &i.shape;
        value.slot.kind = Slot::Kind::kParameter;
        value.slot.index = i.parameter_number;
        plan_->values.push_back(value);
        buffer_of_.push_back(-1);
        v = static_cast<int>(plan_->values.size()) - 1;
        if (!i.shape.IsArray()) return hlo::Unimplemented("tuple parameters reach the CPU plugin flattened");
        break;
      }
      case Opcode::kConstant: {
        if (!i.literal || i.literal->elided()) {
          return hlo::InvalidArgument("constant %" + i.name + " is elided ({...}); give it values to run it");
        }
        if (!i.shape.IsArray()) return hlo::Unimplemented("tuple-shaped constants");
        Value value;
        value.shape = &i.shape;
        value.slot.kind = Slot::Kind::kConstant;
        value.slot.index = static_cast<int64_t>(plan_->constants.size());
        plan_->constants.push_back(&*i.literal);
        plan_->values.push_back(value);
        buffer_of_.push_back(-1);
        v = static_cast<int>(plan_->values.size()) - 1;
        break;
      }
      case Opcode::kTuple: {
        Value value;
        value.shape = &i.shape;
        value.elements = operand_values[s];
        plan_->values.push_back(value);
        buffer_of_.push_back(-1);
        v = static_cast<int>(plan_->values.size()) - 1;
        break;
      }
      case Opcode::kGetTupleElement: {
        auto index = hlo::IntAttribute(i, "index", std::nullopt);
        if (!index.ok()) return index.status();
        v = plan_->values[operand_values[s][0]].elements.at(static_cast<size_t>(*index));
        break;
      }
      case Opcode::kCustomCall:
        // A sharding annotation passes its one operand through (on one device
        // there is nothing to shard); other custom calls are computed.
        if (hlo::StringAttribute(i, "custom_call_target") != "Sharding" || operand_values[s].size() != 1 ||
            !i.shape.Compatible(*plan_->values[operand_values[s][0]].shape)) {
          v = NewValue(i.shape, defined_at);
          computes[s] = true;
          break;
        }
        v = operand_values[s][0];
        break;
      case Opcode::kReshape:
      case Opcode::kBitcast:
      case Opcode::kBroadcast:
      case Opcode::kBitcastConvert:
      case Opcode::kOptimizationBarrier: {
        // Same bytes, another shape: no copy (SharesOperandMemory, which
        // row chains read too; a broadcast only when it adds dimensions of
        // size 1). A bitcast-convert only when both element types are whole
        // bytes wide, not pred: sub-byte values sit extended in a byte
        // each, and pred is 0 or 1.
        const int from = operand_values[s][0];
        if (i.opcode == Opcode::kOptimizationBarrier) {
          v = from;
          break;
        }
        const bool converts_in_place =
            i.opcode == Opcode::kBitcastConvert && BitcastsInPlace(i.shape.element_type()) &&
            BitcastsInPlace(plan_->values[from].shape->element_type()) && i.shape.IsArray() &&
            plan_->values[from].shape->IsArray() && i.shape.ByteSize() == plan_->values[from].shape->ByteSize();
        if (SharesOperandMemory(i) || converts_in_place) {
          Value value = plan_->values[from];
          value.shape = &i.shape;
          plan_->values.push_back(value);
          buffer_of_.push_back(buffer_of_[from]);
          v = static_cast<int>(plan_->values.size()) - 1;
          break;
        }
        [[fallthrough]];
      }
      default:
        v = NewValue(i.shape, defined_at);
        computes[s] = true;
        break;
    }
    value_of_[&i] = v;
    result_value[s] = v;
  }
  // The outputs: the root's leaves. A leaf computed by a kernel (and listed
  // once) is written straight into its output memory.
  std::vector<int> outputs;
  Leaves(ValueOf(entry_.root), outputs);
  const int end = static_cast<int>(instructions.size());
  std::map<int, int> output_buffer_uses;
  for (int o : outputs) {
    Use(o, end);
    if (buffer_of_[o] >= 0) ++output_buffer_uses[buffer_of_[o]];
  }
  plan_->outputs = outputs;
  plan_->output_in_place.assign(outputs.size(), false);
  for (size_t k = 0; k < outputs.size(); ++k) {
    int b = buffer_of_[outputs[k]];
    plan_->output_shapes.push_back(*plan_->values[outputs[k]].shape);
    if (b >= 0 && output_buffer_uses[b] == 1 && buffers_[b].output < 0) {
      buffers_[b].output = static_cast<int>(k);
      plan_->output_in_place[k] = true;
    }
  }
  // Pass 2: offsets, first fit, reusing buffers whose last use has passed.
  std::vector<std::pair<int64_t, int64_t>> free_blocks;  // offset, size
  std::vector<int> order(buffers_.size());
  for (size_t b = 0; b < buffers_.size(); ++b) order[b] = static_cast<int>(b);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return buffers_[a].first < buffers_[b].first; });
  std::multimap<int, int> live;  // last step -> buffer
  int64_t top = 0;
  for (int b : order) {
    Buffer& buffer = buffers_[b];
    if (buffer.output >= 0) continue;
    // Release what died before this buffer is written.
    for (auto it = live.begin(); it != live.end() && it->first < buffer.first;) {
      free_blocks.emplace_back(buffers_[it->second].offset, buffers_[it->second].bytes);
      it = live.erase(it);
    }
    bool placed = false;
    for (auto block = free_blocks.begin(); block != free_blocks.end(); ++block) {
      auto& [offset, size] = *block;
      if (size >= buffer.bytes) {
        buffer.offset = offset;
        offset += buffer.bytes;
        size -= buffer.bytes;
        // A used-up block fits nothing again (every buffer has bytes):
        // dropped, so that the list stays as long as what is free.
        if (size == 0) free_blocks.erase(block);
        placed = true;
        break;
      }
    }
    if (!placed) {
      buffer.offset = top;
      top += buffer.bytes;
    }
    live.emplace(buffer.last, b);
  }
  // Kernels' temporaries share the region after the buffers.
  Slot temp_region;
  temp_region.kind = Slot::Kind::kScratch;
  temp_region.offset = top;
  if (!nested_) {
    for (const auto* p : entry_.parameters) plan_->parameter_shapes.push_back(p->shape);
  }
  // Pass 3: kernels, bound to their final slots. Each step's kernel is
  // built on its own (what it reads of the builder is settled), so steps
  // are built on the host threads at once, then put in order.
  auto build_step = [&](size_t s, BuiltStep& built) -> hlo::Status {
    const Instruction& i = *instructions[s];
    if (fusion.group_of[s] >= 0 || fusion.reduce_group[s] >= 0) {
      const bool reduce = fusion.reduce_group[s] >= 0;
      const FusionGroup& group = fusion.groups[reduce ? fusion.reduce_group[s] : fusion.group_of[s]];
      std::vector<Slot> in;
      in.reserve(group.inputs.size());
      for (const Instruction* o : group.inputs) in.push_back(SlotOf(ValueOf(o)));
      std::optional<Slot> root;
      if (reduce && group.root_stored) root = SlotOf(ValueOf(group.members.back()));
      const Slot result = SlotOf(result_value[s]);
      Kernel kernel;
      if (!reduce) {
        kernel = FusedElementwiseKernel(group.members, group.inputs, in, result);
      } else if (RowReduceInBlocks(i) || RowReduceInChunks(i)) {
        kernel = FusedRowReduceKernel(i, group.members, group.inputs, in, SlotOf(ValueOf(i.operands[1])), result, root);
      } else {
        kernel =
            FusedColumnReduceKernel(i, group.members, group.inputs, in, SlotOf(ValueOf(i.operands[1])), result, root);
      }
      if (!kernel) return hlo::Internal("cannot build the fused loop rooted at %" + i.name);
      built.typed = true;
      // The profile names the instructions a fused step holds:
      // "fusion(N ops) %root [member ...]", written in one string.
      const size_t ops = group.members.size() + (reduce ? 1 : 0);
      std::string what = reduce ? "reduce+fusion(" : "fusion(";
      size_t length = what.size() + 32 + 2 * i.name.size();
      for (const Instruction* m : group.members) length += m->name.size() + 1;
      what.reserve(length);
      what += std::to_string(ops);
      what += " ops) %";
      what += i.name;
      what += " [";
      for (const Instruction* m : group.members) {
        what += m->name;
        what += ' ';
      }
      if (reduce) what += i.name;
      if (what.back() == ' ') what.pop_back();
      what += ']';
      built.step.emplace(std::move(what), std::move(kernel));
      return hlo::OkStatus();
    }
    std::vector<Slot> in;
    in.reserve(operand_values[s].size());
    bool arrays = i.shape.IsArray();
    for (int o : operand_values[s]) {
      arrays &= plan_->values[o].shape->IsArray();
      in.push_back(plan_->values[o].shape->IsArray() ? SlotOf(o) : Slot{});
    }
    Kernel kernel;
    const bool batch_norm = i.opcode == Opcode::kBatchNormTraining || i.opcode == Opcode::kBatchNormInference ||
                            i.opcode == Opcode::kBatchNormGrad;
    if (i.opcode == Opcode::kWhile) {
      std::vector<int> in_leaves, out_leaves;
      Leaves(operand_values[s].at(0), in_leaves);
      Leaves(result_value[s], out_leaves);
      std::vector<Slot> state_in, state_out;
      for (int leaf : in_leaves) state_in.push_back(SlotOf(leaf));
      for (int leaf : out_leaves) state_out.push_back(SlotOf(leaf));
      Temp temp{temp_region, 0};
      // A loop whose condition or body cannot be planned runs in the evaluator.
      int nested_reference_steps = 0;
      auto loop = WhileKernel(i, state_in, state_out, &temp, &nested_reference_steps, layouts_);
      if (loop.ok()) {
        kernel = std::move(loop).value();
        built.temp_bytes = std::max(built.temp_bytes, AlignUp(temp.bytes));
        built.nested_reference_steps += nested_reference_steps;
      }
    }
    if (i.opcode == Opcode::kConditional && !operand_values[s].empty()) {
      std::vector<std::vector<Slot>> branch_operands;
      for (size_t k = 1; k < operand_values[s].size(); ++k) {
        std::vector<int> leaves;
        Leaves(operand_values[s][k], leaves);
        std::vector<Slot> slots;
        for (int leaf : leaves) slots.push_back(SlotOf(leaf));
        branch_operands.push_back(std::move(slots));
      }
      std::vector<int> out_leaves;
      Leaves(result_value[s], out_leaves);
      std::vector<Slot> result;
      for (int leaf : out_leaves) result.push_back(SlotOf(leaf));
      Temp temp{temp_region, 0};
      int nested_reference_steps = 0;
      auto branches = ConditionalKernel(i, SlotOf(operand_values[s][0]), branch_operands, result, &temp,
                                        &nested_reference_steps, layouts_);
      if (branches.ok()) {  // otherwise the evaluator runs it
        kernel = std::move(branches).value();
        built.temp_bytes = std::max(built.temp_bytes, AlignUp(temp.bytes));
        built.nested_reference_steps += nested_reference_steps;
      }
    }
    const bool variadic_reduce = (i.opcode == Opcode::kReduce || i.opcode == Opcode::kReduceWindow) && !i.shape.IsArray();
    if (batch_norm || variadic_reduce || i.opcode == Opcode::kSort || i.opcode == Opcode::kTopK ||
        i.opcode == Opcode::kRngBitGenerator) {
      std::vector<int> leaves;
      Leaves(result_value[s], leaves);
      std::vector<Slot> outs;
      for (int leaf : leaves) outs.push_back(SlotOf(leaf));
      std::vector<Slot> ins;
      for (int o : operand_values[s]) ins.push_back(SlotOf(o));
      if (batch_norm) kernel = BatchNormKernel(i, ins, outs);
      if (i.opcode == Opcode::kSort) kernel = SortKernel(i, ins, outs);
      if (i.opcode == Opcode::kTopK) kernel = TopKKernel(i, ins, outs);
      if (i.opcode == Opcode::kRngBitGenerator && ins.size() == 1) kernel = RngBitGeneratorKernel(i, ins[0], outs);
      if (variadic_reduce) {
        const auto fused = computed_iotas.find(&i);
        if (i.opcode == Opcode::kReduce) {
          kernel = LaneReduceKernel(i, ins, outs, fused == computed_iotas.end() ? std::vector<bool>{} : fused->second);
        }
        if (!kernel && fused != computed_iotas.end()) {
          return hlo::Internal("the lane reduce %" + i.name + " cannot compute the iota it was planned to");
        }
        if (!kernel) {
          kernel = i.opcode == Opcode::kReduce ? ScalarReduceKernel(i, ins, outs) : ScalarReduceWindowKernel(i, ins, outs);
        }
      }
    }
    Temp temp{temp_region, 0};
    if (!kernel && arrays) {
      Slot out = SlotOf(result_value[s]);
      if (i.opcode == Opcode::kDot) kernel = DotKernel(i, in, out, &temp);
      if (!kernel && i.opcode == Opcode::kDot) kernel = ComplexDotKernel(i, in, out);
      if (i.opcode == Opcode::kConvolution) {
        kernel = ConvolutionKernel(i, in, out, &temp, layouts_);
        if (!kernel) kernel = NarrowFloatConvolutionKernel(i, in, out, &temp, layouts_);
      }
      if (!kernel && i.opcode == Opcode::kClamp) kernel = ClampKernel(i, in, out);
      if (!kernel && i.opcode == Opcode::kReduce) kernel = ReduceKernel(i, in, out);
      if (!kernel && i.opcode == Opcode::kReduce) kernel = LaneReduceKernel(i, in, {out});
      if (!kernel && i.opcode == Opcode::kReduce) kernel = ScalarReduceKernel(i, in, {out});
      if (!kernel && i.opcode == Opcode::kMap) kernel = MapKernel(i, in, out);
      if (!kernel && i.opcode == Opcode::kTriangularSolve) kernel = TriangularSolveKernel(i, in, out);
      if (!kernel && i.opcode == Opcode::kCholesky) kernel = CholeskyKernel(i, in, out);
      // A chlo call the loops compute (f32 erfc) runs as a loop of one, below.
      if (!kernel && i.opcode == Opcode::kCustomCall && !IsLoopOp(i)) kernel = ChloKernel(i, in, out);
      if (!kernel && i.opcode == Opcode::kBitcastConvert) kernel = BitcastConvertKernel(i, in, out);
      if (!kernel && i.opcode == Opcode::kGetDimensionSize) kernel = GetDimensionSizeKernel(i, out);
      if (!kernel && i.opcode == Opcode::kFft) kernel = FftKernel(i, in, out, &temp);
      if (!kernel && i.opcode == Opcode::kRngGetAndUpdateState) kernel = RngStateKernel(i, out);
      if (!kernel && i.opcode == Opcode::kRng) kernel = RngKernel(i, in, out);
      if (!kernel && i.opcode == Opcode::kIota) kernel = IotaKernel(i, out);
      if (!kernel && i.opcode == Opcode::kIota) kernel = ScalarIotaKernel(i, out);
      if (!kernel && (i.opcode == Opcode::kReal || i.opcode == Opcode::kImag || i.opcode == Opcode::kComplex)) {
        kernel = ComplexPartsKernel(i, in, out);
      }
      if (!kernel && i.opcode == Opcode::kScatter) kernel = ScatterKernel(i, in, out);
      if (!kernel && i.opcode == Opcode::kReduceWindow) kernel = ReduceWindowKernel(i, in, out);
      if (!kernel && i.opcode == Opcode::kReduceWindow) kernel = ScalarReduceWindowKernel(i, in, {out});
      if (!kernel && i.opcode == Opcode::kGather) kernel = GatherKernel(i, in, out);
      if (!kernel && i.opcode == Opcode::kSelectAndScatter) kernel = SelectAndScatterKernel(i, in, out);
      if (!kernel && i.opcode == Opcode::kSelectAndScatter) kernel = ScalarSelectAndScatterKernel(i, in, out);
      // A loop op fused with nothing still runs as a loop of one: its tile
      // functions are built for the widest vectors the CPU has (the one-op
      // kernels only for the baseline x86-64), which makes an unfused exp or
      // tanh several times faster, and they compute the same bits.
      if (!kernel && IsLoopOp(i)) kernel = LoopOfOne(i, in, out);
      if (!kernel) kernel = ElementwiseKernel(i, in, out);
      if (!kernel) kernel = DataMovementKernel(i, in, out);
      if (!kernel) kernel = ScalarElementwiseKernel(i, in, out);
    }
    built.temp_bytes = std::max(built.temp_bytes, AlignUp(temp.bytes));
    const bool kernel_is_typed = static_cast<bool>(kernel);
    if (kernel) {
      built.typed = true;
    } else {
      if (i.opcode == Opcode::kCustomCall && !hlo::EvaluatorRunsCustomCall(i)) {
        // Refused here, when the program compiles, rather than when it runs.
        const std::string source = hlo::SourceOf(i);
        return hlo::Unimplemented("custom-call \"" + hlo::StringAttribute(i, "custom_call_target") + "\" %" + i.name +
                                  (source.empty() ? "" : " from " + source) + " is not supported by the CPU plugin: it has no kernel for it and the "
                                  "reference evaluator does not know what it computes");
      }
      kernel = Fallback(i, operand_values[s], result_value[s]);
    }
    built.step.emplace(std::string(i.OpcodeSpelling()) + (kernel_is_typed ? "" : "(reference)") + " %" + i.name,
                       std::move(kernel));
    return hlo::OkStatus();
  };
  // A chain step's work on a block of rows (row_chains.h), bound to the
  // same slots as its kernel.
  auto build_row_runner = [&](size_t s) -> RowRunner {
    const Instruction& i = *instructions[s];
    const RowChain& chain = chains[static_cast<size_t>(chain_of[s])];
    const size_t position = static_cast<size_t>(std::find(chain.steps.begin(), chain.steps.end(), s) - chain.steps.begin());
    const int64_t row = chain.row_elements[position];
    const bool stream = chain.result_streams[position];
    const Slot out = SlotOf(result_value[s]);
    if (fusion.group_of[s] >= 0 || fusion.reduce_group[s] >= 0) {
      const bool reduce = fusion.reduce_group[s] >= 0;
      const FusionGroup& group = fusion.groups[reduce ? fusion.reduce_group[s] : fusion.group_of[s]];
      std::vector<Slot> in;
      for (const Instruction* o : group.inputs) in.push_back(SlotOf(ValueOf(o)));
      if (!reduce) return FusedLoopRows(group.members, group.inputs, in, out, row, stream);
      std::optional<Slot> root;
      if (group.root_stored) root = SlotOf(ValueOf(group.members.back()));
      return FusedRowReduceRows(i, group.members, group.inputs, in, SlotOf(ValueOf(i.operands[1])), out, root, chain);
    }
    std::vector<Slot> in;
    for (int o : operand_values[s]) in.push_back(SlotOf(o));
    if (i.opcode == Opcode::kReduce) return RowReduceRows(i, in.at(0), in.at(1), out, chain);
    std::vector<const Instruction*> inputs;
    std::vector<Slot> input_slots;
    DistinctOperands(i, in, inputs, input_slots);
    return FusedLoopRows({&i}, inputs, input_slots, out, row, stream);
  };
  Phase("cpu: plan kernels");
  std::vector<BuiltStep> built(instructions.size());
  const std::string* const module_name = planned_module;
  auto build_steps = [&](int64_t begin, int64_t end) {
    // Nested plans (a while's) built on a host thread report their
    // reference steps under this module's name too.
    const std::string* const outer = planned_module;
    planned_module = module_name;
    struct Restore {
      const std::string* name;
      ~Restore() { planned_module = name; }
    } restore{outer};
    for (int64_t s = begin; s < end; ++s) {
      if (!computes[s]) continue;
      // A builder's exception is rethrown on this thread, below, as it
      // would have been thrown had the steps been built here one by one.
      try {
        built[s].status = build_step(static_cast<size_t>(s), built[s]);
        if (built[s].status.ok() && chain_of[s] >= 0) built[s].row_runner = build_row_runner(static_cast<size_t>(s));
      } catch (...) {
        built[s].exception = std::current_exception();
      }
    }
  };
  if (parallel_) {
    parallel_->For(static_cast<int64_t>(instructions.size()), kStepsPerTask, build_steps);
  } else {
    build_steps(0, static_cast<int64_t>(instructions.size()));
  }
  Phase("cpu: plan steps");
  // A chain runs as one step when each of its steps has its rows' work and
  // no temporaries (they would share the temp region); otherwise its steps
  // run one after another, as any others.
  auto runs_as_chain = [&](const RowChain& chain) {
    for (size_t s : chain.steps) {
      const BuiltStep& b = built[s];
      if (!computes[s] || !b.row_runner || !b.typed || b.temp_bytes != 0 || b.nested_reference_steps != 0) return false;
    }
    return true;
  };
  std::vector<bool> chained(chains.size(), false);
  int64_t temp_bytes = 0;
  for (size_t s = 0; s < instructions.size(); ++s) {
    if (!computes[s]) continue;
    BuiltStep& b = built[s];
    if (b.exception) std::rethrow_exception(b.exception);
    if (!b.status.ok()) return b.status;
    if (const int c = chain_of[s]; c >= 0) {
      const RowChain& chain = chains[static_cast<size_t>(c)];
      if (s == chain.steps.front() && runs_as_chain(chain)) {
        chained[static_cast<size_t>(c)] = true;
        std::vector<RowRunner> runners;
        std::string held;
        for (size_t m : chain.steps) {
          runners.push_back(built[m].row_runner);
          held += (held.empty() ? "" : "; ") + built[m].step->what;
        }
        plan_->steps.push_back(Step{"row chain(" + std::to_string(chain.steps.size()) + " steps) %" +
                                        instructions[chain.steps.back()]->name + " [" + held + "]",
                                    RowChainKernel(std::move(runners), chain)});
      }
      if (chained[static_cast<size_t>(c)]) {
        ++plan_->typed_steps;
        continue;
      }
    }
    temp_bytes = std::max(temp_bytes, b.temp_bytes);
    plan_->reference_steps += b.nested_reference_steps;
    if (b.typed) {
      ++plan_->typed_steps;
    } else {
      ++plan_->reference_steps;
      ReportReferenceStep(*instructions[s]);
    }
    plan_->steps.push_back(std::move(*b.step));
  }
  plan_->scratch_bytes = top + temp_bytes;
  plan_->runs_inline = RunsInline(entry_);
  if (nested_) MarkOutputsThatMayAliasTheirParameters(fusion, computes, operand_values, result_value);
  // Outputs not computed in place are copied at the end.
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (plan_->output_in_place[k]) continue;
    Slot from = SlotOf(outputs[k]);
    const int64_t bytes = plan_->values[outputs[k]].shape->ByteSize();
    Slot to;
    to.kind = Slot::Kind::kOutput;
    to.index = static_cast<int64_t>(k);
    plan_->steps.push_back(Step{"copy to output " + std::to_string(k), [=](const Frame& frame) {
                                  // One memory when a loop runs the plan with
                                  // output k over parameter k (a state leaf the
                                  // body passes through).
                                  void* dst = frame.At(to);
                                  const void* src = frame.At(from);
                                  if (bytes && dst != src) std::memcpy(dst, src, static_cast<size_t>(bytes));
                                }});
  }
  return std::move(plan_);
}

}  // namespace

hlo::StatusOr<std::unique_ptr<Plan>> BuildPlan(const hlo::Module& module, ConvLayoutBook* layouts,
                                                const Parallel* parallel, PlanPhases* phases) {
  if (!module.entry) return hlo::InvalidArgument("module has no entry computation");
  planned_module = &module.name;
  Builder builder(*module.entry, /*nested=*/false, layouts, parallel, phases);
  auto plan = builder.Build();
  planned_module = nullptr;
  return plan;
}

hlo::StatusOr<std::unique_ptr<Plan>> BuildNestedPlan(const hlo::Computation& computation, ConvLayoutBook* layouts) {
  Builder builder(computation, /*nested=*/true, layouts);
  return builder.Build();
}

}  // namespace anvil::cpu
