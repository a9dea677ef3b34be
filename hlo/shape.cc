#include "hlo/shape.h"

#include <algorithm>
#include <cstdint>

namespace anvil::hlo {

Shape::Shape(ElementType type, std::vector<int64_t> dims) : element_type_(type), dims_(std::move(dims)) {
  SetDefaultLayout();
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.is_tuple_ = true;
  s.elements_ = std::move(elements);
  return s;
}

int64_t Shape::ElementCount() const {
  // Saturates rather than overflows, so size checks on hostile input hold.
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d != 0 && n > INT64_MAX / d) return INT64_MAX;
    n *= d;
  }
  return n;
}

int64_t Shape::ByteSize() const {
  if (!IsArray()) return 0;
  const int64_t n = ElementCount(), size = Info(element_type_).byte_size;
  return n > INT64_MAX / size ? INT64_MAX : n * size;
}

Status CheckArraySize(ElementType type, const std::vector<int64_t>& dims) {
  auto shape_text = [&] { return Shape(type, dims).ToString(false); };
  int64_t product = IsArrayType(type) ? Info(type).byte_size : 1;
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("shape " + shape_text() + " has a negative dimension");
    if (__builtin_mul_overflow(product, std::max<int64_t>(d, 1), &product)) {
      return InvalidArgument("shape " + shape_text() + " is too large: its " +
                             (IsArrayType(type) ? "byte size" : "element count") + " does not fit in 64 bits");
    }
  }
  return OkStatus();
}

Status CheckShapeSize(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple_elements()) {
      if (Status s = CheckShapeSize(e); !s.ok()) return s;
    }
    return OkStatus();
  }
  return CheckArraySize(shape.element_type(), shape.dims());
}

void Shape::SetDynamicDim(int i, bool dynamic) {
  if (dynamic_.empty()) {
    if (!dynamic) return;
    dynamic_.assign(dims_.size(), false);
  }
  dynamic_[i] = dynamic;
  if (std::none_of(dynamic_.begin(), dynamic_.end(), [](bool b) { return b; })) dynamic_.clear();
}

bool Shape::IsStatic() const {
  if (is_tuple_) {
    return std::all_of(elements_.begin(), elements_.end(), [](const Shape& e) { return e.IsStatic(); });
  }
  return dynamic_.empty();
}

bool Shape::HasDefaultLayout() const {
  if (!layout_.tail.empty()) return false;
  const int n = rank();
  if (static_cast<int>(layout_.minor_to_major.size()) != n) return false;
  for (int i = 0; i < n; ++i) {
    if (layout_.minor_to_major[i] != n - 1 - i) return false;
  }
  return true;
}

void Shape::SetDefaultLayout() {
  layout_.tail.clear();
  layout_.minor_to_major.resize(dims_.size());
  for (size_t i = 0; i < dims_.size(); ++i) layout_.minor_to_major[i] = static_cast<int64_t>(dims_.size() - 1 - i);
}

std::string Shape::ToString(bool print_layout) const {
  if (is_tuple_) {
    std::string out = "(";
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i) out += ", ";
      out += elements_[i].ToString(print_layout);
    }
    return out + ")";
  }
  std::string out(HloName(element_type_));
  out += '[';
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += ',';
    if (IsDynamicDim(static_cast<int>(i))) out += "<=";
    out += std::to_string(dims_[i]);
  }
  out += ']';
  if (print_layout && IsArray() && (!dims_.empty() || !layout_.tail.empty())) {
    out += '{';
    for (size_t i = 0; i < layout_.minor_to_major.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(layout_.minor_to_major[i]);
    }
    if (!layout_.tail.empty()) out += ":" + layout_.tail;
    out += '}';
  }
  return out;
}

std::string Shape::ToMlirString() const {
  if (is_tuple_) {
    std::string out = "tuple<";
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i) out += ", ";
      out += elements_[i].ToMlirString();
    }
    return out + ">";
  }
  if (element_type_ == ElementType::kToken) return "!stablehlo.token";
  std::string out = "tensor<";
  for (size_t i = 0; i < dims_.size(); ++i) {
    out += IsDynamicDim(static_cast<int>(i)) ? std::string("?") : std::to_string(dims_[i]);
    out += 'x';
  }
  out += MlirName(element_type_);
  return out + ">";
}

bool Shape::Compatible(const Shape& other) const {
  if (is_tuple_ != other.is_tuple_) return false;
  if (is_tuple_) {
    if (elements_.size() != other.elements_.size()) return false;
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (!elements_[i].Compatible(other.elements_[i])) return false;
    }
    return true;
  }
  return element_type_ == other.element_type_ && dims_ == other.dims_;
}

bool Shape::operator==(const Shape& other) const {
  return is_tuple_ == other.is_tuple_ && element_type_ == other.element_type_ && dims_ == other.dims_ &&
         dynamic_ == other.dynamic_ && layout_ == other.layout_ && elements_ == other.elements_;
}

}  // namespace anvil::hlo
