// GatherRowBlock (lane_program.h), by the copy of each instruction set this
// CPU runs: positions of rows at scattered addresses moved into lane
// registers transposed, whole 16 x 16 blocks and the lanes and positions
// left over, and nothing written past the lanes and positions asked for.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "plugins/cpu/lane_program.h"

namespace anvil::cpu {
namespace {

constexpr uint32_t kUntouched = 0xdeadbeef;

void Check(Isa isa, int lanes, int count) {
  // Row j starts 1000 * j + 3 * (j % 5) elements in: unaligned, not evenly spaced.
  std::vector<uint32_t> data(1000 * kLaneCount + 64);
  for (size_t e = 0; e < data.size(); ++e) data[e] = static_cast<uint32_t>(e * 2654435761u);
  std::vector<const uint32_t*> rows;
  for (int j = 0; j < lanes; ++j) rows.push_back(data.data() + 1000 * j + 3 * (j % 5));
  std::vector<LaneRegister> into(16);
  for (LaneRegister& r : into) {
    for (int j = 0; j < kLaneCount; ++j) std::memcpy(r.bytes + 4 * j, &kUntouched, 4);
  }
  GatherRowBlockWith(isa, rows.data(), lanes, count, into.data());
  for (int b = 0; b < 16; ++b) {
    for (int j = 0; j < kLaneCount; ++j) {
      uint32_t got;
      std::memcpy(&got, into[b].bytes + 4 * j, 4);
      const uint32_t want = (b < count && j < lanes) ? rows[j][b] : kUntouched;
      ASSERT_EQ(got, want) << "isa " << static_cast<int>(isa) << ", " << lanes << " lanes, " << count
                           << " positions: position " << b << ", lane " << j;
    }
  }
}

TEST(LaneGather, EveryInstructionSetTransposesBlocksAndTheirRemainders) {
  for (Isa isa : IsasThisCpuRuns()) {
    for (int lanes : {1, 6, 15, 16, 17, 33, 48, 63, 64}) {
      for (int count : {1, 7, 15, 16}) Check(isa, lanes, count);
    }
  }
}

}  // namespace
}  // namespace anvil::cpu
