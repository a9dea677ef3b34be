// The PJRT plugin through its C table, as a framework calls it: load the
// library, create a client on the CPU plugin, move buffers, compile and run
// a StableHLO program, donate, and check the errors a caller gets.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "pjrt/compile_options.h"
#include "pjrt/pjrt_abi.h"

namespace pabi = anvil::pjrt::abi;
using anvil::pjrt::Buffer;
using anvil::pjrt::Client;
using anvil::pjrt::Device;
using anvil::pjrt::Error;
using anvil::pjrt::Event;
using anvil::pjrt::LoadedExecutable;

namespace {

const pabi::Api* LoadApi() {
  static const pabi::Api* api = [] {
    void* library = dlopen(ANVIL_PJRT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return static_cast<const pabi::Api*>(nullptr);
    auto get = reinterpret_cast<const pabi::Api* (*)()>(dlsym(library, "GetPjrtApi"));
    return get != nullptr ? get() : nullptr;
  }();
  return api;
}

template <typename Args>
Error* Call(pabi::AnyEntry entry, Args& args) {
  args.struct_size = sizeof(Args);
  return reinterpret_cast<Error* (*)(Args*)>(entry)(&args);
}

struct ErrorInfo {
  pabi::ErrorCode code = pabi::kOk;
  std::string message;
};

// Reads and frees an error, as jaxlib does.
ErrorInfo Take(const pabi::Api* api, Error* error) {
  ErrorInfo info;
  if (error == nullptr) return info;
  pabi::ErrorGetCodeArgs code = {};
  code.error = error;
  EXPECT_EQ(Call(api->Error_GetCode, code), nullptr);
  info.code = code.code;
  pabi::ErrorMessageArgs message = {};
  message.struct_size = sizeof(message);
  message.error = error;
  reinterpret_cast<void (*)(pabi::ErrorMessageArgs*)>(api->Error_Message)(&message);
  info.message.assign(message.message, message.message_size);
  pabi::ErrorDestroyArgs destroy = {};
  destroy.struct_size = sizeof(destroy);
  destroy.error = error;
  reinterpret_cast<void (*)(pabi::ErrorDestroyArgs*)>(api->Error_Destroy)(&destroy);
  return info;
}

#define ASSERT_OK(api, call)                          \
  do {                                                \
    ErrorInfo info_ = Take(api, call);                \
    ASSERT_EQ(info_.code, pabi::kOk) << info_.message; \
  } while (0)

class PjrtApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = LoadApi();
    ASSERT_NE(api_, nullptr) << "cannot load " << ANVIL_PJRT_LIBRARY << ": " << dlerror();
    pabi::ClientCreateArgs create = {};
    ASSERT_OK(api_, Call(api_->Client_Create, create));
    client_ = create.client;
    pabi::ClientDevicesArgs devices = {};
    devices.client = client_;
    ASSERT_OK(api_, Call(api_->Client_AddressableDevices, devices));
    ASSERT_GE(devices.num_devices, 1u);
    device_ = devices.devices[0];
  }
  void TearDown() override {
    if (client_ == nullptr) return;
    pabi::ClientArgs destroy = {};
    destroy.client = client_;
    EXPECT_EQ(Take(api_, Call(api_->Client_Destroy, destroy)).code, pabi::kOk);
  }

  Buffer* FromHost(const std::vector<float>& values, std::vector<int64_t> dims,
                   const std::vector<int64_t>* strides = nullptr) {
    pabi::ClientBufferFromHostBufferArgs args = {};
    args.client = client_;
    args.data = values.data();
    args.type = pabi::kTypeF32;
    args.dims = dims.data();
    args.num_dims = dims.size();
    if (strides != nullptr) {
      args.byte_strides = strides->data();
      args.num_byte_strides = strides->size();
    }
    args.host_buffer_semantics = pabi::kImmutableOnlyDuringCall;
    args.device = device_;
    Error* e = Call(api_->Client_BufferFromHostBuffer, args);
    EXPECT_EQ(Take(api_, e).code, pabi::kOk);
    DestroyEvent(args.done_with_host_buffer);
    return args.buffer;
  }

