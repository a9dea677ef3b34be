#include "plugins/vulkan/glsl_dialect.h"

#include <set>

#include "plugins/gpu/element_types.h"

namespace anvil::vulkan {

using hlo::ElementType;

hlo::Status GlslDialect::CheckType(ElementType t) const {
  const ShaderFeatures& f = features_;
  auto refuse = [&](const char* feature) {
    return hlo::Unimplemented(std::string(hlo::HloName(t)) + " needs the Vulkan feature " + feature +
                              ", which this device lacks");
  };
  switch (t) {
    case ElementType::kPred: case ElementType::kS2: case ElementType::kS4: case ElementType::kS8:
    case ElementType::kU2: case ElementType::kU4: case ElementType::kU8:
      return f.storage8 && f.int8 ? hlo::OkStatus() : refuse(f.storage8 ? "shaderInt8" : "storageBuffer8BitAccess");
    case ElementType::kS16: case ElementType::kU16: case ElementType::kBF16:
      return f.storage16 && f.int16 ? hlo::OkStatus() : refuse(f.storage16 ? "shaderInt16" : "storageBuffer16BitAccess");
    case ElementType::kF16:
      return f.storage16 && f.float16 ? hlo::OkStatus() : refuse(f.storage16 ? "shaderFloat16" : "storageBuffer16BitAccess");
    case ElementType::kS32: case ElementType::kU32: case ElementType::kF32: case ElementType::kC64:
      return hlo::OkStatus();
    case ElementType::kS64: case ElementType::kU64:
      return f.int64 ? hlo::OkStatus() : refuse("shaderInt64");
    case ElementType::kF64: case ElementType::kC128:
      return f.float64 ? hlo::OkStatus() : refuse("shaderFloat64");
    default:
      // The narrow floats are stored a byte an element.
      if (gpu::IsNarrowFloat(t)) {
        return f.storage8 && f.int8 ? hlo::OkStatus() : refuse(f.storage8 ? "shaderInt8" : "storageBuffer8BitAccess");
      }
      return hlo::Unimplemented("the Vulkan plugin has no kernels for " + std::string(hlo::HloName(t)) + " yet");
  }
}

std::string GlslDialect::Barrier(const std::string& indent, bool shared_memory) const {
  return (shared_memory ? indent + "memoryBarrierShared();\n" : "") + indent + "barrier();\n";
}

std::string GlslDialect::SharedArray(const std::string& type, const std::string& name, int64_t count) const {
  return "shared " + type + " " + name + "[" + std::to_string(count) + "];\n";
}

std::string GlslDialect::InParameter(const std::string& type, const std::string& name) const {
  return "in " + type + " " + name;
}

std::string GlslDialect::OutParameter(const std::string& type, const std::string& name) const {
  return "out " + type + " " + name;
}

// A floating-point element function is `precise`: glslang then decorates
// the arithmetic its return values come from NoContraction, which both
// spirv-opt's folding rules and Mesa's NIR honour. Without it x * 0 became
// 0 (spirv-opt, where the 0 was a constant written into the shader), x - x
// 0 (lavapipe), for x infinite or NaN, where HLO, as IEEE, gives NaN.
// (It also keeps a * b + c two roundings, as the CPU plugin and the
// evaluator round it.)
std::string GlslDialect::ElementFunction(const std::string& type, const std::string& name,
                                         const std::string& body) const {
  static const std::set<std::string> kFloatTypes = {"float", "double", "vec2", "dvec2"};
  const std::string declared = (kFloatTypes.count(type) ? "precise " : "") + type;
  if (body.find('\n') == std::string::npos) return declared + " " + name + "(uint i) { " + body + " }\n";
  return declared + " " + name + "(uint i) {\n" + body + "}\n";
}

// Each table entry is a buffer reference, loaded from the table once per
// invocation (in Module) rather than at every access.
std::string GlslDialect::Element(int entry, const std::string& /*storage*/, const std::string& index) const {
  return "ref" + std::to_string(entry) + ".d[" + index + "]";
}

std::string GlslDialect::Module(const gpu::ModuleParts& parts) const {
  std::string s =
      "#version 460\n"
      "#extension GL_EXT_buffer_reference : require\n"
      "#extension GL_EXT_buffer_reference2 : require\n"
      "#extension GL_EXT_scalar_block_layout : require\n"
      "#extension GL_EXT_shader_explicit_arithmetic_types : require\n"
      "#extension GL_EXT_shader_8bit_storage : require\n"
      "#extension GL_EXT_shader_16bit_storage : require\n";
  s += "layout(local_size_x = " + std::to_string(parts.workgroup_size) + ") in;\n";
  // gpu::kRuntimeZero: every dispatch is (groups, 1, 1) (vulkan_run.cc).
  s += "#define ANVIL_RUNTIME_ZERO (gl_NumWorkGroups.y - 1u)\n";
  s += "layout(buffer_reference, scalar, buffer_reference_align = 8) buffer Args { uint64_t a[]; };\n";
  std::set<std::string> storage_types;
  for (const auto& [entry, storage] : parts.buffers) storage_types.insert(storage);
  for (const std::string& t : storage_types) {
    s += "layout(buffer_reference, scalar, buffer_reference_align = 1) buffer B_" + t + " { " + t + " d[]; };\n";
  }
  s += "layout(push_constant, scalar) uniform Push { Args args; } pc;\n";
  std::string load_references;
  for (const auto& [entry, storage] : parts.buffers) {
    const std::string type = "B_" + storage, n = std::to_string(entry);
    s += type + " ref" + n + ";\n";
    load_references += "  ref" + n + " = " + type + "(pc.args.a[" + n + "]);\n";
  }
  s += parts.declarations;
  s += parts.elements;
  s += "void main() {\n" + load_references + parts.body + "}\n";
  return s;
}

}  // namespace anvil::vulkan
