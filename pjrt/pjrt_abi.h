// Anvil's own declarations of OpenXLA's PJRT C API, version 0.112 (the one
// jaxlib 0.10.2 loads): the function table a framework gets from GetPjrtApi
// and the argument structs of the functions this plugin implements.
//
// The layout is the ABI: every struct here matches PJRT's field for field,
// and pjrt/tests/abi_layout_test.cc checks sizes and offsets against XLA's
// own header when ../shared/reference/pjrt_c_api.h is present. Functions
// this plugin answers with UNIMPLEMENTED need no argument struct here.
#pragma once

#include <cstddef>
#include <cstdint>

namespace anvil::pjrt {

// The plugin's objects. Error and Memory begin with the function-table
// pointer PJRT requires; the rest are opaque to the framework.
struct Error;
struct Event;
struct Client;
struct Device;
struct DeviceDescription;
struct Memory;
struct Buffer;
struct Executable;
struct LoadedExecutable;
struct TopologyDescription;

namespace abi {

constexpr int kApiMajor = 0;
constexpr int kApiMinor = 112;

struct ExtensionBase {
  size_t struct_size;
  int32_t type;  // PJRT_Extension_Type
  ExtensionBase* next;
};

// Every argument struct starts with these two fields.
#define ANVIL_PJRT_ARGS_HEAD \
  size_t struct_size;        \
  ::anvil::pjrt::abi::ExtensionBase* extension_start

enum ErrorCode : int32_t {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// PJRT_Buffer_Type, in PJRT's order (not Anvil's).
enum BufferType : int32_t {
  kTypeInvalid, kTypePred, kTypeS8, kTypeS16, kTypeS32, kTypeS64, kTypeU8, kTypeU16, kTypeU32, kTypeU64,
  kTypeF16, kTypeF32, kTypeF64, kTypeBf16, kTypeC64, kTypeC128, kTypeF8E5M2, kTypeF8E4M3FN,
  kTypeF8E4M3B11FNUZ, kTypeF8E5M2FNUZ, kTypeF8E4M3FNUZ, kTypeS4, kTypeU4, kTypeToken, kTypeS2, kTypeU2,
  kTypeF8E4M3, kTypeF8E3M4, kTypeF8E8M0FNU, kTypeF4E2M1FN, kTypeS1, kTypeU1,
};

enum HostBufferSemantics : int32_t {
  kImmutableOnlyDuringCall = 0,
  kImmutableUntilTransferCompletes = 1,
  kImmutableZeroCopy = 2,
  kMutableZeroCopy = 3,
};

enum NamedValueType : int32_t { kString = 0, kInt64 = 1, kInt64List = 2, kFloat = 3, kBool = 4 };

struct NamedValue {
  ANVIL_PJRT_ARGS_HEAD;
  const char* name;
  size_t name_size;
  NamedValueType type;
  union {
    const char* string_value;
    int64_t int64_value;
    const int64_t* int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size;  // string length, list length, or 1
};

// ------------------------------------------------------------------ errors

using PayloadVisitor = void (*)(const char* key, size_t key_size, const char* value, size_t value_size,
                                void* user_arg);

struct ErrorFunctionTable {
  size_t struct_size;
  size_t instance_size;
  ExtensionBase* extension_start;
  void (*destroy)(Error* error);
  void (*message)(const Error* error, const char** message, size_t* message_size);
  ErrorCode (*get_code)(const Error* error);
  void (*for_each_payload)(const Error* error, PayloadVisitor visitor, void* user_arg);
};

struct ErrorDestroyArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Error* error;
};
struct ErrorMessageArgs {
  ANVIL_PJRT_ARGS_HEAD;
  const Error* error;
  const char* message;
  size_t message_size;
};
struct ErrorGetCodeArgs {
  ANVIL_PJRT_ARGS_HEAD;
  const Error* error;
  ErrorCode code;
};
struct ErrorForEachPayloadArgs {
  ANVIL_PJRT_ARGS_HEAD;
  const Error* error;
  PayloadVisitor visitor;
  void* user_arg;
};

// ------------------------------------------------------------------ plugin

struct PluginInitializeArgs {
  ANVIL_PJRT_ARGS_HEAD;
};
struct PluginAttributesArgs {
  ANVIL_PJRT_ARGS_HEAD;
  const NamedValue* attributes;
  size_t num_attributes;
};

// ------------------------------------------------------------------ events

using EventOnReadyCallback = void (*)(Error* error, void* user_arg);

struct EventArgs {  // Destroy, Error and Await take just the event
  ANVIL_PJRT_ARGS_HEAD;
  Event* event;
};
struct EventIsReadyArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Event* event;
  bool is_ready;
};
struct EventOnReadyArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Event* event;
  EventOnReadyCallback callback;
  void* user_arg;
};
struct EventCreateArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Event* event;
};
struct EventSetArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Event* event;
  ErrorCode error_code;
  const char* error_message;
  size_t error_message_size;
};

