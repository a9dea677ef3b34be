#include "hlo/rng_bit_generator_expander.h"

#include <string>
#include <vector>

#include "hlo/attributes.h"

namespace anvil::hlo {
namespace {

constexpr ElementType kU32 = ElementType::kU32;
constexpr ElementType kU64 = ElementType::kU64;

// The instructions of one generator, added before it to `out`.
class Expansion {
 public:
  Expansion(Instruction& rng, std::vector<std::unique_ptr<Instruction>>& out) : rng_(rng), out_(out) {}

  // False when the generator is left alone (an output this does not write).
  StatusOr<bool> Run() {
    if (!rng_.shape.IsTuple() || rng_.shape.tuple_elements().size() != 2 || rng_.operands.size() != 1) {
      return InvalidArgument("rng-bit-generator %" + rng_.name + " must take a state and produce (state, bits)");
    }
    state_ = rng_.operands[0];
    bits_shape_ = rng_.shape.tuple_elements()[1];
    const ElementType t = bits_shape_.element_type();
    width_ = Info(t).bit_width;
    if (!state_->shape.IsArray() || state_->shape.element_type() != kU64 || state_->shape.rank() != 1 ||
        (width_ != 8 && width_ != 16 && width_ != 32 && width_ != 64) || IsComplex(t) || IsPred(t)) {
      return false;
    }
    words_ = state_->shape.dim(0);
    std::string algorithm = StringAttribute(rng_, "algorithm");
    if (algorithm.empty() || algorithm == "rng_default") algorithm = "rng_philox";
    if (words_ < 2) return InvalidArgument("rng-bit-generator %" + rng_.name + " needs a state of at least 2 u64 words");
    key_ = Word(0);
    k0_ = Low(key_);
    k1_ = High(key_);
    if (algorithm == "rng_three_fry") {
      ThreeFry();
    } else if (algorithm == "rng_philox") {
      Philox();
    } else {
      return InvalidArgument("unknown rng-bit-generator algorithm '" + algorithm + "'");
    }
    return true;
  }

 private:
  Instruction* Add(Opcode op, const Shape& shape, std::vector<Instruction*> operands,
                   std::vector<Attribute> attributes = {}) {
    auto i = std::make_unique<Instruction>();
    i->name = rng_.name + ".rbg" + std::to_string(counter_++);
    i->opcode = op;
    i->shape = shape;
    i->operands = std::move(operands);
    i->attributes = std::move(attributes);
    i->line = rng_.line;
    i->column = rng_.column;
    out_.push_back(std::move(i));
    return out_.back().get();
  }
  Instruction* Constant(ElementType t, uint64_t v) {
    Instruction* c = Add(Opcode::kConstant, Shape::Scalar(t), {});
    Literal l(c->shape);
    l.SetUint(0, v);
    c->literal = std::move(l);
    return c;
  }
  static Shape Of(ElementType t, const Instruction* like) { return Shape(t, like->shape.dims()); }
  // a op b, a scalar operand broadcast to the other's dimensions.
  Instruction* Binary(Opcode op, Instruction* a, Instruction* b) {
    if (a->shape.rank() == 0 && b->shape.rank() > 0) a = Splat(a, b->shape.dims());
    if (b->shape.rank() == 0 && a->shape.rank() > 0) b = Splat(b, a->shape.dims());
    return Add(op, a->shape, {a, b});
  }
  Instruction* Splat(Instruction* scalar, const std::vector<int64_t>& dims) {
    return Add(Opcode::kBroadcast, Shape(scalar->shape.element_type(), dims), {scalar}, {{"dimensions", "{}"}});
  }
  Instruction* Convert(Instruction* x, ElementType t) { return Add(Opcode::kConvert, Of(t, x), {x}); }
  Instruction* Bitcast(Instruction* x, ElementType t) {
    return x->shape.element_type() == t ? x : Add(Opcode::kBitcastConvert, Of(t, x), {x});
  }
  Instruction* Reshape(Instruction* x, std::vector<int64_t> dims) {
    return Add(Opcode::kReshape, Shape(x->shape.element_type(), std::move(dims)), {x});
  }
  Instruction* Iota(ElementType t, int64_t n) {
    return Add(Opcode::kIota, Shape(t, {n}), {}, {{"iota_dimension", "0"}});
  }
  // Word w of the state, a u64 scalar.
  Instruction* Word(int64_t w) {
    Instruction* s = Add(Opcode::kSlice, Shape(kU64, {1}), {state_}, {{"slice", FormatSlice({{w, w + 1, 1}})}});
    return Reshape(s, {});
  }
  Instruction* Low(Instruction* x) { return Convert(x, kU32); }  // a u64's low half (convert wraps)
  Instruction* High(Instruction* x) {
    return Convert(Binary(Opcode::kShiftRightLogical, x, Constant(kU64, 32)), kU32);
  }
  Instruction* Join(Instruction* low, Instruction* high) {
    return Binary(Opcode::kOr, Binary(Opcode::kShiftLeft, Convert(high, kU64), Constant(kU64, 32)), Convert(low, kU64));
  }
  Instruction* RotateLeft(Instruction* x, int r) {
    return Binary(Opcode::kOr, Binary(Opcode::kShiftLeft, x, Constant(kU32, r)),
                  Binary(Opcode::kShiftRightLogical, x, Constant(kU32, 32 - r)));
  }
  // Parts laid side by side along a new last dimension, then as one run:
  // element k of part j at k * parts + j.
  Instruction* Interleave(const std::vector<Instruction*>& parts) {
    const int64_t n = parts[0]->shape.dim(0), count = static_cast<int64_t>(parts.size());
    std::vector<Instruction*> columns;
    for (Instruction* p : parts) columns.push_back(Reshape(p, {n, 1}));
    Instruction* joined = Add(Opcode::kConcatenate, Shape(parts[0]->shape.element_type(), {n, count}), columns,
                              {{"dimensions", "{1}"}});
    return Reshape(joined, {n * count});
  }
  // The state with word 1 (and word 2) replaced.
  Instruction* NewState(Instruction* word1, Instruction* word2) {
    std::vector<Instruction*> pieces = {Reshape(key_, {1}), Reshape(word1, {1})};
    int64_t next = 2;
    if (word2) {
      pieces.push_back(Reshape(word2, {1}));
      next = 3;
    }
    if (next < words_) {
      pieces.push_back(Add(Opcode::kSlice, Shape(kU64, {words_ - next}), {state_},
                           {{"slice", FormatSlice({{next, words_, 1}})}}));
    }
    return Add(Opcode::kConcatenate, state_->shape, pieces, {{"dimensions", "{0}"}});
  }
  // 32- or 64-bit words, one per element in order, as the output's type.
  Instruction* Bits(Instruction* words) {
    const ElementType t = bits_shape_.element_type();
    Instruction* flat = words;
    if (width_ < 32) {
      flat = Convert(words, width_ == 16 ? ElementType::kU16 : ElementType::kU8);  // the low bits
    }
    return Reshape(Bitcast(flat, t), bits_shape_.dims());
  }

