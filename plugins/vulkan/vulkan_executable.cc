#include "plugins/vulkan/vulkan_executable.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "plugins/gpu/program_kernels.h"
#include "plugins/vulkan/parallel_compile.h"
#include "plugins/vulkan/spirv_compiler.h"

namespace anvil::vulkan {

// The device program's kernels as this device's pipelines: each pass's
// SPIR-V compiled ahead (parallel_compile.h), or found in the serialised
// executable being loaded, or compiled from its GLSL now; every distinct
// pass recorded once for Serialize.
class PipelineLoader : public gpu::KernelLoader {
 public:
  PipelineLoader(Executable& exe, const KnownSpirv* loaded)
      : exe_(exe), loaded_(loaded),
        target_{GlslDialect(exe.device_.features), gpu::KernelOptions{exe.device_.workgroup_size, exe.device_.max_loop_iterations}} {}

  const GlslTarget& target() const { return target_; }
  void SetCompiled(CompiledKernels compiled) { compiled_ = std::move(compiled); }

  const gpu::KernelOptions& options() const override { return target_.options; }

  hlo::StatusOr<gpu::KernelSource> Emit(const hlo::KernelSpec& spec) override {
    // Emitted ahead with the program's other kernels (taken once: a
    // computation two loops share is built twice), or now.
    if (auto ahead = compiled_.shaders.find(&spec); ahead != compiled_.shaders.end()) {
      gpu::KernelSource source = std::move(ahead->second);
      compiled_.shaders.erase(ahead);
      return source;
    }
    return target_.Emit(spec);
  }

  hlo::StatusOr<const void*> Load(const gpu::KernelPass& pass, const hlo::KernelSpec& spec) override {
    const std::string key = GlslKey(pass.text);
    const Pipeline* pipeline = exe_.device_.FindPipeline(pass.text);
    if (!pipeline) {
      ANVIL_ASSIGN_OR_RETURN(std::vector<uint32_t> words, KernelSpirv(key, pass.text, spec.root->name));
      std::string why;
      if (!exe_.device_.AddPipeline(pass.text, words, &pipeline, why)) return hlo::Internal(why);
    }
    if (recorded_.insert(key).second) exe_.spirv_.emplace_back(key, pipeline->words);
    return static_cast<const void*>(pipeline);
  }

 private:
  hlo::StatusOr<std::vector<uint32_t>> KernelSpirv(const std::string& key, const std::string& glsl,
                                                   const std::string& name) {
    if (auto found = compiled_.spirv.find(key); found != compiled_.spirv.end()) return found->second;
    if (loaded_) {
      auto found = loaded_->find(key);
      if (found != loaded_->end() && ValidateSpirv(found->second).ok()) return found->second;
    }
    return CompileGlsl(glsl, name);
  }

  Executable& exe_;
  const KnownSpirv* loaded_;
  GlslTarget target_;
  CompiledKernels compiled_;
  std::unordered_set<std::string> recorded_;  // keys already in exe_.spirv_
};

hlo::StatusOr<std::unique_ptr<Executable>> Executable::Compile(Device& device, size_t device_index,
                                                               std::string_view hlo_text,
                                                               const anvil_plugin_host_executor& host,
                                                               const KnownSpirv* known) {
  ANVIL_ASSIGN_OR_RETURN(gpu::PlannedProgram planned, gpu::PlanProgram(hlo_text));
  std::unique_ptr<Executable> exe(new Executable(device, device_index));
  PipelineLoader loader(*exe, known);
  // A serialised executable brings every kernel: nothing to compile ahead
  // (one it lacks is compiled when the builder meets it).
  if (!known) {
    ANVIL_ASSIGN_OR_RETURN(CompiledKernels compiled, CompileKernels(planned.plan, loader.target(), device, host));
    loader.SetCompiled(std::move(compiled));
  }
  const uint64_t chunk_limit = std::max<uint64_t>(device.max_allocation, 1 << 20);
  ANVIL_ASSIGN_OR_RETURN(exe->program_, gpu::BuildDeviceProgram(*planned.module, planned.plan, loader, chunk_limit,
                                                                "the Vulkan plugin"));
  const std::vector<uint8_t>& constants = exe->program_.constant_bytes;
  std::string why;
  if (!device.CreateBuffer(constants.size(), &exe->constants_, why)) return hlo::ResourceExhausted(why);
  if (!constants.empty()) std::memcpy(exe->constants_.mapped, constants.data(), constants.size());
  exe->canonical_text_ = std::string(hlo_text);
  const std::string validation = Validation().Take();
  if (!validation.empty()) return hlo::Internal("the Vulkan validation layer reports: " + validation);
  return exe;
}

Executable::~Executable() { device_.DestroyBuffer(constants_); }

std::string Executable::Serialize() const { return WriteSerialized(canonical_text_, spirv_); }

}  // namespace anvil::vulkan
