#include "plugins/vulkan/vulkan_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "plugins/gpu/program_walker.h"

namespace anvil::vulkan {
namespace {

using gpu::Loc;
using gpu::Op;

class Runner : public gpu::DeviceQueue {
 public:
  Runner(const Executable& exe, Device& d, const std::vector<const Buffer*>& inputs) : exe_(exe), d_(d), inputs_(inputs) {}
  ~Runner() override {
    const Api& api = d_.api;
    if (fence_) api.vkDestroyFence(d_.device, fence_, nullptr);
    if (pool_) api.vkDestroyCommandPool(d_.device, pool_, nullptr);
    for (Buffer& b : arena_) d_.DestroyBuffer(b);
    d_.DestroyBuffer(tables_);
  }

  hlo::Status Run(const std::vector<const Buffer*>& outputs) {
    const gpu::DeviceProgram& program = exe_.program();
    std::string why;
    for (uint64_t bytes : program.arena_chunks) {
      arena_.emplace_back();
      if (!d_.CreateBuffer(bytes, &arena_.back(), why)) return hlo::ResourceExhausted(why);
    }
    // Every dispatch's table of addresses, written once for the execution.
    const gpu::AddressTables tables = gpu::LayOutAddressTables(program, [&](const Loc& l) { return AddressOf(l); });
    if (!d_.CreateBuffer(std::max<size_t>(tables.words.size(), 1) * 8, &tables_, why)) {
      return hlo::ResourceExhausted(why);
    }
    if (!tables.words.empty()) std::memcpy(tables_.mapped, tables.words.data(), tables.words.size() * 8);
    const std::vector<uint64_t> table_addresses = tables.Addresses(tables_.address);
    VkFenceCreateInfo fence{};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    VkResult r = d_.api.vkCreateFence(d_.device, &fence, nullptr, &fence_);
    if (r != VK_SUCCESS) return hlo::ResourceExhausted("vkCreateFence: " + ResultName(r));
    // A pool of its own: recording needs no lock against other executions.
    VkCommandPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pool.queueFamilyIndex = d_.queue_family;
    r = d_.api.vkCreateCommandPool(d_.device, &pool, nullptr, &pool_);
    if (r != VK_SUCCESS) return hlo::ResourceExhausted("vkCreateCommandPool: " + ResultName(r));
    {
      VkCommandBufferAllocateInfo alloc{};
      alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
      alloc.commandPool = pool_;
      alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      alloc.commandBufferCount = 1;
      r = d_.api.vkAllocateCommandBuffers(d_.device, &alloc, &commands_);
    }
    if (r != VK_SUCCESS) {
      commands_ = VK_NULL_HANDLE;
      return hlo::ResourceExhausted("vkAllocateCommandBuffers: " + ResultName(r));
    }
    ANVIL_RETURN_IF_ERROR(gpu::WalkProgram(program.ops, table_addresses, *this));
    for (size_t k = 0; k < outputs.size(); ++k) {
      const Loc& from = program.outputs[k];
      if (from.kind == Loc::Kind::kNone || from.bytes == 0) continue;
      Record();
      VkBufferCopy region{from.offset, 0, from.bytes};
      d_.api.vkCmdCopyBuffer(commands_, BufferOf(from), outputs[k]->buffer, 1, &region);
    }
    ANVIL_RETURN_IF_ERROR(Flush());
    if (profile_) Report();
    return hlo::OkStatus();
  }

 private:
  // ANVIL_VULKAN_PROFILE=1: the kernels that took longest, on stderr.
  void Report() const {
    std::vector<std::pair<double, std::string>> by_time;
    double total = 0;
    for (const auto& [what, seconds] : profile_seconds_) {
      by_time.push_back({seconds, what});
      total += seconds;
    }
    std::sort(by_time.rbegin(), by_time.rend());
    std::fprintf(stderr, "anvil vulkan profile: %zu kernels, %.3f s in dispatches\n", by_time.size(), total);
    for (size_t k = 0; k < by_time.size() && k < 25; ++k) {
      std::fprintf(stderr, "  %8.3f s  %s\n", by_time[k].first, by_time[k].second.c_str());
    }
  }

