#include "hlo/verifier.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "hlo/attributes.h"

namespace anvil::hlo {
namespace {

Status Bad(std::string message) { return InvalidArgument(std::move(message)); }

std::string Dims(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

// Window and padding arithmetic is done in 128 bits: attributes are the
// caller's, and a product or sum that wrapped int64 could pass as a size.
using Wide = __int128;

// The number of positions a window takes along one dimension of `in`
// elements (with its dilations, padding and stride).
StatusOr<int64_t> WindowedSize(int64_t in, const WindowDim& w) {
  const Wide dilated_in = in == 0 ? 0 : Wide{in - 1} * w.base_dilation + 1;
  const Wide padded = dilated_in + w.pad_low + w.pad_high;
  const Wide dilated_w = w.size == 0 ? 0 : Wide{w.size - 1} * w.window_dilation + 1;
  const Wide size = padded < dilated_w ? 0 : (padded - dilated_w) / w.stride + 1;
  if (size > INT64_MAX) return Bad("the window's padding and dilation make a dimension too large");
  return static_cast<int64_t>(size);
}

Status ExpectOperands(const Instruction& i, size_t n) {
  if (i.operands.size() != n) {
    return Bad("takes " + std::to_string(n) + " operands, has " + std::to_string(i.operands.size()));
  }
  return OkStatus();
}

Status ExpectArray(const Shape& s, std::string_view what) {
  if (!s.IsArray()) return Bad(std::string(what) + " must be an array, is " + s.ToString());
  return OkStatus();
}

const Computation* Callee(const Instruction& i, size_t index) {
  return index < i.called_computations.size() ? i.called_computations[index] : nullptr;
}

StatusOr<Shape> InferElementwise(const Instruction& i) {
  if (i.operands.empty()) return Bad("needs operands");
  const Shape& first = i.operands[0]->shape;
  ANVIL_RETURN_IF_ERROR(ExpectArray(first, "operand 0"));
  for (size_t k = 1; k < i.operands.size(); ++k) {
    const Shape& other = i.operands[k]->shape;
    ANVIL_RETURN_IF_ERROR(ExpectArray(other, "operand " + std::to_string(k)));
    if (other.dims() != first.dims()) {
      return Bad("operand shapes differ: " + first.ToString(false) + " vs " + other.ToString(false));
    }
    if (other.element_type() != first.element_type() && i.opcode != Opcode::kStochasticConvert) {
      return Bad("operand element types differ: " + first.ToString(false) + " vs " + other.ToString(false));
    }
  }
  ElementType result = first.element_type();
  switch (i.opcode) {
    case Opcode::kCompare: result = ElementType::kPred; break;
    case Opcode::kIsFinite: result = ElementType::kPred; break;
    case Opcode::kComplex: result = ComplexOf(first.element_type()); break;
    case Opcode::kReal:
    case Opcode::kImag: result = ComponentType(first.element_type()); break;
    case Opcode::kAbs: result = ComponentType(first.element_type()); break;
    case Opcode::kStochasticConvert: result = i.shape.element_type(); break;
    default: break;
  }
  if (result == ElementType::kInvalid) return Bad("no complex type has component " + first.ToString(false));
  return Shape(result, first.dims());
}

StatusOr<Shape> InferReduceLike(const Instruction& i, const std::vector<int64_t>& reduced) {
  // reduce: N inputs then N inits; the result drops the reduced dimensions.
  if (i.operands.size() % 2 != 0 || i.operands.empty()) return Bad("takes inputs and as many init values");
  size_t n = i.operands.size() / 2;
  const Shape& input = i.operands[0]->shape;
  ANVIL_RETURN_IF_ERROR(ExpectArray(input, "input"));
  std::set<int64_t> dims(reduced.begin(), reduced.end());
  if (dims.size() != reduced.size()) return Bad("dimensions " + Dims(reduced) + " repeat");
  for (int64_t d : reduced) {
    if (d < 0 || d >= input.rank()) return Bad("dimension " + std::to_string(d) + " out of range for " + input.ToString(false));
  }
  std::vector<int64_t> out_dims;
  for (int d = 0; d < input.rank(); ++d) {
    if (!dims.count(d)) out_dims.push_back(input.dim(d));
  }
  std::vector<Shape> results;
  for (size_t k = 0; k < n; ++k) {
    const Shape& in = i.operands[k]->shape;
    const Shape& init = i.operands[n + k]->shape;
    if (in.dims() != input.dims()) return Bad("inputs differ in shape");
    if (!init.IsArray() || init.rank() != 0) return Bad("init value " + std::to_string(k) + " must be a scalar");
    results.emplace_back(init.element_type(), out_dims);
  }
  return n == 1 ? results[0] : Shape::Tuple(results);
}

StatusOr<Shape> InferDot(const Instruction& i) {
  ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 2));
  const Shape& lhs = i.operands[0]->shape;
  const Shape& rhs = i.operands[1]->shape;
  ANVIL_RETURN_IF_ERROR(ExpectArray(lhs, "lhs"));
  ANVIL_RETURN_IF_ERROR(ExpectArray(rhs, "rhs"));
  ANVIL_ASSIGN_OR_RETURN(auto lb, IntListAttribute(i, "lhs_batch_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto rb, IntListAttribute(i, "rhs_batch_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto lc, IntListAttribute(i, "lhs_contracting_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto rc, IntListAttribute(i, "rhs_contracting_dims"));
  if (lb.size() != rb.size()) return Bad("lhs and rhs batch dimensions differ in number");
  if (lc.size() != rc.size()) return Bad("lhs and rhs contracting dimensions differ in number");
  auto in_range = [](const std::vector<int64_t>& ds, const Shape& s) {
    return std::all_of(ds.begin(), ds.end(), [&](int64_t d) { return d >= 0 && d < s.rank(); });
  };
  if (!in_range(lb, lhs) || !in_range(lc, lhs) || !in_range(rb, rhs) || !in_range(rc, rhs)) {
    return Bad("dot dimension out of range");
  }
  for (size_t k = 0; k < lb.size(); ++k) {
    if (lhs.dim(lb[k]) != rhs.dim(rb[k])) return Bad("batch dimension sizes differ");
  }
  for (size_t k = 0; k < lc.size(); ++k) {
    if (lhs.dim(lc[k]) != rhs.dim(rc[k])) {
      return Bad("contracting dimension sizes differ: " + std::to_string(lhs.dim(lc[k])) + " vs " +
                 std::to_string(rhs.dim(rc[k])));
    }
  }
  std::vector<int64_t> dims;
  for (int64_t d : lb) dims.push_back(lhs.dim(d));
  auto free = [&](const Shape& s, const std::vector<int64_t>& b, const std::vector<int64_t>& c) {
    for (int d = 0; d < s.rank(); ++d) {
      if (std::find(b.begin(), b.end(), d) == b.end() && std::find(c.begin(), c.end(), d) == c.end()) {
        dims.push_back(s.dim(d));
      }
    }
  };
  free(lhs, lb, lc);
  free(rhs, rb, rc);
  return Shape(i.shape.element_type(), dims);
}

StatusOr<Shape> InferConvolution(const Instruction& i) {
  ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 2));
  const Shape& lhs = i.operands[0]->shape;
  const Shape& rhs = i.operands[1]->shape;
  const Attribute* labels = i.FindAttribute("dim_labels");
  if (!labels) return Bad("needs dim_labels");
  ANVIL_ASSIGN_OR_RETURN(ConvDimensionNumbers d, ParseDimLabels(labels->value));
  const size_t spatial = d.input_spatial.size();
  if (lhs.rank() != static_cast<int>(spatial + 2) || rhs.rank() != lhs.rank()) {
    return Bad("dim_labels " + labels->value + " do not fit " + lhs.ToString(false) + " and " + rhs.ToString(false));
  }
  std::vector<WindowDim> window(spatial);
  if (const Attribute* w = i.FindAttribute("window")) {
    ANVIL_ASSIGN_OR_RETURN(window, ParseWindow(w->value));
  }
  if (window.size() != spatial) return Bad("window has " + std::to_string(window.size()) + " dimensions, expected " + std::to_string(spatial));
  ANVIL_ASSIGN_OR_RETURN(int64_t fgc, IntAttribute(i, "feature_group_count", 1));
  ANVIL_ASSIGN_OR_RETURN(int64_t bgc, IntAttribute(i, "batch_group_count", 1));
  if (fgc < 1 || bgc < 1) return Bad("group counts must be positive");
  int64_t in_features = lhs.dim(static_cast<int>(d.input_feature));
  if (in_features % fgc != 0 || in_features / fgc != rhs.dim(static_cast<int>(d.kernel_input_feature))) {
    return Bad("input features " + std::to_string(in_features) + " / feature_group_count " + std::to_string(fgc) +
               " must equal the kernel's input features " + std::to_string(rhs.dim(static_cast<int>(d.kernel_input_feature))));
  }
  int64_t batch = lhs.dim(static_cast<int>(d.input_batch));
  if (batch % bgc != 0) return Bad("batch size is not a multiple of batch_group_count");
  std::vector<int64_t> out(lhs.rank());
  out[d.output_batch] = batch / bgc;
  out[d.output_feature] = rhs.dim(static_cast<int>(d.kernel_output_feature));
  for (size_t s = 0; s < spatial; ++s) {
    const WindowDim& w = window[s];
    int64_t in = lhs.dim(static_cast<int>(d.input_spatial[s]));
    int64_t k = rhs.dim(static_cast<int>(d.kernel_spatial[s]));
    if (w.size != k) return Bad("window size " + std::to_string(w.size) + " differs from kernel size " + std::to_string(k));
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) return Bad("window strides and dilations must be positive");
    ANVIL_ASSIGN_OR_RETURN(out[d.output_spatial[s]], WindowedSize(in, w));
  }
  return Shape(i.shape.element_type(), out);
}

StatusOr<Shape> InferReduceWindow(const Instruction& i) {
  if (i.operands.size() % 2 != 0 || i.operands.empty()) return Bad("takes inputs and as many init values");
  size_t n = i.operands.size() / 2;
  const Shape& input = i.operands[0]->shape;
  const Attribute* w = i.FindAttribute("window");
  if (!w) return Bad("needs a window");
  ANVIL_ASSIGN_OR_RETURN(auto window, ParseWindow(w->value));
  if (static_cast<int>(window.size()) != input.rank()) return Bad("window rank differs from the input's");
  std::vector<int64_t> dims;
  for (int d = 0; d < input.rank(); ++d) {
    const WindowDim& wd = window[d];
    if (wd.stride < 1 || wd.base_dilation < 1 || wd.window_dilation < 1) return Bad("window strides and dilations must be positive");
    ANVIL_ASSIGN_OR_RETURN(int64_t size, WindowedSize(input.dim(d), wd));
    dims.push_back(size);
  }
  std::vector<Shape> results;
  for (size_t k = 0; k < n; ++k) results.emplace_back(i.operands[n + k]->shape.element_type(), dims);
  return n == 1 ? results[0] : Shape::Tuple(results);
}

StatusOr<Shape> InferGather(const Instruction& i) {
  ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 2));
  const Shape& operand = i.operands[0]->shape;
  const Shape& indices = i.operands[1]->shape;
  ANVIL_ASSIGN_OR_RETURN(auto offset_dims, IntListAttribute(i, "offset_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto collapsed, IntListAttribute(i, "collapsed_slice_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto operand_batching, IntListAttribute(i, "operand_batching_dims"));
  ANVIL_ASSIGN_OR_RETURN(auto slice_sizes, IntListAttribute(i, "slice_sizes", {}, true));
  ANVIL_ASSIGN_OR_RETURN(int64_t ivd, IntAttribute(i, "index_vector_dim", indices.rank()));
  if (static_cast<int>(slice_sizes.size()) != operand.rank()) return Bad("slice_sizes must have one entry per operand dimension");
  for (int d = 0; d < operand.rank(); ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand.dim(d)) return Bad("slice size " + std::to_string(slice_sizes[d]) + " exceeds the operand");
  }
  std::vector<int64_t> batch;
  for (int d = 0; d < indices.rank(); ++d) {
    if (d != ivd) batch.push_back(indices.dim(d));
  }
  std::vector<int64_t> offsets;
  for (int d = 0; d < operand.rank(); ++d) {
    bool dropped = std::find(collapsed.begin(), collapsed.end(), d) != collapsed.end() ||
                   std::find(operand_batching.begin(), operand_batching.end(), d) != operand_batching.end();
    if (!dropped) offsets.push_back(slice_sizes[d]);
  }
  if (offsets.size() != offset_dims.size()) {
    return Bad("offset_dims has " + std::to_string(offset_dims.size()) + " entries but " + std::to_string(offsets.size()) + " slice dimensions remain");
  }
  size_t rank = batch.size() + offsets.size();
  std::vector<int64_t> dims(rank);
  size_t bi = 0, oi = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (std::find(offset_dims.begin(), offset_dims.end(), static_cast<int64_t>(d)) != offset_dims.end()) {
      dims[d] = offsets[oi++];
    } else {
      if (bi >= batch.size()) return Bad("offset_dims out of range");
      dims[d] = batch[bi++];
    }
  }
  return Shape(operand.element_type(), dims);
}

