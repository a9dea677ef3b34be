// Compiling programs through Anvil, the executable queries, and execution.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>

#include "pjrt/buffers.h"
#include "pjrt/compile_options.h"
#include "pjrt/entries.h"
#include "pjrt/errors.h"
#include "pjrt/events.h"
#include "pjrt/types.h"

namespace anvil::pjrt {
namespace {

constexpr char kDeviceMemoryKind[] = "device";

std::string Fingerprint(std::string_view code, std::string_view plugin) {
  // FNV-1a over the program and the plugin it was compiled for.
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&](std::string_view bytes) {
    for (unsigned char c : bytes) {
      hash ^= c;
      hash *= 1099511628211ull;
    }
  };
  mix(code);
  mix(plugin);
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

// The Anvil format name of a PJRT program: "mlir" is StableHLO, as MLIR
// bytecode (a portable artifact, which is what jaxlib sends) or as text.
StatusOrError<std::string> AnvilFormat(const abi::Program& program) {
  std::string_view format(program.format, program.format_size);
  if (format == "mlir") {
    std::string_view code(program.code, program.code_size);
    if (code.size() >= 4 && code.substr(0, 4) == std::string_view("ML\xEFR", 4)) return std::string("stablehlo-bytecode");
    return std::string("stablehlo");
  }
  if (format == "hlo") {
    return MakeError(abi::kUnimplemented,
                     "PJRT_Client_Compile: format 'hlo' (a serialized HloModuleProto) is not supported; "
                     "send StableHLO (format 'mlir')");
  }
  if (format == "hlo_text") return std::string("hlo");
  return MakeError(abi::kInvalidArgument, "PJRT_Client_Compile: unknown program format '" + std::string(format) +
                                              "' (Anvil reads 'mlir' and 'hlo_text')");
}

// The module name from the canonical HLO text's first line, "HloModule NAME, ...".
std::string ModuleName(anvil_executable* executable) {
  const char* text = nullptr;
  size_t size = 0;
  if (anvil_status* status = anvil_executable_canonical_text(executable, &text, &size)) {
    anvil_status_free(status);
    return "anvil_program";
  }
  std::string_view view(text, size);
  constexpr std::string_view kPrefix = "HloModule ";
  if (view.substr(0, kPrefix.size()) != kPrefix) return "anvil_program";
  view.remove_prefix(kPrefix.size());
  size_t end = view.find_first_of(", \n");
  return std::string(view.substr(0, end));
}

// With ANVIL_PJRT_DUMP_DIR set, every program the framework compiles is
// written there as it arrived (program-N.mlir.bc, .mlir or .hlo), for
// reproducing a failure with `anvil parse` or `anvil run`.
void DumpProgram(const abi::Program& program, const std::string& format) {
  const char* dir = std::getenv("ANVIL_PJRT_DUMP_DIR");
  if (dir == nullptr || *dir == '\0') return;
  static std::atomic<int> counter{0};
  const char* extension = format == "stablehlo-bytecode" ? ".mlir.bc" : format == "stablehlo" ? ".mlir" : ".hlo";
  std::string path = std::string(dir) + "/program-" + std::to_string(counter++) + extension;
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(program.code, 1, program.code_size, f);
    std::fclose(f);
  }
}

Error* DescribeOutputs(CompiledProgram& program) {
  size_t count = 0;
  if (Error* e = FromStatus(anvil_executable_result_count(program.anvil, &count))) return e;
  for (size_t i = 0; i < count; ++i) {
    int32_t type = 0;
    const int64_t* dims = nullptr;
    size_t rank = 0;
    if (Error* e = FromStatus(anvil_executable_result_shape(program.anvil, i, &type, &dims, &rank))) return e;
    abi::BufferType pjrt_type = PjrtTypeFromAnvil(type);
    program.output_types.push_back(pjrt_type);
    program.output_dims.insert(program.output_dims.end(), dims, dims + rank);
    program.output_dim_sizes.push_back(rank);
    size_t bytes = ElementBytes(pjrt_type);
    for (size_t d = 0; d < rank; ++d) bytes *= static_cast<size_t>(dims[d]);
    program.output_bytes.push_back(bytes);
  }
  if (Error* e = FromStatus(anvil_executable_parameter_count(program.anvil, &program.num_parameters))) return e;
  program.parameter_is_donor.assign(program.num_parameters, 0);
  for (size_t i = 0; i < program.num_parameters; ++i) {
    int32_t donor = 0;
    if (Error* e = FromStatus(anvil_executable_parameter_donor(program.anvil, i, &donor))) return e;
    program.parameter_is_donor[i] = donor != 0;
  }
  size_t kinds = std::max(count, program.num_parameters);
  program.memory_kinds.assign(kinds, kDeviceMemoryKind);
  program.memory_kind_sizes.assign(kinds, sizeof(kDeviceMemoryKind) - 1);
  return nullptr;
}

}  // namespace

