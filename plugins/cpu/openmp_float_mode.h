// The float mode of the calling thread (float_mode.h) on OpenMP's team as
// well, for a call that oneDNN runs on the team: a convolution primitive
// and its reorders, or an sgemm large enough for oneDNN's own threads
// (Debian's oneDNN threads with GCC's OpenMP). Each thread that starts
// parallel regions has a team of its own, whose threads keep the mode
// they were created with, their creator's at the time; so without this a
// flush_denormals=true execution computed part of such a step with IEEE's
// gradual underflow, and an IEEE execution on a thread whose team was made
// during a flushed one flushed part of its result.
#pragma once

namespace anvil::cpu {

// Sets the calling thread's mode on the team of omp_get_max_threads()
// threads that it starts. A thread remembers what it set its team to, so
// this costs a parallel region (about 15 us on two cores) only when the
// mode changes: the team keeps the mode of the last call, since only the
// oneDNN calls that this precedes use it.
void MatchTeamFloatMode();

}  // namespace anvil::cpu
