#include "core/trace.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include <oneapi/tbb/task_arena.h>

namespace anvil::core {
namespace {

int64_t ThreadId() { return static_cast<int64_t>(syscall(SYS_gettid)); }

// Chrome's timestamps are microseconds; three decimals keep nanoseconds.
void AppendMicros(std::string& out, uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                static_cast<unsigned long long>(ns % 1000));
  out += text;
}

void AppendEventHead(std::string& out, std::string_view name, std::string_view category, const char* phase) {
  out += "{\"name\":\"";
  AppendJsonEscaped(out, name);
  out += "\",\"cat\":\"";
  AppendJsonEscaped(out, category);
  out += "\",\"ph\":\"";
  out += phase;
  out += "\",\"pid\":";
  out += std::to_string(getpid());
}

void AppendArgs(std::string& out, std::string_view args) {
  if (args.empty()) return;
  out += ",\"args\":{";
  out += args;
  out += "}";
}

}  // namespace

void AppendJsonEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (u < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", u);
      out += escaped;
    } else {
      out += c;
    }
  }
}

std::shared_ptr<Tracer> Tracer::ForPath(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<Tracer>> open;
  std::lock_guard<std::mutex> lock(mu);
  if (auto existing = open[path].lock()) return existing;
  std::shared_ptr<Tracer> tracer(new Tracer(path));
  open[path] = tracer;
  return tracer;
}

Tracer::~Tracer() { Write(); }

uint64_t Tracer::NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

uint64_t Tracer::NextId() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_id_++;
}

// Names a thread the first time it shows up: core's arena workers by their
// slot, any other thread as the caller's.
void Tracer::NameThreadLocked(int64_t tid) {
  if (std::find(named_threads_.begin(), named_threads_.end(), tid) != named_threads_.end()) return;
  named_threads_.push_back(tid);
  const int slot = oneapi::tbb::this_task_arena::current_thread_index();
  std::string name = slot == oneapi::tbb::task_arena::not_initialized
                         ? "caller thread " + std::to_string(tid)
                         : "anvil worker " + std::to_string(slot) + " (" + std::to_string(tid) + ")";
  if (!events_.empty()) events_ += ",\n";
  AppendEventHead(events_, "thread_name", "__metadata", "M");
  events_ += ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":\"";
  AppendJsonEscaped(events_, name);
  events_ += "\"}}";
}

void Tracer::Complete(std::string_view name, std::string_view category, uint64_t begin_ns, uint64_t end_ns,
                      std::string_view args) {
  const int64_t tid = ThreadId();
  std::string event;
  AppendEventHead(event, name, category, "X");
  event += ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
  AppendMicros(event, begin_ns);
  event += ",\"dur\":";
  AppendMicros(event, end_ns > begin_ns ? end_ns - begin_ns : 0);
  AppendArgs(event, args);
  event += "}";
  std::lock_guard<std::mutex> lock(mu_);
  NameThreadLocked(tid);
  events_ += ",\n";
  events_ += event;
}

void Tracer::Async(std::string_view name, std::string_view category, uint64_t id, uint64_t begin_ns,
                   uint64_t end_ns, std::string_view args) {
  // A begin and an end event with one id: Perfetto draws them on a track of
  // their own, so overlapping transfers and executions stay readable.
  std::string event;
  for (const char* phase : {"b", "e"}) {
    if (!event.empty()) event += ",\n";
    AppendEventHead(event, name, category, phase);
    event += ",\"tid\":" + std::to_string(ThreadId()) + ",\"id\":" + std::to_string(id) + ",\"ts\":";
    AppendMicros(event, phase[0] == 'b' ? begin_ns : std::max(begin_ns, end_ns));
    if (phase[0] == 'b') AppendArgs(event, args);
    event += "}";
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!events_.empty()) events_ += ",\n";
  events_ += event;
}

// Written to a temporary name and renamed, so a reader never sees half a
// file; a failure is reported on stderr, as there is no caller left to tell.
void Tracer::Write() {
  const std::string temporary = path_ + ".partial";
  FILE* f = std::fopen(temporary.c_str(), "w");
  bool ok = f != nullptr;
  if (ok) {
    ok = std::fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f) >= 0 &&
         std::fwrite(events_.data(), 1, events_.size(), f) == events_.size() && std::fputs("\n]}\n", f) >= 0;
    ok = (std::fclose(f) == 0) && ok;
  }
  if (ok) ok = std::rename(temporary.c_str(), path_.c_str()) == 0;
  if (!ok) {
    const int error = errno;
    std::remove(temporary.c_str());
    std::fprintf(stderr, "anvil: cannot write the trace file %s: %s\n", path_.c_str(), std::strerror(error));
  }
}

}  // namespace anvil::core
