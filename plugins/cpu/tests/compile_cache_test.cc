// The persistent compile cache through the C ABI, on the CPU plugin (which
// serialises its executables): a second client finds what the first stored,
// by the program's bytes or by its canonical text; other options miss; and a
// truncated or corrupt entry, an unusable directory, a full disk and clients
// racing on one directory all compile and give the right results; past its
// size limit the cache evicts the entry used longest ago. Hits are
// read from the client's trace, where each is a "cache hit" span.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "anvil/anvil.h"
#include "conformance/testkit/abi_session.h"
#include "plugins/cpu/tests/chrome_trace.h"

namespace {

namespace fs = std::filesystem;
using anvil::testkit::TakeMessage;

constexpr char kProgram[] = R"(HloModule cached
ENTRY e {
  x = f32[8] parameter(0)
  c = f32[] constant(2)
  b = f32[8] broadcast(c), dimensions={}
  m = f32[8] multiply(x, b)
  ROOT r = f32[8] add(m, x)
}
)";

// The same program, written another way: explicit default layouts, other
// spacing, and an instruction nothing uses (canonicalisation drops it).
constexpr char kSameProgramRewritten[] = R"(HloModule cached

ENTRY e {
  x = f32[8]{0} parameter(0)
  unused = f32[8]{0} negate(x)
  c = f32[] constant(2)
  b = f32[8]{0}   broadcast(c), dimensions={}
  m = f32[8]{0} multiply(x, b)
  ROOT r = f32[8]{0} add(m, x)
})";

// Another program with the same results (3x), so another entry.
constexpr char kOtherProgram[] = R"(HloModule cached_other
ENTRY e {
  x = f32[8] parameter(0)
  c = f32[] constant(3)
  b = f32[8] broadcast(c), dimensions={}
  ROOT r = f32[8] multiply(x, b)
}
)";

class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("anvil_cache_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    trace_ = dir_ + ".trace.json";
  }
  void TearDown() override {
    fs::remove_all(dir_);
    fs::remove(trace_);
  }

  // A client of the CPU plugin caching in `cache_dir` (default dir_) and
  // tracing to `trace` (empty: not traced).
  static anvil_client_options Options(const std::string& cache_dir, const std::string& trace) {
    anvil_client_options o{};
    o.cache_dir = cache_dir.c_str();
    o.trace_path = trace.c_str();
    return o;
  }

  // Compiles `program` with `options` in a fresh client on `cache_dir`,
  // runs it on 0..7, checks 3x, and destroys the client. Returns the number
  // of cache hits its trace shows.
  int CompileAndRun(const char* program, const char* options = nullptr, const std::string* cache_dir = nullptr) {
    fs::remove(trace_);
    {
      anvil::testkit::AbiSession session("cpu", Options(cache_dir ? *cache_dir : dir_, trace_));
      EXPECT_TRUE(session.ok()) << session.error();
      if (!session.ok()) return -1;
      RunOn(session, program, options);
    }
    return anvil::testing::Count(anvil::testing::ReadTrace(trace_), "X", "compile", "cache hit");
  }

  static void RunOn(anvil::testkit::AbiSession& session, const char* program, const char* options) {
    anvil_executable* exe = nullptr;
    ASSERT_EQ(TakeMessage(session.Compile(program, &exe, options)), "");
    size_t params = 0;
    ASSERT_EQ(TakeMessage(anvil_executable_parameter_count(exe, &params)), "");
    ASSERT_EQ(params, 1u);
    const float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    anvil_buffer* in = session.FromHost(x, ANVIL_F32, {8});
    std::vector<anvil_buffer*> out = session.Execute(exe, {in}, 1);
    ASSERT_EQ(out.size(), 1u);
    const std::vector<float> y = session.ToHost<float>(out[0], 8);
    for (int k = 0; k < 8; ++k) EXPECT_EQ(y[k], 3.0f * k) << k;
    for (anvil_buffer* b : {in, out[0]}) EXPECT_EQ(TakeMessage(anvil_buffer_destroy(b)), "");
    EXPECT_EQ(TakeMessage(anvil_executable_destroy(exe)), "");
  }

  std::vector<fs::path> Files(const std::string& extension) const {
    std::vector<fs::path> found;
    std::error_code error;
    for (const auto& e : fs::directory_iterator(dir_, error)) {
      if (e.path().extension() == extension) found.push_back(e.path());
    }
    return found;
  }

  std::string dir_, trace_;
};

