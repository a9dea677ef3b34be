// The CPU plugin's entry point: host memory, and programs compiled into a
// Plan of typed kernels that run on core's host threads.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "hlo/canonicalize.h"
#include "hlo/hlo_parser.h"
#include "hlo/topk_rewriter.h"
#include "hlo/operand_transposes.h"
#include "hlo/transpose_of_dot.h"
#include "plugins/common/plugin_support.h"
#include "plugins/cpu/compile_options.h"
#include "plugins/cpu/float_mode.h"
#include "plugins/cpu/plan.h"
#include "plugins/cpu/serialized_executable.h"

struct anvil_plugin_memory {
  void* data;
  size_t bytes;
  bool borrowed = false;  // the caller's host memory, used in place (memory_wrap_host)
};

// Freed blocks are kept for reuse, by size: a fresh block costs a page
// fault per 4 KiB on first touch, which would dominate a memory-bound run.
class BlockCache {
 public:
  static constexpr size_t kMaxCachedBytes = size_t{1} << 30;
  void* Take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(bytes);
    if (it == blocks_.end()) return nullptr;
    void* p = it->second;
    blocks_.erase(it);
    cached_ -= bytes;
    return p;
  }
  bool Keep(void* p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ + bytes > kMaxCachedBytes) return false;
    blocks_.emplace(bytes, p);
    cached_ += bytes;
    return true;
  }
  ~BlockCache() {
    for (auto& [bytes, p] : blocks_) std::free(p);
  }

 private:
  std::mutex mu_;
  std::multimap<size_t, void*> blocks_;
  size_t cached_ = 0;
};

struct anvil_plugin_context {
  anvil_plugin_host_executor executor;
  anvil::cpu::Parallel parallel;
  BlockCache cache;
};

namespace {

using anvil::plugin::AsyncCompletion;
using anvil::plugin::BaseApi;
using anvil::plugin::Error;
using anvil::plugin::FromStatus;
using anvil::plugin::HostSpan;
using anvil::plugin::MonotonicNs;
using anvil::plugin::kInternal;
using anvil::plugin::kInvalidArgument;
using anvil::plugin::kResourceExhausted;
using anvil::cpu::Plan;

struct Executable {
  // The module stays: kernels that fall back to the evaluator read it.
  std::unique_ptr<anvil::hlo::Module> module;
  // oneDNN's choices for its convolutions, serialised with the module.
  std::unique_ptr<anvil::cpu::ConvLayoutBook> layouts;
  std::unique_ptr<Plan> plan;
  // The compile options it was built with (compile_options.h), serialised
  // with the module.
  anvil::cpu::CompileOptions options;
  // The scratch block of the last execution, kept for the next one: a large
  // plan's scratch (GiBs for a training step) would otherwise be faulted in
  // page by page on every run. Concurrent executions take fresh blocks.
  std::mutex scratch_mu;
  void* idle_scratch = nullptr;
  ~Executable() { std::free(idle_scratch); }
  void* TakeScratch() {
    std::lock_guard<std::mutex> lock(scratch_mu);
    return std::exchange(idle_scratch, nullptr);
  }
  // Keeps `block` for the next execution; false if one is kept already.
  bool KeepScratch(void* block) {
    std::lock_guard<std::mutex> lock(scratch_mu);
    if (idle_scratch) return false;
    idle_scratch = block;
    return true;
  }
};

size_t Rounded(size_t bytes) { return std::max<size_t>(64, (bytes + 63) / 64 * 64); }

void* AlignedAlloc(size_t bytes) { return std::aligned_alloc(64, Rounded(bytes)); }

anvil_plugin_error* ContextCreate(const anvil_plugin_host_executor* executor, anvil_plugin_context** out) {
  if (!executor || executor->struct_size < ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_host_executor, enqueue)) {
    return Error(kInvalidArgument, "the CPU plugin needs core's host executor");
  }
  // oneDNN's engine and primitive cache and its OpenMP threads are made once
  // per process, so the plugin is never unmapped under them. (Unloaded and
  // loaded again by racing clients, it also reused its statics' addresses,
  // which ThreadSanitizer read as races: it does not see ld.so's lock.
  // CompileCacheTest.ClientsCompilingOneProgramAtOnceAllGetItRight failed
  // about 1 run in 15 under load; 0 in 40 since.)
  anvil::plugin::StayLoaded(reinterpret_cast<const void*>(&ContextCreate));
  auto* context = new anvil_plugin_context{anvil::plugin::CopyHostExecutor(*executor), anvil::cpu::Parallel(nullptr), {}};
  context->parallel = anvil::cpu::Parallel(&context->executor);
  *out = context;
  return nullptr;
}

