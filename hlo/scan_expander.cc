#include "hlo/scan_expander.h"

#include <cstdlib>

#include "hlo/attributes.h"

namespace anvil::hlo {
namespace {

// Appends instructions to one computation.
class Builder {
 public:
  Builder(std::vector<std::unique_ptr<Instruction>>& out, std::string prefix) : out_(out), prefix_(std::move(prefix)) {}

  Instruction* Add(Opcode op, Shape shape, std::vector<Instruction*> operands, std::vector<Attribute> attributes = {}) {
    auto i = std::make_unique<Instruction>();
    i->name = prefix_ + std::to_string(counter_++);
    i->opcode = op;
    i->shape = std::move(shape);
    i->operands = std::move(operands);
    i->attributes = std::move(attributes);
    out_.push_back(std::move(i));
    return out_.back().get();
  }
  Instruction* S32(int64_t v) {
    Instruction* c = Add(Opcode::kConstant, Shape::Scalar(ElementType::kS32), {});
    Literal l(c->shape);
    l.SetDouble(0, static_cast<double>(v));
    c->literal = std::move(l);
    return c;
  }
  Instruction* Zeros(const Shape& s) {
    Instruction* z = Add(Opcode::kConstant, Shape::Scalar(s.element_type()), {});
    z->literal = Literal(z->shape);  // zero bytes: zero of every type
    return Add(Opcode::kBroadcast, Shape(s.element_type(), s.dims()), {z}, {{"dimensions", "{}"}});
  }
  Instruction* Element(Instruction* tuple, size_t k) {
    return Add(Opcode::kGetTupleElement, tuple->shape.tuple_elements().at(k), {tuple}, {{"index", std::to_string(k)}});
  }
  Instruction* Parameter(const Shape& s) {
    Instruction* p = Add(Opcode::kParameter, s, {});
    p->parameter_number = 0;
    return p;
  }

