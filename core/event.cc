#include "core/event.h"

#include <atomic>

namespace anvil::core {

std::shared_ptr<Event> Event::Completed(Status status) {
  auto e = Create();
  e->Set(std::move(status));
  return e;
}

void Event::Set(Status status) {
  std::vector<Callback> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ready_) return;
    ready_ = true;
    status_ = std::move(status);
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  for (Callback& callback : callbacks) callback(status_);
}

bool Event::IsReady() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ready_;
}

Status Event::Await() const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return ready_; });
  return status_;
}

void Event::OnReady(Callback callback) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready_) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  // status_ no longer changes once ready.
  callback(status_);
}

std::shared_ptr<Event> AllOf(const std::vector<std::shared_ptr<Event>>& events) {
  if (events.empty()) return Event::Completed();
  if (events.size() == 1) return events[0];
  struct State {
    std::atomic<size_t> remaining;
    std::mutex mu;
    Status first_error;
    std::shared_ptr<Event> all = Event::Create();
  };
  auto state = std::make_shared<State>();
  state->remaining = events.size();
  for (const auto& e : events) {
    e->OnReady([state](const Status& s) {
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(state->mu);
        if (state->first_error.ok()) state->first_error = s;
      }
      if (--state->remaining == 0) {
        Status result;
        {
          std::lock_guard<std::mutex> lock(state->mu);
          result = state->first_error;
        }
        state->all->Set(result);
      }
    });
  }
  return state->all;
}

}  // namespace anvil::core
