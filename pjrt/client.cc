// The client, its devices and their memories: PJRT's view of one Anvil
// plugin's devices.
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "pjrt/entries.h"
#include "pjrt/errors.h"

namespace anvil::pjrt {
namespace {

constexpr char kPlatformName[] = "anvil";

void* GetMemoryUserData(Memory* memory, const void* key) {
  std::lock_guard<std::mutex> lock(memory->user_data_mu);
  auto it = memory->user_data.find(key);
  return it == memory->user_data.end() ? nullptr : it->second.first;
}

void SetMemoryUserData(Memory* memory, const void* key, void* data, void (*dtor)(void*)) {
  std::lock_guard<std::mutex> lock(memory->user_data_mu);
  auto it = memory->user_data.find(key);
  if (it != memory->user_data.end() && it->second.second != nullptr) it->second.second(it->second.first);
  memory->user_data[key] = {data, dtor};
}

const abi::MemoryFunctionTable kMemoryTable = {
    sizeof(abi::MemoryFunctionTable), nullptr, sizeof(Memory), &GetMemoryUserData, &SetMemoryUserData,
};

// The Anvil plugin to serve: the "anvil_plugin" create option, else
// ANVIL_PJRT_PLUGIN, else the CPU plugin.
StatusOrError<std::string> ChoosePlugin(const abi::ClientCreateArgs* args) {
  for (size_t i = 0; i < args->num_options; ++i) {
    const abi::NamedValue& option = args->create_options[i];
    std::string name(option.name, option.name_size);
    if (name != "anvil_plugin") continue;
    if (option.type != abi::kString) {
      return MakeError(abi::kInvalidArgument, "PJRT_Client_Create: option 'anvil_plugin' must be a string");
    }
    return std::string(option.string_value, option.value_size);
  }
  if (const char* env = std::getenv("ANVIL_PJRT_PLUGIN"); env != nullptr && *env != '\0') return std::string(env);
  return std::string("cpu");
}

// The string create option `name`, or nullopt when it is not given.
StatusOrError<std::optional<std::string>> StringCreateOption(const abi::ClientCreateArgs* args, std::string_view name) {
  for (size_t i = 0; i < args->num_options; ++i) {
    const abi::NamedValue& option = args->create_options[i];
    if (std::string_view(option.name, option.name_size) != name) continue;
    if (option.type != abi::kString) {
      return MakeError(abi::kInvalidArgument, "PJRT_Client_Create: option '" + std::string(name) + "' must be a string");
    }
    return std::optional<std::string>(std::string(option.string_value, option.value_size));
  }
  return std::optional<std::string>();
}

}  // namespace

Memory::~Memory() {
  for (auto& [key, entry] : user_data) {
    if (entry.second != nullptr) entry.second(entry.first);
  }
}

namespace entry {

Error* Client_Create(abi::ClientCreateArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientCreateArgs, client, "PJRT_Client_Create");
  auto plugin = ChoosePlugin(args);
  if (plugin.error) return plugin.error;

  auto client = std::make_unique<Client>();
  client->anvil_plugin = plugin.value;
  auto compile_options = StringCreateOption(args, "anvil_compile_options");
  if (compile_options.error) return compile_options.error;
  client->compile_options = compile_options.value ? *compile_options.value
                            : client->anvil_plugin == "cpu" ? "flush_denormals=true"
                                                            : "";
  anvil_client_options options = {ANVIL_CLIENT_OPTIONS_STRUCT_SIZE, nullptr, /*load_all_plugins=*/0, 0};
  if (Error* e = FromStatus(anvil_client_create(&options, &client->anvil), "PJRT_Client_Create")) return e;

