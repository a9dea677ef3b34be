// The Vulkan plugin's entry point: every Vulkan device with a compute queue
// is an Anvil device; programs compile to SPIR-V compute pipelines, and an
// execution is one command buffer of dispatches, submitted with a fence that
// one of core's host threads waits on before reporting completion.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "plugins/common/plugin_support.h"
#include "plugins/vulkan/spirv_elementwise.h"
#include "plugins/vulkan/vulkan_device.h"
#include "plugins/vulkan/vulkan_executable.h"

struct anvil_plugin_memory {
  size_t device;
  anvil::vulkan::Buffer buffer;
};

struct anvil_plugin_context {
  anvil_plugin_host_executor executor;
  anvil::vulkan::Instance& instance;
};

namespace {

using anvil::plugin::Async;
using anvil::plugin::BaseApi;
using anvil::plugin::Error;
using anvil::plugin::FromStatus;
using anvil::plugin::kInternal;
using anvil::plugin::kInvalidArgument;
using anvil::plugin::kResourceExhausted;
using anvil::vulkan::Buffer;
using anvil::vulkan::Device;
using anvil::vulkan::Executable;
using anvil::vulkan::ValueRef;

// One Vulkan instance for the process, made on first use and never torn
// down: creating one costs a quarter second on lavapipe, and drivers keep
// global allocations that their unloading (which destroying the last
// instance does) would strand. For those to stay reachable this library
// stays mapped too, however often clients load and unload it.
anvil::vulkan::Instance& SharedInstance() {
  static anvil::vulkan::Instance* instance = [] {
    Dl_info self;
    if (dladdr(reinterpret_cast<void*>(&SharedInstance), &self) && self.dli_fname) {
      dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    }
    return new anvil::vulkan::Instance();
  }();
  return *instance;
}

anvil_plugin_error* ContextCreate(const anvil_plugin_host_executor* executor, anvil_plugin_context** out) {
  if (!executor || executor->struct_size < ANVIL_PLUGIN_HOST_EXECUTOR_STRUCT_SIZE) {
    return Error(kInvalidArgument, "the Vulkan plugin needs core's host executor");
  }
  auto* context = new anvil_plugin_context{*executor, SharedInstance()};
  if (context->instance.device_count() == 0) {
    // Loading still succeeds: a machine without Vulkan has zero devices here.
    std::fprintf(stderr, "anvil vulkan plugin: no devices: %s\n", context->instance.why_no_devices().c_str());
  }
  *out = context;
  return nullptr;
}

void ContextDestroy(anvil_plugin_context* context) { delete context; }

anvil_plugin_error* DeviceCount(anvil_plugin_context* context, size_t* out) {
  *out = context->instance.device_count();
  return nullptr;
}

anvil_plugin_error* CheckDevice(anvil_plugin_context* context, size_t device) {
  if (device < context->instance.device_count()) return nullptr;
  return Error(kInvalidArgument, "the Vulkan plugin has " + std::to_string(context->instance.device_count()) +
                                     " devices, not device " + std::to_string(device) +
                                     (context->instance.device_count() ? "" : " (" + context->instance.why_no_devices() + ")"));
}

anvil_plugin_error* DeviceProperties(anvil_plugin_context* context, size_t device, anvil_plugin_device_properties* out) {
  if (auto* e = CheckDevice(context, device)) return e;
  Device& d = context->instance.device(device);
  out->kind = "vulkan";
  out->name = d.name.c_str();
  out->memory_bytes = d.memory_bytes;
  return nullptr;
}

anvil_plugin_error* Allocate(anvil_plugin_context* context, size_t device, size_t bytes, anvil_plugin_memory** out) {
  if (auto* e = CheckDevice(context, device)) return e;
  auto memory = std::make_unique<anvil_plugin_memory>();
  memory->device = device;
  std::string why;
  if (!context->instance.device(device).CreateBuffer(bytes, &memory->buffer, why)) return Error(kResourceExhausted, why);
  *out = memory.release();
  return nullptr;
}

void Free(anvil_plugin_context* context, anvil_plugin_memory* memory) {
  if (!memory) return;
  context->instance.device(memory->device).DestroyBuffer(memory->buffer);
  delete memory;
}

// Memory is host-visible and coherent: copies are memcpys through the mapping.
anvil_plugin_error* CopyFromHost(anvil_plugin_context* context, anvil_plugin_memory* memory, const void* src,
                                 size_t bytes, anvil_plugin_done done, void* user) {
  if (bytes != memory->buffer.bytes) return Error(kInvalidArgument, "copy size differs from the buffer's");
  Async(context->executor, [=] {
    if (bytes) std::memcpy(memory->buffer.mapped, src, bytes);
    done(user, nullptr);
  });
  return nullptr;
}

anvil_plugin_error* CopyToHost(anvil_plugin_context* context, anvil_plugin_memory* memory, void* dst, size_t bytes,
                               anvil_plugin_done done, void* user) {
  if (bytes != memory->buffer.bytes) return Error(kInvalidArgument, "copy size differs from the buffer's");
  Async(context->executor, [=] {
    if (bytes) std::memcpy(dst, memory->buffer.mapped, bytes);
    done(user, nullptr);
  });
  return nullptr;
}

anvil_plugin_error* Compile(anvil_plugin_context* context, size_t device, const char* text, size_t size, const char*,
                            anvil_plugin_executable** out) {
  if (auto* e = CheckDevice(context, device)) return e;
  auto exe = Executable::Compile(context->instance.device(device), device, std::string_view(text, size));
  if (!exe.ok()) return FromStatus(exe.status());
  *out = reinterpret_cast<anvil_plugin_executable*>(std::move(exe).value().release());
  return nullptr;
}

void ExecutableDestroy(anvil_plugin_context*, anvil_plugin_executable* e) { delete reinterpret_cast<Executable*>(e); }

// What one execution holds until its fence signals.
struct Run {
  Device* device = nullptr;
  std::vector<Buffer> temporaries;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  std::vector<anvil_plugin_memory*> donated;

