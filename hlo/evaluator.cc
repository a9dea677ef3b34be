#include "hlo/evaluator.h"

#include <map>
#include <set>
#include <unordered_map>

#include "hlo/attributes.h"
#include "hlo/evaluator_internal.h"

namespace anvil::hlo {
namespace {

using eval::CallFn;

// What one evaluation keeps from op to op: the state of each
// rng-get-and-update-state, which advances every time it runs.
struct Context {
  std::unordered_map<const Instruction*, eval::RngState> rng_states;
};

StatusOr<Literal> EvaluateIn(Context& context, const Computation& computation,
                             const std::vector<const Literal*>& arguments);

Literal TupleLiteral(std::vector<Literal> parts) {
  std::vector<Shape> shapes;
  for (const Literal& p : parts) shapes.push_back(p.shape());
  Literal t(Shape::Tuple(shapes));
  t.mutable_tuple_elements() = std::move(parts);
  return t;
}

Literal ScalarU32(uint32_t v) {
  Literal l(Shape::Scalar(ElementType::kU32));
  l.SetUint(0, v);
  return l;
}

// The custom-call targets the evaluator knows by name (besides calls that
// carry their implementation as a called computation, and the backend
// calls of evaluator_backend_calls.cc).
const std::set<std::string>& PassThroughTargets() {
  static const std::set<std::string> targets = {"MoveToHost", "MoveToDevice", "annotate_device_placement",
                                                "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"};
  return targets;
}

const std::map<std::string, Opcode>& MathTargets() {
  static const std::map<std::string, Opcode> targets = {
      {"xla_builder.math.Acos", Opcode::kAcos},   {"xla_builder.math.Acosh", Opcode::kAcosh},
      {"xla_builder.math.Asin", Opcode::kAsin},   {"xla_builder.math.Asinh", Opcode::kAsinh},
      {"xla_builder.math.Atan", Opcode::kAtan},   {"xla_builder.math.Atanh", Opcode::kAtanh},
      {"xla_builder.math.Cosh", Opcode::kCosh},   {"xla_builder.math.Sinh", Opcode::kSinh},
      {"xla_builder.math.Erf", Opcode::kErf},     {"xla_builder.math.Tan", Opcode::kTan}};
  return targets;
}

// Target -> (CHLO op the evaluator runs, operand count).
const std::map<std::string, std::pair<std::string, size_t>>& SpecialTargets() {
  static const std::map<std::string, std::pair<std::string, size_t>> targets = {
      {"xla_builder.math.Polygamma", {"polygamma", 2}},
      {"xla_builder.math.IgammaGradA", {"igamma_grad_a", 2}},
      {"xla_builder.math.RandomGammaGrad", {"random_gamma_grad", 2}},
      {"xla_builder.math.RegularizedIncompleteBeta", {"regularized_incomplete_beta", 3}}};
  return targets;
}

// Custom calls whose meaning is known: a call carrying its implementation
// as its one called computation, placement and sharding annotations (the
// value passes through), and XLA builder math functions.
StatusOr<Literal> EvalNamedCustomCall(const Instruction& i, const std::string& target,
                                      const std::vector<const Literal*>& operands, const CallFn& call) {
  if (i.called_computations.size() == 1 && i.called_computations[0]->parameters.size() == operands.size()) {
    return call(*i.called_computations[0], operands);
  }
  if (PassThroughTargets().count(target)) {
    if (operands.size() != 1 || !operands[0]->shape().Compatible(i.shape)) {
      return InvalidArgument("custom-call \"" + target + "\" passes one value through unchanged; this one has " +
                             std::to_string(operands.size()) + " operands and declares " + i.shape.ToString(false));
    }
    return *operands[0];
  }
  auto math = MathTargets().find(target);
  if (math != MathTargets().end() && operands.size() == 1) {
    Instruction op = i;
    op.opcode = math->second;
    return eval::EvalElementwise(op, operands);
  }
  if (target == "xla_builder.math.NextAfter" && operands.size() == 2) return eval::EvalChlo(i, "next_after", operands);
  if (auto special = SpecialTargets().find(target);
      special != SpecialTargets().end() && operands.size() == special->second.second) {
    return eval::EvalChlo(i, special->second.first, operands);
  }
  if (target == "xla_builder.prng.ScramblePhiloxKey" && operands.size() == 1) {
    return eval::EvalScramblePhiloxKey(i, *operands[0]);
  }
  if (auto result = eval::EvalBackendCustomCall(i, target, operands)) return std::move(*result);
  return Unimplemented("the evaluator does not run custom-call \"" + target + "\"");
}

StatusOr<Literal> EvalInstruction(Context& context, const Instruction& i, const std::vector<const Literal*>& operands,
                                  const std::vector<const Literal*>& arguments, const CallFn& call) {
  const Opcode op = i.opcode;
  switch (op) {
    case Opcode::kRngGetAndUpdateState: {
      auto state = context.rng_states.try_emplace(&i, kRngStateInitialValue).first;
      return eval::EvalRngGetAndUpdateState(i, state->second);
    }
    case Opcode::kParameter:
      if (i.parameter_number >= static_cast<int64_t>(arguments.size())) {
        return InvalidArgument("no argument for parameter " + std::to_string(i.parameter_number));
      }
      return *arguments[i.parameter_number];
    case Opcode::kConstant:
      if (!i.literal || i.literal->elided()) {
        return Unimplemented("constant %" + i.name + " is elided ({...}); fill it before evaluating");
      }
      return *i.literal;
    case Opcode::kTuple: {
      std::vector<Literal> parts;
      for (const Literal* o : operands) parts.push_back(*o);
      return TupleLiteral(std::move(parts));
    }
    case Opcode::kGetTupleElement: {
      ANVIL_ASSIGN_OR_RETURN(int64_t index, IntAttribute(i, "index", std::nullopt));
      const auto& parts = operands[0]->tuple_elements();
      if (index < 0 || index >= static_cast<int64_t>(parts.size())) {
        return Internal("get-tuple-element " + std::to_string(index) + " of a value with " +
                        std::to_string(parts.size()) + " elements");
      }
      return parts[static_cast<size_t>(index)];
    }
    case Opcode::kConvert: return eval::EvalConvert(i, *operands[0]);
    case Opcode::kBitcastConvert: return eval::EvalBitcastConvert(i, *operands[0]);
    case Opcode::kSelect:
    case Opcode::kClamp:
      return eval::EvalElementwise(i, operands);
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kBitcast: case Opcode::kTranspose:
    case Opcode::kSlice: case Opcode::kReverse: case Opcode::kConcatenate: case Opcode::kPad:
    case Opcode::kIota: case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice: case Opcode::kGather:
      return eval::EvalShapeOp(i, operands);
    case Opcode::kReduce: return eval::EvalReduce(i, operands, call);
    case Opcode::kReduceWindow: return eval::EvalReduceWindow(i, operands, call);
    case Opcode::kDot: return eval::EvalDot(i, *operands[0], *operands[1]);
    case Opcode::kRaggedDot: return eval::EvalRaggedDot(i, *operands.at(0), *operands.at(1), *operands.at(2));
    case Opcode::kSort: return eval::EvalSort(i, operands, call);
    case Opcode::kMap: return eval::EvalMap(i, operands, call);
    case Opcode::kScatter: return eval::EvalScatter(i, operands, call);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return eval::EvalBatchNorm(i, operands);
    case Opcode::kConvolution: return eval::EvalConvolution(i, *operands[0], *operands[1]);
    case Opcode::kTriangularSolve: return eval::EvalTriangularSolve(i, *operands[0], *operands[1]);
    case Opcode::kCholesky: return eval::EvalCholesky(i, *operands[0]);
    case Opcode::kFft: return eval::EvalFft(i, *operands[0]);
    case Opcode::kTopK: return eval::EvalTopK(i, *operands[0]);
    case Opcode::kRng: return eval::EvalRng(i, *operands.at(0), *operands.at(1));
    case Opcode::kRngBitGenerator: return eval::EvalRngBitGenerator(i, *operands[0]);
    case Opcode::kSelectAndScatter: return eval::EvalSelectAndScatter(i, operands, call);
    case Opcode::kCall:
    case Opcode::kFusion:  // a fusion computes what its fused computation computes
      return call(*i.called_computations.at(0), operands);
    case Opcode::kWhile: {
      const Attribute* ca = i.FindAttribute("condition");
      const Attribute* ba = i.FindAttribute("body");
      const bool cond_first = ca < ba;
      const Computation& cond = *i.called_computations.at(cond_first ? 0 : 1);
      const Computation& body = *i.called_computations.at(cond_first ? 1 : 0);
      Literal state = *operands[0];
      while (true) {
        ANVIL_ASSIGN_OR_RETURN(Literal go, call(cond, {&state}));
        if (!go.GetUint(0)) return state;
        ANVIL_ASSIGN_OR_RETURN(state, call(body, {&state}));
      }
    }
    case Opcode::kConditional: {
      const Literal& selector = *operands[0];
      size_t branch;
      if (selector.shape().element_type() == ElementType::kPred) {
        branch = selector.GetUint(0) ? 0 : 1;  // true_computation first
      } else {
        int64_t index = selector.GetInt(0);
        const int64_t n = static_cast<int64_t>(i.called_computations.size());
        branch = static_cast<size_t>(index < 0 || index >= n ? n - 1 : index);  // out of range: the last
      }
      return call(*i.called_computations.at(branch), {operands.at(branch + 1)});
    }
    case Opcode::kOptimizationBarrier:
    case Opcode::kCopy:
      if (op == Opcode::kCopy && !operands[0]->shape().IsTuple()) break;
      return *operands[0];
    case Opcode::kCopyStart: {
      // An asynchronous copy: (destination, source, context); one device
      // has nothing to overlap, so the copy is done when it starts.
      if (!i.shape.IsTuple() || i.shape.tuple_elements().size() < 2) break;
      Literal started(i.shape);
      started.mutable_tuple_elements()[0] = *operands[0];
      started.mutable_tuple_elements()[1] = *operands[0];
      return started;
    }
    case Opcode::kCopyDone:
      if (!operands[0]->shape().IsTuple() || operands[0]->tuple_elements().empty()) break;
      return operands[0]->tuple_elements()[0];
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
      return op == Opcode::kAddDependency ? *operands[0] : Literal(Shape::Token());
    case Opcode::kGetDimensionSize: {
      ANVIL_ASSIGN_OR_RETURN(auto dims, IntListAttribute(i, "dimensions"));
      Literal size(i.shape);
      size.SetInt(0, operands[0]->shape().dim(static_cast<int>(dims.at(0))));
      return size;
    }
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      return ScalarU32(0);  // one replica, one partition
    case Opcode::kCustomCall: {
      std::string target = StringAttribute(i, "custom_call_target");
      if (target.rfind("check.", 0) == 0) return Literal(i.shape);  // checks are the runner's business
      if (target == "chlo.scan") return eval::EvalScan(i, operands, call);
      if (target.rfind("chlo.", 0) == 0) return eval::EvalChlo(i, target.substr(5), operands);
      return EvalNamedCustomCall(i, target, operands, call);
    }
    default:
      break;
  }
  if (IsElementwiseUnary(op) || IsElementwiseBinary(op)) return eval::EvalElementwise(i, operands);
  return Unimplemented("the evaluator does not run " + std::string(i.OpcodeSpelling()));
}

StatusOr<Literal> EvaluateIn(Context& context, const Computation& computation,
                             const std::vector<const Literal*>& arguments) {
  if (arguments.size() != computation.parameters.size()) {
    return InvalidArgument(computation.name + " takes " + std::to_string(computation.parameters.size()) +
                           " arguments, got " + std::to_string(arguments.size()));
  }
  CallFn call = [&context](const Computation& c, const std::vector<const Literal*>& args) {
    return EvaluateIn(context, c, args);
  };
  std::unordered_map<const Instruction*, Literal> values;
  // Each value is dropped after its last use, so a whole model's step holds
  // only what is live, not every intermediate at once.
  std::unordered_map<const Instruction*, int> uses_left;
  for (const auto& owned : computation.instructions) {
    for (const Instruction* o : owned->operands) ++uses_left[o];
  }
  std::vector<const Literal*> operands;
  for (const auto& owned : computation.instructions) {
    const Instruction& i = *owned;
    operands.clear();
    for (const Instruction* o : i.operands) operands.push_back(&values.at(o));
    auto value = EvalInstruction(context, i, operands, arguments, call);
    if (!value.ok()) {
      return Status(value.status().code(), "%" + i.name + " in " + computation.name + ": " + value.status().message());
    }
    for (const Instruction* o : i.operands) {
      if (--uses_left[o] == 0 && o != computation.root) values.erase(o);
    }
    values.emplace(&i, std::move(value).value());
  }
  return std::move(values.at(computation.root));
}

}  // namespace

StatusOr<Literal> Evaluate(const Computation& computation, const std::vector<const Literal*>& arguments) {
  Context context;
  return EvaluateIn(context, computation, arguments);
}

StatusOr<Literal> EvaluateInstruction(const Instruction& instruction, const std::vector<const Literal*>& operands) {
  Context context;
  CallFn call = [&context](const Computation& c, const std::vector<const Literal*>& args) {
    return EvaluateIn(context, c, args);
  };
  return EvalInstruction(context, instruction, operands, {}, call);
}

StatusOr<Literal> EvaluateModule(const Module& module, const std::vector<const Literal*>& arguments) {
  if (!module.entry) return InvalidArgument("module has no entry computation");
  return Evaluate(*module.entry, arguments);
}

bool EvaluatorRunsCustomCall(const Instruction& i) {
  const std::string target = StringAttribute(i, "custom_call_target");
  if (i.called_computations.size() == 1) return true;
  // Checks are the conformance runner's; CHLO ops go to EvalChlo.
  if (target.rfind("check.", 0) == 0 || target.rfind("chlo.", 0) == 0) return true;
  return PassThroughTargets().count(target) || MathTargets().count(target) || SpecialTargets().count(target) ||
         target == "xla_builder.math.NextAfter" || target == "xla_builder.prng.ScramblePhiloxKey" ||
         eval::IsBackendCustomCall(target);
}

}  // namespace anvil::hlo
