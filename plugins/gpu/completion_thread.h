// Where a GPU plugin waits for its device, so that neither the thread that
// issues an execution nor core's host threads do: an execution is queued
// on its stream where it is issued and handed here, and one thread of the
// plugin's own waits for each in turn, gives its memory back and reports
// it done (PJRT's CUDA client keeps such threads too). It waits outside any
// driver callback, where freeing device memory is allowed.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace anvil::gpu {

class CompletionThread {
 public:
  CompletionThread() = default;
  // Runs every job handed over, then ends the thread.
  ~CompletionThread();
  CompletionThread(const CompletionThread&) = delete;
  CompletionThread& operator=(const CompletionThread&) = delete;

  // Runs `job` on the thread (started on first use), after the jobs handed
  // over before it. `job` must not throw.
  void Add(std::function<void()> job);

 private:
  void Loop();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace anvil::gpu
