#include "plugins/gpu/kernel_emitter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "hlo/attributes.h"
#include "hlo/kernel_index.h"
#include "hlo/patterns.h"
#include "hlo/rng_values.h"
#include "plugins/gpu/element_types.h"
#include "plugins/gpu/scalar_emitter.h"

namespace anvil::gpu {

using hlo::ElementType;
using hlo::Instruction;
using hlo::KernelKind;
using hlo::Opcode;

namespace {

std::string U(int64_t v) { return hlo::IndexLiteral(v); }
std::string I(int64_t v) { return "int(" + std::to_string(v) + ")"; }

int64_t Product(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The most elements one invocation of a tree reduction reads (Reduce).
constexpr int64_t kTreeReads = 1024;
// The length of the chunks a long scan is cut into (ChunkedScan).
constexpr int64_t kScanChunk = 1024;
// The most steps of a serial loop one pass runs (Scatter): lavapipe ends
// an invocation's loops after 65535 iterations in all.
constexpr int64_t kSerialSteps = 32768;
// The longest row Sort sorts by insertion (at most 32640 compares in its
// one invocation); longer ones take LongSort's network.
constexpr int64_t kInsertionRow = 256;
// The longest contraction one invocation of a dot walks (Dot): longer ones
// are cut into slices of this many, summed by a second pass.
constexpr int64_t kDotSlice = 8192;

// The element type whose storage holds a register of `t`'s exactly: a
// partial result kept in scratch between two passes, unrounded.
ElementType RegisterElementType(ElementType t) {
  const std::string reg = RegisterType(t);
  if (reg == "float") return ElementType::kF32;
  if (reg == "int") return ElementType::kS32;
  if (reg == "uint") return ElementType::kU32;
  return t;  // bool (pred), 64-bit integers, double and complex store as they are
}

// Array leaves of a shape, in order.
void Leaves(const hlo::Shape& s, std::vector<hlo::Shape>& out) {
  if (s.IsTuple()) {
    for (const hlo::Shape& e : s.tuple_elements()) Leaves(e, out);
  } else {
    out.push_back(s);
  }
}

class Emitter {
 public:
  Emitter(const hlo::KernelSpec& k, const KernelDialect& d, const KernelOptions& o) : k_(k), d_(d), o_(o), lib_(d) {}

  hlo::StatusOr<KernelSource> Run() {
    result_.inputs = k_.inputs;
    Leaves(k_.root->shape, result_.outputs);
    for (const hlo::Shape& s : result_.outputs) ANVIL_RETURN_IF_ERROR(CheckShape(s, *k_.root));
    for (size_t n = 0; n < k_.inputs.size(); ++n) {
      const Instruction* in = k_.inputs[n];
      if (!in->shape.IsArray()) return NotYet(*in, "a tuple read by a kernel");
      ANVIL_RETURN_IF_ERROR(CheckShape(in->shape, *in));
      const std::string T = RegisterType(in->shape.element_type());
      const std::string name = "e" + std::to_string(fn_.size());
      nodes_ += d_.ElementFunction(
          T, name, "return " + LoadExpr(in->shape.element_type(), At(static_cast<int>(n), in->shape.element_type(), "i")) + ";");
      fn_[in] = name;
    }
    for (const Instruction* f : k_.fused) ANVIL_RETURN_IF_ERROR(DefineNode(f));
    switch (k_.kind) {
      case KernelKind::kLoop: return Loop();
      case KernelKind::kReduce: return Reduce();
      case KernelKind::kDot: return Dot();
      case KernelKind::kConvolution: return Convolution();
      case KernelKind::kReduceWindow: return ReduceWindow();
      case KernelKind::kSelectAndScatter: return SelectAndScatter();
      case KernelKind::kScatter: return Scatter();
      case KernelKind::kSort: return Sort();
      case KernelKind::kTriangularSolve: return TriangularSolve();
      case KernelKind::kFft: return Fft();
      case KernelKind::kCholesky: return Cholesky();
      case KernelKind::kQr: return Qr();
      case KernelKind::kHouseholderProduct: return HouseholderProduct();
      case KernelKind::kEigh: return Eigh();
      case KernelKind::kTopK: return TopK();
      case KernelKind::kRaggedDot: return RaggedDot();
    }
    return NotYet(*k_.root, "");
  }

 private:
  hlo::Status NotYet(const Instruction& i, const std::string& why) {
    return hlo::Unimplemented(d_.Compiler() + " cannot compile %" + i.name + " (" + std::string(i.OpcodeSpelling()) +
                              " " + i.shape.ToString(false) + ") yet" + (why.empty() ? "" : ": " + why));
  }
  hlo::Status CheckShape(const hlo::Shape& s, const Instruction& i) {
    if (!s.IsArray()) return NotYet(i, "nested tuples");
    ANVIL_RETURN_IF_ERROR(d_.CheckType(s.element_type()));
    if (s.ElementCount() >= (int64_t{1} << 31)) return NotYet(i, "2^31 elements or more in one array");
    return hlo::OkStatus();
  }

  // Element `index` of table entry `n` (an input, or output n - inputs).
  std::string At(int n, ElementType t, const std::string& index) {
    const std::string storage = StorageType(t);
    buffers_[n] = storage;
    return d_.Element(n, storage, index);
  }
  std::string Out(size_t k, const std::string& index) {
    return At(static_cast<int>(k_.inputs.size() + k), result_.outputs[k].element_type(), index);
  }
  std::string Store(size_t k, const std::string& index, const std::string& value) {
    return Out(k, index) + " = " + StoreExpr(result_.outputs[k].element_type(), value) + ";";
  }
  std::string Read(const Instruction* o, const std::string& index) { return fn_.at(o) + "(" + index + ")"; }
  std::string Reg(const Instruction* i) { return RegisterType(i->shape.element_type()); }

  hlo::StatusOr<std::string> Combiner(const hlo::Computation& c) {
    return EmitScalarComputation(c, lib_, functions_, emitted_);
  }

  // Defines `T eN(uint i)`, the element function of fused instruction `i`.
  hlo::Status DefineNode(const Instruction* i) {
    const std::string name = "e" + std::to_string(fn_.size());
    const std::string T = Reg(i);
    if (i->shape.IsArray()) ANVIL_RETURN_IF_ERROR(CheckShape(i->shape, *i));
    std::string body;
    auto status = NodeBody(*i, body);
    if (!status.ok()) {
      if (status.message().find("%" + i->name) != std::string::npos) return status;
      return NotYet(*i, status.message());
    }
    nodes_ += d_.ElementFunction(T, name, body);
    fn_[i] = name;
    return hlo::OkStatus();
  }

  // rng (rng_uniform, rng_normal): element i from its index, the draws of
  // hlo/rng_values (THREE_FRY keyed by the instruction's name), so the
  // values are the evaluator's and the CPU plugin's: floats from a draw's
  // top mantissa bits, scaled in double and rounded once; rng_normal by
  // Box-Muller on pairs of draws (2j, 2j + 1), sine for the even element
  // and cosine for the odd, with the generator's double sin, cos and log
  // (within an ulp of libm's); integers a + draw mod (b - a), in 64 bits.
  hlo::Status RngBody(const Instruction& i, std::string& b) {
    ANVIL_ASSIGN_OR_RETURN(hlo::RngValues v, hlo::RngValues::Of(i));
    const ElementType t = i.shape.element_type();
    if (v.is_float() && !d_.HasFloat64()) {
      return hlo::Unimplemented("rng computes its floats in double, which this device lacks");
    }
    if (functions_.find("uint rng_bits32(") == std::string::npos) {
      // Threefry-2x32, 20 rounds, XLA's key schedule (hlo::ThreeFry2x32).
      constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
      std::string f = "uvec2 threefry2x32(uvec2 x, uvec2 key) {\n  uint ks2 = 0x1bd11bdau ^ key.x ^ key.y;\n";
      f += "  x.x += key.x;\n  x.y += key.y;\n";
      const std::string ks[3] = {"key.x", "key.y", "ks2"};
      for (int group = 0; group < 5; ++group) {
        for (int r = 0; r < 4; ++r) {
          const int d = kRotations[(group % 2) * 4 + r];
          f += "  x.x += x.y;\n  x.y = ((x.y << " + std::to_string(d) + "u) | (x.y >> " + std::to_string(32 - d) +
               "u)) ^ x.x;\n";
        }
        f += "  x.x += " + ks[(group + 1) % 3] + ";\n  x.y += " + ks[(group + 2) % 3] + " + " +
             std::to_string(group + 1) + "u;\n";
      }
      f += "  return x;\n}\n";
      // Draw k of a stream: 32-bit draws take counter k / 2's two words in
      // turn, 64-bit ones counter k's joined.
      f += "uint rng_bits32(uint k, uvec2 key) { uvec2 w = threefry2x32(uvec2(k / 2u, 0u), key); "
           "return (k % 2u) == 0u ? w.x : w.y; }\n";
      f += "uint64_t rng_bits64(uint k, uvec2 key) { uvec2 w = threefry2x32(uvec2(k, 0u), key); "
           "return uint64_t(w.x) | (uint64_t(w.y) << 32); }\n";
      functions_ += f;
    }
    char key[64];
    std::snprintf(key, sizeof key, "uvec2(0x%xu, 0x%xu)", static_cast<unsigned>(v.key() & 0xffffffffu),
                  static_cast<unsigned>(v.key() >> 32));
    auto draw = [&](const std::string& k) {
      return v.width() == 64 ? "rng_bits64(" + k + ", " + key + ")" : "uint64_t(rng_bits32(" + k + ", " + key + "))";
    };
    const std::string a = Read(i.operands[0], "0u"), c = Read(i.operands[1], "0u");
    if (!v.is_float()) {
      const std::string wide = hlo::IsSignedInt(t) ? "uint64_t(int64_t(" : "uint64_t((";
      b += "  uint64_t low = " + wide + a + ")), range = " + wide + c + ")) - low;\n";
      // (An expression, not a variable: C++ reads `(uint(uint64_t(r))) & m`
      // as a cast to a function type.)
      const std::string r = "(low + (range == 0ul ? 0ul : " + draw("i") + " % range))";
      b += "  return " + ConvertExpr(ElementType::kU64, t, r, lib_) + ";\n";
      return hlo::OkStatus();
    }
    auto uniform = [&](const std::string& k) {
      return "ldexp(double(" + draw(k) + " >> " + std::to_string(v.width() - v.mantissa()) + "u), -" +
             std::to_string(v.mantissa()) + ")";
    };
    b += "  double p = double(" + a + "), q = double(" + c + ");\n";
    if (!v.normal()) {
      b += "  return " + ConvertExpr(ElementType::kF64, t, "p + " + uniform("i") + " * (q - p)", lib_) + ";\n";
      return hlo::OkStatus();
    }
    lib_.Need("MATH");
    b += "  uint j = i - i % 2u;\n";
    b += "  double radius = sqrt(" + d_.DoubleLiteral("-2.0") + " * dlog(max(" + uniform("j") + ", " +
         d_.DoubleLiteral("1e-7") + ")));\n";
    b += "  double angle = " + d_.DoubleLiteral("6.283185307179586") + " * " + uniform("j + 1u") + ";\n";
    b += "  double turn = (i % 2u) == 0u ? dsin(angle) : dcos(angle);\n";
    b += "  return " + ConvertExpr(ElementType::kF64, t, "p + q * radius * turn", lib_) + ";\n";
    return hlo::OkStatus();
  }

  hlo::Status NodeBody(const Instruction& i, std::string& b) {
    const auto& od = i.shape.dims();
    auto coords = [&] { return hlo::CoordinatesOf("i", od); };
    auto ret = [&](const std::string& e) { b += "  return " + e + ";\n"; };
    switch (i.opcode) {
      case Opcode::kConstant:
        ret(LiteralExpr(*i.literal, 0));
        return hlo::OkStatus();
      case Opcode::kReshape:
      case Opcode::kBitcast:
      case Opcode::kCopy:
        if (i.operands[0]->shape.element_type() != i.shape.element_type()) return hlo::Unimplemented("a bitcast between types");
        ret(Read(i.operands[0], "i"));
        return hlo::OkStatus();
      case Opcode::kBroadcast: {
        ANVIL_ASSIGN_OR_RETURN(auto dims, hlo::IntListAttribute(i, "dimensions"));
        const auto c = coords();
        std::vector<std::string> oc;
        for (int64_t d : dims) oc.push_back(c[d]);
        ret(Read(i.operands[0], hlo::LinearIndexOf(oc, i.operands[0]->shape.dims())));
        return hlo::OkStatus();
      }
      case Opcode::kTranspose: {
        ANVIL_ASSIGN_OR_RETURN(auto perm, hlo::IntListAttribute(i, "dimensions"));
        const auto c = coords();
        std::vector<std::string> oc(perm.size());
        for (size_t d = 0; d < perm.size(); ++d) oc[perm[d]] = c[d];
        ret(Read(i.operands[0], hlo::LinearIndexOf(oc, i.operands[0]->shape.dims())));
        return hlo::OkStatus();
      }
      case Opcode::kSlice: {
        const hlo::Attribute* a = i.FindAttribute("slice");
        ANVIL_ASSIGN_OR_RETURN(auto slice, hlo::ParseSlice(a ? a->value : ""));
        auto c = coords();
        for (size_t d = 0; d < c.size(); ++d) c[d] = "(" + U(slice[d].start) + " + " + c[d] + " * " + U(slice[d].stride) + ")";
        ret(Read(i.operands[0], hlo::LinearIndexOf(c, i.operands[0]->shape.dims())));
        return hlo::OkStatus();
      }
      case Opcode::kReverse: {
        ANVIL_ASSIGN_OR_RETURN(auto dims, hlo::IntListAttribute(i, "dimensions"));
        auto c = coords();
        for (int64_t d : dims) c[d] = "(" + U(od[d] - 1) + " - " + c[d] + ")";
        ret(Read(i.operands[0], hlo::LinearIndexOf(c, od)));
        return hlo::OkStatus();
      }
      case Opcode::kPad: {
        const hlo::Attribute* a = i.FindAttribute("padding");
        ANVIL_ASSIGN_OR_RETURN(auto pad, hlo::ParsePadding(a ? a->value : ""));
        const auto c = coords();
        const auto& in = i.operands[0]->shape.dims();
        std::vector<std::string> ic;
        for (size_t d = 0; d < c.size(); ++d) {
          const std::string p = "p" + std::to_string(d);
          b += "  int " + p + " = int(" + c[d] + ") - " + I(pad[d].low) + ";\n";
          b += "  if (" + p + " < 0) return " + Read(i.operands[1], "0u") + ";\n";
          if (pad[d].interior) {
            b += "  if (" + p + " % " + I(pad[d].interior + 1) + " != 0) return " + Read(i.operands[1], "0u") + ";\n";
            b += "  " + p + " /= " + I(pad[d].interior + 1) + ";\n";
          }
          b += "  if (" + p + " >= " + I(in[d]) + ") return " + Read(i.operands[1], "0u") + ";\n";
          ic.push_back("uint(" + p + ")");
        }
        ret(Read(i.operands[0], hlo::LinearIndexOf(ic, in)));
        return hlo::OkStatus();
      }
      case Opcode::kConcatenate: {
        ANVIL_ASSIGN_OR_RETURN(auto dims, hlo::IntListAttribute(i, "dimensions"));
        const int64_t dim = dims.at(0);
        auto c = coords();
        const std::string along = c[dim];
        b += "  uint at = " + along + ";\n";
        int64_t offset = 0;
        for (const Instruction* o : i.operands) {
          const int64_t size = o->shape.dim(static_cast<int>(dim));
          c[dim] = "(at - " + U(offset) + ")";
          b += "  if (at < " + U(offset + size) + ") return " + Read(o, hlo::LinearIndexOf(c, o->shape.dims())) + ";\n";
          offset += size;
        }
        ret(ZeroExpr(i.shape.element_type()));
        return hlo::OkStatus();
      }
      case Opcode::kIota: {
        ANVIL_ASSIGN_OR_RETURN(int64_t dim, hlo::IntAttribute(i, "iota_dimension", std::nullopt));
        ret(ConvertExpr(ElementType::kU32, i.shape.element_type(), coords()[dim], lib_));
        return hlo::OkStatus();
      }
      case Opcode::kReplicaId:
      case Opcode::kPartitionId:
        ret(ZeroExpr(i.shape.element_type()));
        return hlo::OkStatus();
      case Opcode::kRng: return RngBody(i, b);
      case Opcode::kGetDimensionSize: {
        ANVIL_ASSIGN_OR_RETURN(auto dims, hlo::IntListAttribute(i, "dimensions"));
        ret(ConvertExpr(ElementType::kU32, i.shape.element_type(), U(i.operands[0]->shape.dim(static_cast<int>(dims.at(0)))), lib_));
        return hlo::OkStatus();
      }
      case Opcode::kDynamicSlice: {
        const auto& in = i.operands[0]->shape.dims();
        auto c = coords();
        for (size_t d = 0; d < c.size(); ++d) {
          const std::string start = "int(clamp(int64_t(" + Read(i.operands[1 + d], "0u") + "), 0l, " +
                                    std::to_string(in[d] - od[d]) + "l))";
          c[d] = "(uint(" + start + ") + " + c[d] + ")";
        }
        ret(Read(i.operands[0], hlo::LinearIndexOf(c, in)));
        return hlo::OkStatus();
      }
      case Opcode::kDynamicUpdateSlice: {
        const auto& up = i.operands[1]->shape.dims();
        const auto c = coords();
        std::vector<std::string> uc;
        std::string inside = "true";
        for (size_t d = 0; d < c.size(); ++d) {
          const std::string s = "s" + std::to_string(d);
          b += "  int " + s + " = int(clamp(int64_t(" + Read(i.operands[2 + d], "0u") + "), 0l, " +
               std::to_string(od[d] - up[d]) + "l));\n";
          const std::string rel = "(int(" + c[d] + ") - " + s + ")";
          inside += " && " + rel + " >= 0 && " + rel + " < " + I(up[d]);
          uc.push_back("uint" + rel);
        }
        b += "  if (" + inside + ") return " + Read(i.operands[1], hlo::LinearIndexOf(uc, up)) + ";\n";
        ret(Read(i.operands[0], "i"));
        return hlo::OkStatus();
      }
      case Opcode::kGather: return GatherBody(i, b);
      case Opcode::kBitcastConvert: {
        // Between widths (up to 64 bits): the narrower side has one more
        // dimension, its elements the wider element's bits, lowest first.
        const ElementType from = i.operands[0]->shape.element_type(), to = i.shape.element_type();
        const int fw = hlo::Info(from).bit_width, tw = hlo::Info(to).bit_width;
        if (fw == tw || fw > 64 || tw > 64) break;
        const std::string mask = tw >= 64 ? "~0ul" : "((1ul << " + std::to_string(tw) + ") - 1ul)";
        if (fw > tw) {
          const int ratio = fw / tw;
          b += "  uint64_t bits = uint64_t(" + BitsOf(from, Read(i.operands[0], "i / " + U(ratio))) + ");\n";
          b += "  bits = (bits >> (uint64_t(i % " + U(ratio) + ") * " + std::to_string(tw) + "ul)) & " + mask + ";\n";
        } else {
          const int ratio = tw / fw;
          b += "  uint64_t bits = 0ul;\n";
          b += "  for (uint k = 0u; k < " + U(ratio) + "; ++k) bits |= uint64_t(" +
               BitsOf(from, Read(i.operands[0], "i * " + U(ratio) + " + k")) + ") << (uint64_t(k) * " + std::to_string(fw) + "ul);\n";
        }
        ret(FromBits(to, tw > 32 ? "bits" : "uint(bits)"));
        return hlo::OkStatus();
      }
      case Opcode::kCustomCall: {
        std::vector<std::string> args;
        for (const Instruction* o : i.operands) args.push_back(Read(o, "i"));
        ANVIL_ASSIGN_OR_RETURN(std::string e, CustomCallExpr(i, hlo::ElementwiseCustomCall(i), args, lib_));
        ret(e);
        return hlo::OkStatus();
      }
      case Opcode::kMap: {
        ANVIL_ASSIGN_OR_RETURN(std::string f, Combiner(*i.called_computations.at(0)));
        std::string call = f + "(";
        for (const Instruction* o : i.operands) call += Read(o, "i") + ", ";
        b += "  " + Reg(&i) + " r;\n  " + call + "r);\n  return r;\n";
        return hlo::OkStatus();
      }
      default: break;
    }
    // Elementwise: operands of one element are broadcast (select's and
    // clamp's scalar operands).
    std::vector<std::string> args;
    for (const Instruction* o : i.operands) {
      args.push_back(Read(o, o->shape.ElementCount() == 1 && i.shape.ElementCount() != 1 ? "0u" : "i"));
    }
    ANVIL_ASSIGN_OR_RETURN(std::string e, ElementwiseExpr(i, args, lib_));
    ret(e);
    return hlo::OkStatus();
  }

  hlo::Status GatherBody(const Instruction& i, std::string& b) {
    ANVIL_ASSIGN_OR_RETURN(auto offset_dims, hlo::IntListAttribute(i, "offset_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto collapsed, hlo::IntListAttribute(i, "collapsed_slice_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto operand_batching, hlo::IntListAttribute(i, "operand_batching_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto indices_batching, hlo::IntListAttribute(i, "start_indices_batching_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto start_index_map, hlo::IntListAttribute(i, "start_index_map"));
    ANVIL_ASSIGN_OR_RETURN(auto slice_sizes, hlo::IntListAttribute(i, "slice_sizes"));
    const Instruction* operand = i.operands[0];
    const Instruction* indices = i.operands[1];
    const int idx_rank = indices->shape.rank();
    ANVIL_ASSIGN_OR_RETURN(int64_t ivd, hlo::IntAttribute(i, "index_vector_dim", idx_rank));
    const auto& od = operand->shape.dims();
    const auto c = hlo::CoordinatesOf("i", i.shape.dims());
    std::vector<std::string> batch_index;
    for (int d = 0; d < i.shape.rank(); ++d) {
      if (!Contains(offset_dims, d)) batch_index.push_back(c[d]);
    }
    std::vector<int64_t> offset_operand_dims;
    for (int d = 0; d < operand->shape.rank(); ++d) {
      if (!Contains(collapsed, d) && !Contains(operand_batching, d)) offset_operand_dims.push_back(d);
    }
    std::vector<std::string> start(od.size(), "0");
    for (size_t comp = 0; comp < start_index_map.size(); ++comp) {
      std::vector<std::string> at;
      size_t bi = 0;
      for (int d = 0; d < idx_rank; ++d) at.push_back(d == ivd ? U(static_cast<int64_t>(comp)) : batch_index[bi++]);
      const int64_t dim = start_index_map[comp];
      const std::string v = "g" + std::to_string(comp);
      b += "  int64_t " + v + " = clamp(int64_t(" + Read(indices, hlo::LinearIndexOf(at, indices->shape.dims())) +
           "), 0l, " + std::to_string(od[dim] - slice_sizes[dim]) + "l);\n";
      start[dim] = v;
    }
    for (size_t bb = 0; bb < operand_batching.size(); ++bb) {
      const int64_t idx_dim = indices_batching[bb];
      const int64_t pos = idx_dim < ivd || ivd >= idx_rank ? idx_dim : idx_dim - 1;
      start[operand_batching[bb]] = "int64_t(" + batch_index[pos] + ")";
    }
    std::vector<std::string> oc;
    for (size_t d = 0; d < od.size(); ++d) oc.push_back("uint(" + start[d] + ")");
    for (size_t o = 0; o < offset_dims.size(); ++o) {
      oc[offset_operand_dims[o]] = "(" + oc[offset_operand_dims[o]] + " + " + c[offset_dims[o]] + ")";
    }
    b += "  return " + Read(operand, hlo::LinearIndexOf(oc, od)) + ";\n";
    return hlo::OkStatus();
  }

  std::string GridLoop(const std::string& var, int64_t count, const std::string& body) {
    return "  for (uint " + var + " = " + d_.GlobalIndex() + "; " + var + " < " + U(count) + "; " + var + " += " +
           d_.GroupCount() + " * " + U(o_.workgroup_size) + ") {\n" + body + "  }\n";
  }

  // One workgroup per output element (for few outputs with long sums).
  std::string GroupLoop(const std::string& var, int64_t count, const std::string& body) {
    return "  for (uint " + var + " = " + d_.GroupIndex() + "; " + var + " < " + U(count) + "; " + var + " += " +
           d_.GroupCount() + ") {\n" + body + "  }\n";
  }
  // Double `v` rounded once to t's values (a float expression): for bf16
  // and f16 through round_odd, so that the narrowing rounds once as the
  // evaluator's EncodeFloat does; f32 rounds once anyway.
  std::string NarrowOnce(ElementType t, const std::string& v) {
    if (t != ElementType::kBF16 && t != ElementType::kF16 && !IsNarrowFloat(t)) return "float(" + v + ")";
    lib_.Need("DEF_ROUND_ODD(double)");
    return Normalize(t, "round_odd(" + v + ")");
  }
  // How many times one invocation goes round a GridLoop or a GroupLoop of
  // `count` (device_program.cc launches at most 65535 workgroups).
  int64_t GridShare(int64_t count) const {
    if (count <= 0) return 0;  // nothing to run: no invocation loops
    const int64_t wg = o_.workgroup_size;
    const int64_t groups = std::clamp<int64_t>((count + wg - 1) / wg, 1, 65535);
    return std::max<int64_t>(1, (count + groups * wg - 1) / (groups * wg));
  }
  int64_t GroupShare(int64_t count) const {
    if (count <= 0) return 0;
    const int64_t groups = std::clamp<int64_t>(count, 1, 65535);
    return std::max<int64_t>(1, (count + groups - 1) / groups);
  }
  // Refuses a kernel whose invocations would each run more loop iterations
  // than the device lets one run (KernelOptions::max_loop_iterations:
  // lavapipe ends them there, silently): an error that says so beats
  // results computed from part of the loop.
  hlo::Status CheckLoops(int64_t per_invocation, const std::string& what) {
    const uint64_t limit = o_.max_loop_iterations;
    if (limit == 0 || per_invocation <= static_cast<int64_t>(limit)) return hlo::OkStatus();
    return NotYet(*k_.root, what + ": about " + std::to_string(per_invocation) +
                                " loop iterations in one invocation, and this device (lavapipe) ends an invocation's "
                                "loops after " + std::to_string(limit) + " in all");
  }
  // Combines each invocation's `values` (when `valid`) across the workgroup
  // by a shared-memory tree; invocation 0 ends with the totals in `values`
  // and `valid`. `combine(dst, a, b)` is a statement setting the variables
  // dst to the combination of a and b (dst may be a).
  using CombineStatement = std::function<std::string(const std::vector<std::string>& dst,
                                                     const std::vector<std::string>& a,
                                                     const std::vector<std::string>& b)>;
  // With `ordered`, each step combines neighbouring runs, the earlier first
  // (invocations holding consecutive runs of the elements then combine them
  // in the elements' order); otherwise invocation lid takes lid + s, s
  // halving from half the workgroup.
  std::string TreeCombine(const std::vector<std::string>& types, const std::vector<std::string>& values,
                          const std::string& valid, const CombineStatement& combine, bool ordered = false) {
    std::vector<std::string> here, there;
    for (size_t v = 0; v < types.size(); ++v) {
      const std::string name = v == 0 ? "tree_value" : "tree_value" + std::to_string(v);
      if (shared_.find(name + "[") == std::string::npos) shared_ += d_.SharedArray(types[v], name, o_.workgroup_size);
      here.push_back(name + "[lid]");
      there.push_back(name + "[lid + s]");
    }
    if (shared_.find("tree_valid[") == std::string::npos) {
      shared_ += d_.SharedArray("bool", "tree_valid", o_.workgroup_size);
    }
    std::string t;
    for (size_t v = 0; v < types.size(); ++v) t += "    " + here[v] + " = " + values[v] + ";\n";
    t += "    tree_valid[lid] = " + valid + ";\n";
    t += d_.Barrier("    ", true);
    if (ordered) {
      t += "    for (uint s = 1u; s < " + U(o_.workgroup_size) + "; s <<= 1) {\n";
      t += "      if ((lid & (2u * s - 1u)) == 0u && tree_valid[lid + s]) {\n";
    } else {
      t += "    for (uint s = " + U(o_.workgroup_size / 2) + "; s > 0u; s >>= 1) {\n";
      t += "      if (lid < s && tree_valid[lid + s]) {\n";
    }
    std::string copy;
    for (size_t v = 0; v < types.size(); ++v) copy += " " + here[v] + " = " + there[v] + ";";
    t += "        if (tree_valid[lid]) " + combine(here, here, there) + " else {" + copy + " }\n";
    t += "        tree_valid[lid] = true;\n      }\n";
    t += d_.Barrier("      ", true) + "    }\n";
    for (size_t v = 0; v < types.size(); ++v) t += "    " + values[v] + " = " + here[v].substr(0, here[v].find('[')) + "[0];\n";
    t += "    " + valid + " = tree_valid[0];\n";
    t += d_.Barrier("    ", false);
    return t;
  }
  // The same for one value, `combine` an expression of $A and $B.
  std::string TreeCombine(const std::string& type, const std::string& value, const std::string& valid,
                          const std::string& combine) {
    return TreeCombine({type}, {value}, valid, [&](const auto& dst, const auto& a, const auto& b) {
      std::string c = combine;
      c.replace(c.find("$A"), 2, a[0]);
      c.replace(c.find("$B"), 2, b[0]);
      return dst[0] + " = " + c + ";";
    });
  }

  std::string Module(const std::string& body) {
    ModuleParts parts;
    parts.workgroup_size = o_.workgroup_size;
    parts.buffers = buffers_;
    parts.declarations =
        shared_ + d_.Library(lib_.Text() + NarrowFloatHelpersUsedBy(functions_ + nodes_ + body)) + functions_;
    parts.elements = nodes_;
    parts.body = body;
    return d_.Module(parts);
  }

  hlo::StatusOr<KernelSource> Finish(std::vector<std::pair<std::string, uint64_t>> passes) {
    for (auto& [body, invocations] : passes) result_.passes.push_back({Module(body), invocations});
    return std::move(result_);
  }

  hlo::StatusOr<KernelSource> Loop() {
    ANVIL_RETURN_IF_ERROR(DefineNode(k_.root));
    const int64_t n = k_.root->shape.ElementCount();
    return Finish({{GridLoop("i", n, "    " + Store(0, "i", Read(k_.root, "i")) + "\n"), n}});
  }

  // A statement setting `dst[v]` to body(a..., b...) for a reduce's n
  // values: a sum of doubles as an expression, anything else through the
  // body's function `fn` into temporaries (dst may name a's variables).
  std::string CombineInto(const std::string& fn, const std::vector<std::string>& types,
                          const std::vector<std::string>& dst, const std::vector<std::string>& a,
                          const std::vector<std::string>& b) {
    if (fn.empty()) return dst[0] + " = " + a[0] + " + " + b[0] + ";";
    std::string decl, call = fn + "(", out;
    for (size_t v = 0; v < types.size(); ++v) {
      decl += types[v] + " c" + std::to_string(v) + "; ";
      call += a[v] + ", ";
      out += " " + dst[v] + " = c" + std::to_string(v) + ";";
    }
    for (size_t v = 0; v < types.size(); ++v) call += b[v] + ", ";
    for (size_t v = 0; v < types.size(); ++v) call += "c" + std::to_string(v) + (v + 1 < types.size() ? ", " : ");");
    return "{ " + decl + call + out + " }";
  }

  // A reduce of n operands as a tree: a workgroup per result (or, for
  // long reductions, per slice of one; a second pass combines the
  // slices' partials), each invocation combining a share of the elements,
  // then the workgroup's invocations combined pairwise. A sum takes
  // strided shares (neighbouring invocations read neighbouring elements)
  // and is combined in another order than the evaluator's, as on XLA's
  // GPUs. A variadic reduce (argmax) keeps the evaluator's order: each
  // invocation takes a run of consecutive elements and the tree combines
  // neighbouring runs, the earlier first, so a body that is associative but
  // not commutative gives the evaluator's answer (JAX's argmax keeps the
  // first of several NaNs; combined out of order it kept another).
  hlo::StatusOr<KernelSource> TreeReduce(const hlo::Computation& f, size_t n, bool wide_sum, ElementType t,
                                         const std::string& index, int64_t kept_count, int64_t reduced_count) {
    const Instruction& r = *k_.root;
    std::string fn;
    if (!wide_sum) {
      ANVIL_ASSIGN_OR_RETURN(fn, Combiner(f));
    }
    std::vector<std::string> types, acc, x, init;
    for (size_t v = 0; v < n; ++v) {
      types.push_back(wide_sum ? "double" : Reg(r.operands[v]));
      acc.push_back("acc" + std::to_string(v));
      x.push_back("x" + std::to_string(v));
      init.push_back("init" + std::to_string(v));
    }
    auto declare = [&](const std::vector<std::string>& names, const std::function<std::string(size_t)>& value) {
      std::string d;
      for (size_t v = 0; v < n; ++v) d += "      " + types[v] + " " + names[v] + " = " + types[v] + "(" + value(v) + ");\n";
      return d;
    };
    auto take = [&](const std::vector<std::string>& from) {
      std::string d;
      for (size_t v = 0; v < n; ++v) d += " " + acc[v] + " = " + from[v] + ";";
      return d;
    };
    // Combines x into the accumulators (or starts them with it).
    const std::string accumulate = "      if (have) " + CombineInto(fn, types, acc, acc, x) + " else {" + take(x) +
                                   " }\n      have = true;\n";
    std::string start = "    uint lid = " + d_.LocalIndex() + ";\n    bool have = false;\n";
    for (size_t v = 0; v < n; ++v) start += "    " + types[v] + " " + acc[v] + " = " + types[v] + "(0);\n";
    const bool ordered = n > 1;
    const std::string tree = TreeCombine(
        types, acc, "have", [&](const auto& dst, const auto& a, const auto& b) { return CombineInto(fn, types, dst, a, b); },
        ordered);
    std::string finish = "    if (lid == 0u) {\n";
    finish += declare(init, [&](size_t v) { return Read(r.operands[n + v], "0u"); });
    finish += "      if (have) " + CombineInto(fn, types, init, init, acc) + "\n";
    for (size_t v = 0; v < n; ++v) {
      finish += "      " + Store(v, "o", wide_sum ? NarrowOnce(t, init[v]) : init[v]) + "\n";
    }
    finish += "    }\n";

    const int64_t wg = o_.workgroup_size;
    // Each invocation reads at most kTreeReads elements; a longer
    // reduction is cut into `parts` slices, one workgroup's each, whose
    // results a second pass combines. Besides spreading a long reduction
    // over the whole device, that bounds every invocation's loop: lavapipe
    // ends any invocation's loops after 65535 iterations in all, and a
    // 16M-element sum, 262144 per invocation, came out as 131070.
    const int64_t parts = std::max<int64_t>(1, (reduced_count + wg * kTreeReads - 1) / (wg * kTreeReads));
    const int64_t slice = (reduced_count + parts - 1) / parts;
    const std::string first = parts > 1 ? "part * " + U(slice) : "0u";
    const std::string end = parts > 1 ? "min(part * " + U(slice) + " + " + U(slice) + ", " + U(reduced_count) + ")"
                                      : U(reduced_count);
    // This invocation's share of [first, end): every wg-th element, or a run.
    const int64_t run = ((parts > 1 ? slice : reduced_count) + wg - 1) / wg;
    const std::string share =
        ordered ? "uint r = " + first + " + lid * " + U(run) + "; r < min(" + first + " + lid * " + U(run) + " + " +
                      U(run) + ", " + end + "); ++r"
                : "uint r = " + first + " + lid; r < " + end + "; r += " + U(wg);
    std::string body = start + "    for (" + share + ") {\n";
    body += "      uint at = " + index + ";\n";
    body += declare(x, [&](size_t v) { return Read(r.operands[v], "at"); }) + accumulate + "    }\n" + tree;
    if (parts == 1) {
      return Finish({{GroupLoop("o", kept_count, body + finish), static_cast<uint64_t>(kept_count) * wg}});
    }
    // Pass 1: workgroup g takes slice g % parts of output g / parts and
    // leaves its results, if it read anything, in the scratch partials
    // (buffer v the partials of operand v, buffer n whether there are any).
    const int64_t partials = kept_count * parts;
    std::vector<ElementType> partial_t;
    for (size_t v = 0; v < n; ++v) {
      partial_t.push_back(wide_sum ? ElementType::kF64 : RegisterElementType(r.operands[v]->shape.element_type()));
      result_.scratch_bytes.push_back(static_cast<uint64_t>(partials * hlo::Info(partial_t[v]).byte_size));
    }
    result_.scratch_bytes.push_back(static_cast<uint64_t>(partials * 4));
    const std::string have_at = ScratchAt(n, ElementType::kU32, "g");
    std::string slices = "    uint o = g / " + U(parts) + ", part = g % " + U(parts) + ";\n" + body;
    slices += "    if (lid == 0u) {\n";
    for (size_t v = 0; v < n; ++v) {
      slices += "      " + ScratchAt(v, partial_t[v], "g") + " = " + StoreExpr(partial_t[v], acc[v]) + ";\n";
    }
    slices += "      " + have_at + " = have ? 1u : 0u;\n    }\n";
    // Pass 2: output o's partials, combined in the same tree.
    const int64_t partial_run = (parts + wg - 1) / wg;
    const std::string partial_share =
        ordered ? "uint p = lid * " + U(partial_run) + "; p < min(lid * " + U(partial_run) + " + " + U(partial_run) +
                      ", " + U(parts) + "); ++p"
                : "uint p = lid; p < " + U(parts) + "; p += " + U(wg);
    std::string combined = start + "    for (" + partial_share + ") {\n";
    combined += "      uint g = o * " + U(parts) + " + p;\n";
    combined += "      if (" + have_at + " == 0u) continue;\n";
    combined += declare(x, [&](size_t v) { return LoadExpr(partial_t[v], ScratchAt(v, partial_t[v], "g")); });
    combined += accumulate + "    }\n" + tree + finish;
    return Finish({{GroupLoop("g", partials, slices), static_cast<uint64_t>(partials) * wg},
                   {GroupLoop("o", kept_count, combined), static_cast<uint64_t>(kept_count) * wg}});
  }

  // Whether reduce (or reduce-window) `r` of n operands must combine them in
  // the evaluator's order: a body other than a maximum or minimum over a
  // narrow float operand (f8, f6, f4), which rounds after every step.
  static bool OrderMatters(const Instruction& r, size_t n) {
    const std::optional<hlo::Opcode> op = hlo::SingleOpReducer(*r.called_computations.at(0));
    if (op && (*op == hlo::Opcode::kMaximum || *op == hlo::Opcode::kMinimum)) return false;
    for (size_t v = 0; v < n; ++v) {
      if (IsNarrowFloat(r.operands[v]->shape.element_type())) return true;
    }
    return false;
  }

  // acc = f(acc, x) over the operand elements that map to each result.
  hlo::StatusOr<KernelSource> Reduce() {
    const Instruction& r = *k_.root;
    const size_t n = r.operands.size() / 2;
    ANVIL_ASSIGN_OR_RETURN(auto reduced, hlo::IntListAttribute(r, "dimensions"));
    const auto& in = r.operands[0]->shape.dims();
    std::vector<int64_t> kept_dims, reduced_dims;
    for (int d = 0; d < static_cast<int>(in.size()); ++d) (Contains(reduced, d) ? reduced_dims : kept_dims).push_back(in[d]);
    const hlo::Computation& f = *r.called_computations.at(0);
    const ElementType t = result_.outputs[0].element_type();
    // f32, bf16 and f16 sums carry a double and round once, as the
    // evaluator's do.
    const bool wide_sum = n == 1 && IsAddition(f) &&
                          (t == ElementType::kF32 || t == ElementType::kBF16 || t == ElementType::kF16);
    std::string body;
    const auto oc = hlo::CoordinatesOf("o", kept_dims);
    const int64_t reduced_count = Product(reduced_dims), kept_count = Product(kept_dims);
    // Few results with long reductions: a workgroup per result, combined
    // by a tree (of every operand at once for a variadic reduce: argmax).
    // Not a sum or product of a narrow float type, which rounds after every
    // step, as the evaluator's: only in its order does it give its answer.
    const bool tree = !OrderMatters(r, n) && (reduced_count >= 4096 || (reduced_count >= 64 && kept_count < 2048));
    const auto rc = hlo::CoordinatesOf("r", reduced_dims);
    std::vector<std::string> ic;
    size_t ko = 0, kr = 0;
    for (int d = 0; d < static_cast<int>(in.size()); ++d) ic.push_back(Contains(reduced, d) ? rc[kr++] : oc[ko++]);
    const std::string index = hlo::LinearIndexOf(ic, in);
    if (tree) return TreeReduce(f, n, wide_sum, t, index, kept_count, reduced_count);
    ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(kept_count) * reduced_count, "a reduction of " +
                                     std::to_string(reduced_count) + " elements to each result, in order"));
    if (wide_sum) {
      body += "    double acc0 = double(" + Read(r.operands[1], "0u") + ");\n";
      body += "    for (uint r = 0u; r < " + U(Product(reduced_dims)) + "; ++r) acc0 += double(" +
              Read(r.operands[0], index) + ");\n";
      body += "    " + Store(0, "o", NarrowOnce(t, "acc0")) + "\n";
    } else {
      ANVIL_ASSIGN_OR_RETURN(std::string fn, Combiner(f));
      std::string call = fn + "(", next;
      for (size_t v = 0; v < n; ++v) {
        const std::string T = Reg(r.operands[v]);
        body += "    " + T + " acc" + std::to_string(v) + " = " + Read(r.operands[n + v], "0u") + ";\n";
        call += "acc" + std::to_string(v) + ", ";
        next += "    " + T + " n" + std::to_string(v) + ";\n";
      }
      std::string loop = "    for (uint r = 0u; r < " + U(Product(reduced_dims)) + "; ++r) {\n" + "      uint at = " + index + ";\n";
      for (size_t v = 0; v < n; ++v) call += Read(r.operands[v], "at") + ", ";
      for (size_t v = 0; v < n; ++v) call += "n" + std::to_string(v) + (v + 1 < n ? ", " : ")");
      loop += next + "      " + call + ";\n";
      for (size_t v = 0; v < n; ++v) loop += "      acc" + std::to_string(v) + " = n" + std::to_string(v) + ";\n";
      body += loop + "    }\n";
      for (size_t v = 0; v < n; ++v) body += "    " + Store(v, "o", "acc" + std::to_string(v)) + "\n";
    }
    const int64_t count = Product(kept_dims);
    return Finish({{GridLoop("o", count, body), count}});
  }

  // Products of operand values converted to the result type, summed.
  std::string MultiplyAdd(ElementType t, const std::string& acc, const std::string& x, const std::string& y) {
    if (hlo::IsPred(t)) return acc + " = " + acc + " || (" + x + " && " + y + ");";
    if (hlo::IsComplex(t)) {
      lib_.Need("MATH");
      lib_.Need("DEF_COMPLEX(" + RegisterType(t) + ", " + (t == ElementType::kC64 ? "float" : "double") + ")");
      return acc + " += cmul(" + x + ", " + y + ");";
    }
    return acc + " += " + x + " * " + y + ";";
  }

  // Narrow floats accumulate in f32 and round once.
  static ElementType AccumulatorType(ElementType t) {
    return t == ElementType::kBF16 || t == ElementType::kF16 ? ElementType::kF32 : t;
  }
  // `acc += lhs[li] * rhs[ri]`, both converted to the accumulator's type.
  std::string AccumulateProduct(ElementType acc_t, const Instruction* lhs, const std::vector<std::string>& li,
                                const Instruction* rhs, const std::vector<std::string>& ri) {
    return MultiplyAdd(acc_t, "acc",
                       ConvertExpr(lhs->shape.element_type(), acc_t, Read(lhs, hlo::LinearIndexOf(li, lhs->shape.dims())), lib_),
                       ConvertExpr(rhs->shape.element_type(), acc_t, Read(rhs, hlo::LinearIndexOf(ri, rhs->shape.dims())), lib_));
  }

  hlo::StatusOr<KernelSource> Dot() {
    const Instruction& r = *k_.root;
    ANVIL_ASSIGN_OR_RETURN(auto lb, hlo::IntListAttribute(r, "lhs_batch_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto lc, hlo::IntListAttribute(r, "lhs_contracting_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto rb, hlo::IntListAttribute(r, "rhs_batch_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto rcd, hlo::IntListAttribute(r, "rhs_contracting_dims"));
    const Instruction* lhs = r.operands[0];
    const Instruction* rhs = r.operands[1];
    const ElementType t = r.shape.element_type();
    const auto oc = hlo::CoordinatesOf("o", r.shape.dims());
    std::vector<int64_t> contract;
    for (int64_t d : lc) contract.push_back(lhs->shape.dim(static_cast<int>(d)));
    const auto kc = hlo::CoordinatesOf("k", contract);
    std::vector<std::string> li(lhs->shape.rank()), ri(rhs->shape.rank());
    size_t at = 0;
    for (size_t b = 0; b < lb.size(); ++b, ++at) li[lb[b]] = ri[rb[b]] = oc[at];
    for (int d = 0; d < lhs->shape.rank(); ++d) {
      if (!Contains(lb, d) && !Contains(lc, d)) li[d] = oc[at++];
    }
    for (int d = 0; d < rhs->shape.rank(); ++d) {
      if (!Contains(rb, d) && !Contains(rcd, d)) ri[d] = oc[at++];
    }
    for (size_t c = 0; c < lc.size(); ++c) li[lc[c]] = ri[rcd[c]] = kc[c];
    const ElementType acc_t = AccumulatorType(t);
    const std::string A = RegisterType(acc_t);
    const int64_t depth = Product(contract), n = r.shape.ElementCount();
    const std::string product = "      " + AccumulateProduct(acc_t, lhs, li, rhs, ri) + "\n";
    if (depth <= kDotSlice) {
      ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(n) * depth, "a dot contracting " + std::to_string(depth) + " elements"));
      std::string body = "    " + A + " acc = " + ZeroExpr(acc_t) + ";\n";
      body += "    for (uint k = 0u; k < " + U(depth) + "; ++k) {\n" + product + "    }\n";
      body += "    " + Store(0, "o", Normalize(t, "acc")) + "\n";
      return Finish({{GridLoop("o", n, body), n}});
    }
    // A long contraction (a weight gradient summing over a batch of
    // tokens, a dot of two long vectors) is cut into slices of kDotSlice:
    // pass 1 leaves each result's partial sums in scratch, one invocation
    // a slice, and pass 2 adds them in order. One result's whole
    // contraction in one invocation was one thread's work for all of it,
    // and past 65535 iterations lavapipe cuts it short.
    const int64_t slices = (depth + kDotSlice - 1) / kDotSlice;
    const ElementType partial_t = RegisterElementType(acc_t);
    result_.scratch_bytes = {static_cast<uint64_t>(n * slices * hlo::Info(partial_t).byte_size)};
    ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(n * slices) * kDotSlice + GridShare(n) * slices,
                                     "a dot contracting " + std::to_string(depth) + " elements"));
    std::string part = "    uint o = g / " + U(slices) + ", slice = g % " + U(slices) + ";\n";
    part += "    " + A + " acc = " + ZeroExpr(acc_t) + ";\n";
    part += "    for (uint k = slice * " + U(kDotSlice) + "; k < min(slice * " + U(kDotSlice) + " + " + U(kDotSlice) +
            ", " + U(depth) + "); ++k) {\n" + product + "    }\n";
    part += "    " + ScratchAt(0, partial_t, "g") + " = " + StoreExpr(partial_t, "acc") + ";\n";
    std::string sum = "    " + A + " acc = " + ZeroExpr(acc_t) + ";\n";
    sum += "    for (uint slice = 0u; slice < " + U(slices) + "; ++slice) {\n";
    const std::string partial = LoadExpr(partial_t, ScratchAt(0, partial_t, "o * " + U(slices) + " + slice"));
    sum += hlo::IsPred(acc_t) ? "      acc = acc || " + partial + ";\n    }\n" : "      acc += " + partial + ";\n    }\n";
    sum += "    " + Store(0, "o", Normalize(t, "acc")) + "\n";
    return Finish({{GridLoop("g", n * slices, part), static_cast<uint64_t>(n * slices)}, {GridLoop("o", n, sum), n}});
  }

  hlo::StatusOr<KernelSource> Convolution() {
    const Instruction& r = *k_.root;
    const hlo::Attribute* labels = r.FindAttribute("dim_labels");
    if (!labels) return NotYet(r, "no dim_labels");
    ANVIL_ASSIGN_OR_RETURN(auto dn, hlo::ParseDimLabels(labels->value));
    const hlo::Attribute* wa = r.FindAttribute("window");
    ANVIL_ASSIGN_OR_RETURN(auto window, hlo::ParseWindow(wa ? wa->value : ""));
    ANVIL_ASSIGN_OR_RETURN(int64_t fg, hlo::IntAttribute(r, "feature_group_count", 1));
    ANVIL_ASSIGN_OR_RETURN(int64_t bg, hlo::IntAttribute(r, "batch_group_count", 1));
    const Instruction* lhs = r.operands[0];
    const Instruction* rhs = r.operands[1];
    const size_t spatial = dn.input_spatial.size();
    if (window.size() != spatial) window.resize(spatial);
    const ElementType t = r.shape.element_type();
    const ElementType acc_t = AccumulatorType(t);
    const int64_t out_features = r.shape.dim(static_cast<int>(dn.output_feature));
    const int64_t out_batch = r.shape.dim(static_cast<int>(dn.output_batch));
    const int64_t kernel_in = rhs->shape.dim(static_cast<int>(dn.kernel_input_feature));
    const auto oc = hlo::CoordinatesOf("o", r.shape.dims());
    std::vector<int64_t> wdims;
    for (size_t s = 0; s < spatial; ++s) wdims.push_back(rhs->shape.dim(static_cast<int>(dn.kernel_spatial[s])));
    const int64_t n_out = r.shape.ElementCount();
    // Few results with long sums (a filter's gradient): a workgroup per
    // result, each invocation a share of the window and features, then a tree.
    const bool tree = n_out < 16384 && Product(wdims) * kernel_in >= 2048 && !hlo::IsPred(acc_t);
    // In the tree, consecutive invocations take consecutive input features
    // when features are the input's innermost dimension, else consecutive
    // window positions, so that neighbouring invocations read neighbouring
    // memory.
    const bool features_inner = dn.input_feature == lhs->shape.rank() - 1;
    const int64_t window_count = Product(wdims);
    const int64_t taps = window_count * kernel_in;
    ANVIL_RETURN_IF_ERROR(CheckLoops(tree ? GroupShare(n_out) * ((taps + o_.workgroup_size - 1) / o_.workgroup_size)
                                          : GridShare(n_out) * taps,
                                     "a convolution of " + std::to_string(taps) + " products to each result"));
    const auto wc = hlo::CoordinatesOf(
        tree ? (features_inner ? "(q / " + U(kernel_in) + ")" : "(q % " + U(window_count) + ")") : "w", wdims);
    std::string body;
    body += "    uint of = " + oc[dn.output_feature] + ";\n";
    body += "    uint fgroup = of / " + U(out_features / fg) + ", bgroup = of / " + U(out_features / bg) + ";\n";
    body += "    uint ib = bgroup * " + U(out_batch) + " + " + oc[dn.output_batch] + ";\n";
    body += "    " + RegisterType(acc_t) + " acc = " + ZeroExpr(acc_t) + ";\n";
    if (tree) {
      body += "    uint lid = " + d_.LocalIndex() + ";\n";
      body += "    for (uint q = lid; q < " + U(Product(wdims) * kernel_in) + "; q += " + U(o_.workgroup_size) + ") {\n";
      body += features_inner ? "      uint c = q % " + U(kernel_in) + ";\n" : "      uint c = q / " + U(window_count) + ";\n";
    } else {
      body += "    for (uint w = 0u; w < " + U(Product(wdims)) + "; ++w) {\n";
    }
    std::vector<std::string> li(lhs->shape.rank()), ri(rhs->shape.rank());
    for (size_t s = 0; s < spatial; ++s) {
      const hlo::WindowDim& w = window[s];
      const std::string x = "x" + std::to_string(s);
      body += "      int " + x + " = int(" + oc[dn.output_spatial[s]] + ") * " + I(w.stride) + " + int(" + wc[s] + ") * " +
              I(w.window_dilation) + " - " + I(w.pad_low) + ";\n";
      body += "      if (" + x + " < 0) continue;\n";
      if (w.base_dilation != 1) {
        body += "      if (" + x + " % " + I(w.base_dilation) + " != 0) continue;\n";
        body += "      " + x + " /= " + I(w.base_dilation) + ";\n";
      }
      body += "      if (" + x + " >= " + I(lhs->shape.dim(static_cast<int>(dn.input_spatial[s]))) + ") continue;\n";
      li[dn.input_spatial[s]] = "uint(" + x + ")";
      ri[dn.kernel_spatial[s]] = w.reversal ? "(" + U(wdims[s] - 1) + " - " + wc[s] + ")" : wc[s];
    }
    li[dn.input_batch] = "ib";
    li[dn.input_feature] = "(fgroup * " + U(kernel_in) + " + c)";
    ri[dn.kernel_input_feature] = "c";
    ri[dn.kernel_output_feature] = "of";
    const std::string product = AccumulateProduct(acc_t, lhs, li, rhs, ri);
    if (tree) {
      body += "      " + product + "\n    }\n";
      body += "    bool have = true;\n";
      body += TreeCombine(RegisterType(acc_t), "acc", "have", "($A + $B)");
      body += "    if (lid == 0u) " + Store(0, "o", Normalize(t, "acc")) + "\n";
      return Finish({{GroupLoop("o", n_out, body), static_cast<uint64_t>(n_out) * o_.workgroup_size}});
    }
    body += "      for (uint c = 0u; c < " + U(kernel_in) + "; ++c) {\n";
    body += "        " + product + "\n      }\n    }\n";
    body += "    " + Store(0, "o", Normalize(t, "acc")) + "\n";
    return Finish({{GridLoop("o", n_out, body), n_out}});
  }

  hlo::StatusOr<KernelSource> ReduceWindow() {
    const Instruction& r = *k_.root;
    const size_t n = r.operands.size() / 2;
    const hlo::Attribute* wa = r.FindAttribute("window");
    ANVIL_ASSIGN_OR_RETURN(auto window, hlo::ParseWindow(wa ? wa->value : ""));
    const auto& in = r.operands[0]->shape.dims();
    window.resize(in.size());
    const auto& out_dims = result_.outputs[0].dims();
    ANVIL_ASSIGN_OR_RETURN(std::string fn, Combiner(*r.called_computations.at(0)));
    // bf16 and f16 sums carry a double and round once, as the evaluator's
    // do (a bf16 cumsum rounded every step stops growing).
    const ElementType t = result_.outputs[0].element_type();
    const bool wide_sum = n == 1 && IsAddition(*r.called_computations.at(0)) &&
                          (t == ElementType::kBF16 || t == ElementType::kF16);
    if (const std::optional<hlo::WindowScan> scan = hlo::PrefixScan(window, in, out_dims)) {
      return ReduceWindowScan(*scan, fn, n, wide_sum, /*from_end=*/false);
    }
    // A suffix window (reverse=True) scans from each line's end where that
    // gives the walk's answer: a body exactly associative and commutative
    // (maximum, minimum, and, or, integer sums and products), or an f32,
    // bf16 or f16 sum carried in double and rounded once per output (within
    // the walk's rounding, as the CPU plugin's).
    if (const std::optional<hlo::WindowScan> suffix = hlo::SuffixScan(window, in, out_dims); suffix && n == 1) {
      const std::optional<hlo::Opcode> op = hlo::SingleOpReducer(*r.called_computations.at(0));
      const bool is_float = hlo::IsFloat(t);
      const bool exact = op && (*op == hlo::Opcode::kMaximum || *op == hlo::Opcode::kMinimum ||
                                *op == hlo::Opcode::kAnd || *op == hlo::Opcode::kOr ||
                                ((*op == hlo::Opcode::kAdd || *op == hlo::Opcode::kMultiply) && !is_float &&
                                 !hlo::IsComplex(t)));
      const bool double_sum = op == hlo::Opcode::kAdd && d_.HasFloat64() &&
                              (t == ElementType::kF32 || t == ElementType::kBF16 || t == ElementType::kF16);
      if (exact || double_sum) return ReduceWindowScan(*suffix, fn, n, double_sum, /*from_end=*/true);
    }
    std::vector<int64_t> wdims;
    for (const hlo::WindowDim& w : window) wdims.push_back(w.size);
    const auto oc = hlo::CoordinatesOf("o", out_dims);
    const auto wc = hlo::CoordinatesOf("w", wdims);
    std::string body, call = fn + "(", next;
    for (size_t v = 0; v < n; ++v) {
      body += "    " + Reg(r.operands[v]) + " acc" + std::to_string(v) + " = " + Read(r.operands[n + v], "0u") + ";\n";
      call += "acc" + std::to_string(v) + ", ";
      next += "      " + Reg(r.operands[v]) + " n" + std::to_string(v) + ";\n";
    }
    body += "    for (uint w = 0u; w < " + U(Product(wdims)) + "; ++w) {\n";
    std::vector<std::string> ic;
    for (size_t d = 0; d < in.size(); ++d) {
      const hlo::WindowDim& w = window[d];
      const std::string x = "x" + std::to_string(d);
      body += "      int " + x + " = int(" + oc[d] + ") * " + I(w.stride) + " + int(" + wc[d] + ") * " +
              I(w.window_dilation) + " - " + I(w.pad_low) + ";\n";
      body += "      if (" + x + " < 0) continue;\n";
      if (w.base_dilation != 1) {
        body += "      if (" + x + " % " + I(w.base_dilation) + " != 0) continue;\n";
        body += "      " + x + " /= " + I(w.base_dilation) + ";\n";
      }
      body += "      if (" + x + " >= " + I(in[d]) + ") continue;\n";
      ic.push_back("uint(" + x + ")");
    }
    body += "      uint at = " + hlo::LinearIndexOf(ic, in) + ";\n";
    if (wide_sum) {
      body = "    double wide = double(" + Read(r.operands[1], "0u") + ");\n" + body.substr(body.find("    for (uint w"));
      body += "      wide += double(" + Read(r.operands[0], "at") + ");\n    }\n";
      body += "    " + Store(0, "o", NarrowOnce(t, "wide")) + "\n";
    } else {
      for (size_t v = 0; v < n; ++v) call += Read(r.operands[v], "at") + ", ";
      for (size_t v = 0; v < n; ++v) call += "n" + std::to_string(v) + (v + 1 < n ? ", " : ")");
      body += next + "      " + call + ";\n";
      for (size_t v = 0; v < n; ++v) body += "      acc" + std::to_string(v) + " = n" + std::to_string(v) + ";\n";
      body += "    }\n";
      for (size_t v = 0; v < n; ++v) body += "    " + Store(v, "o", "acc" + std::to_string(v)) + "\n";
    }
    const int64_t count = Product(out_dims);
    ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(count) * Product(wdims),
                                     "a reduce-window of " + std::to_string(Product(wdims)) + " positions a window"));
    return Finish({{GridLoop("o", count, body), count}});
  }