TEST_F(CompileCacheTest, ASecondClientLoadsWhatTheFirstStored) {
  EXPECT_EQ(CompileAndRun(kProgram), 0);
  EXPECT_EQ(Files(".exe").size(), 1u);
  EXPECT_EQ(Files(".ref").size(), 1u);
  EXPECT_EQ(CompileAndRun(kProgram), 1);
  EXPECT_EQ(Files(".exe").size(), 1u);
}

// A loaded executable copies its canonical text out of the cache entry only
// when asked; by then the entry may be gone from the directory.
TEST_F(CompileCacheTest, ALoadedExecutableGivesTheCanonicalTextItWasCompiledFrom) {
  auto canonical_text = [&](bool remove_cache_first) {
    fs::remove(trace_);
    anvil::testkit::AbiSession session("cpu", Options(dir_, trace_));
    EXPECT_TRUE(session.ok()) << session.error();
    anvil_executable* exe = nullptr;
    EXPECT_EQ(TakeMessage(session.Compile(kProgram, &exe)), "");
    if (remove_cache_first) fs::remove_all(dir_);
    const char* text = nullptr;
    size_t size = 0;
    EXPECT_EQ(TakeMessage(anvil_executable_canonical_text(exe, &text, &size)), "");
    std::string copy = text ? std::string(text, size) : "";
    EXPECT_EQ(text ? std::strlen(text) : 0, size) << "not ended by a NUL";
    EXPECT_EQ(TakeMessage(anvil_executable_destroy(exe)), "");
    return copy;
  };
  auto hits = [&]() { return anvil::testing::Count(anvil::testing::ReadTrace(trace_), "X", "compile", "cache hit"); };
  const std::string compiled = canonical_text(false);
  ASSERT_NE(compiled.find("ENTRY"), std::string::npos) << compiled;
  ASSERT_EQ(Files(".exe").size(), 1u);
  const std::string loaded = canonical_text(true);
  EXPECT_EQ(hits(), 1) << "the second compile was not loaded from the cache";
  EXPECT_EQ(loaded, compiled);
}

TEST_F(CompileCacheTest, AProgramWrittenAnotherWayIsFoundByItsCanonicalText) {
  EXPECT_EQ(CompileAndRun(kProgram), 0);
  EXPECT_EQ(CompileAndRun(kSameProgramRewritten), 1);
  // One executable, reached from two programs.
  EXPECT_EQ(Files(".exe").size(), 1u);
  EXPECT_EQ(Files(".ref").size(), 2u);
}

TEST_F(CompileCacheTest, OtherCompileOptionsAreAnotherEntry) {
  EXPECT_EQ(CompileAndRun(kProgram), 0);
  EXPECT_EQ(CompileAndRun(kProgram, "flush_denormals=true"), 0);
  EXPECT_EQ(Files(".exe").size(), 2u);
  EXPECT_EQ(CompileAndRun(kProgram, "flush_denormals=true"), 1);
}

