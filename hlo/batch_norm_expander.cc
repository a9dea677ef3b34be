#include "hlo/batch_norm_expander.h"

#include <cstdlib>
#include <map>

#include "hlo/attributes.h"

namespace anvil::hlo {
namespace {

class Expansion {
 public:
  Expansion(Module& module, Instruction& bn, std::vector<std::unique_ptr<Instruction>>& out,
            std::map<ElementType, Computation*>& adders)
      : module_(module), bn_(bn), out_(out), adders_(adders) {}

  Status Run() {
    ANVIL_ASSIGN_OR_RETURN(feature_, IntAttribute(bn_, "feature_index", std::nullopt));
    epsilon_ = std::strtod(StringAttribute(bn_, "epsilon").c_str(), nullptr);
    const Instruction* x = bn_.operands.at(0);
    if (!x->shape.IsArray() || feature_ < 0 || feature_ >= x->shape.rank()) {
      return InvalidArgument("%" + bn_.name + " has no feature dimension " + std::to_string(feature_));
    }
    type_ = x->shape.element_type();
    shape_ = Shape(type_, x->shape.dims());
    feature_shape_ = Shape(type_, {x->shape.dim(static_cast<int>(feature_))});
    for (int d = 0; d < shape_.rank(); ++d) {
      if (d != feature_) reduced_.push_back(d);
    }
    count_ = static_cast<double>(shape_.ElementCount()) / static_cast<double>(std::max<int64_t>(feature_shape_.dim(0), 1));
    switch (bn_.opcode) {
      case Opcode::kBatchNormTraining: return Training();
      case Opcode::kBatchNormInference: return Inference();
      default: return Grad();
    }
  }

 private:
  Instruction* Add(Opcode op, const Shape& shape, std::vector<Instruction*> operands,
                   std::vector<Attribute> attributes = {}) {
    auto i = std::make_unique<Instruction>();
    i->name = bn_.name + ".bn" + std::to_string(counter_++);
    i->opcode = op;
    i->shape = shape;
    i->operands = std::move(operands);
    i->attributes = std::move(attributes);
    i->line = bn_.line;
    i->column = bn_.column;
    out_.push_back(std::move(i));
    return out_.back().get();
  }
  Instruction* Scalar(double v) {
    auto i = std::make_unique<Instruction>();
    i->name = bn_.name + ".bn" + std::to_string(counter_++);
    i->opcode = Opcode::kConstant;
    i->shape = Shape::Scalar(type_);
    Literal l(i->shape);
    l.SetDouble(0, v);
    i->literal = std::move(l);
    out_.push_back(std::move(i));
    return out_.back().get();
  }
  Instruction* Full(double v) { return Add(Opcode::kBroadcast, shape_, {Scalar(v)}, {{"dimensions", "{}"}}); }
  Instruction* Spread(Instruction* per_feature) {
    return Add(Opcode::kBroadcast, shape_, {per_feature}, {{"dimensions", FormatIntList({feature_})}});
  }
  Instruction* Sum(Instruction* x) {
    Instruction* r = Add(Opcode::kReduce, feature_shape_, {x, Scalar(0)},
                         {{"dimensions", FormatIntList(reduced_)}, {"to_apply", "%" + Adder()->name}});
    r->called_computations = {Adder()};
    return r;
  }
  Instruction* Binary(Opcode op, Instruction* a, Instruction* b) { return Add(op, a->shape, {a, b}); }
  Instruction* Mean(Instruction* x) {
    Instruction* n = Add(Opcode::kBroadcast, feature_shape_, {Scalar(count_)}, {{"dimensions", "{}"}});
    return Binary(Opcode::kDivide, Sum(x), n);
  }
  // 1 / sqrt(var + epsilon), per feature.
  Instruction* InverseDeviation(Instruction* var) {
    Instruction* eps = Add(Opcode::kBroadcast, feature_shape_, {Scalar(epsilon_)}, {{"dimensions", "{}"}});
    return Add(Opcode::kRsqrt, feature_shape_, {Binary(Opcode::kAdd, var, eps)});
  }
  Computation* Adder() {
    Computation*& c = adders_[type_];
    if (c) return c;
    auto add = std::make_unique<Computation>();
    add->name = "batch_norm_add_" + std::string(HloName(type_));
    auto p0 = std::make_unique<Instruction>();
    p0->name = "a";
    p0->shape = Shape::Scalar(type_);
    p0->parameter_number = 0;
    auto p1 = std::make_unique<Instruction>(*p0);
    p1->name = "b";
    p1->parameter_number = 1;
    auto sum = std::make_unique<Instruction>();
    sum->name = "sum";
    sum->opcode = Opcode::kAdd;
    sum->shape = Shape::Scalar(type_);
    sum->operands = {p0.get(), p1.get()};
    add->parameters = {p0.get(), p1.get()};
    add->root = sum.get();
    add->instructions.push_back(std::move(p0));
    add->instructions.push_back(std::move(p1));
    add->instructions.push_back(std::move(sum));
    c = module_.AddComputation(std::move(add));
    return c;
  }
  void Become(Opcode op, std::vector<Instruction*> operands) {
    bn_.opcode = op;
    bn_.operands = std::move(operands);
    bn_.attributes.clear();
    bn_.called_computations.clear();
  }

