#include "plugins/vulkan/vulkan_executable.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "hlo/attributes.h"
#include "hlo/batch_norm_expander.h"
#include "hlo/hlo_parser.h"
#include "hlo/scan_expander.h"
#include "hlo/kernel_plan.h"
#include "plugins/vulkan/arena_layout.h"
#include "plugins/vulkan/parallel_compile.h"
#include "plugins/vulkan/spirv_compiler.h"

namespace anvil::vulkan {

using hlo::Instruction;
using hlo::Opcode;

namespace {

uint64_t Bytes(const hlo::Shape& s) {
  return static_cast<uint64_t>(s.ByteSize());
}

size_t LeafCount(const hlo::Shape& s) {
  if (!s.IsTuple()) return 1;
  size_t n = 0;
  for (const hlo::Shape& e : s.tuple_elements()) n += LeafCount(e);
  return n;
}

hlo::Status NotYet(const Instruction& i, const std::string& why) {
  return hlo::Unimplemented("the Vulkan plugin cannot compile %" + i.name + " (" + std::string(i.OpcodeSpelling()) + " " +
                            i.shape.ToString(false) + ") yet: " + why);
}

}  // namespace

// Turns the kernel plan into pipelines, locations and operations.
class ProgramBuilder {
 public:
  ProgramBuilder(Executable& exe, const hlo::ProgramPlan& plan, const KnownSpirv* loaded)
      : exe_(exe), plan_(plan), loaded_(loaded),
        target_{GlslDialect(exe.device_.features), gpu::KernelOptions{exe.device_.workgroup_size}} {
    chunk_limit_ = std::max<uint64_t>(exe.device_.max_allocation, 1 << 20);
  }

  const GlslTarget& target() const { return target_; }
  // Kernels compiled ahead, all at once (parallel_compile.h).
  void SetCompiled(CompiledKernels compiled) { compiled_ = std::move(compiled); }

  hlo::Status Build(const hlo::Module& module) {
    const hlo::Computation& entry = *module.entry;
    std::vector<std::vector<Loc>> params;
    for (const Instruction* p : entry.parameters) {
      if (!p->shape.IsArray()) return NotYet(*p, "tuple-shaped entry parameters");
      Loc l{Loc::Kind::kParameter, static_cast<uint32_t>(p->parameter_number), 0, Bytes(p->shape)};
      params.push_back({l});
      exe_.parameter_bytes_.push_back(l.bytes);
    }
    std::vector<Loc> result;
    ANVIL_RETURN_IF_ERROR(Computation(entry, params, exe_.ops_, result));
    exe_.outputs_ = result;
    for (const Loc& l : result) exe_.output_bytes_.push_back(l.bytes);
    ANVIL_ASSIGN_OR_RETURN(exe_.arena_chunks_,
                           LayOutArena(slots_, chunk_limit_, exe_.ops_, exe_.tables_, exe_.outputs_));
    std::string why;
    if (!exe_.device_.CreateBuffer(constant_bytes_.size(), &exe_.constants_, why)) return hlo::ResourceExhausted(why);
    if (!constant_bytes_.empty()) std::memcpy(exe_.constants_.mapped, constant_bytes_.data(), constant_bytes_.size());
    return hlo::OkStatus();
  }

 private:
  // A new arena slot; where it lives is decided once all operations are
  // known (arena_layout.h).
  Loc Allocate(uint64_t bytes, hlo::Status&) {
    return Loc{Loc::Kind::kArena, static_cast<uint32_t>(slots_++), 0, bytes};
  }

  hlo::StatusOr<std::vector<Loc>> AllocateShape(const hlo::Shape& s) {
    std::vector<Loc> leaves;
    hlo::Status status = hlo::OkStatus();
    std::function<void(const hlo::Shape&)> walk = [&](const hlo::Shape& at) {
      if (at.IsTuple()) {
        for (const hlo::Shape& e : at.tuple_elements()) walk(e);
      } else if (at.IsArray()) {
        leaves.push_back(Allocate(Bytes(at), status));
      } else {
        leaves.push_back(Loc{});
      }
    };
    walk(s);
    if (!status.ok()) return status;
    return leaves;
  }

