#include "tools/program_session.h"

#include <cstdlib>
#include <chrono>

namespace anvil::tools {
namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The shape of parameter or result `index`, read through the ABI.
template <typename Query>
bool ReadShape(Query query, anvil_executable* exe, size_t index, hlo::Shape* shape, anvil_status** status) {
  int32_t type = 0;
  const int64_t* dims = nullptr;
  size_t rank = 0;
  *status = query(exe, index, &type, &dims, &rank);
  if (*status) return false;
  *shape = hlo::Shape(static_cast<hlo::ElementType>(type), std::vector<int64_t>(dims, dims + rank));
  return true;
}

}  // namespace

ProgramSession::~ProgramSession() {
  ReleaseOutputs();
  for (anvil_buffer* b : inputs_) anvil_status_free(anvil_buffer_destroy(b));
  anvil_status_free(anvil_executable_destroy(executable_));
  anvil_status_free(anvil_client_destroy(client_));
}

bool ProgramSession::Check(anvil_status* status) {
  if (!status) return true;
  error_ = anvil_status_get_message(status);
  anvil_status_free(status);
  return false;
}

void ProgramSession::ReleaseOutputs() {
  for (anvil_buffer* b : outputs_) anvil_status_free(anvil_buffer_destroy(b));
  outputs_.assign(outputs_.size(), nullptr);
}

std::string ProgramSession::DefaultCacheDir() {
  if (std::getenv("ANVIL_CACHE_DIR")) return "";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/anvil";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/anvil";
  return "";
}

bool ProgramSession::Open(const std::string& plugin, const ClientSettings& settings) {
  anvil_client_options options{};
  options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
  options.load_all_plugins = 0;
  if (!settings.trace_path.empty()) options.trace_path = settings.trace_path.c_str();
  if (!settings.cache_dir.empty()) options.cache_dir = settings.cache_dir.c_str();
  if (!Check(anvil_client_create(&options, &client_))) return false;
  compile_options_ = settings.compile_options;
  anvil_plugin_load_args load{};
  load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
  // A name is looked up on the search path; an argument with a '/' is the
  // plugin's file.
  (plugin.find('/') == std::string::npos ? load.name : load.path) = plugin.c_str();
  return Check(anvil_client_load_plugin(client_, &load)) && Check(anvil_client_device(client_, 0, &device_));
}

bool ProgramSession::Compile(const std::string& hlo_text, double* compile_ms) {
  anvil_compile_args compile{};
  compile.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
  compile.program = hlo_text.data();
  compile.program_size = hlo_text.size();
  compile.format = "hlo";
  compile.device = device_;
  if (!compile_options_.empty()) compile.options = compile_options_.c_str();
  const auto start = Clock::now();
  if (!Check(anvil_client_compile(client_, &compile, &executable_))) return false;
  *compile_ms = MillisecondsSince(start);
  size_t params = 0, results = 0;
  if (!Check(anvil_executable_parameter_count(executable_, &params)) ||
      !Check(anvil_executable_result_count(executable_, &results))) {
    return false;
  }
  anvil_status* status = nullptr;
  parameters_.resize(params);
  results_.resize(results);
  for (size_t p = 0; p < params; ++p) {
    if (!ReadShape(&anvil_executable_parameter_shape, executable_, p, &parameters_[p], &status)) return Check(status);
  }
  for (size_t r = 0; r < results; ++r) {
    if (!ReadShape(&anvil_executable_result_shape, executable_, r, &results_[r], &status)) return Check(status);
  }
  outputs_.assign(results, nullptr);
  return true;
}

bool ProgramSession::Upload(const std::vector<hlo::Literal>& arguments) {
  for (size_t p = 0; p < arguments.size(); ++p) {
    const hlo::Shape& shape = arguments[p].shape();
    anvil_buffer_from_host_args from{};
    from.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
    from.device = device_;
    from.data = arguments[p].data().data();
    from.element_type = static_cast<int32_t>(shape.element_type());
    from.dims = shape.dims().data();
    from.num_dims = shape.dims().size();
    anvil_buffer* b = nullptr;
    if (!Check(anvil_buffer_from_host(client_, &from, &b, nullptr))) return false;
    inputs_.push_back(b);
  }
  return true;
}

bool ProgramSession::Execute(double* execute_ms) {
  ReleaseOutputs();
  anvil_execute_args run{};
  run.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
  run.inputs = inputs_.data();
  run.num_inputs = inputs_.size();
  anvil_event* done = nullptr;
  const auto start = Clock::now();
  bool ok = Check(anvil_executable_execute(executable_, &run, outputs_.data(), &done)) && Check(anvil_event_await(done));
  *execute_ms = MillisecondsSince(start);
  anvil_status_free(anvil_event_destroy(done));
  return ok;
}

bool ProgramSession::Result(size_t r, hlo::Literal* out) {
  *out = hlo::Literal(results_[r]);
  anvil_event* copied = nullptr;
  bool ok = Check(anvil_buffer_to_host(outputs_[r], out->mutable_data().data(), out->mutable_data().size(), &copied)) &&
            Check(anvil_event_await(copied));
  anvil_status_free(anvil_event_destroy(copied));
  return ok;
}

}  // namespace anvil::tools
