// sort of any number of operands along one dimension. A comparator that is
// one compare of one operand's two elements (`compare(p[2k], p[2k+1]),
// direction=LT` sorts ascending by operand k, GT descending; either order
// of the parameters) becomes a typed comparison of the keys; any other is
// compiled into an hlo/scalar_program run per comparison. Each row is ordered by the evaluator's own
// merge sort (hlo/merge_sort.h: stable, and defined for NaN, which no
// strict weak order is), then every operand's row is permuted. Rows split
// across threads.
#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <type_traits>
#include <utility>
#include <unordered_map>

#include "hlo/attributes.h"
#include "hlo/merge_sort.h"
#include "hlo/scalar_program.h"
#include "plugins/cpu/float_formats.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/total_order.h"

namespace anvil::cpu {
namespace {

using hlo::ElementType;
using hlo::Opcode;

struct SortLayout {
  int64_t rows = 0, length = 0, stride = 0;  // rows along `dim`, its length and element stride
  std::vector<int64_t> dims, strides;          // to find each row's first element
  int64_t dim = 0;
  std::vector<int64_t> element_bytes;          // per operand
};

// The offset (in elements) of row r's first element.
int64_t RowStart(const SortLayout& l, int64_t r) {
  int64_t offset = 0;
  for (size_t d = l.dims.size(); d-- > 0;) {
    if (static_cast<int64_t>(d) == l.dim) continue;
    offset += (r % l.dims[d]) * l.strides[d];
    r /= l.dims[d];
  }
  return offset;
}

// Writes each operand's row at `start` with its elements in sorted order:
// position p takes the element at position from(p). Each row is gathered
// through `staging`, so that an output that is its own input (one buffer)
// reads the unsorted values.
template <typename From>
void PermuteRow(const SortLayout& l, const std::vector<Slot>& in, const std::vector<Slot>& out, const Frame& frame,
                int64_t start, From from, std::vector<unsigned char>& staging) {
  for (size_t v = 0; v < in.size(); ++v) {
    const size_t bytes = static_cast<size_t>(l.element_bytes[v]);
    const auto* src = static_cast<const unsigned char*>(frame.At(in[v]));
    auto* dst = static_cast<unsigned char*>(frame.At(out[v]));
    staging.resize(bytes * static_cast<size_t>(l.length));
    for (int64_t p = 0; p < l.length; ++p) std::memcpy(staging.data() + p * bytes, src + (start + from(p) * l.stride) * bytes, bytes);
    for (int64_t p = 0; p < l.length; ++p) std::memcpy(dst + (start + p * l.stride) * bytes, staging.data() + p * bytes, bytes);
  }
}

void RadixSortByKey(std::vector<std::pair<uint64_t, int64_t>>& v, std::vector<std::pair<uint64_t, int64_t>>& spare);

// A row's (key, position) pairs for a radix sort (RadixSortByKey), keys in
// the sort's order, or false when the row's keys are not in a total order
// that way (then the row is merged).
using RadixPairs = std::function<bool(const Frame& frame, int64_t start, std::vector<std::pair<uint64_t, int64_t>>& pairs)>;

// Orders each row by `less_for(frame)`, a callable (row start, a, b) made
// once per thread's share of the rows, or by a radix sort of the pairs
// `radix_pairs` gives (if any), then permutes every operand's row.
template <typename LessFor>
Kernel SortRows(SortLayout l, std::vector<Slot> in, std::vector<Slot> out, LessFor less_for,
                RadixPairs radix_pairs = nullptr) {
  return [=](const Frame& frame) {
    frame.parallel->For(l.rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, l.length)), [&](int64_t lo, int64_t hi) {
      auto less = less_for(frame);
      std::vector<int64_t> order(static_cast<size_t>(l.length));
      std::vector<std::pair<uint64_t, int64_t>> pairs, spare;
      std::vector<unsigned char> row;
      for (int64_t r = lo; r < hi; ++r) {
        const int64_t start = RowStart(l, r);
        if (radix_pairs && radix_pairs(frame, start, pairs)) {
          RadixSortByKey(pairs, spare);
          PermuteRow(l, in, out, frame, start, [&](int64_t p) { return pairs[static_cast<size_t>(p)].second; }, row);
          continue;
        }
        std::iota(order.begin(), order.end(), 0);
        hlo::MergeSort(order, [&](int64_t a, int64_t b) { return less(start, a, b); });
        PermuteRow(l, in, out, frame, start, [&](int64_t p) { return order[static_cast<size_t>(p)]; }, row);
      }
    });
  };
}

