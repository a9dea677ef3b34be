// The identity of a loaded shared library's build, for compile-cache keys.
#pragma once

#include <string>

namespace anvil::core {

// "build-id:<hex>" from the GNU build-ID note of the loaded object that
// holds `address` (GCC and Clang on Debian link one in by default); without
// one, "file:<path>:<size>:<mtime>". Empty if `address` is in no object.
std::string BuildIdentityOf(const void* address);

}  // namespace anvil::core
