// The API table's entries this plugin implements, one function each, named
// after the entry without its PJRT_ prefix. api.cc puts them in the table;
// every other entry answers UNIMPLEMENTED.
#pragma once

#include "pjrt/objects.h"

namespace anvil::pjrt::entry {

// errors and the plugin (api.cc)
void Error_Destroy(abi::ErrorDestroyArgs* args);
void Error_Message(abi::ErrorMessageArgs* args);
Error* Error_GetCode(abi::ErrorGetCodeArgs* args);
Error* Error_ForEachPayload(abi::ErrorForEachPayloadArgs* args);
Error* Plugin_Initialize(abi::PluginInitializeArgs* args);
Error* Plugin_Attributes(abi::PluginAttributesArgs* args);

// events.cc
Error* Event_Destroy(abi::EventArgs* args);
Error* Event_IsReady(abi::EventIsReadyArgs* args);
Error* Event_Error(abi::EventArgs* args);
Error* Event_Await(abi::EventArgs* args);
Error* Event_OnReady(abi::EventOnReadyArgs* args);
Error* Event_Create(abi::EventCreateArgs* args);
Error* Event_Set(abi::EventSetArgs* args);

// client.cc
Error* Client_Create(abi::ClientCreateArgs* args);
Error* Client_Destroy(abi::ClientArgs* args);
Error* Client_PlatformName(abi::ClientStringArgs* args);
Error* Client_PlatformVersion(abi::ClientStringArgs* args);
Error* Client_ProcessIndex(abi::ClientProcessIndexArgs* args);
Error* Client_Devices(abi::ClientDevicesArgs* args);
Error* Client_AddressableDevices(abi::ClientDevicesArgs* args);
Error* Client_LookupDevice(abi::ClientLookupDeviceArgs* args);
Error* Client_LookupAddressableDevice(abi::ClientLookupDeviceArgs* args);
Error* Client_AddressableMemories(abi::ClientAddressableMemoriesArgs* args);
Error* Client_DefaultDeviceAssignment(abi::ClientDefaultDeviceAssignmentArgs* args);
Error* DeviceDescription_Id(abi::DeviceDescriptionIntArgs* args);
Error* DeviceDescription_ProcessIndex(abi::DeviceDescriptionIntArgs* args);
Error* DeviceDescription_Attributes(abi::DeviceDescriptionAttributesArgs* args);
Error* DeviceDescription_Kind(abi::DeviceDescriptionStringArgs* args);
Error* DeviceDescription_DebugString(abi::DeviceDescriptionStringArgs* args);
Error* DeviceDescription_ToString(abi::DeviceDescriptionStringArgs* args);
Error* Device_GetDescription(abi::DeviceGetDescriptionArgs* args);
Error* Device_GetAttributes(abi::DeviceGetAttributesArgs* args);
Error* Device_IsAddressable(abi::DeviceIsAddressableArgs* args);
Error* Device_LocalHardwareId(abi::DeviceLocalHardwareIdArgs* args);
Error* Device_AddressableMemories(abi::DeviceAddressableMemoriesArgs* args);
Error* Device_DefaultMemory(abi::DeviceDefaultMemoryArgs* args);
Error* Device_MemoryStats(abi::DeviceMemoryStatsArgs* args);
Error* Memory_Id(abi::MemoryIntArgs* args);
Error* Memory_Kind_Id(abi::MemoryIntArgs* args);
Error* Memory_Kind(abi::MemoryStringArgs* args);
Error* Memory_DebugString(abi::MemoryStringArgs* args);
Error* Memory_ToString(abi::MemoryStringArgs* args);
Error* Memory_AddressableByDevices(abi::MemoryAddressableByDevicesArgs* args);

// buffers.cc
Error* Client_BufferFromHostBuffer(abi::ClientBufferFromHostBufferArgs* args);
Error* Buffer_Destroy(abi::BufferArgs* args);
Error* Buffer_Delete(abi::BufferArgs* args);
Error* Buffer_IsDeleted(abi::BufferIsDeletedArgs* args);
Error* Buffer_ElementType(abi::BufferElementTypeArgs* args);
Error* Buffer_Dimensions(abi::BufferDimensionsArgs* args);
Error* Buffer_UnpaddedDimensions(abi::BufferDimensionsArgs* args);
Error* Buffer_DynamicDimensionIndices(abi::BufferDynamicDimensionIndicesArgs* args);
Error* Buffer_GetMemoryLayout(abi::BufferGetMemoryLayoutArgs* args);
Error* Buffer_OnDeviceSizeInBytes(abi::BufferOnDeviceSizeInBytesArgs* args);
Error* Buffer_Device(abi::BufferDeviceArgs* args);
Error* Buffer_Memory(abi::BufferMemoryArgs* args);
Error* Buffer_IsOnCpu(abi::BufferIsOnCpuArgs* args);
Error* Buffer_ReadyEvent(abi::BufferReadyEventArgs* args);
Error* Buffer_ToHostBuffer(abi::BufferToHostBufferArgs* args);
Error* Buffer_CopyToDevice(abi::BufferCopyToDeviceArgs* args);
Error* Buffer_CopyToMemory(abi::BufferCopyToMemoryArgs* args);
Error* Buffer_IncreaseExternalReferenceCount(abi::BufferArgs* args);
Error* Buffer_DecreaseExternalReferenceCount(abi::BufferArgs* args);

// executables.cc
Error* Client_Compile(abi::ClientCompileArgs* args);
Error* Executable_Destroy(abi::ExecutableArgs* args);
Error* LoadedExecutable_Destroy(abi::LoadedExecutableArgs* args);
Error* LoadedExecutable_Delete(abi::LoadedExecutableArgs* args);
Error* LoadedExecutable_IsDeleted(abi::LoadedExecutableIsDeletedArgs* args);
Error* LoadedExecutable_GetExecutable(abi::LoadedExecutableGetExecutableArgs* args);
Error* LoadedExecutable_AddressableDevices(abi::LoadedExecutableAddressableDevicesArgs* args);
Error* LoadedExecutable_AddressableDeviceLogicalIds(abi::LoadedExecutableAddressableDeviceLogicalIdsArgs* args);
Error* LoadedExecutable_Fingerprint(abi::LoadedExecutableFingerprintArgs* args);
Error* LoadedExecutable_GetDeviceAssignment(abi::LoadedExecutableGetDeviceAssignmentArgs* args);
Error* Executable_GetCompileOptions(abi::ExecutableGetCompileOptionsArgs* args);
Error* Executable_Name(abi::ExecutableStringArgs* args);
Error* Executable_Fingerprint(abi::ExecutableStringArgs* args);
Error* Executable_NumReplicas(abi::ExecutableCountArgs* args);
Error* Executable_NumPartitions(abi::ExecutableCountArgs* args);
Error* Executable_NumOutputs(abi::ExecutableCountArgs* args);
Error* Executable_SizeOfGeneratedCodeInBytes(abi::ExecutableSizeOfGeneratedCodeArgs* args);
Error* Executable_GetCostAnalysis(abi::ExecutableGetCostAnalysisArgs* args);
Error* Executable_GetCompiledMemoryStats(abi::ExecutableGetCompiledMemoryStatsArgs* args);
Error* Executable_OutputElementTypes(abi::ExecutableOutputElementTypesArgs* args);
Error* Executable_OutputDimensions(abi::ExecutableOutputDimensionsArgs* args);
Error* Executable_OutputMemoryKinds(abi::ExecutableMemoryKindsArgs* args);
Error* Executable_ParameterMemoryKinds(abi::ExecutableMemoryKindsArgs* args);
Error* LoadedExecutable_Execute(abi::LoadedExecutableExecuteArgs* args);

}  // namespace anvil::pjrt::entry