// The unsigned keys of RadixSortValues: 32 bits for elements of up to 32
// bits, 64 for the others.
template <typename T>
using RadixKey = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;

// Whether T's values can be radix sorted: integers (and pred), f32, f64.
template <typename T>
constexpr bool kRadixSortable = std::is_integral_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double>;

// v's key, whose unsigned order is v's order under `<`, or false for a NaN
// or a -0 (the values a float compare does not order by their bits).
template <typename T>
bool ToRadixKey(T v, RadixKey<T>& key) {
  using K = RadixKey<T>;
  constexpr K kSign = K{1} << (8 * sizeof(K) - 1);
  if constexpr (std::is_floating_point_v<T>) {
    if (v != v) return false;
    K bits;
    std::memcpy(&bits, &v, sizeof bits);
    if (bits == kSign) return false;  // -0
    key = bits & kSign ? ~bits : bits | kSign;
  } else if constexpr (std::is_signed_v<T>) {
    key = static_cast<K>(static_cast<std::make_signed_t<K>>(v)) ^ kSign;
  } else {
    key = static_cast<K>(v);
  }
  return true;
}

template <typename T>
T FromRadixKey(RadixKey<T> key) {
  using K = RadixKey<T>;
  constexpr K kSign = K{1} << (8 * sizeof(K) - 1);
  if constexpr (std::is_floating_point_v<T>) {
    const K bits = key & kSign ? key & ~kSign : ~key;
    T v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<std::make_signed_t<K>>(key ^ kSign));
  } else {
    return static_cast<T>(key);
  }
}

// Sorts `row` by an LSD radix sort of its keys, a byte at a time, skipping
// the bytes every key shares; false (row untouched) when some element is a
// NaN or a -0. Every other pair of elements that `<` finds equal is equal
// bit for bit, so any sort's result is the stable merge sort's (hlo/
// merge_sort.h): O(n) passes where the merges made n log n branchy compares
// (f32[2^20]: 111 -> 9 ms).
template <typename T>
bool RadixSortValues(std::vector<T>& row, bool ascending, std::vector<RadixKey<T>>& keys,
                     std::vector<RadixKey<T>>& spare) {
  using K = RadixKey<T>;
  const size_t n = row.size();
  keys.resize(n);
  spare.resize(n);
  for (size_t p = 0; p < n; ++p) {
    K k;
    if (!ToRadixKey(row[p], k)) return false;
    keys[p] = ascending ? k : ~k;
  }
  constexpr int kBytes = static_cast<int>(sizeof(K));
  std::vector<size_t> counts(static_cast<size_t>(kBytes) * 256, 0);  // every byte's histogram, in one read
  for (K k : keys) {
    for (int b = 0; b < kBytes; ++b) ++counts[static_cast<size_t>(b) * 256 + ((k >> (8 * b)) & 255)];
  }
  for (int b = 0; b < kBytes; ++b) {
    size_t* count = counts.data() + static_cast<size_t>(b) * 256;
    if (std::find(count, count + 256, n) != count + 256) continue;  // one byte for all
    size_t next = 0;
    for (int d = 0; d < 256; ++d) next += std::exchange(count[d], next);
    for (K k : keys) spare[count[(k >> (8 * b)) & 255]++] = k;
    keys.swap(spare);
  }
  for (size_t p = 0; p < n; ++p) row[p] = FromRadixKey<T>(ascending ? keys[p] : ~keys[p]);
  return true;
}

// Rows at least this long are radix sorted where they can be: below it the
// merges cost less than the histograms.
constexpr int64_t kRadixSortMinLength = 512;

