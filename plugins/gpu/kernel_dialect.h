// What differs between the kernel languages the GPU kernel generator
// writes (GLSL for Vulkan; CUDA C++ and HIP C++ next). The generator's
// statements and expressions are a C-like subset the languages share, with
// GLSL's vocabulary (uint, vec2, floatBitsToUint, ...); a dialect supplies
// the parts that cannot be shared: how a kernel is declared and reaches its
// buffers, which invocation is running, workgroup memory and barriers, how
// functions return values through parameters, and literal spellings. A C++
// dialect defines the GLSL vocabulary in a prelude of its own.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "hlo/element_type.h"
#include "hlo/status.h"

namespace anvil::gpu {

// The pieces of one kernel module, in the order the module declares them.
struct ModuleParts {
  uint32_t workgroup_size = 64;
  // Table entry -> the storage type of its elements, for every entry the
  // kernel touches (inputs, then outputs, then scratch buffers).
  std::map<int, std::string> buffers;
  std::string declarations;  // module-scope: shared arrays, library, functions
  std::string elements;      // the element functions (ElementFunction), which read buffers
  std::string body;          // the kernel's statements
};

class KernelDialect {
 public:
  virtual ~KernelDialect() = default;

  // Who refuses a program, for messages: "the Vulkan plugin".
  virtual std::string Compiler() const = 0;
  // OK, or UNIMPLEMENTED naming what the device lacks to hold or compute
  // elements of `type`.
  virtual hlo::Status CheckType(hlo::ElementType type) const = 0;
  // Whether the device computes in double (elementary functions then do).
  virtual bool HasFloat64() const = 0;

  // uint expressions along the one grid dimension the generator uses: this
  // invocation's index in the grid and in its workgroup, its workgroup's
  // index, and how many workgroups run.
  virtual std::string GlobalIndex() const = 0;
  virtual std::string LocalIndex() const = 0;
  virtual std::string GroupIndex() const = 0;
  virtual std::string GroupCount() const = 0;

  // Statements (each line starting with `indent`, ending in a newline) that
  // wait for every invocation of the workgroup; with `shared_memory`, what
  // they wrote to workgroup memory is visible to all afterwards.
  virtual std::string Barrier(const std::string& indent, bool shared_memory) const = 0;
  // A module-scope array in workgroup memory.
  virtual std::string SharedArray(const std::string& type, const std::string& name, int64_t count) const = 0;

  // Parameters of generated functions: one read, one written (the
  // generator's functions return several values through the latter).
  virtual std::string InParameter(const std::string& type, const std::string& name) const = 0;
  virtual std::string OutParameter(const std::string& type, const std::string& name) const = 0;

  // The function `type name(uint i)` giving element i of a fused value:
  // `body` is one statement, or lines each ending in a newline.
  virtual std::string ElementFunction(const std::string& type, const std::string& name,
                                      const std::string& body) const = 0;
  // The helper library (scalar_emitter's KernelLibrary, written in GLSL)
  // as this language reads it.
  virtual std::string Library(const std::string& glsl) const = 0;

  // Element `index` of table entry `entry`, whose elements are `storage`.
  virtual std::string Element(int entry, const std::string& storage, const std::string& index) const = 0;
  // A double-precision literal from a C decimal literal ("0.0").
  virtual std::string DoubleLiteral(const std::string& decimal) const = 0;

  // The whole module for one kernel pass.
  virtual std::string Module(const ModuleParts& parts) const = 0;
};

}  // namespace anvil::gpu
