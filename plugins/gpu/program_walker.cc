#include "plugins/gpu/program_walker.h"

#include <cstring>

namespace anvil::gpu {
namespace {

// The value deciding a loop or conditional: a pred (0 or 1) or an s32.
hlo::StatusOr<int64_t> ReadSelector(DeviceQueue& queue, const Loc& l, bool is_pred) {
  if (l.kind == Loc::Kind::kNone) return hlo::Internal("a loop condition or branch index with no memory");
  if (is_pred) {
    uint8_t p = 0;
    ANVIL_RETURN_IF_ERROR(queue.Read(l, &p, 1));
    return static_cast<int64_t>(p != 0);
  }
  int32_t v = 0;
  ANVIL_RETURN_IF_ERROR(queue.Read(l, &v, sizeof v));
  return static_cast<int64_t>(v);
}

}  // namespace

hlo::Status WalkProgram(const std::vector<Op>& ops, const std::vector<uint64_t>& table_addresses, DeviceQueue& queue) {
  for (const Op& op : ops) {
    switch (op.kind) {
      case Op::Kind::kDispatch:
        ANVIL_RETURN_IF_ERROR(queue.Dispatch(op, table_addresses.at(op.table)));
        break;
      case Op::Kind::kCopy:
        ANVIL_RETURN_IF_ERROR(queue.Copy(op.src, op.dst));
        break;
      case Op::Kind::kWhile:
        for (;;) {
          ANVIL_RETURN_IF_ERROR(WalkProgram(op.branches[0], table_addresses, queue));
          ANVIL_ASSIGN_OR_RETURN(int64_t go_on, ReadSelector(queue, op.selector, true));
          if (!go_on) break;
          ANVIL_RETURN_IF_ERROR(WalkProgram(op.branches[1], table_addresses, queue));
        }
        break;
      case Op::Kind::kConditional: {
        ANVIL_ASSIGN_OR_RETURN(int64_t v, ReadSelector(queue, op.selector, op.selector_is_pred));
        const int64_t n = static_cast<int64_t>(op.branches.size());
        const int64_t branch = op.selector_is_pred ? (v ? 0 : 1) : (v < 0 || v >= n ? n - 1 : v);
        ANVIL_RETURN_IF_ERROR(WalkProgram(op.branches[static_cast<size_t>(branch)], table_addresses, queue));
        break;
      }
    }
  }
  return hlo::OkStatus();
}

AddressTables LayOutAddressTables(const DeviceProgram& program, const std::function<uint64_t(const Loc&)>& address) {
  AddressTables t;
  for (const auto& table : program.tables) {
    t.first.push_back(t.words.size());
    for (const Loc& l : table) t.words.push_back(address(l));
  }
  return t;
}

}  // namespace anvil::gpu
