// A device plugin for core's tests: host memory "devices", a tiny
// interpreter for elementwise f32/s32 programs, and faults on request
// (allocation, compilation, execution, transfers, slow completions), so the
// runtime's error paths run for real. Variants built from this file with
// other ABI versions test version handling.
#include <algorithm>
#include <atomic>
#include <stdexcept>
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
#include "plugins/common/plugin_support.h"

#ifndef ANVIL_TEST_PLUGIN_NAME
#define ANVIL_TEST_PLUGIN_NAME "test"
#endif
#ifndef ANVIL_TEST_PLUGIN_ABI_MAJOR
#define ANVIL_TEST_PLUGIN_ABI_MAJOR ANVIL_PLUGIN_ABI_MAJOR
#endif

// Counts itself, so tests can tell that nothing was lost or freed twice.
std::atomic<int64_t> live_memory{0};
struct anvil_plugin_memory {
  std::vector<uint8_t> bytes;
  explicit anvil_plugin_memory(std::vector<uint8_t> b = {}) : bytes(std::move(b)) { ++live_memory; }
  ~anvil_plugin_memory() { --live_memory; }
  anvil_plugin_memory(const anvil_plugin_memory&) = delete;
  anvil_plugin_memory& operator=(const anvil_plugin_memory&) = delete;
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
  std::atomic<bool> execute_throws{false}, execute_async_throws{false};
  std::atomic<bool> null_output{false};  // a buggy plugin: execute succeeds, output 0 is NULL
  std::atomic<bool> copy_from_host{false}, copy_to_host{false};
  std::atomic<int> delay_ms{0};
  std::atomic<int> allocate_output{-1};  // the output whose allocation fails, or -1
};
Faults faults;

using anvil::plugin::Error;
using anvil::plugin::kInternal;
using anvil::plugin::kInvalidArgument;
using anvil::plugin::kResourceExhausted;
using anvil::plugin::kUnimplemented;

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

anvil_plugin_error* ContextCreate(const anvil_plugin_host_executor* executor, anvil_plugin_context** out) {
  if (!executor || executor->struct_size < ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_host_executor, enqueue)) {
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
  *out = new anvil_plugin_memory(std::vector<uint8_t>(bytes));
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
  // Donated inputs are ours now; this frees them (and any outputs made) on
  // every early return, as every plugin does through plugins/common.
  anvil::plugin::ExecutionMemory memory(context, &Free, inputs, donated, num_inputs, outputs, num_outputs);
  if (faults.execute) return Error(kInternal, "injected execution failure");
  if (faults.execute_throws) throw std::out_of_range("injected exception in execute");
  // Outputs are allocated now (the ABI wants them before returning) and
  // filled asynchronously.
  if (anvil_plugin_error* e = memory.AllocateOutputs([](size_t k, anvil_plugin_memory** out) -> anvil_plugin_error* {
        if (static_cast<int>(k) == faults.allocate_output) {
          return Error(kResourceExhausted, "injected allocation failure of output " + std::to_string(k));
        }
        *out = new anvil_plugin_memory();
        return nullptr;
      })) {
    return e;
  }
  anvil::plugin::DonatedInputs donations = memory.Start();
  if (faults.null_output && num_outputs > 0) {
    delete outputs[0];
    outputs[0] = nullptr;
    for (size_t k = 1; k < num_outputs; ++k) outputs[k]->bytes.resize(16);
    Async(context, [done, user] { done(user, nullptr); });
    return nullptr;
  }
  std::vector<anvil_plugin_memory*> in(inputs, inputs + num_inputs);
  std::vector<anvil_plugin_memory*> out(outputs, outputs + num_outputs);
  Async(context, [=, donations = std::make_shared<anvil::plugin::DonatedInputs>(std::move(donations))] {
    auto work = [&]() -> anvil_plugin_error* {
      if (faults.execute_async) return Error(kInternal, "injected asynchronous execution failure");
      if (faults.execute_async_throws) throw std::out_of_range("injected exception in asynchronous work");
      std::vector<std::vector<uint8_t>> results;
      anvil_plugin_error* error = Interpret(*exe, in.data(), results);
      for (size_t k = 0; !error && k < out.size(); ++k) out[k]->bytes = std::move(results[k]);
      donations->FreeAll();
      return error;
    };
    anvil::plugin::Complete("executable_execute", work, done, user);
  });
  return nullptr;
}

// Compile-only targets: "tgt_a" compiles every program the canonical text
// of which parses; "tgt_b" refuses one whose entry's root is a custom-call.
// Either refuses the options "refuse", so tests see the options arrive. Set
// in every variant but test_old (minor 0); test_minor3's table ends before them.
const char* const kTargets[] = {"tgt_a", "tgt_b"};

[[maybe_unused]] anvil_plugin_error* TargetCount(anvil_plugin_context*, size_t* out) {
  *out = 2;
  return nullptr;
}

