#include "plugins/gpu/completion_thread.h"

#include <utility>

namespace anvil::gpu {

CompletionThread::~CompletionThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void CompletionThread::Add(std::function<void()> job) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // The thread first: if it cannot start, nothing is queued.
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
    room_.wait(lock, [this] { return jobs_.size() + running_ < limit_; });
    jobs_.push_back(std::move(job));
  }
  ready_.notify_one();
}

void CompletionThread::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing is left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    running_ = 1;
    lock.unlock();
    job();
    job = nullptr;  // what it held goes before the next wait
    lock.lock();
    running_ = 0;
    room_.notify_one();
  }
}

}  // namespace anvil::gpu
