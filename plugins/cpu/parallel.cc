#include "plugins/cpu/parallel.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "plugins/cpu/float_mode.h"

namespace anvil::cpu {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

struct Job {
  std::function<void(int64_t, int64_t)> fn;
  int64_t n = 0, chunk = 0, chunks = 0;
  uint32_t float_mode = 0;  // the caller's (float_mode.h), which helpers take on for its chunks
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr error;  // the first chunk's exception (under mu), rethrown by the caller

  // Takes and runs chunks until none is left. A chunk that throws (out of
  // memory, a kernel's error) ends the loop: the chunks no thread has
  // taken are abandoned, counted as done so that the caller's wait ends
  // once the chunks under way are, and the caller rethrows the exception.
  // Nothing throws out of Work: not on a helper, where nothing would catch
  // it, nor on the caller, which must not return while helpers still run
  // the body it holds by reference.
  void Work() {
    for (int64_t c; (c = next.fetch_add(1)) < chunks;) {
      try {
        fn(c * chunk, std::min(n, (c + 1) * chunk));
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!error) error = std::current_exception();
        }
        const int64_t untaken = next.exchange(chunks);
        if (untaken < chunks) Finish(chunks - untaken);
      }
      Finish(1);
    }
  }

  void Finish(int64_t count) {
    if (done.fetch_add(count) + count == chunks) {
      std::lock_guard<std::mutex> lock(mu);
      cv.notify_all();
    }
  }
};

// The caller, its own chunks done, waits for the helpers' last ones, which
// are about as long as its own: it spins for up to kSpin before it sleeps
// on the condition variable. A sleeping thread is woken by the scheduler,
// which on a virtual machine takes tens of microseconds, as long as a small
// loop's whole chunk: a scan's step (dots of 32x256x256 and 32x128x256, a
// tanh) waited that long several times per step (the scan RNN's gradient,
// 100 steps: 24.5 -> 16.5 ms; a spin of 10 or 200 us gave about the same).
void WaitForHelpers(Job& job) {
  constexpr auto kSpin = std::chrono::microseconds(100);
  const auto until = std::chrono::steady_clock::now() + kSpin;
  while (job.done.load(std::memory_order_acquire) != job.chunks) {
    for (int k = 0; k < 64; ++k) CpuRelax();
    if (std::chrono::steady_clock::now() > until) break;
  }
  std::unique_lock<std::mutex> lock(job.mu);
  job.cv.wait(lock, [&] { return job.done.load() == job.chunks; });
}

}  // namespace

int64_t Parallel::Threads() {
  // Asked once: the answer is a system call, which cost tiny programs one
  // per loop. The CPUs this process may run on (its affinity mask, as core
  // sizes its host threads by), not the machine's.
  static const int64_t threads = [] {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max<int64_t>(1, CPU_COUNT(&set));
    return std::max<int64_t>(1, std::thread::hardware_concurrency());
  }();
  return threads;
}

void Parallel::Split(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const {
  const int64_t threads = Threads();
  auto job = std::make_shared<Job>();
  job->fn = fn;
  job->n = n;
  job->float_mode = FloatMode();
  job->chunks = std::min<int64_t>(threads * 4, (n + grain - 1) / grain);
  job->chunk = (n + job->chunks - 1) / job->chunks;
  job->chunks = (n + job->chunk - 1) / job->chunk;
  // Helpers queued before a failure (out of memory) may still run `fn`,
  // which can refer to the caller's locals: the caller then does the
  // chunks left and waits for theirs before it lets the failure unwind.
  try {
    for (int64_t h = 1; h < threads && h < job->chunks; ++h) {
      auto helper = std::make_unique<std::shared_ptr<Job>>(job);
      executor_->enqueue(
          executor_->executor,
          [](void* arg) {
            std::unique_ptr<std::shared_ptr<Job>> owned(static_cast<std::shared_ptr<Job>*>(arg));
            ScopedFloatMode mode((*owned)->float_mode);
            (*owned)->Work();
          },
          helper.get());
      helper.release();  // the queued task owns it now
    }
  } catch (...) {
    job->Work();
    WaitForHelpers(*job);
    throw;
  }
  job->Work();
  WaitForHelpers(*job);
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace anvil::cpu
