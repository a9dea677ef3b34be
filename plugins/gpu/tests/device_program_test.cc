// The GPU layer's device program without a device: the builder's ops,
// tables and arena for programs with loops and conditionals (kernels
// emitted in the CUDA dialect, loaded as stand-in handles), and the walker
// over a queue that records what it is asked and answers reads from a
// script.
#include "plugins/gpu/device_program.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "hlo/hlo_parser.h"
#include "plugins/gpu/cxx_dialect.h"
#include "plugins/gpu/program_kernels.h"
#include "plugins/gpu/program_walker.h"
#include "plugins/gpu/tests/test_programs.h"

namespace anvil::gpu {
namespace {

using testing::kCountedLoop;

// Kernels as the names of their roots: a pass's handle points at the name.
class NamingLoader : public KernelLoader {
 public:
  const KernelOptions& options() const override { return options_; }
  hlo::StatusOr<KernelSource> Emit(const hlo::KernelSpec& spec) override {
    return EmitKernel(spec, dialect_, options_);
  }
  hlo::StatusOr<const void*> Load(const KernelPass&, const hlo::KernelSpec& spec) override {
    names_.push_back(spec.root->name);
    return static_cast<const void*>(&names_.back());
  }

 private:
  CxxDialect dialect_{CxxDialect::Language::kCuda, "the test"};
  KernelOptions options_{256};
  std::deque<std::string> names_;
};

// A queue that runs nothing: it records each dispatch (by its kernel's
// root), copy and read, and answers the reads in order from `answers`.
class RecordingQueue : public DeviceQueue {
 public:
  explicit RecordingQueue(std::vector<int32_t> answers) : answers_(std::move(answers)) {}
  hlo::Status Dispatch(const Op& op, uint64_t table) override {
    log.push_back("dispatch " + *static_cast<const std::string*>(op.kernel));
    tables.push_back(table);
    return hlo::OkStatus();
  }
  hlo::Status Copy(const Loc&, const Loc&) override {
    log.push_back("copy");
    return hlo::OkStatus();
  }
  hlo::Status Read(const Loc&, void* host, size_t bytes) override {
    if (next_ >= answers_.size()) return hlo::Internal("read past the script");
    log.push_back("read");
    const int32_t v = answers_[next_++];
    if (bytes == 1) {
      *static_cast<uint8_t*>(host) = static_cast<uint8_t>(v);
    } else {
      std::memcpy(host, &v, bytes);
    }
    return hlo::OkStatus();
  }
  std::vector<std::string> log;
  std::vector<uint64_t> tables;

 private:
  std::vector<int32_t> answers_;
  size_t next_ = 0;
};

struct Built {
  PlannedProgram planned;
  DeviceProgram program;
};

Built Build(const char* text, NamingLoader& loader) {
  Built b;
  auto planned = PlanProgram(text);
  EXPECT_TRUE(planned.ok()) << planned.status().message();
  if (!planned.ok()) return b;
  b.planned = std::move(planned).value();
  auto program = BuildDeviceProgram(*b.planned.module, b.planned.plan, loader, 1 << 20, "the test");
  EXPECT_TRUE(program.ok()) << program.status().message();
  if (program.ok()) b.program = std::move(program).value();
  return b;
}

size_t Count(const std::vector<std::string>& log, const std::string& entry) {
  size_t n = 0;
  for (const std::string& e : log) n += e == entry;
  return n;
}

TEST(DeviceProgram, AWhileLoopIsAnOpWithItsConditionAndBody) {
  NamingLoader loader;
  Built b = Build(kCountedLoop, loader);
  const DeviceProgram& p = b.program;
  ASSERT_EQ(p.parameter_bytes, std::vector<uint64_t>{16});
  ASSERT_EQ(p.output_bytes, std::vector<uint64_t>{16});
  const Op* loop = nullptr;
  for (const Op& op : p.ops) {
    if (op.kind == Op::Kind::kWhile) loop = &op;
  }
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->branches.size(), 2u);
  EXPECT_TRUE(loop->selector_is_pred);
  EXPECT_EQ(loop->selector.kind, Loc::Kind::kArena);
  EXPECT_EQ(loop->selector.bytes, 1u);
  // The loop state starts as copies of its initial values, outside the
  // loop: the parameter, and the constant 0 from the constant bytes.
  std::vector<Loc> sources;
  for (const Op& op : p.ops) {
    if (op.kind == Op::Kind::kCopy) sources.push_back(op.src);
  }
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[0].kind, Loc::Kind::kConstant);
  EXPECT_EQ(sources[0].bytes, 4u);
  EXPECT_EQ(sources[0].offset % 16, 0u);
  EXPECT_EQ(sources[1].kind, Loc::Kind::kParameter);
  EXPECT_EQ(sources[1].bytes, 16u);
  int32_t zero = -1;
  ASSERT_GE(p.constant_bytes.size(), sources[0].offset + 4);
  std::memcpy(&zero, p.constant_bytes.data() + sources[0].offset, 4);
  EXPECT_EQ(zero, 0);
  // The output is the loop state's second element: in the arena.
  ASSERT_EQ(p.outputs.size(), 1u);
  EXPECT_EQ(p.outputs[0].kind, Loc::Kind::kArena);
}

