// A GPU plugin's serialised executable, for core's compile cache: the
// canonical program text and the device binary of every kernel pass it
// runs (SPIR-V, a cubin), keyed by a hash of the pass's source. Loading
// plans the program again from the text (deterministic and fast) and takes
// each pass's binary from here instead of compiling its source again, which
// is nearly all of a cold compile.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hlo/status.h"

namespace anvil::gpu {

// 32 hex digits of XXH3-128 over a kernel pass's source.
std::string KernelKey(std::string_view source);

struct SerializedProgram {
  std::string canonical_text;
  std::unordered_map<std::string, std::string> binaries;  // by KernelKey
};

// `magic` is the plugin's 8 bytes naming the format and its version.
std::string WriteSerializedProgram(std::string_view magic, const std::string& canonical_text,
                                   const std::vector<std::pair<std::string, std::string>>& binaries);
// INVALID_ARGUMENT naming `what` ("serialised Vulkan executable") and the
// byte offset where the bytes stop making sense.
hlo::StatusOr<SerializedProgram> ReadSerializedProgram(std::string_view magic, const std::string& what,
                                                       std::string_view bytes);

}  // namespace anvil::gpu