  anvil_plugin_load_args load = {ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE, client->anvil_plugin.c_str(), nullptr};
  if (anvil_status* status = anvil_client_load_plugin(client->anvil, &load)) {
    anvil_client_destroy(client->anvil);
    return FromStatus(status, ("PJRT_Client_Create: cannot load the Anvil plugin '" + plugin.value +
                               "' (choose another with ANVIL_PJRT_PLUGIN)").c_str());
  }
  const char *plugin_name = nullptr, *plugin_version = nullptr, *plugin_path = nullptr;
  if (anvil_status* status = anvil_client_plugin_info(client->anvil, 0, &plugin_name, &plugin_version, &plugin_path)) {
    anvil_status_free(status);
  }
  anvil_version abi_version = anvil_get_abi_version();
  client->platform_version = "anvil ABI " + std::to_string(abi_version.major) + "." +
                             std::to_string(abi_version.minor) + ", plugin " + client->anvil_plugin +
                             (plugin_version != nullptr ? std::string(" ") + plugin_version : std::string());

  size_t count = 0;
  if (Error* e = FromStatus(anvil_client_device_count(client->anvil, &count), "PJRT_Client_Create")) {
    anvil_client_destroy(client->anvil);
    return e;
  }
  if (count == 0) {
    anvil_client_destroy(client->anvil);
    return MakeError(abi::kNotFound, "PJRT_Client_Create: the Anvil plugin '" + client->anvil_plugin +
                                         "' loaded but found no device on this machine");
  }
  for (size_t i = 0; i < count; ++i) {
    auto device = std::make_unique<Device>();
    anvil_client_device(client->anvil, i, &device->anvil);
    anvil_device_properties properties = {};
    properties.struct_size = ANVIL_DEVICE_PROPERTIES_STRUCT_SIZE;
    anvil_device_get_properties(device->anvil, &properties);
    device->client = client.get();
    device->local_hardware_id = static_cast<int>(i);
    device->memory_bytes = properties.memory_bytes;
    DeviceDescription& d = device->description;
    d.id = static_cast<int>(i);
    d.kind = properties.kind != nullptr ? properties.kind : client->anvil_plugin;
    std::string name = properties.name != nullptr ? properties.name : "";
    d.debug_string = "AnvilDevice(id=" + std::to_string(i) + ", plugin=" + client->anvil_plugin + ", name=" + name + ")";
    d.to_string = d.debug_string;
    auto memory = std::make_unique<Memory>();
    memory->vtable = &kMemoryTable;
    memory->id = static_cast<int>(i);
    memory->device = device.get();
    memory->debug_string = "AnvilMemory(id=" + std::to_string(i) + ", kind=device, device=" + std::to_string(i) + ")";
    memory->to_string = memory->debug_string;
    device->memory = std::move(memory);
    client->device_list.push_back(device.get());
    client->memory_list.push_back(device->memory.get());
    client->devices.push_back(std::move(device));
  }
  args->client = client.release();
  return nullptr;
}

Error* Client_Destroy(abi::ClientArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientArgs, client, "PJRT_Client_Destroy");
  Client* client = args->client;
  if (client == nullptr) return nullptr;
  // Anvil refuses to destroy a client with live buffers or executables; a
  // framework may free those after the client, so say why rather than leak
  // silently.
  if (Error* e = FromStatus(anvil_client_destroy(client->anvil), "PJRT_Client_Destroy")) return e;
  delete client;
  return nullptr;
}

Error* Client_PlatformName(abi::ClientStringArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientStringArgs, value_size, "PJRT_Client_PlatformName");
  args->value = kPlatformName;
  args->value_size = sizeof(kPlatformName) - 1;
  return nullptr;
}

Error* Client_PlatformVersion(abi::ClientStringArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientStringArgs, value_size, "PJRT_Client_PlatformVersion");
  args->value = args->client->platform_version.c_str();
  args->value_size = args->client->platform_version.size();
  return nullptr;
}

Error* Client_ProcessIndex(abi::ClientProcessIndexArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientProcessIndexArgs, process_index, "PJRT_Client_ProcessIndex");
  args->process_index = 0;
  return nullptr;
}

Error* Client_Devices(abi::ClientDevicesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientDevicesArgs, num_devices, "PJRT_Client_Devices");
  args->devices = args->client->device_list.data();
  args->num_devices = args->client->device_list.size();
  return nullptr;
}

Error* Client_AddressableDevices(abi::ClientDevicesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientDevicesArgs, num_devices, "PJRT_Client_AddressableDevices");
  args->devices = args->client->device_list.data();
  args->num_devices = args->client->device_list.size();
  return nullptr;
}

