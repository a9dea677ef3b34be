// Events and buffers of anvil.h.
#include <cstring>

#include "core/abi_util.h"
#include "core/element_types.h"
#include "core/runtime.h"

using anvil::core::BufferState;
using anvil::core::DeviceMemory;
using anvil::core::Event;
using anvil::core::Guard;
using anvil::core::Invalid;
using anvil::core::MakeError;
using anvil::core::Status;
using anvil::core::StatusCode;
using anvil::core::ToAbi;

namespace {

anvil_event* NewEvent(std::shared_ptr<Event> e) { return new anvil_event{std::move(e)}; }

// More dimensions than any program has; a larger num_dims is a caller's
// mistake (an uninitialised count), refused before `dims` is read.
constexpr size_t kMaxRank = 256;

// Registers a use of the buffer's memory (a copy out of it) that a later
// donation waits for; FAILED_PRECONDITION for a buffer donated already.
anvil_status* AddUse(const char* function, BufferState& state, anvil::core::UseRelease* use) {
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.donated) {
    return ToAbi(MakeError(StatusCode::kFailedPrecondition,
                           std::string(function) + ": the buffer was donated to an execution and may not be used again"));
  }
  *use = anvil::core::UseRelease(state.AddUseLocked());
  return nullptr;
}

}  // namespace