  Loc Constant(const Instruction& i) {
    const auto& data = i.literal->data();
    while (constant_bytes_.size() % 16) constant_bytes_.push_back(0);
    Loc l{Loc::Kind::kConstant, 0, constant_bytes_.size(), data.size()};
    constant_bytes_.insert(constant_bytes_.end(), data.begin(), data.end());
    return l;
  }

  static void Copies(const std::vector<Loc>& from, const std::vector<Loc>& to, std::vector<Op>& ops) {
    for (size_t k = 0; k < from.size(); ++k) {
      if (from[k].kind == Loc::Kind::kNone || from[k].bytes == 0) continue;
      if (from[k].kind == to[k].kind && from[k].index == to[k].index && from[k].offset == to[k].offset) continue;
      Op op;
      op.kind = Op::Kind::kCopy;
      op.src = from[k];
      op.dst = to[k];
      ops.push_back(op);
    }
  }

  hlo::Status Kernel(const hlo::KernelSpec& spec, const std::unordered_map<const Instruction*, std::vector<Loc>>& values,
                     std::vector<Loc>& result, std::vector<Op>& ops) {
    // Emitted ahead with the program's other kernels (taken once: a
    // computation two loops share is built twice), or now.
    hlo::StatusOr<gpu::KernelSource> emitted = hlo::Internal("not emitted");
    if (auto ahead = compiled_.shaders.find(&spec); ahead != compiled_.shaders.end()) {
      emitted = std::move(ahead->second);
      compiled_.shaders.erase(ahead);
    } else {
      emitted = target_.Emit(spec);
    }
    ANVIL_ASSIGN_OR_RETURN(gpu::KernelSource shaders, std::move(emitted));
    ANVIL_ASSIGN_OR_RETURN(result, AllocateShape(spec.root->shape));
    std::vector<Loc> table;
    for (const Instruction* in : shaders.inputs) table.push_back(values.at(in).at(0));
    table.insert(table.end(), result.begin(), result.end());
    for (uint64_t bytes : shaders.scratch_bytes) {
      hlo::Status status = hlo::OkStatus();
      table.push_back(Allocate(bytes, status));
      ANVIL_RETURN_IF_ERROR(status);
    }
    exe_.tables_.push_back(table);
    for (size_t p = 0; p < shaders.passes.size(); ++p) {
      const gpu::KernelPass& pass = shaders.passes[p];
      const std::string key = GlslKey(pass.text);
      const Pipeline* pipeline = exe_.device_.FindPipeline(pass.text);
      if (!pipeline) {
        ANVIL_ASSIGN_OR_RETURN(std::vector<uint32_t> words, KernelSpirv(key, pass.text, spec.root->name));
        std::string why;
        if (!exe_.device_.AddPipeline(pass.text, words, &pipeline, why)) return hlo::Internal(why);
      }
      if (recorded_.insert(key).second) exe_.spirv_.emplace_back(key, pipeline->words);
      Op op;
      op.kind = Op::Kind::kDispatch;
      op.pipeline = pipeline;
      op.table = exe_.tables_.size() - 1;
      const uint64_t groups = (pass.invocations + target_.options.workgroup_size - 1) / target_.options.workgroup_size;
      op.groups = static_cast<uint32_t>(std::clamp<uint64_t>(groups, 1, 65535));
      op.what = "%" + spec.root->name + " (" + std::string(spec.root->OpcodeSpelling()) + " " +
                spec.root->shape.ToString(false) + ")";
      ops.push_back(op);
    }
    ++exe_.kernel_count_;
    return hlo::OkStatus();
  }