// A sort of one operand merges its values themselves, not indices into
// them, which reads every key through an index in every pass (the merges
// are the same, so the result is). f32[2^20]: 207 ms -> 127 ms. Long rows
// of integers, and of floats without NaN or -0, are radix sorted instead
// (`radix_ascending` says the order, when the comparator is `<` or `>`).
template <typename T, typename Less>
Kernel SortValuesOf(SortLayout l, Slot in, Slot out, Less less, std::optional<bool> radix_ascending) {
  return [=](const Frame& frame) {
    const T* x = static_cast<const T*>(frame.At(in));
    T* y = static_cast<T*>(frame.At(out));
    frame.parallel->For(l.rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, l.length)), [&](int64_t lo, int64_t hi) {
      std::vector<T> row(static_cast<size_t>(l.length));
      std::vector<RadixKey<T>> keys, spare;
      for (int64_t r = lo; r < hi; ++r) {
        const int64_t start = RowStart(l, r);
        for (int64_t p = 0; p < l.length; ++p) row[static_cast<size_t>(p)] = x[start + p * l.stride];
        bool sorted = false;
        if constexpr (kRadixSortable<T>) {
          if (radix_ascending && l.length >= kRadixSortMinLength) {
            sorted = RadixSortValues(row, *radix_ascending, keys, spare);
          }
        }
        if (!sorted) hlo::MergeSort(row, less);
        for (int64_t p = 0; p < l.length; ++p) y[start + p * l.stride] = row[static_cast<size_t>(p)];
      }
    });
  };
}

// One operand's elements compared by `less`.
template <typename T, typename Less>
Kernel SortOf(SortLayout l, std::vector<Slot> in, std::vector<Slot> out, int key, Less less,
              std::optional<bool> radix_ascending = std::nullopt) {
  if (in.size() == 1) return SortValuesOf<T>(std::move(l), in[0], out[0], less, radix_ascending);
  const Slot keys_slot = in[static_cast<size_t>(key)];
  const int64_t stride = l.stride, length = l.length;
  RadixPairs radix_pairs;
  if constexpr (kRadixSortable<T>) {
    // Pairs sorted stably by key keep equal keys in position order, which
    // is what the stable merges give them: -0 and 0 may share a key. Only
    // a NaN, which `<` does not order, sends a row to the merges.
    if (radix_ascending && length >= kRadixSortMinLength) {
      const bool ascending = *radix_ascending;
      radix_pairs = [=](const Frame& frame, int64_t start, std::vector<std::pair<uint64_t, int64_t>>& pairs) {
        const T* keys = static_cast<const T*>(frame.At(keys_slot));
        pairs.resize(static_cast<size_t>(length));
        for (int64_t p = 0; p < length; ++p) {
          T v = keys[start + p * stride];
          if constexpr (std::is_floating_point_v<T>) {
            if (v == T(0)) v = T(0);  // -0 as 0
          }
          RadixKey<T> k;
          if (!ToRadixKey(v, k)) return false;  // a NaN
          const uint64_t key = ascending ? k : static_cast<RadixKey<T>>(~k);
          pairs[static_cast<size_t>(p)] = {key, p};
        }
        return true;
      };
    }
  }
  return SortRows(
      std::move(l), std::move(in), std::move(out),
      [=](const Frame& frame) {
        const T* keys = static_cast<const T*>(frame.At(keys_slot));
        return [=](int64_t start, int64_t a, int64_t b) { return less(keys[start + a * stride], keys[start + b * stride]); };
      },
      std::move(radix_pairs));
}

// Any comparator: an hlo/scalar_program on the two elements of every
// operand, p[2k] and p[2k+1], as the evaluator calls it.
Kernel SortByProgram(SortLayout l, std::vector<Slot> in, std::vector<Slot> out, std::vector<ElementType> types,
                     hlo::ScalarProgram comparator) {
  const int64_t stride = l.stride;
  std::vector<int64_t> bytes = l.element_bytes;
  return SortRows(std::move(l), in, std::move(out), [=](const Frame& frame) {
    std::vector<const unsigned char*> data;
    for (const Slot& s : in) data.push_back(static_cast<const unsigned char*>(frame.At(s)));
    return [=, registers = comparator.NewRegisters(), args = std::vector<hlo::Scalar>(2 * in.size())](
               int64_t start, int64_t a, int64_t b) mutable {
      for (size_t v = 0; v < data.size(); ++v) {
        args[2 * v] = hlo::LoadScalar(types[v], data[v] + (start + a * stride) * bytes[v]);
        args[2 * v + 1] = hlo::LoadScalar(types[v], data[v] + (start + b * stride) * bytes[v]);
      }
      hlo::Scalar result;
      comparator.Run(args.data(), registers, &result);
      return result.bits != 0;
    };
  });
}

