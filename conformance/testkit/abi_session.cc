#include "conformance/testkit/abi_session.h"

namespace anvil::testkit {

std::string TakeMessage(anvil_status* status) {
  if (!status) return "";
  std::string text = anvil_status_get_message(status);
  anvil_status_free(status);
  return text.empty() ? "(error without message)" : text;
}

AbiSession::AbiSession(const char* plugin) : AbiSession(plugin, anvil_client_options{}) {}

AbiSession::AbiSession(const char* plugin, anvil_client_options options) {
  options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
  options.plugin_path = nullptr;
  options.load_all_plugins = 0;
  error_ = TakeMessage(anvil_client_create(&options, &client_));
  if (!ok()) return;
  anvil_plugin_load_args load{};
  load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
  load.name = plugin;
  error_ = TakeMessage(anvil_client_load_plugin(client_, &load));
  if (ok()) error_ = TakeMessage(anvil_client_device_count(client_, &device_count_));
  if (ok() && device_count_ == 0) error_ = std::string("plugin ") + plugin + " has no devices";
  if (ok()) error_ = TakeMessage(anvil_client_device(client_, 0, &device_));
}

AbiSession::~AbiSession() {
  if (client_) {
    ANVIL_TESTKIT_EXPECT_OK(anvil_client_destroy(client_));
  }
}

anvil_status* AbiSession::Compile(const std::string& hlo, anvil_executable** out, const char* options) {
  anvil_compile_args compile{};
  compile.options = options;
  compile.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
  compile.program = hlo.data();
  compile.program_size = hlo.size();
  compile.format = "hlo";
  compile.device = device_;
  return anvil_client_compile(client_, &compile, out);
}

anvil_buffer* AbiSession::FromHost(const void* data, anvil_element_type type, const std::vector<int64_t>& dims) {
  anvil_buffer_from_host_args args{};
  args.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
  args.device = device_;
  args.data = data;
  args.element_type = type;
  args.dims = dims.data();
  args.num_dims = dims.size();
  anvil_buffer* buffer = nullptr;
  anvil_event* done = nullptr;
  ANVIL_TESTKIT_EXPECT_OK(anvil_buffer_from_host(client_, &args, &buffer, &done));
  if (done) {
    ANVIL_TESTKIT_EXPECT_OK(anvil_event_await(done));
    ANVIL_TESTKIT_EXPECT_OK(anvil_event_destroy(done));
  }
  return buffer;
}

void AbiSession::CopyToHost(anvil_buffer* buffer, void* dst, size_t bytes) {
  anvil_event* done = nullptr;
  ANVIL_TESTKIT_EXPECT_OK(anvil_buffer_to_host(buffer, dst, bytes, &done));
  if (!done) return;
  ANVIL_TESTKIT_EXPECT_OK(anvil_event_await(done));
  ANVIL_TESTKIT_EXPECT_OK(anvil_event_destroy(done));
}

std::vector<anvil_buffer*> AbiSession::Execute(anvil_executable* executable, std::vector<anvil_buffer*> inputs,
                                               size_t num_outputs, std::vector<uint8_t> donate) {
  donate.resize(inputs.size(), 0);
  anvil_execute_args run{};
  run.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
  run.inputs = inputs.data();
  run.num_inputs = inputs.size();
  run.donate = donate.data();
  std::vector<anvil_buffer*> outputs(num_outputs, nullptr);
  anvil_event* done = nullptr;
  ANVIL_TESTKIT_EXPECT_OK(anvil_executable_execute(executable, &run, outputs.data(), &done));
  if (done) {
    ANVIL_TESTKIT_EXPECT_OK(anvil_event_await(done));
    ANVIL_TESTKIT_EXPECT_OK(anvil_event_destroy(done));
  }
  return outputs;
}

}  // namespace anvil::testkit
