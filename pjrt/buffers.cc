// Buffers between the framework's host memory and an Anvil device.
#include "pjrt/buffers.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <numeric>

#include "pjrt/entries.h"
#include "pjrt/errors.h"
#include "pjrt/events.h"
#include "pjrt/types.h"

namespace anvil::pjrt {

Buffer* WrapBuffer(Client* client, Device* device, anvil_buffer* handle) {
  auto* buffer = new Buffer;
  buffer->client = client;
  buffer->device = device;
  buffer->anvil = handle;
  int32_t type = 0;
  anvil_buffer_element_type(handle, &type);
  buffer->type = PjrtTypeFromAnvil(type);
  const int64_t* dims = nullptr;
  size_t rank = 0;
  anvil_buffer_dims(handle, &dims, &rank);
  buffer->dims.assign(dims, dims + rank);
  for (size_t i = rank; i-- > 0;) buffer->minor_to_major.push_back(static_cast<int64_t>(i));
  anvil_buffer_byte_size(handle, &buffer->byte_size);
  return buffer;
}

namespace {

// The live Anvil handle of a buffer, or the error its use gets.
StatusOrError<anvil_buffer*> LiveHandle(Buffer* buffer, const char* function) {
  std::lock_guard<std::mutex> lock(buffer->mu);
  if (buffer->deleted || buffer->anvil == nullptr) {
    return MakeError(abi::kFailedPrecondition,
                     std::string(function) + ": the buffer was deleted or donated to an execution");
  }
  return buffer->anvil;
}

// Dims as given, each checked non-negative.
StatusOrError<std::vector<int64_t>> ReadDims(const int64_t* dims, size_t num_dims, const char* function) {
  std::vector<int64_t> out(dims, dims + num_dims);
  for (size_t i = 0; i < num_dims; ++i) {
    if (out[i] < 0) {
      return MakeError(abi::kInvalidArgument, std::string(function) + ": dimension " + std::to_string(i) + " is " +
                                                  std::to_string(out[i]) + "; dynamic dimensions are not supported");
    }
  }
  return out;
}

// The byte strides a host layout describes; nullopt-free: an empty vector
// means dense row-major.
StatusOrError<std::vector<int64_t>> HostLayoutStrides(const abi::MemoryLayout* layout, const std::vector<int64_t>& dims,
                                                      size_t element_bytes, const char* function) {
  if (layout == nullptr) return std::vector<int64_t>{};
  if (layout->type == abi::kLayoutStrides) {
    if (layout->strides.num_byte_strides != dims.size()) {
      return MakeError(abi::kInvalidArgument, std::string(function) + ": the layout has " +
                                                  std::to_string(layout->strides.num_byte_strides) +
                                                  " byte strides for an array of rank " + std::to_string(dims.size()));
    }
    return std::vector<int64_t>(layout->strides.byte_strides, layout->strides.byte_strides + dims.size());
  }
  const abi::MemoryLayoutTiled& tiled = layout->tiled;
  if (tiled.num_tiles != 0) {
    return MakeError(abi::kUnimplemented, std::string(function) + ": tiled host layouts are not supported");
  }
  if (tiled.minor_to_major_size != dims.size()) {
    return MakeError(abi::kInvalidArgument, std::string(function) + ": minor_to_major has " +
                                                std::to_string(tiled.minor_to_major_size) + " entries for rank " +
                                                std::to_string(dims.size()));
  }
  std::vector<int64_t> order(tiled.minor_to_major, tiled.minor_to_major + dims.size());
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i)) {
      return MakeError(abi::kInvalidArgument, std::string(function) + ": minor_to_major is not a permutation");
    }
  }
  return ByteStridesForLayout(dims, order, element_bytes);
}

bool IsRowMajor(const std::vector<int64_t>& strides, const std::vector<int64_t>& dims, size_t element_bytes) {
  if (strides.empty()) return true;
  std::vector<int64_t> dense = RowMajorByteStrides(dims, element_bytes);
  for (size_t i = 0; i < dims.size(); ++i) {
    // A dimension of extent 1 may have any stride.
    if (dims[i] != 1 && strides[i] != dense[i]) return false;
  }
  return true;
}

// Host memory that stays alive until a copy that uses it is done.
struct HostCopy {
  std::vector<char> bytes;
};

}  // namespace

