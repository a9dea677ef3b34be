#include "hlo/kernel_plan.h"

#include "hlo/attributes.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

namespace anvil::hlo {

std::string ElementwiseCustomCall(const Instruction& i) {
  if (i.opcode != Opcode::kCustomCall || !i.shape.IsArray()) return "";
  for (const Instruction* o : i.operands) {
    if (!o->shape.IsArray() || o->shape.dims() != i.shape.dims()) return "";
  }
  static const std::set<std::string> kChlo = {"lgamma", "digamma", "erf_inv", "erfc", "erf", "mulhi", "next_after",
                                              "nextafter", "igamma", "igamma_grad_a", "random_gamma_grad",
                                              "regularized_incomplete_beta", "bessel_i1e"};
  const std::string target = StringAttribute(i, "custom_call_target");
  if (target.rfind("chlo.", 0) == 0 && kChlo.count(target.substr(5))) {
    return target.substr(5) == "nextafter" ? "next_after" : target.substr(5);
  }
  static const std::map<std::string, std::string> kMath = {
      {"xla_builder.math.Acos", "acos"}, {"xla_builder.math.Acosh", "acosh"}, {"xla_builder.math.Asin", "asin"},
      {"xla_builder.math.Asinh", "asinh"}, {"xla_builder.math.Atan", "atan"}, {"xla_builder.math.Atanh", "atanh"},
      {"xla_builder.math.Cosh", "cosh"}, {"xla_builder.math.Sinh", "sinh"}, {"xla_builder.math.Erf", "erf"},
      {"xla_builder.math.Tan", "tan"}, {"xla_builder.math.NextAfter", "next_after"},
      {"xla_builder.math.IgammaGradA", "igamma_grad_a"}, {"xla_builder.math.RandomGammaGrad", "random_gamma_grad"},
      {"xla_builder.math.RegularizedIncompleteBeta", "regularized_incomplete_beta"}};
  auto m = kMath.find(target);
  return m == kMath.end() ? "" : m->second;
}

namespace {

// The decompositions JAX calls as custom calls where there is no LAPACK
// (evaluator_decompositions.cc), which have kernels of their own.
bool IsQr(const Instruction& i) {
  return i.opcode == Opcode::kCustomCall && StringAttribute(i, "custom_call_target") == "Qr";
}
bool IsEigh(const Instruction& i) {
  return i.opcode == Opcode::kCustomCall && StringAttribute(i, "custom_call_target") == "Eigh";
}
bool IsHouseholderProduct(const Instruction& i) {
  return i.opcode == Opcode::kCustomCall &&
         StringAttribute(i, "custom_call_target") == "ProductOfElementaryHouseholderReflectors";
}

}  // namespace

Role RoleOf(const Instruction& i) {
  if (!ElementwiseCustomCall(i).empty()) return Role::kLoop;
  if (IsQr(i) || IsHouseholderProduct(i) || IsEigh(i)) return Role::kKernel;
  switch (i.opcode) {
    case Opcode::kParameter: return Role::kParameter;
    case Opcode::kConstant: return Role::kConstant;
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
    case Opcode::kDomain:
      return Role::kAlias;
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
      return Role::kControl;
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kPad:
    case Opcode::kConcatenate:
    case Opcode::kIota:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kGather:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kMap:
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
    case Opcode::kGetDimensionSize:
    case Opcode::kRng:  // each element a function of its index (hlo/rng_values)
      return i.shape.IsArray() ? Role::kLoop : Role::kUnsupported;
    case Opcode::kReduce:
    case Opcode::kDot:
    case Opcode::kConvolution:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
    case Opcode::kScatter:
    case Opcode::kSort:
    case Opcode::kTriangularSolve:
    case Opcode::kFft:
    case Opcode::kCholesky:
    case Opcode::kTopK:
    case Opcode::kRaggedDot:
      return Role::kKernel;
    default:
      if (i.opcode == Opcode::kStochasticConvert) return Role::kUnsupported;
      if (IsElementwiseUnary(i.opcode) || IsElementwiseBinary(i.opcode)) {
        return i.shape.IsArray() ? Role::kLoop : Role::kUnsupported;
      }
      return Role::kUnsupported;
  }
}

bool KernelSpec::Fuses(const Instruction* i) const {
  return i == root || std::find(fused.begin(), fused.end(), i) != fused.end();
}

const ComputationPlan* ProgramPlan::Find(const Computation* c) const {
  for (const ComputationPlan& p : computations) {
    if (p.computation == c) return &p;
  }
  return nullptr;
}

namespace {

KernelKind KindOf(const Instruction& i) {
  if (IsQr(i)) return KernelKind::kQr;
  if (IsHouseholderProduct(i)) return KernelKind::kHouseholderProduct;
  if (IsEigh(i)) return KernelKind::kEigh;
  switch (i.opcode) {
    case Opcode::kReduce: return KernelKind::kReduce;
    case Opcode::kDot: return KernelKind::kDot;
    case Opcode::kConvolution: return KernelKind::kConvolution;
    case Opcode::kReduceWindow: return KernelKind::kReduceWindow;
    case Opcode::kSelectAndScatter: return KernelKind::kSelectAndScatter;
    case Opcode::kScatter: return KernelKind::kScatter;
    case Opcode::kSort: return KernelKind::kSort;
    case Opcode::kTriangularSolve: return KernelKind::kTriangularSolve;
    case Opcode::kFft: return KernelKind::kFft;
    case Opcode::kCholesky: return KernelKind::kCholesky;
    case Opcode::kTopK: return KernelKind::kTopK;
    case Opcode::kRaggedDot: return KernelKind::kRaggedDot;
    default: return KernelKind::kLoop;
  }
}

bool IsScalarConstant(const Instruction& i) {
  return i.opcode == Opcode::kConstant && i.shape.IsArray() && i.shape.ElementCount() == 1 && i.literal &&
         !i.literal->elided();
}

// Users that read each element of a fused operand about once per element of
// their own.
bool ReadsOperandsOnce(const Instruction& user) {
  return RoleOf(user) == Role::kLoop || user.opcode == Opcode::kReduce;
}

Status PlanComputation(const Computation& c, ComputationPlan& plan) {
  plan.computation = &c;
  std::unordered_map<const Instruction*, std::vector<const Instruction*>> users;
  for (const auto& owned : c.instructions) {
    const Role role = RoleOf(*owned);
    if (role == Role::kUnsupported) {
      return Unimplemented("no device kernel for %" + owned->name + " (" + std::string(owned->OpcodeSpelling()) + " " +
                           owned->shape.ToString(false) + ")");
    }
    for (const Instruction* o : owned->operands) users[o].push_back(owned.get());
  }
  // Which kernel computes each instruction: its own, or its one user's.
  std::unordered_map<const Instruction*, const Instruction*> owner;
  for (auto it = c.instructions.rbegin(); it != c.instructions.rend(); ++it) {
    const Instruction* i = it->get();
    const Role role = RoleOf(*i);
    if (role != Role::kLoop && role != Role::kKernel) continue;
    const auto& u = users[i];
    const bool fuse = role == Role::kLoop && i != c.root && u.size() == 1 && ReadsOperandsOnce(*u[0]);
    owner[i] = fuse ? owner.at(u[0]) : i;
  }
  for (const auto& owned : c.instructions) {
    const Instruction* i = owned.get();
    const Role role = RoleOf(*i);
    if (role == Role::kControl) {
      PlanStep step;
      step.kind = PlanStep::Kind::kControl;
      step.control = i;
      plan.steps.push_back(std::move(step));
      continue;
    }
    if ((role != Role::kLoop && role != Role::kKernel) || owner.at(i) != i) continue;
    PlanStep step;
    KernelSpec& k = step.kernel;
    k.kind = KindOf(*i);
    k.root = i;
    for (const auto& other : c.instructions) {
      if (other.get() != i && owner.count(other.get()) && owner.at(other.get()) == i) k.fused.push_back(other.get());
    }
    // Inputs in first-read order: a walk from the root through fused producers.
    std::set<const Instruction*> seen;
    std::vector<const Instruction*> constants;
    std::function<void(const Instruction*)> walk = [&](const Instruction* at) {
      for (const Instruction* o : at->operands) {
        if (!seen.insert(o).second) continue;
        if (owner.count(o) && owner.at(o) == i) {
          walk(o);
        } else if (IsScalarConstant(*o)) {
          constants.push_back(o);
        } else {
          k.inputs.push_back(o);
        }
      }
    };
    walk(i);
    // Scalar constants are written into the kernel, ahead of their readers.
    k.fused.insert(k.fused.begin(), constants.begin(), constants.end());
    plan.steps.push_back(std::move(step));
  }
  return OkStatus();
}

}  // namespace

StatusOr<ProgramPlan> PlanKernels(const Module& module) {
  if (!module.entry) return InvalidArgument("the module has no entry computation");
  ProgramPlan program;
  std::vector<const Computation*> pending{module.entry};
  std::set<const Computation*> planned;
  while (!pending.empty()) {
    const Computation* c = pending.back();
    pending.pop_back();
    if (!planned.insert(c).second) continue;
    ComputationPlan plan;
    ANVIL_RETURN_IF_ERROR(PlanComputation(*c, plan));
    for (const PlanStep& s : plan.steps) {
      if (s.kind != PlanStep::Kind::kControl) continue;
      for (const Computation* callee : s.control->called_computations) pending.push_back(callee);
    }
    program.computations.push_back(std::move(plan));
  }
  return program;
}

}  // namespace anvil::hlo
