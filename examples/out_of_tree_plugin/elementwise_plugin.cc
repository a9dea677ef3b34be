// libanvil_plugin_elementwise.so: a device plugin built outside Anvil's tree
// against the installed SDK (Anvil::plugin_sdk, i.e. anvil/anvil_plugin.h)
// alone. One device whose memory is host memory; programs are elementwise
// f32 ones (elementwise_program.h), run synchronously inside the execute
// entry, which then calls `done` before it returns (the ABI allows that).
//
// The ABI's rules this file keeps: no C++ exception leaves an entry (each
// runs inside Guarded), an entry that returns an error never calls `done`,
// and execute owns every donated input from the call on, failing or not.
#include <anvil/anvil.h>  // anvil_status_code values only
#include <anvil/anvil_plugin.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "elementwise_program.h"

struct anvil_plugin_error {
  int32_t code;
  std::string message;
};

struct anvil_plugin_context {
  anvil_plugin_host_executor executor;  // unused: all work is synchronous
};

struct anvil_plugin_memory {
  void* data;
  size_t bytes;
};

struct anvil_plugin_executable {
  elementwise::Program program;
};

namespace {

// Returned when even an error cannot be allocated; never freed.
anvil_plugin_error out_of_memory{ANVIL_RESOURCE_EXHAUSTED, "elementwise plugin: out of memory"};

anvil_plugin_error* MakeError(int32_t code, const std::string& message) noexcept {
  try {
    return new anvil_plugin_error{code, message};
  } catch (...) {
    return &out_of_memory;
  }
}

// Runs an entry's body, turning any exception into the error it returns.
template <typename Body>
anvil_plugin_error* Guarded(const char* entry, Body body) noexcept {
  try {
    return body();
  } catch (const elementwise::Error& e) {
    return MakeError(e.code, e.what());
  } catch (const std::bad_alloc&) {
    return &out_of_memory;
  } catch (const std::exception& e) {
    return MakeError(ANVIL_INTERNAL, std::string(entry) + ": " + e.what());
  } catch (...) {
    return MakeError(ANVIL_INTERNAL, std::string(entry) + ": unknown exception");
  }
}

void ErrorDestroy(anvil_plugin_error* error) {
  if (error != &out_of_memory) delete error;
}
int32_t ErrorCode(const anvil_plugin_error* error) { return error->code; }
const char* ErrorMessage(const anvil_plugin_error* error) { return error->message.c_str(); }

anvil_plugin_error* ContextCreate(const anvil_plugin_host_executor* executor, anvil_plugin_context** out) {
  return Guarded("context_create", [&]() -> anvil_plugin_error* {
    *out = new anvil_plugin_context{*executor};
    return nullptr;
  });
}
void ContextDestroy(anvil_plugin_context* context) { delete context; }

anvil_plugin_error* DeviceCount(anvil_plugin_context*, size_t* out) {
  *out = 1;
  return nullptr;
}

anvil_plugin_error* DeviceProperties(anvil_plugin_context*, size_t device, anvil_plugin_device_properties* out) {
  if (device != 0) return MakeError(ANVIL_OUT_OF_RANGE, "no device " + std::to_string(device));
  anvil_plugin_device_properties p{};
  p.kind = "cpu";
  p.name = "host (elementwise example)";
  p.memory_bytes = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // Fill only the fields within the caller's struct_size: an older core
  // passes a shorter struct.
  const size_t head = sizeof(out->struct_size);
  if (out->struct_size > head) {
    std::memcpy(reinterpret_cast<char*>(out) + head, reinterpret_cast<const char*>(&p) + head,
                std::min(out->struct_size, sizeof(p)) - head);
  }
  return nullptr;
}

anvil_plugin_error* MemoryAllocate(anvil_plugin_context*, size_t device, size_t bytes, anvil_plugin_memory** out) {
  return Guarded("memory_allocate", [&]() -> anvil_plugin_error* {
    if (device != 0) return MakeError(ANVIL_OUT_OF_RANGE, "no device " + std::to_string(device));
    void* data = std::malloc(bytes ? bytes : 1);
    if (!data) return MakeError(ANVIL_RESOURCE_EXHAUSTED, "cannot allocate " + std::to_string(bytes) + " bytes");
    *out = new anvil_plugin_memory{data, bytes};
    return nullptr;
  });
}

void MemoryFree(anvil_plugin_context*, anvil_plugin_memory* memory) {
  if (!memory) return;
  std::free(memory->data);
  delete memory;
}

// Copies finish before the entry returns; `done` is called from inside it.
anvil_plugin_error* CopyFromHost(anvil_plugin_context*, anvil_plugin_memory* memory, const void* src, size_t bytes,
                                 anvil_plugin_done done, void* user_data) {
  if (bytes > memory->bytes) return MakeError(ANVIL_INVALID_ARGUMENT, "copy larger than the memory");
  std::memcpy(memory->data, src, bytes);
  done(user_data, nullptr);
  return nullptr;
}

anvil_plugin_error* CopyToHost(anvil_plugin_context*, anvil_plugin_memory* memory, void* dst, size_t bytes,
                               anvil_plugin_done done, void* user_data) {
  if (bytes > memory->bytes) return MakeError(ANVIL_INVALID_ARGUMENT, "copy larger than the memory");
  std::memcpy(dst, memory->data, bytes);
  done(user_data, nullptr);
  return nullptr;
}

anvil_plugin_error* Compile(anvil_plugin_context*, size_t device, const char* hlo_text, size_t hlo_size,
                            const char* /*options*/, anvil_plugin_executable** out) {
  return Guarded("executable_compile", [&]() -> anvil_plugin_error* {
    if (device != 0) return MakeError(ANVIL_OUT_OF_RANGE, "no device " + std::to_string(device));
    *out = new anvil_plugin_executable{elementwise::Program::Parse(std::string_view(hlo_text, hlo_size))};
    return nullptr;
  });
}

void ExecutableDestroy(anvil_plugin_context*, anvil_plugin_executable* executable) { delete executable; }

anvil_plugin_error* Execute(anvil_plugin_context* context, anvil_plugin_executable* executable,
                            anvil_plugin_memory* const* inputs, const uint8_t* donated, size_t num_inputs,
                            anvil_plugin_memory** outputs, size_t num_outputs, anvil_plugin_done done,
                            void* user_data) {
  for (size_t r = 0; r < num_outputs; ++r) outputs[r] = nullptr;
  anvil_plugin_error* error = Guarded("executable_execute", [&]() -> anvil_plugin_error* {
    const elementwise::Program& program = executable->program;
    const std::vector<size_t> output_elements = program.output_elements();
    if (num_inputs != program.parameter_elements().size() || num_outputs != output_elements.size()) {
      return MakeError(ANVIL_INVALID_ARGUMENT, "wrong number of inputs or outputs");
    }
    std::vector<const float*> in(num_inputs);
    for (size_t k = 0; k < num_inputs; ++k) {
      if (inputs[k]->bytes != program.parameter_elements()[k] * sizeof(float)) {
        return MakeError(ANVIL_INVALID_ARGUMENT, "input " + std::to_string(k) + " has the wrong size");
      }
      in[k] = static_cast<const float*>(inputs[k]->data);
    }
    std::vector<float*> out(num_outputs);
    for (size_t r = 0; r < num_outputs; ++r) {
      if (anvil_plugin_error* e = MemoryAllocate(context, 0, output_elements[r] * sizeof(float), &outputs[r])) return e;
      out[r] = static_cast<float*>(outputs[r]->data);
    }
    program.Run(in.data(), out.data());
    return nullptr;
  });
  // Donated inputs are this plugin's now; none becomes an output here, so
  // each is freed once the program has read it, on either outcome.
  for (size_t k = 0; donated && k < num_inputs; ++k) {
    if (donated[k]) MemoryFree(context, inputs[k]);
  }
  if (error) {
    // What was allocated goes, and outputs[] is left NULL for core.
    for (size_t r = 0; r < num_outputs; ++r) {
      MemoryFree(context, outputs[r]);
      outputs[r] = nullptr;
    }
    return error;
  }
  done(user_data, nullptr);
  return nullptr;
}

anvil_plugin_api MakeApi() {
  anvil_plugin_api api{};
  // The table as this header defines it. Core refuses another major and
  // answers UNIMPLEMENTED for any entry that is NULL or past struct_size, so
  // the optional ones (serialisation, zero-copy host memory) stay NULL.
  api.struct_size = ANVIL_PLUGIN_API_STRUCT_SIZE;
  api.abi_major = ANVIL_PLUGIN_ABI_MAJOR;
  api.abi_minor = ANVIL_PLUGIN_ABI_MINOR;
  api.name = "elementwise";  // so the file is libanvil_plugin_elementwise.so
  api.version = "0.1.0";
  api.error_destroy = &ErrorDestroy;
  api.error_code = &ErrorCode;
  api.error_message = &ErrorMessage;
  api.context_create = &ContextCreate;
  api.context_destroy = &ContextDestroy;
  api.device_count = &DeviceCount;
  api.device_properties = &DeviceProperties;
  api.memory_allocate = &MemoryAllocate;
  api.memory_free = &MemoryFree;
  api.memory_copy_from_host = &CopyFromHost;
  api.memory_copy_to_host = &CopyToHost;
  api.executable_compile = &Compile;
  api.executable_destroy = &ExecutableDestroy;
  api.executable_execute = &Execute;
  return api;
}

}  // namespace

// The one exported symbol (plugin.map keeps everything else local).
extern "C" __attribute__((visibility("default"))) const anvil_plugin_api* anvil_plugin_get_api(void) {
  static const anvil_plugin_api api = MakeApi();
  return &api;
}