CompiledProgram::~CompiledProgram() {
  if (anvil != nullptr) anvil_executable_destroy(anvil);
}

namespace entry {

Error* Client_Compile(abi::ClientCompileArgs* args) {
  constexpr const char* kFn = "PJRT_Client_Compile";
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientCompileArgs, executable, kFn);
  Client* client = args->client;
  if (args->program == nullptr) return MakeError(abi::kInvalidArgument, std::string(kFn) + ": program is null");

  CompileOptions options;
  std::string parse_error;
  if (!ParseCompileOptions(std::string_view(args->compile_options, args->compile_options_size), options,
                           parse_error)) {
    return MakeError(abi::kInvalidArgument, std::string(kFn) + ": " + parse_error);
  }
  if (options.num_replicas > 1 || options.num_partitions > 1) {
    return MakeError(abi::kUnimplemented, std::string(kFn) + ": " + std::to_string(options.num_replicas) +
                                              " replicas and " + std::to_string(options.num_partitions) +
                                              " partitions were asked for; Anvil runs a program on one device "
                                              "(no collectives yet), so both must be 1");
  }
  Device* device = client->device_list.front();
  if (options.device_ordinal > 0) {
    if (static_cast<size_t>(options.device_ordinal) >= client->device_list.size()) {
      return MakeError(abi::kInvalidArgument, std::string(kFn) + ": device_ordinal " +
                                                  std::to_string(options.device_ordinal) + " names no device");
    }
    device = client->device_list[options.device_ordinal];
  }

  auto format = AnvilFormat(*args->program);
  if (format.error) return format.error;
  DumpProgram(*args->program, format.value);
  auto program = std::make_shared<CompiledProgram>();
  program->client = client;
  program->device = device;
  program->compile_options.assign(args->compile_options, args->compile_options_size);
  anvil_compile_args compile = {};
  compile.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
  compile.program = args->program->code;
  compile.program_size = args->program->code_size;
  compile.format = format.value.c_str();
  compile.device = device->anvil;
  compile.options = client->compile_options.c_str();
  if (Error* e = FromStatus(anvil_client_compile(client->anvil, &compile, &program->anvil), kFn)) return e;
  if (Error* e = DescribeOutputs(*program)) return e;
  program->name = ModuleName(program->anvil);
  program->fingerprint =
      Fingerprint(std::string_view(args->program->code, args->program->code_size), client->anvil_plugin);

  auto* loaded = new LoadedExecutable;
  loaded->program = std::move(program);
  args->executable = loaded;
  return nullptr;
}

// ---------------------------------------------------------- the executables

Error* Executable_Destroy(abi::ExecutableArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableArgs, executable, "PJRT_Executable_Destroy");
  delete args->executable;
  return nullptr;
}

Error* LoadedExecutable_Destroy(abi::LoadedExecutableArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::LoadedExecutableArgs, executable, "PJRT_LoadedExecutable_Destroy");
  delete args->executable;
  return nullptr;
}

Error* LoadedExecutable_Delete(abi::LoadedExecutableArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::LoadedExecutableArgs, executable, "PJRT_LoadedExecutable_Delete");
  args->executable->deleted = true;
  return nullptr;
}

