// A program as every GPU plugin runs it: where each array lives (a
// parameter, the constant buffer, or a place in the arena), and the
// operations an execution performs in order: kernel dispatches and copies,
// which the device queues, and the while loops and conditionals the host
// decides between them (program_walker.h runs them). Built once per compile
// from the kernel plan (hlo/kernel_plan.h); the plugin supplies only its
// kernels, through a KernelLoader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/kernel_plan.h"
#include "hlo/status.h"
#include "plugins/gpu/kernel_emitter.h"

namespace anvil::gpu {

// Where one array lives in an execution.
struct Loc {
  enum class Kind : uint8_t { kNone, kParameter, kConstant, kArena } kind = Kind::kNone;
  uint32_t index = 0;   // parameter number, or arena chunk
  uint64_t offset = 0;  // bytes into the constant buffer or chunk
  uint64_t bytes = 0;

  bool SameMemory(const Loc& o) const { return kind == o.kind && index == o.index && offset == o.offset; }
};

struct Op {
  enum class Kind : uint8_t { kDispatch, kCopy, kWhile, kConditional } kind = Kind::kDispatch;
  // kDispatch: the plugin's kernel (what its KernelLoader returned), the
  // table of addresses it reads (DeviceProgram::tables), its workgroups.
  const void* kernel = nullptr;
  size_t table = 0;
  uint32_t groups = 0;
  std::string what;  // the kernel's root, for messages and profiles
  // kCopy
  Loc src, dst;
  // kWhile: run `branches[0]` (the condition), test `selector`, run
  // `branches[1]` (body and the copies back into the loop state), repeat.
  // kConditional: test `selector` (a pred: branch 0 if true; an s32: that
  // branch, the last one when out of range), run that branch.
  Loc selector;
  bool selector_is_pred = false;
  std::vector<std::vector<Op>> branches;
};

struct DeviceProgram {
  std::vector<uint64_t> parameter_bytes, output_bytes;
  // Bytes of each arena chunk an execution allocates (arena_layout.h).
  std::vector<uint64_t> arena_chunks;
  // The constant buffer's contents (each constant 16-byte aligned), which
  // the plugin uploads once.
  std::vector<uint8_t> constant_bytes;
  // Per kernel: the locations whose addresses its table holds (inputs,
  // then outputs, then scratch), in the order its code reads them.
  std::vector<std::vector<Loc>> tables;
  std::vector<Op> ops;
  std::vector<Loc> outputs;  // copied out at the end
  size_t kernel_count = 0;
};

// What a plugin gives the builder: its kernels.
class KernelLoader {
 public:
  virtual ~KernelLoader() = default;
  // The generator's options for this device (the workgroup size).
  virtual const KernelOptions& options() const = 0;
  // The kernel source of one planned kernel (emitted ahead, or now).
  virtual hlo::StatusOr<KernelSource> Emit(const hlo::KernelSpec& spec) = 0;
  // The device's kernel for one pass of `spec`'s kernel: a handle the
  // plugin keeps alive as long as the program and reads back in its
  // DeviceQueue::Dispatch. Passes with the same text may share one.
  virtual hlo::StatusOr<const void*> Load(const KernelPass& pass, const hlo::KernelSpec& spec) = 0;
};

// Lays out `module` (the module `plan` was made from) as a device program.
// `chunk_limit` is the most one device allocation may hold; `plugin` names
// the plugin in messages ("the Vulkan plugin").
hlo::StatusOr<DeviceProgram> BuildDeviceProgram(const hlo::Module& module, const hlo::ProgramPlan& plan,
                                                KernelLoader& loader, uint64_t chunk_limit, const std::string& plugin);

}  // namespace anvil::gpu
