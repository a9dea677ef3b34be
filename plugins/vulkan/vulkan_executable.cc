#include "plugins/vulkan/vulkan_executable.h"

#include <cstring>
#include <map>
#include <unordered_map>

#include "hlo/hlo_parser.h"
#include "plugins/vulkan/spirv_elementwise.h"

namespace anvil::vulkan {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

size_t Bytes(const hlo::Shape& s) { return static_cast<size_t>(s.ElementCount() * hlo::Info(s.element_type()).byte_size); }

hlo::Status NotYet(const Instruction& i, const std::string& why = "") {
  return hlo::Unimplemented("the Vulkan plugin cannot compile %" + i.name + " (" + std::string(i.OpcodeSpelling()) + " " +
                            i.shape.ToString(false) + ") yet" + (why.empty() ? "" : ": " + why));
}

// The kernel key of the pipeline cache: op, type and which operands are scalars.
std::string KeyOf(const ElementwiseKernel& k) {
  std::string key = std::to_string(static_cast<int>(k.opcode)) + "/" + std::to_string(static_cast<int>(k.type)) + "/";
  for (bool s : k.scalar_operands) key += s ? 's' : 'v';
  return key;
}

}  // namespace

hlo::StatusOr<std::unique_ptr<Executable>> Executable::Compile(Device& device, size_t device_index,
                                                               std::string_view hlo_text) {
  auto module = hlo::ParseHloModule(hlo_text, {"canonical", 1});
  if (!module.ok()) return module.status();
  std::unique_ptr<Executable> exe(new Executable(device, device_index));
  ANVIL_RETURN_IF_ERROR(exe->Build(*(*module)->entry));
  return exe;
}