  // The kernel's SPIR-V: compiled ahead, or from the serialised executable
  // being loaded if it is there and valid, or compiled from its GLSL now.
  hlo::StatusOr<std::vector<uint32_t>> KernelSpirv(const std::string& key, const std::string& glsl,
                                                   const std::string& name) {
    if (auto found = compiled_.spirv.find(key); found != compiled_.spirv.end()) return found->second;
    if (loaded_) {
      auto found = loaded_->find(key);
      if (found != loaded_->end() && ValidateSpirv(found->second).ok()) return found->second;
    }
    return CompileGlsl(glsl, name);
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
        case Opcode::kWhile: {
          ANVIL_RETURN_IF_ERROR(While(i, values.at(i.operands[0]), ops, v));
          continue;
        }
        case Opcode::kConditional: {
          ANVIL_RETURN_IF_ERROR(Conditional(i, values, ops, v));
          continue;
        }
        default: break;
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
    const hlo::Computation* cond = nullptr;
    const hlo::Computation* body = nullptr;
    const hlo::Attribute* ca = i.FindAttribute("condition");
    const hlo::Attribute* ba = i.FindAttribute("body");
    const bool condition_first = ca < ba;
    cond = i.called_computations.at(condition_first ? 0 : 1);
    body = i.called_computations.at(condition_first ? 1 : 0);
    ANVIL_ASSIGN_OR_RETURN(state, AllocateShape(i.shape));
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
        if (j != k && next[k].kind == state[j].kind && next[k].index == state[j].index &&
            next[k].offset == state[j].offset && next[k].kind != Loc::Kind::kNone) {
          hlo::Status status = hlo::OkStatus();
          staged[k] = Allocate(next[k].bytes, status);
          ANVIL_RETURN_IF_ERROR(status);
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
    ANVIL_ASSIGN_OR_RETURN(result, AllocateShape(i.shape));
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

  Executable& exe_;
  const hlo::ProgramPlan& plan_;
  const KnownSpirv* loaded_;
  CompiledKernels compiled_;
  std::unordered_set<std::string> recorded_;  // keys already in exe_.spirv_
  GlslTarget target_;
  uint64_t chunk_limit_ = 0;
  size_t slots_ = 0;
  std::vector<uint8_t> constant_bytes_;
};

hlo::StatusOr<std::unique_ptr<Executable>> Executable::Compile(Device& device, size_t device_index,
                                                               std::string_view hlo_text,
                                                               const anvil_plugin_host_executor& host,
                                                               const KnownSpirv* known) {
  auto module = hlo::ParseHloModule(hlo_text, {"canonical", 1});
  if (!module.ok()) return module.status();
  // Ops the plan has no kernels for, in terms of ones it has.
  ANVIL_RETURN_IF_ERROR(hlo::ExpandBatchNorm(**module));
  ANVIL_RETURN_IF_ERROR(hlo::ExpandScans(**module));
  ANVIL_ASSIGN_OR_RETURN(hlo::ProgramPlan plan, hlo::PlanKernels(**module));
  std::unique_ptr<Executable> exe(new Executable(device, device_index));
  ProgramBuilder builder(*exe, plan, known);
  // A serialised executable brings every kernel: nothing to compile ahead
  // (one it lacks is compiled when the builder meets it).
  if (!known) {
    ANVIL_ASSIGN_OR_RETURN(CompiledKernels compiled, CompileKernels(plan, builder.target(), device, host));
    builder.SetCompiled(std::move(compiled));
  }
  ANVIL_RETURN_IF_ERROR(builder.Build(**module));
  exe->canonical_text_ = std::string(hlo_text);
  const std::string validation = Validation().Take();
  if (!validation.empty()) return hlo::Internal("the Vulkan validation layer reports: " + validation);
  return exe;
}

Executable::~Executable() { device_.DestroyBuffer(constants_); }

std::string Executable::Serialize() const { return WriteSerialized(canonical_text_, spirv_); }

}  // namespace anvil::vulkan
