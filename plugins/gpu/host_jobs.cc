#include "plugins/gpu/host_jobs.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace anvil::gpu {
namespace {

// Shared by the caller and the helpers it enqueued: each takes the next
// job until none is left; the caller waits until every job is finished.
struct Batch {
  std::function<void(size_t)> job;
  size_t count = 0;
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  size_t finished = 0;

  void Work() {
    for (size_t k; (k = next.fetch_add(1)) < count;) {
      job(k);
      std::lock_guard<std::mutex> lock(mu);
      if (++finished == count) cv.notify_all();
    }
  }
};

}  // namespace

void RunOnHostThreads(const anvil_plugin_host_executor& host, size_t count, const std::function<void(size_t)>& job) {
  if (count == 0) return;
  auto batch = std::make_shared<Batch>();
  batch->job = job;
  batch->count = count;
  const size_t threads = std::max(1u, std::thread::hardware_concurrency());
  for (size_t h = 1; h < threads && h < count && host.enqueue; ++h) {
    auto* helper = new std::shared_ptr<Batch>(batch);
    host.enqueue(
        host.executor,
        [](void* arg) {
          std::unique_ptr<std::shared_ptr<Batch>> owned(static_cast<std::shared_ptr<Batch>*>(arg));
          (*owned)->Work();
        },
        helper);
  }
  batch->Work();  // the caller works too, so no job waits for a free worker
  std::unique_lock<std::mutex> lock(batch->mu);
  batch->cv.wait(lock, [&] { return batch->finished == batch->count; });
}

}  // namespace anvil::gpu