[[maybe_unused]] anvil_plugin_error* TargetName(anvil_plugin_context*, size_t target, const char** out) {
  if (target >= 2) return Error(kInvalidArgument, "no target " + std::to_string(target));
  *out = kTargets[target];
  return nullptr;
}

[[maybe_unused]] anvil_plugin_error* TargetCompile(anvil_plugin_context*, size_t target, const char* text, size_t size,
                                                   const char* options) {
  if (target >= 2) return Error(kInvalidArgument, "no target " + std::to_string(target));
  if (options && std::strcmp(options, "refuse") == 0) {
    return Error(kInvalidArgument, std::string(kTargets[target]) + " refuses the options 'refuse'");
  }
  auto module = anvil::hlo::ParseHloModule(std::string_view(text, size));
  if (!module.ok()) return Error(kInvalidArgument, "canonical text does not parse: " + module.status().message());
  if (target == 1 && (*module)->entry->root->opcode == Opcode::kCustomCall) {
    return Error(kUnimplemented, "tgt_b cannot compile custom-call");
  }
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
#if defined(ANVIL_TEST_PLUGIN_OLD_MINOR)
  // Built "against" minor 0, whose table ended before the optional entries.
  api.struct_size = offsetof(anvil_plugin_api, executable_serialize);
  api.abi_minor = 0;
#elif defined(ANVIL_TEST_PLUGIN_MINOR3)
  // Built "against" minor 3, whose table ended before the target entries
  // (set below all the same: core must not read past struct_size).
  api.struct_size = offsetof(anvil_plugin_api, target_count);
  api.abi_minor = 3;
#else
  api.struct_size = ANVIL_PLUGIN_API_STRUCT_SIZE;
  api.abi_minor = ANVIL_PLUGIN_ABI_MINOR;
#endif
  api.abi_major = ANVIL_TEST_PLUGIN_ABI_MAJOR;
  api.name = ANVIL_TEST_PLUGIN_NAME;
  api.version = "0.1.0-test";
  api.error_destroy = &anvil::plugin::ErrorDestroy;
  api.error_code = &anvil::plugin::ErrorCode;
  api.error_message = &anvil::plugin::ErrorMessage;
  api.context_create = ANVIL_GUARDED(context_create, ContextCreate);
  api.context_destroy = ANVIL_GUARDED(context_destroy, ContextDestroy);
  api.device_count = ANVIL_GUARDED(device_count, DeviceCount);
  api.device_properties = ANVIL_GUARDED(device_properties, DeviceProperties);
  api.memory_allocate = ANVIL_GUARDED(memory_allocate, Allocate);
  api.memory_free = ANVIL_GUARDED(memory_free, Free);
  api.memory_copy_from_host = ANVIL_GUARDED(memory_copy_from_host, CopyFromHost);
  api.memory_copy_to_host = ANVIL_GUARDED(memory_copy_to_host, CopyToHost);
  api.executable_compile = ANVIL_GUARDED(executable_compile, Compile);
  api.executable_destroy = ANVIL_GUARDED(executable_destroy, ExecutableDestroy);
  api.executable_execute = ANVIL_GUARDED(executable_execute, Execute);
#ifndef ANVIL_TEST_PLUGIN_OLD_MINOR
  api.executable_serialize = &Serialize;
  api.serialized_free = &SerializedFree;
  api.target_count = ANVIL_GUARDED(target_count, TargetCount);
  api.target_name = ANVIL_GUARDED(target_name, TargetName);
  api.target_compile = ANVIL_GUARDED(target_compile, TargetCompile);
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
// "execute", "execute_async", "execute_throws", "execute_async_throws",
// "null_output" (execute succeeds but leaves output 0 NULL),
// "copy_from_host", "copy_to_host", "allocate_output=K" (the allocation of
// output K of an execution fails), "delay_ms=N"); an empty string disarms all.
__attribute__((visibility("default"))) void anvil_test_plugin_set_faults(const char* spec) {
  std::vector<std::string> words;
  std::string s = spec ? spec : "";
  for (size_t start = 0; start <= s.size();) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    words.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  auto has = [&](const char* word) { return std::find(words.begin(), words.end(), word) != words.end(); };
  auto number = [&](const std::string& key, int otherwise) {
    for (const std::string& w : words) {
      if (w.rfind(key + "=", 0) == 0) return std::atoi(w.c_str() + key.size() + 1);
    }
    return otherwise;
  };
  faults.allocate = has("allocate");
  faults.compile = has("compile");
  faults.execute = has("execute");
  faults.execute_async = has("execute_async");
  faults.execute_throws = has("execute_throws");
  faults.execute_async_throws = has("execute_async_throws");
  faults.null_output = has("null_output");
  faults.copy_from_host = has("copy_from_host");
  faults.copy_to_host = has("copy_to_host");
  faults.allocate_output = number("allocate_output", -1);
  faults.delay_ms = number("delay_ms", 0);
}

// Test hook: how many memory handles the plugin holds now (all clients).
__attribute__((visibility("default"))) int64_t anvil_test_plugin_live_memory(void) { return live_memory.load(); }

}  // extern "C"