TEST_F(CompileCacheTest, TruncatedOrCorruptFilesAreCompiledAgainAndReplaced) {
  EXPECT_EQ(CompileAndRun(kProgram), 0);
  const fs::path entry = Files(".exe").at(0), reference = Files(".ref").at(0);
  const auto size = fs::file_size(entry);
  // Each damage in turn: the compile still runs right, and leaves a whole
  // entry that the next client finds.
  const std::vector<std::function<void()>> damages = {
      [&] { fs::resize_file(entry, size / 2); },
      [&] { fs::resize_file(entry, 0); },
      [&] {
        std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(size - 100));
        f.put('\x5a');
      },
      [&] { fs::resize_file(reference, 10); },
      [&] { std::ofstream(reference, std::ios::binary) << "not a reference file at all"; },
  };
  for (size_t k = 0; k < damages.size(); ++k) {
    damages[k]();
    // A damaged entry is compiled again; past a damaged reference the entry
    // is still found, by the canonical text.
    const bool entry_damaged = k < 3;
    EXPECT_EQ(CompileAndRun(kProgram), entry_damaged ? 0 : 1) << "damage " << k;
    EXPECT_EQ(CompileAndRun(kProgram), 1) << "damage " << k;
  }
}

TEST_F(CompileCacheTest, ADirectoryThatCannotBeMadeOnlyCostsTheCache) {
  // A regular file where the directory should be (root ignores permission
  // bits, so a read-only directory would not fail here).
  std::ofstream(dir_) << "a file";
  const std::string inside = dir_ + "/cache";
  EXPECT_EQ(CompileAndRun(kProgram, nullptr, &dir_), 0);
  EXPECT_EQ(CompileAndRun(kProgram, nullptr, &inside), 0);
  fs::remove(dir_);
}

TEST_F(CompileCacheTest, AFullDiskLeavesNoPartialFiles) {
  // A file-size limit of 64 bytes fails the cache's writes as a full disk
  // would (EFBIG instead of ENOSPC). It is set once the client exists and
  // lifted before the client goes.
  {
    anvil::testkit::AbiSession session("cpu", Options(dir_, ""));
    ASSERT_TRUE(session.ok()) << session.error();
    struct sigaction ignore {}, previous {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ignore, &previous);
    rlimit old_limit{};
    getrlimit(RLIMIT_FSIZE, &old_limit);
    rlimit small = old_limit;
    small.rlim_cur = 64;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    RunOn(session, kProgram, nullptr);
    setrlimit(RLIMIT_FSIZE, &old_limit);
    sigaction(SIGXFSZ, &previous, nullptr);
  }
  for (const auto& e : fs::directory_iterator(dir_)) ADD_FAILURE() << "left behind: " << e.path();
  EXPECT_EQ(CompileAndRun(kProgram), 0);  // now it is stored
  EXPECT_EQ(CompileAndRun(kProgram), 1);
}

TEST_F(CompileCacheTest, PastItsSizeLimitTheLeastRecentlyUsedEntryGoes) {
  EXPECT_EQ(CompileAndRun(kProgram), 0);
  const fs::path first = Files(".exe").at(0);
  // Room for one entry and a half (the limit counts entries only).
  const uint64_t limit = fs::file_size(first) * 3 / 2;
  setenv("ANVIL_CACHE_MAX_BYTES", std::to_string(limit).c_str(), 1);
  EXPECT_EQ(CompileAndRun(kOtherProgram), 0);
  EXPECT_FALSE(fs::exists(first)) << "the older entry should have been evicted";
  EXPECT_EQ(Files(".exe").size(), 1u);
  EXPECT_EQ(CompileAndRun(kOtherProgram), 1);  // the newer one stays, and is used
  EXPECT_EQ(CompileAndRun(kProgram), 0);       // compiled again, and now it evicts the other
  EXPECT_EQ(CompileAndRun(kProgram), 1);
  EXPECT_EQ(CompileAndRun(kOtherProgram), 0);
  unsetenv("ANVIL_CACHE_MAX_BYTES");
}

TEST_F(CompileCacheTest, ClientsCompilingOneProgramAtOnceAllGetItRight) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int k = 0; k < 5; ++k) {
        // Not traced, even if ANVIL_TRACE is set.
        anvil::testkit::AbiSession session("cpu", Options(dir_, ""));
        ASSERT_TRUE(session.ok()) << session.error();
        RunOn(session, kProgram, nullptr);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(Files(".exe").size(), 1u);
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "left behind: " << e.path();
  }
  EXPECT_EQ(CompileAndRun(kProgram), 1);
}

}  // namespace