template <typename T>
Kernel Typed(bool ascending, const SortLayout& l, const std::vector<Slot>& in, const std::vector<Slot>& out, int key) {
  auto value = [](T x) {
    if constexpr (std::is_same_v<T, Bf16> || std::is_same_v<T, F16>) {
      return ToFloat(x);
    } else {
      return x;
    }
  };
  if (ascending) return SortOf<T>(l, in, out, key, [=](T a, T b) { return value(a) < value(b); }, true);
  return SortOf<T>(l, in, out, key, [=](T a, T b) { return value(a) > value(b); }, false);
}

// A comparator that is one compare of one operand's two elements: a typed
// comparison of the keys.
Kernel RecognisedComparatorSort(const hlo::Instruction& i, const SortLayout& l, const std::vector<Slot>& in,
                                const std::vector<Slot>& out) {
  const hlo::Computation& comparator = *i.called_computations[0];
  const hlo::Instruction* root = comparator.root;
  if (!root || root->opcode != Opcode::kCompare || root->operands.size() != 2) return nullptr;
  const hlo::Instruction* a = root->operands[0];
  const hlo::Instruction* b = root->operands[1];
  if (a->opcode != Opcode::kParameter || b->opcode != Opcode::kParameter || a->parameter_number / 2 != b->parameter_number / 2 ||
      a->parameter_number == b->parameter_number) {
    return nullptr;
  }
  const std::string direction = hlo::StringAttribute(*root, "direction");
  const std::string type = hlo::StringAttribute(*root, "type");
  if (type == "TOTALORDER" || (direction != "LT" && direction != "GT")) return nullptr;
  // compare(p[2k], p[2k+1]) LT is ascending; with the parameters swapped, descending.
  const bool ascending = (direction == "LT") == (a->parameter_number % 2 == 0);
  const int key = static_cast<int>(a->parameter_number / 2);
  if (key >= static_cast<int>(i.operands.size())) return nullptr;
  const ElementType key_type = i.operands[static_cast<size_t>(key)]->shape.element_type();
  const bool is_signed = key_type == ElementType::kS8 || key_type == ElementType::kS16 ||
                         key_type == ElementType::kS32 || key_type == ElementType::kS64;
  if ((type == "UNSIGNED" && is_signed) || (type == "SIGNED" && !is_signed && key_type != ElementType::kPred)) {
    return nullptr;  // a comparison that reinterprets the keys: the evaluator's
  }
  switch (key_type) {
    case ElementType::kF32: return Typed<float>(ascending, l, in, out, key);
    case ElementType::kF64: return Typed<double>(ascending, l, in, out, key);
    case ElementType::kBF16: return Typed<Bf16>(ascending, l, in, out, key);
    case ElementType::kF16: return Typed<F16>(ascending, l, in, out, key);
    case ElementType::kS8: return Typed<int8_t>(ascending, l, in, out, key);
    case ElementType::kS16: return Typed<int16_t>(ascending, l, in, out, key);
    case ElementType::kS32: return Typed<int32_t>(ascending, l, in, out, key);
    case ElementType::kS64: return Typed<int64_t>(ascending, l, in, out, key);
    case ElementType::kU8: return Typed<uint8_t>(ascending, l, in, out, key);
    case ElementType::kU16: return Typed<uint16_t>(ascending, l, in, out, key);
    case ElementType::kU32: return Typed<uint32_t>(ascending, l, in, out, key);
    case ElementType::kU64: return Typed<uint64_t>(ascending, l, in, out, key);
    case ElementType::kPred: return Typed<uint8_t>(ascending, l, in, out, key);
    default: return nullptr;  // complex and sub-byte keys: the evaluator's
  }
}