namespace entry {

Error* Client_BufferFromHostBuffer(abi::ClientBufferFromHostBufferArgs* args) {
  constexpr const char* kFn = "PJRT_Client_BufferFromHostBuffer";
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientBufferFromHostBufferArgs, buffer, kFn);
  Client* client = args->client;
  Device* device = args->device;
  if (device == nullptr && args->memory != nullptr) device = args->memory->device;
  if (device == nullptr) device = client->device_list.front();
  std::optional<int32_t> anvil_type = AnvilTypeFromPjrt(args->type);
  if (!anvil_type) {
    return MakeError(abi::kUnimplemented,
                     std::string(kFn) + ": Anvil has no element type for " + PjrtTypeName(args->type));
  }
  auto dims = ReadDims(args->dims, args->num_dims, kFn);
  if (dims.error) return dims.error;
  const size_t element_bytes = ElementBytes(args->type);
  if (args->device_layout != nullptr) {
    auto device_strides = HostLayoutStrides(args->device_layout, dims.value, element_bytes, kFn);
    if (device_strides.error) return device_strides.error;
    if (!IsRowMajor(device_strides.value, dims.value, element_bytes)) {
      return MakeError(abi::kUnimplemented, std::string(kFn) + ": Anvil devices hold arrays row-major only");
    }
  }

  // Non-dense strides: gather into a dense copy first, which the device
  // then copies from (the caller's memory is free once this returns).
  const void* data = args->data;
  std::shared_ptr<HostCopy> gathered;
  if (args->byte_strides != nullptr && args->num_byte_strides > 0) {
    if (args->num_byte_strides != dims.value.size()) {
      return MakeError(abi::kInvalidArgument, std::string(kFn) + ": " + std::to_string(args->num_byte_strides) +
                                                  " byte strides for an array of rank " +
                                                  std::to_string(dims.value.size()));
    }
    std::vector<int64_t> strides(args->byte_strides, args->byte_strides + args->num_byte_strides);
    if (!IsRowMajor(strides, dims.value, element_bytes)) {
      int64_t count = std::accumulate(dims.value.begin(), dims.value.end(), int64_t{1}, std::multiplies<>());
      gathered = std::make_shared<HostCopy>();
      gathered->bytes.resize(static_cast<size_t>(count) * element_bytes);
      StridedCopy(static_cast<const char*>(args->data), strides, gathered->bytes.data(),
                  RowMajorByteStrides(dims.value, element_bytes), dims.value, element_bytes);
      data = gathered->bytes.data();
    }
  }

  // Sub-byte integers: PJRT's unpacked host buffers (ml_dtypes) keep only the
  // element's low bits in its byte (int4 -3 is 0x0D); Anvil's devices hold
  // them sign-extended (signed) or zero-extended (unsigned) to the byte, as
  // the plugins' kernels read them (the CPU plugin's s4 dot, the GPU loads).
  const int sub_byte_bits = args->type == abi::kTypeS4 || args->type == abi::kTypeU4   ? 4
                            : args->type == abi::kTypeS2 || args->type == abi::kTypeU2 ? 2
                                                                                       : 0;
  if (sub_byte_bits != 0) {
    int64_t count = std::accumulate(dims.value.begin(), dims.value.end(), int64_t{1}, std::multiplies<>());
    if (gathered == nullptr) {
      gathered = std::make_shared<HostCopy>();
      const char* src = static_cast<const char*>(data);
      gathered->bytes.assign(src, src + count);
      data = gathered->bytes.data();
    }
    const bool is_signed = args->type == abi::kTypeS4 || args->type == abi::kTypeS2;
    const int shift = 8 - sub_byte_bits;
    for (char& byte : gathered->bytes) {
      const uint8_t u = static_cast<uint8_t>(static_cast<uint8_t>(byte) << shift);
      byte = static_cast<char>(is_signed ? static_cast<int8_t>(u) >> shift : u >> shift);
    }
  }

  anvil_buffer_from_host_args from = {};
  from.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
  from.device = device->anvil;
  from.data = data;
  from.element_type = *anvil_type;
  from.dims = dims.value.data();
  from.num_dims = dims.value.size();
  // Zero copy only where the caller promised to keep the memory unchanged
  // and there was nothing to gather; a mutable zero-copy buffer would let
  // the framework see device writes, which Anvil does not promise.
  bool zero_copy = args->host_buffer_semantics == abi::kImmutableZeroCopy && gathered == nullptr;
  from.host_buffer_semantics = zero_copy ? ANVIL_HOST_BUFFER_IMMUTABLE_ZERO_COPY : ANVIL_HOST_BUFFER_COPY;

  bool wait_here = args->host_buffer_semantics == abi::kImmutableOnlyDuringCall ||
                   args->host_buffer_semantics == abi::kMutableZeroCopy || gathered != nullptr;
  anvil_buffer* handle = nullptr;
  anvil_event* host_done = nullptr;
  if (Error* e = FromStatus(anvil_buffer_from_host(client->anvil, &from, &handle, wait_here ? nullptr : &host_done), kFn)) {
    return e;
  }
  args->buffer = WrapBuffer(client, device, handle);
  args->done_with_host_buffer = host_done != nullptr ? EventFromAnvil(host_done) : ReadyEvent();
  return nullptr;
}