  // (x - mean) * scale / sqrt(var + eps) + offset, with the batch's mean and
  // variance (two passes: the variance sums squared deviations).
  Status Training() {
    Instruction* x = bn_.operands[0];
    Instruction* mean = Mean(x);
    Instruction* centered = Binary(Opcode::kSubtract, x, Spread(mean));
    Instruction* var = Mean(Binary(Opcode::kMultiply, centered, centered));
    Instruction* factor = Binary(Opcode::kMultiply, bn_.operands[1], InverseDeviation(var));
    Instruction* y = Binary(Opcode::kAdd, Binary(Opcode::kMultiply, centered, Spread(factor)), Spread(bn_.operands[2]));
    Become(Opcode::kTuple, {y, mean, var});
    return OkStatus();
  }
  Status Inference() {
    Instruction* x = bn_.operands[0];
    Instruction* factor = Binary(Opcode::kMultiply, bn_.operands[1], InverseDeviation(bn_.operands[4]));
    Instruction* centered = Binary(Opcode::kSubtract, x, Spread(bn_.operands[3]));
    Instruction* scaled = Binary(Opcode::kMultiply, centered, Spread(factor));
    Become(Opcode::kAdd, {scaled, Spread(bn_.operands[2])});
    return OkStatus();
  }
  // grad_offset = sum(dy), grad_scale = sum(dy * xhat),
  // dx = scale * rstd / N * (N dy - grad_offset - xhat * grad_scale).
  Status Grad() {
    Instruction* x = bn_.operands[0];
    Instruction* scale = bn_.operands[1];
    Instruction* mean = bn_.operands[2];
    Instruction* var = bn_.operands[3];
    Instruction* dy = bn_.operands[4];
    Instruction* rstd = InverseDeviation(var);
    Instruction* xhat = Binary(Opcode::kMultiply, Binary(Opcode::kSubtract, x, Spread(mean)), Spread(rstd));
    Instruction* grad_offset = Sum(dy);
    Instruction* grad_scale = Sum(Binary(Opcode::kMultiply, dy, xhat));
    Instruction* n = Add(Opcode::kBroadcast, feature_shape_, {Scalar(count_)}, {{"dimensions", "{}"}});
    Instruction* k = Binary(Opcode::kDivide, Binary(Opcode::kMultiply, scale, rstd), n);
    Instruction* inner = Binary(Opcode::kSubtract,
                                Binary(Opcode::kSubtract, Binary(Opcode::kMultiply, dy, Full(count_)), Spread(grad_offset)),
                                Binary(Opcode::kMultiply, xhat, Spread(grad_scale)));
    Instruction* dx = Binary(Opcode::kMultiply, Spread(k), inner);
    Become(Opcode::kTuple, {dx, grad_scale, grad_offset});
    return OkStatus();
  }

  Module& module_;
  Instruction& bn_;
  std::vector<std::unique_ptr<Instruction>>& out_;
  std::map<ElementType, Computation*>& adders_;
  int64_t feature_ = 0;
  double epsilon_ = 0, count_ = 1;
  ElementType type_ = ElementType::kF32;
  Shape shape_, feature_shape_;
  std::vector<int64_t> reduced_;
  int counter_ = 0;
};

}  // namespace

Status ExpandBatchNorm(Module& module) {
  std::map<ElementType, Computation*> adders;
  const size_t count = module.computations.size();  // adders added below are not expanded
  for (size_t c = 0; c < count; ++c) {
    Computation& computation = *module.computations[c];
    bool any = false;
    for (const auto& i : computation.instructions) {
      any |= i->opcode == Opcode::kBatchNormTraining || i->opcode == Opcode::kBatchNormInference ||
             i->opcode == Opcode::kBatchNormGrad;
    }
    if (!any) continue;
    std::vector<std::unique_ptr<Instruction>> out;
    for (auto& owned : computation.instructions) {
      Instruction& i = *owned;
      if (i.opcode == Opcode::kBatchNormTraining || i.opcode == Opcode::kBatchNormInference ||
          i.opcode == Opcode::kBatchNormGrad) {
        ANVIL_RETURN_IF_ERROR(Expansion(module, i, out, adders).Run());
      }
      out.push_back(std::move(owned));
    }
    computation.instructions = std::move(out);
  }
  return OkStatus();
}

}  // namespace anvil::hlo
