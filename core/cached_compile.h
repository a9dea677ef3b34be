// anvil_client_compile's use of the compile cache (core/compile_cache.h):
// the keys of one compile, and the executable handles made from a cache
// entry or stored into one.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/runtime.h"

namespace anvil::core {

class CachedCompile {
 public:
  // Null unless `client` caches and the device's plugin can serialise.
  static std::unique_ptr<CachedCompile> Start(anvil_client& client, anvil_device& device, std::string_view format,
                                              std::string_view program, const std::string& options);

  // The executable a compile of these exact program bytes stored, if any.
  std::shared_ptr<ExecutableState> LoadByProgram();
  // The executable stored for this canonical text, if any (a program
  // written another way that canonicalises the same); remembers the program
  // for next time.
  std::shared_ptr<ExecutableState> LoadByCanonicalText(const std::string& canonical_text);
  // Keeps a freshly compiled executable for both keys.
  void Store(const ExecutableState& state);

 private:
  CachedCompile(anvil_client& client, anvil_device& device) : client_(client), device_(device) {}
  std::shared_ptr<ExecutableState> Load(const std::string& canonical_key, const std::string* canonical_text,
                                        const char* found_by);
  std::string CanonicalKey(const std::string& canonical_text) const;

  anvil_client& client_;
  anvil_device& device_;
  std::string base_key_;     // builds, device, options
  std::string program_key_;  // base_key_ + the program's format and bytes
  std::string canonical_key_;  // base_key_ + the canonical text's hash, once known
};

}  // namespace anvil::core