// ------------------------------------------------------------------ client

struct ClientCreateArgs {
  ANVIL_PJRT_ARGS_HEAD;
  const NamedValue* create_options;
  size_t num_options;
  void* kv_get_callback;
  void* kv_get_user_arg;
  void* kv_put_callback;
  void* kv_put_user_arg;
  Client* client;
  void* kv_try_get_callback;
  void* kv_try_get_user_arg;
};
struct ClientArgs {  // Destroy
  ANVIL_PJRT_ARGS_HEAD;
  Client* client;
};
struct ClientStringArgs {  // PlatformName, PlatformVersion
  ANVIL_PJRT_ARGS_HEAD;
  Client* client;
  const char* value;
  size_t value_size;
};
struct ClientProcessIndexArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Client* client;
  int process_index;
};
struct ClientTopologyDescriptionArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Client* client;
  TopologyDescription* topology;
};
struct ClientDevicesArgs {  // Devices, AddressableDevices
  ANVIL_PJRT_ARGS_HEAD;
  Client* client;
  Device* const* devices;
  size_t num_devices;
};
struct ClientLookupDeviceArgs {  // LookupDevice (by id), LookupAddressableDevice (by hardware id)
  ANVIL_PJRT_ARGS_HEAD;
  Client* client;
  int id;
  Device* device;
};
struct ClientAddressableMemoriesArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Client* client;
  Memory* const* memories;
  size_t num_memories;
};

struct Program {
  ANVIL_PJRT_ARGS_HEAD;
  char* code;
  size_t code_size;
  const char* format;
  size_t format_size;
};

struct ClientCompileArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Client* client;
  const Program* program;
  const char* compile_options;
  size_t compile_options_size;
  LoadedExecutable* executable;
};
struct ClientDefaultDeviceAssignmentArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Client* client;
  int num_replicas;
  int num_partitions;
  size_t default_assignment_size;
  int* default_assignment;
};

// ------------------------------------------------------------------ layouts

enum MemoryLayoutType : int32_t { kLayoutTiled = 0, kLayoutStrides = 1 };

struct MemoryLayoutTiled {
  ANVIL_PJRT_ARGS_HEAD;
  const int64_t* minor_to_major;
  size_t minor_to_major_size;
  const int64_t* tile_dims;
  const size_t* tile_dim_sizes;
  size_t num_tiles;
};
struct MemoryLayoutStrides {
  ANVIL_PJRT_ARGS_HEAD;
  const int64_t* byte_strides;
  size_t num_byte_strides;
};
struct MemoryLayout {
  ANVIL_PJRT_ARGS_HEAD;
  union {
    MemoryLayoutTiled tiled;
    MemoryLayoutStrides strides;
  };
  MemoryLayoutType type;
};

struct ClientBufferFromHostBufferArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Client* client;
  const void* data;
  BufferType type;
  const int64_t* dims;
  size_t num_dims;
  const int64_t* byte_strides;
  size_t num_byte_strides;
  HostBufferSemantics host_buffer_semantics;
  Device* device;
  Memory* memory;
  MemoryLayout* device_layout;
  Event* done_with_host_buffer;
  Buffer* buffer;
};

// ------------------------------------------------------------ descriptions

