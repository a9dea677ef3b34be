// Reading and writing NumPy .npy files (format 1.0, little-endian, C order)
// for `anvil run`'s inputs and outputs.
#pragma once

#include <string>

#include "hlo/literal.h"
#include "hlo/status.h"

namespace anvil::tools {

hlo::StatusOr<hlo::Literal> ReadNpy(const std::string& path);
hlo::Status WriteNpy(const std::string& path, const hlo::Literal& literal);

}  // namespace anvil::tools