Error* Client_LookupDevice(abi::ClientLookupDeviceArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientLookupDeviceArgs, device, "PJRT_Client_LookupDevice");
  const auto& devices = args->client->device_list;
  if (args->id < 0 || static_cast<size_t>(args->id) >= devices.size()) {
    return MakeError(abi::kInvalidArgument, "PJRT_Client_LookupDevice: no device with id " + std::to_string(args->id) +
                                                " (the client has " + std::to_string(devices.size()) + ")");
  }
  args->device = devices[args->id];
  return nullptr;
}

Error* Client_LookupAddressableDevice(abi::ClientLookupDeviceArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientLookupDeviceArgs, device, "PJRT_Client_LookupAddressableDevice");
  const auto& devices = args->client->device_list;
  if (args->id < 0 || static_cast<size_t>(args->id) >= devices.size()) {
    return MakeError(abi::kInvalidArgument, "PJRT_Client_LookupAddressableDevice: no device with local hardware id " +
                                                std::to_string(args->id));
  }
  args->device = devices[args->id];
  return nullptr;
}

Error* Client_AddressableMemories(abi::ClientAddressableMemoriesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientAddressableMemoriesArgs, num_memories, "PJRT_Client_AddressableMemories");
  args->memories = args->client->memory_list.data();
  args->num_memories = args->client->memory_list.size();
  return nullptr;
}

Error* Client_DefaultDeviceAssignment(abi::ClientDefaultDeviceAssignmentArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ClientDefaultDeviceAssignmentArgs, default_assignment,
                        "PJRT_Client_DefaultDeviceAssignment");
  int64_t needed = int64_t{args->num_replicas} * args->num_partitions;
  size_t available = args->client->device_list.size();
  if (args->num_replicas < 1 || args->num_partitions < 1 || static_cast<size_t>(needed) > available) {
    return MakeError(abi::kInvalidArgument, "PJRT_Client_DefaultDeviceAssignment: " +
                                                std::to_string(args->num_replicas) + " replicas x " +
                                                std::to_string(args->num_partitions) + " partitions need more than the " +
                                                std::to_string(available) + " devices this client has");
  }
  if (args->default_assignment_size < static_cast<size_t>(needed)) {
    return MakeError(abi::kInvalidArgument, "PJRT_Client_DefaultDeviceAssignment: default_assignment_size is too small");
  }
  for (int64_t i = 0; i < needed; ++i) args->default_assignment[i] = static_cast<int>(i);
  return nullptr;
}

// ------------------------------------------------------------ descriptions

Error* DeviceDescription_Id(abi::DeviceDescriptionIntArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceDescriptionIntArgs, value, "PJRT_DeviceDescription_Id");
  args->value = args->device_description->id;
  return nullptr;
}

Error* DeviceDescription_ProcessIndex(abi::DeviceDescriptionIntArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceDescriptionIntArgs, value, "PJRT_DeviceDescription_ProcessIndex");
  args->value = 0;
  return nullptr;
}

Error* DeviceDescription_Attributes(abi::DeviceDescriptionAttributesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceDescriptionAttributesArgs, attributes, "PJRT_DeviceDescription_Attributes");
  args->num_attributes = 0;
  args->attributes = nullptr;
  return nullptr;
}

Error* DeviceDescription_Kind(abi::DeviceDescriptionStringArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceDescriptionStringArgs, value_size, "PJRT_DeviceDescription_Kind");
  args->value = args->device_description->kind.c_str();
  args->value_size = args->device_description->kind.size();
  return nullptr;
}

Error* DeviceDescription_DebugString(abi::DeviceDescriptionStringArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceDescriptionStringArgs, value_size, "PJRT_DeviceDescription_DebugString");
  args->value = args->device_description->debug_string.c_str();
  args->value_size = args->device_description->debug_string.size();
  return nullptr;
}