  // Threefry-2x32, 20 rounds, over counters (x0, x1) of one shape.
  std::pair<Instruction*, Instruction*> ThreeFry2x32(Instruction* x0, Instruction* x1) {
    static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
    Instruction* k2 = Binary(Opcode::kXor, Binary(Opcode::kXor, Constant(kU32, 0x1BD11BDAu), k0_), k1_);
    Instruction* ks[3] = {k0_, k1_, k2};
    x0 = Binary(Opcode::kAdd, x0, ks[0]);
    x1 = Binary(Opcode::kAdd, x1, ks[1]);
    for (int group = 0; group < 5; ++group) {
      for (int r = 0; r < 4; ++r) {
        x0 = Binary(Opcode::kAdd, x0, x1);
        x1 = Binary(Opcode::kXor, RotateLeft(x1, kRotations[(group % 2) * 4 + r]), x0);
      }
      x0 = Binary(Opcode::kAdd, x0, ks[(group + 1) % 3]);
      x1 = Binary(Opcode::kAdd, x1,
                  Binary(Opcode::kAdd, ks[(group + 2) % 3], Constant(kU32, static_cast<uint64_t>(group + 1))));
    }
    return {x0, x1};
  }

  // THREE_FRY: word 1 is a 64-bit counter. Elements of 32 bits or fewer
  // take both words of a counter for neighbours along one dimension (the
  // first even one, else the largest): the words are computed over the
  // shape with that dimension halved and interleaved along it. 64-bit
  // elements take one counter each.
  void ThreeFry() {
    Instruction* counter = Word(1);
    const std::vector<int64_t>& dims = bits_shape_.dims();
    const int rank = static_cast<int>(dims.size());
    if (width_ == 64) {
      const int64_t n = bits_shape_.ElementCount();
      Instruction* c = Binary(Opcode::kAdd, Iota(kU64, n), counter);
      auto [x0, x1] = ThreeFry2x32(Low(c), High(c));
      Finish(NewState(Binary(Opcode::kAdd, counter, Constant(kU64, static_cast<uint64_t>(n))), nullptr),
             Bits(Join(x0, x1)));
      return;
    }
    int split = -1;
    for (int d = 0; d < rank && split < 0; ++d) {
      if (dims[d] % 2 == 0) split = d;
    }
    if (split < 0) {
      for (int d = 0; d < rank; ++d) {
        if (split < 0 || dims[d] > dims[split]) split = d;
      }
    }
    std::vector<int64_t> half = dims;
    if (rank > 0) half[split] = (dims[split] + 1) / 2;
    int64_t half_count = 1;
    for (int64_t d : half) half_count *= d;
    Instruction* c = Binary(Opcode::kAdd, Iota(kU64, half_count), counter);
    auto [x0, x1] = ThreeFry2x32(Low(c), High(c));
    Instruction* words = x0;
    if (rank > 0) {
      // [outer, h, inner] twice -> [outer, h, 2, inner] -> [outer, 2h, inner], cut to dims[split].
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < split; ++d) outer *= dims[d];
      for (int d = split + 1; d < rank; ++d) inner *= dims[d];
      const int64_t h = half[split];
      Instruction* a = Reshape(x0, {outer, h, 1, inner});
      Instruction* b = Reshape(x1, {outer, h, 1, inner});
      Instruction* both = Add(Opcode::kConcatenate, Shape(kU32, {outer, h, 2, inner}), {a, b}, {{"dimensions", "{2}"}});
      words = Reshape(both, {outer, 2 * h, inner});
      if (2 * h != dims[split]) {
        words = Add(Opcode::kSlice, Shape(kU32, {outer, dims[split], inner}), {words},
                    {{"slice", FormatSlice({{0, outer, 1}, {0, dims[split], 1}, {0, inner, 1}})}});
      }
    }
    Finish(NewState(Binary(Opcode::kAdd, counter, Constant(kU64, static_cast<uint64_t>(half_count))), nullptr),
           Bits(words));
  }

