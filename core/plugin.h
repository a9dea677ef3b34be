// One loaded device plugin: the shared library (Boost.DLL), its API table,
// checked version, and a context. Every call goes through here, which checks
// that the entry exists in the plugin's table before calling it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <boost/dll/shared_library.hpp>

#include "anvil/anvil_plugin.h"
#include "core/status.h"

namespace anvil::core {

class Plugin {
 public:
  using Done = std::function<void(Status)>;

  // Loads `path`, checks its ABI, and creates its context. The message of a
  // failure names the file and the reason (loader text, missing symbol, or
  // both versions).
  static StatusOr<std::unique_ptr<Plugin>> Load(const std::string& path, const anvil_plugin_host_executor& executor);
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& path() const { return path_; }

  StatusOr<size_t> DeviceCount();
  StatusOr<anvil_plugin_device_properties> DeviceProperties(size_t device);
  StatusOr<anvil_plugin_memory*> Allocate(size_t device, size_t bytes);
  void Free(anvil_plugin_memory* memory);
  // The caller's host memory used in place, or nullptr when the plugin
  // cannot (or predates memory_wrap_host): then the caller copies.
  StatusOr<anvil_plugin_memory*> WrapHost(size_t device, const void* data, size_t bytes);
  // `done` runs exactly once, also when the call fails synchronously.
  void CopyFromHost(anvil_plugin_memory* memory, const void* src, size_t bytes, Done done);
  void CopyToHost(anvil_plugin_memory* memory, void* dst, size_t bytes, Done done);
  StatusOr<anvil_plugin_executable*> Compile(size_t device, const std::string& hlo_text, const std::string& options);
  void DestroyExecutable(anvil_plugin_executable* executable);
  // Outputs are filled before `done` may run; `done` runs exactly once.
  void Execute(anvil_plugin_executable* executable, const std::vector<anvil_plugin_memory*>& inputs,
               const std::vector<uint8_t>& donated, std::vector<anvil_plugin_memory*>& outputs, Done done);
  StatusOr<std::string> Serialize(anvil_plugin_executable* executable);
  // Whether the plugin has all three of serialize, serialized_free and
  // deserialize, so its executables can be cached.
  bool CanSerialize() const;
  StatusOr<anvil_plugin_executable*> Deserialize(size_t device, std::string_view bytes);
  // Compile-only targets (plugin ABI minor 4). A plugin that predates the
  // three target entries, or leaves any of them NULL, has none: 0, not an
  // error.
  StatusOr<size_t> TargetCount();
  // The target's name; UNIMPLEMENTED from a plugin without target_name.
  StatusOr<std::string> TargetName(size_t target);
  // OK when `hlo_text` compiles for `target`, else the plugin's error.
  Status TargetCompile(size_t target, const std::string& hlo_text, const std::string& options);
  // The loaded library's build (its GNU build ID), for cache keys: a
  // rebuilt plugin never reads an older build's executables.
  const std::string& build_identity();

 private:
  Plugin() = default;
  // The entry at `offset` if the plugin's table holds it and it is set.
  template <typename Fn>
  StatusOr<Fn> Entry(size_t offset, const char* entry_name) const;
  Status Convert(anvil_plugin_error* error) const;
  static void DoneTrampoline(void* user_data, anvil_plugin_error* error);

  boost::dll::shared_library library_;  // unloaded last
  const anvil_plugin_api* api_ = nullptr;
  anvil_plugin_context* context_ = nullptr;
  std::string name_, version_, path_;
  std::once_flag build_identity_once_;
  std::string build_identity_;
};

}  // namespace anvil::core