Error* LoadedExecutable_IsDeleted(abi::LoadedExecutableIsDeletedArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::LoadedExecutableIsDeletedArgs, is_deleted, "PJRT_LoadedExecutable_IsDeleted");
  args->is_deleted = args->executable->deleted;
  return nullptr;
}

Error* LoadedExecutable_GetExecutable(abi::LoadedExecutableGetExecutableArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::LoadedExecutableGetExecutableArgs, executable, "PJRT_LoadedExecutable_GetExecutable");
  args->executable = new Executable{args->loaded_executable->program};
  return nullptr;
}

Error* LoadedExecutable_AddressableDevices(abi::LoadedExecutableAddressableDevicesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::LoadedExecutableAddressableDevicesArgs, num_addressable_devices,
                        "PJRT_LoadedExecutable_AddressableDevices");
  CompiledProgram& program = *args->executable->program;
  args->addressable_devices = &program.client->device_list[program.device->local_hardware_id];
  args->num_addressable_devices = 1;
  return nullptr;
}

Error* LoadedExecutable_AddressableDeviceLogicalIds(abi::LoadedExecutableAddressableDeviceLogicalIdsArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::LoadedExecutableAddressableDeviceLogicalIdsArgs,
                        num_addressable_device_logical_ids, "PJRT_LoadedExecutable_AddressableDeviceLogicalIds");
  static abi::LogicalDeviceIds kOnlyOne = {0, 0};
  args->addressable_device_logical_ids = &kOnlyOne;
  args->num_addressable_device_logical_ids = 1;
  return nullptr;
}

Error* LoadedExecutable_Fingerprint(abi::LoadedExecutableFingerprintArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::LoadedExecutableFingerprintArgs, executable_fingerprint_size,
                        "PJRT_LoadedExecutable_Fingerprint");
  args->executable_fingerprint = args->executable->program->fingerprint.c_str();
  args->executable_fingerprint_size = args->executable->program->fingerprint.size();
  return nullptr;
}

Error* LoadedExecutable_GetDeviceAssignment(abi::LoadedExecutableGetDeviceAssignmentArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::LoadedExecutableGetDeviceAssignmentArgs, serialized_device_assignment_deleter,
                        "PJRT_LoadedExecutable_GetDeviceAssignment");
  // xla.DeviceAssignmentProto: replica_count 1 (field 1), computation_count
  // 1 (field 2), one computation_devices (field 3) holding the device id
  // (its field 1).
  int id = args->executable->program->device->description.id;
  auto* bytes = new std::string;
  bytes->push_back(0x08), bytes->push_back(1);
  bytes->push_back(0x10), bytes->push_back(1);
  std::string device;
  device.push_back(0x08);
  for (uint64_t v = static_cast<uint64_t>(id); ; v >>= 7) {
    if (v < 0x80) { device.push_back(static_cast<char>(v)); break; }
    device.push_back(static_cast<char>((v & 0x7f) | 0x80));
  }
  bytes->push_back(0x1a), bytes->push_back(static_cast<char>(device.size()));
  *bytes += device;
  args->serialized_bytes = bytes->data();
  args->serialized_bytes_size = bytes->size();
  args->serialized_device_assignment = bytes;
  args->serialized_device_assignment_deleter = [](void* p) { delete static_cast<std::string*>(p); };
  return nullptr;
}

Error* Executable_GetCompileOptions(abi::ExecutableGetCompileOptionsArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableGetCompileOptionsArgs, serialized_compile_options_deleter,
                        "PJRT_Executable_GetCompileOptions");
  auto* bytes = new std::string(args->executable->program->compile_options);
  args->serialized_bytes = bytes->data();
  args->serialized_bytes_size = bytes->size();
  args->serialized_compile_options = bytes;
  args->serialized_compile_options_deleter = [](void* p) { delete static_cast<std::string*>(p); };
  return nullptr;
}