  // PHILOX: a 128-bit counter (words 1 and 2, low first; given two words,
  // word 1 and then the key), four 32-bit words (or two 64-bit ones) per
  // counter value, filling consecutive elements.
  void Philox() {
    const int64_t n = bits_shape_.ElementCount();
    const int64_t per_block = width_ == 64 ? 2 : 4;
    const int64_t blocks = (n + per_block - 1) / per_block;
    Instruction* low = Word(1);
    Instruction* high = words_ >= 3 ? Word(2) : key_;
    auto plus = [&](Instruction* lo, Instruction* hi, Instruction* b) -> std::pair<Instruction*, Instruction*> {
      Instruction* sum = Binary(Opcode::kAdd, lo, b);
      Instruction* lo_b = b->shape.rank() ? Splat(lo, b->shape.dims()) : lo;
      Instruction* wrapped = Add(Opcode::kCompare, Of(ElementType::kPred, sum), {sum, lo_b}, {{"direction", "LT"}});
      return {sum, Binary(Opcode::kAdd, hi, Convert(wrapped, kU64))};
    };
    auto [c_low, c_high] = plus(low, high, Iota(kU64, blocks));
    Instruction* x[4] = {Low(c_low), High(c_low), Low(c_high), High(c_high)};
    Instruction* key0 = k0_;
    Instruction* key1 = k1_;
    for (int round = 0; round < 10; ++round) {
      Instruction* p0 = Binary(Opcode::kMultiply, Convert(x[0], kU64), Constant(kU64, 0xD2511F53u));
      Instruction* p1 = Binary(Opcode::kMultiply, Convert(x[2], kU64), Constant(kU64, 0xCD9E8D57u));
      Instruction* y0 = Binary(Opcode::kXor, Binary(Opcode::kXor, High(p1), x[1]), key0);
      Instruction* y2 = Binary(Opcode::kXor, Binary(Opcode::kXor, High(p0), x[3]), key1);
      x[0] = y0;
      x[1] = Low(p1);
      x[2] = y2;
      x[3] = Low(p0);
      key0 = Binary(Opcode::kAdd, key0, Constant(kU32, 0x9E3779B9u));
      key1 = Binary(Opcode::kAdd, key1, Constant(kU32, 0xBB67AE85u));
    }
    Instruction* words = per_block == 4 ? Interleave({x[0], x[1], x[2], x[3]})
                                        : Interleave({Join(x[0], x[1]), Join(x[2], x[3])});
    if (blocks * per_block != n) {
      words = Add(Opcode::kSlice, Shape(words->shape.element_type(), {n}), {words},
                  {{"slice", FormatSlice({{0, n, 1}})}});
    }
    auto [next_low, next_high] = plus(low, high, Constant(kU64, static_cast<uint64_t>(blocks)));
    Finish(NewState(next_low, words_ >= 3 ? next_high : nullptr), Bits(words));
  }

  void Finish(Instruction* state, Instruction* bits) {
    rng_.opcode = Opcode::kTuple;
    rng_.operands = {state, bits};
    rng_.attributes.clear();
  }

  Instruction& rng_;
  std::vector<std::unique_ptr<Instruction>>& out_;
  Instruction* state_ = nullptr;
  Instruction *key_ = nullptr, *k0_ = nullptr, *k1_ = nullptr;
  Shape bits_shape_;
  int width_ = 32;
  int64_t words_ = 0;
  int counter_ = 0;
};

}  // namespace

Status ExpandRngBitGenerators(Module& module) {
  for (auto& computation : module.computations) {
    bool any = false;
    for (const auto& i : computation->instructions) any |= i->opcode == Opcode::kRngBitGenerator;
    if (!any) continue;
    std::vector<std::unique_ptr<Instruction>> out;
    for (auto& owned : computation->instructions) {
      if (owned->opcode == Opcode::kRngBitGenerator) {
        std::vector<std::unique_ptr<Instruction>> added;
        ANVIL_ASSIGN_OR_RETURN(bool expanded, Expansion(*owned, added).Run());
        if (expanded) {
          for (auto& a : added) out.push_back(std::move(a));
        }
      }
      out.push_back(std::move(owned));
    }
    computation->instructions = std::move(out);
  }
  return OkStatus();
}

}  // namespace anvil::hlo
