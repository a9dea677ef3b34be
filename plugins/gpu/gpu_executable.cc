#include "plugins/gpu/gpu_executable.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "plugins/common/byte_stream.h"
#include "plugins/gpu/program_walker.h"
#include "plugins/gpu/serialized_program.h"

namespace anvil::gpu {
namespace {

// Where each pass's code is, once compiled or read back: code objects by
// index, and each pass's object and entry by its KernelKey.
struct AvailableCode {
  std::vector<std::string> images;
  std::unordered_map<std::string, std::pair<size_t, std::string>> passes;

  void Add(CompiledKernels&& kernels) {
    const size_t base = images.size();
    for (std::string& image : kernels.images) images.push_back(std::move(image));
    for (CompiledPass& p : kernels.passes) passes.emplace(std::move(p.key), std::make_pair(base + p.image, std::move(p.entry)));
  }
};

}  // namespace

// The device program's kernels as functions of loaded code objects: each
// object loaded when the builder first meets a pass it holds.
class CodeObjectLoader : public KernelLoader {
 public:
  CodeObjectLoader(GpuExecutable& exe, std::unordered_map<const hlo::KernelSpec*, KernelSource> sources,
                   AvailableCode code)
      : exe_(exe), sources_(std::move(sources)), code_(std::move(code)) {}

  const KernelOptions& options() const override { return *exe_.kind_.options; }

  hlo::StatusOr<KernelSource> Emit(const hlo::KernelSpec& spec) override {
    // Emitted ahead (taken once: a computation two loops share is built
    // twice), or now.
    if (auto ahead = sources_.find(&spec); ahead != sources_.end()) {
      KernelSource source = std::move(ahead->second);
      sources_.erase(ahead);
      return source;
    }
    return EmitKernel(spec, *exe_.kind_.dialect, *exe_.kind_.options);
  }

  hlo::StatusOr<const void*> Load(const KernelPass& pass, const hlo::KernelSpec& spec) override {
    std::string key = KernelKey(pass.text);
    if (auto found = functions_.find(key); found != functions_.end()) return found->second;
    auto code = code_.passes.find(key);
    if (code == code_.passes.end()) return hlo::Internal(exe_.kind_.plugin + " compiled no code for %" + spec.root->name);
    const auto& [image, entry] = code->second;
    auto module = modules_.find(image);
    if (module == modules_.end()) {
      ANVIL_ASSIGN_OR_RETURN(DeviceRuntime::Module m, exe_.runtime_.LoadModule(code_.images[image]));
      exe_.modules_.push_back(m);
      exe_.loaded_.images.push_back(code_.images[image]);
      module = modules_.emplace(image, std::make_pair(m, exe_.loaded_.images.size() - 1)).first;
    }
    ANVIL_ASSIGN_OR_RETURN(DeviceRuntime::Function function, exe_.runtime_.GetFunction(module->second.first, entry));
    exe_.functions_.push_back(function);
    const void* handle = &exe_.functions_.back();
    exe_.loaded_.passes.push_back(CompiledPass{key, module->second.second, entry});
    functions_.emplace(std::move(key), handle);
    return handle;
  }

