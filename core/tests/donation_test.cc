// Donation through the C ABI: a buffer's memory moves to a donating
// execution only once every use issued before it (an execution reading it, a
// copy out of it) has finished, so those earlier uses always succeed; and the
// stress test of many threads reading and donating shared buffers at once.
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "core/tests/test_util.h"

namespace anvil::testing {
namespace {

// x + 1, so every donation moves a buffer's value on by one and a read that
// saw the wrong memory shows.
constexpr char kIncrement[] = R"(HloModule increment
ENTRY e {
  x = f32[4] parameter(0)
  one = f32[4] constant({1, 1, 1, 1})
  ROOT r = f32[4] add(x, one)
}
)";

class DonationTest : public ClientTest {
 protected:
  // Starts `exe` on one input; returns its output (or NULL, with a failure).
  anvil_buffer* Start(anvil_executable* exe, anvil_buffer* input, bool donate, anvil_event** done = nullptr) {
    uint8_t flag = donate ? 1 : 0;
    anvil_execute_args args{};
    args.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
    args.inputs = &input;
    args.num_inputs = 1;
    args.donate = &flag;
    anvil_buffer* out = nullptr;
    Outcome o = Take(anvil_executable_execute(exe, &args, &out, done));
    EXPECT_EQ(o.code, ANVIL_OK) << o.message;
    return out;
  }
};

// Execution A reads x, execution B (issued right after) donates it. Before
// the fix, B could run first and take the memory from under A, which then
// failed with "input 0 has no memory" in about one try in seven.
TEST_F(DonationTest, AnExecutionIssuedBeforeADonationAlwaysReadsTheBuffer) {
  anvil_executable* exe = Compile(kIncrement);
  ASSERT_NE(exe, nullptr);
  const int64_t baseline = PluginLiveMemory();
  int failures = 0;
  for (int trial = 0; trial < 200; ++trial) {
    anvil_buffer* x = FromHost({1, 2, 3, 4}, {4});
    anvil_event* a_done = nullptr;
    anvil_event* b_done = nullptr;
    anvil_buffer* a = Start(exe, x, false, &a_done);
    anvil_buffer* b = Start(exe, x, true, &b_done);
    Outcome a_result = Take(anvil_event_await(a_done));
    Outcome b_result = Take(anvil_event_await(b_done));
    if (a_result.code != ANVIL_OK || b_result.code != ANVIL_OK) {
      ADD_FAILURE() << "trial " << trial << ": A: " << a_result.message << "; B: " << b_result.message;
      ++failures;
    } else {
      EXPECT_EQ(ToHost(a), (std::vector<float>{2, 3, 4, 5}));
      EXPECT_EQ(ToHost(b), (std::vector<float>{2, 3, 4, 5}));
    }
    for (anvil_event* e : {a_done, b_done}) anvil_event_destroy(e);
    for (anvil_buffer* buffer : {x, a, b}) anvil_buffer_destroy(buffer);
    if (failures > 3) break;
  }
  anvil_executable_destroy(exe);
  // Every buffer is gone and every execution over: nothing is still held.
  EXPECT_EQ(SettledLiveMemory(baseline), baseline);
}

// A copy to the host, then a donation: the copy reads the buffer's data.
TEST_F(DonationTest, ACopyIssuedBeforeADonationAlwaysReadsTheBuffer) {
  anvil_executable* exe = Compile(kIncrement);
  ASSERT_NE(exe, nullptr);
  SetFaults("delay_ms=1");
  for (int trial = 0; trial < 50; ++trial) {
    anvil_buffer* x = FromHost({5, 6, 7, 8}, {4});
    float host[4] = {0, 0, 0, 0};
    anvil_event* copied = nullptr;
    ANVIL_ASSERT_OK(anvil_buffer_to_host(x, host, sizeof(host), &copied));
    anvil_buffer* moved = nullptr;
    ANVIL_ASSERT_OK(anvil_buffer_copy_to_device(x, device_, &moved));
    anvil_buffer* b = Start(exe, x, true);
    ANVIL_ASSERT_OK(anvil_event_await(copied));
    EXPECT_EQ(std::vector<float>(host, host + 4), (std::vector<float>{5, 6, 7, 8}));
    EXPECT_EQ(ToHost(moved), (std::vector<float>{5, 6, 7, 8}));
    EXPECT_EQ(ToHost(b), (std::vector<float>{6, 7, 8, 9}));
    anvil_event_destroy(copied);
    for (anvil_buffer* buffer : {x, moved, b}) anvil_buffer_destroy(buffer);
  }
  anvil_executable_destroy(exe);
}

// Once donated, every use of the handle is refused, even while the donating
// execution still waits for an earlier reader.
TEST_F(DonationTest, UsesAfterTheDonationAreRefusedWhileItWaits) {
  anvil_executable* exe = Compile(kIncrement);
  SetFaults("delay_ms=20");
  anvil_buffer* x = FromHost({1, 1, 1, 1}, {4});
  anvil_buffer* a = Start(exe, x, false);
  anvil_buffer* b = Start(exe, x, true);
  float host[4];
  anvil_event* done = nullptr;
  Outcome late = Take(anvil_buffer_to_host(x, host, sizeof(host), &done));
  EXPECT_EQ(late.code, ANVIL_FAILED_PRECONDITION) << late.message;
  EXPECT_EQ(ToHost(a), (std::vector<float>{2, 2, 2, 2}));
  EXPECT_EQ(ToHost(b), (std::vector<float>{2, 2, 2, 2}));
  for (anvil_buffer* buffer : {x, a, b}) anvil_buffer_destroy(buffer);
  anvil_executable_destroy(exe);
}

// Eight threads share four buffers. Each step picks a buffer at random and
// either reads it (an execution whose result must be the buffer's value at
// issue plus one) or donates it (the output replaces it, one larger). Every
// result is exact, every call succeeds, and nothing is left behind.
TEST_F(DonationTest, EightThreadsReadAndDonateSharedBuffers) {
  anvil_executable* exe = Compile(kIncrement);
  ASSERT_NE(exe, nullptr);
  const int64_t baseline = PluginLiveMemory();
  struct Slot {
    std::mutex mu;
    anvil_buffer* buffer = nullptr;
    float value = 0;  // every element of `buffer` holds it
  };
  constexpr int kSlots = 4, kThreads = 8, kSteps = 150;
  Slot slots[kSlots];
  for (int s = 0; s < kSlots; ++s) {
    slots[s].value = static_cast<float>(100 * s);
    slots[s].buffer = FromHost(std::vector<float>(4, slots[s].value), {4});
  }
  struct Read {
    anvil_buffer* out;
    float expected;
  };
  std::vector<std::vector<std::string>> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(1234 + t);
      std::vector<Read> reads;
      auto fail = [&](std::string what, anvil_status* s) {
        errors[t].push_back(what + ": " + anvil_status_get_message(s));
        anvil_status_free(s);
      };
      for (int step = 0; step < kSteps; ++step) {
        Slot& slot = slots[random() % kSlots];
        const bool donate = random() % 3 == 0;
        uint8_t flag = donate ? 1 : 0;
        anvil_buffer* out = nullptr;
        std::lock_guard<std::mutex> lock(slot.mu);  // the handle, not the device work
        anvil_execute_args args{};
        args.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
        args.inputs = &slot.buffer;
        args.num_inputs = 1;
        args.donate = &flag;
        if (anvil_status* s = anvil_executable_execute(exe, &args, &out, nullptr)) {
          fail(donate ? "donate" : "read", s);
          continue;
        }
        if (donate) {
          anvil_buffer_destroy(slot.buffer);
          slot.buffer = out;
          slot.value += 1;
        } else {
          reads.push_back({out, slot.value + 1});
        }
      }
      for (const Read& r : reads) {
        float host[4];
        anvil_event* done = nullptr;
        anvil_status* s = anvil_buffer_to_host(r.out, host, sizeof(host), &done);
        if (!s) s = anvil_event_await(done);
        if (s) {
          fail("read result", s);
        } else {
          for (float v : host) {
            if (v != r.expected) {
              errors[t].push_back("read " + std::to_string(v) + ", expected " + std::to_string(r.expected));
              break;
            }
          }
        }
        anvil_event_destroy(done);
        anvil_buffer_destroy(r.out);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(errors[t].empty()) << "thread " << t << ": " << errors[t].size() << " errors, first: " << errors[t][0];
  }
  for (Slot& slot : slots) {
    EXPECT_EQ(ToHost(slot.buffer), std::vector<float>(4, slot.value));
    anvil_buffer_destroy(slot.buffer);
  }
  anvil_executable_destroy(exe);
  EXPECT_EQ(SettledLiveMemory(baseline), baseline);
}

}  // namespace
}  // namespace anvil::testing
