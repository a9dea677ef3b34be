#include "plugins/cuda/cuda_executable.h"

#include <algorithm>
#include <unordered_map>

#include "plugins/cuda/cuda_kernels.h"
#include "plugins/gpu/program_kernels.h"
#include "plugins/gpu/program_walker.h"

namespace anvil::cuda {

// The device program's kernels as functions of loaded cubins: one module
// per distinct pass, loaded when the builder first meets it.
class CubinLoader : public gpu::KernelLoader {
 public:
  // `sources`: the kernels emitted ahead; `cubins` by their pass's KernelKey.
  CubinLoader(CudaExecutable& exe, std::unordered_map<const hlo::KernelSpec*, gpu::KernelSource> sources,
              std::unordered_map<std::string, std::string> cubins)
      : exe_(exe), sources_(std::move(sources)), cubins_(std::move(cubins)) {}

  const gpu::KernelOptions& options() const override { return CudaKernelOptions(); }

  hlo::StatusOr<gpu::KernelSource> Emit(const hlo::KernelSpec& spec) override {
    // Emitted ahead (taken once: a computation two loops share is built
    // twice), or now.
    if (auto ahead = sources_.find(&spec); ahead != sources_.end()) {
      gpu::KernelSource source = std::move(ahead->second);
      sources_.erase(ahead);
      return source;
    }
    return gpu::EmitKernel(spec, CudaDialect(), CudaKernelOptions());
  }

  hlo::StatusOr<const void*> Load(const gpu::KernelPass& pass, const hlo::KernelSpec& spec) override {
    const std::string key = gpu::KernelKey(pass.text);
    if (auto found = loaded_.find(key); found != loaded_.end()) return found->second;
    auto cubin = cubins_.find(key);
    if (cubin == cubins_.end()) return hlo::Internal("the CUDA plugin compiled no cubin for %" + spec.root->name);
    const CudaApi& api = exe_.driver_.api();
    CUmodule module = nullptr;
    ANVIL_RETURN_IF_ERROR(exe_.driver_.Check(api.cuModuleLoadData(&module, cubin->second.data()), "cuModuleLoadData"));
    exe_.modules_.push_back(module);
    CUfunction function = nullptr;
    ANVIL_RETURN_IF_ERROR(exe_.driver_.Check(api.cuModuleGetFunction(&function, module, gpu::CxxDialect::kEntry),
                                             "cuModuleGetFunction"));
    exe_.functions_.push_back(function);
    const void* handle = &exe_.functions_.back();
    loaded_.emplace(key, handle);
    exe_.cubins_.emplace_back(key, cubin->second);
    return handle;
  }

