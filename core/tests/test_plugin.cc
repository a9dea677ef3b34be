// A device plugin for core's tests: host memory "devices", a tiny
// interpreter for elementwise f32/s32 programs, and faults on request
// (allocation, compilation, execution, transfers, slow completions), so the
// runtime's error paths run for real. Variants built from this file with
// other ABI versions test version handling.
#include <atomic>
#include <functional>
#include <unordered_map>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "hlo/hlo_parser.h"

#ifndef ANVIL_TEST_PLUGIN_NAME
#define ANVIL_TEST_PLUGIN_NAME "test"
#endif
#ifndef ANVIL_TEST_PLUGIN_ABI_MAJOR
#define ANVIL_TEST_PLUGIN_ABI_MAJOR ANVIL_PLUGIN_ABI_MAJOR
#endif

struct anvil_plugin_error {
  int32_t code;
  std::string message;
};

struct anvil_plugin_memory {
  std::vector<uint8_t> bytes;
};

struct anvil_plugin_context {
  anvil_plugin_host_executor executor;
};

namespace {

using anvil::hlo::ElementType;
using anvil::hlo::Instruction;
using anvil::hlo::Opcode;

// Faults armed by anvil_test_plugin_set_faults.
struct Faults {
  std::atomic<bool> allocate{false}, compile{false}, execute{false}, execute_async{false};
  std::atomic<bool> copy_from_host{false}, copy_to_host{false};
  std::atomic<int> delay_ms{0};
};
Faults faults;

anvil_plugin_error* Error(int32_t code, std::string message) { return new anvil_plugin_error{code, std::move(message)}; }
constexpr int32_t kInvalidArgument = 3, kResourceExhausted = 8, kUnimplemented = 12, kInternal = 13;

// Runs `work` on core's host executor, after the armed delay.
void Async(anvil_plugin_context* context, std::function<void()> work) {
  auto* boxed = new std::function<void()>(std::move(work));
  context->executor.enqueue(
      context->executor.executor,
      [](void* arg) {
        std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(arg));
        if (int ms = faults.delay_ms.load()) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        (*fn)();
      },
      boxed);
}

struct Executable {
  std::unique_ptr<anvil::hlo::Module> module;
  std::vector<const Instruction*> outputs;  // the root, or its tuple operands
};

template <typename T>
void Evaluate(const Instruction& i, const std::vector<const std::vector<uint8_t>*>& args, std::vector<uint8_t>& out) {
  const int64_t n = i.shape.ElementCount();
  out.resize(static_cast<size_t>(n) * sizeof(T));
  T* dst = reinterpret_cast<T*>(out.data());
  auto arg = [&](size_t k) { return reinterpret_cast<const T*>(args[k]->data()); };
  for (int64_t e = 0; e < n; ++e) {
    switch (i.opcode) {
      case Opcode::kAdd: dst[e] = arg(0)[e] + arg(1)[e]; break;
      case Opcode::kSubtract: dst[e] = arg(0)[e] - arg(1)[e]; break;
      case Opcode::kMultiply: dst[e] = arg(0)[e] * arg(1)[e]; break;
      case Opcode::kNegate: dst[e] = -arg(0)[e]; break;
      case Opcode::kCopy: dst[e] = arg(0)[e]; break;
      default: break;
    }
  }
}

anvil_plugin_error* Interpret(const Executable& exe, anvil_plugin_memory* const* inputs,
                              std::vector<std::vector<uint8_t>>& results) {
  const auto& entry = *exe.module->entry;
  std::unordered_map<const Instruction*, std::vector<uint8_t>> values;
  for (const auto& owned : entry.instructions) {
    const Instruction& i = *owned;
    if (i.opcode == Opcode::kParameter) {
      values[&i] = inputs[i.parameter_number]->bytes;
    } else if (i.opcode == Opcode::kConstant) {
      values[&i] = i.literal->data();
    } else if (i.opcode == Opcode::kTuple) {
      continue;
    } else {
      std::vector<const std::vector<uint8_t>*> args;
      for (const Instruction* o : i.operands) args.push_back(&values.at(o));
      std::vector<uint8_t> out;
      if (i.shape.element_type() == ElementType::kF32) {
        Evaluate<float>(i, args, out);
      } else {
        Evaluate<int32_t>(i, args, out);
      }
      values[&i] = std::move(out);
    }
  }
  for (const Instruction* o : exe.outputs) results.push_back(values.at(o));
  return nullptr;
}

// --- the API table's entries