TEST(DeviceProgram, TheWalkerRunsTheBodyWhileTheConditionReadsTrue) {
  NamingLoader loader;
  Built b = Build(kCountedLoop, loader);
  const AddressTables tables = LayOutAddressTables(b.program, [](const Loc& l) { return 1000 + l.offset; });
  RecordingQueue queue({1, 1, 0});  // the condition holds twice
  ASSERT_TRUE(WalkProgram(b.program.ops, tables.Addresses(0x10000), queue).ok());
  EXPECT_EQ(Count(queue.log, "read"), 3u);
  EXPECT_EQ(Count(queue.log, "dispatch lt"), 3u);
  EXPECT_EQ(Count(queue.log, "dispatch doubled"), 2u);
  // Every dispatch got its own table's address, inside the table buffer.
  for (uint64_t t : queue.tables) {
    EXPECT_GE(t, 0x10000u);
    EXPECT_LT(t, 0x10000u + tables.words.size() * 8);
    EXPECT_EQ((t - 0x10000) % 8, 0u);
  }
  // A read the script cannot answer stops the walk with its error.
  RecordingQueue forever({1, 1});
  EXPECT_FALSE(WalkProgram(b.program.ops, tables.Addresses(0), forever).ok());
}

constexpr const char* kThreeBranches = R"(HloModule branches
neg { p = f32[4] parameter(0)  ROOT r = f32[4] negate(p) }
abs { p = f32[4] parameter(0)  ROOT r = f32[4] abs(p) }
exp { p = f32[4] parameter(0)  ROOT r = f32[4] exponential(p) }
ENTRY e {
  i = s32[] parameter(0)
  x = f32[4] parameter(1)
  ROOT c = f32[4] conditional(i, x, x, x), branch_computations={neg, abs, exp}
})";

TEST(DeviceProgram, AnIndexOutOfRangeRunsTheLastBranch) {
  NamingLoader loader;
  Built b = Build(kThreeBranches, loader);
  const AddressTables tables = LayOutAddressTables(b.program, [](const Loc&) { return 0; });
  for (const auto& [index, kernel] : std::vector<std::pair<int32_t, std::string>>{
           {0, "dispatch r"}, {1, "dispatch r"}, {2, "dispatch r"}, {7, "dispatch r"}, {-1, "dispatch r"}}) {
    RecordingQueue queue({index});
    ASSERT_TRUE(WalkProgram(b.program.ops, tables.Addresses(0), queue).ok());
    EXPECT_EQ(Count(queue.log, kernel), 1u) << index;
  }
  // Which branch ran: the kernels' tables differ, so their addresses say.
  auto table_of = [&](int32_t index) {
    RecordingQueue queue({index});
    EXPECT_TRUE(WalkProgram(b.program.ops, tables.Addresses(0), queue).ok());
    return queue.tables.at(0);
  };
  EXPECT_NE(table_of(0), table_of(1));
  EXPECT_NE(table_of(1), table_of(2));
  EXPECT_EQ(table_of(7), table_of(2));
  EXPECT_EQ(table_of(-1), table_of(2));
}

// Arena slots a kernel's table names at once never share bytes.
TEST(DeviceProgram, ValuesAKernelUsesTogetherDoNotOverlapInTheArena) {
  NamingLoader loader;
  Built b = Build(R"(HloModule chain
ENTRY e {
  x = f32[64] parameter(0)
  y = f32[64] parameter(1)
  a = f32[64] multiply(x, y)
  s = f32[64] sort(a), dimensions={0}, to_apply=less
  t = f32[64] sort(s), dimensions={0}, to_apply=less
  ROOT u = f32[64] add(t, s)
}
less { p = f32[] parameter(0)  q = f32[] parameter(1)  ROOT l = pred[] compare(p, q), direction=LT })",
                  loader);
  ASSERT_FALSE(b.program.tables.empty());
  for (const auto& table : b.program.tables) {
    for (size_t j = 0; j < table.size(); ++j) {
      for (size_t k = j + 1; k < table.size(); ++k) {
        const Loc& p = table[j];
        const Loc& q = table[k];
        if (p.kind != Loc::Kind::kArena || q.kind != Loc::Kind::kArena || p.index != q.index) continue;
        if (p.SameMemory(q)) continue;  // one value read twice
        EXPECT_TRUE(p.offset + p.bytes <= q.offset || q.offset + q.bytes <= p.offset)
            << p.offset << "+" << p.bytes << " and " << q.offset << "+" << q.bytes;
      }
    }
  }
  for (uint64_t chunk : b.program.arena_chunks) EXPECT_LE(chunk, uint64_t{1} << 20);
}

}  // namespace
}  // namespace anvil::gpu