// A comparator that compares one operand's two elements through the same
// function of each, compare(g(p[2k]), g(p[2k+1])) or its mirror: JAX's
// sort maps -0 to 0 and every NaN to one NaN that way before a TOTALORDER
// compare. g runs once per element instead of twice per comparison, and
// the keys it gives are compared as integers (the total order, or an
// integer's value) or as doubles (a float compare, NaN unordered).
struct KeyedOrder {
  int key = 0;  // the operand whose elements are compared
  bool ascending = true, total_order = false;
  ElementType key_type = ElementType::kF32;     // g's result
  std::shared_ptr<const hlo::ScalarProgram> g;  // null: the element itself
};

// Whether `a` (reading parameter pa) and `b` (reading pb) compute the same
// function of their parameter: the same ops on the same constants.
bool Mirrors(const hlo::Instruction* a, const hlo::Instruction* b, int64_t pa, int64_t pb, int budget = 64) {
  if (--budget < 0 || a->opcode != b->opcode || !(a->shape == b->shape)) return false;
  if (a->opcode == Opcode::kParameter) return a->parameter_number == pa && b->parameter_number == pb;
  if (a->opcode == Opcode::kConstant) return a->literal && b->literal && *a->literal == *b->literal;
  if (a->operands.size() != b->operands.size() || !a->called_computations.empty() || !b->called_computations.empty()) {
    return false;
  }
  auto semantic = [](const hlo::Instruction* i) {
    std::vector<hlo::Attribute> kept;
    for (const hlo::Attribute& attribute : i->attributes) {
      if (attribute.key != "metadata") kept.push_back(attribute);
    }
    return kept;
  };
  if (semantic(a) != semantic(b)) return false;
  for (size_t k = 0; k < a->operands.size(); ++k) {
    if (!Mirrors(a->operands[k], b->operands[k], pa, pb, budget)) return false;
  }
  return true;
}

// g as a computation of its own: `side`'s instructions, its one parameter
// becoming parameter 0.
std::unique_ptr<hlo::Computation> KeyFunction(const hlo::Instruction* side) {
  auto g = std::make_unique<hlo::Computation>();
  g->name = "sort_key";
  std::unordered_map<const hlo::Instruction*, hlo::Instruction*> copy;
  std::function<hlo::Instruction*(const hlo::Instruction*)> clone = [&](const hlo::Instruction* i) {
    if (auto it = copy.find(i); it != copy.end()) return it->second;
    auto c = std::make_unique<hlo::Instruction>();
    c->name = i->name;
    c->opcode = i->opcode;
    c->shape = i->shape;
    c->attributes = i->attributes;
    c->literal = i->literal;
    if (i->opcode == Opcode::kParameter) c->parameter_number = 0;
    for (const hlo::Instruction* o : i->operands) c->operands.push_back(clone(o));
    hlo::Instruction* added = g->AddInstruction(std::move(c));
    if (i->opcode == Opcode::kParameter) g->parameters = {added};
    copy[i] = added;
    return added;
  };
  g->root = clone(side);
  if (g->parameters.empty()) return nullptr;  // a key that ignores the element
  return g;
}

