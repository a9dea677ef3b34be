// A program compiled for one device of a GPU plugin that runs code objects
// through a DeviceRuntime (CUDA, ROCm): the GPU layer's device program,
// whose kernels are entries of code objects the plugin's compiler made, and
// its constants in device memory. Running it walks the program on a stream
// of its own. The plugin supplies the runtime, the dialect and a compiler;
// everything else (emitting each kernel once, reusing a serialised
// executable's code objects, loading, serialising, running) is here.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/status.h"
#include "plugins/gpu/caching_allocator.h"
#include "plugins/gpu/device_program.h"
#include "plugins/gpu/device_runtime.h"
#include "plugins/gpu/kernel_dialect.h"
#include "plugins/gpu/kernel_emitter.h"
#include "plugins/gpu/program_kernels.h"

namespace anvil::gpu {

// Kernel passes compiled for a device: code objects, and for each pass (by
// the KernelKey of its source) the code object that holds it and its entry.
// A compiler may put one pass in a code object (NVRTC) or many (clang, whose
// start-up dominates a small module).
struct CompiledPass {
  std::string key;
  size_t image = 0;
  std::string entry;
};
struct CompiledKernels {
  std::vector<std::string> images;
  std::vector<CompiledPass> passes;
};

// The plugin's compiler for one device: compiles every module (or fails
// with the first error: the compiler's log, INTERNAL, naming the kernel).
using KernelCompiler = std::function<hlo::StatusOr<CompiledKernels>(std::vector<KernelModule> modules)>;

// What stays the same for every executable of a plugin.
struct ExecutableKind {
  const KernelDialect* dialect;
  const KernelOptions* options;  // its workgroup size is every launch's block
  std::string plugin;            // "the CUDA plugin", for messages
  std::string_view magic;        // 8 bytes naming the serialised format
};

// A serialised executable, read back.
struct SerializedKernels {
  std::string canonical_text;
  CompiledKernels kernels;
};

// An execution whose work is queued on a stream of its own. Destroying it
// waits for that stream, if Wait has not, and gives its memory back to the
// device's caching allocator; any thread may wait for it or destroy it.
class QueuedExecution {
 public:
  virtual ~QueuedExecution() = default;
  // Returns once the device has run everything queued: the execution's
  // outcome (the runtime's error, if the stream failed).
  virtual hlo::Status Wait() = 0;
};

class GpuExecutable {
 public:
  // Plans and emits the program's kernels, compiles those `known` (from a
  // serialised executable, for this device) lacks, loads them on `device`
  // and lays out the device program. Errors: the generator's UNIMPLEMENTED
  // naming an instruction, the compiler's, or the runtime's.
  static hlo::StatusOr<std::unique_ptr<GpuExecutable>> Compile(DeviceRuntime& runtime, size_t device,
                                                               const ExecutableKind& kind,
                                                               std::string_view canonical_text,
                                                               const KernelCompiler& compile,
                                                               const CompiledKernels* known = nullptr);
  // The canonical text and the code objects of every pass it loaded.
  std::string Serialize() const;
  // What Serialize wrote, or INVALID_ARGUMENT with the byte offset.
  static hlo::StatusOr<SerializedKernels> ReadSerialized(const ExecutableKind& kind, std::string_view bytes);
  // Unloads the modules and frees the constants.
  ~GpuExecutable();
  GpuExecutable(const GpuExecutable&) = delete;
  GpuExecutable& operator=(const GpuExecutable&) = delete;

  size_t device() const { return device_; }
  const DeviceProgram& program() const { return program_; }

  // Queues the program on `inputs` into `outputs` (device memory of its
  // parameter and output sizes) and returns once everything is queued: the
  // arena and the address tables come from `memory` (the device's, kept for
  // the next execution), the ops and the copies out go on a stream of the
  // execution's own. Where the program has loops or conditionals
  // (WaitsWhileQueued), queuing waits for the stream to read back each
  // condition or branch index the host decides by; otherwise nothing here
  // waits for the device, so it may run on the thread that issued the
  // execution. The QueuedExecution's Wait returns when the device is done.
  hlo::StatusOr<std::unique_ptr<QueuedExecution>> Start(CachingAllocator& memory, std::vector<uint64_t> inputs,
                                                        const std::vector<uint64_t>& outputs) const;
  bool WaitsWhileQueued() const { return waits_while_queued_; }

 private:
  friend class CodeObjectLoader;
  GpuExecutable(DeviceRuntime& runtime, size_t device, const ExecutableKind& kind)
      : runtime_(runtime), device_(device), kind_(kind) {}

  DeviceRuntime& runtime_;
  size_t device_;
  const ExecutableKind& kind_;
  DeviceProgram program_;
  uint64_t constants_ = 0;
  bool waits_while_queued_ = false;  // a top-level loop or conditional
  std::vector<DeviceRuntime::Module> modules_;
  std::deque<DeviceRuntime::Function> functions_;  // what the program's dispatches point at
  std::string canonical_text_;
  CompiledKernels loaded_;  // the code objects and passes loaded, for Serialize
};

}  // namespace anvil::gpu
