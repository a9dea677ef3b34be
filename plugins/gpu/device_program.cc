#include "plugins/gpu/device_program.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "hlo/attributes.h"
#include "plugins/gpu/arena_layout.h"

namespace anvil::gpu {

using hlo::Instruction;
using hlo::Opcode;

namespace {

uint64_t Bytes(const hlo::Shape& s) { return static_cast<uint64_t>(s.ByteSize()); }

size_t LeafCount(const hlo::Shape& s) {
  if (!s.IsTuple()) return 1;
  size_t n = 0;
  for (const hlo::Shape& e : s.tuple_elements()) n += LeafCount(e);
  return n;
}

// Turns the kernel plan into kernels, locations and operations.
class ProgramBuilder {
 public:
  ProgramBuilder(const hlo::ProgramPlan& plan, KernelLoader& loader, uint64_t chunk_limit, const std::string& plugin)
      : plan_(plan), loader_(loader), chunk_limit_(chunk_limit), plugin_(plugin) {}

  hlo::StatusOr<DeviceProgram> Build(const hlo::Module& module) {
    const hlo::Computation& entry = *module.entry;
    std::vector<std::vector<Loc>> params;
    for (const Instruction* p : entry.parameters) {
      if (!p->shape.IsArray()) return NotYet(*p, "tuple-shaped entry parameters");
      Loc l{Loc::Kind::kParameter, static_cast<uint32_t>(p->parameter_number), 0, Bytes(p->shape)};
      params.push_back({l});
      program_.parameter_bytes.push_back(l.bytes);
    }
    std::vector<Loc> result;
    ANVIL_RETURN_IF_ERROR(Computation(entry, params, program_.ops, result));
    program_.outputs = result;
    for (const Loc& l : result) program_.output_bytes.push_back(l.bytes);
    ANVIL_ASSIGN_OR_RETURN(program_.arena_chunks,
                           LayOutArena(slots_, chunk_limit_, program_.ops, program_.tables, program_.outputs));
    return std::move(program_);
  }

 private:
  hlo::Status NotYet(const Instruction& i, const std::string& why) const {
    return hlo::Unimplemented(plugin_ + " cannot compile %" + i.name + " (" + std::string(i.OpcodeSpelling()) + " " +
                              i.shape.ToString(false) + ") yet: " + why);
  }

  // A new arena slot; where it lives is decided once all operations are
  // known (arena_layout.h).
  Loc Allocate(uint64_t bytes) { return Loc{Loc::Kind::kArena, static_cast<uint32_t>(slots_++), 0, bytes}; }

  std::vector<Loc> AllocateShape(const hlo::Shape& s) {
    std::vector<Loc> leaves;
    std::function<void(const hlo::Shape&)> walk = [&](const hlo::Shape& at) {
      if (at.IsTuple()) {
        for (const hlo::Shape& e : at.tuple_elements()) walk(e);
      } else if (at.IsArray()) {
        leaves.push_back(Allocate(Bytes(at)));
      } else {
        leaves.push_back(Loc{});
      }
    };
    walk(s);
    return leaves;
  }

  Loc Constant(const Instruction& i) {
    const auto& data = i.literal->data();
    std::vector<uint8_t>& bytes = program_.constant_bytes;
    while (bytes.size() % 16) bytes.push_back(0);
    Loc l{Loc::Kind::kConstant, 0, bytes.size(), data.size()};
    bytes.insert(bytes.end(), data.begin(), data.end());
    return l;
  }

  static void Copies(const std::vector<Loc>& from, const std::vector<Loc>& to, std::vector<Op>& ops) {
    for (size_t k = 0; k < from.size(); ++k) {
      if (from[k].kind == Loc::Kind::kNone || from[k].bytes == 0) continue;
      if (from[k].SameMemory(to[k])) continue;
      Op op;
      op.kind = Op::Kind::kCopy;
      op.src = from[k];
      op.dst = to[k];
      ops.push_back(op);
    }
  }