std::optional<KeyedOrder> KeyedComparator(const hlo::Computation& comparator, const std::vector<ElementType>& types) {
  const hlo::Instruction* root = comparator.root;
  if (!root || root->opcode != Opcode::kCompare || root->operands.size() != 2) return std::nullopt;
  const std::string direction = hlo::StringAttribute(*root, "direction");
  if (direction != "LT" && direction != "GT") return std::nullopt;
  // The parameter each side reads: find one on the left, then check the
  // right mirrors it with the other element of the same operand.
  const hlo::Instruction* left = root->operands[0];
  const hlo::Instruction* right = root->operands[1];
  std::optional<int64_t> pa;
  std::function<void(const hlo::Instruction*)> find = [&](const hlo::Instruction* i) {
    if (i->opcode == Opcode::kParameter) pa = pa ? std::min(*pa, i->parameter_number) : i->parameter_number;
    for (const hlo::Instruction* o : i->operands) find(o);
  };
  find(left);
  if (!pa) return std::nullopt;
  const int64_t pb = *pa % 2 == 0 ? *pa + 1 : *pa - 1;
  if (!Mirrors(left, right, *pa, pb)) return std::nullopt;
  KeyedOrder order;
  order.key = static_cast<int>(*pa / 2);
  if (order.key >= static_cast<int>(types.size())) return std::nullopt;
  // compare(g(p[2k]), g(p[2k+1])) LT: ascending; the mirror, descending.
  order.ascending = (direction == "LT") == (*pa % 2 == 0);
  order.key_type = left->shape.element_type();
  const std::string type = hlo::StringAttribute(*root, "type");
  switch (order.key_type) {
    case ElementType::kF32: case ElementType::kF64:
      if (type != "TOTALORDER" && !type.empty() && type != "FLOAT") return std::nullopt;
      order.total_order = type == "TOTALORDER";
      break;
    case ElementType::kS32: case ElementType::kS64:
      if (!type.empty() && type != "SIGNED") return std::nullopt;
      order.total_order = true;  // integer keys compare as integers
      break;
    case ElementType::kU32: case ElementType::kU64: case ElementType::kPred:
      if (!type.empty() && type != "UNSIGNED") return std::nullopt;
      order.total_order = true;
      break;
    default: return std::nullopt;
  }
  if (left->opcode != Opcode::kParameter) {
    std::unique_ptr<hlo::Computation> g = KeyFunction(left);
    if (!g) return std::nullopt;
    auto program = hlo::ScalarProgram::Compile(*g);
    if (!program.ok() || program->parameter_count() != 1 || program->result_count() != 1 ||
        program->result_type(0) != order.key_type) {
      return std::nullopt;
    }
    order.g = std::make_shared<const hlo::ScalarProgram>(*std::move(program));
  } else if (types[static_cast<size_t>(order.key)] != order.key_type) {
    return std::nullopt;
  }
  return order;
}

// A stable LSD radix sort of (key, position) pairs by key, a byte at a
// time, skipping the bytes every key shares. With keys in a strict total
// order a stable sort's result is unique, so this is the evaluator's merge
// sort's result, in O(n) rather than O(n log n) branchy compares.
void RadixSortByKey(std::vector<std::pair<uint64_t, int64_t>>& v, std::vector<std::pair<uint64_t, int64_t>>& spare) {
  spare.resize(v.size());
  for (int shift = 0; shift < 64; shift += 8) {
    size_t start[257] = {};
    for (const auto& e : v) ++start[((e.first >> shift) & 255) + 1];
    if (std::find(start + 1, start + 257, v.size()) != start + 257) continue;  // one byte for all
    for (int b = 1; b < 257; ++b) start[b] += start[b - 1];
    for (const auto& e : v) spare[start[(e.first >> shift) & 255]++] = e;
    v.swap(spare);
  }
}