Error* Executable_Name(abi::ExecutableStringArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableStringArgs, value_size, "PJRT_Executable_Name");
  args->value = args->executable->program->name.c_str();
  args->value_size = args->executable->program->name.size();
  return nullptr;
}

Error* Executable_Fingerprint(abi::ExecutableStringArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableStringArgs, value_size, "PJRT_Executable_Fingerprint");
  args->value = args->executable->program->fingerprint.c_str();
  args->value_size = args->executable->program->fingerprint.size();
  return nullptr;
}

Error* Executable_NumReplicas(abi::ExecutableCountArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableCountArgs, value, "PJRT_Executable_NumReplicas");
  args->value = 1;
  return nullptr;
}

Error* Executable_NumPartitions(abi::ExecutableCountArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableCountArgs, value, "PJRT_Executable_NumPartitions");
  args->value = 1;
  return nullptr;
}

Error* Executable_NumOutputs(abi::ExecutableCountArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableCountArgs, value, "PJRT_Executable_NumOutputs");
  args->value = args->executable->program->output_types.size();
  return nullptr;
}

Error* Executable_SizeOfGeneratedCodeInBytes(abi::ExecutableSizeOfGeneratedCodeArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableSizeOfGeneratedCodeArgs, size_in_bytes,
                        "PJRT_Executable_SizeOfGeneratedCodeInBytes");
  args->size_in_bytes = 0;  // Anvil does not report code size
  return nullptr;
}

Error* Executable_GetCostAnalysis(abi::ExecutableGetCostAnalysisArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableGetCostAnalysisArgs, properties, "PJRT_Executable_GetCostAnalysis");
  args->num_properties = 0;
  args->properties = nullptr;
  return nullptr;
}

Error* Executable_GetCompiledMemoryStats(abi::ExecutableGetCompiledMemoryStatsArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableGetCompiledMemoryStatsArgs, peak_unpadded_heap_bytes,
                        "PJRT_Executable_GetCompiledMemoryStats");
  size_t header = offsetof(abi::ExecutableGetCompiledMemoryStatsArgs, generated_code_size_in_bytes);
  std::memset(reinterpret_cast<char*>(args) + header, 0, sizeof(*args) - header);
  int64_t outputs = 0;
  for (size_t bytes : args->executable->program->output_bytes) outputs += static_cast<int64_t>(bytes);
  args->output_size_in_bytes = outputs;
  return nullptr;
}

Error* Executable_OutputElementTypes(abi::ExecutableOutputElementTypesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableOutputElementTypesArgs, num_output_types,
                        "PJRT_Executable_OutputElementTypes");
  args->output_types = args->executable->program->output_types.data();
  args->num_output_types = args->executable->program->output_types.size();
  return nullptr;
}

Error* Executable_OutputDimensions(abi::ExecutableOutputDimensionsArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableOutputDimensionsArgs, dim_sizes, "PJRT_Executable_OutputDimensions");
  CompiledProgram& program = *args->executable->program;
  args->num_outputs = program.output_dim_sizes.size();
  args->dims = program.output_dims.data();
  args->dim_sizes = program.output_dim_sizes.data();
  return nullptr;
}

Error* Executable_OutputMemoryKinds(abi::ExecutableMemoryKindsArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableMemoryKindsArgs, memory_kind_sizes, "PJRT_Executable_OutputMemoryKinds");
  CompiledProgram& program = *args->executable->program;
  args->count = program.output_types.size();
  args->memory_kinds = program.memory_kinds.data();
  args->memory_kind_sizes = program.memory_kind_sizes.data();
  return nullptr;
}

Error* Executable_ParameterMemoryKinds(abi::ExecutableMemoryKindsArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ExecutableMemoryKindsArgs, memory_kind_sizes,
                        "PJRT_Executable_ParameterMemoryKinds");
  CompiledProgram& program = *args->executable->program;
  args->count = program.num_parameters;
  args->memory_kinds = program.memory_kinds.data();
  args->memory_kind_sizes = program.memory_kind_sizes.data();
  return nullptr;
}

