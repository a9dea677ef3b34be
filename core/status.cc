#include "core/status.h"

namespace anvil::core {

anvil_status* ToAbi(const Status& status) {
  if (status.ok()) return nullptr;
  return new anvil_status{static_cast<anvil_status_code>(status.code()), status.message()};
}

Status FromAbi(const anvil_status* status) {
  if (!status) return hlo::OkStatus();
  return Status(static_cast<StatusCode>(status->code), status->message);
}

Status MakeError(StatusCode code, std::string message) { return Status(code, std::move(message)); }

}  // namespace anvil::core
