// A plugin through the public C ABI, exactly as a framework would drive it.
#include <algorithm>
#include <cstring>
#include <functional>

#include "anvil/anvil.h"
#include "conformance/backend.h"
#include "hlo/printer.h"

namespace anvil::conformance {
namespace {

hlo::Status Take(anvil_status* s) {
  if (!s) return hlo::OkStatus();
  hlo::Status status(static_cast<hlo::StatusCode>(anvil_status_get_code(s)), anvil_status_get_message(s));
  anvil_status_free(s);
  return status;
}

class PluginBackend : public Backend {
 public:
  ~PluginBackend() override { anvil_status_free(anvil_client_destroy(client_)); }

  static hlo::StatusOr<std::unique_ptr<Backend>> Create(const std::string& plugin) {
    auto backend = std::unique_ptr<PluginBackend>(new PluginBackend());
    backend->name_ = plugin;
    anvil_client_options options{};
    options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
    options.load_all_plugins = 0;
    ANVIL_RETURN_IF_ERROR(Take(anvil_client_create(&options, &backend->client_)));
    anvil_plugin_load_args load{};
    load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
    // A name is looked up on the search path; an argument with a '/' is the
    // plugin's file (one built outside this tree, say).
    (plugin.find('/') == std::string::npos ? load.name : load.path) = plugin.c_str();
    ANVIL_RETURN_IF_ERROR(Take(anvil_client_load_plugin(backend->client_, &load)));
    size_t devices = 0;
    ANVIL_RETURN_IF_ERROR(Take(anvil_client_device_count(backend->client_, &devices)));
    if (devices == 0) return hlo::NotFound("plugin '" + plugin + "' has no device");
    ANVIL_RETURN_IF_ERROR(Take(anvil_client_device(backend->client_, 0, &backend->device_)));
    return std::unique_ptr<Backend>(std::move(backend));
  }

  // A client with the plugin loaded and, for compiling only, the targets to
  // compile for (all of the plugin's when `wanted` is empty).
  static hlo::StatusOr<std::unique_ptr<Backend>> CreateCompileOnly(const std::string& plugin,
                                                                   const std::vector<std::string>& wanted) {
    auto backend = std::unique_ptr<PluginBackend>(new PluginBackend());
    backend->name_ = plugin;
    anvil_client_options options{};
    options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
    options.load_all_plugins = 0;
    ANVIL_RETURN_IF_ERROR(Take(anvil_client_create(&options, &backend->client_)));
    anvil_plugin_load_args load{};
    load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
    (plugin.find('/') == std::string::npos ? load.name : load.path) = plugin.c_str();
    ANVIL_RETURN_IF_ERROR(Take(anvil_client_load_plugin(backend->client_, &load)));
    // The client holds this one plugin, so every target is its own.
    size_t count = 0;
    ANVIL_RETURN_IF_ERROR(Take(anvil_client_target_count(backend->client_, &count)));
    if (count == 0) {
      return hlo::Status(hlo::StatusCode::kFailedPrecondition, "plugin '" + plugin + "' has no compile-only targets");
    }
    std::vector<std::pair<size_t, std::string>> all;
    std::string names;
    for (size_t t = 0; t < count; ++t) {
      const char* owner = nullptr;
      const char* target = nullptr;
      ANVIL_RETURN_IF_ERROR(Take(anvil_client_target(backend->client_, t, &owner, &target)));
      all.emplace_back(t, target);
      names += (names.empty() ? "" : ", ") + std::string(target);
    }
    for (const std::string& w : wanted) {
      if (std::none_of(all.begin(), all.end(), [&](const auto& t) { return t.second == w; })) {
        return hlo::NotFound("plugin '" + plugin + "' has no compile-only target '" + w + "' (its targets: " + names +
                             ")");
      }
    }
    for (const auto& t : all) {
      if (wanted.empty() || std::find(wanted.begin(), wanted.end(), t.second) != wanted.end()) {
        backend->targets_.push_back(t);
      }
    }
    return std::unique_ptr<Backend>(std::move(backend));
  }

  std::string name() const override { return name_; }

  std::vector<std::string> targets() const override {
    std::vector<std::string> names;
    for (const auto& t : targets_) names.push_back(t.second);
    return names;
  }

  hlo::Status CompileForTargets(const hlo::Module& module) override {
    if (targets_.empty()) return Backend::CompileForTargets(module);
    const std::string text = hlo::Print(module);
    anvil_compile_args compile{};
    compile.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
    compile.program = text.data();
    compile.program_size = text.size();
    compile.format = "hlo";
    compile.device = nullptr;  // a compile-only target has none
    // Every target is tried, so a failure says which others fail too.
    hlo::Status first = hlo::OkStatus();
    std::string first_target, others;
    for (const auto& [index, target] : targets_) {
      hlo::Status s = Take(anvil_client_compile_for_target(client_, index, &compile));
      if (s.ok()) continue;
      if (first.ok()) {
        first = s;
        first_target = target;
      } else {
        others += (others.empty() ? "" : ", ") + target;
      }
    }
    if (first.ok()) return first;
    std::string message = first_target + ": " + first.message();
    if (!others.empty()) message += " (fails for " + others + " too)";
    return hlo::Status(first.code(), message);
  }

