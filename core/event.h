// Events: complete once, with success or an error; waiters block on them and
// callbacks run when they complete. Every asynchronous result in core is one.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/status.h"

namespace anvil::core {

class Event {
 public:
  using Callback = std::function<void(const Status&)>;

  static std::shared_ptr<Event> Create() { return std::make_shared<Event>(); }
  static std::shared_ptr<Event> Completed(Status status = hlo::OkStatus());

  // Completes the event; later calls are ignored. Callbacks run on this
  // thread, outside the lock, in the order they were added.
  void Set(Status status);
  bool IsReady() const;
  // Blocks until complete; returns the event's status.
  Status Await() const;
  // Runs `callback` when complete (at once, here, if already complete).
  void OnReady(Callback callback);

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool ready_ = false;
  Status status_;
  std::vector<Callback> callbacks_;
};

// Completes when every event in `events` has; carries the first error.
std::shared_ptr<Event> AllOf(const std::vector<std::shared_ptr<Event>>& events);

}  // namespace anvil::core

struct anvil_event {
  std::shared_ptr<anvil::core::Event> event;
};
