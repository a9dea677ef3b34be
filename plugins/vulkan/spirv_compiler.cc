#include "plugins/vulkan/spirv_compiler.h"

#include <shaderc/shaderc.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

namespace anvil::vulkan {

hlo::Status ValidateSpirv(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& at, const char* m) {
    messages += "word " + std::to_string(at.index) + ": " + m + "\n";
  });
  spvtools::ValidatorOptions options;
  options.SetScalarBlockLayout(true);
  if (!tools.Validate(words.data(), words.size(), options)) {
    return hlo::Internal("a generated SPIR-V module fails validation: " + messages);
  }
  return hlo::OkStatus();
}

namespace {

// One compiler for the whole process. glslang keeps its built-in symbol
// tables only while some compiler lives, so a compiler per kernel rebuilt
// them for every kernel: about 70 ms each, ten times the kernel's own
// compile (MobileNet's step: 27 s on one thread, against 3 s). shaderc lets
// threads compile on one compiler at once.
shaderc_compiler_t SharedCompiler() {
  static const std::unique_ptr<shaderc_compiler, void (*)(shaderc_compiler_t)> compiler(shaderc_compiler_initialize(),
                                                                                       shaderc_compiler_release);
  return compiler.get();
}

}  // namespace

hlo::StatusOr<std::vector<uint32_t>> CompileGlsl(const std::string& glsl, const std::string& name,
                                                 const SpirvOptions& options) {
  shaderc_compiler_t compiler = SharedCompiler();
  std::unique_ptr<shaderc_compile_options, void (*)(shaderc_compile_options_t)> opts(shaderc_compile_options_initialize(),
                                                                                     shaderc_compile_options_release);
  if (!compiler || !opts) return hlo::Internal("shaderc could not start");
  shaderc_compile_options_set_target_env(opts.get(), shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  shaderc_compile_options_set_optimization_level(opts.get(), shaderc_optimization_level_zero);
  std::unique_ptr<shaderc_compilation_result, void (*)(shaderc_compilation_result_t)> result(
      shaderc_compile_into_spv(compiler, glsl.data(), glsl.size(), shaderc_compute_shader, name.c_str(), "main",
                               opts.get()),
      shaderc_result_release);
  if (!result || shaderc_result_get_compilation_status(result.get()) != shaderc_compilation_status_success) {
    return hlo::Internal("the GLSL of kernel " + name + " does not compile (a bug in the Vulkan plugin): " +
                         (result ? shaderc_result_get_error_message(result.get()) : "no result") + "\n" + glsl);
  }
  const auto* bytes = reinterpret_cast<const uint32_t*>(shaderc_result_get_bytes(result.get()));
  std::vector<uint32_t> words(bytes, bytes + shaderc_result_get_length(result.get()) / 4);
  if (options.optimize) {
    spvtools::Optimizer optimizer(SPV_ENV_VULKAN_1_2);
    optimizer.RegisterPerformancePasses();
    std::vector<uint32_t> optimized;
    spvtools::ValidatorOptions validator;
    validator.SetScalarBlockLayout(true);
    spvtools::OptimizerOptions run;
    run.set_validator_options(validator);
    if (optimizer.Run(words.data(), words.size(), &optimized, run)) words = std::move(optimized);
  }
  if (auto s = ValidateSpirv(words); !s.ok()) return hlo::Internal("kernel " + name + ": " + s.message() + "\n" + glsl);
  // ANVIL_VULKAN_DUMP_SPIRV=DIR keeps every module (and its GLSL) there, so
  // that tools such as spirv-val and spirv-dis can look at them.
  if (const char* dir = std::getenv("ANVIL_VULKAN_DUMP_SPIRV"); dir && *dir) {
    char id[32];
    std::snprintf(id, sizeof id, "%016zx", std::hash<std::string>{}(glsl));
    const std::string base = std::string(dir) + "/" + name + "-" + id;
    std::ofstream(base + ".spv", std::ios::binary).write(reinterpret_cast<const char*>(words.data()),
                                                          static_cast<std::streamsize>(words.size() * 4));
    std::ofstream(base + ".comp") << glsl;
  }
  return words;
}

}  // namespace anvil::vulkan
