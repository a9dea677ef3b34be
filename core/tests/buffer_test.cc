// Buffers and events through the C ABI: transfers, copies between devices,
// shape queries, transfer faults, callbacks.
#include <atomic>

#include "core/tests/test_util.h"

namespace anvil::testing {
namespace {

class BufferTest : public ClientTest {};

TEST_F(BufferTest, RoundTripsThroughTheDevice) {
  anvil_buffer* b = FromHost({1, 2, 3, 4, 5, 6}, {2, 3});
  ASSERT_NE(b, nullptr);
  int32_t type = 0;
  const int64_t* dims = nullptr;
  size_t rank = 0, bytes = 0;
  ANVIL_ASSERT_OK(anvil_buffer_element_type(b, &type));
  ANVIL_ASSERT_OK(anvil_buffer_dims(b, &dims, &rank));
  ANVIL_ASSERT_OK(anvil_buffer_byte_size(b, &bytes));
  EXPECT_EQ(type, ANVIL_F32);
  ASSERT_EQ(rank, 2u);
  EXPECT_EQ(dims[0], 2);
  EXPECT_EQ(dims[1], 3);
  EXPECT_EQ(bytes, 24u);
  EXPECT_EQ(ToHost(b), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  ANVIL_EXPECT_OK(anvil_buffer_destroy(b));
}

TEST_F(BufferTest, HostDoneEventSaysWhenDataMayBeReused) {
  SetFaults("delay_ms=20");
  std::vector<float> data = {7, 8};
  int64_t dims[] = {2};
  anvil_buffer_from_host_args args{};
  args.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
  args.device = device_;
  args.data = data.data();
  args.element_type = ANVIL_F32;
  args.dims = dims;
  args.num_dims = 1;
  anvil_buffer* b = nullptr;
  anvil_event* host_done = nullptr;
  ANVIL_ASSERT_OK(anvil_buffer_from_host(client_, &args, &b, &host_done));
  ANVIL_ASSERT_OK(anvil_event_await(host_done));
  int32_t ready = 0;
  ANVIL_ASSERT_OK(anvil_event_is_ready(host_done, &ready));
  EXPECT_EQ(ready, 1);
  data[0] = -1;  // reusing the host memory now must not change the buffer
  EXPECT_EQ(ToHost(b), (std::vector<float>{7, 8}));
  anvil_event_destroy(host_done);
  anvil_buffer_destroy(b);
}

TEST_F(BufferTest, CopiesToAnotherDevice) {
  anvil_device* other = nullptr;
  ANVIL_ASSERT_OK(anvil_client_device(client_, 1, &other));
  anvil_buffer* b = FromHost({1, 2, 3}, {3});
  anvil_buffer* c = nullptr;
  ANVIL_ASSERT_OK(anvil_buffer_copy_to_device(b, other, &c));
  anvil_device* where = nullptr;
  ANVIL_ASSERT_OK(anvil_buffer_device(c, &where));
  EXPECT_EQ(where, other);
  anvil_buffer_destroy(b);  // the copy does not depend on the source handle
  EXPECT_EQ(ToHost(c), (std::vector<float>{1, 2, 3}));
  anvil_buffer_destroy(c);
}

TEST_F(BufferTest, CopiesAcrossPlugins) {
  anvil_plugin_load_args load{};
  load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
  load.name = "test_old";
  ANVIL_ASSERT_OK(anvil_client_load_plugin(client_, &load));
  anvil_device* other = nullptr;
  ANVIL_ASSERT_OK(anvil_client_device(client_, 2, &other));
  anvil_device_properties p{};
  p.struct_size = ANVIL_DEVICE_PROPERTIES_STRUCT_SIZE;
  ANVIL_ASSERT_OK(anvil_device_get_properties(other, &p));
  ASSERT_STREQ(p.plugin, "test_old");
  anvil_buffer* b = FromHost({4, 5, 6}, {3});
  anvil_buffer* c = nullptr;
  ANVIL_ASSERT_OK(anvil_buffer_copy_to_device(b, other, &c));
  EXPECT_EQ(ToHost(c), (std::vector<float>{4, 5, 6}));
  anvil_buffer_destroy(b);
  anvil_buffer_destroy(c);
}

TEST_F(BufferTest, TransferFaultsReachTheCaller) {
  SetFaults("allocate");
  int64_t dims[] = {1};
  float value = 1;
  anvil_buffer_from_host_args args{};
  args.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
  args.device = device_;
  args.data = &value;
  args.element_type = ANVIL_F32;
  args.dims = dims;
  args.num_dims = 1;
  anvil_buffer* b = nullptr;
  Outcome alloc = Take(anvil_buffer_from_host(client_, &args, &b, nullptr));
  EXPECT_EQ(alloc.code, ANVIL_RESOURCE_EXHAUSTED);
  EXPECT_EQ(alloc.message, "test: injected allocation failure");
  SetFaults("copy_from_host");
  Outcome upload = Take(anvil_buffer_from_host(client_, &args, &b, nullptr));
  EXPECT_EQ(upload.code, ANVIL_INTERNAL);
  EXPECT_EQ(upload.message, "test: injected host-to-device failure");
  SetFaults("");
  b = FromHost({1}, {1});
  SetFaults("copy_to_host");
  float out = 0;
  anvil_event* done = nullptr;
  ANVIL_ASSERT_OK(anvil_buffer_to_host(b, &out, sizeof(out), &done));
  Outcome download = Take(anvil_event_await(done));
  EXPECT_EQ(download.code, ANVIL_INTERNAL);
  EXPECT_EQ(download.message, "test: injected device-to-host failure");
  anvil_event_destroy(done);
  anvil_buffer_destroy(b);
}

TEST_F(BufferTest, WrongSizesAndTypesAreRefused) {
  anvil_buffer* b = FromHost({1, 2}, {2});
  float small[1];
  anvil_event* done = nullptr;
  Outcome o = Take(anvil_buffer_to_host(b, small, sizeof(small), &done));
  EXPECT_EQ(o.code, ANVIL_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "anvil_buffer_to_host: dst_size is 4 but the buffer f32[2] holds 8 bytes");
  anvil_buffer_from_host_args args{};
  args.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
  args.device = device_;
  args.element_type = 77;
  anvil_buffer* c = nullptr;
  EXPECT_EQ(Take(anvil_buffer_from_host(client_, &args, &c, nullptr)).code, ANVIL_INVALID_ARGUMENT);
  anvil_buffer_destroy(b);
}

TEST_F(BufferTest, OnReadyCallbacksRunOnce) {
  SetFaults("delay_ms=10");
  anvil_buffer* b = FromHost({1}, {1});
  anvil_event* ready = nullptr;
  ANVIL_ASSERT_OK(anvil_buffer_ready_event(b, &ready));
  std::atomic<int> calls{0};
  auto callback = [](anvil_status* error, void* user) {
    static_cast<std::atomic<int>*>(user)->fetch_add(error ? 100 : 1);
    anvil_status_free(error);
  };
  ANVIL_ASSERT_OK(anvil_event_on_ready(ready, callback, &calls));
  ANVIL_ASSERT_OK(anvil_event_await(ready));
  ANVIL_ASSERT_OK(anvil_event_on_ready(ready, callback, &calls));  // already ready: runs at once
  EXPECT_EQ(calls.load(), 2);
  anvil_event_destroy(ready);
  anvil_buffer_destroy(b);
}

}  // namespace
}  // namespace anvil::testing
