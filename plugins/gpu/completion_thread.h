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
  // At most `limit` jobs wait at once: each holds an execution's stream and
  // memory, so a caller that issues faster than the device runs waits in
  // Add (PJRT's CUDA client bounds executions in flight the same way).
  explicit CompletionThread(size_t limit = 64) : limit_(limit) {}
  // Runs every job handed over, then ends the thread.
  ~CompletionThread();
  CompletionThread(const CompletionThread&) = delete;
  CompletionThread& operator=(const CompletionThread&) = delete;

  // Runs `job` on the thread (started on first use), after the jobs handed
  // over before it; waits first while `limit` jobs are waiting. `job` must
  // not throw. Throws (std::system_error, std::bad_alloc) only before `job`
  // is queued, so a caller that catches knows it will never run.
  void Add(std::function<void()> job);

 private:
  void Loop();

  const size_t limit_;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<std::function<void()>> jobs_;
  size_t running_ = 0;  // a job taken from the queue and not yet finished
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace anvil::gpu
