// GetPjrtApi: the table of every PJRT C API 0.112 entry, and the entries for
// errors and the plugin itself.
#include <string>

#include "pjrt/entries.h"
#include "pjrt/errors.h"

namespace anvil::pjrt {
namespace entry {

void Error_Destroy(abi::ErrorDestroyArgs* args) {
  if (args != nullptr && args->error != nullptr) args->error->vtable->destroy(args->error);
}

void Error_Message(abi::ErrorMessageArgs* args) {
  args->error->vtable->message(args->error, &args->message, &args->message_size);
}

Error* Error_GetCode(abi::ErrorGetCodeArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ErrorGetCodeArgs, code, "PJRT_Error_GetCode");
  args->code = args->error->vtable->get_code(args->error);
  return nullptr;
}

Error* Error_ForEachPayload(abi::ErrorForEachPayloadArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::ErrorForEachPayloadArgs, user_arg, "PJRT_Error_ForEachPayload");
  args->error->vtable->for_each_payload(args->error, args->visitor, args->user_arg);
  return nullptr;
}

Error* Plugin_Initialize(abi::PluginInitializeArgs* args) { return nullptr; }

Error* Plugin_Attributes(abi::PluginAttributesArgs* args) {
  ANVIL_PJRT_CHECK_ARGS(args, abi::PluginAttributesArgs, num_attributes, "PJRT_Plugin_Attributes");
  // The newest StableHLO (VHLO) version Anvil's portable-artifact reader
  // reads: a framework serialises its programs at the older of this and
  // its own.
  static const int64_t kStablehloCurrent[3] = {1, 20, 0};
  static const int64_t kStablehloMinimum[3] = {0, 9, 0};
  static abi::NamedValue attributes[2];
  static const bool filled = [] {
    auto list = [](abi::NamedValue& v, const char* name, const int64_t* values) {
      v = {};
      v.struct_size = sizeof(abi::NamedValue);
      v.name = name;
      v.name_size = std::char_traits<char>::length(name);
      v.type = abi::kInt64List;
      v.int64_array_value = values;
      v.value_size = 3;
    };
    list(attributes[0], "stablehlo_current_version", kStablehloCurrent);
    list(attributes[1], "stablehlo_minimum_version", kStablehloMinimum);
    return true;
  }();
  (void)filled;
  args->attributes = attributes;
  args->num_attributes = 2;
  return nullptr;
}

}  // namespace entry

