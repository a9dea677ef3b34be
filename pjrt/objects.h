// The objects behind the PJRT handles this plugin hands out. Each wraps the
// Anvil client-ABI handle it stands for; the plugin is a client of anvil.h
// like any framework, and knows nothing of core's internals.
#pragma once

#include <anvil/anvil.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pjrt/pjrt_abi.h"

namespace anvil::pjrt {

// PJRT requires an error to begin with its function table, so that a
// framework can read errors made by another library's code too.
struct Error {
  const abi::ErrorFunctionTable* vtable;
  abi::ErrorCode code;
  std::string message;
};

// An event's state outlives its handle: the framework may destroy the
// handle while the completion it waits for is still to come.
class EventState {
 public:
  // Completes the event once; later calls are ignored.
  void Set(abi::ErrorCode code, std::string message);
  bool IsReady();
  // Blocks until complete; returns the error (a new Error) or null.
  Error* Await();
  // Runs `callback` once complete (at once, here, if it already is).
  void OnReady(std::function<void(abi::ErrorCode, const std::string&)> callback);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  abi::ErrorCode code_ = abi::kOk;
  std::string message_;
  std::vector<std::function<void(abi::ErrorCode, const std::string&)>> callbacks_;
};

struct Event {
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
};

struct DeviceDescription {
  int id = 0;
  std::string kind;         // the Anvil plugin's word for the device: "cpu"
  std::string debug_string; // "AnvilDevice(id=0, plugin=cpu, name=host)"
  std::string to_string;
};

struct Memory {
  const abi::MemoryFunctionTable* vtable;
  int id = 0;
  std::string kind = "device";
  std::string debug_string;
  std::string to_string;
  struct Device* device = nullptr;
  std::mutex user_data_mu;
  std::map<const void*, std::pair<void*, void (*)(void*)>> user_data;
  ~Memory();
};

struct Device {
  DeviceDescription description;
  struct Client* client = nullptr;
  anvil_device* anvil = nullptr;
  int local_hardware_id = 0;
  std::unique_ptr<Memory> memory;
  uint64_t memory_bytes = 0;
};

struct Client {
  anvil_client* anvil = nullptr;
  std::string anvil_plugin;      // "cpu"
  // What anvil_compile_args.options carries for every compile: the
  // "anvil_compile_options" create option, else, for the CPU plugin,
  // flush_denormals=true, since XLA's CPU client (which JAX's users
  // know) runs every execution with denormals flushed to zero.
  std::string compile_options;
  std::string platform_version;  // "anvil 0.1.0 (plugin cpu ...)"
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<Device*> device_list;
  std::vector<Memory*> memory_list;
};

struct Buffer {
  Client* client = nullptr;
  Device* device = nullptr;
  anvil_buffer* anvil = nullptr;  // null once deleted or donated
  abi::BufferType type = abi::kTypeInvalid;
  std::vector<int64_t> dims;
  std::vector<int64_t> minor_to_major;  // row-major: n-1 ... 0
  size_t byte_size = 0;
  std::mutex mu;
  bool deleted = false;  // Buffer_Delete, or donated to an execution
  int external_references = 0;
};

// What compiling produced; shared by the loaded executable and every
// PJRT_Executable handle taken from it.
struct CompiledProgram {
  anvil_executable* anvil = nullptr;
  Client* client = nullptr;
  Device* device = nullptr;
  std::string name;
  std::string fingerprint;
  std::string compile_options;  // the serialized CompileOptionsProto, as given
  size_t num_parameters = 0;
  std::vector<abi::BufferType> output_types;
  std::vector<int64_t> output_dims;      // all outputs' dims, concatenated
  std::vector<size_t> output_dim_sizes;  // rank of each output
  std::vector<size_t> output_bytes;
  std::vector<uint8_t> parameter_is_donor;  // the program marks it donatable
  std::vector<const char*> memory_kinds;    // "device", one per output (or parameter)
  std::vector<size_t> memory_kind_sizes;
  ~CompiledProgram();
};

struct Executable {
  std::shared_ptr<CompiledProgram> program;
};

struct LoadedExecutable {
  std::shared_ptr<CompiledProgram> program;
  std::atomic<bool> deleted{false};
};

}  // namespace anvil::pjrt