// Each row's keys made once (g of each element), then (key, position)
// pairs sorted by key alone, stably (keys in a total order: a radix sort;
// float keys compared as floats, which NaN leaves unordered: the
// evaluator's merges, with the comparator's answers), then every operand's
// row permuted.
template <typename Key>
Kernel KeyedSort(SortLayout l, std::vector<Slot> in, std::vector<Slot> out, std::vector<ElementType> types,
                 KeyedOrder order) {
  return [=](const Frame& frame) {
    const ElementType element_type = types[static_cast<size_t>(order.key)];
    const int64_t element_bytes = l.element_bytes[static_cast<size_t>(order.key)];
    const auto* keys_at = static_cast<const unsigned char*>(frame.At(in[static_cast<size_t>(order.key)]));
    frame.parallel->For(l.rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, l.length)), [&](int64_t lo, int64_t hi) {
      std::vector<hlo::Scalar> registers = order.g ? order.g->NewRegisters() : std::vector<hlo::Scalar>{};
      std::vector<std::pair<Key, int64_t>> row(static_cast<size_t>(l.length)), spare;
      std::vector<unsigned char> moved;
      for (int64_t r = lo; r < hi; ++r) {
        const int64_t start = RowStart(l, r);
        for (int64_t p = 0; p < l.length; ++p) {
          const unsigned char* element = keys_at + (start + p * l.stride) * element_bytes;
          hlo::Scalar v = hlo::LoadScalar(element_type, element);
          if (order.g) {
            hlo::Scalar key;
            order.g->Run(&v, registers, &key);
            v = key;
          }
          Key k;
          if constexpr (std::is_same_v<Key, double>) {
            k = v.re;  // a float key's value, exact in double
          } else {
            int64_t rank;
            if (order.key_type == ElementType::kF32) {
              float f;
              hlo::StoreScalar(ElementType::kF32, v, &f);
              rank = RankKey(f);
            } else if (order.key_type == ElementType::kF64) {
              double d;
              hlo::StoreScalar(ElementType::kF64, v, &d);
              rank = RankKey(d);
            } else if (order.key_type == ElementType::kU64) {
              rank = RankKey(v.bits);
            } else {
              rank = static_cast<int64_t>(v.bits);  // sign-extended or zero-extended: the value
            }
            // Unsigned, in the order asked for: ascending ranks offset by
            // 2^63, descending ones complemented (ties keep their places).
            const uint64_t ordered = static_cast<uint64_t>(rank) ^ (uint64_t{1} << 63);
            k = order.ascending ? ordered : ~ordered;
          }
          row[static_cast<size_t>(p)] = {k, p};
        }
        if constexpr (std::is_same_v<Key, uint64_t>) {
          RadixSortByKey(row, spare);
        } else if (order.ascending) {
          hlo::MergeSort(row, [](const auto& a, const auto& b) { return a.first < b.first; });
        } else {
          hlo::MergeSort(row, [](const auto& a, const auto& b) { return a.first > b.first; });
        }
        PermuteRow(l, in, out, frame, start, [&](int64_t p) { return row[static_cast<size_t>(p)].second; }, moved);
      }
    });
  };
}

}  // namespace

Kernel SortKernel(const hlo::Instruction& i, const std::vector<Slot>& in, const std::vector<Slot>& out) {
  if (i.called_computations.size() != 1 || in.empty() || in.size() != out.size() || in.size() != i.operands.size()) {
    return nullptr;
  }
  auto dims = hlo::IntListAttribute(i, "dimensions");
  if (!dims.ok() || dims->size() != 1) return nullptr;
  SortLayout l;
  l.dims = i.operands[0]->shape.dims();
  l.dim = (*dims)[0];
  if (l.dim < 0 || l.dim >= static_cast<int64_t>(l.dims.size())) return nullptr;
  std::vector<ElementType> types;
  for (const hlo::Instruction* o : i.operands) {
    if (!o->shape.IsArray() || o->shape.dims() != l.dims) return nullptr;
    l.element_bytes.push_back(hlo::Info(o->shape.element_type()).byte_size);
    types.push_back(o->shape.element_type());
  }
  l.strides = RowMajorStrides(l.dims);
  l.length = l.dims[static_cast<size_t>(l.dim)];
  l.stride = l.strides[static_cast<size_t>(l.dim)];
  l.rows = l.length == 0 ? 0 : i.operands[0]->shape.ElementCount() / l.length;
  if (Kernel k = RecognisedComparatorSort(i, l, in, out)) return k;
  if (std::optional<KeyedOrder> order = KeyedComparator(*i.called_computations[0], types)) {
    const bool float_compare = !order->total_order;
    return float_compare ? KeyedSort<double>(l, in, out, types, *order) : KeyedSort<uint64_t>(l, in, out, types, *order);
  }
  auto comparator = hlo::ScalarProgram::Compile(*i.called_computations[0]);
  if (!comparator.ok() || comparator->parameter_count() != static_cast<int>(2 * in.size()) ||
      comparator->result_count() != 1 || comparator->result_type(0) != ElementType::kPred) {
    return nullptr;
  }
  return SortByProgram(l, in, out, types, *std::move(comparator));
}

}  // namespace anvil::cpu
