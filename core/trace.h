// Chrome trace-event output (the JSON that Perfetto and chrome://tracing
// load): spans of compilation, transfers, executions and, from plugins that
// report them, kernels. A client traces when `anvil_client_options.trace_path`
// or ANVIL_TRACE names a file; the file is written, complete, when the last
// client tracing to it is destroyed. When tracing is off the client holds no
// Tracer, and every span below is one null test.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace anvil::core {

class Tracer {
 public:
  // The tracer writing `path`, shared by every client that names it.
  static std::shared_ptr<Tracer> ForPath(const std::string& path);
  ~Tracer();  // writes the file
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // CLOCK_MONOTONIC in nanoseconds: the clock of every timestamp here and in
  // the plugin ABI's trace_span.
  static uint64_t NowNs();

  // A span on the calling thread. `args` is a JSON object's members
  // (`"bytes":16`) or empty.
  void Complete(std::string_view name, std::string_view category, uint64_t begin_ns, uint64_t end_ns,
                std::string_view args = {});
  // A span that starts on one thread and ends on another (a transfer, an
  // execution): its own track, keyed by `id`.
  void Async(std::string_view name, std::string_view category, uint64_t id, uint64_t begin_ns, uint64_t end_ns,
             std::string_view args = {});
  uint64_t NextId();

  const std::string& path() const { return path_; }

 private:
  explicit Tracer(std::string path) : path_(std::move(path)) {}
  void NameThreadLocked(int64_t tid);
  void Write();

  std::string path_;
  std::mutex mu_;
  std::string events_;               // ",\n"-separated JSON objects
  std::vector<int64_t> named_threads_;
  uint64_t next_id_ = 1;
};

// Appends `text` to `out` as the inside of a JSON string.
void AppendJsonEscaped(std::string& out, std::string_view text);

// Times the enclosing scope as one span when `tracer` is set.
class TraceSpan {
 public:
  TraceSpan(Tracer* tracer, std::string_view name, std::string_view category)
      : tracer_(tracer), name_(name), category_(category), begin_(tracer ? Tracer::NowNs() : 0) {}
  ~TraceSpan() {
    if (tracer_) tracer_->Complete(name_, category_, begin_, Tracer::NowNs(), args_);
  }
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;
  // Adds JSON members to the span's args (only built when tracing).
  void SetArgs(std::string args) { args_ = std::move(args); }
  bool on() const { return tracer_ != nullptr; }

 private:
  Tracer* tracer_;
  std::string_view name_, category_;
  uint64_t begin_;
  std::string args_;
};

}  // namespace anvil::core