// ---------------------------------------------------------------- execution

Error* LoadedExecutable_Execute(abi::LoadedExecutableExecuteArgs* args) {
  constexpr const char* kFn = "PJRT_LoadedExecutable_Execute";
  ANVIL_PJRT_CHECK_ARGS(args, abi::LoadedExecutableExecuteArgs, execute_device, kFn);
  LoadedExecutable* loaded = args->executable;
  if (loaded->deleted) return MakeError(abi::kFailedPrecondition, std::string(kFn) + ": the executable was deleted");
  CompiledProgram& program = *loaded->program;
  if (args->num_devices != 1) {
    return MakeError(abi::kInvalidArgument, std::string(kFn) + ": " + std::to_string(args->num_devices) +
                                                " argument lists given; the executable runs on one device");
  }
  if (args->execute_device != nullptr && args->execute_device != program.device) {
    return MakeError(abi::kUnimplemented, std::string(kFn) + ": the executable was compiled for device " +
                                              std::to_string(program.device->description.id) + ", not device " +
                                              std::to_string(args->execute_device->description.id));
  }
  if (args->num_args != program.num_parameters) {
    return MakeError(abi::kInvalidArgument, std::string(kFn) + ": " + std::to_string(args->num_args) +
                                                " arguments given; the program takes " +
                                                std::to_string(program.num_parameters));
  }
  std::unordered_set<int64_t> not_donatable;
  if (args->options != nullptr && args->options->non_donatable_input_indices != nullptr) {
    not_donatable.insert(args->options->non_donatable_input_indices,
                         args->options->non_donatable_input_indices + args->options->num_non_donatable_input_indices);
  }

  Buffer* const* arguments = args->argument_lists[0];
  std::vector<anvil_buffer*> inputs(args->num_args);
  std::vector<uint8_t> donate(args->num_args, 0);
  for (size_t i = 0; i < args->num_args; ++i) {
    Buffer* buffer = arguments[i];
    std::lock_guard<std::mutex> lock(buffer->mu);
    if (buffer->deleted || buffer->anvil == nullptr) {
      return MakeError(abi::kFailedPrecondition, std::string(kFn) + ": argument " + std::to_string(i) +
                                                     " was deleted or donated to an earlier execution");
    }
    if (buffer->device != program.device) {
      return MakeError(abi::kInvalidArgument, std::string(kFn) + ": argument " + std::to_string(i) +
                                                  " is on device " + std::to_string(buffer->device->description.id) +
                                                  ", the executable on device " +
                                                  std::to_string(program.device->description.id));
    }
    inputs[i] = buffer->anvil;
    donate[i] = program.parameter_is_donor[i] && !not_donatable.count(static_cast<int64_t>(i));
  }

  std::vector<anvil_buffer*> outputs(program.output_types.size(), nullptr);
  anvil_event* done = nullptr;
  anvil_execute_args execute = {ANVIL_EXECUTE_ARGS_STRUCT_SIZE, inputs.data(), inputs.size(), donate.data()};
  if (Error* e = FromStatus(anvil_executable_execute(program.anvil, &execute, outputs.data(), &done), kFn)) return e;

  // A donated buffer is the execution's now: PJRT reports it deleted.
  for (size_t i = 0; i < args->num_args; ++i) {
    if (!donate[i]) continue;
    Buffer* buffer = arguments[i];
    anvil_buffer* handle = nullptr;
    {
      std::lock_guard<std::mutex> lock(buffer->mu);
      buffer->deleted = true;
      std::swap(handle, buffer->anvil);
    }
    anvil_buffer_destroy(handle);
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    args->output_lists[0][k] = WrapBuffer(program.client, program.device, outputs[k]);
  }
  if (args->device_complete_events != nullptr) {
    args->device_complete_events[0] = EventFromAnvil(done);
  } else {
    anvil_event_destroy(done);
  }
  return nullptr;
}

}  // namespace entry
}  // namespace anvil::pjrt