Error* DeviceDescription_ToString(abi::DeviceDescriptionStringArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceDescriptionStringArgs, value_size, "PJRT_DeviceDescription_ToString");
  args->value = args->device_description->to_string.c_str();
  args->value_size = args->device_description->to_string.size();
  return nullptr;
}

// ------------------------------------------------------------------ devices

Error* Device_GetDescription(abi::DeviceGetDescriptionArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceGetDescriptionArgs, device_description, "PJRT_Device_GetDescription");
  args->device_description = &args->device->description;
  return nullptr;
}

Error* Device_GetAttributes(abi::DeviceGetAttributesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceGetAttributesArgs, attributes_deleter, "PJRT_Device_GetAttributes");
  args->attributes = nullptr;
  args->num_attributes = 0;
  args->device_attributes = nullptr;
  args->attributes_deleter = [](void*) {};
  return nullptr;
}

Error* Device_IsAddressable(abi::DeviceIsAddressableArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceIsAddressableArgs, is_addressable, "PJRT_Device_IsAddressable");
  args->is_addressable = true;
  return nullptr;
}

Error* Device_LocalHardwareId(abi::DeviceLocalHardwareIdArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceLocalHardwareIdArgs, local_hardware_id, "PJRT_Device_LocalHardwareId");
  args->local_hardware_id = args->device->local_hardware_id;
  return nullptr;
}

Error* Device_AddressableMemories(abi::DeviceAddressableMemoriesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceAddressableMemoriesArgs, num_memories, "PJRT_Device_AddressableMemories");
  Client* client = args->device->client;
  args->memories = &client->memory_list[args->device->local_hardware_id];
  args->num_memories = 1;
  return nullptr;
}

Error* Device_DefaultMemory(abi::DeviceDefaultMemoryArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceDefaultMemoryArgs, memory, "PJRT_Device_DefaultMemory");
  args->memory = args->device->memory.get();
  return nullptr;
}

Error* Device_MemoryStats(abi::DeviceMemoryStatsArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::DeviceMemoryStatsArgs, peak_pool_bytes_is_set, "PJRT_Device_MemoryStats");
  // Anvil tracks no allocation statistics yet; the limit is what it knows.
  size_t header = offsetof(abi::DeviceMemoryStatsArgs, bytes_in_use);
  std::memset(reinterpret_cast<char*>(args) + header, 0, sizeof(abi::DeviceMemoryStatsArgs) - header);
  args->bytes_limit = static_cast<int64_t>(args->device->memory_bytes);
  args->bytes_limit_is_set = args->device->memory_bytes > 0;
  return nullptr;
}

// ----------------------------------------------------------------- memories

Error* Memory_Id(abi::MemoryIntArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::MemoryIntArgs, value, "PJRT_Memory_Id");
  args->value = args->memory->id;
  return nullptr;
}

Error* Memory_Kind_Id(abi::MemoryIntArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::MemoryIntArgs, value, "PJRT_Memory_Kind_Id");
  args->value = 0;  // the one kind, "device"
  return nullptr;
}

Error* Memory_Kind(abi::MemoryStringArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::MemoryStringArgs, value_size, "PJRT_Memory_Kind");
  args->value = args->memory->kind.c_str();
  args->value_size = args->memory->kind.size();
  return nullptr;
}

Error* Memory_DebugString(abi::MemoryStringArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::MemoryStringArgs, value_size, "PJRT_Memory_DebugString");
  args->value = args->memory->debug_string.c_str();
  args->value_size = args->memory->debug_string.size();
  return nullptr;
}

Error* Memory_ToString(abi::MemoryStringArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::MemoryStringArgs, value_size, "PJRT_Memory_ToString");
  args->value = args->memory->to_string.c_str();
  args->value_size = args->memory->to_string.size();
  return nullptr;
}

Error* Memory_AddressableByDevices(abi::MemoryAddressableByDevicesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::MemoryAddressableByDevicesArgs, num_devices, "PJRT_Memory_AddressableByDevices");
  Device* device = args->memory->device;
  args->devices = &device->client->device_list[device->local_hardware_id];
  args->num_devices = 1;
  return nullptr;
}

}  // namespace entry
}  // namespace anvil::pjrt