struct DeviceDescriptionIntArgs {  // Id, ProcessIndex
  ANVIL_PJRT_ARGS_HEAD;
  DeviceDescription* device_description;
  int value;
};
struct DeviceDescriptionAttributesArgs {
  ANVIL_PJRT_ARGS_HEAD;
  DeviceDescription* device_description;
  size_t num_attributes;
  const NamedValue* attributes;
};
struct DeviceDescriptionStringArgs {  // Kind, DebugString, ToString
  ANVIL_PJRT_ARGS_HEAD;
  DeviceDescription* device_description;
  const char* value;
  size_t value_size;
};

// ------------------------------------------------------------------ devices

struct DeviceGetDescriptionArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Device* device;
  DeviceDescription* device_description;
};
struct DeviceIsAddressableArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Device* device;
  bool is_addressable;
};
struct DeviceLocalHardwareIdArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Device* device;
  int local_hardware_id;
};
struct DeviceAddressableMemoriesArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Device* device;
  Memory* const* memories;
  size_t num_memories;
};
struct DeviceDefaultMemoryArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Device* device;
  Memory* memory;
};
struct DeviceMemoryStatsArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Device* device;
  int64_t bytes_in_use;
  int64_t peak_bytes_in_use;
  bool peak_bytes_in_use_is_set;
  int64_t num_allocs;
  bool num_allocs_is_set;
  int64_t largest_alloc_size;
  bool largest_alloc_size_is_set;
  int64_t bytes_limit;
  bool bytes_limit_is_set;
  int64_t bytes_reserved;
  bool bytes_reserved_is_set;
  int64_t peak_bytes_reserved;
  bool peak_bytes_reserved_is_set;
  int64_t bytes_reservable_limit;
  bool bytes_reservable_limit_is_set;
  int64_t largest_free_block_bytes;
  bool largest_free_block_bytes_is_set;
  int64_t pool_bytes;
  bool pool_bytes_is_set;
  int64_t peak_pool_bytes;
  bool peak_pool_bytes_is_set;
};

struct DeviceGetAttributesArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Device* device;
  const NamedValue* attributes;
  size_t num_attributes;
  void* device_attributes;                        // the plugin's, for the deleter
  void (*attributes_deleter)(void* device_attributes);
};

// ----------------------------------------------------------------- memories

struct MemoryFunctionTable {
  size_t struct_size;
  ExtensionBase* extension_start;
  size_t instance_struct_size;
  void* (*get_user_data)(Memory* memory, const void* key);
  void (*set_user_data)(Memory* memory, const void* key, void* data, void (*dtor)(void*));
};

struct MemoryIntArgs {  // Id, Kind_Id
  ANVIL_PJRT_ARGS_HEAD;
  Memory* memory;
  int value;
};
struct MemoryStringArgs {  // Kind, DebugString, ToString
  ANVIL_PJRT_ARGS_HEAD;
  Memory* memory;
  const char* value;
  size_t value_size;
};
struct MemoryAddressableByDevicesArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Memory* memory;
  Device* const* devices;
  size_t num_devices;
};

// -------------------------------------------------------------- executables