 private:
  GpuExecutable& exe_;
  std::unordered_map<const hlo::KernelSpec*, KernelSource> sources_;
  AvailableCode code_;
  // Code object index -> its module and its index in exe_.loaded_.images.
  std::unordered_map<size_t, std::pair<DeviceRuntime::Module, size_t>> modules_;
  std::unordered_map<std::string, const void*> functions_;  // by KernelKey
};

hlo::StatusOr<std::unique_ptr<GpuExecutable>> GpuExecutable::Compile(DeviceRuntime& runtime, size_t device,
                                                                     const ExecutableKind& kind,
                                                                     std::string_view canonical_text,
                                                                     const KernelCompiler& compile,
                                                                     const CompiledKernels* known) {
  ANVIL_ASSIGN_OR_RETURN(PlannedProgram planned, PlanProgram(canonical_text));
  ANVIL_ASSIGN_OR_RETURN(EmittedProgram emitted, EmitProgram(planned.plan, *kind.dialect, *kind.options));
  // What a serialised executable brings is loaded as it is (the cache's key
  // holds the device, so its code is for this device); the rest compiles.
  AvailableCode code;
  if (known) code.Add(CompiledKernels(*known));
  std::vector<KernelModule> to_compile;
  for (KernelModule& m : emitted.modules) {
    if (!code.passes.count(KernelKey(m.text))) to_compile.push_back(std::move(m));
  }
  if (!to_compile.empty()) {
    ANVIL_ASSIGN_OR_RETURN(CompiledKernels compiled, compile(std::move(to_compile)));
    code.Add(std::move(compiled));
  }

  DeviceScope scope(runtime, device);
  ANVIL_RETURN_IF_ERROR(scope.status());
  std::unique_ptr<GpuExecutable> exe(new GpuExecutable(runtime, device, kind));
  CodeObjectLoader loader(*exe, std::move(emitted.sources), std::move(code));
  // One allocation may hold what the device has.
  const uint64_t chunk_limit = std::max<uint64_t>(runtime.DeviceAt(device).memory_bytes, uint64_t{1} << 20);
  ANVIL_ASSIGN_OR_RETURN(exe->program_,
                         BuildDeviceProgram(*planned.module, planned.plan, loader, chunk_limit, kind.plugin));
  // Decided once here, not on every execution.
  exe->waits_while_queued_ =
      std::any_of(exe->program_.ops.begin(), exe->program_.ops.end(),
                  [](const Op& op) { return op.kind == Op::Kind::kWhile || op.kind == Op::Kind::kConditional; });
  const std::vector<uint8_t>& constants = exe->program_.constant_bytes;
  if (!constants.empty()) {
    ANVIL_ASSIGN_OR_RETURN(exe->constants_, runtime.Allocate(constants.size()));
    ANVIL_RETURN_IF_ERROR(runtime.CopyToDevice(exe->constants_, constants.data(), constants.size(), nullptr));
    ANVIL_RETURN_IF_ERROR(runtime.Synchronize(nullptr));
  }
  exe->canonical_text_ = std::string(canonical_text);
  return exe;
}

GpuExecutable::~GpuExecutable() {
  // Nothing can report a failure here; a device that cannot be made current
  // takes its modules and memory with it when its context goes.
  DeviceScope scope(runtime_, device_);
  if (!scope.status().ok()) return;
  for (DeviceRuntime::Module m : modules_) runtime_.UnloadModule(m);
  if (constants_) runtime_.Free(constants_);
}

// The format: the kind's magic; the canonical text; the code objects; then
// each pass's key, code object and entry (plugins/common/byte_stream.h).
std::string GpuExecutable::Serialize() const {
  using plugin::PutBytes;
  using plugin::PutValue;
  std::string out(kind_.magic);
  PutBytes(out, canonical_text_);
  PutValue<uint64_t>(out, loaded_.images.size());
  for (const std::string& image : loaded_.images) PutBytes(out, image);
  PutValue<uint64_t>(out, loaded_.passes.size());
  for (const CompiledPass& p : loaded_.passes) {
    PutBytes(out, p.key);
    PutValue<uint64_t>(out, p.image);
    PutBytes(out, p.entry);
  }
  return out;
}

hlo::StatusOr<SerializedKernels> GpuExecutable::ReadSerialized(const ExecutableKind& kind, std::string_view bytes) {
  plugin::ByteReader r(bytes);
  auto bad = [&](const char* why) {
    return hlo::InvalidArgument("serialised executable of " + kind.plugin + ": byte " + std::to_string(r.offset()) +
                                ": " + why);
  };
  SerializedKernels s;
  if (!r.Skip(kind.magic)) return bad("not one of this version");
  if (!r.GetBytes(&s.canonical_text)) return bad("truncated program text");
  // Records are read one at a time, so a corrupt count allocates nothing.
  uint64_t count = 0;
  if (!r.Get(&count)) return bad("truncated code object count");
  for (uint64_t k = 0; k < count; ++k) {
    std::string image;
    if (!r.GetBytes(&image)) return bad("truncated code object");
    s.kernels.images.push_back(std::move(image));
  }
  if (!r.Get(&count)) return bad("truncated pass count");
  for (uint64_t k = 0; k < count; ++k) {
    CompiledPass p;
    uint64_t image = 0;
    if (!r.GetBytes(&p.key) || p.key.size() != 32) return bad("bad kernel key");
    if (!r.Get(&image) || image >= s.kernels.images.size()) return bad("a pass in no code object");
    p.image = image;
    if (!r.GetBytes(&p.entry) || p.entry.empty()) return bad("bad entry name");
    s.kernels.passes.push_back(std::move(p));
  }
  if (!r.done()) return bad("bytes after the last pass");
  return s;
}

namespace {

// One execution: its stream, arena and address tables, taken from the
// device's caching allocator and given back when it is destroyed (after
// the stream has finished with them). Every call with the execution's
// device current (its own DeviceScope), so that the thread that queues it
// and the one that waits for it may differ.
class Execution final : public DeviceQueue, public QueuedExecution {
 public:
  Execution(DeviceRuntime& runtime, size_t device, const DeviceProgram& program, uint64_t constants, uint32_t block,
            CachingAllocator& memory, std::vector<uint64_t> inputs)
      : runtime_(runtime),
        device_(device),
        program_(program),
        constants_(constants),
        block_(block),
        memory_(memory),
        inputs_(std::move(inputs)) {}