 private:
  CudaExecutable& exe_;
  std::unordered_map<const hlo::KernelSpec*, gpu::KernelSource> sources_;
  std::unordered_map<std::string, std::string> cubins_;  // by KernelKey
  std::unordered_map<std::string, const void*> loaded_;
};

namespace {
constexpr std::string_view kSerializedMagic("ANVKCUX1", 8);
}  // namespace

hlo::StatusOr<std::unique_ptr<CudaExecutable>> CudaExecutable::Compile(
    const CudaDriver& driver, CUcontext context, size_t device_index, const CudaDeviceInfo& device,
    const NvrtcCompiler& nvrtc, std::string_view canonical_text, const anvil_plugin_host_executor& host,
    const std::unordered_map<std::string, std::string>* known) {
  const std::vector<int>& archs = nvrtc.SupportedArchs();
  if (std::find(archs.begin(), archs.end(), device.sm()) == archs.end()) {
    return hlo::Unimplemented("the CUDA plugin's NVRTC (" + nvrtc.library_path() + ") cannot compile for sm_" +
                              std::to_string(device.sm()) + " (" + device.name +
                              "); install the CUDA toolkit's NVRTC for this GPU");
  }
  // A driver runs cubins of its own CUDA major version or older (minor
  // version compatibility stops at the major version).
  const int driver_major = driver.DeviceList().driver_version / 1000;
  if (driver_major > 0 && nvrtc.Version().major > driver_major) {
    return hlo::Unimplemented("the CUDA plugin's NVRTC " + std::to_string(nvrtc.Version().major) + "." +
                              std::to_string(nvrtc.Version().minor) + " (" + nvrtc.library_path() +
                              ") makes cubins this CUDA " + std::to_string(driver_major) +
                              " driver cannot load; point ANVIL_NVRTC_LIBRARY at a libnvrtc.so." +
                              std::to_string(driver_major) + ", or update the driver");
  }
  ContextScope scope(driver, context);
  ANVIL_RETURN_IF_ERROR(scope.status());
  ANVIL_ASSIGN_OR_RETURN(gpu::PlannedProgram planned, gpu::PlanProgram(canonical_text));
  ANVIL_ASSIGN_OR_RETURN(gpu::EmittedProgram emitted,
                         gpu::EmitProgram(planned.plan, CudaDialect(), CudaKernelOptions()));
  // What a serialised executable brings is loaded as it is (the cache's key
  // holds the device, so these cubins are for its sm); the rest compiles.
  std::unordered_map<std::string, std::string> cubins;
  std::vector<gpu::KernelModule> to_compile;
  for (gpu::KernelModule& m : emitted.modules) {
    if (known) {
      std::string key = gpu::KernelKey(m.text);
      if (auto found = known->find(key); found != known->end()) {
        cubins.emplace(std::move(key), found->second);
        continue;
      }
    }
    to_compile.push_back(std::move(m));
  }
  ANVIL_ASSIGN_OR_RETURN(std::vector<CompiledKernel> compiled,
                         CompileKernelModules(std::move(to_compile), device.sm(), nvrtc, host));
  for (CompiledKernel& k : compiled) {
    cubins.emplace(gpu::KernelKey(k.source), std::string(k.cubin.begin(), k.cubin.end()));
  }

  std::unique_ptr<CudaExecutable> exe(new CudaExecutable(driver, context, device_index));
  CubinLoader loader(*exe, std::move(emitted.sources), std::move(cubins));
  // One allocation may hold what the device has.
  const uint64_t chunk_limit = std::max<uint64_t>(device.total_memory, uint64_t{1} << 20);
  ANVIL_ASSIGN_OR_RETURN(exe->program_, gpu::BuildDeviceProgram(*planned.module, planned.plan, loader, chunk_limit,
                                                                "the CUDA plugin"));
  const std::vector<uint8_t>& constants = exe->program_.constant_bytes;
  if (!constants.empty()) {
    const CudaApi& api = driver.api();
    ANVIL_RETURN_IF_ERROR(driver.Check(api.cuMemAlloc(&exe->constants_, constants.size()), "cuMemAlloc"));
    ANVIL_RETURN_IF_ERROR(driver.Check(
        api.cuMemcpyHtoDAsync(exe->constants_, constants.data(), constants.size(), nullptr), "cuMemcpyHtoDAsync"));
    ANVIL_RETURN_IF_ERROR(driver.Check(api.cuStreamSynchronize(nullptr), "cuStreamSynchronize"));
  }
  exe->canonical_text_ = std::string(canonical_text);
  return exe;
}

std::string CudaExecutable::Serialize() const {
  return gpu::WriteSerializedProgram(kSerializedMagic, canonical_text_, cubins_);
}

hlo::StatusOr<gpu::SerializedProgram> CudaExecutable::ReadSerialized(std::string_view bytes) {
  return gpu::ReadSerializedProgram(kSerializedMagic, "serialised CUDA executable", bytes);
}

CudaExecutable::~CudaExecutable() {
  const CudaApi& api = driver_.api();
  // Nothing can report a failure here; a context that cannot be made
  // current takes its modules and memory with it when it is released.
  ContextScope scope(driver_, context_);
  if (!scope.status().ok()) return;
  for (CUmodule m : modules_) api.cuModuleUnload(m);
  if (constants_) api.cuMemFree(constants_);
}

namespace {

using gpu::Loc;
using gpu::Op;

// One execution: its stream, arena and tables, freed when it goes (after
// the stream has finished with them).
class Execution : public gpu::DeviceQueue {
 public:
  Execution(const CudaExecutable& exe, gpu::CachingAllocator& memory, const std::vector<CUdeviceptr>& inputs)
      : exe_(exe), driver_(exe.driver()), api_(exe.driver().api()), memory_(memory), inputs_(inputs) {}

  ~Execution() override {
    // Whatever was queued finishes before its memory is reused.
    if (stream_) api_.cuStreamSynchronize(stream_);
    for (CUdeviceptr p : arena_) memory_.Release(p);
    if (tables_) memory_.Release(tables_);
    if (stream_) api_.cuStreamDestroy(stream_);
  }

