#include "core/plugin.h"

#include <dlfcn.h>

#include <cstring>

#include "core/build_identity.h"

namespace anvil::core {
namespace {

struct DoneBox {
  const Plugin* plugin;
  Plugin::Done done;
};

}  // namespace

#define ANVIL_PLUGIN_ENTRY(field) \
  Entry<decltype(anvil_plugin_api::field)>(offsetof(anvil_plugin_api, field), #field)

template <typename Fn>
StatusOr<Fn> Plugin::Entry(size_t offset, const char* entry_name) const {
  if (offset + sizeof(Fn) > api_->struct_size) {
    return MakeError(StatusCode::kUnimplemented,
                     "plugin '" + name_ + "' (ABI " + std::to_string(api_->abi_major) + "." +
                         std::to_string(api_->abi_minor) + ") predates " + entry_name);
  }
  Fn fn;
  std::memcpy(&fn, reinterpret_cast<const char*>(api_) + offset, sizeof(Fn));
  if (!fn) return MakeError(StatusCode::kUnimplemented, "plugin '" + name_ + "' does not implement " + entry_name);
  return fn;
}

Status Plugin::Convert(anvil_plugin_error* error) const {
  if (!error) return hlo::OkStatus();
  auto code = ANVIL_PLUGIN_ENTRY(error_code);
  auto message = ANVIL_PLUGIN_ENTRY(error_message);
  StatusCode c = code.ok() ? static_cast<StatusCode>((*code)(error)) : StatusCode::kUnknown;
  if (c == StatusCode::kOk) c = StatusCode::kUnknown;  // an error must not read as success
  const char* text = message.ok() ? (*message)(error) : nullptr;
  std::string m = text ? std::string(text) : "(the plugin gave no message)";
  if (auto destroy = ANVIL_PLUGIN_ENTRY(error_destroy); destroy.ok()) (*destroy)(error);
  return MakeError(c, name_ + ": " + m);
}

StatusOr<std::unique_ptr<Plugin>> Plugin::Load(const std::string& path, const anvil_plugin_host_executor& executor) {
  std::unique_ptr<Plugin> plugin(new Plugin());
  plugin->path_ = path;
  boost::dll::fs::error_code error;
  plugin->library_.load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, error);
  if (error) {
    // Boost.DLL reports only an errno-style code; the loader's own words
    // (wrong ELF class, missing dependency, not an ELF file) come from dlerror.
    std::string reason = error.message();
    if (void* probe = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      dlclose(probe);
    } else if (const char* text = dlerror()) {
      reason = text;
    }
    return MakeError(StatusCode::kFailedPrecondition, path + ": cannot load: " + reason);
  }
  if (!plugin->library_.has(ANVIL_PLUGIN_GET_API_SYMBOL)) {
    return MakeError(StatusCode::kFailedPrecondition,
                     path + ": not an Anvil plugin: it does not export " ANVIL_PLUGIN_GET_API_SYMBOL);
  }
  auto get_api = plugin->library_.get<const anvil_plugin_api*()>(ANVIL_PLUGIN_GET_API_SYMBOL);
  const anvil_plugin_api* api = get_api();
  if (!api || api->struct_size < offsetof(anvil_plugin_api, version) + sizeof(api->version)) {
    return MakeError(StatusCode::kFailedPrecondition, path + ": " ANVIL_PLUGIN_GET_API_SYMBOL " returned no usable table");
  }
  if (api->abi_major != ANVIL_PLUGIN_ABI_MAJOR) {
    return MakeError(StatusCode::kFailedPrecondition,
                     path + ": plugin ABI " + std::to_string(api->abi_major) + "." + std::to_string(api->abi_minor) +
                         " is incompatible with this core's plugin ABI " + std::to_string(ANVIL_PLUGIN_ABI_MAJOR) +
                         "." + std::to_string(ANVIL_PLUGIN_ABI_MINOR) + " (the major versions differ)");
  }
  plugin->api_ = api;
  plugin->name_ = api->name ? api->name : "";
  plugin->version_ = api->version ? api->version : "";
  if (plugin->name_.empty()) return MakeError(StatusCode::kFailedPrecondition, path + ": plugin has no name");
  auto create = plugin->ANVIL_PLUGIN_ENTRY(context_create);
  if (!create.ok()) return MakeError(create.status().code(), path + ": " + create.status().message());
  Status created = plugin->Convert((*create)(&executor, &plugin->context_));
  if (!created.ok()) return MakeError(created.code(), path + ": cannot create a context: " + created.message());
  return plugin;
}

Plugin::~Plugin() {
  if (context_) {
    if (auto destroy = ANVIL_PLUGIN_ENTRY(context_destroy); destroy.ok()) (*destroy)(context_);
  }
}

StatusOr<size_t> Plugin::DeviceCount() {
  ANVIL_ASSIGN_OR_RETURN(auto fn, ANVIL_PLUGIN_ENTRY(device_count));
  size_t count = 0;
  ANVIL_RETURN_IF_ERROR(Convert(fn(context_, &count)));
  return count;
}

StatusOr<anvil_plugin_device_properties> Plugin::DeviceProperties(size_t device) {
  ANVIL_ASSIGN_OR_RETURN(auto fn, ANVIL_PLUGIN_ENTRY(device_properties));
  anvil_plugin_device_properties p{};
  p.struct_size = ANVIL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE;
  ANVIL_RETURN_IF_ERROR(Convert(fn(context_, device, &p)));
  if (!p.kind) p.kind = "";
  if (!p.name) p.name = "";
  return p;
}

StatusOr<anvil_plugin_memory*> Plugin::Allocate(size_t device, size_t bytes) {
  ANVIL_ASSIGN_OR_RETURN(auto fn, ANVIL_PLUGIN_ENTRY(memory_allocate));
  anvil_plugin_memory* memory = nullptr;
  ANVIL_RETURN_IF_ERROR(Convert(fn(context_, device, bytes, &memory)));
  return memory;
}

StatusOr<anvil_plugin_memory*> Plugin::WrapHost(size_t device, const void* data, size_t bytes) {
  auto fn = ANVIL_PLUGIN_ENTRY(memory_wrap_host);
  if (!fn.ok()) return static_cast<anvil_plugin_memory*>(nullptr);  // optional: core copies
  anvil_plugin_memory* memory = nullptr;
  ANVIL_RETURN_IF_ERROR(Convert((*fn)(context_, device, data, bytes, &memory)));
  return memory;
}

void Plugin::Free(anvil_plugin_memory* memory) {
  if (auto fn = ANVIL_PLUGIN_ENTRY(memory_free); fn.ok() && memory) (*fn)(context_, memory);
}

void Plugin::DoneTrampoline(void* user_data, anvil_plugin_error* error) {
  std::unique_ptr<DoneBox> box(static_cast<DoneBox*>(user_data));
  box->done(box->plugin->Convert(error));
}

void Plugin::CopyFromHost(anvil_plugin_memory* memory, const void* src, size_t bytes, Done done) {
  auto fn = ANVIL_PLUGIN_ENTRY(memory_copy_from_host);
  if (!fn.ok()) return done(fn.status());
  auto* box = new DoneBox{this, std::move(done)};
  anvil_plugin_error* error = (*fn)(context_, memory, src, bytes, &DoneTrampoline, box);
  if (error) {  // failed to start: `done` was not taken by the plugin
    std::unique_ptr<DoneBox> owned(box);
    owned->done(Convert(error));
  }
}

void Plugin::CopyToHost(anvil_plugin_memory* memory, void* dst, size_t bytes, Done done) {
  auto fn = ANVIL_PLUGIN_ENTRY(memory_copy_to_host);
  if (!fn.ok()) return done(fn.status());
  auto* box = new DoneBox{this, std::move(done)};
  anvil_plugin_error* error = (*fn)(context_, memory, dst, bytes, &DoneTrampoline, box);
  if (error) {
    std::unique_ptr<DoneBox> owned(box);
    owned->done(Convert(error));
  }
}

StatusOr<anvil_plugin_executable*> Plugin::Compile(size_t device, const std::string& hlo_text,
                                                    const std::string& options) {
  ANVIL_ASSIGN_OR_RETURN(auto fn, ANVIL_PLUGIN_ENTRY(executable_compile));
  anvil_plugin_executable* executable = nullptr;
  ANVIL_RETURN_IF_ERROR(Convert(fn(context_, device, hlo_text.c_str(), hlo_text.size(), options.c_str(), &executable)));
  return executable;
}

void Plugin::DestroyExecutable(anvil_plugin_executable* executable) {
  if (auto fn = ANVIL_PLUGIN_ENTRY(executable_destroy); fn.ok() && executable) (*fn)(context_, executable);
}

void Plugin::Execute(anvil_plugin_executable* executable, const std::vector<anvil_plugin_memory*>& inputs,
                     const std::vector<uint8_t>& donated, std::vector<anvil_plugin_memory*>& outputs, Done done) {
  auto fn = ANVIL_PLUGIN_ENTRY(executable_execute);
  if (!fn.ok()) return done(fn.status());
  auto* box = new DoneBox{this, std::move(done)};
  anvil_plugin_error* error = (*fn)(context_, executable, inputs.data(), donated.data(), inputs.size(),
                                    outputs.data(), outputs.size(), &DoneTrampoline, box);
  if (error) {
    std::unique_ptr<DoneBox> owned(box);
    owned->done(Convert(error));
  }
}

StatusOr<std::string> Plugin::Serialize(anvil_plugin_executable* executable) {
  ANVIL_ASSIGN_OR_RETURN(auto serialize, ANVIL_PLUGIN_ENTRY(executable_serialize));
  ANVIL_ASSIGN_OR_RETURN(auto free_bytes, ANVIL_PLUGIN_ENTRY(serialized_free));
  void* bytes = nullptr;
  size_t size = 0;
  ANVIL_RETURN_IF_ERROR(Convert(serialize(context_, executable, &bytes, &size)));
  std::string out(static_cast<const char*>(bytes), size);
  free_bytes(bytes);
  return out;
}

bool Plugin::CanSerialize() const {
  return ANVIL_PLUGIN_ENTRY(executable_serialize).ok() && ANVIL_PLUGIN_ENTRY(serialized_free).ok() &&
         ANVIL_PLUGIN_ENTRY(executable_deserialize).ok();
}

StatusOr<anvil_plugin_executable*> Plugin::Deserialize(size_t device, std::string_view bytes) {
  ANVIL_ASSIGN_OR_RETURN(auto fn, ANVIL_PLUGIN_ENTRY(executable_deserialize));
  anvil_plugin_executable* executable = nullptr;
  ANVIL_RETURN_IF_ERROR(Convert(fn(context_, device, bytes.data(), bytes.size(), &executable)));
  if (!executable) return MakeError(StatusCode::kInternal, name_ + ": executable_deserialize gave no executable");
  return executable;
}

StatusOr<size_t> Plugin::TargetCount() {
  // Optional, all three or none: a plugin that predates them (or leaves any
  // NULL) has no targets.
  auto fn = ANVIL_PLUGIN_ENTRY(target_count);
  if (!fn.ok() || !ANVIL_PLUGIN_ENTRY(target_name).ok() || !ANVIL_PLUGIN_ENTRY(target_compile).ok()) {
    return size_t{0};
  }
  size_t count = 0;
  ANVIL_RETURN_IF_ERROR(Convert((*fn)(context_, &count)));
  return count;
}

StatusOr<std::string> Plugin::TargetName(size_t target) {
  ANVIL_ASSIGN_OR_RETURN(auto fn, ANVIL_PLUGIN_ENTRY(target_name));
  const char* name = nullptr;
  ANVIL_RETURN_IF_ERROR(Convert(fn(context_, target, &name)));
  if (!name || !*name) {
    return MakeError(StatusCode::kInternal, name_ + ": target_name gave no name for target " + std::to_string(target));
  }
  return std::string(name);
}

Status Plugin::TargetCompile(size_t target, const std::string& hlo_text, const std::string& options) {
  ANVIL_ASSIGN_OR_RETURN(auto fn, ANVIL_PLUGIN_ENTRY(target_compile));
  return Convert(fn(context_, target, hlo_text.c_str(), hlo_text.size(), options.c_str()));
}

const std::string& Plugin::build_identity() {
  std::call_once(build_identity_once_, [this] { build_identity_ = BuildIdentityOf(api_); });
  return build_identity_;
}

}  // namespace anvil::core