  hlo::Status Kernel(const hlo::KernelSpec& spec, const std::unordered_map<const Instruction*, std::vector<Loc>>& values,
                     std::vector<Loc>& result, std::vector<Op>& ops) {
    ANVIL_ASSIGN_OR_RETURN(KernelSource source, loader_.Emit(spec));
    result = AllocateShape(spec.root->shape);
    std::vector<Loc> table;
    for (const Instruction* in : source.inputs) table.push_back(values.at(in).at(0));
    table.insert(table.end(), result.begin(), result.end());
    for (uint64_t bytes : source.scratch_bytes) table.push_back(Allocate(bytes));
    program_.tables.push_back(table);
    const uint32_t workgroup = loader_.options().workgroup_size;
    for (const KernelPass& pass : source.passes) {
      ANVIL_ASSIGN_OR_RETURN(const void* kernel, loader_.Load(pass, spec));
      Op op;
      op.kind = Op::Kind::kDispatch;
      op.kernel = kernel;
      op.table = program_.tables.size() - 1;
      const uint64_t groups = (pass.invocations + workgroup - 1) / workgroup;
      op.groups = static_cast<uint32_t>(std::clamp<uint64_t>(groups, 1, 65535));
      op.what = "%" + spec.root->name + " (" + std::string(spec.root->OpcodeSpelling()) + " " +
                spec.root->shape.ToString(false) + ")";
      ops.push_back(op);
    }
    ++program_.kernel_count;
    return hlo::OkStatus();
  }

  hlo::Status Computation(const hlo::Computation& c, const std::vector<std::vector<Loc>>& params, std::vector<Op>& ops,
                          std::vector<Loc>& result) {
    const hlo::ComputationPlan* plan = plan_.Find(&c);
    if (!plan) return hlo::Internal("computation %" + c.name + " was not planned");
    std::unordered_map<const Instruction*, const hlo::KernelSpec*> kernel_of;
    std::unordered_map<const Instruction*, bool> fused;
    for (const hlo::PlanStep& s : plan->steps) {
      if (s.kind != hlo::PlanStep::Kind::kKernel) continue;
      kernel_of[s.kernel.root] = &s.kernel;
      for (const Instruction* f : s.kernel.fused) fused[f] = true;
    }
    std::unordered_map<const Instruction*, std::vector<Loc>> values;
    for (const auto& owned : c.instructions) {
      const Instruction& i = *owned;
      std::vector<Loc>& v = values[&i];
      switch (i.opcode) {
        case Opcode::kParameter:
          v = params.at(static_cast<size_t>(i.parameter_number));
          continue;
        case Opcode::kConstant:
          if (!i.literal || i.literal->elided()) {
            if (fused.count(&i)) continue;
            return NotYet(i, "the constant's values are not in the program");
          }
          v = {Constant(i)};
          continue;
        case Opcode::kTuple:
          for (const Instruction* o : i.operands) {
            const auto& ov = values.at(o);
            v.insert(v.end(), ov.begin(), ov.end());
          }
          continue;
        case Opcode::kGetTupleElement: {
          ANVIL_ASSIGN_OR_RETURN(int64_t index, hlo::IntAttribute(i, "index", std::nullopt));
          const hlo::Shape& t = i.operands[0]->shape;
          size_t first = 0;
          for (int64_t k = 0; k < index; ++k) first += LeafCount(t.tuple_elements()[k]);
          const auto& ov = values.at(i.operands[0]);
          v.assign(ov.begin() + first, ov.begin() + first + LeafCount(i.shape));
          continue;
        }
        case Opcode::kOptimizationBarrier:
        case Opcode::kAddDependency:
          v = values.at(i.operands[0]);
          continue;
        case Opcode::kAfterAll:
        case Opcode::kDomain:
          v = std::vector<Loc>(LeafCount(i.shape));
          continue;
        case Opcode::kCall: {
          std::vector<std::vector<Loc>> args;
          for (const Instruction* o : i.operands) args.push_back(values.at(o));
          ANVIL_RETURN_IF_ERROR(Computation(*i.called_computations.at(0), args, ops, v));
          continue;
        }
        case Opcode::kWhile:
          ANVIL_RETURN_IF_ERROR(While(i, values.at(i.operands[0]), ops, v));
          continue;
        case Opcode::kConditional:
          ANVIL_RETURN_IF_ERROR(Conditional(i, values, ops, v));
          continue;
        default:
          break;
      }
      if (fused.count(&i)) continue;
      auto k = kernel_of.find(&i);
      if (k == kernel_of.end()) return NotYet(i, "no kernel was planned for it");
      ANVIL_RETURN_IF_ERROR(Kernel(*k->second, values, v, ops));
    }
    result = values.at(c.root);
    return hlo::OkStatus();
  }

