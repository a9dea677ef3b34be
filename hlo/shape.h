// Shapes: an array (element type, dimensions, layout) or a tuple of shapes.
// Dimensions are static; a bounded-dynamic dimension (`<=8`) is kept with its
// bound as the size and a flag, so programs that carry one still round-trip.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/element_type.h"
#include "hlo/status.h"

namespace anvil::hlo {

struct Layout {
  std::vector<int64_t> minor_to_major;
  // Anything XLA writes after ':' inside the braces (tiling `T(8,128)`,
  // element size `E(4)`, memory space `S(1)`...), kept verbatim.
  std::string tail;
  bool operator==(const Layout&) const = default;
};

class Shape {
 public:
  Shape() = default;
  // An array shape with the default (row-major) layout.
  Shape(ElementType type, std::vector<int64_t> dims);
  // An array shape with `layout` as it is (readers of stored shapes, which
  // would otherwise build the default layout only to replace it).
  Shape(ElementType type, std::vector<int64_t> dims, Layout layout)
      : element_type_(type), dims_(std::move(dims)), layout_(std::move(layout)) {}
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token() { return Shape(ElementType::kToken, {}); }
  static Shape Scalar(ElementType type) { return Shape(type, {}); }

  bool IsTuple() const { return is_tuple_; }
  bool IsArray() const { return !is_tuple_ && IsArrayType(element_type_); }
  bool IsToken() const { return !is_tuple_ && element_type_ == ElementType::kToken; }

  ElementType element_type() const { return element_type_; }
  void set_element_type(ElementType t) { element_type_ = t; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim(int i) const { return dims_[i]; }
  int rank() const { return static_cast<int>(dims_.size()); }
  // Exact for shapes that passed CheckShapeSize; saturate at INT64_MAX
  // otherwise, so a size check on unchecked input still fails safely.
  int64_t ElementCount() const;
  // ElementCount() times the element's storage size; 0 for tuples and tokens.
  int64_t ByteSize() const;

  // Per-dimension dynamic flags; empty when every dimension is static.
  const std::vector<bool>& dynamic_dims() const { return dynamic_; }
  bool IsDynamicDim(int i) const { return !dynamic_.empty() && dynamic_[i]; }
  void SetDynamicDim(int i, bool dynamic);
  bool IsStatic() const;

  const Layout& layout() const { return layout_; }
  Layout& mutable_layout() { return layout_; }
  bool HasDefaultLayout() const;
  void SetDefaultLayout();

  const std::vector<Shape>& tuple_elements() const { return elements_; }
  std::vector<Shape>& mutable_tuple_elements() { return elements_; }

  // XLA HLO spelling: `f32[2,3]{1,0}`, `(f32[], s32[4]{0})`, `token[]`.
  std::string ToString(bool print_layout = true) const;
  // StableHLO spelling: `tensor<2x3xf32>`, `tuple<...>`, `!stablehlo.token`.
  std::string ToMlirString() const;

  // Same element type and dimensions (and tuple structure); layouts ignored.
  bool Compatible(const Shape& other) const;
  bool operator==(const Shape& other) const;

 private:
  ElementType element_type_ = ElementType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;
  Layout layout_;
  bool is_tuple_ = false;
  std::vector<Shape> elements_;
};

// The one size rule for arrays, applied where shapes come in (both parsers,
// the C ABI): every dimension is non-negative, and the element count and the
// byte size fit in int64 whatever order their factors are multiplied in. The
// product is taken over max(d, 1), so `{2^32, 2^32, 0}` is refused too: the
// kernels multiply partial products of the dimensions (strides, outer and
// inner sizes), and each of those must fit as well. INVALID_ARGUMENT names
// the shape. Tuples are checked element by element.
Status CheckShapeSize(const Shape& shape);
Status CheckArraySize(ElementType type, const std::vector<int64_t>& dims);

}  // namespace anvil::hlo