  ~Execution() override {
    DeviceScope scope(runtime_, device_);
    // Whatever was queued finishes before its memory is reused.
    if (stream_ && scope.status().ok()) (void)runtime_.Synchronize(stream_);
    for (uint64_t p : arena_) memory_.Release(p);
    if (tables_) memory_.Release(tables_);
    if (stream_ && scope.status().ok()) runtime_.DestroyStream(stream_);
  }

  // Queues the whole program, waiting on the way only where the host must
  // decide (a loop's condition, a branch index).
  hlo::Status Queue(const std::vector<uint64_t>& outputs) {
    DeviceScope scope(runtime_, device_);
    ANVIL_RETURN_IF_ERROR(scope.status());
    ANVIL_ASSIGN_OR_RETURN(stream_, runtime_.CreateStream());
    for (uint64_t bytes : program_.arena_chunks) {
      ANVIL_ASSIGN_OR_RETURN(uint64_t p, memory_.Allocate(bytes));
      arena_.push_back(p);
    }
    // Every dispatch's table of addresses, copied once for the execution
    // (the host words stay alive until the stream is done with them).
    words_ = LayOutAddressTables(program_, [&](const Loc& l) { return AddressOf(l); });
    const size_t table_bytes = std::max<size_t>(words_.words.size(), 1) * sizeof(uint64_t);
    ANVIL_ASSIGN_OR_RETURN(tables_, memory_.Allocate(table_bytes));
    if (!words_.words.empty()) {
      ANVIL_RETURN_IF_ERROR(
          runtime_.CopyToDevice(tables_, words_.words.data(), words_.words.size() * sizeof(uint64_t), stream_));
    }
    ANVIL_RETURN_IF_ERROR(WalkProgram(program_.ops, words_.Addresses(tables_), *this));
    for (size_t k = 0; k < outputs.size(); ++k) {
      const Loc& from = program_.outputs[k];
      if (from.kind == Loc::Kind::kNone || from.bytes == 0) continue;
      ANVIL_RETURN_IF_ERROR(runtime_.CopyOnDevice(outputs[k], AddressOf(from), from.bytes, stream_));
    }
    return hlo::OkStatus();
  }

  hlo::Status Wait() override {
    DeviceScope scope(runtime_, device_);
    ANVIL_RETURN_IF_ERROR(scope.status());
    return runtime_.Synchronize(stream_);
  }

  // DeviceQueue: everything on the execution's stream, which runs it in
  // order.
  hlo::Status Dispatch(const Op& op, uint64_t table) override {
    const auto function = *static_cast<const DeviceRuntime::Function*>(op.kernel);
    hlo::Status s = runtime_.Launch(function, op.groups, block_, stream_, table);
    if (!s.ok()) return hlo::Status(s.code(), s.message() + " (kernel " + op.what + ")");
    return s;
  }

  hlo::Status Copy(const Loc& src, const Loc& dst) override {
    return runtime_.CopyOnDevice(AddressOf(dst), AddressOf(src), src.bytes, stream_);
  }

  hlo::Status Read(const Loc& at, void* host, size_t bytes) override {
    ANVIL_RETURN_IF_ERROR(runtime_.CopyToHost(host, AddressOf(at), bytes, stream_));
    return runtime_.Synchronize(stream_);
  }

 private:
  uint64_t AddressOf(const Loc& l) const {
    switch (l.kind) {
      case Loc::Kind::kParameter: return inputs_[l.index];
      case Loc::Kind::kConstant: return constants_ + l.offset;
      case Loc::Kind::kArena: return arena_[l.index] + l.offset;
      case Loc::Kind::kNone: break;
    }
    return 0;
  }

  DeviceRuntime& runtime_;
  const size_t device_;
  const DeviceProgram& program_;
  const uint64_t constants_;
  const uint32_t block_;
  CachingAllocator& memory_;
  const std::vector<uint64_t> inputs_;
  DeviceRuntime::Stream stream_ = nullptr;
  std::vector<uint64_t> arena_;
  uint64_t tables_ = 0;
  AddressTables words_;
};

}  // namespace

hlo::StatusOr<std::unique_ptr<QueuedExecution>> GpuExecutable::Start(CachingAllocator& memory,
                                                                     std::vector<uint64_t> inputs,
                                                                     const std::vector<uint64_t>& outputs) const {
  auto execution = std::make_unique<Execution>(runtime_, device_, program_, constants_,
                                               kind_.options->workgroup_size, memory, std::move(inputs));
  ANVIL_RETURN_IF_ERROR(execution->Queue(outputs));
  return std::unique_ptr<QueuedExecution>(std::move(execution));
}

}  // namespace anvil::gpu
