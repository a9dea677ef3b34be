#include "plugins/gpu/cxx_dialect.h"

#include <cctype>

#include "plugins/gpu/element_types.h"

namespace anvil::gpu {

namespace {

const char* kPrelude =
#include "plugins/gpu/cxx_prelude.inc"
    ;

// f16 in memory and as GLSL's float16_t: PTX's conversions on CUDA (NVRTC
// compiles without headers, and cuda_fp16.h needs the toolkit's), the
// language's _Float16 on HIP. Then what one language's device library
// lacks.
const char* kCudaHalf = R"CXX(
struct float16_t {
  unsigned short bits;
  float16_t() = default;
  float16_t(float f) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  operator float() const { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits)); return f; }
};
inline float16_t uint16BitsToFloat16(uint16_t b) { float16_t h; h.bits = b; return h; }
inline uint16_t float16BitsToUint16(float16_t h) { return h.bits; }
// HIP's headers have this overload; NVRTC's built-in declarations do not.
inline int64_t abs(int64_t x) { return x < 0 ? -x : x; }
)CXX";

const char* kHipHalf = R"CXX(
struct float16_t {
  _Float16 value;
  float16_t() = default;
  float16_t(float f) : value(static_cast<_Float16>(f)) {}
  operator float() const { return static_cast<float>(value); }
};
inline float16_t uint16BitsToFloat16(uint16_t b) { return anvil_bits<float16_t>(b); }
inline uint16_t float16BitsToUint16(float16_t h) { return anvil_bits<uint16_t>(h); }
)CXX";

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

hlo::Status CxxDialect::CheckType(hlo::ElementType type) const {
  using hlo::ElementType;
  switch (type) {
    case ElementType::kPred: case ElementType::kS2: case ElementType::kS4: case ElementType::kS8:
    case ElementType::kS16: case ElementType::kS32: case ElementType::kS64:
    case ElementType::kU2: case ElementType::kU4: case ElementType::kU8: case ElementType::kU16:
    case ElementType::kU32: case ElementType::kU64:
    case ElementType::kBF16: case ElementType::kF16: case ElementType::kF32: case ElementType::kF64:
    case ElementType::kC64: case ElementType::kC128:
      return hlo::OkStatus();
    default:
      if (IsNarrowFloat(type)) return hlo::OkStatus();
      return hlo::Unimplemented(compiler_ + " has no kernels for " + std::string(hlo::HloName(type)) + " yet");
  }
}

std::string CxxDialect::Barrier(const std::string& indent, bool /*shared_memory*/) const {
  // __syncthreads also orders the block's shared-memory accesses.
  return indent + "__syncthreads();\n";
}

std::string CxxDialect::SharedArray(const std::string& type, const std::string& name, int64_t count) const {
  return "__shared__ " + type + " " + name + "[" + std::to_string(count) + "];\n";
}

std::string CxxDialect::InParameter(const std::string& type, const std::string& name) const {
  return type + " " + name;
}

std::string CxxDialect::OutParameter(const std::string& type, const std::string& name) const {
  return type + "& " + name;
}

// Element functions read the buffers, which are the kernel's locals here:
// they are lambdas inside the kernel (GLSL's are functions reading
// module-scope references).
std::string CxxDialect::ElementFunction(const std::string& type, const std::string& name,
                                        const std::string& body) const {
  if (body.find('\n') == std::string::npos) {
    return "  auto " + name + " = [&](uint i) -> " + type + " { " + body + " };\n";
  }
  return "  auto " + name + " = [&](uint i) -> " + type + " {\n" + body + "  };\n";
}

std::string CxxDialect::Library(const std::string& glsl) const { return WithoutDoubleSuffixes(glsl); }

std::string CxxDialect::Element(int entry, const std::string& /*storage*/, const std::string& index) const {
  return "ref" + std::to_string(entry) + "[" + index + "]";
}

std::string CxxDialect::Module(const ModuleParts& parts) const {
  std::string s;
  // NVRTC compiles with -default-device; clang needs every function of the
  // module marked for the device.
  // hiprtc and clang need HIP's device declarations (NVRTC has CUDA's built in).
  if (language_ == Language::kHip) s += "#include <hip/hip_runtime.h>\n#pragma clang force_cuda_host_device begin\n";
  s += language_ == Language::kCuda ? "#define ANVIL_MEMCPY memcpy\n" : "#define ANVIL_MEMCPY __builtin_memcpy\n";
  s += kPrelude;
  s += language_ == Language::kCuda ? kCudaHalf : kHipHalf;
  s += parts.declarations;
  if (language_ == Language::kHip) s += "#pragma clang force_cuda_host_device end\n";
  s += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(parts.workgroup_size) + ") " + kEntry +
       "(const uint64_t* table) {\n";
  for (const auto& [entry, storage] : parts.buffers) {
    const std::string n = std::to_string(entry);
    s += "  " + storage + "* ref" + n + " = reinterpret_cast<" + storage + "*>(table[" + n + "]);\n";
  }
  s += parts.elements;
  s += parts.body + "}\n";
  return s;
}

std::string WithoutDoubleSuffixes(const std::string& glsl) {
  std::string out;
  out.reserve(glsl.size());
  for (size_t i = 0; i < glsl.size(); ++i) {
    // "lf" ending a numeric literal: after a digit or '.', and the literal
    // starts after a character no identifier holds.
    if (glsl[i] == 'l' && i + 1 < glsl.size() && glsl[i + 1] == 'f' &&
        (i + 2 == glsl.size() || !IsIdentifierChar(glsl[i + 2])) && i > 0 &&
        (std::isdigit(static_cast<unsigned char>(glsl[i - 1])) || glsl[i - 1] == '.')) {
      size_t start = out.size();
      while (start > 0 && (IsIdentifierChar(out[start - 1]) || out[start - 1] == '.' ||
                           ((out[start - 1] == '+' || out[start - 1] == '-') && start > 1 &&
                            (out[start - 2] == 'e' || out[start - 2] == 'E')))) {
        --start;
      }
      const std::string literal = out.substr(start);
      if (!literal.empty() && std::isdigit(static_cast<unsigned char>(literal[0])) == 0 && literal[0] != '.') {
        out += "lf";  // an identifier ending in digits, not a literal
      } else if (literal.find_first_of(".eE") == std::string::npos) {
        out += ".0";
      }
      ++i;  // past "lf"
      continue;
    }
    out += glsl[i];
  }
  return out;
}

}  // namespace anvil::gpu