  hlo::Status While(const Instruction& i, const std::vector<Loc>& init, std::vector<Op>& ops, std::vector<Loc>& state) {
    const hlo::Attribute* ca = i.FindAttribute("condition");
    const hlo::Attribute* ba = i.FindAttribute("body");
    const bool condition_first = ca < ba;
    const hlo::Computation* cond = i.called_computations.at(condition_first ? 0 : 1);
    const hlo::Computation* body = i.called_computations.at(condition_first ? 1 : 0);
    state = AllocateShape(i.shape);
    Copies(init, state, ops);
    Op loop;
    loop.kind = Op::Kind::kWhile;
    loop.branches.resize(2);
    std::vector<Loc> predicate, next;
    ANVIL_RETURN_IF_ERROR(Computation(*cond, {state}, loop.branches[0], predicate));
    loop.selector = predicate.at(0);
    loop.selector_is_pred = true;
    ANVIL_RETURN_IF_ERROR(Computation(*body, {state}, loop.branches[1], next));
    // Results that are another element of the state (a swap) go through a
    // staging copy so no copy reads what an earlier one overwrote.
    std::vector<Loc> staged = next;
    for (size_t k = 0; k < next.size(); ++k) {
      for (size_t j = 0; j < state.size(); ++j) {
        if (j != k && next[k].kind != Loc::Kind::kNone && next[k].SameMemory(state[j])) {
          staged[k] = Allocate(next[k].bytes);
          Copies({next[k]}, {staged[k]}, loop.branches[1]);
        }
      }
    }
    Copies(staged, state, loop.branches[1]);
    ops.push_back(std::move(loop));
    return hlo::OkStatus();
  }

  hlo::Status Conditional(const Instruction& i, const std::unordered_map<const Instruction*, std::vector<Loc>>& values,
                          std::vector<Op>& ops, std::vector<Loc>& result) {
    result = AllocateShape(i.shape);
    Op op;
    op.kind = Op::Kind::kConditional;
    op.selector = values.at(i.operands[0]).at(0);
    op.selector_is_pred = i.operands[0]->shape.element_type() == hlo::ElementType::kPred;
    for (size_t b = 0; b < i.called_computations.size(); ++b) {
      std::vector<Op> branch;
      std::vector<Loc> out;
      ANVIL_RETURN_IF_ERROR(Computation(*i.called_computations[b], {values.at(i.operands.at(b + 1))}, branch, out));
      Copies(out, result, branch);
      op.branches.push_back(std::move(branch));
    }
    ops.push_back(std::move(op));
    return hlo::OkStatus();
  }

  const hlo::ProgramPlan& plan_;
  KernelLoader& loader_;
  uint64_t chunk_limit_;
  const std::string& plugin_;
  DeviceProgram program_;
  size_t slots_ = 0;
};

}  // namespace

hlo::StatusOr<DeviceProgram> BuildDeviceProgram(const hlo::Module& module, const hlo::ProgramPlan& plan,
                                                KernelLoader& loader, uint64_t chunk_limit, const std::string& plugin) {
  return ProgramBuilder(plan, loader, chunk_limit, plugin).Build(module);
}

}  // namespace anvil::gpu
