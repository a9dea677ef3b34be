// Non-temporal stores for large results. A plain store first reads the
// cache line it writes (read for ownership); a result too large to stay in
// the caches for its reader gains nothing from that read, so the kernels
// writing such results (the fused loops, batch norm's normalised rows)
// stage them in L1 and copy them out with non-temporal stores, one pass
// over memory where there were two.
#pragma once

#include <cstdint>

namespace anvil::cpu {

// A result whose f32 elements are at least this many bytes, and which
// together with what its kernel reads passes half the last-level cache,
// streams: it cannot stay in the caches for its consumer anyway (64 MB of
// an elementwise chain's results with 192 MB of inputs: 15.8 -> 14.4 ms
// where the cache is 260 MB). A result that fits beside its inputs stays
// in the cache for whatever reads it next (attention's softmax, 8 MB read
// by the dot after it: 3.86 -> 3.5 ms for the whole program when it
// stopped streaming).
inline constexpr int64_t kStreamedResultBytes = int64_t{8} << 20;
bool ResultStreams(int64_t result_bytes, int64_t touched_bytes);

// Half the last-level cache, as the C library reports it (8 MB where it
// does not, which streams every result of at least 8 MB).
int64_t HalfLastLevelCache();

// Copies n floats to memory with non-temporal stores, as wide as the CPU
// has (16 bytes on every x86-64); the caller fences before its work is
// seen as done.
void StreamTile(const float* from, float* to, int64_t n);
void FenceStreamedStores();

}  // namespace anvil::cpu
