#include "plugins/rocm/rocm_kernels.h"

#include <algorithm>
#include <exception>
#include <thread>

#include "plugins/gpu/cxx_dialect.h"
#include "plugins/gpu/host_jobs.h"
#include "plugins/gpu/program_kernels.h"

namespace anvil::rocm {
namespace {

constexpr std::string_view kInclude = "#include <hip/hip_runtime.h>\n";
constexpr std::string_view kHostDeviceBegin = "#pragma clang force_cuda_host_device begin\n";
constexpr std::string_view kHostDeviceEnd = "#pragma clang force_cuda_host_device end\n";

std::string Entry(size_t k) { return std::string(gpu::CxxDialect::kEntry) + "_" + std::to_string(k); }

}  // namespace

size_t SharedPrefix(const std::vector<const std::string*>& texts, size_t limit) {
  // The longest common prefix of whole lines that ends between
  // declarations: at brace depth 0, after a line ending in ';' or '}' or a
  // preprocessor line (not one continued by '\').
  const std::string& a = *texts[0];
  size_t cut = 0;
  int depth = 0;
  size_t line = 0;
  for (size_t i = 0; i < std::min(a.size(), limit); ++i) {
    for (const std::string* t : texts)
      if (i >= t->size() || (*t)[i] != a[i]) return cut;
    if (a[i] == '{') ++depth;
    if (a[i] == '}') --depth;
    if (a[i] != '\n') continue;
    std::string_view text = std::string_view(a).substr(line, i - line);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
    line = i + 1;
    if (depth == 0 && !text.empty() && text.back() != '\\' &&
        (text.back() == ';' || text.back() == '}' || text.front() == '#'))
      cut = i + 1;
  }
  return cut;
}

hlo::StatusOr<std::string> BatchModules(const std::vector<const std::string*>& texts, size_t first) {
  const std::string signature = std::string(" ") + gpu::CxxDialect::kEntry + "(const uint64_t* table)";
  size_t limit = std::string::npos;  // no sharing past an entry
  for (const std::string* text : texts) {
    size_t entry = text->find(signature);
    if (!text->starts_with(kInclude) || entry == std::string::npos)
      return hlo::Internal("the HIP dialect's module lacks its header or entry; cannot batch it");
    limit = std::min(limit, entry);
  }
  // What the modules share (HIP's header, the prelude, the f16 type) once at
  // file scope, where the prelude's overloads must be; the rest of each
  // module in a namespace of its own. An extern "C" entry keeps its
  // unmangled name in a namespace, so each gets its own.
  const size_t shared = texts.size() > 1 ? SharedPrefix(texts, limit) : kInclude.size();
  std::string out = texts[0]->substr(0, shared);
  // The host-device region the prelude opens closes in each module's rest:
  // closed at file scope and opened again in each namespace.
  const bool open = out.find(kHostDeviceBegin) != std::string::npos && out.find(kHostDeviceEnd) == std::string::npos;
  if (open) out += kHostDeviceEnd;
  for (size_t k = 0; k < texts.size(); ++k) {
    std::string text = (open ? std::string(kHostDeviceBegin) : "") + texts[k]->substr(shared);
    size_t entry = text.find(signature);
    text.replace(entry + 1, signature.size() - 1, Entry(first + k) + "(const uint64_t* table)");
    out += "namespace anvil_k" + std::to_string(first + k) + " {\n" + text + "}\n";
  }
  return out;
}

const gpu::CxxDialect& RocmDialect() {
  static const gpu::CxxDialect dialect(gpu::CxxDialect::Language::kHip, "the ROCm plugin");
  return dialect;
}

const gpu::KernelOptions& RocmKernelOptions() {
  // 256 work-items a workgroup: four 64-wide (gfx9) or eight 32-wide (gfx11) waves.
  static const gpu::KernelOptions options{256};
  return options;
}

hlo::StatusOr<CompiledProgram> CompileProgramKernels(std::string_view canonical_text, const std::string& target,
                                                     const HipCompiler& compiler,
                                                     const anvil_plugin_host_executor& host, size_t batches) {
  ANVIL_ASSIGN_OR_RETURN(gpu::PlannedProgram program, gpu::PlanProgram(canonical_text));
  ANVIL_ASSIGN_OR_RETURN(std::vector<gpu::KernelModule> modules,
                         gpu::EmitProgramKernels(program.plan, RocmDialect(), RocmKernelOptions()));
  return CompileKernelModules(std::move(modules), target, compiler, host, batches);
}

hlo::StatusOr<CompiledProgram> CompileKernelModules(std::vector<gpu::KernelModule> modules, const std::string& target,
                                                    const HipCompiler& compiler,
                                                    const anvil_plugin_host_executor& host, size_t batches) {
  CompiledProgram result;
  const size_t n = modules.size();
  if (n == 0) return result;
  // clang's fixed cost (start-up, HIP's header, linking the device
  // libraries) is ~0.75 s a translation unit and a kernel adds ~0.03 s to
  // one (gfx90a, this project's 2-core machine): one unit a program, split
  // across host cores only where a program has dozens of kernels.
  if (batches == 0) batches = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), (n + 31) / 32);
  batches = std::min(batches, n);
  result.kernels.resize(n);
  for (size_t k = 0; k < n; ++k) {
    // Kernels k*batches/n.. go to batch b: contiguous, sizes differing by at most one.
    result.kernels[k] = {modules[k].name, n == batches ? gpu::CxxDialect::kEntry : Entry(k), std::move(modules[k].text),
                         k * batches / n};
  }
  // Each batch's code objects: one, or one a kernel where clang rejected the
  // batch but not its kernels alone (batching is only ever a speed-up).
  std::vector<std::vector<std::vector<char>>> objects(batches);
  std::vector<hlo::Status> failures(batches);
  // Where a kernel compiled alone sits among its batch's objects: written by
  // its batch's job only, which finds its kernels by k * batches / n (never
  // by a field another job may be writing).
  std::vector<size_t> within(n, 0);
  gpu::RunOnHostThreads(host, batches, [&](size_t b) {
    // No exception may leave work on core's threads.
    try {
      std::vector<const std::string*> texts;
      size_t first = n;
      for (size_t k = 0; k < n; ++k) {
        if (k * batches / n != b) continue;
        first = std::min(first, k);
        texts.push_back(&result.kernels[k].source);
      }
      hlo::StatusOr<std::string> source = n == batches ? *texts[0] : BatchModules(texts, first);
      auto code = source.ok() ? compiler.Compile(*source, "kernels.hip", target)
                              : hlo::StatusOr<std::vector<char>>(source.status());
      if (code.ok()) {
        objects[b].push_back(std::move(code).value());
        return;
      }
      if (n == batches) {
        failures[b] = hlo::Internal("clang rejects the ROCm plugin's kernel " + result.kernels[first].name + " for " +
                                    target + ": " + code.status().message());
        return;
      }
      for (size_t k = first; k < first + texts.size(); ++k) {
        auto alone = compiler.Compile(result.kernels[k].source, "kernel.hip", target);
        if (!alone.ok()) {
          failures[b] = hlo::Internal("clang rejects the ROCm plugin's kernel " + result.kernels[k].name + " for " +
                                      target + ": " + alone.status().message());
          return;
        }
        result.kernels[k].entry = gpu::CxxDialect::kEntry;
        within[k] = objects[b].size();
        objects[b].push_back(std::move(alone).value());
      }
    } catch (const std::exception& e) {
      failures[b] = hlo::Internal("compiling kernels for " + target + ": " + e.what());
    }
  });
  for (const hlo::Status& failure : failures) ANVIL_RETURN_IF_ERROR(failure);
  std::vector<size_t> offset(batches);
  for (size_t b = 0; b < batches; ++b) {
    offset[b] = result.code_objects.size();
    for (auto& code : objects[b]) result.code_objects.push_back(std::move(code));
  }
  for (size_t k = 0; k < n; ++k) {
    size_t b = k * batches / n;
    result.kernels[k].code_object = offset[b] + (objects[b].size() == 1 ? 0 : within[k]);
  }
  return result;
}

}  // namespace anvil::rocm