void ErrorDestroy(anvil_plugin_error* e) { delete e; }
int32_t ErrorCode(const anvil_plugin_error* e) { return e->code; }
const char* ErrorMessage(const anvil_plugin_error* e) { return e->message.c_str(); }

anvil_plugin_error* ContextCreate(const anvil_plugin_host_executor* executor, anvil_plugin_context** out) {
  if (!executor || executor->struct_size < ANVIL_PLUGIN_HOST_EXECUTOR_STRUCT_SIZE) {
    return Error(kInvalidArgument, "no host executor");
  }
  *out = new anvil_plugin_context{*executor};
  return nullptr;
}

void ContextDestroy(anvil_plugin_context* context) { delete context; }

anvil_plugin_error* DeviceCount(anvil_plugin_context*, size_t* out) {
  *out = 2;
  return nullptr;
}

anvil_plugin_error* DeviceProperties(anvil_plugin_context*, size_t device, anvil_plugin_device_properties* out) {
  if (device >= 2) return Error(kInvalidArgument, "no device " + std::to_string(device));
  static const char* kNames[] = {"test-device-0", "test-device-1"};
  out->kind = "test";
  out->name = kNames[device];
  out->memory_bytes = 1u << 30;
  return nullptr;
}

anvil_plugin_error* Allocate(anvil_plugin_context*, size_t, size_t bytes, anvil_plugin_memory** out) {
  if (faults.allocate) return Error(kResourceExhausted, "injected allocation failure");
  *out = new anvil_plugin_memory{std::vector<uint8_t>(bytes)};
  return nullptr;
}

void Free(anvil_plugin_context*, anvil_plugin_memory* memory) { delete memory; }

anvil_plugin_error* CopyFromHost(anvil_plugin_context* context, anvil_plugin_memory* memory, const void* src,
                                 size_t bytes, anvil_plugin_done done, void* user) {
  if (bytes != memory->bytes.size()) return Error(kInvalidArgument, "size mismatch");
  Async(context, [=] {
    if (faults.copy_from_host) return done(user, Error(kInternal, "injected host-to-device failure"));
    if (bytes) std::memcpy(memory->bytes.data(), src, bytes);
    done(user, nullptr);
  });
  return nullptr;
}

anvil_plugin_error* CopyToHost(anvil_plugin_context* context, anvil_plugin_memory* memory, void* dst, size_t bytes,
                               anvil_plugin_done done, void* user) {
  if (bytes != memory->bytes.size()) return Error(kInvalidArgument, "size mismatch");
  Async(context, [=] {
    if (faults.copy_to_host) return done(user, Error(kInternal, "injected device-to-host failure"));
    if (bytes) std::memcpy(dst, memory->bytes.data(), bytes);
    done(user, nullptr);
  });
  return nullptr;
}

anvil_plugin_error* Compile(anvil_plugin_context*, size_t, const char* text, size_t size, const char*,
                            anvil_plugin_executable** out) {
  if (faults.compile) return Error(kInternal, "injected compilation failure");
  auto module = anvil::hlo::ParseHloModule(std::string_view(text, size));
  if (!module.ok()) return Error(kInvalidArgument, "canonical text does not parse: " + module.status().message());
  auto exe = std::make_unique<Executable>();
  exe->module = std::move(module).value();
  for (const auto& i : exe->module->entry->instructions) {
    switch (i->opcode) {
      case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple: case Opcode::kAdd:
      case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kNegate: case Opcode::kCopy:
        break;
      default:
        return Error(kUnimplemented, "the test plugin does not run " + std::string(i->OpcodeSpelling()));
    }
    ElementType t = i->shape.IsTuple() ? ElementType::kF32 : i->shape.element_type();
    if (t != ElementType::kF32 && t != ElementType::kS32) {
      return Error(kUnimplemented, "the test plugin runs f32 and s32 only");
    }
  }
  const Instruction* root = exe->module->entry->root;
  if (root->opcode == Opcode::kTuple) {
    exe->outputs.assign(root->operands.begin(), root->operands.end());
  } else {
    exe->outputs.push_back(root);
  }
  *out = reinterpret_cast<anvil_plugin_executable*>(exe.release());
  return nullptr;
}

void ExecutableDestroy(anvil_plugin_context*, anvil_plugin_executable* e) { delete reinterpret_cast<Executable*>(e); }