void ContextDestroy(anvil_plugin_context* context) { delete context; }

anvil_plugin_error* DeviceCount(anvil_plugin_context*, size_t* out) {
  *out = 1;
  return nullptr;
}

// Physical memory, or 0 if the system does not say.
uint64_t HostMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

anvil_plugin_error* DeviceProperties(anvil_plugin_context*, size_t device, anvil_plugin_device_properties* out) {
  if (device != 0) return Error(kInvalidArgument, "the CPU plugin has one device");
  out->kind = "cpu";
  out->name = "host";
  out->memory_bytes = HostMemoryBytes();
  return nullptr;
}

anvil_plugin_error* Allocate(anvil_plugin_context* context, size_t, size_t bytes, anvil_plugin_memory** out) {
  void* data = context->cache.Take(Rounded(bytes));
  if (!data) data = AlignedAlloc(bytes);
  if (!data) return Error(kResourceExhausted, "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  *out = new anvil_plugin_memory{data, bytes};
  return nullptr;
}

void Free(anvil_plugin_context* context, anvil_plugin_memory* memory) {
  if (!memory) return;
  if (!memory->borrowed && !context->cache.Keep(memory->data, Rounded(memory->bytes))) std::free(memory->data);
  delete memory;
}

// Host memory is this device's memory: aligned data is used where it lies
// (kernels assume 64-byte alignment, so anything else is copied by core).
anvil_plugin_error* WrapHost(anvil_plugin_context*, size_t, const void* data, size_t bytes, anvil_plugin_memory** out) {
  *out = nullptr;
  if (reinterpret_cast<uintptr_t>(data) % 64 != 0) return nullptr;
  *out = new anvil_plugin_memory{const_cast<void*>(data), bytes, true};
  return nullptr;
}

anvil_plugin_error* CopyFromHost(anvil_plugin_context* context, anvil_plugin_memory* memory, const void* src,
                                 size_t bytes, anvil_plugin_done done, void* user) {
  if (bytes != memory->bytes) return Error(kInvalidArgument, "copy size differs from the buffer's");
  AsyncCompletion(context->executor, "memory_copy_from_host", done, user, [=]() -> anvil_plugin_error* {
    if (bytes) std::memcpy(memory->data, src, bytes);
    return nullptr;
  });
  return nullptr;
}

anvil_plugin_error* CopyToHost(anvil_plugin_context* context, anvil_plugin_memory* memory, void* dst, size_t bytes,
                               anvil_plugin_done done, void* user) {
  if (bytes != memory->bytes) return Error(kInvalidArgument, "copy size differs from the buffer's");
  AsyncCompletion(context->executor, "memory_copy_to_host", done, user, [=]() -> anvil_plugin_error* {
    if (bytes) std::memcpy(dst, memory->data, bytes);
    return nullptr;
  });
  return nullptr;
}

// Plans a parsed module (from the canonical text or from serialised bytes).
// `layouts`: what a compile recorded (a load from the compile cache), or empty.
anvil_plugin_error* CompileModule(anvil_plugin_context* context, std::unique_ptr<anvil::hlo::Module> module,
                                  std::unique_ptr<anvil::cpu::ConvLayoutBook> layouts,
                                  const anvil::cpu::CompileOptions& options, anvil_plugin_executable** out) {
  auto exe = std::make_unique<Executable>();
  exe->module = std::move(module);
  exe->layouts = std::move(layouts);
  exe->options = options;
  HostSpan span(context->executor, "cpu: plan");
  // The plan's phases as spans of their own inside it.
  class TracedPhases final : public anvil::cpu::PlanPhases {
   public:
    explicit TracedPhases(const anvil_plugin_host_executor& host) : host_(host) {}
    void Begin(const char* phase) override {
      phase_ = phase;
      begin_ = host_.trace_span ? MonotonicNs() : 0;
    }
    void End() override {
      if (host_.trace_span) host_.trace_span(host_.tracer, phase_, nullptr, begin_, MonotonicNs());
    }

   private:
    const anvil_plugin_host_executor& host_;
    const char* phase_ = "";
    uint64_t begin_ = 0;
  } phases(context->executor);
  auto plan = anvil::cpu::BuildPlan(*exe->module, exe->layouts.get(), &context->parallel,
                                    context->executor.trace_span ? &phases : nullptr);
  if (!plan.ok()) return FromStatus(plan.status());
  exe->plan = std::move(plan).value();
  // A plan whose live buffers cannot fit in this host is refused now, before
  // a caller uploads inputs for it, rather than at its first execution.
  const uint64_t host = HostMemoryBytes();
  if (host > 0 && static_cast<uint64_t>(exe->plan->scratch_bytes) > host) {
    char message[160];
    std::snprintf(message, sizeof message,
                  "cannot allocate the %.1f GiB of scratch this program keeps live: the host has %.1f GiB",
                  static_cast<double>(exe->plan->scratch_bytes) / (1 << 30), static_cast<double>(host) / (1 << 30));
    return Error(kResourceExhausted, message);
  }
  *out = reinterpret_cast<anvil_plugin_executable*>(exe.release());
  return nullptr;
}

anvil_plugin_error* Compile(anvil_plugin_context* context, size_t, const char* text, size_t size, const char* options,
                            anvil_plugin_executable** out) {
  auto parsed_options = anvil::cpu::ParseCompileOptions(options ? options : "");
  if (!parsed_options.ok()) return FromStatus(parsed_options.status());
  auto module = [&] {
    HostSpan span(context->executor, "cpu: parse canonical text");
    return anvil::hlo::ParseHloModule(std::string_view(text, size), {"canonical", 1});
  }();
  if (!module.ok()) return FromStatus(module.status());
  // A sort that only feeds the first k of each row (JAX's lax.top_k) runs
  // as a topk, a transposed matrix product as the product of its operands
  // swapped, a slice of a transpose before it, and a product of a
  // transposed operand reads the operand as it is stored (sgemm's
  // transposition flags); the rewritten module is also what the compile
  // cache keeps.
  const int topks = anvil::hlo::RewriteSortsAsTopK(**module);
  const int dots = anvil::hlo::FoldTransposesOfDots(**module);
  const int slices = anvil::hlo::MoveSlicesBeforeTransposes(**module);
  const int operands = anvil::hlo::FoldTransposedDotOperands(**module);
  if (topks + dots + slices + operands > 0) anvil::hlo::RemoveDeadCode(**module);
  return CompileModule(context, std::move(module).value(), std::make_unique<anvil::cpu::ConvLayoutBook>(),
                       *parsed_options, out);
}

void ExecutableDestroy(anvil_plugin_context*, anvil_plugin_executable* e) { delete reinterpret_cast<Executable*>(e); }

anvil_plugin_error* Execute(anvil_plugin_context* context, anvil_plugin_executable* executable,
                            anvil_plugin_memory* const* inputs, const uint8_t* donated, size_t num_inputs,
                            anvil_plugin_memory** outputs, size_t num_outputs, anvil_plugin_done done, void* user) {
  auto* exe = reinterpret_cast<Executable*>(executable);
  const Plan& plan = *exe->plan;
  // Frees the donated inputs and the outputs made so far on every early return.
  anvil::plugin::ExecutionMemory memory(context, &Free, inputs, donated, num_inputs, outputs, num_outputs);
  if (num_outputs != plan.outputs.size() || num_inputs != plan.parameter_shapes.size()) {
    return Error(kInvalidArgument, "the executable takes " + std::to_string(plan.parameter_shapes.size()) +
                                       " inputs and gives " + std::to_string(plan.outputs.size()) + " outputs");
  }
  if (anvil_plugin_error* e = memory.AllocateOutputs([&](size_t k, anvil_plugin_memory** out) {
        return Allocate(context, 0, static_cast<size_t>(plan.output_shapes[k].ByteSize()), out);
      })) {
    return e;
  }
  anvil::cpu::Frame frame;
  for (size_t k = 0; k < num_inputs; ++k) frame.parameters.push_back(inputs[k]->data);
  for (size_t k = 0; k < num_outputs; ++k) frame.outputs.push_back(outputs[k]->data);
  frame.constants = &plan.constants;
  frame.parallel = &context->parallel;
  // The work takes the executable, never a copy of its plan (`plan` is a
  // reference: [=] would copy the whole Plan into every execution).
  auto run = [exe, context, frame, donations = memory.Start()]() mutable -> anvil_plugin_error* {
    const Plan& plan = *exe->plan;
    // Every execution sets its mode, so that one thread's mode (a caller
    // that runs with denormals flushed) never reaches another's results.
    anvil::cpu::ScopedFloatMode float_mode(exe->options.flush_denormals ? anvil::cpu::kFlushDenormals : 0);
    anvil_plugin_error* error = nullptr;
    const size_t scratch_bytes = Rounded(static_cast<size_t>(plan.scratch_bytes));
    void* scratch = plan.scratch_bytes ? exe->TakeScratch() : nullptr;
    if (plan.scratch_bytes && !scratch) scratch = context->cache.Take(scratch_bytes);
    if (plan.scratch_bytes && !scratch) scratch = AlignedAlloc(scratch_bytes);
    if (plan.scratch_bytes && !scratch) {
      error = Error(kResourceExhausted, "cannot allocate " + std::to_string(plan.scratch_bytes) + " bytes of scratch");
    } else {
      frame.scratch = static_cast<char*>(scratch);
      // ANVIL_CPU_PROFILE=1 prints where an execution's time went, by op.
      static const bool profile = std::getenv("ANVIL_CPU_PROFILE") != nullptr;
      std::map<std::string, double> seconds;
      std::vector<std::pair<double, const std::string*>> slowest;  // single steps
      // Each step is a span in the client's trace when it traces.
      const auto trace = context->executor.trace_span;
      for (const auto& step : plan.steps) {
        const auto start = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
        const uint64_t trace_start = trace ? MonotonicNs() : 0;
        try {
          step.run(frame);
        } catch (const std::exception& e) {
          error = Error(kInternal, step.what + ": " + e.what());
          break;
        }
        if (trace) trace(context->executor.tracer, step.kind.c_str(), step.what.c_str(), trace_start, MonotonicNs());
        if (profile) {
          const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          seconds[step.kind] += t;
          slowest.emplace_back(t, &step.what);
        }
      }
      if (profile) {
        // Milliseconds to the microsecond, and each line's share of the
        // steps' total: most steps of a fused program take well under 1 ms.
        std::vector<std::pair<double, std::string>> by_time;
        double total = 0;
        for (const auto& [op, t] : seconds) {
          by_time.emplace_back(t, op);
          total += t;
        }
        const double share = total > 0 ? 100.0 / total : 0.0;
        std::sort(by_time.rbegin(), by_time.rend());
        std::fprintf(stderr, "anvil cpu profile (%d typed steps, %d reference steps; %.3f ms in steps):\n",
                     plan.typed_steps, plan.reference_steps, total * 1e3);
        for (const auto& [t, op] : by_time) std::fprintf(stderr, "  %10.3f ms %5.1f%%  %s\n", t * 1e3, t * share, op.c_str());
        std::sort(slowest.begin(), slowest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        std::fprintf(stderr, "slowest steps:\n");
        for (size_t k = 0; k < slowest.size() && k < 20; ++k) {
          std::fprintf(stderr, "  %10.3f ms %5.1f%%  %.160s\n", slowest[k].first * 1e3, slowest[k].first * share,
                       slowest[k].second->c_str());
        }
      }
    }
    if (scratch && !exe->KeepScratch(scratch) && !context->cache.Keep(scratch, scratch_bytes)) std::free(scratch);
    donations.FreeAll();  // the plugin reuses no donated memory (yet): it is done with them
    return error;
  };
  // A tiny plan runs here and now; `done` is called before this returns.
  if (plan.runs_inline) {
    anvil::plugin::Complete("executable_execute", run, done, user);
  } else {
    AsyncCompletion(context->executor, "executable_execute", done, user, std::move(run));
  }
  return nullptr;
}

// What is kept is the module in its binary form and oneDNN's convolution
// layouts (serialized_executable.h): loading skips the text parse and every
// question to oneDNN, and the plan is built again from them.
anvil_plugin_error* Serialize(anvil_plugin_context*, anvil_plugin_executable* executable, void** out, size_t* size) {
  const auto& exe = *reinterpret_cast<Executable*>(executable);
  anvil::plugin::GiveSerialized(anvil::cpu::WriteExecutable(*exe.module, *exe.layouts, exe.options), out, size);
  return nullptr;
}

anvil_plugin_error* Deserialize(anvil_plugin_context* context, size_t, const void* bytes, size_t size,
                                anvil_plugin_executable** out) {
  auto read = [&] {
    HostSpan span(context->executor, "cpu: read serialised module");
    return anvil::cpu::ReadExecutable(std::string_view(static_cast<const char*>(bytes), size));
  }();
  if (!read.ok()) return FromStatus(read.status());
  return CompileModule(context, std::move(read->module), std::move(read->layouts), read->options, out);
}

anvil_plugin_api MakeApi() {
  anvil_plugin_api api = BaseApi("cpu", "0.1.0");
  api.context_create = ANVIL_GUARDED(context_create, ContextCreate);
  api.context_destroy = ANVIL_GUARDED(context_destroy, ContextDestroy);
  api.device_count = ANVIL_GUARDED(device_count, DeviceCount);
  api.device_properties = ANVIL_GUARDED(device_properties, DeviceProperties);
  api.memory_allocate = ANVIL_GUARDED(memory_allocate, Allocate);
  api.memory_free = ANVIL_GUARDED(memory_free, Free);
  api.memory_wrap_host = ANVIL_GUARDED(memory_wrap_host, WrapHost);
  api.memory_copy_from_host = ANVIL_GUARDED(memory_copy_from_host, CopyFromHost);
  api.memory_copy_to_host = ANVIL_GUARDED(memory_copy_to_host, CopyToHost);
  api.executable_compile = ANVIL_GUARDED(executable_compile, Compile);
  api.executable_destroy = ANVIL_GUARDED(executable_destroy, ExecutableDestroy);
  api.executable_execute = ANVIL_GUARDED(executable_execute, Execute);
  api.executable_serialize = ANVIL_GUARDED(executable_serialize, Serialize);
  api.serialized_free = &anvil::plugin::FreeSerialized;
  api.executable_deserialize = ANVIL_GUARDED(executable_deserialize, Deserialize);
  return api;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const anvil_plugin_api* anvil_plugin_get_api(void) {
  static const anvil_plugin_api api = MakeApi();
  return &api;
}
