// Placement of an executable's intermediate values in arena memory. The
// builder gives each value a slot; once every operation is known, slots
// whose lifetimes (first to last operation that names them, loops counted
// whole for values they carry in) do not overlap share memory, first fit,
// in chunks of at most what one allocation may hold.
#pragma once

#include <cstdint>
#include <vector>

#include "hlo/status.h"
#include "plugins/gpu/device_program.h"

namespace anvil::gpu {

// Rewrites every arena Loc of `ops`, `tables` and `outputs` from slot
// numbers (Loc::index, offset 0) to a chunk and an offset, and returns the
// bytes each chunk needs.
hlo::StatusOr<std::vector<uint64_t>> LayOutArena(size_t slot_count, uint64_t chunk_limit, std::vector<Op>& ops,
                                                 std::vector<std::vector<Loc>>& tables, std::vector<Loc>& outputs);

}  // namespace anvil::gpu
