// Zero-copy host buffers on the CPU plugin, through the public C ABI:
// aligned immutable host memory is used in place, its host-done event fires
// only when the buffer's memory is released, donation never writes into it,
// and anything else is copied.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "anvil/anvil.h"
#include "conformance/testkit/abi_session.h"

namespace {

#define EXPECT_OK(expr) ANVIL_TESTKIT_EXPECT_OK(expr)
#define ASSERT_OK(expr) ANVIL_TESTKIT_ASSERT_OK(expr)

class ZeroCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(session_.ok()) << session_.error();
    ASSERT_OK(session_.Compile("HloModule m\nENTRY e {\n  p = f32[16] parameter(0)\n  one = f32[] constant(1)\n"
                               "  b = f32[16] broadcast(one), dimensions={}\n  ROOT r = f32[16] add(p, b)\n}\n",
                               &add_one_));
    host_ = static_cast<float*>(std::aligned_alloc(64, 16 * sizeof(float) + 64));
    for (int k = 0; k < 20; ++k) host_[k] = static_cast<float>(k);
  }
  void TearDown() override {
    EXPECT_OK(anvil_executable_destroy(add_one_));
    std::free(host_);
  }

  // The status of anvil_buffer_from_host for 16 floats at `data`.
  anvil_status* TryFromHost(const float* data, int32_t semantics, anvil_buffer** buffer, anvil_event** host_done,
                            size_t struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE) {
    const int64_t dims[] = {16};
    anvil_buffer_from_host_args args{};
    args.struct_size = struct_size;
    args.device = session_.device();
    args.data = data;
    args.element_type = ANVIL_F32;
    args.dims = dims;
    args.num_dims = 1;
    args.host_buffer_semantics = semantics;
    return anvil_buffer_from_host(session_.client(), &args, buffer, host_done);
  }

  anvil_buffer* FromHost(const float* data, int32_t semantics, anvil_event** host_done,
                         size_t struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE) {
    anvil_buffer* buffer = nullptr;
    EXPECT_OK(TryFromHost(data, semantics, &buffer, host_done, struct_size));
    return buffer;
  }

  std::vector<float> ToHost(anvil_buffer* buffer) { return session_.ToHost<float>(buffer, 16); }

  // Runs add_one_ on `input`, donating it when asked; returns the result.
  std::vector<float> AddOne(anvil_buffer* input, bool donate) {
    std::vector<anvil_buffer*> output = session_.Execute(add_one_, {input}, 1, {static_cast<uint8_t>(donate)});
    std::vector<float> values = ToHost(output[0]);
    EXPECT_OK(anvil_buffer_destroy(output[0]));
    return values;
  }

  static bool Ready(anvil_event* event) {
    int32_t ready = 0;
    EXPECT_OK(anvil_event_is_ready(event, &ready));
    return ready != 0;
  }

  anvil::testkit::AbiSession session_{"cpu"};
  anvil_executable* add_one_ = nullptr;
  float* host_ = nullptr;
};

TEST_F(ZeroCopyTest, AlignedImmutableMemoryIsUsedInPlaceUntilReleased) {
  anvil_event* host_done = nullptr;
  anvil_buffer* buffer = FromHost(host_, ANVIL_HOST_BUFFER_IMMUTABLE_ZERO_COPY, &host_done);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(AddOne(buffer, false)[3], 4.0f);
  // White-box: breaking the promise shows the device reads the caller's memory.
  host_[3] = 100;
  EXPECT_EQ(ToHost(buffer)[3], 100.0f);
  host_[3] = 3;
  // The memory is the runtime's until the buffer is gone.
  EXPECT_FALSE(Ready(host_done));
  EXPECT_OK(anvil_buffer_destroy(buffer));
  EXPECT_OK(anvil_event_await(host_done));
  EXPECT_OK(anvil_event_destroy(host_done));
}

TEST_F(ZeroCopyTest, DonatingNeverWritesIntoTheCallersMemory) {
  anvil_event* host_done = nullptr;
  anvil_buffer* buffer = FromHost(host_, ANVIL_HOST_BUFFER_IMMUTABLE_ZERO_COPY, &host_done);
  std::vector<float> result = AddOne(buffer, true);
  EXPECT_EQ(result[0], 1.0f);
  EXPECT_EQ(result[15], 16.0f);
  for (int k = 0; k < 16; ++k) EXPECT_EQ(host_[k], static_cast<float>(k)) << k;
  EXPECT_OK(anvil_buffer_destroy(buffer));
  EXPECT_OK(anvil_event_await(host_done));  // the donated memory was released after the execution
  EXPECT_OK(anvil_event_destroy(host_done));
}

TEST_F(ZeroCopyTest, UnalignedMemoryAndOlderCallersAreCopied) {
  anvil_event* host_done = nullptr;
  anvil_buffer* unaligned = FromHost(host_ + 1, ANVIL_HOST_BUFFER_IMMUTABLE_ZERO_COPY, &host_done);
  EXPECT_OK(anvil_event_await(host_done));  // the copy has taken the data
  EXPECT_OK(anvil_event_destroy(host_done));
  host_[1] = 100;
  EXPECT_EQ(ToHost(unaligned)[0], 1.0f);
  host_[1] = 1;
  EXPECT_OK(anvil_buffer_destroy(unaligned));

  // A caller built against minor 1 passes the shorter struct: a copy.
  anvil_buffer* old = FromHost(host_, ANVIL_HOST_BUFFER_COPY, nullptr,
                               ANVIL_STRUCT_SIZE(anvil_buffer_from_host_args, num_dims));
  host_[0] = 100;
  EXPECT_EQ(ToHost(old)[0], 0.0f);
  host_[0] = 0;
  EXPECT_OK(anvil_buffer_destroy(old));
}

TEST_F(ZeroCopyTest, UnknownSemanticsAreRefused) {
  anvil_buffer* buffer = nullptr;
  anvil_status* status = TryFromHost(host_, 7, &buffer, nullptr);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(anvil_status_get_code(status), ANVIL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(anvil_status_get_message(status)).find("host_buffer_semantics 7"), std::string::npos);
  anvil_status_free(status);
  EXPECT_EQ(buffer, nullptr);
}

}  // namespace