  hlo::Status Run(const std::vector<CUdeviceptr>& outputs) {
    const gpu::DeviceProgram& program = exe_.program();
    ANVIL_RETURN_IF_ERROR(Check(api_.cuStreamCreate(&stream_, kCuStreamNonBlocking), "cuStreamCreate"));
    for (uint64_t bytes : program.arena_chunks) {
      ANVIL_ASSIGN_OR_RETURN(CUdeviceptr p, memory_.Allocate(bytes));
      arena_.push_back(p);
    }
    // Every dispatch's table of addresses, copied once for the execution
    // (the host words stay alive until the stream is done with them).
    words_ = gpu::LayOutAddressTables(program, [&](const Loc& l) { return AddressOf(l); });
    const size_t table_bytes = std::max<size_t>(words_.words.size(), 1) * sizeof(uint64_t);
    ANVIL_ASSIGN_OR_RETURN(tables_, memory_.Allocate(table_bytes));
    if (!words_.words.empty()) {
      ANVIL_RETURN_IF_ERROR(Check(api_.cuMemcpyHtoDAsync(tables_, words_.words.data(),
                                                         words_.words.size() * sizeof(uint64_t), stream_),
                                  "cuMemcpyHtoDAsync"));
    }
    ANVIL_RETURN_IF_ERROR(gpu::WalkProgram(program.ops, words_.Addresses(tables_), *this));
    for (size_t k = 0; k < outputs.size(); ++k) {
      const Loc& from = program.outputs[k];
      if (from.kind == Loc::Kind::kNone || from.bytes == 0) continue;
      ANVIL_RETURN_IF_ERROR(
          Check(api_.cuMemcpyDtoDAsync(outputs[k], AddressOf(from), from.bytes, stream_), "cuMemcpyDtoDAsync"));
    }
    return Check(api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
  }

  // DeviceQueue: everything on the execution's stream, which runs it in
  // order.
  hlo::Status Dispatch(const Op& op, uint64_t table) override {
    CUfunction function = *static_cast<const CUfunction*>(op.kernel);
    CUdeviceptr table_address = table;
    void* parameters[] = {&table_address};
    const unsigned block = CudaKernelOptions().workgroup_size;
    hlo::Status s = Check(api_.cuLaunchKernel(function, op.groups, 1, 1, block, 1, 1, 0, stream_, parameters, nullptr),
                          "cuLaunchKernel");
    if (!s.ok()) return hlo::Status(s.code(), s.message() + " (kernel " + op.what + ")");
    return s;
  }

  hlo::Status Copy(const Loc& src, const Loc& dst) override {
    return Check(api_.cuMemcpyDtoDAsync(AddressOf(dst), AddressOf(src), src.bytes, stream_), "cuMemcpyDtoDAsync");
  }

  hlo::Status Read(const Loc& at, void* host, size_t bytes) override {
    ANVIL_RETURN_IF_ERROR(Check(api_.cuMemcpyDtoHAsync(host, AddressOf(at), bytes, stream_), "cuMemcpyDtoHAsync"));
    return Check(api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
  }

 private:
  hlo::Status Check(CUresult result, const char* call) const { return driver_.Check(result, call); }

  CUdeviceptr AddressOf(const Loc& l) const {
    switch (l.kind) {
      case Loc::Kind::kParameter: return inputs_[l.index];
      case Loc::Kind::kConstant: return exe_.constants() + l.offset;
      case Loc::Kind::kArena: return arena_[l.index] + l.offset;
      case Loc::Kind::kNone: break;
    }
    return 0;
  }

  const CudaExecutable& exe_;
  const CudaDriver& driver_;
  const CudaApi& api_;
  gpu::CachingAllocator& memory_;
  const std::vector<CUdeviceptr>& inputs_;
  CUstream stream_ = nullptr;
  std::vector<CUdeviceptr> arena_;
  CUdeviceptr tables_ = 0;
  gpu::AddressTables words_;
};

}  // namespace

hlo::Status RunCudaExecutable(const CudaExecutable& exe, gpu::CachingAllocator& memory,
                              const std::vector<CUdeviceptr>& inputs, const std::vector<CUdeviceptr>& outputs) {
  // Current until the execution, and its frees, are done.
  ContextScope scope(exe.driver(), exe.context());
  ANVIL_RETURN_IF_ERROR(scope.status());
  Execution execution(exe, memory, inputs);
  return execution.Run(outputs);
}

}  // namespace anvil::cuda
