// A host executor for the CPU plugin's unit tests: each task runs on a
// thread of its own, joined when the executor is destroyed, so Parallel
// loops split across real threads without core's arena.
#pragma once

#include <mutex>
#include <thread>
#include <vector>

#include "anvil/anvil_plugin.h"

namespace anvil::cpu {

class ThreadExecutor {
 public:
  ThreadExecutor() {
    api_.struct_size = sizeof api_;
    api_.executor = this;
    api_.enqueue = [](void* self, void (*fn)(void*), void* arg) {
      auto* e = static_cast<ThreadExecutor*>(self);
      std::lock_guard<std::mutex> lock(e->mu_);
      e->threads_.emplace_back(fn, arg);
    };
  }
  ~ThreadExecutor() {
    for (std::thread& t : threads_) t.join();
  }
  const anvil_plugin_host_executor* api() const { return &api_; }

 private:
  anvil_plugin_host_executor api_{};
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

}  // namespace anvil::cpu
