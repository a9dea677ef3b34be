// PJRT events from Anvil events, and the event entries of the API table.
#pragma once

#include <anvil/anvil.h>

#include "pjrt/objects.h"

namespace anvil::pjrt {

// A new PJRT event that completes with `event` (whose handle it takes).
Event* EventFromAnvil(anvil_event* event);
// A new PJRT event that is already complete, successfully.
Event* ReadyEvent();

}  // namespace anvil::pjrt
