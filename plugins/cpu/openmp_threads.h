// How many threads oneDNN's OpenMP calls from this thread may use, for a
// scope. Debian's oneDNN threads its sgemm and primitives with GCC's
// OpenMP; left to itself, a call from one of core's arena threads starts
// a team of every core beside the arena, and on two cores the two pools
// wait for each other. So a kernel that splits its work across the arena
// runs each sgemm with OpenMpThreads(1), on the calling thread alone, in
// its float mode; a call that uses the team sets the team's float mode
// first (openmp_float_mode.h).
#pragma once

#include <omp.h>

namespace anvil::cpu {

class OpenMpThreads {
 public:
  explicit OpenMpThreads(int threads) : previous_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~OpenMpThreads() { omp_set_num_threads(previous_); }
  OpenMpThreads(const OpenMpThreads&) = delete;
  OpenMpThreads& operator=(const OpenMpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace anvil::cpu