struct ExecutableArgs {  // Executable_Destroy
  ANVIL_PJRT_ARGS_HEAD;
  Executable* executable;
};
struct LoadedExecutableArgs {  // LoadedExecutable_Destroy, _Delete
  ANVIL_PJRT_ARGS_HEAD;
  LoadedExecutable* executable;
};
struct LoadedExecutableGetExecutableArgs {
  ANVIL_PJRT_ARGS_HEAD;
  LoadedExecutable* loaded_executable;
  Executable* executable;
};
struct LoadedExecutableIsDeletedArgs {
  ANVIL_PJRT_ARGS_HEAD;
  LoadedExecutable* executable;
  bool is_deleted;
};
struct LoadedExecutableAddressableDevicesArgs {
  ANVIL_PJRT_ARGS_HEAD;
  LoadedExecutable* executable;
  Device* const* addressable_devices;
  size_t num_addressable_devices;
};
struct LogicalDeviceIds {
  int replica;
  int partition;
};
struct LoadedExecutableAddressableDeviceLogicalIdsArgs {
  ANVIL_PJRT_ARGS_HEAD;
  LoadedExecutable* executable;
  LogicalDeviceIds* addressable_device_logical_ids;
  size_t num_addressable_device_logical_ids;
};
struct LoadedExecutableFingerprintArgs {
  ANVIL_PJRT_ARGS_HEAD;
  LoadedExecutable* executable;
  const char* executable_fingerprint;
  size_t executable_fingerprint_size;
};
struct LoadedExecutableGetDeviceAssignmentArgs {
  ANVIL_PJRT_ARGS_HEAD;
  LoadedExecutable* executable;
  const char* serialized_bytes;  // a serialized xla.DeviceAssignmentProto
  size_t serialized_bytes_size;
  void* serialized_device_assignment;  // the plugin's, for the deleter
  void (*serialized_device_assignment_deleter)(void* serialized_device_assignment);
};
struct ExecutableGetCompileOptionsArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Executable* executable;
  const char* serialized_bytes;  // the CompileOptionsProto the program was compiled with
  size_t serialized_bytes_size;
  void* serialized_compile_options;
  void (*serialized_compile_options_deleter)(void* serialized_compile_options);
};
struct ExecutableStringArgs {  // Name, Fingerprint
  ANVIL_PJRT_ARGS_HEAD;
  Executable* executable;
  const char* value;
  size_t value_size;
};
struct ExecutableCountArgs {  // NumReplicas, NumPartitions, NumOutputs
  ANVIL_PJRT_ARGS_HEAD;
  Executable* executable;
  size_t value;
};
struct ExecutableSizeOfGeneratedCodeArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Executable* executable;
  int64_t size_in_bytes;
};
struct ExecutableGetCostAnalysisArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Executable* executable;
  size_t num_properties;
  const NamedValue* properties;
};
struct ExecutableGetCompiledMemoryStatsArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Executable* executable;
  int64_t generated_code_size_in_bytes;
  int64_t argument_size_in_bytes;
  int64_t output_size_in_bytes;
  int64_t alias_size_in_bytes;
  int64_t temp_size_in_bytes;
  int64_t host_generated_code_size_in_bytes;
  int64_t host_argument_size_in_bytes;
  int64_t host_output_size_in_bytes;
  int64_t host_alias_size_in_bytes;
  int64_t host_temp_size_in_bytes;
  int64_t peak_memory_in_bytes;
  int64_t total_size_in_bytes;
  int64_t total_allocation_bytes;
  int64_t indefinite_allocations;
  int64_t peak_unpadded_heap_bytes;
};
struct ExecutableOutputElementTypesArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Executable* executable;
  BufferType* output_types;
  size_t num_output_types;
};
struct ExecutableOutputDimensionsArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Executable* executable;
  size_t num_outputs;
  const int64_t* dims;
  const size_t* dim_sizes;
};
struct ExecutableMemoryKindsArgs {  // ParameterMemoryKinds, OutputMemoryKinds
  ANVIL_PJRT_ARGS_HEAD;
  Executable* executable;
  size_t count;
  const char* const* memory_kinds;
  const size_t* memory_kind_sizes;
};
struct ExecutableOptimizedProgramArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Executable* executable;
  Program* program;
};

struct ExecuteOptions {
  ANVIL_PJRT_ARGS_HEAD;
  void** send_callbacks;
  void** recv_callbacks;
  size_t num_send_ops;
  size_t num_recv_ops;
  int launch_id;
  const int64_t* non_donatable_input_indices;
  size_t num_non_donatable_input_indices;
  void* context;
  const char* call_location;
  size_t num_tasks;
  int* task_ids;
  int64_t* incarnation_ids;
  void* multi_slice_config;
  bool use_major_to_minor_data_layout_for_callbacks;
  void* hlo_output_callbacks;
  size_t num_hlo_output_callbacks;
};

struct LoadedExecutableExecuteArgs {
  ANVIL_PJRT_ARGS_HEAD;
  LoadedExecutable* executable;
  ExecuteOptions* options;
  Buffer* const* const* argument_lists;  // [num_devices][num_args]
  size_t num_devices;
  size_t num_args;
  Buffer** const* output_lists;  // [num_devices][num_outputs], filled
  Event** device_complete_events;  // [num_devices] or null
  Device* execute_device;
};

// ------------------------------------------------------------------ buffers