Error* Buffer_Destroy(abi::BufferArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferArgs, buffer, "PJRT_Buffer_Destroy");
  Buffer* buffer = args->buffer;
  if (buffer == nullptr) return nullptr;
  if (buffer->anvil != nullptr) anvil_buffer_destroy(buffer->anvil);
  delete buffer;
  return nullptr;
}

Error* Buffer_Delete(abi::BufferArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferArgs, buffer, "PJRT_Buffer_Delete");
  Buffer* buffer = args->buffer;
  anvil_buffer* handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(buffer->mu);
    buffer->deleted = true;
    std::swap(handle, buffer->anvil);
  }
  // Anvil releases the memory once executions already using it finish.
  if (handle != nullptr) anvil_buffer_destroy(handle);
  return nullptr;
}

Error* Buffer_IsDeleted(abi::BufferIsDeletedArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferIsDeletedArgs, is_deleted, "PJRT_Buffer_IsDeleted");
  std::lock_guard<std::mutex> lock(args->buffer->mu);
  args->is_deleted = args->buffer->deleted;
  return nullptr;
}

Error* Buffer_ElementType(abi::BufferElementTypeArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferElementTypeArgs, type, "PJRT_Buffer_ElementType");
  args->type = args->buffer->type;
  return nullptr;
}

Error* Buffer_Dimensions(abi::BufferDimensionsArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferDimensionsArgs, num_dims, "PJRT_Buffer_Dimensions");
  args->dims = args->buffer->dims.data();
  args->num_dims = args->buffer->dims.size();
  return nullptr;
}

Error* Buffer_UnpaddedDimensions(abi::BufferDimensionsArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferDimensionsArgs, num_dims, "PJRT_Buffer_UnpaddedDimensions");
  args->dims = args->buffer->dims.data();
  args->num_dims = args->buffer->dims.size();
  return nullptr;
}

Error* Buffer_DynamicDimensionIndices(abi::BufferDynamicDimensionIndicesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferDynamicDimensionIndicesArgs, num_dynamic_dims,
                        "PJRT_Buffer_DynamicDimensionIndices");
  args->dynamic_dim_indices = nullptr;
  args->num_dynamic_dims = 0;
  return nullptr;
}

Error* Buffer_GetMemoryLayout(abi::BufferGetMemoryLayoutArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferGetMemoryLayoutArgs, layout, "PJRT_Buffer_GetMemoryLayout");
  abi::MemoryLayout& layout = args->layout;
  layout.struct_size = sizeof(abi::MemoryLayout);
  layout.extension_start = nullptr;
  layout.type = abi::kLayoutTiled;
  layout.tiled = {};
  layout.tiled.struct_size = sizeof(abi::MemoryLayoutTiled);
  layout.tiled.minor_to_major = args->buffer->minor_to_major.data();
  layout.tiled.minor_to_major_size = args->buffer->minor_to_major.size();
  layout.tiled.num_tiles = 0;
  return nullptr;
}

Error* Buffer_OnDeviceSizeInBytes(abi::BufferOnDeviceSizeInBytesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferOnDeviceSizeInBytesArgs, on_device_size_in_bytes,
                        "PJRT_Buffer_OnDeviceSizeInBytes");
  args->on_device_size_in_bytes = args->buffer->byte_size;
  return nullptr;
}

Error* Buffer_Device(abi::BufferDeviceArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferDeviceArgs, device, "PJRT_Buffer_Device");
  args->device = args->buffer->device;
  return nullptr;
}

Error* Buffer_Memory(abi::BufferMemoryArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferMemoryArgs, memory, "PJRT_Buffer_Memory");
  args->memory = args->buffer->device->memory.get();
  return nullptr;
}

Error* Buffer_IsOnCpu(abi::BufferIsOnCpuArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferIsOnCpuArgs, is_on_cpu, "PJRT_Buffer_IsOnCpu");
  // Anvil gives no pointer into device memory, so the framework must copy
  // out through PJRT_Buffer_ToHostBuffer even for the CPU plugin.
  args->is_on_cpu = false;
  return nullptr;
}

Error* Buffer_ReadyEvent(abi::BufferReadyEventArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferReadyEventArgs, event, "PJRT_Buffer_ReadyEvent");
  auto handle = LiveHandle(args->buffer, "PJRT_Buffer_ReadyEvent");
  if (handle.error) return handle.error;
  anvil_event* ready = nullptr;
  if (Error* e = FromStatus(anvil_buffer_ready_event(handle.value, &ready), "PJRT_Buffer_ReadyEvent")) return e;
  args->event = EventFromAnvil(ready);
  return nullptr;
}

