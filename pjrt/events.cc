#include "pjrt/events.h"

#include "pjrt/entries.h"
#include "pjrt/errors.h"

namespace anvil::pjrt {

void EventState::Set(abi::ErrorCode code, std::string message) {
  std::vector<std::function<void(abi::ErrorCode, const std::string&)>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
    code_ = code;
    message_ = std::move(message);
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  // Outside the lock: a callback may destroy the event or wait on another.
  for (auto& callback : callbacks) callback(code_, message_);
}

bool EventState::IsReady() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

Error* EventState::Await() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_; });
  return code_ == abi::kOk ? nullptr : MakeError(code_, message_);
}

void EventState::OnReady(std::function<void(abi::ErrorCode, const std::string&)> callback) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!done_) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  callback(code_, message_);
}

namespace {

void ForwardAnvilCompletion(anvil_status* error, void* user_data) {
  auto* state = static_cast<std::shared_ptr<EventState>*>(user_data);
  if (error == nullptr) {
    (*state)->Set(abi::kOk, "");
  } else {
    auto code = static_cast<abi::ErrorCode>(anvil_status_get_code(error));
    std::string message = anvil_status_get_message(error);
    anvil_status_free(error);
    (*state)->Set(code, std::move(message));
  }
  delete state;
}

}  // namespace

Event* EventFromAnvil(anvil_event* event) {
  auto* out = new Event;
  auto* forwarded = new std::shared_ptr<EventState>(out->state);
  if (anvil_status* status = anvil_event_on_ready(event, &ForwardAnvilCompletion, forwarded)) {
    // Cannot happen for a valid handle; complete the event with the reason
    // rather than leave it pending for ever.
    delete forwarded;
    out->state->Set(static_cast<abi::ErrorCode>(anvil_status_get_code(status)), anvil_status_get_message(status));
    anvil_status_free(status);
  }
  anvil_event_destroy(event);  // the completion still arrives
  return out;
}

Event* ReadyEvent() {
  auto* out = new Event;
  out->state->Set(abi::kOk, "");
  return out;
}

namespace entry {

Error* Event_Destroy(abi::EventArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::EventArgs, event, "PJRT_Event_Destroy");
  delete args->event;
  return nullptr;
}

Error* Event_IsReady(abi::EventIsReadyArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::EventIsReadyArgs, is_ready, "PJRT_Event_IsReady");
  args->is_ready = args->event->state->IsReady();
  return nullptr;
}

Error* Event_Error(abi::EventArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::EventArgs, event, "PJRT_Event_Error");
  if (!args->event->state->IsReady()) {
    return MakeError(abi::kFailedPrecondition, "PJRT_Event_Error: the event has not completed yet");
  }
  return args->event->state->Await();
}

Error* Event_Await(abi::EventArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::EventArgs, event, "PJRT_Event_Await");
  return args->event->state->Await();
}

Error* Event_OnReady(abi::EventOnReadyArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::EventOnReadyArgs, user_arg, "PJRT_Event_OnReady");
  if (args->callback == nullptr) return MakeError(abi::kInvalidArgument, "PJRT_Event_OnReady: callback is null");
  auto callback = args->callback;
  void* user_arg = args->user_arg;
  args->event->state->OnReady([callback, user_arg](abi::ErrorCode code, const std::string& message) {
    callback(code == abi::kOk ? nullptr : MakeError(code, message), user_arg);
  });
  return nullptr;
}

Error* Event_Create(abi::EventCreateArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::EventCreateArgs, event, "PJRT_Event_Create");
  args->event = new Event;
  return nullptr;
}

Error* Event_Set(abi::EventSetArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::EventSetArgs, error_message_size, "PJRT_Event_Set");
  std::string message;
  if (args->error_code != abi::kOk && args->error_message != nullptr) {
    message.assign(args->error_message, args->error_message_size);
  }
  args->event->state->Set(args->error_code, std::move(message));
  return nullptr;
}

}  // namespace entry
}  // namespace anvil::pjrt
