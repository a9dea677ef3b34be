// Buffers: wrapping Anvil buffers, and the geometry PJRT asks about.
#pragma once

#include <anvil/anvil.h>

#include "pjrt/objects.h"

namespace anvil::pjrt {

// A new PJRT buffer for an Anvil buffer on `device` (whose handle it takes).
Buffer* WrapBuffer(Client* client, Device* device, anvil_buffer* buffer);

}  // namespace anvil::pjrt
