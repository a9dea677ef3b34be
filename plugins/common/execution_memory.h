// The memory an `executable_execute` entry is responsible for before its
// work is under way: the donated inputs, which are the plugin's from the
// call on, and the outputs it allocates. Every way out of the entry is clean:
//
//   ExecutionMemory memory(context, &Free, inputs, donated, num_inputs, outputs, num_outputs);
//   if (auto* e = memory.AllocateOutputs([&](size_t k, anvil_plugin_memory** out) { ... })) return e;
//   Async(executor, [donations = memory.Start(), ...]() mutable { ...; donations.FreeAll(); done(...); });
//
// - Returning an error (any early return): the destructor frees the outputs
//   allocated so far, sets every outputs[k] to NULL so that core frees
//   nothing twice, and frees the donated inputs.
// - Start(): the outputs are core's from then on, and the donated inputs go
//   with the asynchronous work, which frees them when it is done (or reuses
//   one as an output by Take()-ing it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "anvil/anvil_plugin.h"
#include "plugins/common/plugin_error.h"

namespace anvil::plugin {

using FreeMemoryFn = void (*)(anvil_plugin_context*, anvil_plugin_memory*);

// Donated input memory the plugin owns; freed when this goes, unless taken.
class DonatedInputs {
 public:
  DonatedInputs() = default;
  DonatedInputs(anvil_plugin_context* context, FreeMemoryFn free, std::vector<anvil_plugin_memory*> memory)
      : context_(context), free_(free), memory_(std::move(memory)) {}
  DonatedInputs(DonatedInputs&& other) noexcept
      : context_(other.context_), free_(other.free_), memory_(std::exchange(other.memory_, {})) {}
  DonatedInputs& operator=(DonatedInputs&& other) noexcept {
    if (this != &other) {
      FreeAll();
      context_ = other.context_;
      free_ = other.free_;
      memory_ = std::exchange(other.memory_, {});
    }
    return *this;
  }
  DonatedInputs(const DonatedInputs&) = delete;
  DonatedInputs& operator=(const DonatedInputs&) = delete;
  ~DonatedInputs() { FreeAll(); }

  const std::vector<anvil_plugin_memory*>& memory() const { return memory_; }
  // Keeps `m` from being freed: the plugin made it an output.
  void Take(anvil_plugin_memory* m) {
    for (auto& held : memory_) {
      if (held == m) held = nullptr;
    }
  }
  void FreeAll() noexcept {
    for (anvil_plugin_memory* m : std::exchange(memory_, {})) {
      if (m) free_(context_, m);
    }
  }

 private:
  anvil_plugin_context* context_ = nullptr;
  FreeMemoryFn free_ = nullptr;
  std::vector<anvil_plugin_memory*> memory_;
};

class ExecutionMemory {
 public:
  ExecutionMemory(anvil_plugin_context* context, FreeMemoryFn free, anvil_plugin_memory* const* inputs,
                  const uint8_t* donated, size_t num_inputs, anvil_plugin_memory** outputs, size_t num_outputs)
      : context_(context), free_(free), outputs_(outputs), num_outputs_(num_outputs) {
    std::vector<anvil_plugin_memory*> owned;
    for (size_t k = 0; k < num_inputs; ++k) {
      if (donated && donated[k] && inputs[k]) owned.push_back(inputs[k]);
    }
    donations_ = DonatedInputs(context, free, std::move(owned));
    for (size_t k = 0; k < num_outputs_; ++k) outputs_[k] = nullptr;
  }
  ExecutionMemory(const ExecutionMemory&) = delete;
  ExecutionMemory& operator=(const ExecutionMemory&) = delete;
  ~ExecutionMemory() {
    if (started_) return;
    for (size_t k = 0; k < num_outputs_; ++k) {
      if (outputs_[k]) free_(context_, std::exchange(outputs_[k], nullptr));
    }
    // donations_ frees the donated inputs as it goes.
  }

  // Fills outputs[k] for every k with `allocate(k, &outputs[k])`, which
  // returns NULL or an error; stops at the first error and returns it.
  template <typename Allocate>
  anvil_plugin_error* AllocateOutputs(Allocate&& allocate) {
    for (size_t k = 0; k < num_outputs_; ++k) {
      anvil_plugin_memory* m = nullptr;
      if (anvil_plugin_error* e = allocate(k, &m)) return e;
      if (!m) return Error(kInternal, "output " + std::to_string(k) + " was allocated as NULL");
      outputs_[k] = m;
    }
    return nullptr;
  }

  const DonatedInputs& donations() const { return donations_; }

  // The work is under way: outputs belong to core, donated inputs to the work.
  DonatedInputs Start() {
    started_ = true;
    return std::move(donations_);
  }

 private:
  anvil_plugin_context* context_;
  FreeMemoryFn free_;
  anvil_plugin_memory** outputs_;
  size_t num_outputs_;
  DonatedInputs donations_;
  bool started_ = false;
};

}  // namespace anvil::plugin