namespace {

// One function per unimplemented entry, so that its error names the entry.
template <const char* kName>
Error* Unimplemented(void*) {
  return MakeError(abi::kUnimplemented, std::string("PJRT_") + kName +
                                            " is not implemented by the Anvil PJRT plugin (libanvil_pjrt.so)");
}

#define ANVIL_PJRT_ENTRY_NAME(name) constexpr char k##name[] = #name;
ANVIL_PJRT_API_ENTRIES(ANVIL_PJRT_ENTRY_NAME)
#undef ANVIL_PJRT_ENTRY_NAME

template <typename F>
abi::AnyEntry Entry(F* function) {
  return reinterpret_cast<abi::AnyEntry>(function);
}

abi::Api MakeApi() {
  abi::Api api = {};
  api.struct_size = sizeof(abi::Api);
  api.extension_start = nullptr;
  api.pjrt_api_version.struct_size = sizeof(abi::ApiVersion);
  api.pjrt_api_version.major_version = abi::kApiMajor;
  api.pjrt_api_version.minor_version = abi::kApiMinor;
#define ANVIL_PJRT_UNIMPLEMENTED_ENTRY(name) api.name = Entry(&Unimplemented<k##name>);
  ANVIL_PJRT_API_ENTRIES(ANVIL_PJRT_UNIMPLEMENTED_ENTRY)
#undef ANVIL_PJRT_UNIMPLEMENTED_ENTRY
#define ANVIL_PJRT_IMPLEMENTED(name) api.name = Entry(&entry::name);
  ANVIL_PJRT_IMPLEMENTED(Error_Destroy)
  ANVIL_PJRT_IMPLEMENTED(Error_Message)
  ANVIL_PJRT_IMPLEMENTED(Error_GetCode)
  ANVIL_PJRT_IMPLEMENTED(Error_ForEachPayload)
  ANVIL_PJRT_IMPLEMENTED(Plugin_Initialize)
  ANVIL_PJRT_IMPLEMENTED(Plugin_Attributes)
  ANVIL_PJRT_IMPLEMENTED(Event_Destroy)
  ANVIL_PJRT_IMPLEMENTED(Event_IsReady)
  ANVIL_PJRT_IMPLEMENTED(Event_Error)
  ANVIL_PJRT_IMPLEMENTED(Event_Await)
  ANVIL_PJRT_IMPLEMENTED(Event_OnReady)
  ANVIL_PJRT_IMPLEMENTED(Event_Create)
  ANVIL_PJRT_IMPLEMENTED(Event_Set)
  ANVIL_PJRT_IMPLEMENTED(Client_Create)
  ANVIL_PJRT_IMPLEMENTED(Client_Destroy)
  ANVIL_PJRT_IMPLEMENTED(Client_PlatformName)
  ANVIL_PJRT_IMPLEMENTED(Client_PlatformVersion)
  ANVIL_PJRT_IMPLEMENTED(Client_ProcessIndex)
  ANVIL_PJRT_IMPLEMENTED(Client_Devices)
  ANVIL_PJRT_IMPLEMENTED(Client_AddressableDevices)
  ANVIL_PJRT_IMPLEMENTED(Client_LookupDevice)
  ANVIL_PJRT_IMPLEMENTED(Client_LookupAddressableDevice)
  ANVIL_PJRT_IMPLEMENTED(Client_AddressableMemories)
  ANVIL_PJRT_IMPLEMENTED(Client_DefaultDeviceAssignment)
  ANVIL_PJRT_IMPLEMENTED(DeviceDescription_Id)
  ANVIL_PJRT_IMPLEMENTED(DeviceDescription_ProcessIndex)
  ANVIL_PJRT_IMPLEMENTED(DeviceDescription_Attributes)
  ANVIL_PJRT_IMPLEMENTED(DeviceDescription_Kind)
  ANVIL_PJRT_IMPLEMENTED(DeviceDescription_DebugString)
  ANVIL_PJRT_IMPLEMENTED(DeviceDescription_ToString)
  ANVIL_PJRT_IMPLEMENTED(Device_GetDescription)
  ANVIL_PJRT_IMPLEMENTED(Device_GetAttributes)
  ANVIL_PJRT_IMPLEMENTED(Device_IsAddressable)
  ANVIL_PJRT_IMPLEMENTED(Device_LocalHardwareId)
  ANVIL_PJRT_IMPLEMENTED(Device_AddressableMemories)
  ANVIL_PJRT_IMPLEMENTED(Device_DefaultMemory)
  ANVIL_PJRT_IMPLEMENTED(Device_MemoryStats)
  ANVIL_PJRT_IMPLEMENTED(Memory_Id)
  ANVIL_PJRT_IMPLEMENTED(Memory_Kind_Id)
  ANVIL_PJRT_IMPLEMENTED(Memory_Kind)
  ANVIL_PJRT_IMPLEMENTED(Memory_DebugString)
  ANVIL_PJRT_IMPLEMENTED(Memory_ToString)
  ANVIL_PJRT_IMPLEMENTED(Memory_AddressableByDevices)
  ANVIL_PJRT_IMPLEMENTED(Client_BufferFromHostBuffer)
  ANVIL_PJRT_IMPLEMENTED(Buffer_Destroy)
  ANVIL_PJRT_IMPLEMENTED(Buffer_Delete)
  ANVIL_PJRT_IMPLEMENTED(Buffer_IsDeleted)
  ANVIL_PJRT_IMPLEMENTED(Buffer_ElementType)
  ANVIL_PJRT_IMPLEMENTED(Buffer_Dimensions)
  ANVIL_PJRT_IMPLEMENTED(Buffer_UnpaddedDimensions)
  ANVIL_PJRT_IMPLEMENTED(Buffer_DynamicDimensionIndices)
  ANVIL_PJRT_IMPLEMENTED(Buffer_GetMemoryLayout)
  ANVIL_PJRT_IMPLEMENTED(Buffer_OnDeviceSizeInBytes)
  ANVIL_PJRT_IMPLEMENTED(Buffer_Device)
  ANVIL_PJRT_IMPLEMENTED(Buffer_Memory)
  ANVIL_PJRT_IMPLEMENTED(Buffer_IsOnCpu)
  ANVIL_PJRT_IMPLEMENTED(Buffer_ReadyEvent)
  ANVIL_PJRT_IMPLEMENTED(Buffer_ToHostBuffer)
  ANVIL_PJRT_IMPLEMENTED(Buffer_CopyToDevice)
  ANVIL_PJRT_IMPLEMENTED(Buffer_CopyToMemory)
  ANVIL_PJRT_IMPLEMENTED(Buffer_IncreaseExternalReferenceCount)
  ANVIL_PJRT_IMPLEMENTED(Buffer_DecreaseExternalReferenceCount)
  ANVIL_PJRT_IMPLEMENTED(Client_Compile)
  ANVIL_PJRT_IMPLEMENTED(Executable_Destroy)
  ANVIL_PJRT_IMPLEMENTED(LoadedExecutable_Destroy)
  ANVIL_PJRT_IMPLEMENTED(LoadedExecutable_Delete)
  ANVIL_PJRT_IMPLEMENTED(LoadedExecutable_IsDeleted)
  ANVIL_PJRT_IMPLEMENTED(LoadedExecutable_GetExecutable)
  ANVIL_PJRT_IMPLEMENTED(LoadedExecutable_AddressableDevices)
  ANVIL_PJRT_IMPLEMENTED(LoadedExecutable_AddressableDeviceLogicalIds)
  ANVIL_PJRT_IMPLEMENTED(LoadedExecutable_Fingerprint)
  ANVIL_PJRT_IMPLEMENTED(LoadedExecutable_GetDeviceAssignment)
  ANVIL_PJRT_IMPLEMENTED(Executable_GetCompileOptions)
  ANVIL_PJRT_IMPLEMENTED(Executable_Name)
  ANVIL_PJRT_IMPLEMENTED(Executable_Fingerprint)
  ANVIL_PJRT_IMPLEMENTED(Executable_NumReplicas)
  ANVIL_PJRT_IMPLEMENTED(Executable_NumPartitions)
  ANVIL_PJRT_IMPLEMENTED(Executable_NumOutputs)
  ANVIL_PJRT_IMPLEMENTED(Executable_SizeOfGeneratedCodeInBytes)
  ANVIL_PJRT_IMPLEMENTED(Executable_GetCostAnalysis)
  ANVIL_PJRT_IMPLEMENTED(Executable_GetCompiledMemoryStats)
  ANVIL_PJRT_IMPLEMENTED(Executable_OutputElementTypes)
  ANVIL_PJRT_IMPLEMENTED(Executable_OutputDimensions)
  ANVIL_PJRT_IMPLEMENTED(Executable_OutputMemoryKinds)
  ANVIL_PJRT_IMPLEMENTED(Executable_ParameterMemoryKinds)
  ANVIL_PJRT_IMPLEMENTED(LoadedExecutable_Execute)
#undef ANVIL_PJRT_IMPLEMENTED
  return api;
}

}  // namespace
}  // namespace anvil::pjrt

// The one symbol the library exports: what jaxlib's plugin loader calls.
extern "C" __attribute__((visibility("default"))) const anvil::pjrt::abi::Api* GetPjrtApi() {
  static const anvil::pjrt::abi::Api api = anvil::pjrt::MakeApi();
  return &api;
}