anvil_plugin_error* Execute(anvil_plugin_context* context, anvil_plugin_executable* executable,
                            anvil_plugin_memory* const* inputs, const uint8_t* donated, size_t num_inputs,
                            anvil_plugin_memory** outputs, size_t num_outputs, anvil_plugin_done done, void* user) {
  auto* exe = reinterpret_cast<Executable*>(executable);
  // Donated inputs are ours now: free them once the outputs are computed.
  std::vector<anvil_plugin_memory*> owned;
  for (size_t k = 0; k < num_inputs; ++k) {
    if (donated[k]) owned.push_back(inputs[k]);
  }
  if (faults.execute) {
    for (anvil_plugin_memory* m : owned) delete m;
    return Error(kInternal, "injected execution failure");
  }
  // Outputs are allocated now (the ABI wants them before returning) and
  // filled asynchronously.
  for (size_t k = 0; k < num_outputs; ++k) outputs[k] = new anvil_plugin_memory{};
  std::vector<anvil_plugin_memory*> in(inputs, inputs + num_inputs);
  std::vector<anvil_plugin_memory*> out(outputs, outputs + num_outputs);
  Async(context, [=] {
    if (faults.execute_async) {
      for (anvil_plugin_memory* m : owned) delete m;
      return done(user, Error(kInternal, "injected asynchronous execution failure"));
    }
    std::vector<std::vector<uint8_t>> results;
    anvil_plugin_error* error = Interpret(*exe, in.data(), results);
    for (size_t k = 0; !error && k < out.size(); ++k) out[k]->bytes = std::move(results[k]);
    for (anvil_plugin_memory* m : owned) delete m;
    done(user, error);
  });
  return nullptr;
}

[[maybe_unused]] anvil_plugin_error* Serialize(anvil_plugin_context*, anvil_plugin_executable* executable, void** out, size_t* size) {
  // The canonical text is this plugin's whole executable.
  const auto* exe = reinterpret_cast<Executable*>(executable);
  std::string text = exe->module->name;
  char* bytes = new char[text.size()];
  std::memcpy(bytes, text.data(), text.size());
  *out = bytes;
  *size = text.size();
  return nullptr;
}

[[maybe_unused]] void SerializedFree(void* bytes) { delete[] static_cast<char*>(bytes); }

anvil_plugin_api MakeApi() {
  anvil_plugin_api api{};
#ifdef ANVIL_TEST_PLUGIN_OLD_MINOR
  // Built "against" minor 0, whose table ended before the optional entries.
  api.struct_size = offsetof(anvil_plugin_api, executable_serialize);
  api.abi_minor = 0;
#else
  api.struct_size = ANVIL_PLUGIN_API_STRUCT_SIZE;
  api.abi_minor = ANVIL_PLUGIN_ABI_MINOR;
#endif
  api.abi_major = ANVIL_TEST_PLUGIN_ABI_MAJOR;
  api.name = ANVIL_TEST_PLUGIN_NAME;
  api.version = "0.1.0-test";
  api.error_destroy = &ErrorDestroy;
  api.error_code = &ErrorCode;
  api.error_message = &ErrorMessage;
  api.context_create = &ContextCreate;
  api.context_destroy = &ContextDestroy;
  api.device_count = &DeviceCount;
  api.device_properties = &DeviceProperties;
  api.memory_allocate = &Allocate;
  api.memory_free = &Free;
  api.memory_copy_from_host = &CopyFromHost;
  api.memory_copy_to_host = &CopyToHost;
  api.executable_compile = &Compile;
  api.executable_destroy = &ExecutableDestroy;
  api.executable_execute = &Execute;
#ifndef ANVIL_TEST_PLUGIN_OLD_MINOR
  api.executable_serialize = &Serialize;
  api.serialized_free = &SerializedFree;
#endif
  return api;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const anvil_plugin_api* anvil_plugin_get_api(void) {
  static const anvil_plugin_api api = MakeApi();
  return &api;
}

// Test hook: a comma-separated list of faults to arm ("allocate", "compile",
// "execute", "execute_async", "copy_from_host", "copy_to_host",
// "delay_ms=N"); an empty string disarms all.
__attribute__((visibility("default"))) void anvil_test_plugin_set_faults(const char* spec) {
  std::string s = spec ? spec : "";
  auto has = [&](const char* word) { return s.find(word) != std::string::npos; };
  faults.allocate = has("allocate");
  faults.compile = has("compile");
  faults.execute_async = has("execute_async");
  faults.execute = has("execute") && !has("execute_async");
  faults.copy_from_host = has("copy_from_host");
  faults.copy_to_host = has("copy_to_host");
  size_t delay = s.find("delay_ms=");
  faults.delay_ms = delay == std::string::npos ? 0 : std::atoi(s.c_str() + delay + 9);
}

}  // extern "C"