  // A prefix window (hlo::PrefixScan: JAX's cumsum, cummax, cumlogsumexp)
  // as a scan, an invocation per line: each output is the one before it
  // combined with one more input, the combines the window walk makes for
  // it, for any body (a bf16 or f16 sum's double too), so the bits are the
  // walk's, in `length` steps a line where the walk took length^2 / 2.
  hlo::StatusOr<KernelSource> ReduceWindowScan(const hlo::WindowScan& s, const std::string& fn, size_t n,
                                               bool wide_sum, bool from_end) {
    const Instruction& r = *k_.root;
    const int64_t walk = GridShare(s.lines()) * s.length;
    const bool past_limit = o_.max_loop_iterations != 0 && walk > static_cast<int64_t>(o_.max_loop_iterations);
    if (s.length > kScanChunk && (s.lines() < 2048 || past_limit) && !OrderMatters(r, n)) {
      return ChunkedScan(s, fn, n, from_end);
    }
    std::string body = "    uint base = (line / " + U(s.inner) + ") * " + U(s.length * s.inner) + " + line % " +
                       U(s.inner) + ";\n";
    if (wide_sum) {
      body += "    double wide = double(" + Read(r.operands[1], "0u") + ");\n";
    } else {
      for (size_t v = 0; v < n; ++v) {
        body += "    " + Reg(r.operands[v]) + " acc" + std::to_string(v) + " = " + Read(r.operands[n + v], "0u") + ";\n";
      }
    }
    body += "    for (uint k = 0u; k < " + U(s.length) + "; ++k) {\n";
    body += std::string("      uint o = ") + (from_end ? U(s.length - 1) + " - k" : "k") + ";\n";
    body += "      uint at = base + o * " + U(s.inner) + ";\n";
    if (wide_sum) {
      body += "      wide += double(" + Read(r.operands[0], "at") + ");\n";
      body += "      " + Store(0, "at", NarrowOnce(result_.outputs[0].element_type(), "wide")) + "\n";
    } else {
      std::string call = fn + "(";
      for (size_t v = 0; v < n; ++v) {
        body += "      " + Reg(r.operands[v]) + " n" + std::to_string(v) + ";\n";
        call += "acc" + std::to_string(v) + ", ";
      }
      for (size_t v = 0; v < n; ++v) call += Read(r.operands[v], "at") + ", ";
      for (size_t v = 0; v < n; ++v) call += "n" + std::to_string(v) + (v + 1 < n ? ", " : ")");
      body += "      " + call + ";\n";
      for (size_t v = 0; v < n; ++v) {
        body += "      acc" + std::to_string(v) + " = n" + std::to_string(v) + ";\n";
        body += "      " + Store(v, "at", "acc" + std::to_string(v)) + "\n";
      }
    }
    body += "    }\n";
    const int64_t lines = s.lines();
    ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(lines) * s.length, "a scan of " + std::to_string(s.length) + " positions"));
    return Finish({{GridLoop("line", lines, body), lines}});
  }

  // A scan of few or long lines, cut into chunks of kScanChunk positions:
  // pass 1 combines each chunk's elements (an invocation per chunk), pass 2
  // walks each line's chunk totals from the init, leaving in each total's
  // place what precedes its chunk (an invocation per line), and pass 3
  // scans each chunk again from there. Every invocation loops over at most
  // one chunk or one line's chunks, within lavapipe's loop limit, and the
  // chunks of one line run side by side. f32, bf16 and f16 sums are carried
  // in double and rounded once per output; other bodies are combined in
  // another order than the walk's (the same answer for the exact ones:
  // maximum, minimum, integer sums), as on XLA's GPUs.
  hlo::StatusOr<KernelSource> ChunkedScan(const hlo::WindowScan& s, const std::string& body_fn, size_t n,
                                          bool from_end) {
    const Instruction& r = *k_.root;
    const ElementType t = result_.outputs[0].element_type();
    const bool wide = n == 1 && IsAddition(*r.called_computations.at(0)) && d_.HasFloat64() &&
                      (t == ElementType::kF32 || t == ElementType::kBF16 || t == ElementType::kF16);
    const std::string fn = wide ? "" : body_fn;  // CombineInto adds when it has no body function
    const int64_t lines = s.lines(), chunks = (s.length + kScanChunk - 1) / kScanChunk;
    ANVIL_RETURN_IF_ERROR(CheckLoops(std::max(GridShare(lines * chunks) * kScanChunk, GridShare(lines) * chunks),
                                     "a scan of " + std::to_string(s.length) + " positions"));
    std::vector<std::string> types, acc, x, total;
    std::vector<ElementType> total_t;
    for (size_t v = 0; v < n; ++v) {
      types.push_back(wide ? "double" : Reg(r.operands[v]));
      acc.push_back("acc" + std::to_string(v));
      x.push_back("x" + std::to_string(v));
      total.push_back("t" + std::to_string(v));
      total_t.push_back(wide ? ElementType::kF64 : RegisterElementType(r.operands[v]->shape.element_type()));
      result_.scratch_bytes.push_back(static_cast<uint64_t>(lines * chunks * hlo::Info(total_t[v]).byte_size));
    }
    auto total_at = [&](size_t v, const std::string& index) { return ScratchAt(v, total_t[v], index); };
    // Where position `o` of line `line` is.
    const std::string base = "    uint base = (line / " + U(s.inner) + ") * " + U(s.length * s.inner) + " + line % " +
                             U(s.inner) + ";\n";
    // The chunk's positions, walked in the scan's direction: k counts them.
    std::string chunk = "    uint line = g / " + U(chunks) + ", c = g % " + U(chunks) + ", first = c * " +
                        U(kScanChunk) + ", count = min(" + U(kScanChunk) + ", " + U(s.length) + " - first);\n" + base;
    const std::string walk_chunk = std::string("    for (uint k = 0u; k < count; ++k) {\n      uint at = base + (") +
                                   (from_end ? "first + count - 1u - k" : "first + k") + ") * " + U(s.inner) + ";\n";
    auto read_x = [&] {
      std::string d;
      for (size_t v = 0; v < n; ++v) d += "      " + types[v] + " " + x[v] + " = " + types[v] + "(" + Read(r.operands[v], "at") + ");\n";
      return d;
    };
    // Pass 1: each chunk's total.
    std::string totals = chunk;
    for (size_t v = 0; v < n; ++v) totals += "    " + types[v] + " " + acc[v] + " = " + types[v] + "(0);\n";
    totals += walk_chunk + read_x() + "      if (k == 0u) {";
    for (size_t v = 0; v < n; ++v) totals += " " + acc[v] + " = " + x[v] + ";";
    totals += " } else " + CombineInto(fn, types, acc, acc, x) + "\n    }\n";
    for (size_t v = 0; v < n; ++v) totals += "    " + total_at(v, "g") + " = " + StoreExpr(total_t[v], acc[v]) + ";\n";
    // Pass 2: what precedes each chunk, from the init, in place of its total.
    std::string carry;
    for (size_t v = 0; v < n; ++v) {
      carry += "    " + types[v] + " " + acc[v] + " = " + types[v] + "(" + Read(r.operands[n + v], "0u") + ");\n";
    }
    carry += "    for (uint k = 0u; k < " + U(chunks) + "; ++k) {\n      uint at = line * " + U(chunks) + " + " +
             (from_end ? U(chunks - 1) + " - k" : "k") + ";\n";
    for (size_t v = 0; v < n; ++v) {
      carry += "      " + types[v] + " " + total[v] + " = " + types[v] + "(" + LoadExpr(total_t[v], total_at(v, "at")) + ");\n";
      carry += "      " + total_at(v, "at") + " = " + StoreExpr(total_t[v], acc[v]) + ";\n";
    }
    carry += "      " + CombineInto(fn, types, acc, acc, total) + "\n    }\n";
    // Pass 3: each chunk scanned from what precedes it.
    std::string scan = chunk;
    for (size_t v = 0; v < n; ++v) {
      scan += "    " + types[v] + " " + acc[v] + " = " + types[v] + "(" + LoadExpr(total_t[v], total_at(v, "g")) + ");\n";
    }
    scan += walk_chunk + read_x() + "      " + CombineInto(fn, types, acc, acc, x) + "\n";
    for (size_t v = 0; v < n; ++v) scan += "      " + Store(v, "at", wide ? NarrowOnce(t, acc[v]) : acc[v]) + "\n";
    scan += "    }\n";
    return Finish({{GridLoop("g", lines * chunks, totals), static_cast<uint64_t>(lines * chunks)},
                   {GridLoop("line", lines, carry), static_cast<uint64_t>(lines)},
                   {GridLoop("g", lines * chunks, scan), static_cast<uint64_t>(lines * chunks)}});
  }

  // Each result element gathers, in source order, the source values whose
  // window selected it: no two invocations write one element.
  hlo::StatusOr<KernelSource> SelectAndScatter() {
    const Instruction& r = *k_.root;
    const Instruction* operand = r.operands[0];
    const Instruction* source = r.operands[1];
    const hlo::Attribute* wa = r.FindAttribute("window");
    ANVIL_ASSIGN_OR_RETURN(auto window, hlo::ParseWindow(wa ? wa->value : ""));
    const auto& dims = operand->shape.dims();
    window.resize(dims.size());
    const hlo::Attribute* sa = r.FindAttribute("select");
    const hlo::Attribute* ca = r.FindAttribute("scatter");
    const bool select_first = sa < ca;
    ANVIL_ASSIGN_OR_RETURN(std::string select, Combiner(*r.called_computations.at(select_first ? 0 : 1)));
    ANVIL_ASSIGN_OR_RETURN(std::string scatter, Combiner(*r.called_computations.at(select_first ? 1 : 0)));
    std::vector<int64_t> wdims;
    for (const hlo::WindowDim& w : window) wdims.push_back(w.size);
    const int64_t wcount = Product(wdims);
    const auto oc = hlo::CoordinatesOf("o", dims);
    const std::string T = Reg(operand), S = Reg(&r);
    std::string body = "    " + S + " acc = " + Read(r.operands[2], "0u") + ";\n";
    body += "    int oi[" + std::to_string(dims.size()) + "];\n";
    for (size_t d = 0; d < dims.size(); ++d) body += "    oi[" + std::to_string(d) + "] = int(" + oc[d] + ");\n";
    // Windows in reverse order visit sources in increasing order.
    body += "    for (int w = " + I(wcount - 1) + "; w >= 0; --w) {\n";
    const auto wc = hlo::CoordinatesOf("uint(w)", wdims);
    std::vector<std::string> sc;
    for (size_t d = 0; d < dims.size(); ++d) {
      const hlo::WindowDim& w = window[d];
      const std::string s = "s" + std::to_string(d);
      body += "      int " + s + " = oi[" + std::to_string(d) + "] + " + I(w.pad_low) + " - int(" + wc[d] + ") * " +
              I(w.window_dilation) + ";\n";
      body += "      if (" + s + " < 0 || " + s + " % " + I(w.stride) + " != 0) continue;\n";
      body += "      " + s + " /= " + I(w.stride) + ";\n";
      body += "      if (" + s + " >= " + I(source->shape.dim(static_cast<int>(d))) + ") continue;\n";
      sc.push_back("uint(" + s + ")");
    }
    // The position window s selects.
    body += "      int selected = -1;\n      " + T + " best;\n";
    body += "      for (uint v = 0u; v < " + U(wcount) + "; ++v) {\n";
    const auto vc = hlo::CoordinatesOf("v", wdims);
    std::vector<std::string> ac;
    body += "        bool inside = true;\n";
    for (size_t d = 0; d < dims.size(); ++d) {
      const hlo::WindowDim& w = window[d];
      const std::string a = "a" + std::to_string(d);
      body += "        int " + a + " = s" + std::to_string(d) + " * " + I(w.stride) + " + int(" + vc[d] + ") * " +
              I(w.window_dilation) + " - " + I(w.pad_low) + ";\n";
      body += "        inside = inside && " + a + " >= 0 && " + a + " < " + I(dims[d]) + ";\n";
      ac.push_back("uint(" + a + ")");
    }
    body += "        if (!inside) continue;\n";
    body += "        int at = int(" + hlo::LinearIndexOf(ac, dims) + ");\n";
    body += "        " + T + " cand = " + Read(operand, "uint(at)") + ";\n";
    body += "        if (selected < 0) { selected = at; best = cand; continue; }\n";
    body += "        bool keep;\n        " + select + "(best, cand, keep);\n";
    body += "        if (!keep) { selected = at; best = cand; }\n      }\n";
    body += "      if (selected != int(o)) continue;\n";
    body += "      " + S + " next;\n      " + scatter + "(acc, " + Read(source, hlo::LinearIndexOf(sc, source->shape.dims())) +
            ", next);\n      acc = next;\n    }\n";
    body += "    " + Store(0, "o", "acc") + "\n";
    const int64_t count = Product(dims);
    // Each result walks every window position once, and scans the window
    // of each source that can hold it: at most ceil(size / stride) of them
    // along each dimension, and no more than the source has there (a
    // global pool's one window of 33 x 35 at stride 1 was counted as 1155
    // windows, and refused).
    int64_t sources = 1;
    for (size_t d = 0; d < window.size(); ++d) {
      const hlo::WindowDim& w = window[d];
      const int64_t stride = std::max<int64_t>(w.stride, 1);
      sources *= std::min((w.size + stride - 1) / stride, source->shape.dim(static_cast<int>(d)));
    }
    ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(count) * (wcount + sources * wcount),
                                     "a select-and-scatter of windows of " + std::to_string(wcount)));
    return Finish({{GridLoop("o", count, body), count}});
  }

  // Pass 1 copies the operands; pass 2 applies the updates one after another
  // in index order (updates may collide, and the combiner need not commute).
  hlo::StatusOr<KernelSource> Scatter() {
    const Instruction& r = *k_.root;
    const size_t n = (r.operands.size() - 1) / 2;
    const Instruction* indices = r.operands[n];
    ANVIL_ASSIGN_OR_RETURN(auto update_window_dims, hlo::IntListAttribute(r, "update_window_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto inserted_window_dims, hlo::IntListAttribute(r, "inserted_window_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto input_batching_dims, hlo::IntListAttribute(r, "input_batching_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto indices_batching_dims, hlo::IntListAttribute(r, "scatter_indices_batching_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto to_operand, hlo::IntListAttribute(r, "scatter_dims_to_operand_dims"));
    const int idx_rank = indices->shape.rank();
    ANVIL_ASSIGN_OR_RETURN(int64_t ivd, hlo::IntAttribute(r, "index_vector_dim", idx_rank));
    ANVIL_ASSIGN_OR_RETURN(std::string fn, Combiner(*r.called_computations.at(0)));
    const auto& in = r.operands[0]->shape.dims();
    const int rank = static_cast<int>(in.size());
    const auto& up = r.operands[n + 1]->shape.dims();
    std::string copy;
    for (size_t v = 0; v < n; ++v) copy += "    " + Store(v, "i", Read(r.operands[v], "i")) + "\n";
    const int64_t count = Product(in);

    const auto uc = hlo::CoordinatesOf("k", up);
    std::vector<std::string> scatter_index;
    for (int d = 0; d < static_cast<int>(up.size()); ++d) {
      if (!Contains(update_window_dims, d)) scatter_index.push_back(uc[d]);
    }
    std::vector<int64_t> window_input_dims;
    for (int d = 0; d < rank; ++d) {
      if (!Contains(inserted_window_dims, d) && !Contains(input_batching_dims, d)) window_input_dims.push_back(d);
    }
    // Index arithmetic in the indices' own width (64 bits only for 64-bit
    // indices or huge operands): lavapipe dropped every update when s32
    // indices were widened to int64_t here.
    bool wide = hlo::Info(indices->shape.element_type()).byte_size > 4;
    for (int64_t extent : in) wide |= extent > int64_t{1} << 30;
    const std::string IT = wide ? "int64_t" : "int", L = wide ? "l" : "";
    std::vector<std::string> ri(rank, "0" + L);
    // One invocation applies the updates in order. More than kSerialSteps
    // of them take several passes of kSerialSteps each, the same module
    // run again, each starting where a counter in scratch says the last
    // one stopped: lavapipe ends an invocation's loops after 65535
    // iterations in all, and a scatter of 70000 updates applied 65535.
    const int64_t updates = Product(up);
    const int64_t passes = std::max<int64_t>(1, (updates + kSerialSteps - 1) / kSerialSteps);
    std::string body = "  if (" + d_.GlobalIndex() + " != 0u) return;\n";
    std::string counter;
    if (passes > 1) {
      result_.scratch_bytes = {4};
      counter = ScratchAt(0, ElementType::kU32, "0u");
      body += "  uint k0 = " + counter + ", k1 = min(k0 + " + U(kSerialSteps) + ", " + U(updates) + ");\n";
      body += "  " + counter + " = k1;\n";
      body += "  for (uint k = k0; k < k1; ++k) {\n";
    } else {
      body += "  for (uint k = 0u; k < " + U(updates) + "; ++k) {\n";
    }
    for (size_t c = 0; c < to_operand.size(); ++c) {
      std::vector<std::string> at;
      size_t s = 0;
      for (int d = 0; d < idx_rank; ++d) at.push_back(d == ivd ? U(static_cast<int64_t>(c)) : scatter_index[s++]);
      ri[to_operand[c]] = "(" + ri[to_operand[c]] + " + " + IT + "(" + Read(indices, hlo::LinearIndexOf(at, indices->shape.dims())) + "))";
    }
    for (size_t b = 0; b < input_batching_dims.size(); ++b) {
      const int64_t d_start = indices_batching_dims[b];
      ri[input_batching_dims[b]] = "(" + ri[input_batching_dims[b]] + " + " + IT + "(" +
                                   scatter_index[d_start < ivd ? d_start : d_start - 1] + "))";
    }
    for (size_t w = 0; w < update_window_dims.size() && w < window_input_dims.size(); ++w) {
      ri[window_input_dims[w]] = "(" + ri[window_input_dims[w]] + " + " + IT + "(" + uc[update_window_dims[w]] + "))";
    }
    std::vector<std::string> rc;
    std::string inside = "true";
    for (int d = 0; d < rank; ++d) {
      const std::string x = "x" + std::to_string(d);
      body += "    " + IT + " " + x + " = " + ri[d] + ";\n";
      inside += " && " + x + " >= 0" + L + " && " + x + " < " + std::to_string(in[d]) + L;
      rc.push_back("uint(" + x + ")");
    }
    body += "    if (!(" + inside + ")) continue;\n";
    body += "    uint at = " + hlo::LinearIndexOf(rc, in) + ";\n";
    std::string call = fn + "(";
    for (size_t v = 0; v < n; ++v) call += LoadExpr(result_.outputs[v].element_type(), Out(v, "at")) + ", ";
    for (size_t v = 0; v < n; ++v) call += Read(r.operands[n + 1 + v], "k") + ", ";
    for (size_t v = 0; v < n; ++v) {
      body += "    " + RegisterType(result_.outputs[v].element_type()) + " n" + std::to_string(v) + ";\n";
      call += "n" + std::to_string(v) + (v + 1 < n ? ", " : ")");
    }
    body += "    " + call + ";\n";
    for (size_t v = 0; v < n; ++v) body += "    " + Store(v, "at", "n" + std::to_string(v)) + "\n";
    body += "  }\n";
    std::string first = GridLoop("i", count, copy);
    if (passes > 1) first = "  if (" + d_.GlobalIndex() + " == 0u) " + counter + " = 0u;\n" + first;
    std::vector<std::pair<std::string, uint64_t>> all = {{first, std::max<int64_t>(count, 1)}};
    for (int64_t p = 0; p < passes; ++p) all.push_back({body, 1});
    return Finish(std::move(all));
  }

  // Pass 1 copies the operands; pass 2 sorts each row in place, one
  // invocation per row, by stable insertion. Rows longer than
  // kInsertionRow go through a sorting network instead (LongSort).
  // A sort's operands as rows along its dimension: `length` elements
  // `stride` apart, one row per position of the other dimensions (`rows`,
  // the shape with the sorted dimension 1), and its comparator.
  struct SortRows {
    std::string cmp;
    std::vector<int64_t> shape, rows;
    int64_t count = 0, length = 0, stride = 1, row_count = 0;
  };
  hlo::StatusOr<SortRows> SortRowsOf(const Instruction& r) {
    ANVIL_ASSIGN_OR_RETURN(auto dims, hlo::IntListAttribute(r, "dimensions"));
    const int dim = static_cast<int>(dims.at(0));
    SortRows s;
    ANVIL_ASSIGN_OR_RETURN(s.cmp, Combiner(*r.called_computations.at(0)));
    s.shape = r.operands[0]->shape.dims();
    s.count = Product(s.shape);
    s.length = s.shape[dim];
    for (int d = dim + 1; d < static_cast<int>(s.shape.size()); ++d) s.stride *= s.shape[d];
    s.rows = s.shape;
    s.rows[dim] = 1;
    s.row_count = Product(s.rows);
    return s;
  }

  hlo::StatusOr<KernelSource> Sort() {
    const Instruction& r = *k_.root;
    ANVIL_ASSIGN_OR_RETURN(const SortRows s, SortRowsOf(r));
    if (s.length > kInsertionRow) return LongSort(s);
    const size_t n = r.operands.size();
    const std::string& cmp = s.cmp;
    const std::vector<int64_t>& shape = s.shape;
    const int64_t count = s.count, length = s.length, stride = s.stride;
    std::string copy;
    for (size_t v = 0; v < n; ++v) copy += "    " + Store(v, "i", Read(r.operands[v], "i")) + "\n";
    const auto rc = hlo::CoordinatesOf("row", s.rows);
    std::string body = "    uint base = " + hlo::LinearIndexOf(rc, shape) + ";\n";
    auto at = [&](const std::string& j) { return "base + uint(" + j + ") * " + U(stride); };
    body += "    for (int j = 1; j < " + I(length) + "; ++j) {\n";
    for (size_t v = 0; v < n; ++v) {
      body += "      " + RegisterType(result_.outputs[v].element_type()) + " key" + std::to_string(v) + " = " +
              LoadExpr(result_.outputs[v].element_type(), Out(v, at("j"))) + ";\n";
    }
    body += "      int m = j - 1;\n      while (m >= 0) {\n";
    std::string call = cmp + "(";
    for (size_t v = 0; v < n; ++v) {
      body += "        " + RegisterType(result_.outputs[v].element_type()) + " c" + std::to_string(v) + " = " +
              LoadExpr(result_.outputs[v].element_type(), Out(v, at("m"))) + ";\n";
      call += "key" + std::to_string(v) + ", c" + std::to_string(v) + ", ";
    }
    body += "        bool before;\n        " + call + "before);\n        if (!before) break;\n";
    for (size_t v = 0; v < n; ++v) body += "        " + Store(v, at("m + 1"), "c" + std::to_string(v)) + "\n";
    body += "        --m;\n      }\n";
    for (size_t v = 0; v < n; ++v) body += "      " + Store(v, at("m + 1"), "key" + std::to_string(v)) + "\n";
    body += "    }\n";
    const int64_t row_count = s.row_count;
    ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(row_count) * (length * (length + 1) / 2),
                                     "an insertion sort of rows of " + std::to_string(length)));
    return Finish({{GridLoop("i", count, copy), count}, {GridLoop("row", row_count, body), row_count}});
  }

  // Long rows: a bitonic network over the row padded to a power of two
  // (positions past its end count as greater than every element, so a
  // compare with one is skipped), in the form whose every compare puts the
  // lesser element first: in stage k (2, 4, ..., P) the first step pairs
  // each position of a block of k with its mirror in the block, the later
  // ones positions j = k/4, ..., 1 apart. Each element carries its place in
  // the row (scratch), and of two the comparator cannot order the one from
  // the earlier place comes first, so the sort is stable as insertion's.
  // Every step is one pass of the same module, with k and j in scratch,
  // and a one-invocation pass between steps moves them on: two modules in
  // all, log2(P) (log2(P) + 1) / 2 steps, and no invocation loops more
  // than its share of the row's pairs (lavapipe ends an invocation's loops
  // after 65535 iterations, and insertion needs about L^2 / 4 of them).
  hlo::StatusOr<KernelSource> LongSort(const SortRows& s) {
    const Instruction& r = *k_.root;
    const size_t n = r.operands.size();
    const std::string& cmp = s.cmp;
    const std::vector<int64_t>& shape = s.shape;
    const std::vector<int64_t>& rows = s.rows;
    const int64_t count = s.count, length = s.length, stride = s.stride, row_count = s.row_count;
    int64_t padded = 1, steps = 0;
    for (int p = 1; padded < length; ++p) {
      padded *= 2;
      steps += p;
    }
    result_.scratch_bytes = {8, static_cast<uint64_t>(count) * 4};
    const std::string k_at = ScratchAt(0, ElementType::kU32, "0u"), j_at = ScratchAt(0, ElementType::kU32, "1u");
    auto place = [&](const std::string& at) { return ScratchAt(1, ElementType::kU32, at); };
    // Pass 1: the operands copied, each element's place noted, stage 2.
    std::string copy;
    for (size_t v = 0; v < n; ++v) copy += "    " + Store(v, "i", Read(r.operands[v], "i")) + "\n";
    copy += "    " + place("i") + " = (i / " + U(stride) + ") % " + U(length) + ";\n";
    const std::string first = "  if (" + d_.GlobalIndex() + " == 0u) { " + k_at + " = 2u; " + j_at + " = 1u; }\n" +
                              GridLoop("i", count, copy);
    // A step: pair q of row `row` compared and, if out of order, swapped.
    const auto rc = hlo::CoordinatesOf("row", rows);
    const int64_t pairs = row_count * (padded / 2);
    std::string step = "    uint k = " + k_at + ", j = " + j_at + ";\n";
    step += "    uint row = g / " + U(padded / 2) + ", q = g % " + U(padded / 2) + ";\n";
    step += "    uint a, b;\n";
    step += "    if (j == k / 2u) { a = q / j * k + q % j; b = q / j * k + k - 1u - q % j; }\n";
    step += "    else { a = q / j * 2u * j + q % j; b = a + j; }\n";
    step += "    if (b >= " + U(length) + ") continue;\n";
    step += "    uint base = " + hlo::LinearIndexOf(rc, shape) + ";\n";
    step += "    uint at_a = base + a * " + U(stride) + ", at_b = base + b * " + U(stride) + ";\n";
    auto call = [&](const std::string& x, const std::string& y, const std::string& out) {
      std::string c = cmp + "(";
      for (size_t v = 0; v < n; ++v) c += x + std::to_string(v) + ", " + y + std::to_string(v) + ", ";
      return c + out + ");\n";
    };
    for (size_t v = 0; v < n; ++v) {
      const ElementType t = result_.outputs[v].element_type();
      step += "    " + RegisterType(t) + " a" + std::to_string(v) + " = " + LoadExpr(t, Out(v, "at_a")) + ";\n";
      step += "    " + RegisterType(t) + " b" + std::to_string(v) + " = " + LoadExpr(t, Out(v, "at_b")) + ";\n";
    }
    step += "    bool b_first, a_first;\n    " + call("b", "a", "b_first") + "    " + call("a", "b", "a_first");
    step += "    if (!(b_first || (!a_first && " + place("at_b") + " < " + place("at_a") + "))) continue;\n";
    for (size_t v = 0; v < n; ++v) {
      step += "    " + Store(v, "at_a", "b" + std::to_string(v)) + "\n    " + Store(v, "at_b", "a" + std::to_string(v)) + "\n";
    }
    step += "    uint place_a = " + place("at_a") + ";\n    " + place("at_a") + " = " + place("at_b") + ";\n    " +
            place("at_b") + " = place_a;\n";
    // Between steps: the next j, or the next stage.
    const std::string advance = "  if (" + d_.GlobalIndex() + " != 0u) return;\n  if (" + j_at + " > 1u) { " + j_at +
                                " = " + j_at + " / 2u; } else { " + k_at + " = " + k_at + " * 2u; " + j_at + " = " +
                                k_at + " / 2u; }\n";
    std::vector<std::pair<std::string, uint64_t>> passes = {{first, static_cast<uint64_t>(count)}};
    const std::string step_pass = GridLoop("g", pairs, step);
    for (int64_t s = 0; s < steps; ++s) {
      passes.push_back({step_pass, static_cast<uint64_t>(pairs)});
      if (s + 1 < steps) passes.push_back({advance, 1});
    }
    return Finish(std::move(passes));
  }

  // A pass's module and how many invocations run it.
  using Pass = std::pair<std::string, uint64_t>;
  // Appends `count` rounds of a factorisation's per-column passes. Round c
  // runs rounds[c % 2]: the passes that read the column from counter c % 2
  // (the round's last pass writes the next column to the other counter), so
  // two sets of modules serve any number of columns.
  static void AppendAlternating(std::vector<Pass>& passes, int64_t count, const std::vector<Pass> (&rounds)[2]) {
    for (int64_t c = 0; c < count; ++c) passes.insert(passes.end(), rounds[c % 2].begin(), rounds[c % 2].end());
  }
  // Applies reflector j (H = I - tau v v^T, v(j) = 1 implied, v(row) for
  // rows below j) to column `col` of `target`, in the evaluator's order:
  // dot = target(j) + sum of v(row) target(row), times tau, taken from
  // target(j) and, times v(row), from each target(row). Statements of an
  // invocation that has `j`, `col` and `tau`.
  using MatrixElement = std::function<std::string(const std::string& row, const std::string& col)>;
  std::string ApplyReflector(const MatrixElement& v, const MatrixElement& target, int64_t m) {
    std::string apply = "      double dot = " + target("j", "col") + ";\n";
    apply += "      for (uint row = j + 1u; row < " + U(m) + "; ++row) dot += " + v("row", "j") + " * " +
             target("row", "col") + ";\n";
    apply += "      dot *= tau;\n      " + target("j", "col") + " -= dot;\n";
    apply += "      for (uint row = j + 1u; row < " + U(m) + "; ++row) " + target("row", "col") + " -= dot * " +
             v("row", "j") + ";\n";
    return apply;
  }

  // Cholesky, as the evaluator computes it: in double, column by column,
  // L(j, j) = sqrt(a(j, j) - sum_k<j L(j, k)^2), then L(r, j) = (a(r, j) -
  // sum_k<j L(r, k) L(j, k)) / L(j, j) below it, the sums in k's order; the
  // other triangle 0; a matrix with a pivot that is not positive all NaN.
  // Scratch 0 holds L; scratch 1 two column counters and a flag per
  // matrix. Each column is two passes (the diagonal, one invocation per
  // matrix; then the column below it, one per row), which read the column
  // from one counter, the second also writing the next column to the other:
  // four modules, dispatched n times over, whatever n is.
  hlo::StatusOr<KernelSource> Cholesky() {
    const Instruction& r = *k_.root;
    const Instruction* a = r.operands[0];
    const ElementType t = r.shape.element_type();
    if (!d_.HasFloat64()) return NotYet(r, "the cholesky kernel computes in double, which this device lacks");
    const bool lower = hlo::BoolAttribute(r, "lower");
    const bool complex = hlo::IsComplex(t);
    const int rank = r.shape.rank();
    if (rank < 2) return NotYet(r, "cholesky of fewer than two dimensions");
    const int64_t n = r.shape.dim(rank - 1);
    const int64_t matrices = n == 0 ? 0 : r.shape.ElementCount() / (n * n);
    const int64_t total = matrices * n * n;
    ANVIL_RETURN_IF_ERROR(CheckLoops(std::max(GridShare(matrices), GridShare(matrices * n)) * n,
                                     "a cholesky of " + std::to_string(n) + " columns"));
    result_.scratch_bytes = {static_cast<uint64_t>(std::max<int64_t>(total, 1)) * (complex ? 16 : 8),
                             static_cast<uint64_t>(2 + std::max<int64_t>(matrices, 1)) * 4};
    // L's elements: double, or complex double (x real, y imaginary).
    const std::string E = complex ? "dvec2" : "double";
    auto l = [&](const std::string& index) { return complex ? Scratch(0, index) : ScratchAt(0, ElementType::kF64, index); };
    auto flag = [&](const std::string& index) { return ScratchAt(1, ElementType::kU32, index); };
    // p conj(q), of variables.
    auto times_conjugate = [&](const std::string& p, const std::string& q) {
      return complex ? "dvec2(" + p + ".x * " + q + ".x + " + p + ".y * " + q + ".y, " + p + ".y * " + q + ".x - " + p +
                           ".x * " + q + ".y)"
                     : p + " * " + q;
    };
    const std::string zero = d_.DoubleLiteral("0.0");
    const std::string nan = "packDouble2x32(uvec2(0u, 0x7ff80000u))";
    std::vector<std::pair<std::string, uint64_t>> passes;
    std::string load = "    uint b = g / " + U(n * n) + ", row = (g / " + U(n) + ") % " + U(n) + ", col = g % " + U(n) +
                       ";\n";
    const std::string from = "b * " + U(n * n) + " + " + (lower ? "row * " + U(n) + " + col" : "col * " + U(n) + " + row");
    // The triangle `lower` names, as the lower one (upper: its adjoint).
    std::string element = E + "(" + Read(a, from) + ")";
    if (complex && !lower) element = "dvec2(" + Read(a, from) + ".x, -" + Read(a, from) + ".y)";
    load += "    " + l("g") + " = row >= col ? " + element + " : " + E + "(" + zero + ");\n";
    load += "    if (g < 2u) " + flag("g") + " = 0u;\n";
    load += "    if (row == 0u && col == 0u) " + flag("2u + b") + " = 1u;\n";
    passes.push_back({GridLoop("g", total, load), static_cast<uint64_t>(total)});
    const std::string last = U(std::max<int64_t>(n - 1, 0));
    std::vector<Pass> column_passes[2];  // (diagonal, below it), reading counter x
    for (int x = 0; x < 2; ++x) {
      const std::string j = flag(U(x));
      // j < n always; the guards keep a wrong counter from writing past L.
      std::string diagonal = "    uint j = min(" + j + ", " + last + "), base = b * " + U(n * n) + ";\n";
      diagonal += "    double d = " + l("base + j * " + U(n + 1)) + (complex ? ".x" : "") + ";\n";
      diagonal += "    for (uint k = 0u; k < j; ++k) { " + E + " v = " + l("base + j * " + U(n) + " + k") + "; d -= " +
                  (complex ? "v.x * v.x + v.y * v.y" : "v * v") + "; }\n";
      diagonal += "    if (!(d > " + zero + ")) " + flag("2u + b") + " = 0u;\n";
      diagonal += "    " + l("base + j * " + U(n + 1)) + " = " + E + "(sqrt(d)" + (complex ? ", " + zero : "") + ");\n";
      std::string column = "    uint j = min(" + j + ", " + last + "), b = g / " + U(n) + ", row = g % " + U(n) +
                           ", base = b * " + U(n * n) + ";\n";
      column += "    if (row > j) {\n      " + E + " v = " + l("base + row * " + U(n) + " + j") + ";\n";
      column += "      for (uint k = 0u; k < j; ++k) { " + E + " p = " + l("base + row * " + U(n) + " + k") + ", q = " +
                l("base + j * " + U(n) + " + k") + "; v -= " + times_conjugate("p", "q") + "; }\n";
      column += "      " + l("base + row * " + U(n) + " + j") + " = v / " + l("base + j * " + U(n + 1)) +
                (complex ? ".x" : "") + ";\n    }\n";
      column += "    if (g == 0u) " + flag(U(1 - x)) + " = j + 1u;\n";
      column_passes[x] = {{GridLoop("b", matrices, diagonal), static_cast<uint64_t>(matrices)},
                          {GridLoop("g", matrices * n, column), static_cast<uint64_t>(matrices * n)}};
    }
    AppendAlternating(passes, n, column_passes);
    std::string store = "    uint b = o / " + U(n * n) + ", row = (o / " + U(n) + ") % " + U(n) + ", col = o % " + U(n) +
                        ";\n";
    store += "    " + E + " v = " + E + "(" + zero + ");\n";
    store += "    if (" + flag("2u + b") + " == 0u) v = " + E + "(" + nan + ");\n";
    if (lower) {
      store += "    else if (row >= col) v = " + l("o") + ";\n";
    } else {
      // U = L^H.
      store += "    else if (col >= row) { v = " + l("b * " + U(n * n) + " + col * " + U(n) + " + row") + ";" +
               (complex ? " v.y = -v.y;" : "") + " }\n";
    }
    std::string value = "v";
    if (t == ElementType::kC64) value = "vec2(v)";
    if (!complex && t != ElementType::kF64) value = NarrowOnce(t, "v");
    store += "    " + Store(0, "o", value) + "\n";
    passes.push_back({GridLoop("o", total, store), static_cast<uint64_t>(total)});
    return Finish(std::move(passes));
  }

  // Double `v` as element type t: itself, or rounded once (NarrowOnce).
  std::string FromDouble(ElementType t, const std::string& v) {
    return t == ElementType::kF64 ? v : NarrowOnce(t, v);
  }
  // A real float matrix type the decomposition kernels take, or why not.
  hlo::Status CheckDecomposition(const Instruction& r, const hlo::Shape& shape, const char* what) {
    const ElementType t = shape.element_type();
    if (!shape.IsArray() || shape.rank() < 2 || hlo::IsComplex(t) || !hlo::IsFloat(t)) {
      return NotYet(r, std::string(what) + " of " + shape.ToString(false) + " (real matrices [..., m, n] only)");
    }
    if (!d_.HasFloat64()) return NotYet(r, std::string(what) + " computes in double, which this device lacks");
    return hlo::OkStatus();
  }

  // custom-call "Qr" (LAPACK's geqrf), as the evaluator computes it
  // (evaluator_decompositions.cc): in double, for each column j < min(m,
  // n), the reflector H = I - tau v v^T that zeroes it below the diagonal
  // (beta = -sign(alpha) |x|, the norm accumulated by hypot in row order),
  // then H applied to each column right of j. Per column, one pass with an
  // invocation per matrix and one with an invocation per column, reading j
  // from a counter in scratch as Cholesky's do.
  hlo::StatusOr<KernelSource> Qr() {
    const Instruction& r = *k_.root;
    const Instruction* a = r.operands.at(0);
    ANVIL_RETURN_IF_ERROR(CheckDecomposition(r, a->shape, "a QR factorisation"));
    const int rank = a->shape.rank();
    const int64_t m = a->shape.dim(rank - 2), n = a->shape.dim(rank - 1), k = std::min(m, n);
    const int64_t total = a->shape.ElementCount(), batch = m * n == 0 ? 0 : total / (m * n);
    ANVIL_RETURN_IF_ERROR(CheckLoops(std::max(GridShare(batch), GridShare(batch * n)) * 2 * m,
                                     "a QR factorisation of " + std::to_string(m) + " rows"));
    result_.scratch_bytes = {static_cast<uint64_t>(std::max<int64_t>(total, 1)) * 8,
                             static_cast<uint64_t>(std::max<int64_t>(batch * k, 1)) * 8, 8};
    auto A = [&](const std::string& row, const std::string& col) {
      return ScratchAt(0, ElementType::kF64, "base + " + row + " * " + U(n) + " + " + col);
    };
    auto tau_at = [&](const std::string& index) { return ScratchAt(1, ElementType::kF64, index); };
    auto counter = [&](const std::string& index) { return ScratchAt(2, ElementType::kU32, index); };
    const std::string zero = d_.DoubleLiteral("0.0"), one = d_.DoubleLiteral("1.0");
    lib_.Need("MATH");
    std::vector<std::pair<std::string, uint64_t>> passes;
    std::string load = "    " + ScratchAt(0, ElementType::kF64, "g") + " = double(" + Read(a, "g") + ");\n";
    load += "    if (g < 2u) " + counter("g") + " = 0u;\n";
    passes.push_back({GridLoop("g", total, load), static_cast<uint64_t>(total)});
    const std::string last = U(std::max<int64_t>(k - 1, 0));
    std::vector<Pass> column_passes[2];  // (reflector, applied), reading counter x
    for (int x = 0; x < 2; ++x) {
      std::string reflect = "    uint j = min(" + counter(U(x)) + ", " + last + "), base = b * " + U(m * n) + ";\n";
      reflect += "    double alpha = " + A("j", "j") + ", tail = " + zero + ", tau = " + zero + ";\n";
      reflect += "    for (uint row = j + 1u; row < " + U(m) + "; ++row) tail = dhypot(tail, " + A("row", "j") + ");\n";
      reflect += "    if (tail != " + zero + ") {\n";
      // beta = -copysign(hypot(alpha, tail), alpha), alpha's sign from its bits (-0 too).
      reflect += "      double h = dhypot(alpha, tail);\n";
      reflect += "      double beta = (unpackDouble2x32(alpha).y >> 31) != 0u ? h : -h;\n";
      reflect += "      tau = (beta - alpha) / beta;\n      double scale = " + one + " / (alpha - beta);\n";
      reflect += "      for (uint row = j + 1u; row < " + U(m) + "; ++row) " + A("row", "j") + " *= scale;\n";
      reflect += "      " + A("j", "j") + " = beta;\n    }\n";
      reflect += "    " + tau_at("b * " + U(k) + " + j") + " = tau;\n";
      std::string apply = "    uint j = min(" + counter(U(x)) + ", " + last + "), b = g / " + U(n) + ", col = g % " +
                          U(n) + ", base = b * " + U(m * n) + ";\n";
      apply += "    double tau = " + tau_at("b * " + U(k) + " + j") + ";\n";
      // The reflector's v lies below the diagonal of its own column.
      apply += "    if (col > j && tau != " + zero + ") {\n" + ApplyReflector(A, A, m) + "    }\n";
      apply += "    if (g == 0u) " + counter(U(1 - x)) + " = j + 1u;\n";
      column_passes[x] = {{GridLoop("b", batch, reflect), static_cast<uint64_t>(batch)},
                          {GridLoop("g", batch * n, apply), static_cast<uint64_t>(batch * n)}};
    }
    AppendAlternating(passes, k, column_passes);
    const ElementType t = result_.outputs[0].element_type();
    passes.push_back({GridLoop("o", total, "    " + Store(0, "o", FromDouble(t, ScratchAt(0, ElementType::kF64, "o"))) +
                                               "\n"),
                      static_cast<uint64_t>(total)});
    passes.push_back({GridLoop("o", batch * k, "    " + Store(1, "o", FromDouble(result_.outputs[1].element_type(),
                                                                                 tau_at("o"))) + "\n"),
                      static_cast<uint64_t>(batch * k)});
    return Finish(std::move(passes));
  }

  // custom-call "ProductOfElementaryHouseholderReflectors" (LAPACK's orgqr):
  // the first n columns of Q = H_0 ... H_{k-1}, from Qr's vectors and taus,
  // as the evaluator: I, then the reflectors applied last first, each to
  // the columns from its own on, one invocation per column.
  hlo::StatusOr<KernelSource> HouseholderProduct() {
    const Instruction& r = *k_.root;
    if (r.operands.size() != 2) return NotYet(r, "a Householder product of other than (vectors, taus)");
    const Instruction* v = r.operands[0];
    const Instruction* taus = r.operands[1];
    ANVIL_RETURN_IF_ERROR(CheckDecomposition(r, v->shape, "a Householder product"));
    const int rank = v->shape.rank();
    const int64_t m = v->shape.dim(rank - 2), n = v->shape.dim(rank - 1);
    const int64_t total = v->shape.ElementCount(), batch = m * n == 0 ? 0 : total / (m * n);
    const int64_t k = batch == 0 ? 0 : taus->shape.ElementCount() / batch;
    if (k > std::min(m, n)) return NotYet(r, "more reflectors than columns");
    ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(batch * n) * 2 * m,
                                     "a Householder product of " + std::to_string(m) + " rows"));
    result_.scratch_bytes = {static_cast<uint64_t>(std::max<int64_t>(total, 1)) * 8, 8};
    auto Q = [&](const std::string& row, const std::string& col) {
      return ScratchAt(0, ElementType::kF64, "base + " + row + " * " + U(n) + " + " + col);
    };
    auto V = [&](const std::string& row, const std::string& col) {
      return "double(" + Read(v, "base + " + row + " * " + U(n) + " + " + col) + ")";
    };
    auto counter = [&](const std::string& index) { return ScratchAt(1, ElementType::kU32, index); };
    const std::string zero = d_.DoubleLiteral("0.0"), one = d_.DoubleLiteral("1.0");
    std::vector<std::pair<std::string, uint64_t>> passes;
    std::string load = "    uint row = (g / " + U(n) + ") % " + U(m) + ", col = g % " + U(n) + ";\n";
    load += "    " + ScratchAt(0, ElementType::kF64, "g") + " = row == col ? " + one + " : " + zero + ";\n";
    load += "    if (g < 2u) " + counter("g") + " = " + U(std::max<int64_t>(k - 1, 0)) + ";\n";
    passes.push_back({GridLoop("g", total, load), static_cast<uint64_t>(total)});
    std::vector<Pass> column_passes[2];  // (applied), reading counter x
    for (int x = 0; x < 2; ++x) {
      std::string apply = "    uint j = min(" + counter(U(x)) + ", " + U(std::max<int64_t>(k - 1, 0)) + "), b = g / " +
                          U(n) + ", col = g % " + U(n) + ", base = b * " + U(m * n) + ";\n";
      apply += "    double tau = double(" + Read(taus, "b * " + U(k) + " + j") + ");\n";
      apply += "    if (col >= j && tau != " + zero + ") {\n" + ApplyReflector(V, Q, m) + "    }\n";
      apply += "    if (g == 0u) " + counter(U(1 - x)) + " = j - 1u;\n";
      column_passes[x] = {{GridLoop("g", batch * n, apply), static_cast<uint64_t>(batch * n)}};
    }
    AppendAlternating(passes, k, column_passes);
    passes.push_back({GridLoop("o", total, "    " + Store(0, "o", FromDouble(result_.outputs[0].element_type(),
                                                                             ScratchAt(0, ElementType::kF64, "o"))) +
                                               "\n"),
                      static_cast<uint64_t>(total)});
    return Finish(std::move(passes));
  }

  // custom-call "Eigh" (the base case of JAX's QDWH eigh and svd), as the
  // evaluator computes it: cyclic Jacobi sweeps in double until the
  // off-diagonal norm is under tolerance * |A| * 1e-3 (backend_config
  // "lower,sort,max_sweeps,tolerance"), each rotation zeroing a[p][q] by the
  // smaller angle; eigenvalues sorted ascending, stably, with their vectors
  // as columns. One invocation per matrix, the same steps in the same order,
  // so the same rounding.
  hlo::StatusOr<KernelSource> Eigh() {
    const Instruction& r = *k_.root;
    if (r.operands.size() != 1) return NotYet(r, "an Eigh of other than one matrix");
    const Instruction* x = r.operands[0];
    ANVIL_RETURN_IF_ERROR(CheckDecomposition(r, x->shape, "an eigendecomposition"));
    const int rank = x->shape.rank();
    const int64_t n = x->shape.dim(rank - 1);
    if (x->shape.dim(rank - 2) != n) return NotYet(r, "an eigendecomposition of a matrix that is not square");
    const int64_t batch = n == 0 ? 0 : x->shape.ElementCount() / (n * n);
    bool lower = true, sort = true;
    int64_t max_sweeps = 100;
    std::string tolerance = "1e-6";
    {
      std::vector<std::string> fields(1);
      for (char ch : hlo::StringAttribute(r, "backend_config")) {
        if (ch == ',') fields.emplace_back(); else if (ch != '"') fields.back() += ch;
      }
      if (fields.size() >= 1 && !fields[0].empty()) lower = fields[0] != "0";
      if (fields.size() >= 2 && !fields[1].empty()) sort = fields[1] != "0";
      if (fields.size() >= 3 && !fields[2].empty()) max_sweeps = std::max<int64_t>(1, std::atoll(fields[2].c_str()));
      if (fields.size() >= 4 && !fields[3].empty()) tolerance = fields[3];
    }
    char* end = nullptr;
    const double tolerance_value = std::strtod(tolerance.c_str(), &end);
    if (end == tolerance.c_str() || !std::isfinite(tolerance_value)) {
      return NotYet(r, "an Eigh tolerance that is not a finite number ('" + tolerance + "')");
    }
    if (max_sweeps > 1000000) return NotYet(r, "an Eigh of more than 10^6 sweeps");
    // With an exponent always, so that the dialect's double suffix follows a
    // floating-point literal ("1e+00", not "1").
    char literal[64];
    std::snprintf(literal, sizeof literal, "%.17e", tolerance_value);
    // Loop iterations of one invocation at most: loading, the sweeps (the
    // off-diagonal sum, then per pair three loops of n), the sort, the store.
    const int64_t pairs = n * (n - 1) / 2;
    ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(batch) * (3 * n * n + max_sweeps * (pairs + pairs * (3 * n + 1)) + n * n),
                                     "an eigendecomposition of " + std::to_string(n) + "x" + std::to_string(n) +
                                         " in up to " + std::to_string(max_sweeps) + " sweeps"));
    const uint64_t matrix_bytes = static_cast<uint64_t>(std::max<int64_t>(batch * n * n, 1)) * 8;
    result_.scratch_bytes = {matrix_bytes, matrix_bytes, static_cast<uint64_t>(std::max<int64_t>(batch * n, 1)) * 4};
    auto A = [&](const std::string& row, const std::string& col) {
      return ScratchAt(0, ElementType::kF64, "base + " + row + " * " + U(n) + " + " + col);
    };
    auto V = [&](const std::string& row, const std::string& col) {
      return ScratchAt(1, ElementType::kF64, "base + " + row + " * " + U(n) + " + " + col);
    };
    auto order = [&](const std::string& k) { return ScratchAt(2, ElementType::kU32, "b * " + U(n) + " + " + k); };
    const std::string zero = d_.DoubleLiteral("0.0"), one = d_.DoubleLiteral("1.0"), two = d_.DoubleLiteral("2.0");
    const std::string N = U(n);
    std::string body = "    uint base = b * " + U(n * n) + ";\n";
    // The symmetric matrix the named triangle describes, and V = I.
    body += "    for (uint r = 0u; r < " + N + "; ++r) for (uint c = 0u; c < " + N + "; ++c) {\n";
    body += "      bool same = (r >= c) == " + std::string(lower ? "true" : "false") + ";\n";
    body += "      " + A("r", "c") + " = double(" + Read(x, "base + (same ? r * " + N + " + c : c * " + N + " + r)") + ");\n";
    body += "      " + V("r", "c") + " = r == c ? " + one + " : " + zero + ";\n    }\n";
    body += "    double norm = " + zero + ";\n";
    body += "    for (uint e = 0u; e < " + U(n * n) + "; ++e) { double v = " +
            ScratchAt(0, ElementType::kF64, "base + e") + "; norm += v * v; }\n";
    body += "    norm = sqrt(norm);\n";
    body += "    for (uint sweep = 0u; sweep < " + U(max_sweeps) + "; ++sweep) {\n";
    body += "      double off = " + zero + ";\n";
    body += "      for (uint p = 0u; p < " + N + "; ++p) for (uint q = p + 1u; q < " + N + "; ++q) { double v = " +
            A("p", "q") + "; off += " + two + " * v * v; }\n";
    body += "      if (sqrt(off) <= " + d_.DoubleLiteral(literal) + " * norm * " + d_.DoubleLiteral("1e-3") +
            " || off == " + zero + ") break;\n";
    body += "      for (uint p = 0u; p < " + N + "; ++p) for (uint q = p + 1u; q < " + N + "; ++q) {\n";
    body += "        double apq = " + A("p", "q") + ";\n        if (apq == " + zero + ") continue;\n";
    body += "        double theta = (" + A("q", "q") + " - " + A("p", "p") + ") / (" + two + " * apq);\n";
    // copysign(1, theta), -0 too.
    body += "        double t = ((unpackDouble2x32(theta).y >> 31) != 0u ? -" + one + " : " + one +
            ") / (abs(theta) + sqrt(theta * theta + " + one + "));\n";
    body += "        double c = " + one + " / sqrt(t * t + " + one + "), s = t * c;\n";
    body += "        for (uint k = 0u; k < " + N + "; ++k) { double kp = " + A("k", "p") + ", kq = " + A("k", "q") + "; " +
            A("k", "p") + " = c * kp - s * kq; " + A("k", "q") + " = s * kp + c * kq; }\n";
    body += "        for (uint k = 0u; k < " + N + "; ++k) { double pk = " + A("p", "k") + ", qk = " + A("q", "k") + "; " +
            A("p", "k") + " = c * pk - s * qk; " + A("q", "k") + " = s * pk + c * qk; }\n";
    body += "        for (uint k = 0u; k < " + N + "; ++k) { double kp = " + V("k", "p") + ", kq = " + V("k", "q") + "; " +
            V("k", "p") + " = c * kp - s * kq; " + V("k", "q") + " = s * kp + c * kq; }\n";
    body += "      }\n    }\n";
    // The order of the eigenvalues: insertion sort, stable (or as they are).
    body += "    for (uint k = 0u; k < " + N + "; ++k) {\n      uint at = k;\n";
    if (sort) {
      body += "      double value = " + A("k", "k") + ";\n";
      body += "      while (at > 0u) { uint o = " + order("at - 1u") + "; if (!(value < " + A("o", "o") +
              ")) break; " + order("at") + " = o; --at; }\n";
    }
    body += "      " + order("at") + " = k;\n    }\n";
    const ElementType vt = result_.outputs[0].element_type(), et = result_.outputs[1].element_type();
    body += "    for (uint k = 0u; k < " + N + "; ++k) {\n      uint o = " + order("k") + ";\n";
    body += "      " + Store(1, "b * " + N + " + k", FromDouble(et, A("o", "o"))) + "\n";
    body += "      for (uint r = 0u; r < " + N + "; ++r) " + Store(0, "base + r * " + N + " + k", FromDouble(vt, V("r", "o"))) +
            "\n    }\n";
    return Finish({{GridLoop("b", batch, body), static_cast<uint64_t>(batch)}});
  }

  // op(a) x = b (left side) or x op(a) = b, one invocation per column (or
  // row) of b: forward or back substitution on the effective triangle.
  hlo::StatusOr<KernelSource> TriangularSolve() {
    const Instruction& r = *k_.root;
    const Instruction* a = r.operands[0];
    const Instruction* b = r.operands[1];
    const bool left = hlo::BoolAttribute(r, "left_side");
    const bool lower = hlo::BoolAttribute(r, "lower");
    const bool unit = hlo::BoolAttribute(r, "unit_diagonal");
    std::string transpose = hlo::StringAttribute(r, "transpose_a");
    if (transpose.empty()) transpose = "NO_TRANSPOSE";
    const bool transposed = transpose != "NO_TRANSPOSE";
    const bool conjugate = transpose == "ADJOINT" && hlo::IsComplex(r.shape.element_type());
    const ElementType t = r.shape.element_type();
    const std::string T = RegisterType(t);
    const int rank = b->shape.rank();
    const int64_t m = a->shape.dim(rank - 1);
    const int64_t rows = b->shape.dim(rank - 2), cols = b->shape.dim(rank - 1);
    const int64_t batch = b->shape.ElementCount() / std::max<int64_t>(rows * cols, 1);
    const int64_t systems = batch * (left ? cols : rows);
    // M(i, k): the matrix the substitution walks, an element of a.
    const bool swap = transposed != !left;  // M = op(a) on the left, op(a)^T on the right
    const bool m_lower = lower != swap;
    const bool complex = hlo::IsComplex(t);
    if (complex) lib_.Need("MATH");
    if (complex) lib_.Need("DEF_COMPLEX(" + T + ", " + (t == ElementType::kC64 ? "float" : "double") + ")");
    auto M = [&](const std::string& i, const std::string& k) {
      const std::string at = "abase + " + (swap ? k + " * " + U(m) + " + " + i : i + " * " + U(m) + " + " + k);
      std::string v = Read(a, at);
      return conjugate ? T + "(" + v + ".x, -" + v + ".y)" : v;
    };
    // Element i of this system's right-hand side (and solution).
    auto at_of = [&](const std::string& i) {
      return left ? "bbase + " + i + " * " + U(cols) + " + col" : "bbase + col * " + U(cols) + " + " + i;
    };
    const std::string x_at = at_of("i");
    const std::string system = "    uint bi = sys / " + U(left ? cols : rows) + ", col = sys % " + U(left ? cols : rows) +
                               ";\n    uint abase = bi * " + U(m * m) + ", bbase = bi * " + U(rows * cols) + ";\n";
    // Row i of the solution, from the rows solved before it.
    std::string row = "      " + T + " s = " + Read(b, x_at) + ";\n";
    row += m_lower ? "      for (uint k = 0u; k < i; ++k) {\n" : "      for (uint k = i + 1u; k < " + U(m) + "; ++k) {\n";
    const std::string xk = LoadExpr(t, Out(0, at_of("k")));
    row += complex ? "        s -= cmul(" + M("i", "k") + ", " + xk + ");\n" : "        s -= " + M("i", "k") + " * " + xk + ";\n";
    row += "      }\n";
    if (!unit) row += complex ? "      s = cdiv(s, " + M("i", "i") + ");\n" : "      s = s / " + M("i", "i") + ";\n";
    row += "      " + Store(0, x_at, Normalize(t, "s")) + "\n    }\n";
    // Each invocation walks at most m rows of at most m + 1 steps.
    const int64_t share = GridShare(systems), limit = static_cast<int64_t>(o_.max_loop_iterations);
    if (limit == 0 || share * (m * (m + 1) / 2 + m) <= limit) {
      const std::string rows_walk =
          m_lower ? "    for (uint i = 0u; i < " + U(m) + "; ++i) {\n" : "    for (uint i = " + U(m) + "; i-- > 0u;) {\n";
      return Finish({{GridLoop("sys", systems, system + rows_walk + row), static_cast<uint64_t>(systems)}});
    }
    // Past the device's loop limit (lavapipe's), the rows go in blocks, a
    // pass each, as few rows a block as keep every invocation under the
    // limit; a block's pass reads its number from a counter in scratch and
    // writes the next to the other counter, so two modules serve every
    // block (AppendAlternating).
    const int64_t block = limit / (share * (m + 1));
    ANVIL_RETURN_IF_ERROR(CheckLoops(share * (m + 1), "a triangular solve of order " + std::to_string(m)));
    const int64_t blocks = (m + block - 1) / block;
    result_.scratch_bytes = {8};
    auto counter = [&](const std::string& index) { return ScratchAt(0, ElementType::kU32, index); };
    std::vector<Pass> rounds[2];
    for (int x = 0; x < 2; ++x) {
      std::string pass = system + "    uint c = min(" + counter(U(x)) + ", " + U(blocks - 1) + ");\n";
      if (m_lower) {
        pass += "    for (uint i = c * " + U(block) + "; i < min(c * " + U(block) + " + " + U(block) + ", " + U(m) +
                "); ++i) {\n";
      } else {
        // Block c holds rows [m - (c + 1) block, m - c block), walked down.
        pass += "    uint top = " + U(m) + " - c * " + U(block) + ";\n";
        pass += "    for (uint i = top; i-- > (top > " + U(block) + " ? top - " + U(block) + " : 0u);) {\n";
      }
      pass += row + "    if (sys == 0u) " + counter(U(1 - x)) + " = c + 1u;\n";
      rounds[x] = {{GridLoop("sys", systems, pass), static_cast<uint64_t>(systems)}};
    }
    std::vector<Pass> passes = {{GridLoop("g", 2, "    " + counter("g") + " = 0u;\n"), 2}};
    AppendAlternating(passes, blocks, rounds);
    return Finish(std::move(passes));
  }

  // Element `index` of scratch buffer k (after the inputs and outputs),
  // whose elements are of type `t`.
  std::string ScratchAt(size_t k, ElementType t, const std::string& index) {
    return At(static_cast<int>(k_.inputs.size() + result_.outputs.size() + k), t, index);
  }

  // Scratch buffer k of the kernel (after the inputs and outputs), as
  // complex double elements.
  std::string Scratch(size_t k, const std::string& index) {
    const int n = static_cast<int>(k_.inputs.size() + result_.outputs.size() + k);
    buffers_[n] = "dvec2";
    return d_.Element(n, "dvec2", index);
  }

  // One radix-2 stage of Stockham's autosorting FFT along a dimension of
  // power-of-two length n and stride `stride`, from scratch buffer `from`
  // to the other: invocation g takes butterfly j of line g / (n/2), whose
  // inputs are elements j and j + n/2 and whose outputs, after the twiddle
  // e^(-+ pi i k / half) with k = j % half, go to (j / half) * 2 half + k
  // and half after it. log2(n) stages leave the transform in natural
  // order, in n log n work where the direct DFT did n^2 (an inverse is
  // scaled by 1/n, a power of two and so exact, in its last stage).
  std::string StockhamStage(int64_t n, int64_t half, int64_t stride, bool inverse, size_t from, size_t to) {
    const std::string zero = d_.DoubleLiteral("0.0"), one = d_.DoubleLiteral("1.0");
    std::string b = "    uint line = g / " + U(n / 2) + ", j = g % " + U(n / 2) + ";\n";
    b += "    uint base = (line / " + U(stride) + ") * " + U(n * stride) + " + line % " + U(stride) + ";\n";
    b += "    dvec2 x0 = " + Scratch(from, "base + j * " + U(stride)) + ";\n";
    b += "    dvec2 x1 = " + Scratch(from, "base + (j + " + U(n / 2) + ") * " + U(stride)) + ";\n";
    b += "    uint k = j % " + U(half) + ";\n    dvec2 w;\n";
    // k / (2 half) of a turn: exact at 0 and at a quarter (k = half / 2).
    b += "    if (k == 0u) w = dvec2(" + one + ", " + zero + ");\n";
    b += "    else if (2u * k == " + U(half) + ") w = dvec2(" + zero + ", " + (inverse ? "" : "-") + one + ");\n";
    b += "    else { dvec2 sc = dsincos(" + std::string(inverse ? "" : "-") + "D_PI * double(k) / double(" +
         std::to_string(half) + ")); w = dvec2(sc.y, sc.x); }\n";
    b += "    x1 = dvec2(x1.x * w.x - x1.y * w.y, x1.x * w.y + x1.y * w.x);\n";
    b += "    uint dst = base + ((j / " + U(half) + ") * " + U(2 * half) + " + k) * " + U(stride) + ";\n";
    const std::string scale = inverse && 2 * half == n ? " / double(" + std::to_string(n) + ")" : "";
    b += "    " + Scratch(to, "dst") + " = (x0 + x1)" + scale + ";\n";
    b += "    " + Scratch(to, "dst + " + U(half * stride)) + " = (x0 - x1)" + scale + ";\n";
    return b;
  }

  // Lines longer than this, of a length not a power of two, are
  // transformed by Bluestein's algorithm; shorter ones by a direct DFT.
  static constexpr int64_t kLongestDirectDft = 128;

  // The passes of Bluestein's chirp-z transform of every line of length n
  // (stride `stride`) of the `total`-element signal in scratch buffer
  // `from`, into the other: with c_k = e^(-+ pi i k^2 / n), X_j = c_j *
  // sum_k (x_k c_k) conj(c_(j-k)), a convolution done by power-of-two
  // transforms of M >= 2n - 1 points (Stockham stages) in scratch buffers
  // 2 and 3, whose last line holds the chirp filter conj(c) so that one
  // set of forward stages transforms it with the lines. k^2 mod 2n is
  // exact in double for n < 2^26 (the caller's bound, with the padded
  // lines' indices within a uint), so the chirp's angle is exact, whatever
  // the line's length.
  void BluesteinPasses(int64_t n, int64_t stride, int64_t total, bool inverse, size_t from,
                       std::vector<std::pair<std::string, uint64_t>>& passes) {
    int64_t m = 1;
    while (m < 2 * n - 1) m *= 2;
    const int64_t lines = total / n, padded = (lines + 1) * m;
    const uint64_t bytes = static_cast<uint64_t>(padded) * 16;
    if (result_.scratch_bytes.size() < 4) result_.scratch_bytes.resize(4, 0);
    result_.scratch_bytes[2] = std::max(result_.scratch_bytes[2], bytes);
    result_.scratch_bytes[3] = std::max(result_.scratch_bytes[3], bytes);
    auto chirp = [&](const std::string& k) {
      return "bluestein_chirp(" + k + ", " + U(n) + ", " + (inverse ? "true" : "false") + ")";
    };
    if (functions_.find("dvec2 bluestein_chirp(") == std::string::npos) {
      functions_ +=
          "dvec2 bluestein_chirp(uint k, uint n, bool inverse) {\n"
          "  double kk = double(k) * double(k), period = " + d_.DoubleLiteral("2.0") + " * double(n);\n"
          "  double r = kk - period * floor(kk / period);\n"
          "  dvec2 sc = dsincos((inverse ? D_PI : -D_PI) * r / double(n));\n"
          "  return dvec2(sc.y, sc.x);\n"
          "}\n";
    }
    // Padded lines: x_k c_k, zeros after n; then the filter.
    std::string load = "    uint line = g / " + U(m) + ", k = g % " + U(m) + ";\n    dvec2 v = dvec2(" + d_.DoubleLiteral("0.0") + ");\n";
    load += "    if (line < " + U(lines) + ") {\n";
    load += "      if (k < " + U(n) + ") { dvec2 x = " +
            Scratch(from, "(line / " + U(stride) + ") * " + U(n * stride) + " + line % " + U(stride) + " + k * " +
                    U(stride)) +
            "; dvec2 c = " + chirp("k") + "; v = dvec2(x.x * c.x - x.y * c.y, x.x * c.y + x.y * c.x); }\n";
    load += "    } else if (k < " + U(n) + " || " + U(m) + " - k < " + U(n) + ") {\n";
    load += "      dvec2 c = " + chirp("k < " + U(n) + " ? k : " + U(m) + " - k") + "; v = dvec2(c.x, -c.y);\n    }\n";
    load += "    " + Scratch(2, "g") + " = v;\n";
    passes.push_back({GridLoop("g", padded, load), static_cast<uint64_t>(padded)});
    size_t at = 2;
    for (int64_t half = 1; half < m; half *= 2) {
      passes.push_back({GridLoop("g", padded / 2, StockhamStage(m, half, 1, false, at, 5 - at)),
                        static_cast<uint64_t>(padded / 2)});
      at = 5 - at;
    }
    // Each line's transform times the filter's, then back (scaled by 1/M).
    std::string product = "    dvec2 a = " + Scratch(at, "g") + ", f = " + Scratch(at, U(lines * m) + " + g % " + U(m)) +
                          ";\n    " + Scratch(at, "g") + " = dvec2(a.x * f.x - a.y * f.y, a.x * f.y + a.y * f.x);\n";
    passes.push_back({GridLoop("g", lines * m, product), static_cast<uint64_t>(lines * m)});
    for (int64_t half = 1; half < m; half *= 2) {
      passes.push_back({GridLoop("g", lines * m / 2, StockhamStage(m, half, 1, true, at, 5 - at)),
                        static_cast<uint64_t>(lines * m / 2)});
      at = 5 - at;
    }
    // X_j = c_j * convolution_j (and 1/n for an inverse), in the signal's layout.
    std::string store = "    uint k = (i / " + U(stride) + ") % " + U(n) + ";\n";
    store += "    uint line = (i / " + U(n * stride) + ") * " + U(stride) + " + i % " + U(stride) + ";\n";
    store += "    dvec2 y = " + Scratch(at, "line * " + U(m) + " + k") + ", c = " + chirp("k") + ";\n";
    store += "    " + Scratch(1 - from, "i") + " = dvec2(y.x * c.x - y.y * c.y, y.x * c.y + y.y * c.x)" +
             (inverse ? " / double(" + std::to_string(n) + ")" : std::string()) + ";\n";
    passes.push_back({GridLoop("i", total, store), static_cast<uint64_t>(total)});
  }

  // The transform is separable: one pass per dimension, each, along a
  // dimension of power-of-two length, log2(n) Stockham stages, else a
  // direct DFT along it (twiddles exact at quarter turns), in double,
  // between two scratch buffers shaped like the full signal.
  hlo::StatusOr<KernelSource> Fft() {
    const Instruction& r = *k_.root;
    if (!d_.HasFloat64()) return NotYet(r, "the FFT kernels compute in double, which this device lacks");
    const std::string type = hlo::StringAttribute(r, "fft_type");
    ANVIL_ASSIGN_OR_RETURN(auto lengths, hlo::IntListAttribute(r, "fft_length"));
    const Instruction* in = r.operands[0];
    const int rank = in->shape.rank();
    const int n_dims = static_cast<int>(lengths.size());
    std::vector<int64_t> dims = in->shape.dims();
    if (type == "IRFFT") dims.back() = lengths.back();
    const int64_t total = Product(dims);
    result_.scratch_bytes = {static_cast<uint64_t>(std::max<int64_t>(total, 1)) * 16,
                             static_cast<uint64_t>(std::max<int64_t>(total, 1)) * 16};
    lib_.Need("MATH");
    const ElementType it = in->shape.element_type();
    std::vector<std::pair<std::string, uint64_t>> passes;
    // Load, as complex, rebuilding the Hermitian half IRFFT's input leaves out.
    const auto c = hlo::CoordinatesOf("i", dims);
    std::string load;
    const std::string zero = d_.DoubleLiteral("0.0"), one = d_.DoubleLiteral("1.0");
    auto as_complex = [&](const std::string& v) {
      return hlo::IsComplex(it) ? "dvec2(" + v + ")" : "dvec2(double(" + v + "), " + zero + ")";
    };
    if (type == "IRFFT") {
      const int64_t stored = in->shape.dims().back(), n = dims.back();
      std::vector<std::string> src(c.begin(), c.end()), mirrored(c.begin(), c.end());
      for (int d = rank - n_dims; d < rank; ++d) mirrored[d] = "((" + U(dims[d]) + " - " + c[d] + ") % " + U(dims[d]) + ")";
      mirrored.back() = "((" + U(n) + " - " + c.back() + ") % " + U(n) + ")";
      load += "    if (" + c.back() + " >= " + U(stored) + ") { dvec2 v = " +
              as_complex(Read(in, hlo::LinearIndexOf(mirrored, in->shape.dims()))) + "; " + Scratch(0, "i") +
              " = dvec2(v.x, -v.y); } else { " + Scratch(0, "i") + " = " +
              as_complex(Read(in, hlo::LinearIndexOf(src, in->shape.dims()))) + "; }\n";
    } else {
      load += "    " + Scratch(0, "i") + " = " + as_complex(Read(in, "i")) + ";\n";
    }
    passes.push_back({GridLoop("i", total, load), static_cast<uint64_t>(total)});
    const bool inverse = type == "IFFT" || type == "IRFFT";
    size_t from = 0;
    int64_t stride = 1;
    std::vector<int64_t> strides(rank);
    for (int d = rank - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= dims[d];
    }
    for (int d = rank - n_dims; d < rank; ++d) {
      const int64_t n = dims[d];
      if (n >= 2 && (n & (n - 1)) == 0) {
        for (int64_t half = 1; half < n; half *= 2) {
          passes.push_back({GridLoop("g", total / 2, StockhamStage(n, half, strides[d], inverse, from, 1 - from)),
                            static_cast<uint64_t>(total / 2)});
          from = 1 - from;
        }
        continue;
      }
      if (n > kLongestDirectDft && n < (int64_t{1} << 26) && (total / n + 1) * 4 * n < (int64_t{1} << 32)) {
        BluesteinPasses(n, strides[d], total, inverse, from, passes);
        from = 1 - from;
        continue;
      }
      ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(total) * n, "an FFT of length " + std::to_string(n)));
      std::string body = "    uint f = " + c[d] + ";\n    uint base = i - f * " + U(strides[d]) + ";\n";
      body += "    dvec2 sum = dvec2(" + zero + ");\n";
      // m = f e mod n, stepped by f rather than multiplied (f e passes 2^32
      // for n over 65536); at a quarter turn (m a multiple of n/4, or of
      // n/2, or 0) the twiddle is exact.
      body += "    uint m = 0u;\n";
      body += "    for (uint e = 0u; e < " + U(n) + "; ++e, m = m + f >= " + U(n) + " ? m + f - " + U(n) + " : m + f) {\n";
      body += "      dvec2 w;\n";
      const std::string quarter = n % 4 == 0   ? "m % " + U(n / 4) + " == 0u) { uint q = m / " + U(n / 4) + ";"
                                  : n % 2 == 0 ? "m % " + U(n / 2) + " == 0u) { uint q = 2u * (m / " + U(n / 2) + ");"
                                               : "m == 0u) { uint q = 0u;";
      body += "      if (" + quarter + " w = q == 0u ? dvec2(" + one + ", " + zero + ") : q == 1u ? dvec2(" + zero + ", -" +
              one + ") : q == 2u ? dvec2(-" + one + ", " + zero + ") : dvec2(" + zero + ", " + one + "); }\n";
      body += "      else { dvec2 sc = dsincos(-" + d_.DoubleLiteral("2.0") + " * D_PI * double(m) / double(" + std::to_string(n) +
              ")); w = dvec2(sc.y, sc.x); }\n";
      if (inverse) body += "      w.y = -w.y;\n";
      body += "      dvec2 x = " + Scratch(from, "base + e * " + U(strides[d])) + ";\n";
      body += "      sum += dvec2(x.x * w.x - x.y * w.y, x.x * w.y + x.y * w.x);\n    }\n";
      if (inverse) body += "    sum /= double(" + std::to_string(n) + ");\n";
      body += "    " + Scratch(1 - from, "i") + " = sum;\n";
      passes.push_back({GridLoop("i", total, body), static_cast<uint64_t>(total)});
      from = 1 - from;
    }
    // Store: the output's elements are the first ones along the last dim.
    const ElementType ot = r.shape.element_type();
    const auto oc = hlo::CoordinatesOf("o", r.shape.dims());
    const std::string v = Scratch(from, hlo::LinearIndexOf(oc, dims));
    const std::string value = hlo::IsComplex(ot) ? RegisterType(ot) + "(" + v + ")" : RegisterType(ot) + "(" + v + ".x)";
    const int64_t out_count = r.shape.ElementCount();
    passes.push_back({GridLoop("o", out_count, "    " + Store(0, "o", value) + "\n"), static_cast<uint64_t>(out_count)});
    return Finish(std::move(passes));
  }

  // The k largest (or smallest) of each row in order, ties by index: each
  // selection takes the best element ranked after the previous one. Floats
  // rank by total order.
  hlo::StatusOr<KernelSource> TopK() {
    const Instruction& r = *k_.root;
    const Instruction* in = r.operands[0];
    ANVIL_ASSIGN_OR_RETURN(int64_t k, hlo::IntAttribute(r, "k", std::nullopt));
    const bool largest = hlo::StringAttribute(r, "largest") != "false";
    const ElementType t = in->shape.element_type();
    const int64_t n = in->shape.rank() ? in->shape.dims().back() : 1;
    const int64_t rows = n == 0 ? 0 : in->shape.ElementCount() / n;
    std::string key_type, key;
    if (hlo::IsFloat(t)) {
      key_type = t == ElementType::kF64 ? "int64_t" : "int";
      key = TotalOrderKey(t, Read(in, "row * " + U(n) + " + e"));
    } else if (hlo::IsSignedInt(t)) {
      key_type = "int64_t";
      key = "int64_t(" + Read(in, "row * " + U(n) + " + e") + ")";
    } else if (hlo::IsComplex(t)) {
      return NotYet(r, "top-k of complex values");
    } else {
      key_type = "uint64_t";
      key = "uint64_t(" + Read(in, "row * " + U(n) + " + e") + ")";
    }
    const std::string better = largest ? ">" : "<";
    const std::string worse = largest ? "<" : ">";
    std::string body = "    " + key_type + " prev = " + key_type + "(0);\n    int prev_index = -1;\n";
    body += "    for (uint j = 0u; j < " + U(std::min(k, n)) + "; ++j) {\n";
    body += "      int best = -1;\n      " + key_type + " best_key = " + key_type + "(0);\n";
    body += "      for (uint e = 0u; e < " + U(n) + "; ++e) {\n";
    body += "        " + key_type + " ke = " + key + ";\n";
    body += "        if (prev_index >= 0 && !(ke " + worse + " prev || (ke == prev && int(e) > prev_index))) continue;\n";
    body += "        if (best < 0 || ke " + better + " best_key) { best = int(e); best_key = ke; }\n      }\n";
    body += "      " + Store(0, "row * " + U(k) + " + j", Read(in, "row * " + U(n) + " + uint(best)")) + "\n";
    body += "      " + Store(1, "row * " + U(k) + " + j", ConvertExpr(ElementType::kS32, result_.outputs[1].element_type(), "best", lib_)) + "\n";
    body += "      prev = best_key;\n      prev_index = best;\n    }\n";
    ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(rows) * std::min(k, n) * (n + 1),
                                     "a top-k of " + std::to_string(std::min(k, n)) + " of " + std::to_string(n)));
    return Finish({{GridLoop("row", rows, body), static_cast<uint64_t>(rows)}});
  }

  // ragged-dot with a ragged non-contracting lhs dimension: each result row
  // takes the rhs group that group_sizes assigns its lhs row to (zeros past
  // the last group). A ragged batch dimension is a plain dot.
  hlo::StatusOr<KernelSource> RaggedDot() {
    const Instruction& r = *k_.root;
    ANVIL_ASSIGN_OR_RETURN(auto lb, hlo::IntListAttribute(r, "lhs_batch_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto rb, hlo::IntListAttribute(r, "rhs_batch_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto lc, hlo::IntListAttribute(r, "lhs_contracting_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto rcd, hlo::IntListAttribute(r, "rhs_contracting_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto ragged, hlo::IntListAttribute(r, "lhs_ragged_dims"));
    ANVIL_ASSIGN_OR_RETURN(auto group, hlo::IntListAttribute(r, "rhs_group_dims"));
    const Instruction* lhs = r.operands[0];
    const Instruction* rhs = r.operands[1];
    const Instruction* sizes = r.operands[2];
    if (ragged.size() != 1) return NotYet(r, "ragged-dot needs exactly one lhs ragged dimension");
    const int64_t rd = ragged[0];
    if (Contains(lc, rd)) return NotYet(r, "a ragged contracting dimension");
    const bool batch_ragged = Contains(lb, rd);
    if (!batch_ragged && group.size() != 1) return NotYet(r, "a ragged non-contracting dimension needs one rhs group dimension");
    const ElementType t = r.shape.element_type();
    const auto oc = hlo::CoordinatesOf("o", r.shape.dims());
    std::vector<int64_t> contract;
    for (int64_t d : lc) contract.push_back(lhs->shape.dim(static_cast<int>(d)));
    const auto kc = hlo::CoordinatesOf("k", contract);
    std::vector<std::string> li(lhs->shape.rank()), ri(rhs->shape.rank());
    size_t at = 0;
    for (size_t b = 0; b < lb.size(); ++b, ++at) li[lb[b]] = ri[rb[b]] = oc[at];
    std::vector<int64_t> lhs_free;
    for (int d = 0; d < lhs->shape.rank(); ++d) {
      if (!Contains(lb, d) && !Contains(lc, d)) {
        li[d] = oc[at++];
        lhs_free.push_back(d);
      }
    }
    for (int d = 0; d < rhs->shape.rank(); ++d) {
      if (!Contains(rb, d) && !Contains(rcd, d) && !(batch_ragged ? false : Contains(group, d))) ri[d] = oc[at++];
    }
    for (size_t c = 0; c < lc.size(); ++c) li[lc[c]] = ri[rcd[c]] = kc[c];
    std::string body;
    if (!batch_ragged) {
      // group_sizes' leading dims: the last of the batch dims, then the
      // free lhs dims before the ragged one.
      std::vector<int64_t> prefix = lb;
      for (int64_t d : lhs_free) {
        if (d < rd) prefix.push_back(d);
      }
      const auto& gd = sizes->shape.dims();
      const size_t wanted = gd.size() - 1;
      if (prefix.size() > wanted) prefix.erase(prefix.begin(), prefix.end() - static_cast<std::ptrdiff_t>(wanted));
      if (prefix.size() != wanted) return NotYet(r, "group_sizes does not match the operands");
      std::vector<std::string> gi;
      for (int64_t d : prefix) gi.push_back(li[d]);
      gi.push_back("j");
      body += "    int g = -1;\n    int64_t start = 0l;\n";
      body += "    for (uint j = 0u; j < " + U(gd.back()) + "; ++j) {\n";
      body += "      int64_t end = start + int64_t(" + Read(sizes, hlo::LinearIndexOf(gi, gd)) + ");\n";
      body += "      if (int64_t(" + li[rd] + ") >= start && int64_t(" + li[rd] + ") < end) { g = int(j); break; }\n";
      body += "      start = end;\n    }\n";
      ri[group[0]] = "uint(g)";
    }
    const ElementType acc_t = AccumulatorType(t);
    body += "    " + RegisterType(acc_t) + " acc = " + ZeroExpr(acc_t) + ";\n";
    if (!batch_ragged) body += "    if (g >= 0)\n";
    ANVIL_RETURN_IF_ERROR(CheckLoops(GridShare(r.shape.ElementCount()) * Product(contract),
                                     "a dot contracting " + std::to_string(Product(contract)) + " elements"));
    body += "    for (uint k = 0u; k < " + U(Product(contract)) + "; ++k) {\n";
    body += "      " + AccumulateProduct(acc_t, lhs, li, rhs, ri) +
            "\n    }\n";
    body += "    " + Store(0, "o", Normalize(t, "acc")) + "\n";
    const int64_t n = r.shape.ElementCount();
    return Finish({{GridLoop("o", n, body), static_cast<uint64_t>(n)}});
  }

  const hlo::KernelSpec& k_;
  const KernelDialect& d_;
  const KernelOptions& o_;
  KernelSource result_;
  KernelLibrary lib_;
  std::string functions_, nodes_, shared_;
  std::set<std::string> emitted_;
  std::map<int, std::string> buffers_;  // table entry -> the storage type of its elements
  std::map<const Instruction*, std::string> fn_;
};

}  // namespace

hlo::StatusOr<KernelSource> EmitKernel(const hlo::KernelSpec& kernel, const KernelDialect& dialect,
                                       const KernelOptions& options) {
  return Emitter(kernel, dialect, options).Run();
}

}  // namespace anvil::gpu
