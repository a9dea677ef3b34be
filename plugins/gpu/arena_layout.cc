#include "plugins/gpu/arena_layout.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

namespace anvil::gpu {
namespace {

constexpr uint64_t kAlignment = 16;

struct Lifetime {
  int64_t first = std::numeric_limits<int64_t>::max(), last = -1;
  uint64_t bytes = 0;
};

// Walks the operations in execution order, numbering them, and records when
// each slot is named.
class LifetimeWalk {
 public:
  LifetimeWalk(size_t slots, const std::vector<std::vector<Loc>>& tables) : lifetimes_(slots), tables_(tables) {}

  void Walk(const std::vector<Op>& ops) {
    for (const Op& op : ops) {
      const int64_t start = time_++;
      switch (op.kind) {
        case Op::Kind::kDispatch:
          for (const Loc& l : tables_[op.table]) Touch(l, start);
          break;
        case Op::Kind::kCopy:
          Touch(op.src, start);
          Touch(op.dst, start);
          break;
        case Op::Kind::kWhile:
        case Op::Kind::kConditional: {
          Touch(op.selector, start);
          const size_t mark = touched_.size();
          for (const auto& branch : op.branches) Walk(branch);
          Touch(op.selector, time_);
          if (op.kind == Op::Kind::kWhile) {
            // A loop runs its body again: what it names that lives from
            // before it must last until the loop is over.
            spans_.push_back({start, time_, mark, touched_.size()});
          }
          ++time_;
          break;
        }
      }
    }
  }

  std::vector<Lifetime>& Finish(const std::vector<Loc>& outputs) {
    for (const Loc& l : outputs) Touch(l, time_);
    for (const Span& s : spans_) {
      for (size_t k = s.from; k < s.to; ++k) {
        Lifetime& lt = lifetimes_[touched_[k]];
        if (lt.first < s.start) lt.last = std::max(lt.last, s.end);
      }
    }
    return lifetimes_;
  }

 private:
  struct Span {
    int64_t start, end;
    size_t from, to;  // the slots named inside, in touched_
  };
  void Touch(const Loc& l, int64_t t) {
    if (l.kind != Loc::Kind::kArena) return;
    Lifetime& lt = lifetimes_[l.index];
    lt.first = std::min(lt.first, t);
    lt.last = std::max(lt.last, t);
    lt.bytes = std::max(lt.bytes, l.bytes);
    touched_.push_back(l.index);
  }

  std::vector<Lifetime> lifetimes_;
  const std::vector<std::vector<Loc>>& tables_;
  std::vector<size_t> touched_;
  std::vector<Span> spans_;
  int64_t time_ = 0;
};

}  // namespace

hlo::StatusOr<std::vector<uint64_t>> LayOutArena(size_t slot_count, uint64_t chunk_limit, std::vector<Op>& ops,
                                                 std::vector<std::vector<Loc>>& tables, std::vector<Loc>& outputs) {
  LifetimeWalk walk(slot_count, tables);
  walk.Walk(ops);
  std::vector<Lifetime>& lifetimes = walk.Finish(outputs);

  // First fit in order of first use; a slot's memory returns to its chunk's
  // free list after its last use.
  std::vector<size_t> order(slot_count);
  for (size_t k = 0; k < slot_count; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return lifetimes[a].first < lifetimes[b].first; });
  struct Place {
    uint32_t chunk = 0;
    uint64_t offset = 0;
  };
  std::vector<Place> place(slot_count);
  std::vector<uint64_t> chunk_end;
  std::vector<std::map<uint64_t, uint64_t>> free_blocks;  // per chunk: offset -> size
  std::multimap<int64_t, size_t> live;                    // last use -> slot
  for (size_t slot : order) {
    const Lifetime& lt = lifetimes[slot];
    if (lt.last < 0) continue;  // never named
    for (auto it = live.begin(); it != live.end() && it->first < lt.first; it = live.erase(it)) {
      const size_t done = it->second;
      auto& blocks = free_blocks[place[done].chunk];
      uint64_t offset = place[done].offset, size = (lifetimes[done].bytes + kAlignment - 1) / kAlignment * kAlignment;
      size = std::max(size, kAlignment);
      auto next = blocks.lower_bound(offset);
      if (next != blocks.end() && offset + size == next->first) {
        size += next->second;
        next = blocks.erase(next);
      }
      if (next != blocks.begin()) {
        auto before = std::prev(next);
        if (before->first + before->second == offset) {
          before->second += size;
          continue;
        }
      }
      blocks.emplace(offset, size);
    }
    const uint64_t size = std::max(kAlignment, (lt.bytes + kAlignment - 1) / kAlignment * kAlignment);
    if (size > chunk_limit) {
      return hlo::ResourceExhausted("a value of " + std::to_string(lt.bytes) + " bytes is larger than the " +
                                    std::to_string(chunk_limit) + " bytes one device allocation can hold");
    }
    bool placed = false;
    for (uint32_t c = 0; c < free_blocks.size() && !placed; ++c) {
      for (auto it = free_blocks[c].begin(); it != free_blocks[c].end(); ++it) {
        if (it->second < size) continue;
        place[slot] = {c, it->first};
        if (it->second > size) free_blocks[c].emplace(it->first + size, it->second - size);
        free_blocks[c].erase(it);
        placed = true;
        break;
      }
    }
    for (uint32_t c = 0; c < chunk_end.size() && !placed; ++c) {
      if (chunk_end[c] + size <= chunk_limit) {
        place[slot] = {c, chunk_end[c]};
        chunk_end[c] += size;
        placed = true;
      }
    }
    if (!placed) {
      chunk_end.push_back(size);
      free_blocks.emplace_back();
      place[slot] = {static_cast<uint32_t>(chunk_end.size() - 1), 0};
    }
    live.emplace(lt.last, slot);
  }

  auto rewrite = [&](Loc& l) {
    if (l.kind != Loc::Kind::kArena) return;
    const Place p = place[l.index];
    l.index = p.chunk;
    l.offset = p.offset;
  };
  std::function<void(std::vector<Op>&)> rewrite_ops = [&](std::vector<Op>& list) {
    for (Op& op : list) {
      rewrite(op.src);
      rewrite(op.dst);
      rewrite(op.selector);
      for (auto& branch : op.branches) rewrite_ops(branch);
    }
  };
  rewrite_ops(ops);
  for (auto& t : tables) {
    for (Loc& l : t) rewrite(l);
  }
  for (Loc& l : outputs) rewrite(l);
  return chunk_end;
}

}  // namespace anvil::gpu