  hlo::StatusOr<std::vector<hlo::Literal>> Run(const hlo::Module& module,
                                               const std::vector<hlo::Literal>& arguments) override {
    const std::string text = hlo::Print(module);
    anvil_compile_args compile{};
    compile.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
    compile.program = text.data();
    compile.program_size = text.size();
    compile.format = "hlo";
    compile.device = device_;
    anvil_executable* exe = nullptr;
    ANVIL_RETURN_IF_ERROR(Take(anvil_client_compile(client_, &compile, &exe)));
    std::vector<anvil_buffer*> inputs;
    auto cleanup = [&](std::vector<anvil_buffer*>& buffers) {
      for (anvil_buffer* b : buffers) anvil_status_free(anvil_buffer_destroy(b));
      buffers.clear();
    };
    hlo::Status status = hlo::OkStatus();
    // Compiling flattens tuple parameters into their leaves, depth first,
    // so a tuple argument is passed as one buffer per leaf.
    std::function<hlo::Status(const hlo::Literal&)> upload = [&](const hlo::Literal& a) -> hlo::Status {
      if (a.shape().IsTuple()) {
        for (const hlo::Literal& element : a.tuple_elements()) ANVIL_RETURN_IF_ERROR(upload(element));
        return hlo::OkStatus();
      }
      anvil_buffer_from_host_args args{};
      args.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
      args.device = device_;
      args.data = a.data().data();
      args.element_type = static_cast<int32_t>(a.shape().element_type());
      args.dims = a.shape().dims().data();
      args.num_dims = a.shape().dims().size();
      anvil_buffer* b = nullptr;
      ANVIL_RETURN_IF_ERROR(Take(anvil_buffer_from_host(client_, &args, &b, nullptr)));
      inputs.push_back(b);
      return hlo::OkStatus();
    };
    for (const hlo::Literal& a : arguments) {
      status = upload(a);
      if (!status.ok()) break;
    }
    std::vector<hlo::Literal> results;
    size_t result_count = 0;
    std::vector<anvil_buffer*> outputs;
    if (status.ok()) status = Take(anvil_executable_result_count(exe, &result_count));
    if (status.ok()) {
      outputs.assign(result_count, nullptr);
      anvil_execute_args run{};
      run.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
      run.inputs = inputs.data();
      run.num_inputs = inputs.size();
      anvil_event* done = nullptr;
      status = Take(anvil_executable_execute(exe, &run, outputs.data(), &done));
      if (status.ok()) {
        status = Take(anvil_event_await(done));
        anvil_status_free(anvil_event_destroy(done));
      } else {
        outputs.clear();
      }
    }
    for (size_t r = 0; status.ok() && r < outputs.size(); ++r) {
      int32_t type = 0;
      const int64_t* dims = nullptr;
      size_t rank = 0;
      status = Take(anvil_executable_result_shape(exe, r, &type, &dims, &rank));
      if (!status.ok()) break;
      hlo::Literal out(hlo::Shape(static_cast<hlo::ElementType>(type), std::vector<int64_t>(dims, dims + rank)));
      anvil_event* copied = nullptr;
      status = Take(anvil_buffer_to_host(outputs[r], out.mutable_data().data(), out.mutable_data().size(), &copied));
      if (!status.ok()) break;
      status = Take(anvil_event_await(copied));
      anvil_status_free(anvil_event_destroy(copied));
      results.push_back(std::move(out));
    }
    cleanup(inputs);
    cleanup(outputs);
    anvil_status_free(anvil_executable_destroy(exe));
    if (!status.ok()) return status;
    return results;
  }

 private:
  PluginBackend() = default;
  std::string name_;
  anvil_client* client_ = nullptr;
  anvil_device* device_ = nullptr;
  std::vector<std::pair<size_t, std::string>> targets_;  // client index, name
};

}  // namespace

hlo::StatusOr<std::unique_ptr<Backend>> MakePluginBackend(const std::string& name) {
  return PluginBackend::Create(name);
}

hlo::StatusOr<std::unique_ptr<Backend>> MakeCompileOnlyBackend(const std::string& name,
                                                               const std::vector<std::string>& targets) {
  return PluginBackend::CreateCompileOnly(name, targets);
}

}  // namespace anvil::conformance