struct BufferArgs {  // Destroy, Delete, Increase/DecreaseExternalReferenceCount
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
};
struct BufferElementTypeArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  BufferType type;
};
struct BufferDimensionsArgs {  // Dimensions, UnpaddedDimensions
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  const int64_t* dims;
  size_t num_dims;
};
struct BufferDynamicDimensionIndicesArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  const size_t* dynamic_dim_indices;
  size_t num_dynamic_dims;
};
struct BufferGetMemoryLayoutArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  MemoryLayout layout;
};
struct BufferToHostBufferArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* src;
  MemoryLayout* host_layout;
  void* dst;
  size_t dst_size;
  Event* event;
};
struct BufferOnDeviceSizeInBytesArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  size_t on_device_size_in_bytes;
};
struct BufferIsDeletedArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  bool is_deleted;
};
struct BufferCopyRawToHostArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  void* dst;
  int64_t offset;
  int64_t transfer_size;
  Event* event;
};
struct BufferCopyToDeviceArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  Device* dst_device;
  Buffer* dst_buffer;
};
struct BufferCopyToMemoryArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  Memory* dst_memory;
  Buffer* dst_buffer;
};
struct BufferIsOnCpuArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  bool is_on_cpu;
};
struct BufferDeviceArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  Device* device;
};
struct BufferMemoryArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  Memory* memory;
};
struct BufferReadyEventArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  Event* event;
};
struct BufferUnsafePointerArgs {
  ANVIL_PJRT_ARGS_HEAD;
  Buffer* buffer;
  uintptr_t buffer_pointer;
};

// ---------------------------------------------------------------- the table

struct ApiVersion {
  ANVIL_PJRT_ARGS_HEAD;
  int major_version;
  int minor_version;
};

