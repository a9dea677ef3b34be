// select-and-scatter (the gradient of max pooling) whose select is one
// compare of its two parameters and whose scatter is one op (reducers.h).
// For each source element, the window it came from is walked in row-major
// order: the first element inside the operand is selected, and each later
// one replaces it unless select(selected, candidate) holds; the source value
// is then combined into the result at the selected place. The result starts
// as the init value everywhere. The order is the evaluator's, so the two
// agree bit for bit; one thread (windows overlap).
#include <algorithm>

#include "hlo/attributes.h"
#include "hlo/patterns.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/reducers.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;
using hlo::Opcode;

struct Windows {
  std::vector<hlo::WindowDim> window;
  std::vector<int64_t> operand_dims, operand_strides, source_dims;
};

template <typename T, typename Keep, typename Combine>
Kernel SelectAndScatterOf(std::shared_ptr<const Windows> w, Slot operand, Slot source, Slot init, Slot out, Keep keep,
                          Combine combine) {
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(operand));
    const T* src = static_cast<const T*>(frame.At(source));
    const T start = *static_cast<const T*>(frame.At(init));
    T* y = static_cast<T*>(frame.At(out));
    const size_t rank = w->operand_dims.size();
    int64_t count = 1, taps = 1;
    for (int64_t d : w->operand_dims) count *= d;
    std::fill(y, y + count, start);
    int64_t sources = 1;
    for (int64_t d : w->source_dims) sources *= d;
    for (const hlo::WindowDim& d : w->window) taps *= d.size;
    std::vector<int64_t> s(rank, 0), t(rank);
    for (int64_t k = 0; k < sources; ++k) {
      int64_t selected = -1;
      std::fill(t.begin(), t.end(), 0);
      for (int64_t tap = 0; tap < taps; ++tap) {
        bool inside = true;
        int64_t at = 0;
        for (size_t d = 0; d < rank; ++d) {
          const hlo::WindowDim& wd = w->window[d];
          const int64_t p = s[d] * wd.stride + t[d] * wd.window_dilation - wd.pad_low;
          inside &= p >= 0 && p < w->operand_dims[d];
          at += p * w->operand_strides[d];
        }
        if (inside && (selected < 0 || !keep(x[selected], x[at]))) selected = at;
        for (size_t d = rank; d-- > 0;) {
          if (++t[d] < w->window[d].size) break;
          t[d] = 0;
        }
      }
      if (selected >= 0) y[selected] = combine(y[selected], src[k]);
      for (size_t d = rank; d-- > 0;) {
        if (++s[d] < w->source_dims[d]) break;
        s[d] = 0;
      }
    }
  };
}

// keep(selected, candidate) for the select computation's compare.
template <typename T>
Kernel Typed(const std::string& direction, bool swapped, Opcode scatter, std::shared_ptr<const Windows> w,
             const std::vector<Slot>& in, const Slot& out) {
  auto value = [](T v) {
    if constexpr (std::is_same_v<T, Bf16> || std::is_same_v<T, F16>) {
      return ToFloat(v);
    } else {
      return v;
    }
  };
  Kernel kernel;
  auto with_keep = [&](auto compare) {
    auto keep = [=](T a, T b) { return swapped ? compare(value(b), value(a)) : compare(value(a), value(b)); };
    if constexpr (std::is_same_v<T, Bf16> || std::is_same_v<T, F16>) {
      reducer::Visit<float>(scatter, [&](auto f) {
        kernel = SelectAndScatterOf<T>(w, in[0], in[1], in[2], out, keep, ThroughFloat<T>(f));
      });
    } else {
      reducer::Visit<T>(scatter, [&](auto f) { kernel = SelectAndScatterOf<T>(w, in[0], in[1], in[2], out, keep, f); });
    }
  };
  if (direction == "GE") with_keep([](auto a, auto b) { return a >= b; });
  if (direction == "GT") with_keep([](auto a, auto b) { return a > b; });
  if (direction == "LE") with_keep([](auto a, auto b) { return a <= b; });
  if (direction == "LT") with_keep([](auto a, auto b) { return a < b; });
  return kernel;
}

}  // namespace

Kernel SelectAndScatterKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const Slot& out) {
  if (i.operands.size() != 3 || in.size() != 3 || !i.shape.IsArray() || i.called_computations.size() != 2) return nullptr;
  // called_computations follow the attributes' order, as the evaluator reads them.
  const hlo::Attribute* sa = i.FindAttribute("select");
  const hlo::Attribute* ca = i.FindAttribute("scatter");
  const bool select_first = sa < ca;
  const hlo::Computation& select = *i.called_computations[select_first ? 0 : 1];
  const hlo::Computation& scatter = *i.called_computations[select_first ? 1 : 0];
  const std::optional<Opcode> combine = hlo::SingleOpReducer(scatter);
  const hlo::Instruction* root = select.root;
  if (!combine || !root || root->opcode != Opcode::kCompare || root->operands.size() != 2) return nullptr;
  const hlo::Instruction* a = root->operands[0];
  const hlo::Instruction* b = root->operands[1];
  if (a->opcode != Opcode::kParameter || b->opcode != Opcode::kParameter || a->parameter_number == b->parameter_number) {
    return nullptr;
  }
  if (hlo::StringAttribute(*root, "type") == "TOTALORDER") return nullptr;
  const bool swapped = a->parameter_number == 1;
  const std::string direction = hlo::StringAttribute(*root, "direction");
  const hlo::Attribute* wa = i.FindAttribute("window");
  auto window = hlo::ParseWindow(wa ? wa->value : "");
  auto w = std::make_shared<Windows>();
  w->operand_dims = i.operands[0]->shape.dims();
  w->source_dims = i.operands[1]->shape.dims();
  if (!window.ok() || window->size() != w->operand_dims.size() || w->source_dims.size() != w->operand_dims.size()) {
    return nullptr;
  }
  for (const hlo::WindowDim& d : *window) {
    if (d.base_dilation != 1) return nullptr;
  }
  w->window = *window;
  w->operand_strides = RowMajorStrides(w->operand_dims);
  switch (i.shape.element_type()) {
    case ElementType::kF32: return Typed<float>(direction, swapped, *combine, w, in, out);
    case ElementType::kF64: return Typed<double>(direction, swapped, *combine, w, in, out);
    case ElementType::kBF16: return Typed<Bf16>(direction, swapped, *combine, w, in, out);
    case ElementType::kF16: return Typed<F16>(direction, swapped, *combine, w, in, out);
    case ElementType::kS8: return Typed<int8_t>(direction, swapped, *combine, w, in, out);
    case ElementType::kS16: return Typed<int16_t>(direction, swapped, *combine, w, in, out);
    case ElementType::kS32: return Typed<int32_t>(direction, swapped, *combine, w, in, out);
    case ElementType::kS64: return Typed<int64_t>(direction, swapped, *combine, w, in, out);
    case ElementType::kU8: return Typed<uint8_t>(direction, swapped, *combine, w, in, out);
    case ElementType::kU16: return Typed<uint16_t>(direction, swapped, *combine, w, in, out);
    case ElementType::kU32: return Typed<uint32_t>(direction, swapped, *combine, w, in, out);
    case ElementType::kU64: return Typed<uint64_t>(direction, swapped, *combine, w, in, out);
    default: return nullptr;
  }
}

}  // namespace anvil::cpu