  VkBuffer BufferOf(const Loc& l) const {
    switch (l.kind) {
      case Loc::Kind::kParameter: return inputs_[l.index]->buffer;
      case Loc::Kind::kConstant: return exe_.constants().buffer;
      case Loc::Kind::kArena: return arena_[l.index].buffer;
      case Loc::Kind::kNone: break;
    }
    return VK_NULL_HANDLE;
  }
  uint64_t AddressOf(const Loc& l) const {
    switch (l.kind) {
      case Loc::Kind::kParameter: return inputs_[l.index]->address;
      case Loc::Kind::kConstant: return exe_.constants().address + l.offset;
      case Loc::Kind::kArena: return arena_[l.index].address + l.offset;
      case Loc::Kind::kNone: break;
    }
    return 0;
  }
  const uint8_t* HostPointer(const Loc& l) const {
    switch (l.kind) {
      case Loc::Kind::kParameter: return static_cast<const uint8_t*>(inputs_[l.index]->mapped);
      case Loc::Kind::kConstant: return static_cast<const uint8_t*>(exe_.constants().mapped) + l.offset;
      case Loc::Kind::kArena: return static_cast<const uint8_t*>(arena_[l.index].mapped) + l.offset;
      case Loc::Kind::kNone: break;
    }
    return nullptr;
  }

  void Record() {
    if (recording_) return;
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    d_.api.vkBeginCommandBuffer(commands_, &begin);
    recording_ = true;
  }

  // What a dispatch or copy wrote is visible to every later dispatch, copy
  // and host read.
  void Barrier(VkPipelineStageFlags after) {
    VkMemoryBarrier barrier{};
    barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    barrier.srcAccessMask =
        after == VK_PIPELINE_STAGE_TRANSFER_BIT ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_SHADER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                            VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
    d_.api.vkCmdPipelineBarrier(commands_, after,
                                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                                    VK_PIPELINE_STAGE_HOST_BIT,
                                0, 1, &barrier, 0, nullptr, 0, nullptr);
  }

  hlo::Status Flush() {
    if (!recording_) return hlo::OkStatus();
    recording_ = false;
    const Api& api = d_.api;
    api.vkEndCommandBuffer(commands_);
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands_;
    VkResult r;
    {
      std::lock_guard<std::mutex> lock(d_.mutex);
      r = api.vkQueueSubmit(d_.queue, 1, &submit, fence_);
    }
    if (r != VK_SUCCESS) return hlo::Internal("vkQueueSubmit: " + ResultName(r));
    r = api.vkWaitForFences(d_.device, 1, &fence_, VK_TRUE, UINT64_MAX);
    if (r != VK_SUCCESS) return hlo::Internal("waiting for the device: " + ResultName(r));
    api.vkResetFences(d_.device, 1, &fence_);
    api.vkResetCommandBuffer(commands_, 0);
    return hlo::OkStatus();
  }

  // DeviceQueue: dispatches and copies recorded into the command buffer,
  // each followed by a barrier; a read submits what was recorded and waits.
  hlo::Status Dispatch(const Op& op, uint64_t table) override {
    const Api& api = d_.api;
    const auto* pipeline = static_cast<const Pipeline*>(op.kernel);
    Record();
    api.vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline->pipeline);
    api.vkCmdPushConstants(commands_, pipeline->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, &table);
    // One row of workgroups: kernels read gl_NumWorkGroups.y - 1 as a 0 the
    // compiler cannot see (gpu::kRuntimeZero).
    api.vkCmdDispatch(commands_, op.groups, 1, 1);
    Barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    if (profile_) {
      // Each dispatch alone, timed from the host.
      const auto start = std::chrono::steady_clock::now();
      ANVIL_RETURN_IF_ERROR(Flush());
      profile_seconds_[op.what] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return hlo::OkStatus();
  }

  hlo::Status Copy(const Loc& src, const Loc& dst) override {
    Record();
    VkBufferCopy region{src.offset, dst.offset, src.bytes};
    d_.api.vkCmdCopyBuffer(commands_, BufferOf(src), BufferOf(dst), 1, &region);
    Barrier(VK_PIPELINE_STAGE_TRANSFER_BIT);
    return hlo::OkStatus();
  }

  hlo::Status Read(const Loc& at, void* host, size_t bytes) override {
    ANVIL_RETURN_IF_ERROR(Flush());
    const uint8_t* p = HostPointer(at);
    if (!p) return hlo::Internal("a read of a value with no memory");
    std::memcpy(host, p, bytes);
    return hlo::OkStatus();
  }

  const Executable& exe_;
  Device& d_;
  const std::vector<const Buffer*>& inputs_;
  std::vector<Buffer> arena_;
  Buffer tables_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool recording_ = false;
  const bool profile_ = std::getenv("ANVIL_VULKAN_PROFILE") != nullptr;
  std::map<std::string, double> profile_seconds_;
};

}  // namespace

hlo::Status RunExecutable(const Executable& exe, Device& device, const std::vector<const Buffer*>& inputs,
                          const std::vector<const Buffer*>& outputs) {
  hlo::Status status = hlo::OkStatus();
  {
    Runner runner(exe, device, inputs);
    status = runner.Run(outputs);
  }
  const std::string validation = Validation().Take();
  if (!validation.empty()) return hlo::Internal("the Vulkan validation layer reports: " + validation);
  return status;
}

}  // namespace anvil::vulkan
