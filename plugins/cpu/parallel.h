// Splits a loop across core's host threads (the oneTBB arena core hands the
// plugin as its host executor). The calling thread works too and waits only
// for chunks other threads have already taken, so a full pool never
// deadlocks and a small loop runs inline.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>

#include "anvil/anvil_plugin.h"

namespace anvil::cpu {

class Parallel {
 public:
  explicit Parallel(const anvil_plugin_host_executor* executor) : executor_(executor) {}
  // Runs fn(begin, end) over [0, n) in chunks of at least `grain`. A loop
  // that runs inline calls fn directly: no std::function is made, whose
  // copy of a lambda capturing more than two pointers is a heap allocation
  // (a while loop of a few tiny fusions did four per iteration). A split
  // loop's helpers see fn through a reference: For returns only once every
  // chunk is done, and a helper that starts later finds none left.
  template <typename F>
  void For(int64_t n, int64_t grain, F&& fn) const {
    if (n <= 0) return;
    if (RunsInline(n, grain)) {
      fn(int64_t{0}, n);
      return;
    }
    Split(n, grain, std::function<void(int64_t, int64_t)>(std::ref(fn)));
  }
  // Runs fn(begin, end) over [0, n) in one chunk per host thread at most
  // (fewer when n is smaller): for work a library call does best in a few
  // large pieces, such as an sgemm of a block of rows.
  template <typename F>
  void ForEachThread(int64_t n, F&& fn) const {
    For(n, std::max<int64_t>(1, (n + Threads() - 1) / Threads()), std::forward<F>(fn));
  }
  // The number of host threads loops split across.
  static int64_t Threads();

 private:
  bool RunsInline(int64_t n, int64_t grain) const { return !executor_ || n <= grain || Threads() == 1; }
  // For's loop across the host threads.
  void Split(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const;

  const anvil_plugin_host_executor* executor_;
};

}  // namespace anvil::cpu
