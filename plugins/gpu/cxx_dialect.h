// The kernel generator's C++ dialects: CUDA C++ (compiled by NVRTC) and
// HIP C++ (hiprtc or clang). They differ only in the module's first lines
// and in how f16 converts; GLSL's vocabulary comes from a shared prelude
// (cxx_prelude.inc). A module has one entry, `anvil_kernel`, taking the
// device address of the kernel's table of buffer addresses.
#pragma once

#include <string>

#include "plugins/gpu/kernel_dialect.h"

namespace anvil::gpu {

class CxxDialect : public KernelDialect {
 public:
  enum class Language { kCuda, kHip };
  // `compiler` names the plugin in messages ("the CUDA plugin").
  CxxDialect(Language language, std::string compiler) : language_(language), compiler_(std::move(compiler)) {}

  static constexpr const char* kEntry = "anvil_kernel";

  std::string Compiler() const override { return compiler_; }
  hlo::Status CheckType(hlo::ElementType type) const override;
  bool HasFloat64() const override { return true; }

  std::string GlobalIndex() const override { return "(blockIdx.x * blockDim.x + threadIdx.x)"; }
  std::string LocalIndex() const override { return "threadIdx.x"; }
  std::string GroupIndex() const override { return "blockIdx.x"; }
  std::string GroupCount() const override { return "gridDim.x"; }
  std::string Barrier(const std::string& indent, bool shared_memory) const override;
  std::string SharedArray(const std::string& type, const std::string& name, int64_t count) const override;
  std::string InParameter(const std::string& type, const std::string& name) const override;
  std::string OutParameter(const std::string& type, const std::string& name) const override;
  std::string ElementFunction(const std::string& type, const std::string& name, const std::string& body) const override;
  std::string Library(const std::string& glsl) const override;
  std::string Element(int entry, const std::string& storage, const std::string& index) const override;
  std::string DoubleLiteral(const std::string& decimal) const override { return decimal; }
  std::string Module(const ModuleParts& parts) const override;

 private:
  Language language_;
  std::string compiler_;
};

// GLSL's double literals (`1.5lf`, `2lf`) as C++ ones (`1.5`, `2.0`).
std::string WithoutDoubleSuffixes(const std::string& glsl);

}  // namespace anvil::gpu
