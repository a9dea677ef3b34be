// Instruction -> int for the planners: an open-addressing table in one
// allocation. A training step's computation has thousands of instructions,
// and its planners look each one's operands up many times; a node-based
// hash map costs an allocation per instruction and a sorted vector a
// binary search of cache misses per look-up. A warm compile from the cache
// (which does nothing but plan) spent a fifth of its time on those.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "hlo/ir.h"

namespace anvil::cpu {

class InstructionIndex {
 public:
  // Room for `expected` keys without growing.
  explicit InstructionIndex(size_t expected = 0) { Reserve(expected); }

  // The value of `key`, inserted as 0 when absent (a count starts there).
  int& operator[](const hlo::Instruction* key) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    Entry& e = slots_[Probe(key)];
    if (!e.key) {
      e.key = key;
      e.value = 0;
      ++size_;
    }
    return e.value;
  }
  // The value of `key`, or `missing` when absent.
  int Find(const hlo::Instruction* key, int missing = -1) const {
    if (slots_.empty()) return missing;
    const Entry& e = slots_[Probe(key)];
    return e.key ? e.value : missing;
  }
  bool Contains(const hlo::Instruction* key) const { return !slots_.empty() && slots_[Probe(key)].key; }
  size_t size() const { return size_; }

 private:
  struct Entry {
    const hlo::Instruction* key = nullptr;
    int value = -1;
  };

  size_t Probe(const hlo::Instruction* key) const {
    // Fibonacci hashing: the product's high bits depend on every bit of
    // the address (its low bits only on the address's low bits).
    const size_t mask = slots_.size() - 1;
    size_t at = static_cast<size_t>((static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) * 0x9E3779B97F4A7C15ull) >>
                                    (64 - shift_));
    while (slots_[at].key && slots_[at].key != key) at = (at + 1) & mask;
    return at;
  }
  void Reserve(size_t expected) {
    size_t capacity = 16;
    while (capacity * 3 < expected * 4 + 4) capacity *= 2;
    Resize(capacity);
  }
  void Resize(size_t capacity) {
    slots_.assign(capacity, Entry{});
    shift_ = 0;
    while ((size_t{1} << shift_) < capacity) ++shift_;
  }
  void Grow() {
    std::vector<Entry> old = std::move(slots_);
    Resize(std::max<size_t>(16, old.size() * 2));
    for (const Entry& e : old) {
      if (e.key) slots_[Probe(e.key)] = e;
    }
  }

  std::vector<Entry> slots_;
  int shift_ = 0;  // log2 of the slots' count
  size_t size_ = 0;
};

}  // namespace anvil::cpu