Error* Buffer_ToHostBuffer(abi::BufferToHostBufferArgs* args) {
  constexpr const char* kFn = "PJRT_Buffer_ToHostBuffer";
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferToHostBufferArgs, event, kFn);
  Buffer* buffer = args->src;
  size_t element_bytes = ElementBytes(buffer->type);
  auto strides = HostLayoutStrides(args->host_layout, buffer->dims, element_bytes, kFn);
  if (strides.error) return strides.error;
  bool row_major = IsRowMajor(strides.value, buffer->dims, element_bytes);
  if (args->dst == nullptr) {
    // A size query: every layout we accept is dense, so the size is the same.
    args->dst_size = buffer->byte_size;
    return nullptr;
  }
  if (args->dst_size < buffer->byte_size) {
    return MakeError(abi::kInvalidArgument, std::string(kFn) + ": dst_size is " + std::to_string(args->dst_size) +
                                                " bytes, the buffer holds " + std::to_string(buffer->byte_size));
  }
  auto handle = LiveHandle(buffer, kFn);
  if (handle.error) return handle.error;
  if (row_major) {
    anvil_event* done = nullptr;
    if (Error* e = FromStatus(anvil_buffer_to_host(handle.value, args->dst, buffer->byte_size, &done), kFn)) return e;
    args->event = EventFromAnvil(done);
    return nullptr;
  }
  // Another layout: copy out row-major, then scatter into the caller's
  // layout once the copy has landed.
  auto staging = std::make_shared<HostCopy>();
  staging->bytes.resize(buffer->byte_size);
  anvil_event* done = nullptr;
  if (Error* e = FromStatus(anvil_buffer_to_host(handle.value, staging->bytes.data(), buffer->byte_size, &done), kFn)) {
    return e;
  }
  Event* copied = EventFromAnvil(done);
  auto* out = new Event;
  auto out_state = out->state;
  std::vector<int64_t> dims = buffer->dims;
  std::vector<int64_t> dst_strides = strides.value;
  char* dst = static_cast<char*>(args->dst);
  copied->state->OnReady([=](abi::ErrorCode code, const std::string& message) {
    if (code == abi::kOk) {
      StridedCopy(staging->bytes.data(), RowMajorByteStrides(dims, element_bytes), dst, dst_strides, dims,
                  element_bytes);
    }
    out_state->Set(code, message);
  });
  delete copied;
  args->event = out;
  return nullptr;
}

Error* Buffer_CopyToDevice(abi::BufferCopyToDeviceArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferCopyToDeviceArgs, dst_buffer, "PJRT_Buffer_CopyToDevice");
  auto handle = LiveHandle(args->buffer, "PJRT_Buffer_CopyToDevice");
  if (handle.error) return handle.error;
  anvil_buffer* copy = nullptr;
  if (Error* e = FromStatus(anvil_buffer_copy_to_device(handle.value, args->dst_device->anvil, &copy),
                            "PJRT_Buffer_CopyToDevice")) {
    return e;
  }
  args->dst_buffer = WrapBuffer(args->buffer->client, args->dst_device, copy);
  return nullptr;
}

Error* Buffer_CopyToMemory(abi::BufferCopyToMemoryArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferCopyToMemoryArgs, dst_buffer, "PJRT_Buffer_CopyToMemory");
  auto handle = LiveHandle(args->buffer, "PJRT_Buffer_CopyToMemory");
  if (handle.error) return handle.error;
  Device* device = args->dst_memory->device;
  anvil_buffer* copy = nullptr;
  if (Error* e = FromStatus(anvil_buffer_copy_to_device(handle.value, device->anvil, &copy),
                            "PJRT_Buffer_CopyToMemory")) {
    return e;
  }
  args->dst_buffer = WrapBuffer(args->buffer->client, device, copy);
  return nullptr;
}

Error* Buffer_IncreaseExternalReferenceCount(abi::BufferArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferArgs, buffer, "PJRT_Buffer_IncreaseExternalReferenceCount");
  std::lock_guard<std::mutex> lock(args->buffer->mu);
  ++args->buffer->external_references;
  return nullptr;
}

Error* Buffer_DecreaseExternalReferenceCount(abi::BufferArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::BufferArgs, buffer, "PJRT_Buffer_DecreaseExternalReferenceCount");
  std::lock_guard<std::mutex> lock(args->buffer->mu);
  if (args->buffer->external_references == 0) {
    return MakeError(abi::kFailedPrecondition,
                     "PJRT_Buffer_DecreaseExternalReferenceCount: the buffer has no external reference");
  }
  --args->buffer->external_references;
  return nullptr;
}

}  // namespace entry
}  // namespace anvil::pjrt
