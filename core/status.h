// The ABI's anvil_status and its conversions from hlo::Status.
#pragma once

#include <string>

#include "anvil/anvil.h"
#include "hlo/status.h"

struct anvil_status {
  anvil_status_code code;
  std::string message;
};

namespace anvil::core {

using hlo::Status;
using hlo::StatusCode;
using hlo::StatusOr;

// A heap anvil_status for the caller, or NULL for OK.
anvil_status* ToAbi(const Status& status);
Status FromAbi(const anvil_status* status);
Status MakeError(StatusCode code, std::string message);

}  // namespace anvil::core
