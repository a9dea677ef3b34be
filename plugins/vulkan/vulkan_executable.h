// A program compiled for one Vulkan device: the kernels of every planned
// computation as cached pipelines, where each value lives, and the
// operations an execution performs: dispatches and copies recorded into
// command buffers, and the while loops and conditionals the host decides
// between submissions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "hlo/ir.h"
#include "hlo/status.h"
#include "plugins/vulkan/vulkan_device.h"
#include "plugins/vulkan/vulkan_serialized.h"

namespace anvil::vulkan {

// Where one array lives in an execution.
struct Loc {
  enum class Kind : uint8_t { kNone, kParameter, kConstant, kArena } kind = Kind::kNone;
  uint32_t index = 0;   // parameter number, or arena chunk
  uint64_t offset = 0;  // bytes into the constant buffer or chunk
  uint64_t bytes = 0;
};

struct Op {
  enum class Kind : uint8_t { kDispatch, kCopy, kWhile, kConditional } kind = Kind::kDispatch;
  // kDispatch: a pipeline, its table of addresses, its workgroup count.
  const Pipeline* pipeline = nullptr;
  size_t table = 0;
  uint32_t groups = 0;
  std::string what;  // the kernel's root, for messages
  // kCopy
  Loc src, dst;
  // kWhile: run `first` (the condition), test `selector`, run `second` (body
  // and the copies back into the loop state), repeat.
  // kConditional: test `selector` (a pred: branch 0 if true; an s32: that
  // branch, the last one when out of range), run that branch.
  Loc selector;
  bool selector_is_pred = false;
  std::vector<std::vector<Op>> branches;
};

class Executable {
 public:
  // Kernels are compiled on `host`'s threads, all at once. `known` (from a
  // serialised executable) gives kernels' SPIR-V by their GLSL's key; a
  // kernel found there is validated, not compiled again.
  static hlo::StatusOr<std::unique_ptr<Executable>> Compile(Device& device, size_t device_index,
                                                            std::string_view hlo_text,
                                                            const anvil_plugin_host_executor& host,
                                                            const KnownSpirv* known = nullptr);
  // The canonical text and every kernel's SPIR-V (vulkan_serialized.h).
  std::string Serialize() const;
  ~Executable();

  Device& device() { return device_; }
  size_t device_index() const { return device_index_; }
  size_t parameter_count() const { return parameter_bytes_.size(); }
  const std::vector<uint64_t>& parameter_bytes() const { return parameter_bytes_; }
  const std::vector<uint64_t>& output_bytes() const { return output_bytes_; }
  const std::vector<uint64_t>& arena_chunks() const { return arena_chunks_; }
  const Buffer& constants() const { return constants_; }
  // Per dispatch: the locations whose addresses its table holds.
  const std::vector<std::vector<Loc>>& tables() const { return tables_; }
  const std::vector<Op>& ops() const { return ops_; }
  // Locations of the outputs, copied out at the end.
  const std::vector<Loc>& outputs() const { return outputs_; }
  size_t kernel_count() const { return kernel_count_; }

 private:
  friend class ProgramBuilder;
  Executable(Device& device, size_t device_index) : device_(device), device_index_(device_index) {}

  Device& device_;
  size_t device_index_;
  std::vector<uint64_t> parameter_bytes_, output_bytes_, arena_chunks_;
  Buffer constants_;
  std::vector<std::vector<Loc>> tables_;
  std::vector<Op> ops_;
  std::vector<Loc> outputs_;
  size_t kernel_count_ = 0;
  std::string canonical_text_;
  // Each distinct kernel's GLSL key and SPIR-V, in first-use order.
  std::vector<std::pair<std::string, std::vector<uint32_t>>> spirv_;
};

}  // namespace anvil::vulkan
