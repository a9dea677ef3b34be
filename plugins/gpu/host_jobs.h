// Independent jobs run at once on core's host threads, the caller's thread
// among them: how a GPU plugin compiles a program's kernels in parallel
// (kernel compilers are nearly all of a compile, and kernels compile
// independently).
#pragma once

#include <cstddef>
#include <functional>

#include "anvil/anvil_plugin.h"

namespace anvil::gpu {

// Runs job(0) .. job(count - 1), each once, and returns when all are done.
// `job` must not throw (what it fails with, it records itself).
void RunOnHostThreads(const anvil_plugin_host_executor& host, size_t count, const std::function<void(size_t)>& job);

}  // namespace anvil::gpu
