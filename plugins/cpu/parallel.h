// Splits a loop across core's host threads (the oneTBB arena core hands the
// plugin as its host executor). The calling thread works too and waits only
// for chunks other threads have already taken, so a full pool never
// deadlocks and a small loop runs inline.
#pragma once

#include <cstdint>
#include <functional>

#include "anvil/anvil_plugin.h"

namespace anvil::cpu {

class Parallel {
 public:
  explicit Parallel(const anvil_plugin_host_executor* executor) : executor_(executor) {}
  // Runs fn(begin, end) over [0, n) in chunks of at least `grain`.
  void For(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const;
  // Runs fn(begin, end) over [0, n) in one chunk per host thread at most
  // (fewer when n is smaller): for work a library call does best in a few
  // large pieces, such as an sgemm of a block of rows.
  void ForEachThread(int64_t n, const std::function<void(int64_t, int64_t)>& fn) const;
  // The number of host threads loops split across.
  static int64_t Threads();

 private:
  const anvil_plugin_host_executor* executor_;
};

}  // namespace anvil::cpu
