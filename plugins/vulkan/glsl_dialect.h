// The GPU kernel generator's GLSL dialect: compute shaders for Vulkan 1.2
// (GL_EXT_buffer_reference for device addresses, explicit arithmetic types
// for 8-, 16- and 64-bit values), compiled to SPIR-V by shaderc.
#pragma once

#include <string>

#include "plugins/gpu/kernel_dialect.h"
#include "plugins/gpu/kernel_emitter.h"

namespace anvil::vulkan {

// The optional shader capabilities a device has (Vulkan 1.2 feature bits).
struct ShaderFeatures {
  bool float64 = false, int64 = false, int16 = false, float16 = false, int8 = false;
  bool storage8 = false, storage16 = false;
};

class GlslDialect : public gpu::KernelDialect {
 public:
  explicit GlslDialect(const ShaderFeatures& features) : features_(features) {}

  std::string Compiler() const override { return "the Vulkan plugin"; }
  // UNIMPLEMENTED names the Vulkan feature the device lacks.
  hlo::Status CheckType(hlo::ElementType type) const override;
  bool HasFloat64() const override { return features_.float64; }

  std::string GlobalIndex() const override { return "gl_GlobalInvocationID.x"; }
  std::string LocalIndex() const override { return "gl_LocalInvocationID.x"; }
  std::string GroupIndex() const override { return "gl_WorkGroupID.x"; }
  std::string GroupCount() const override { return "gl_NumWorkGroups.x"; }
  std::string Barrier(const std::string& indent, bool shared_memory) const override;
  std::string SharedArray(const std::string& type, const std::string& name, int64_t count) const override;
  std::string InParameter(const std::string& type, const std::string& name) const override;
  std::string OutParameter(const std::string& type, const std::string& name) const override;
  std::string Element(int entry, const std::string& storage, const std::string& index) const override;
  std::string DoubleLiteral(const std::string& decimal) const override { return decimal + "lf"; }
  std::string ElementFunction(const std::string& type, const std::string& name, const std::string& body) const override;
  std::string Library(const std::string& glsl) const override { return glsl; }
  std::string Module(const gpu::ModuleParts& parts) const override;

 private:
  ShaderFeatures features_;
};

// How kernels are generated for one Vulkan device.
struct GlslTarget {
  GlslDialect dialect;
  gpu::KernelOptions options;
  hlo::StatusOr<gpu::KernelSource> Emit(const hlo::KernelSpec& kernel) const {
    return gpu::EmitKernel(kernel, dialect, options);
  }
};

}  // namespace anvil::vulkan
