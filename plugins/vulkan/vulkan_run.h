// One execution of a Vulkan executable: its arena and address tables, and
// the walk over its operations. Dispatches and copies are recorded into a
// command buffer that is submitted (with a fence, then waited on) only
// where the host must read a value to go on (a loop's condition, a
// conditional's branch) and at the end.
#pragma once

#include <vector>

#include "hlo/status.h"
#include "plugins/vulkan/vulkan_executable.h"

namespace anvil::vulkan {

// Runs `exe` on `inputs` into `outputs` (buffers of the executable's
// output sizes) and waits for the device. Blocking: the plugin calls it on
// one of core's host threads.
hlo::Status RunExecutable(const Executable& exe, Device& device, const std::vector<const Buffer*>& inputs,
                          const std::vector<const Buffer*>& outputs);

}  // namespace anvil::vulkan