// Every entry of the 0.112 table, in the table's order. X(name) names the
// entry without its PJRT_ prefix.
#define ANVIL_PJRT_API_ENTRIES(X)                                                                        \
  X(Error_Destroy) X(Error_Message) X(Error_GetCode) X(Plugin_Initialize) X(Plugin_Attributes)           \
  X(Event_Destroy) X(Event_IsReady) X(Event_Error) X(Event_Await) X(Event_OnReady) X(Client_Create)      \
  X(Client_Destroy) X(Client_PlatformName) X(Client_ProcessIndex) X(Client_PlatformVersion)             \
  X(Client_Devices) X(Client_AddressableDevices) X(Client_LookupDevice) X(Client_LookupAddressableDevice) \
  X(Client_AddressableMemories) X(Client_Compile) X(Client_DefaultDeviceAssignment)                      \
  X(Client_BufferFromHostBuffer) X(DeviceDescription_Id) X(DeviceDescription_ProcessIndex)               \
  X(DeviceDescription_Attributes) X(DeviceDescription_Kind) X(DeviceDescription_DebugString)             \
  X(DeviceDescription_ToString) X(Device_GetDescription) X(Device_IsAddressable)                         \
  X(Device_LocalHardwareId) X(Device_AddressableMemories) X(Device_DefaultMemory) X(Device_MemoryStats)  \
  X(Memory_Id) X(Memory_Kind) X(Memory_DebugString) X(Memory_ToString) X(Memory_AddressableByDevices)    \
  X(Executable_Destroy) X(Executable_Name) X(Executable_NumReplicas) X(Executable_NumPartitions)         \
  X(Executable_NumOutputs) X(Executable_SizeOfGeneratedCodeInBytes) X(Executable_GetCostAnalysis)        \
  X(Executable_OutputMemoryKinds) X(Executable_OptimizedProgram) X(Executable_Serialize)                 \
  X(LoadedExecutable_Destroy) X(LoadedExecutable_GetExecutable) X(LoadedExecutable_AddressableDevices)   \
  X(LoadedExecutable_Delete) X(LoadedExecutable_IsDeleted) X(LoadedExecutable_Execute)                   \
  X(Executable_DeserializeAndLoad) X(LoadedExecutable_Fingerprint) X(Buffer_Destroy)                     \
  X(Buffer_ElementType) X(Buffer_Dimensions) X(Buffer_UnpaddedDimensions)                                \
  X(Buffer_DynamicDimensionIndices) X(Buffer_GetMemoryLayout) X(Buffer_OnDeviceSizeInBytes)              \
  X(Buffer_Device) X(Buffer_Memory) X(Buffer_Delete) X(Buffer_IsDeleted) X(Buffer_CopyToDevice)          \
  X(Buffer_ToHostBuffer) X(Buffer_IsOnCpu) X(Buffer_ReadyEvent) X(Buffer_UnsafePointer)                  \
  X(Buffer_IncreaseExternalReferenceCount) X(Buffer_DecreaseExternalReferenceCount)                      \
  X(Buffer_OpaqueDeviceMemoryDataPointer) X(CopyToDeviceStream_Destroy) X(CopyToDeviceStream_AddChunk)   \
  X(CopyToDeviceStream_TotalBytes) X(CopyToDeviceStream_GranuleSize) X(CopyToDeviceStream_CurrentBytes)  \
  X(TopologyDescription_Create) X(TopologyDescription_Destroy) X(TopologyDescription_PlatformName)       \
  X(TopologyDescription_PlatformVersion) X(TopologyDescription_GetDeviceDescriptions)                    \
  X(TopologyDescription_Serialize) X(TopologyDescription_Attributes) X(Compile)                          \
  X(Executable_OutputElementTypes) X(Executable_OutputDimensions) X(Buffer_CopyToMemory)                 \
  X(Client_CreateViewOfDeviceBuffer) X(Executable_Fingerprint) X(Client_TopologyDescription)             \
  X(Executable_GetCompiledMemoryStats) X(Memory_Kind_Id) X(ExecuteContext_Create)                        \
  X(ExecuteContext_Destroy) X(Buffer_CopyRawToHost) X(AsyncHostToDeviceTransferManager_Destroy)          \
  X(AsyncHostToDeviceTransferManager_TransferData) X(Client_CreateBuffersForAsyncHostToDevice)           \
  X(AsyncHostToDeviceTransferManager_RetrieveBuffer) X(AsyncHostToDeviceTransferManager_Device)          \
  X(AsyncHostToDeviceTransferManager_BufferCount) X(AsyncHostToDeviceTransferManager_BufferSize)         \
  X(AsyncHostToDeviceTransferManager_SetBufferError) X(AsyncHostToDeviceTransferManager_AddMetadata)     \
  X(Client_DmaMap) X(Client_DmaUnmap) X(Client_CreateUninitializedBuffer)                                \
  X(Client_UpdateGlobalProcessInfo) X(TopologyDescription_Deserialize) X(Client_CreateAliasBuffer)       \
  X(Client_FulfillAliasBuffer) X(LoadedExecutable_GetDeviceAssignment) X(Client_CreateErrorBuffer)       \
  X(AsyncHostToDeviceTransferManager_TransferLiteral) X(Buffer_CopyRawToHostFuture)                      \
  X(Device_PoisonExecution) X(Device_CreateAsyncTrackingEvent) X(AsyncTrackingEvent_Destroy)             \
  X(Executable_GetCompileOptions) X(Buffer_DonateWithControlDependency) X(Event_Create) X(Event_Set)     \
  X(Device_GetAttributes) X(Client_Load) X(LoadedExecutable_AddressableDeviceLogicalIds)                 \
  X(Buffer_Bitcast) X(Error_ForEachPayload) X(TopologyDescription_Fingerprint)                           \
  X(Executable_ParameterMemoryKinds) X(Device_ClearMemoryStats)                                          \
  X(TopologyDescription_MakeCanonicalShapeForMemorySpace) X(TopologyDescription_GetMemorySpaceKindIds)

// Entries are stored untyped: each points at a function taking its own
// argument struct. (Error_Destroy and Error_Message return void; every other
// entry returns Error*. All are called through the framework's typedefs.)
using AnyEntry = void (*)();

struct Api {
  size_t struct_size;
  ExtensionBase* extension_start;
  ApiVersion pjrt_api_version;
#define ANVIL_PJRT_DECLARE_ENTRY(name) AnyEntry name;
  ANVIL_PJRT_API_ENTRIES(ANVIL_PJRT_DECLARE_ENTRY)
#undef ANVIL_PJRT_DECLARE_ENTRY
};

}  // namespace abi
}  // namespace anvil::pjrt