  std::vector<float> ToHost(Buffer* buffer, size_t count) {
    std::vector<float> out(count, -1.0f);
    pabi::BufferToHostBufferArgs args = {};
    args.src = buffer;
    args.dst = out.data();
    args.dst_size = count * sizeof(float);
    ErrorInfo info = Take(api_, Call(api_->Buffer_ToHostBuffer, args));
    EXPECT_EQ(info.code, pabi::kOk) << info.message;
    if (info.code != pabi::kOk) return {};
    pabi::EventArgs await = {};
    await.event = args.event;
    EXPECT_EQ(Take(api_, Call(api_->Event_Await, await)).code, pabi::kOk);
    DestroyEvent(args.event);
    return out;
  }

  void DestroyEvent(Event* event) {
    if (event == nullptr) return;
    pabi::EventArgs args = {};
    args.event = event;
    EXPECT_EQ(Call(api_->Event_Destroy, args), nullptr);
  }
  void DestroyBuffer(Buffer* buffer) {
    pabi::BufferArgs args = {};
    args.buffer = buffer;
    EXPECT_EQ(Call(api_->Buffer_Destroy, args), nullptr);
  }

  ErrorInfo Compile(const std::string& text, LoadedExecutable** out, const std::string& options = "") {
    pabi::Program program = {};
    program.struct_size = sizeof(program);
    program.code = const_cast<char*>(text.data());
    program.code_size = text.size();
    program.format = "mlir";
    program.format_size = 4;
    pabi::ClientCompileArgs args = {};
    args.client = client_;
    args.program = &program;
    args.compile_options = options.data();
    args.compile_options_size = options.size();
    ErrorInfo info = Take(api_, Call(api_->Client_Compile, args));
    *out = args.executable;
    return info;
  }

  ErrorInfo Execute(LoadedExecutable* executable, std::vector<Buffer*> inputs, std::vector<Buffer*>& outputs) {
    pabi::LoadedExecutableExecuteArgs args = {};
    pabi::ExecuteOptions options = {};
    options.struct_size = sizeof(options);
    args.executable = executable;
    args.options = &options;
    Buffer* const* lists[1] = {inputs.data()};
    args.argument_lists = lists;
    args.num_devices = 1;
    args.num_args = inputs.size();
    Buffer** output_list[1] = {outputs.data()};
    args.output_lists = output_list;
    Event* done[1] = {nullptr};
    args.device_complete_events = done;
    ErrorInfo info = Take(api_, Call(api_->LoadedExecutable_Execute, args));
    if (done[0] != nullptr) {
      pabi::EventArgs await = {};
      await.event = done[0];
      EXPECT_EQ(Take(api_, Call(api_->Event_Await, await)).code, pabi::kOk);
      DestroyEvent(done[0]);
    }
    return info;
  }

  void DestroyExecutable(LoadedExecutable* executable) {
    pabi::LoadedExecutableArgs args = {};
    args.executable = executable;
    EXPECT_EQ(Call(api_->LoadedExecutable_Destroy, args), nullptr);
  }

  const pabi::Api* api_ = nullptr;
  Client* client_ = nullptr;
  Device* device_ = nullptr;
};

constexpr char kScaleAndShift[] = R"(
module @jit_f {
  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %two = stablehlo.constant dense<2.0> : tensor<4xf32>
    %one = stablehlo.constant dense<1.0> : tensor<4xf32>
    %0 = stablehlo.multiply %x, %two : tensor<4xf32>
    %1 = stablehlo.add %0, %one : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
)";