hlo::Status Executable::Build(const hlo::Computation& entry) {
  std::unordered_map<const Instruction*, ValueRef> values;
  std::map<std::string, size_t> pipeline_of;
  auto check_size = [&](const Instruction& i) -> hlo::Status {
    if (!i.shape.IsArray()) return NotYet(i, "tuples are taken only as the entry's result");
    if (Bytes(i.shape) > device_.max_storage_buffer_range) {
      return NotYet(i, "it needs " + std::to_string(Bytes(i.shape)) + " bytes in one storage buffer and " +
                           device_.name + " binds at most " + std::to_string(device_.max_storage_buffer_range));
    }
    if (i.shape.ElementCount() > 0xFFFFFFFFll) return NotYet(i, "more than 2^32 elements");
    return hlo::OkStatus();
  };
  auto add_dispatch = [&](const ElementwiseKernel& kernel, std::vector<ValueRef> bindings, uint32_t elements) -> hlo::Status {
    const std::string key = KeyOf(kernel);
    auto found = pipeline_of.find(key);
    if (found == pipeline_of.end()) {
      ANVIL_ASSIGN_OR_RETURN(std::vector<uint32_t> words, EmitElementwise(kernel));
      Pipeline p;
      p.bindings = static_cast<uint32_t>(kernel.scalar_operands.size() + 1);
      const Api& api = device_.api;
      VkShaderModuleCreateInfo shader{};
      shader.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
      shader.codeSize = words.size() * 4;
      shader.pCode = words.data();
      VkResult r = api.vkCreateShaderModule(device_.device, &shader, nullptr, &p.shader);
      std::vector<VkDescriptorSetLayoutBinding> bindings_layout(p.bindings);
      for (uint32_t b = 0; b < p.bindings; ++b) {
        bindings_layout[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
      }
      VkDescriptorSetLayoutCreateInfo set{};
      set.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
      set.bindingCount = p.bindings;
      set.pBindings = bindings_layout.data();
      if (r == VK_SUCCESS) r = api.vkCreateDescriptorSetLayout(device_.device, &set, nullptr, &p.set_layout);
      VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
      VkPipelineLayoutCreateInfo layout{};
      layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
      layout.setLayoutCount = 1;
      layout.pSetLayouts = &p.set_layout;
      layout.pushConstantRangeCount = 1;
      layout.pPushConstantRanges = &push;
      if (r == VK_SUCCESS) r = api.vkCreatePipelineLayout(device_.device, &layout, nullptr, &p.layout);
      VkComputePipelineCreateInfo info{};
      info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
      info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
      info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
      info.stage.module = p.shader;
      info.stage.pName = "main";
      info.layout = p.layout;
      if (r == VK_SUCCESS) r = api.vkCreateComputePipelines(device_.device, VK_NULL_HANDLE, 1, &info, nullptr, &p.pipeline);
      pipelines_.push_back(p);  // destroyed with the executable even when incomplete
      if (r != VK_SUCCESS) return hlo::Internal("creating a compute pipeline: " + ResultName(r));
      found = pipeline_of.emplace(key, pipelines_.size() - 1).first;
    }
    dispatches_.push_back(Dispatch{found->second, std::move(bindings), elements});
    return hlo::OkStatus();
  };

  for (const auto& owned : entry.instructions) {
    const Instruction& i = *owned;
    switch (i.opcode) {
      case Opcode::kParameter:
        ANVIL_RETURN_IF_ERROR(check_size(i));
        values[&i] = {ValueRef::Kind::kParameter, static_cast<size_t>(i.parameter_number)};
        parameter_count_ = std::max(parameter_count_, static_cast<size_t>(i.parameter_number) + 1);
        continue;
      case Opcode::kConstant: {
        ANVIL_RETURN_IF_ERROR(check_size(i));
        if (!i.literal || i.literal->elided()) return NotYet(i, "the constant's values are not in the program");
        Buffer b;
        std::string why;
        if (!device_.CreateBuffer(Bytes(i.shape), &b, why)) return hlo::ResourceExhausted(why);
        if (!i.literal->data().empty()) std::memcpy(b.mapped, i.literal->data().data(), i.literal->data().size());
        constants_.push_back(b);
        values[&i] = {ValueRef::Kind::kConstant, constants_.size() - 1};
        continue;
      }
      case Opcode::kTuple:
        if (&i != entry.root) return NotYet(i, "tuples are taken only as the entry's result");
        continue;
      case Opcode::kReshape:
      case Opcode::kBitcast:
        if (Bytes(i.shape) == Bytes(i.operands[0]->shape)) {
          values[&i] = values.at(i.operands[0]);  // same bytes, row-major either way
          continue;
        }
        return NotYet(i);
      default: break;
    }
    ANVIL_RETURN_IF_ERROR(check_size(i));
    ElementwiseKernel kernel;
    kernel.type = i.shape.element_type();
    const int64_t count = i.shape.ElementCount();
    if (i.opcode == Opcode::kBroadcast || i.opcode == Opcode::kCopy) {
      const int64_t from = i.operands[0]->shape.ElementCount();
      if (from != 1 && from != count) return NotYet(i, "only broadcasts of one value or of as many values");
      kernel.opcode = Opcode::kCopy;
    } else if (hlo::IsElementwiseUnary(i.opcode) || hlo::IsElementwiseBinary(i.opcode)) {
      kernel.opcode = i.opcode;
    } else {
      return NotYet(i);
    }
    std::vector<ValueRef> bindings;
    for (const Instruction* o : i.operands) {
      if (o->shape.element_type() != kernel.type) return NotYet(i, "operands of another element type");
      const int64_t n = o->shape.ElementCount();
      if (n != 1 && n != count) return NotYet(i, "operand shapes differ");
      kernel.scalar_operands.push_back(n == 1 && count != 1);
      bindings.push_back(values.at(o));
    }
    if (!HasElementwiseKernel(kernel.opcode, kernel.type, kernel.scalar_operands.size())) {
      return NotYet(i, "no kernel for this op on " + std::string(hlo::HloName(kernel.type)));
    }
    temporary_bytes_.push_back(Bytes(i.shape));
    const ValueRef result{ValueRef::Kind::kTemporary, temporary_bytes_.size() - 1};
    bindings.push_back(result);
    values[&i] = result;
    ANVIL_RETURN_IF_ERROR(add_dispatch(kernel, std::move(bindings), static_cast<uint32_t>(count)));
  }

  // Results: a temporary that is one output only is computed straight into
  // the output's memory; anything else is copied there.
  std::vector<const Instruction*> results;
  if (entry.root->opcode == Opcode::kTuple) {
    results.assign(entry.root->operands.begin(), entry.root->operands.end());
  } else {
    results.push_back(entry.root);
  }
  std::map<size_t, int> uses;  // temporary -> number of outputs that are it
  for (const Instruction* r : results) {
    if (values.at(r).kind == ValueRef::Kind::kTemporary) ++uses[values.at(r).index];
  }
  for (size_t k = 0; k < results.size(); ++k) {
    const Instruction* r = results[k];
    if (!r->shape.IsArray()) return NotYet(*r, "nested tuples");
    output_bytes_.push_back(Bytes(r->shape));
    const ValueRef v = values.at(r);
    const ValueRef out{ValueRef::Kind::kOutput, k};
    if (v.kind == ValueRef::Kind::kTemporary && uses[v.index] == 1) {
      for (Dispatch& d : dispatches_) {
        for (ValueRef& b : d.bindings) {
          if (b.kind == v.kind && b.index == v.index) b = out;
        }
      }
      continue;
    }
    if (hlo::Info(r->shape.element_type()).byte_size != 4) return NotYet(*r, "an output copied from another value");
    ElementwiseKernel copy;
    copy.opcode = Opcode::kCopy;
    copy.type = ElementType::kU32;  // any 4-byte type, bit for bit
    copy.scalar_operands = {false};
    ANVIL_RETURN_IF_ERROR(add_dispatch(copy, {v, out}, static_cast<uint32_t>(r->shape.ElementCount())));
  }
  return hlo::OkStatus();
}

Executable::~Executable() {
  const Api& api = device_.api;
  for (Pipeline& p : pipelines_) {
    if (p.pipeline) api.vkDestroyPipeline(device_.device, p.pipeline, nullptr);
    if (p.layout) api.vkDestroyPipelineLayout(device_.device, p.layout, nullptr);
    if (p.set_layout) api.vkDestroyDescriptorSetLayout(device_.device, p.set_layout, nullptr);
    if (p.shader) api.vkDestroyShaderModule(device_.device, p.shader, nullptr);
  }
  for (Buffer& b : constants_) device_.DestroyBuffer(b);
}

}  // namespace anvil::vulkan
