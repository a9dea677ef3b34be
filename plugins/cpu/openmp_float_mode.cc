#include "plugins/cpu/openmp_float_mode.h"

#include <omp.h>

#include <cstdint>

#include "plugins/cpu/float_mode.h"

namespace anvil::cpu {
namespace {

void SetFloatMode(uint32_t mode) {
#if defined(__SSE__)
  _mm_setcsr((_mm_getcsr() & ~kFlushDenormals) | mode);
#else
  (void)mode;
#endif
}

// What this thread last set its team to, and on how many threads (0: not
// yet). libgomp gives a thread that starts regions of a size the same
// threads each time; a larger region adds threads, made with the starting
// thread's mode at that moment.
thread_local uint32_t team_mode = 0;
thread_local int team_threads = 0;

}  // namespace

void MatchTeamFloatMode() {
  const int threads = omp_get_max_threads();
  if (threads <= 1) return;  // the calling thread alone, in its own mode
  const uint32_t mode = FloatMode();
  if (team_threads >= threads && team_mode == mode) return;
#pragma omp parallel num_threads(threads)
  SetFloatMode(mode);
  team_mode = mode;
  team_threads = threads;
}

}  // namespace anvil::cpu