  void Release(anvil_plugin_context* context) {
    const anvil::vulkan::Api& api = device->api;
    if (fence) api.vkDestroyFence(device->device, fence, nullptr);
    if (commands) {
      std::lock_guard<std::mutex> lock(device->mutex);
      api.vkFreeCommandBuffers(device->device, device->command_pool, 1, &commands);
    }
    if (pool) api.vkDestroyDescriptorPool(device->device, pool, nullptr);
    for (Buffer& b : temporaries) device->DestroyBuffer(b);
    for (auto* m : donated) Free(context, m);
  }
};

// Records every dispatch of `exe` into `run`'s command buffer and submits it.
anvil_plugin_error* Submit(Executable& exe, Run& run, anvil_plugin_memory* const* inputs,
                           anvil_plugin_memory* const* outputs) {
  Device& d = *run.device;
  const anvil::vulkan::Api& api = d.api;
  std::string why;
  const auto& dispatches = exe.dispatches();
  std::vector<bool> used(exe.temporary_bytes().size(), false);
  size_t descriptors = 0;
  for (const auto& dispatch : dispatches) {
    descriptors += dispatch.bindings.size();
    for (const ValueRef& b : dispatch.bindings) {
      if (b.kind == ValueRef::Kind::kTemporary) used[b.index] = true;
    }
  }
  run.temporaries.resize(used.size());
  for (size_t t = 0; t < used.size(); ++t) {
    if (used[t] && !d.CreateBuffer(exe.temporary_bytes()[t], &run.temporaries[t], why)) {
      return Error(kResourceExhausted, why);
    }
  }
  auto buffer_of = [&](const ValueRef& v) -> VkBuffer {
    switch (v.kind) {
      case ValueRef::Kind::kParameter: return inputs[v.index]->buffer.buffer;
      case ValueRef::Kind::kConstant: return exe.constants()[v.index].buffer;
      case ValueRef::Kind::kTemporary: return run.temporaries[v.index].buffer;
      case ValueRef::Kind::kOutput: return outputs[v.index]->buffer.buffer;
    }
    return VK_NULL_HANDLE;
  };
  VkResult r = VK_SUCCESS;
  if (!dispatches.empty()) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, static_cast<uint32_t>(descriptors)};
    VkDescriptorPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    pool.maxSets = static_cast<uint32_t>(dispatches.size());
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    r = api.vkCreateDescriptorPool(d.device, &pool, nullptr, &run.pool);
    if (r != VK_SUCCESS) return Error(kResourceExhausted, "vkCreateDescriptorPool: " + anvil::vulkan::ResultName(r));
  }
  std::vector<VkDescriptorSet> sets(dispatches.size());
  for (size_t k = 0; k < dispatches.size() && r == VK_SUCCESS; ++k) {
    const auto& pipeline = exe.pipelines()[dispatches[k].pipeline];
    VkDescriptorSetAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    alloc.descriptorPool = run.pool;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &pipeline.set_layout;
    r = api.vkAllocateDescriptorSets(d.device, &alloc, &sets[k]);
    if (r != VK_SUCCESS) break;
    std::vector<VkDescriptorBufferInfo> infos;
    for (const ValueRef& b : dispatches[k].bindings) infos.push_back({buffer_of(b), 0, VK_WHOLE_SIZE});
    std::vector<VkWriteDescriptorSet> writes(infos.size());
    for (size_t b = 0; b < infos.size(); ++b) {
      writes[b] = {};
      writes[b].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      writes[b].dstSet = sets[k];
      writes[b].dstBinding = static_cast<uint32_t>(b);
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    api.vkUpdateDescriptorSets(d.device, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  }
  if (r != VK_SUCCESS) return Error(kResourceExhausted, "allocating descriptor sets: " + anvil::vulkan::ResultName(r));
  VkFenceCreateInfo fence{};
  fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  r = api.vkCreateFence(d.device, &fence, nullptr, &run.fence);
  if (r != VK_SUCCESS) return Error(kResourceExhausted, "vkCreateFence: " + anvil::vulkan::ResultName(r));

  std::lock_guard<std::mutex> lock(d.mutex);
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = d.command_pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  r = api.vkAllocateCommandBuffers(d.device, &alloc, &run.commands);
  if (r != VK_SUCCESS) {
    run.commands = VK_NULL_HANDLE;
    return Error(kResourceExhausted, "vkAllocateCommandBuffers: " + anvil::vulkan::ResultName(r));
  }
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  api.vkBeginCommandBuffer(run.commands, &begin);
  for (size_t k = 0; k < dispatches.size(); ++k) {
    const auto& pipeline = exe.pipelines()[dispatches[k].pipeline];
    api.vkCmdBindPipeline(run.commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
    api.vkCmdBindDescriptorSets(run.commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &sets[k], 0, nullptr);
    const uint32_t elements = dispatches[k].elements;
    api.vkCmdPushConstants(run.commands, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &elements);
    api.vkCmdDispatch(run.commands, (elements + anvil::vulkan::kWorkgroupSize - 1) / anvil::vulkan::kWorkgroupSize, 1, 1);
    // Each dispatch reads what the ones before it wrote.
    VkMemoryBarrier barrier{};
    barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
    api.vkCmdPipelineBarrier(run.commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0,
                             nullptr, 0, nullptr);
  }
  api.vkEndCommandBuffer(run.commands);
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &run.commands;
  r = api.vkQueueSubmit(d.queue, 1, &submit, run.fence);
  if (r != VK_SUCCESS) return Error(kInternal, "vkQueueSubmit: " + anvil::vulkan::ResultName(r));
  return nullptr;
}

anvil_plugin_error* Execute(anvil_plugin_context* context, anvil_plugin_executable* executable,
                            anvil_plugin_memory* const* inputs, const uint8_t* donated, size_t num_inputs,
                            anvil_plugin_memory** outputs, size_t num_outputs, anvil_plugin_done done, void* user) {
  auto* exe = reinterpret_cast<Executable*>(executable);
  auto run = std::make_unique<Run>();
  run->device = &exe->device();
  for (size_t k = 0; k < num_inputs; ++k) {
    if (donated[k]) run->donated.push_back(inputs[k]);
  }
  if (num_inputs != exe->parameter_count() || num_outputs != exe->output_bytes().size()) {
    run->Release(context);
    return Error(kInvalidArgument, "the executable takes " + std::to_string(exe->parameter_count()) +
                                       " inputs and gives " + std::to_string(exe->output_bytes().size()) + " outputs");
  }
  const size_t device = exe->device_index();
  for (size_t k = 0; k < num_outputs; ++k) {
    if (anvil_plugin_error* e = Allocate(context, device, exe->output_bytes()[k], &outputs[k])) {
      for (size_t j = 0; j < k; ++j) Free(context, outputs[j]);
      run->Release(context);
      return e;
    }
  }
  if (anvil_plugin_error* e = Submit(*exe, *run, inputs, outputs)) {
    // Nothing was submitted, so nothing on the device uses these.
    for (size_t k = 0; k < num_outputs; ++k) Free(context, outputs[k]);
    run->Release(context);
    return e;
  }
  Run* running = run.release();
  Async(context->executor, [context, running, done, user] {
    std::unique_ptr<Run> owned(running);
    const anvil::vulkan::Api& api = owned->device->api;
    const VkResult r = api.vkWaitForFences(owned->device->device, 1, &owned->fence, VK_TRUE, UINT64_MAX);
    anvil_plugin_error* error =
        r == VK_SUCCESS ? nullptr : Error(kInternal, "waiting for the device: " + anvil::vulkan::ResultName(r));
    owned->Release(context);
    done(user, error);
  });
  return nullptr;
}

anvil_plugin_api MakeApi() {
  anvil_plugin_api api = BaseApi("vulkan", "0.1.0");
  api.context_create = &ContextCreate;
  api.context_destroy = &ContextDestroy;
  api.device_count = &DeviceCount;
  api.device_properties = &DeviceProperties;
  api.memory_allocate = &Allocate;
  api.memory_free = &Free;
  api.memory_copy_from_host = &CopyFromHost;
  api.memory_copy_to_host = &CopyToHost;
  api.executable_compile = &Compile;
  api.executable_destroy = &ExecutableDestroy;
  api.executable_execute = &Execute;
  return api;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const anvil_plugin_api* anvil_plugin_get_api(void) {
  static const anvil_plugin_api api = MakeApi();
  return &api;
}
