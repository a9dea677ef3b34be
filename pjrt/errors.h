// Making PJRT errors, from Anvil statuses or from the plugin's own checks.
#pragma once

#include <anvil/anvil.h>

#include <string>

#include "pjrt/objects.h"

namespace anvil::pjrt {

// A value or the error that stopped it.
template <typename T>
struct StatusOrError {
  StatusOrError(T v) : value(std::move(v)) {}
  StatusOrError(Error* e) : error(e) {}
  T value{};
  Error* error = nullptr;
};

// A new error the framework owns (it frees it with PJRT_Error_Destroy).
Error* MakeError(abi::ErrorCode code, std::string message);
// Takes `status` (freeing it); null stays null. `context` ("PJRT_Client_Compile")
// is put before the message.
Error* FromStatus(anvil_status* status, const char* context = nullptr);

// The error a struct too short for the fields a function reads gets.
Error* CheckStructSize(size_t given, size_t needed, const char* function);

}  // namespace anvil::pjrt

// Refuses an argument struct shorter than the fields up to `last_field`.
#define ANVIL_PJRT_CHECK_ARGS(args, type, last_field, function)                                           \
  do {                                                                                                     \
    if ((args) == nullptr) return ::anvil::pjrt::MakeError(::anvil::pjrt::abi::kInvalidArgument,           \
                                                           std::string(function) + ": args is null");      \
    if (::anvil::pjrt::Error* e = ::anvil::pjrt::CheckStructSize(                                          \
            (args)->struct_size, offsetof(type, last_field) + sizeof(((type*)nullptr)->last_field), function)) \
      return e;                                                                                            \
  } while (0)