constexpr char kDonatingAdd[] = R"(
module @jit_g {
  func.func public @main(%x: tensor<4xf32> {jax.buffer_donor = true}, %y: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %x, %y : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)";

TEST(PjrtApi, TableIsVersion0112WithEveryEntry) {
  const pabi::Api* api = LoadApi();
  ASSERT_NE(api, nullptr) << dlerror();
  EXPECT_EQ(api->struct_size, 1144u);
  EXPECT_EQ(api->pjrt_api_version.major_version, 0);
  EXPECT_EQ(api->pjrt_api_version.minor_version, 112);
  const pabi::AnyEntry* entries = &api->Error_Destroy;
  size_t count = (sizeof(pabi::Api) - offsetof(pabi::Api, Error_Destroy)) / sizeof(pabi::AnyEntry);
  EXPECT_EQ(count, 138u);
  for (size_t i = 0; i < count; ++i) EXPECT_NE(entries[i], nullptr) << "entry " << i;
}

TEST(PjrtApi, UnimplementedEntryNamesItself) {
  const pabi::Api* api = LoadApi();
  ASSERT_NE(api, nullptr);
  pabi::EventArgs args = {};  // any struct: the entry reads nothing
  ErrorInfo info = Take(api, Call(api->TopologyDescription_Create, args));
  EXPECT_EQ(info.code, pabi::kUnimplemented);
  EXPECT_NE(info.message.find("PJRT_TopologyDescription_Create"), std::string::npos) << info.message;
}

TEST_F(PjrtApiTest, PlatformAndDevices) {
  pabi::ClientStringArgs name = {};
  name.client = client_;
  ASSERT_OK(api_, Call(api_->Client_PlatformName, name));
  EXPECT_EQ(std::string(name.value, name.value_size), "anvil");
  pabi::DeviceGetDescriptionArgs description = {};
  description.device = device_;
  ASSERT_OK(api_, Call(api_->Device_GetDescription, description));
  pabi::DeviceDescriptionStringArgs kind = {};
  kind.device_description = description.device_description;
  ASSERT_OK(api_, Call(api_->DeviceDescription_Kind, kind));
  EXPECT_EQ(std::string(kind.value, kind.value_size), "cpu");
  pabi::DeviceDefaultMemoryArgs memory = {};
  memory.device = device_;
  ASSERT_OK(api_, Call(api_->Device_DefaultMemory, memory));
  pabi::MemoryStringArgs memory_kind = {};
  memory_kind.memory = memory.memory;
  ASSERT_OK(api_, Call(api_->Memory_Kind, memory_kind));
  EXPECT_EQ(std::string(memory_kind.value, memory_kind.value_size), "device");
}

TEST_F(PjrtApiTest, CompileExecuteAndReadBack) {
  LoadedExecutable* executable = nullptr;
  ErrorInfo compiled = Compile(kScaleAndShift, &executable);
  ASSERT_EQ(compiled.code, pabi::kOk) << compiled.message;
  Buffer* x = FromHost({0, 1, 2, 3}, {4});
  std::vector<Buffer*> outputs(1, nullptr);
  ErrorInfo ran = Execute(executable, {x}, outputs);
  ASSERT_EQ(ran.code, pabi::kOk) << ran.message;
  EXPECT_EQ(ToHost(outputs[0], 4), (std::vector<float>{1, 3, 5, 7}));
  // A wrong argument count is refused with both counts.
  std::vector<Buffer*> none(1, nullptr);
  ErrorInfo wrong = Execute(executable, {x, x}, none);
  EXPECT_EQ(wrong.code, pabi::kInvalidArgument);
  EXPECT_NE(wrong.message.find("2 arguments given; the program takes 1"), std::string::npos) << wrong.message;
  DestroyBuffer(outputs[0]);
  DestroyBuffer(x);
  DestroyExecutable(executable);
}

TEST_F(PjrtApiTest, StridedHostBufferIsGathered) {
  // A 2x2 array given column-major through byte strides.
  std::vector<float> column_major = {1, 3, 2, 4};
  std::vector<int64_t> strides = {4, 8};
  Buffer* b = FromHost(column_major, {2, 2}, &strides);
  EXPECT_EQ(ToHost(b, 4), (std::vector<float>{1, 2, 3, 4}));
  DestroyBuffer(b);
}

TEST_F(PjrtApiTest, ToHostBufferWritesTheRequestedLayout) {
  Buffer* b = FromHost({1, 2, 3, 4, 5, 6}, {2, 3});
  // Column-major: minor_to_major {0, 1}.
  std::vector<int64_t> minor_to_major = {0, 1};
  pabi::MemoryLayout layout = {};
  layout.struct_size = sizeof(layout);
  layout.type = pabi::kLayoutTiled;
  layout.tiled.struct_size = sizeof(layout.tiled);
  layout.tiled.minor_to_major = minor_to_major.data();
  layout.tiled.minor_to_major_size = 2;
  std::vector<float> out(6, -1.0f);
  pabi::BufferToHostBufferArgs args = {};
  args.src = b;
  args.host_layout = &layout;
  args.dst = out.data();
  args.dst_size = out.size() * sizeof(float);
  ASSERT_OK(api_, Call(api_->Buffer_ToHostBuffer, args));
  pabi::EventArgs await = {};
  await.event = args.event;
  ASSERT_OK(api_, Call(api_->Event_Await, await));
  DestroyEvent(args.event);
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // A size query answers without copying.
  pabi::BufferToHostBufferArgs query = {};
  query.src = b;
  ASSERT_OK(api_, Call(api_->Buffer_ToHostBuffer, query));
  EXPECT_EQ(query.dst_size, 24u);
  EXPECT_EQ(query.event, nullptr);
  // After Buffer_Delete the contents are gone, and reading says so.
  pabi::BufferArgs del = {};
  del.buffer = b;
  ASSERT_OK(api_, Call(api_->Buffer_Delete, del));
  pabi::BufferToHostBufferArgs late = {};
  late.src = b;
  late.dst = out.data();
  late.dst_size = 24;
  ErrorInfo info = Take(api_, Call(api_->Buffer_ToHostBuffer, late));
  EXPECT_EQ(info.code, pabi::kFailedPrecondition);
  EXPECT_NE(info.message.find("deleted"), std::string::npos) << info.message;
  DestroyBuffer(b);
}

TEST_F(PjrtApiTest, DonatedBufferIsDeletedAndRefused) {
  LoadedExecutable* executable = nullptr;
  ErrorInfo compiled = Compile(kDonatingAdd, &executable);
  ASSERT_EQ(compiled.code, pabi::kOk) << compiled.message;
  Buffer* x = FromHost({1, 2, 3, 4}, {4});
  Buffer* y = FromHost({10, 20, 30, 40}, {4});
  std::vector<Buffer*> outputs(1, nullptr);
  ErrorInfo ran = Execute(executable, {x, y}, outputs);
  ASSERT_EQ(ran.code, pabi::kOk) << ran.message;
  EXPECT_EQ(ToHost(outputs[0], 4), (std::vector<float>{11, 22, 33, 44}));
  pabi::BufferIsDeletedArgs deleted = {};
  deleted.buffer = x;
  ASSERT_OK(api_, Call(api_->Buffer_IsDeleted, deleted));
  EXPECT_TRUE(deleted.is_deleted);
  deleted.buffer = y;
  ASSERT_OK(api_, Call(api_->Buffer_IsDeleted, deleted));
  EXPECT_FALSE(deleted.is_deleted);
  std::vector<Buffer*> again(1, nullptr);
  ErrorInfo reused = Execute(executable, {x, y}, again);
  EXPECT_EQ(reused.code, pabi::kFailedPrecondition);
  EXPECT_NE(reused.message.find("argument 0 was deleted or donated"), std::string::npos) << reused.message;
  DestroyBuffer(outputs[0]);
  DestroyBuffer(x);
  DestroyBuffer(y);
  DestroyExecutable(executable);
}

TEST_F(PjrtApiTest, MalformedProgramIsInvalidArgumentWithPosition) {
  LoadedExecutable* executable = nullptr;
  ErrorInfo info = Compile("module { func.func @main( }", &executable);
  EXPECT_EQ(info.code, pabi::kInvalidArgument);
  EXPECT_NE(info.message.find("1:"), std::string::npos) << info.message;
  EXPECT_EQ(executable, nullptr);
}

TEST_F(PjrtApiTest, ReplicasAboveOneAreUnimplemented) {
  // CompileOptionsProto{executable_build_options (3): {num_replicas (4): 2}}
  std::string options = {0x1a, 0x02, 0x20, 0x02};
  LoadedExecutable* executable = nullptr;
  ErrorInfo info = Compile(kScaleAndShift, &executable, options);
  EXPECT_EQ(info.code, pabi::kUnimplemented);
  EXPECT_NE(info.message.find("2 replicas"), std::string::npos) << info.message;
}

TEST(PjrtCompileOptions, ReadsReplicasPartitionsAndSkipsUnknownFields) {
  // field 1 (varint 7), field 3 {field 2 (bytes "ab"), 4: 1, 5: 3, 1: -1}
  std::string bytes = {0x08, 0x07, 0x1a, 0x13, 0x12, 0x02, 'a', 'b', 0x20, 0x01, 0x28, 0x03, 0x08};
  for (int i = 0; i < 9; ++i) bytes.push_back(static_cast<char>(0xff));
  bytes.push_back(0x01);
  anvil::pjrt::CompileOptions options;
  std::string error;
  ASSERT_TRUE(anvil::pjrt::ParseCompileOptions(bytes, options, error)) << error;
  EXPECT_EQ(options.num_replicas, 1);
  EXPECT_EQ(options.num_partitions, 3);
  EXPECT_EQ(options.device_ordinal, -1);
  std::string truncated = bytes.substr(0, 7);
  EXPECT_FALSE(anvil::pjrt::ParseCompileOptions(truncated, options, error));
  EXPECT_NE(error.find("malformed CompileOptionsProto at byte 2"), std::string::npos) << error;
}

}  // namespace