extern "C" {

anvil_status* anvil_event_is_ready(anvil_event* event, int32_t* out_ready) {
  ANVIL_CHECK_NOT_NULL("anvil_event_is_ready", event);
  ANVIL_CHECK_NOT_NULL("anvil_event_is_ready", out_ready);
  *out_ready = event->event->IsReady() ? 1 : 0;
  return nullptr;
}

anvil_status* anvil_event_await(anvil_event* event) {
  ANVIL_CHECK_NOT_NULL("anvil_event_await", event);
  return ToAbi(event->event->Await());
}

anvil_status* anvil_event_on_ready(anvil_event* event, anvil_event_callback callback, void* user_data) {
  ANVIL_CHECK_NOT_NULL("anvil_event_on_ready", event);
  ANVIL_CHECK_NOT_NULL("anvil_event_on_ready", callback);
  return Guard("anvil_event_on_ready", [&]() -> anvil_status* {
    event->event->OnReady([callback, user_data](const Status& s) { callback(ToAbi(s), user_data); });
    return nullptr;
  });
}

anvil_status* anvil_event_destroy(anvil_event* event) {
  delete event;
  return nullptr;
}

anvil_status* anvil_buffer_from_host(anvil_client* client, const anvil_buffer_from_host_args* args,
                                     anvil_buffer** out_buffer, anvil_event** out_host_done) {
  return Guard("anvil_buffer_from_host", [&]() -> anvil_status* {
    ANVIL_CHECK_NOT_NULL("anvil_buffer_from_host", client);
    ANVIL_CHECK_NOT_NULL("anvil_buffer_from_host", out_buffer);
    // Minor 1 callers end the struct at num_dims.
    ANVIL_CHECK_ARGS("anvil_buffer_from_host", args, ANVIL_STRUCT_SIZE(anvil_buffer_from_host_args, num_dims));
    const int32_t semantics =
        args->struct_size >= ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE ? args->host_buffer_semantics : ANVIL_HOST_BUFFER_COPY;
    if (semantics != ANVIL_HOST_BUFFER_COPY && semantics != ANVIL_HOST_BUFFER_IMMUTABLE_ZERO_COPY) {
      return Invalid("anvil_buffer_from_host: unknown host_buffer_semantics " + std::to_string(semantics));
    }
    ANVIL_CHECK_NOT_NULL("anvil_buffer_from_host", args->device);
    if (args->device->client != client) return Invalid("anvil_buffer_from_host: the device belongs to another client");
    anvil::hlo::ElementType type = anvil::core::FromAbi(args->element_type);
    if (type == anvil::hlo::ElementType::kInvalid) {
      return Invalid("anvil_buffer_from_host: unknown element type " + std::to_string(args->element_type));
    }
    if (args->num_dims > 0 && !args->dims) return Invalid("anvil_buffer_from_host: dims is NULL");
    if (args->num_dims > kMaxRank) {
      return Invalid("anvil_buffer_from_host: num_dims is " + std::to_string(args->num_dims) + "; at most " +
                     std::to_string(kMaxRank) + " dimensions are supported");
    }
    std::vector<int64_t> dims(args->dims, args->dims + args->num_dims);
    if (anvil::hlo::Status size = anvil::hlo::CheckArraySize(type, dims); !size.ok()) {
      return Invalid("anvil_buffer_from_host: " + size.message());
    }
    auto state = std::make_shared<BufferState>();
    state->device = args->device;
    state->shape = anvil::hlo::Shape(type, dims);
    state->bytes = anvil::core::ByteSize(state->shape);
    if (state->bytes > 0 && !args->data) return Invalid("anvil_buffer_from_host: data is NULL");
    anvil::core::Plugin* plugin = args->device->plugin;
    if (semantics == ANVIL_HOST_BUFFER_IMMUTABLE_ZERO_COPY && state->bytes > 0) {
      auto wrapped = plugin->WrapHost(args->device->index_in_plugin, args->data, state->bytes);
      if (!wrapped.ok()) return ToAbi(wrapped.status());
      if (*wrapped) {
        // In place: defined at once; the caller's memory is theirs again
        // when the last user of this device memory lets go of it.
        auto released = Event::Create();
        state->memory = std::make_shared<DeviceMemory>(plugin, *wrapped);
        state->memory->borrowed = true;
        state->memory->on_release = [released] { released->Set(anvil::hlo::OkStatus()); };
        state->defined = Event::Create();
        state->defined->Set(anvil::hlo::OkStatus());
        *out_buffer = new anvil_buffer(state);
        if (out_host_done) *out_host_done = NewEvent(released);
        return nullptr;
      }
    }
    auto memory = plugin->Allocate(args->device->index_in_plugin, state->bytes);
    if (!memory.ok()) return ToAbi(memory.status());
    state->memory = std::make_shared<DeviceMemory>(plugin, *memory);
    state->defined = Event::Create();
    auto token = std::make_shared<anvil::core::WorkToken>(client->work);
    anvil::core::TraceUntil(*client, state->defined, "copy to device", "transfer",
                            [&] { return "\"bytes\":" + std::to_string(state->bytes); });
    plugin->CopyFromHost(*memory, args->data, state->bytes,
                         anvil::core::Track(token, [state](Status s) { state->defined->Set(std::move(s)); }));
    *out_buffer = new anvil_buffer(state);
    if (out_host_done) {
      *out_host_done = NewEvent(state->defined);
      return nullptr;
    }
    Status copied = state->defined->Await();
    if (!copied.ok()) {
      delete *out_buffer;
      *out_buffer = nullptr;
      return ToAbi(copied);
    }
    return nullptr;
  });
}

anvil_status* anvil_buffer_to_host(anvil_buffer* buffer, void* dst, size_t dst_size, anvil_event** out_done) {
  return Guard("anvil_buffer_to_host", [&]() -> anvil_status* {
    ANVIL_CHECK_NOT_NULL("anvil_buffer_to_host", buffer);
    ANVIL_CHECK_NOT_NULL("anvil_buffer_to_host", out_done);
    std::shared_ptr<BufferState> state = buffer->state;
    if (dst_size != state->bytes) {
      return Invalid("anvil_buffer_to_host: dst_size is " + std::to_string(dst_size) + " but the buffer " +
                     state->shape.ToString(false) + " holds " + std::to_string(state->bytes) + " bytes");
    }
    if (!dst && state->bytes > 0) return Invalid("anvil_buffer_to_host: dst is NULL");
    auto use = std::make_shared<anvil::core::UseRelease>();
    if (anvil_status* bad = AddUse("anvil_buffer_to_host", *state, use.get())) return bad;
    auto done = Event::Create();
    auto token = std::make_shared<anvil::core::WorkToken>(state->device->client->work);
    anvil::core::TraceUntil(*state->device->client, done, "copy to host", "transfer",
                            [&] { return "\"bytes\":" + std::to_string(state->bytes); });
    state->defined->OnReady(anvil::core::Track(token, [state, dst, done, token, use](const Status& defined) {
      if (!defined.ok()) return done->Set(defined);
      std::shared_ptr<DeviceMemory> memory = state->Memory();
      if (!memory) {
        return done->Set(MakeError(StatusCode::kInternal, "anvil_buffer_to_host: the buffer has no memory"));
      }
      DeviceMemory& m = *memory;
      m.plugin->CopyToHost(m.memory, dst, state->bytes,
                           anvil::core::Track(token, [memory, done, use](Status s) mutable {
                             memory.reset();  // before a waiting donation looks at it
                             use->Release();
                             done->Set(std::move(s));
                           }));
    }));
    *out_done = NewEvent(done);
    return nullptr;
  });
}

anvil_status* anvil_buffer_copy_to_device(anvil_buffer* buffer, anvil_device* device, anvil_buffer** out_buffer) {
  return Guard("anvil_buffer_copy_to_device", [&]() -> anvil_status* {
    ANVIL_CHECK_NOT_NULL("anvil_buffer_copy_to_device", buffer);
    ANVIL_CHECK_NOT_NULL("anvil_buffer_copy_to_device", device);
    ANVIL_CHECK_NOT_NULL("anvil_buffer_copy_to_device", out_buffer);
    std::shared_ptr<BufferState> source = buffer->state;
    if (device->client != source->device->client) {
      return Invalid("anvil_buffer_copy_to_device: the device belongs to another client");
    }
    auto use = std::make_shared<anvil::core::UseRelease>();
    if (anvil_status* bad = AddUse("anvil_buffer_copy_to_device", *source, use.get())) return bad;
    auto target = std::make_shared<BufferState>();
    target->device = device;
    target->shape = source->shape;
    target->bytes = source->bytes;
    target->defined = Event::Create();
    // `finish` holds the work token; every stage below holds `finish`.
    auto token = std::make_shared<anvil::core::WorkToken>(device->client->work);
    auto finish = anvil::core::Track(token, [target](Status s) { target->defined->Set(std::move(s)); });
    anvil::core::TraceUntil(*device->client, target->defined, "copy between devices", "transfer",
                            [&] { return "\"bytes\":" + std::to_string(target->bytes); });
    // Through host memory: the plugin ABI has no device-to-device copy, and
    // the two devices may belong to different plugins.
    source->defined->OnReady([source, target, finish, use](const Status& defined) {
      if (!defined.ok()) return finish(defined);
      std::shared_ptr<DeviceMemory> from = source->Memory();
      if (!from) return finish(MakeError(StatusCode::kInternal, "the source buffer has no memory"));
      auto staging = std::make_shared<std::vector<char>>(source->bytes);
      from->plugin->CopyToHost(from->memory, staging->data(), staging->size(),
                               [from, staging, target, finish, use](Status read) mutable {
        from.reset();  // the source is read: a waiting donation may take it
        use->Release();
        if (!read.ok()) return finish(read);
        anvil::core::Plugin* plugin = target->device->plugin;
        auto memory = plugin->Allocate(target->device->index_in_plugin, target->bytes);
        if (!memory.ok()) return finish(memory.status());
        auto owned = std::make_shared<DeviceMemory>(plugin, *memory);
        {
          std::lock_guard<std::mutex> lock(target->mu);
          target->memory = owned;
        }
        plugin->CopyFromHost(*memory, staging->data(), staging->size(),
                             [staging, finish](Status written) { finish(written); });
      });
    });
    *out_buffer = new anvil_buffer(target);
    return nullptr;
  });
}

anvil_status* anvil_buffer_ready_event(anvil_buffer* buffer, anvil_event** out_event) {
  ANVIL_CHECK_NOT_NULL("anvil_buffer_ready_event", buffer);
  ANVIL_CHECK_NOT_NULL("anvil_buffer_ready_event", out_event);
  *out_event = NewEvent(buffer->state->defined);
  return nullptr;
}

anvil_status* anvil_buffer_element_type(anvil_buffer* buffer, int32_t* out_type) {
  ANVIL_CHECK_NOT_NULL("anvil_buffer_element_type", buffer);
  ANVIL_CHECK_NOT_NULL("anvil_buffer_element_type", out_type);
  *out_type = anvil::core::ToAbi(buffer->state->shape.element_type());
  return nullptr;
}

anvil_status* anvil_buffer_dims(anvil_buffer* buffer, const int64_t** out_dims, size_t* out_num_dims) {
  ANVIL_CHECK_NOT_NULL("anvil_buffer_dims", buffer);
  ANVIL_CHECK_NOT_NULL("anvil_buffer_dims", out_dims);
  ANVIL_CHECK_NOT_NULL("anvil_buffer_dims", out_num_dims);
  *out_dims = buffer->state->shape.dims().data();
  *out_num_dims = buffer->state->shape.dims().size();
  return nullptr;
}

anvil_status* anvil_buffer_byte_size(anvil_buffer* buffer, size_t* out_bytes) {
  ANVIL_CHECK_NOT_NULL("anvil_buffer_byte_size", buffer);
  ANVIL_CHECK_NOT_NULL("anvil_buffer_byte_size", out_bytes);
  *out_bytes = buffer->state->bytes;
  return nullptr;
}

anvil_status* anvil_buffer_device(anvil_buffer* buffer, anvil_device** out_device) {
  ANVIL_CHECK_NOT_NULL("anvil_buffer_device", buffer);
  ANVIL_CHECK_NOT_NULL("anvil_buffer_device", out_device);
  *out_device = buffer->state->device;
  return nullptr;
}

anvil_status* anvil_buffer_destroy(anvil_buffer* buffer) {
  // Pending uses hold their own references to the memory.
  delete buffer;
  return nullptr;
}

}  // extern "C"
