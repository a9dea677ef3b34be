#include "pjrt/errors.h"

#include <cstddef>

namespace anvil::pjrt {
namespace {

void DestroyError(Error* error) { delete error; }

void ErrorMessage(const Error* error, const char** message, size_t* message_size) {
  *message = error->message.c_str();
  *message_size = error->message.size();
}

abi::ErrorCode ErrorCodeOf(const Error* error) { return error->code; }

void NoPayloads(const Error*, abi::PayloadVisitor, void*) {}

const abi::ErrorFunctionTable kErrorTable = {
    sizeof(abi::ErrorFunctionTable), sizeof(Error), nullptr, &DestroyError, &ErrorMessage, &ErrorCodeOf, &NoPayloads,
};

}  // namespace

Error* MakeError(abi::ErrorCode code, std::string message) {
  return new Error{&kErrorTable, code, std::move(message)};
}

Error* FromStatus(anvil_status* status, const char* context) {
  if (status == nullptr) return nullptr;
  // Anvil's codes are absl's, as PJRT's are.
  auto code = static_cast<abi::ErrorCode>(anvil_status_get_code(status));
  std::string message = anvil_status_get_message(status);
  anvil_status_free(status);
  if (context != nullptr) message = std::string(context) + ": " + message;
  return MakeError(code, std::move(message));
}

Error* CheckStructSize(size_t given, size_t needed, const char* function) {
  if (given >= needed) return nullptr;
  return MakeError(abi::kInvalidArgument, std::string(function) + ": the argument struct is " + std::to_string(given) +
                                              " bytes, but this plugin (PJRT C API 0.112) reads " +
                                              std::to_string(needed) + "; was the caller built against an older API?");
}

}  // namespace anvil::pjrt