 private:
  std::vector<std::unique_ptr<Instruction>>& out_;
  std::string prefix_;
  int counter_ = 0;
};

std::string ConfigOption(const std::string& config, const std::string& key) {
  size_t at = config.find(key + " = ");
  if (at == std::string::npos) return "";
  size_t start = at + key.size() + 3, end = config.find_first_of(",}", start);
  return config.substr(start, end - start);
}

Status Expand(Module& module, Instruction& scan, std::vector<std::unique_ptr<Instruction>>& out) {
  if (!scan.shape.IsTuple() || scan.called_computations.size() != 1 || scan.operands.empty()) {
    return InvalidArgument("chlo.scan %" + scan.name + " needs a body, inputs and a tuple result");
  }
  const std::string config = StringAttribute(scan, "backend_config");
  const int64_t dim = std::atoll(ConfigOption(config, "dimension").c_str());
  const bool reverse = ConfigOption(config, "is_reverse") == "true";
  const int rank = scan.operands[0]->shape.rank();
  const auto& results = scan.shape.tuple_elements();
  size_t m = 0;  // carries: the trailing results of lower rank than the inputs
  while (m < results.size() && results[results.size() - 1 - m].rank() < rank) ++m;
  const size_t n = scan.operands.size() - m, outputs = results.size() - m;
  if (dim < 0 || dim >= rank || scan.operands.size() < m) {
    return InvalidArgument("chlo.scan %" + scan.name + ": dimension " + std::to_string(dim) + " out of range");
  }
  const int64_t length = scan.operands[0]->shape.dim(static_cast<int>(dim));
  Computation* body = scan.called_computations[0];

  // The loop state: counter, inputs, outputs, carries.
  std::vector<Shape> state_shapes{Shape::Scalar(ElementType::kS32)};
  for (size_t k = 0; k < n; ++k) state_shapes.push_back(scan.operands[k]->shape);
  for (size_t o = 0; o < outputs; ++o) state_shapes.push_back(results[o]);
  for (size_t c = 0; c < m; ++c) state_shapes.push_back(results[outputs + c]);
  const Shape state = Shape::Tuple(state_shapes);

  auto make = [&](const std::string& suffix) {
    auto c = std::make_unique<Computation>();
    c->name = scan.name + "_" + suffix;
    return c;
  };
  // Condition: counter < length.
  auto cond = make("scan_condition");
  {
    Builder b(cond->instructions, "c");
    Instruction* p = b.Parameter(state);
    Instruction* go = b.Add(Opcode::kCompare, Shape::Scalar(ElementType::kPred), {b.Element(p, 0), b.S32(length)},
                            {{"direction", "LT"}});
    cond->parameters = {p};
    cond->root = go;
  }
  // Body: slice at t, call the scan body, write the step's outputs back.
  auto step = make("scan_step");
  {
    Builder b(step->instructions, "s");
    Instruction* p = b.Parameter(state);
    Instruction* counter = b.Element(p, 0);
    Instruction* t = reverse ? b.Add(Opcode::kSubtract, Shape::Scalar(ElementType::kS32), {b.S32(length - 1), counter})
                             : counter;
    std::vector<Instruction*> starts;
    for (int d = 0; d < rank; ++d) starts.push_back(d == dim ? t : b.S32(0));
    std::vector<Instruction*> args;
    for (size_t k = 0; k < n; ++k) {
      Instruction* input = b.Element(p, 1 + k);
      std::vector<int64_t> sizes = input->shape.dims();
      sizes[dim] = 1;
      std::vector<Instruction*> operands{input};
      operands.insert(operands.end(), starts.begin(), starts.end());
      Instruction* slice = b.Add(Opcode::kDynamicSlice, Shape(input->shape.element_type(), sizes), operands,
                                 {{"dynamic_slice_sizes", FormatIntList(sizes)}});
      std::vector<int64_t> dropped = input->shape.dims();
      dropped.erase(dropped.begin() + dim);
      args.push_back(b.Add(Opcode::kReshape, Shape(input->shape.element_type(), dropped), {slice}));
    }
    for (size_t c = 0; c < m; ++c) args.push_back(b.Element(p, 1 + n + outputs + c));
    Instruction* call = b.Add(Opcode::kCall, body->ResultShape(), args, {{"to_apply", "%" + body->name}});
    call->called_computations = {body};
    auto part = [&](size_t k) { return call->shape.IsTuple() ? b.Element(call, k) : call; };
    std::vector<Instruction*> next{b.Add(Opcode::kAdd, Shape::Scalar(ElementType::kS32), {counter, b.S32(1)})};
    for (size_t k = 0; k < n; ++k) next.push_back(b.Element(p, 1 + k));
    for (size_t o = 0; o < outputs; ++o) {
      Instruction* full = b.Element(p, 1 + n + o);
      std::vector<int64_t> dims = full->shape.dims();
      dims[dim] = 1;
      Instruction* piece = b.Add(Opcode::kReshape, Shape(full->shape.element_type(), dims), {part(o)});
      std::vector<Instruction*> operands{full, piece};
      operands.insert(operands.end(), starts.begin(), starts.end());
      next.push_back(b.Add(Opcode::kDynamicUpdateSlice, full->shape, operands));
    }
    for (size_t c = 0; c < m; ++c) next.push_back(part(outputs + c));
    step->parameters = {p};
    step->root = b.Add(Opcode::kTuple, state, next);
  }
  Computation* cond_c = module.AddComputation(std::move(cond));
  Computation* step_c = module.AddComputation(std::move(step));

  Builder b(out, scan.name + ".scan");
  std::vector<Instruction*> init{b.S32(0)};
  for (size_t k = 0; k < n; ++k) init.push_back(scan.operands[k]);
  for (size_t o = 0; o < outputs; ++o) init.push_back(b.Zeros(results[o]));
  for (size_t c = 0; c < m; ++c) init.push_back(scan.operands[n + c]);
  Instruction* loop = b.Add(Opcode::kWhile, state, {b.Add(Opcode::kTuple, state, init)},
                            {{"condition", "%" + cond_c->name}, {"body", "%" + step_c->name}});
  loop->called_computations = {cond_c, step_c};
  std::vector<Instruction*> parts;
  for (size_t o = 0; o < outputs; ++o) parts.push_back(b.Element(loop, 1 + n + o));
  for (size_t c = 0; c < m; ++c) parts.push_back(b.Element(loop, 1 + n + outputs + c));
  scan.opcode = Opcode::kTuple;
  scan.operands = parts;
  scan.attributes.clear();
  scan.called_computations.clear();
  return OkStatus();
}

}  // namespace

Status ExpandScans(Module& module) {
  const size_t count = module.computations.size();
  for (size_t c = 0; c < count; ++c) {
    Computation& computation = *module.computations[c];
    bool any = false;
    for (const auto& i : computation.instructions) {
      any |= i->opcode == Opcode::kCustomCall && StringAttribute(*i, "custom_call_target") == "chlo.scan";
    }
    if (!any) continue;
    std::vector<std::unique_ptr<Instruction>> out;
    for (auto& owned : computation.instructions) {
      if (owned->opcode == Opcode::kCustomCall && StringAttribute(*owned, "custom_call_target") == "chlo.scan") {
        ANVIL_RETURN_IF_ERROR(Expand(module, *owned, out));
      }
      out.push_back(std::move(owned));
    }
    computation.instructions = std::move(out);
  }
  return OkStatus();
}

}  // namespace anvil::hlo