StatusOr<Shape> InferFft(const Instruction& i) {
  ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 1));
  const Shape& in = i.operands[0]->shape;
  std::string type = StringAttribute(i, "fft_type");
  ANVIL_ASSIGN_OR_RETURN(auto length, IntListAttribute(i, "fft_length"));
  if (length.size() > static_cast<size_t>(in.rank())) return Bad("fft_length is longer than the operand's rank");
  std::vector<int64_t> dims = in.dims();
  if (type == "FFT" || type == "IFFT") {
    if (!IsComplex(in.element_type())) return Bad(type + " needs a complex operand");
    return in;
  }
  if (type == "RFFT") {
    if (!IsFloat(in.element_type())) return Bad("RFFT needs a real operand");
    if (!dims.empty() && !length.empty()) dims.back() = length.back() / 2 + 1;
    return Shape(ComplexOf(in.element_type()), dims);
  }
  if (type == "IRFFT") {
    if (!IsComplex(in.element_type())) return Bad("IRFFT needs a complex operand");
    for (size_t k = 0; k < length.size(); ++k) dims[dims.size() - length.size() + k] = length[k];
    return Shape(ComponentType(in.element_type()), dims);
  }
  return Bad("unknown fft_type '" + type + "'");
}

}  // namespace

StatusOr<Shape> InferShape(const Instruction& i) {
  const Opcode op = i.opcode;
  if (IsElementwiseUnary(op) || IsElementwiseBinary(op)) {
    size_t arity = IsElementwiseBinary(op) ? 2 : 1;
    ANVIL_RETURN_IF_ERROR(ExpectOperands(i, arity));
    if (op == Opcode::kCompare) {
      std::string direction = StringAttribute(i, "direction");
      static const std::set<std::string> kDirections = {"EQ", "NE", "LT", "LE", "GT", "GE"};
      if (!kDirections.count(direction)) return Bad("compare needs direction=EQ|NE|LT|LE|GT|GE");
    }
    return InferElementwise(i);
  }
  switch (op) {
    case Opcode::kConvert:
    case Opcode::kBitcastConvert: {
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 1));
      const Shape& in = i.operands[0]->shape;
      ANVIL_RETURN_IF_ERROR(ExpectArray(in, "operand"));
      if (op == Opcode::kConvert) return Shape(i.shape.element_type(), in.dims());
      int in_bits = Info(in.element_type()).bit_width, out_bits = Info(i.shape.element_type()).bit_width;
      if (in_bits == out_bits) return Shape(i.shape.element_type(), in.dims());
      return i.shape;  // changes rank by the width ratio; checked below
    }
    case Opcode::kSelect: {
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 3));
      const Shape& pred = i.operands[0]->shape;
      const Shape& t = i.operands[1]->shape;
      const Shape& f = i.operands[2]->shape;
      if (!t.Compatible(f)) return Bad("on_true and on_false differ: " + t.ToString(false) + " vs " + f.ToString(false));
      if (pred.element_type() != ElementType::kPred) return Bad("predicate must be pred, is " + pred.ToString(false));
      if (pred.rank() != 0 && pred.dims() != t.dims()) return Bad("predicate shape differs from the operands'");
      return t;
    }
    case Opcode::kClamp: {
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 3));
      const Shape& operand = i.operands[1]->shape;
      for (int k : {0, 2}) {
        const Shape& bound = i.operands[k]->shape;
        if (bound.element_type() != operand.element_type() || (bound.rank() != 0 && bound.dims() != operand.dims())) {
          return Bad("clamp bound " + bound.ToString(false) + " does not fit operand " + operand.ToString(false));
        }
      }
      return operand;
    }
    case Opcode::kBroadcast: {
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 1));
      const Shape& in = i.operands[0]->shape;
      ANVIL_ASSIGN_OR_RETURN(auto dims, IntListAttribute(i, "dimensions"));
      if (static_cast<int>(dims.size()) != in.rank()) return Bad("dimensions must map each operand dimension");
      for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] < 0 || dims[k] >= i.shape.rank()) return Bad("broadcast dimension " + std::to_string(dims[k]) + " out of range");
        int64_t from = in.dim(static_cast<int>(k)), to = i.shape.dim(static_cast<int>(dims[k]));
        if (from != to && from != 1) return Bad("operand dimension " + std::to_string(k) + " of size " + std::to_string(from) + " cannot broadcast to " + std::to_string(to));
      }
      return Shape(in.element_type(), i.shape.dims());
    }
    case Opcode::kReshape:
    case Opcode::kDynamicReshape: {
      if (i.operands.empty()) return Bad("needs an operand");
      const Shape& in = i.operands[0]->shape;
      if (in.ElementCount() != i.shape.ElementCount()) {
        return Bad("reshape of " + in.ToString(false) + " to " + i.shape.ToString(false) + " changes the element count");
      }
      return Shape(in.element_type(), i.shape.dims());
    }
    case Opcode::kBitcast: return i.shape;
    case Opcode::kTranspose: {
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 1));
      const Shape& in = i.operands[0]->shape;
      ANVIL_ASSIGN_OR_RETURN(auto perm, IntListAttribute(i, "dimensions"));
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < sorted.size(); ++k) {
        if (sorted[k] != static_cast<int64_t>(k)) return Bad("dimensions " + Dims(perm) + " is not a permutation");
      }
      if (static_cast<int>(perm.size()) != in.rank()) return Bad("permutation rank differs from the operand's");
      std::vector<int64_t> dims;
      for (int64_t p : perm) dims.push_back(in.dim(static_cast<int>(p)));
      return Shape(in.element_type(), dims);
    }
    case Opcode::kSlice: {
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 1));
      const Shape& in = i.operands[0]->shape;
      const Attribute* a = i.FindAttribute("slice");
      if (!a) return Bad("needs slice={...}");
      ANVIL_ASSIGN_OR_RETURN(auto slice, ParseSlice(a->value));
      if (static_cast<int>(slice.size()) != in.rank()) return Bad("slice rank differs from the operand's");
      std::vector<int64_t> dims;
      for (int d = 0; d < in.rank(); ++d) {
        const SliceDim& s = slice[d];
        if (s.start < 0 || s.limit > in.dim(d) || s.start > s.limit || s.stride < 1) {
          return Bad("slice [" + std::to_string(s.start) + ":" + std::to_string(s.limit) + ":" + std::to_string(s.stride) + "] does not fit dimension of size " + std::to_string(in.dim(d)));
        }
        dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
      }
      return Shape(in.element_type(), dims);
    }
    case Opcode::kConcatenate: {
      if (i.operands.empty()) return Bad("needs operands");
      ANVIL_ASSIGN_OR_RETURN(auto dim_list, IntListAttribute(i, "dimensions"));
      if (dim_list.size() != 1) return Bad("needs dimensions={d}");
      int64_t dim = dim_list[0];
      std::vector<int64_t> dims = i.operands[0]->shape.dims();
      if (dim < 0 || dim >= static_cast<int64_t>(dims.size())) return Bad("concatenate dimension out of range");
      for (size_t k = 1; k < i.operands.size(); ++k) {
        const Shape& s = i.operands[k]->shape;
        if (s.rank() != static_cast<int>(dims.size()) || s.element_type() != i.operands[0]->shape.element_type()) {
          return Bad("operands differ in rank or element type");
        }
        for (int d = 0; d < s.rank(); ++d) {
          if (d != dim && s.dim(d) != dims[d]) return Bad("operands differ outside the concatenated dimension");
        }
        dims[dim] += s.dim(static_cast<int>(dim));
      }
      return Shape(i.operands[0]->shape.element_type(), dims);
    }
    case Opcode::kPad: {
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 2));
      const Shape& in = i.operands[0]->shape;
      if (i.operands[1]->shape.rank() != 0) return Bad("padding value must be a scalar");
      const Attribute* a = i.FindAttribute("padding");
      ANVIL_ASSIGN_OR_RETURN(auto pads, ParsePadding(a ? a->value : ""));
      if (static_cast<int>(pads.size()) != in.rank()) return Bad("padding rank differs from the operand's");
      std::vector<int64_t> dims;
      for (int d = 0; d < in.rank(); ++d) {
        if (pads[d].interior < 0) return Bad("interior padding must not be negative");
        int64_t n = in.dim(d);
        // In 128 bits: hostile padding must not wrap int64 into a plausible size.
        const Wide size = Wide{pads[d].low} + pads[d].high + n + (n > 0 ? Wide{n - 1} * pads[d].interior : 0);
        if (size < 0) return Bad("padding makes dimension " + std::to_string(d) + " negative");
        if (size > INT64_MAX) return Bad("padding makes dimension " + std::to_string(d) + " too large");
        dims.push_back(static_cast<int64_t>(size));
      }
      return Shape(in.element_type(), dims);
    }
    case Opcode::kIota: {
      ANVIL_ASSIGN_OR_RETURN(int64_t dim, IntAttribute(i, "iota_dimension", std::nullopt));
      if (dim < 0 || dim >= i.shape.rank()) return Bad("iota_dimension out of range");
      return i.shape;
    }
    case Opcode::kDynamicSlice: {
      if (i.operands.empty()) return Bad("needs an operand");
      const Shape& in = i.operands[0]->shape;
      ANVIL_ASSIGN_OR_RETURN(auto sizes, IntListAttribute(i, "dynamic_slice_sizes", {}, true));
      if (static_cast<int>(sizes.size()) != in.rank()) return Bad("dynamic_slice_sizes rank differs from the operand's");
      size_t index_operands = i.operands.size() - 1;
      if (index_operands != static_cast<size_t>(in.rank()) && !(index_operands == 1 && i.operands[1]->shape.rank() == 1)) {
        return Bad("needs one start index per dimension");
      }
      for (int d = 0; d < in.rank(); ++d) {
        if (sizes[d] < 0 || sizes[d] > in.dim(d)) return Bad("slice size exceeds the operand");
      }
      return Shape(in.element_type(), sizes);
    }
    case Opcode::kDynamicUpdateSlice: {
      if (i.operands.size() < 2) return Bad("needs an operand and an update");
      const Shape& in = i.operands[0]->shape;
      const Shape& update = i.operands[1]->shape;
      if (update.rank() != in.rank()) return Bad("update rank differs from the operand's");
      for (int d = 0; d < in.rank(); ++d) {
        if (update.dim(d) > in.dim(d)) return Bad("update is larger than the operand");
      }
      return in;
    }
    case Opcode::kGetTupleElement: {
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 1));
      const Shape& t = i.operands[0]->shape;
      ANVIL_ASSIGN_OR_RETURN(int64_t index, IntAttribute(i, "index", std::nullopt));
      if (!t.IsTuple() || index < 0 || index >= static_cast<int64_t>(t.tuple_elements().size())) {
        return Bad("index " + std::to_string(index) + " is out of range for " + t.ToString(false));
      }
      return t.tuple_elements()[index];
    }
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (Instruction* o : i.operands) elements.push_back(o->shape);
      return Shape::Tuple(elements);
    }
    case Opcode::kReduce: {
      ANVIL_ASSIGN_OR_RETURN(auto dims, IntListAttribute(i, "dimensions"));
      const Computation* body = Callee(i, 0);
      if (!body) return Bad("needs to_apply");
      ANVIL_ASSIGN_OR_RETURN(Shape shape, InferReduceLike(i, dims));
      if (body->parameters.size() != i.operands.size()) {
        return Bad("body takes " + std::to_string(body->parameters.size()) + " parameters, expected " + std::to_string(i.operands.size()));
      }
      return shape;
    }
    case Opcode::kReduceWindow: return InferReduceWindow(i);
    case Opcode::kDot: return InferDot(i);
    case Opcode::kConvolution: return InferConvolution(i);
    case Opcode::kGather: return InferGather(i);
    case Opcode::kFft: return InferFft(i);
    case Opcode::kScatter: {
      if (i.operands.size() < 3 || i.operands.size() % 2 == 0) return Bad("takes inputs, indices and as many updates");
      size_t n = (i.operands.size() - 1) / 2;
      std::vector<Shape> results;
      for (size_t k = 0; k < n; ++k) results.push_back(i.operands[k]->shape);
      return n == 1 ? results[0] : Shape::Tuple(results);
    }
    case Opcode::kSelectAndScatter: {
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 3));
      return i.operands[0]->shape;
    }
    case Opcode::kSort: {
      if (i.operands.empty()) return Bad("needs operands");
      std::vector<Shape> results;
      for (Instruction* o : i.operands) {
        if (o->shape.dims() != i.operands[0]->shape.dims()) return Bad("sort operands differ in shape");
        results.push_back(o->shape);
      }
      return results.size() == 1 ? results[0] : Shape::Tuple(results);
    }
    case Opcode::kMap: {
      const Computation* body = Callee(i, 0);
      if (!body || i.operands.empty()) return Bad("needs operands and to_apply");
      return Shape(body->ResultShape().element_type(), i.operands[0]->shape.dims());
    }
    case Opcode::kWhile: {
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 1));
      if (i.called_computations.size() != 2) return Bad("needs condition and body");
      // The attribute order decides which is which.
      const Attribute* ca = i.FindAttribute("condition");
      const Attribute* ba = i.FindAttribute("body");
      if (!ca || !ba) return Bad("needs condition and body");
      const bool cond_first = ca < ba;  // both point into i.attributes
      const Computation* cond = i.called_computations[cond_first ? 0 : 1];
      const Computation* body = i.called_computations[cond_first ? 1 : 0];
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 1));
      const Shape& state = i.operands[0]->shape;
      if (cond->parameters.size() != 1 || !cond->parameters[0]->shape.Compatible(state)) return Bad("condition must take the loop state " + state.ToString(false));
      if (body->parameters.size() != 1 || !body->parameters[0]->shape.Compatible(state)) return Bad("body must take the loop state " + state.ToString(false));
      if (!body->ResultShape().Compatible(state)) return Bad("body returns " + body->ResultShape().ToString(false) + " but the loop state is " + state.ToString(false));
      const Shape& pred = cond->ResultShape();
      if (!pred.IsArray() || pred.element_type() != ElementType::kPred || pred.rank() != 0) return Bad("condition must return pred[]");
      return state;
    }
    case Opcode::kConditional: {
      if (i.called_computations.empty()) return Bad("needs branches");
      if (i.operands.size() != i.called_computations.size() + 1) return Bad("needs one operand per branch after the selector");
      const Shape& result = i.called_computations[0]->ResultShape();
      for (size_t b = 0; b < i.called_computations.size(); ++b) {
        const Computation* branch = i.called_computations[b];
        if (!branch->ResultShape().Compatible(result)) return Bad("branches return different shapes");
        if (branch->parameters.size() != 1 || !branch->parameters[0]->shape.Compatible(i.operands[b + 1]->shape)) {
          return Bad("branch " + branch->name + " does not take its operand's shape");
        }
      }
      return result;
    }
    case Opcode::kCall:
    case Opcode::kFusion: {
      // A fusion is a call of its fused computation (`calls=`).
      const Computation* callee = Callee(i, 0);
      if (!callee) return Bad(i.opcode == Opcode::kCall ? "needs to_apply" : "needs calls");
      if (callee->parameters.size() != i.operands.size()) return Bad("passes " + std::to_string(i.operands.size()) + " arguments to " + callee->name + " which takes " + std::to_string(callee->parameters.size()));
      for (size_t k = 0; k < i.operands.size(); ++k) {
        if (!callee->parameters[k]->shape.Compatible(i.operands[k]->shape)) {
          return Bad("argument " + std::to_string(k) + " does not fit " + callee->name + ": it is " +
                     i.operands[k]->shape.ToString(false) + ", the parameter " +
                     callee->parameters[k]->shape.ToString(false));
        }
      }
      return callee->ResultShape();
    }
    case Opcode::kRng:
      // Its bounds are scalars of the result's element type; a third
      // operand (StableHLO's) is the result's shape as a tensor.
      if (i.operands.size() != 2) ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 3));
      for (const Instruction* bound : {i.operands[0], i.operands[1]}) {
        if (!bound->shape.IsArray() || bound->shape.rank() != 0 ||
            !i.shape.IsArray() || bound->shape.element_type() != i.shape.element_type()) {
          return Bad("rng's bounds must be scalars of its result's element type, " + i.shape.ToString() + " from " +
                     bound->shape.ToString());
        }
      }
      return i.shape;
    case Opcode::kCholesky:
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 1));
      return i.operands[0]->shape;
    case Opcode::kTriangularSolve:
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 2));
      return i.operands[1]->shape;
    case Opcode::kOptimizationBarrier:
      ANVIL_RETURN_IF_ERROR(ExpectOperands(i, 1));
      return i.operands[0]->shape;
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
      return i.shape;
    default:
      // Ops whose result the operands do not determine (parameter, constant,
      // custom-call, rng, collectives, host transfers, async wrappers):
      // their declared shape stands.
      return i.shape;
  }
}

namespace {

std::string Where(const Module& module, const Computation& c, const Instruction& i) {
  std::string where;
  if (i.line > 0) where = module.source_file + ":" + std::to_string(i.line) + ":" + std::to_string(i.column) + ": ";
  return where + "error: in " + c.name + ", %" + i.name + " (" + std::string(i.OpcodeSpelling()) + "): ";
}

// Whether two shapes agree, allowing bitcast-convert's change of rank.
bool Agrees(const Instruction& i, const Shape& inferred) {
  if (i.opcode == Opcode::kBitcastConvert) return true;
  if (inferred.IsTuple() != i.shape.IsTuple()) return false;
  return inferred.Compatible(i.shape);
}

}  // namespace

Status Verify(const Module& module) {
  if (!module.entry) return Bad(module.source_file + ": error: module has no entry computation");
  for (const auto& c : module.computations) {
    if (!c->root) return Bad(module.source_file + ": error: computation " + c->name + " has no root");
    std::unordered_map<const Instruction*, size_t> order;
    for (size_t k = 0; k < c->instructions.size(); ++k) order[c->instructions[k].get()] = k;
    for (size_t k = 0; k < c->instructions.size(); ++k) {
      const Instruction& i = *c->instructions[k];
      for (const Instruction* o : i.operands) {
        auto it = order.find(o);
        if (it == order.end()) return Bad(Where(module, *c, i) + "operand %" + o->name + " is not in this computation");
        if (it->second >= k) return Bad(Where(module, *c, i) + "uses %" + o->name + " before it is defined");
      }
      for (const Computation* callee : i.called_computations) {
        if (callee == c.get()) return Bad(Where(module, *c, i) + "calls its own computation");
      }
      if (i.opcode == Opcode::kConstant && i.literal && !i.literal->elided() &&
          !i.literal->shape().Compatible(i.shape)) {
        return Bad(Where(module, *c, i) + "literal does not fit " + i.shape.ToString(false));
      }
      // Shapes built in memory (passes, lowering) get the parsers' size rule too.
      if (Status size = CheckShapeSize(i.shape); !size.ok()) return Bad(Where(module, *c, i) + size.message());
      auto inferred = InferShape(i);
      if (!inferred.ok()) return Bad(Where(module, *c, i) + inferred.status().message());
      if (!Agrees(i, *inferred)) {
        return Bad(Where(module, *c, i) + "declared shape " + i.shape.ToString(false) + " but the operands give " +
                   inferred->ToString(false));
      }
    }
  }
  return OkStatus();
}

}  // namespace anvil::hlo
