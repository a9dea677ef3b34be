/* Anvil client ABI: what frameworks call.
 *
 * Pure C11. Every function returns `anvil_status*`: NULL on success, else an
 * error the caller owns and frees with anvil_status_free. Every argument
 * struct starts with `size_t struct_size` (set it to the matching
 * ANVIL_*_STRUCT_SIZE); fields are only ever appended, so a caller built
 * against an older header keeps working.
 *
 * Versioning: ANVIL_ABI_MAJOR changes when something is removed or
 * reordered; ANVIL_ABI_MINOR when something is appended.
 *
 * Pointers: every handle and every out-pointer is required (NULL is
 * INVALID_ARGUMENT naming the function and the parameter), except where a
 * comment says NULL is allowed (`out_host_done`, `out_done`, `options`, and
 * the handles the *_destroy functions take).
 *
 * Sizes: an array's element count and byte size must fit in int64 whatever
 * order its dimensions are multiplied in; a larger shape is INVALID_ARGUMENT
 * naming it.
 *
 * Threading: every function may be called from any thread, concurrently.
 * See docs/abi.md for every handle's ownership and every event's meaning.
 */
#ifndef ANVIL_ANVIL_H_
#define ANVIL_ANVIL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ANVIL_ABI_MAJOR 0
#define ANVIL_ABI_MINOR 5

#define ANVIL_STRUCT_SIZE(type, last_field) (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* ----------------------------------------------------------------- status */

typedef enum anvil_status_code {
  ANVIL_OK = 0,
  ANVIL_CANCELLED = 1,
  ANVIL_UNKNOWN = 2,
  ANVIL_INVALID_ARGUMENT = 3,
  ANVIL_DEADLINE_EXCEEDED = 4,
  ANVIL_NOT_FOUND = 5,
  ANVIL_ALREADY_EXISTS = 6,
  ANVIL_PERMISSION_DENIED = 7,
  ANVIL_RESOURCE_EXHAUSTED = 8,
  ANVIL_FAILED_PRECONDITION = 9,
  ANVIL_ABORTED = 10,
  ANVIL_OUT_OF_RANGE = 11,
  ANVIL_UNIMPLEMENTED = 12,
  ANVIL_INTERNAL = 13,
  ANVIL_UNAVAILABLE = 14,
  ANVIL_DATA_LOSS = 15
} anvil_status_code;

typedef struct anvil_status anvil_status;

/* The code of `status`; ANVIL_OK for NULL. */
anvil_status_code anvil_status_get_code(const anvil_status* status);
/* The message, valid until the status is freed; "" for NULL. */
const char* anvil_status_get_message(const anvil_status* status);
/* Frees a status; NULL is fine. */
void anvil_status_free(anvil_status* status);

/* ------------------------------------------------------------ the library */

typedef struct anvil_version {
  uint32_t major;
  uint32_t minor;
} anvil_version;

/* The ABI version libanvil.so implements. */
anvil_version anvil_get_abi_version(void);

/* --------------------------------------------------------- element types */

/* Element types. Structs and out-parameters carry them as int32_t, since a C
 * enum's size is the compiler's choice. Types narrower than a byte (s2, s4,
 * u2, u4, f4, f6) take one byte per element in host and device memory. */
typedef enum anvil_element_type {
  ANVIL_INVALID = 0,
  ANVIL_PRED = 1,
  ANVIL_S2 = 2,
  ANVIL_S4 = 3,
  ANVIL_S8 = 4,
  ANVIL_S16 = 5,
  ANVIL_S32 = 6,
  ANVIL_S64 = 7,
  ANVIL_U2 = 8,
  ANVIL_U4 = 9,
  ANVIL_U8 = 10,
  ANVIL_U16 = 11,
  ANVIL_U32 = 12,
  ANVIL_U64 = 13,
  ANVIL_F4E2M1FN = 14,
  ANVIL_F6E2M3FN = 15,
  ANVIL_F6E3M2FN = 16,
  ANVIL_F8E3M4 = 17,
  ANVIL_F8E4M3 = 18,
  ANVIL_F8E4M3FN = 19,
  ANVIL_F8E4M3FNUZ = 20,
  ANVIL_F8E4M3B11FNUZ = 21,
  ANVIL_F8E5M2 = 22,
  ANVIL_F8E5M2FNUZ = 23,
  ANVIL_F8E8M0FNU = 24,
  ANVIL_BF16 = 25,
  ANVIL_F16 = 26,
  ANVIL_F32 = 27,
  ANVIL_F64 = 28,
  ANVIL_C64 = 29,
  ANVIL_C128 = 30
} anvil_element_type;

/* ---------------------------------------------------------------- handles */

typedef struct anvil_client anvil_client;         /* owns plugins, devices */
typedef struct anvil_device anvil_device;         /* owned by its client */
typedef struct anvil_buffer anvil_buffer;         /* caller owns; anvil_buffer_destroy */
typedef struct anvil_event anvil_event;           /* caller owns; anvil_event_destroy */
typedef struct anvil_executable anvil_executable; /* caller owns; anvil_executable_destroy */

/* ----------------------------------------------------------------- client */

typedef struct anvil_client_options {
  size_t struct_size;
  /* Directories to search for plugins, separated by ':'. NULL: the
   * ANVIL_PLUGIN_PATH environment variable, then the `anvil_plugins`
   * directory next to libanvil.so. Needs to live only during the call. */
  const char* plugin_path;
  /* Load every plugin found on the search path at creation (non-zero), or
   * none (zero: load them with anvil_client_load_plugin). */
  int32_t load_all_plugins;
  /* Threads for host work (compilation, callbacks, CPU kernels); 0: one per
   * core. */
  int32_t num_threads;
  /* --- since minor 4 */
  /* A Chrome trace-event file (JSON; Perfetto and chrome://tracing load it)
   * to write spans of compilation, transfers, executions and plugin kernels
   * into. It is written, complete, when the client is destroyed (the last
   * of several clients naming one file writes it). NULL: the ANVIL_TRACE
   * environment variable; empty or unset: no tracing. */
  const char* trace_path;
  /* A directory for the persistent compile cache: executables of plugins
   * that can serialise them are kept there and reused by later compiles of
   * the same program for the same plugin build, device and options. NULL:
   * the ANVIL_CACHE_DIR environment variable; empty or unset: no cache. A
   * cache that cannot be read or written only costs a compile (and a
   * warning on stderr). */
  const char* cache_dir;
} anvil_client_options;
#define ANVIL_CLIENT_OPTIONS_STRUCT_SIZE ANVIL_STRUCT_SIZE(anvil_client_options, cache_dir)

/* Creates a client. Plugins that fail to load do not fail the call: see
 * anvil_client_plugin_failure. `options` may be NULL (defaults). */
anvil_status* anvil_client_create(const anvil_client_options* options, anvil_client** out_client);
/* Waits for all pending work, then frees the client. FAILED_PRECONDITION
 * (and nothing freed) while any of its buffers or executables is alive.
 * Events may outlive it. NULL is fine. */
anvil_status* anvil_client_destroy(anvil_client* client);

typedef struct anvil_plugin_load_args {
  size_t struct_size;
  /* Either a plugin name (`cpu` finds libanvil_plugin_cpu.so on the search
   * path) or an explicit path to a shared library. Exactly one is set. */
  const char* name;
  const char* path;
} anvil_plugin_load_args;
#define ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE ANVIL_STRUCT_SIZE(anvil_plugin_load_args, path)

/* Loads one plugin and adds its devices. NOT_FOUND when no such file;
 * FAILED_PRECONDITION when the file is no plugin (the message names the file
 * and the loader's or the version check's reason). */
anvil_status* anvil_client_load_plugin(anvil_client* client, const anvil_plugin_load_args* args);

/* Plugins loaded, and plugins that failed to load with the reason. Strings
 * live as long as the client. */
anvil_status* anvil_client_plugin_count(anvil_client* client, size_t* out_count);
anvil_status* anvil_client_plugin_info(anvil_client* client, size_t index, const char** out_name,
                                       const char** out_version, const char** out_path);
anvil_status* anvil_client_plugin_failure_count(anvil_client* client, size_t* out_count);
anvil_status* anvil_client_plugin_failure(anvil_client* client, size_t index, const char** out_path,
                                          const char** out_reason);

/* Devices of every loaded plugin, in load order. Device handles live as long
 * as the client. */
anvil_status* anvil_client_device_count(anvil_client* client, size_t* out_count);
anvil_status* anvil_client_device(anvil_client* client, size_t index, anvil_device** out_device);

typedef struct anvil_device_properties {
  size_t struct_size;
  /* Strings live as long as the client. */
  const char* plugin; /* "cpu" */
  const char* kind;   /* the plugin's word for the device: "cpu", "vulkan" */
  const char* name;   /* "host", "NVIDIA H200" */
  uint64_t memory_bytes;
  int32_t index_in_plugin;
} anvil_device_properties;
#define ANVIL_DEVICE_PROPERTIES_STRUCT_SIZE ANVIL_STRUCT_SIZE(anvil_device_properties, index_in_plugin)

/* Fills the fields that fit in `out->struct_size` (set it first). */
anvil_status* anvil_device_get_properties(anvil_device* device, anvil_device_properties* out);

/* ----------------------------------------------------------------- events */

/* An event completes once, with success or an error, and stays so. */
anvil_status* anvil_event_is_ready(anvil_event* event, int32_t* out_ready);
/* Blocks until the event completes; returns its error (a copy), or NULL. */
anvil_status* anvil_event_await(anvil_event* event);
/* Calls `callback` once when the event completes (at once, on this thread,
 * if it already has), on some thread. `error` is NULL on success and is
 * owned by the callback. The event may be destroyed before it runs. */
typedef void (*anvil_event_callback)(anvil_status* error, void* user_data);
anvil_status* anvil_event_on_ready(anvil_event* event, anvil_event_callback callback, void* user_data);
/* Frees the handle; the completion still happens. NULL is fine. */
anvil_status* anvil_event_destroy(anvil_event* event);

/* ---------------------------------------------------------------- buffers */

/* What anvil_buffer_from_host may do with the caller's memory. */
typedef enum anvil_host_buffer_semantics {
  /* Copied: `out_host_done` completes once the copy has taken the data. */
  ANVIL_HOST_BUFFER_COPY = 0,
  /* The caller keeps the data valid and unchanged for the buffer's whole
   * life. A device that can read host memory in place (the CPU plugin, for
   * data aligned to 64 bytes) uses it without a copy; `out_host_done` then
   * completes when the buffer's memory is released: after the buffer is
   * destroyed and the executions and copies using it have finished. A
   * device that cannot copies, as with ANVIL_HOST_BUFFER_COPY. Donating
   * such a buffer never lets an execution write into the caller's memory. */
  ANVIL_HOST_BUFFER_IMMUTABLE_ZERO_COPY = 1
} anvil_host_buffer_semantics;

typedef struct anvil_buffer_from_host_args {
  size_t struct_size;
  anvil_device* device;
  /* Dense row-major data; must stay valid and unchanged until
   * `out_host_done` completes. */
  const void* data;
  int32_t element_type; /* an anvil_element_type */
  const int64_t* dims; /* needs to live only during the call */
  size_t num_dims;
  /* Since minor 2 (a shorter struct means ANVIL_HOST_BUFFER_COPY). */
  int32_t host_buffer_semantics; /* an anvil_host_buffer_semantics */
} anvil_buffer_from_host_args;
#define ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE \
  ANVIL_STRUCT_SIZE(anvil_buffer_from_host_args, host_buffer_semantics)

/* Starts a copy to the device (or, with ANVIL_HOST_BUFFER_IMMUTABLE_ZERO_COPY
 * on a device that can, uses `data` in place). `out_buffer` is usable at once
 * (uses wait for the copy). `out_host_done` completes when the caller may
 * reuse `data`; it may be NULL: then a copy is waited for before returning,
 * and memory used in place is simply the caller's again once the buffer is
 * released. */
anvil_status* anvil_buffer_from_host(anvil_client* client, const anvil_buffer_from_host_args* args,
                                     anvil_buffer** out_buffer, anvil_event** out_host_done);

/* Starts a copy of the buffer's contents into `dst` (dense row-major,
 * exactly the buffer's byte size), after the buffer is defined. `dst` must
 * stay valid until `out_done` completes. */
anvil_status* anvil_buffer_to_host(anvil_buffer* buffer, void* dst, size_t dst_size, anvil_event** out_done);

/* Copies a buffer to another device, of the same plugin or another one
 * (through host memory). */
anvil_status* anvil_buffer_copy_to_device(anvil_buffer* buffer, anvil_device* device, anvil_buffer** out_buffer);

/* An event that completes when the buffer's contents are defined (or failed
 * to be: the error of what was to produce it). Caller owns it. */
anvil_status* anvil_buffer_ready_event(anvil_buffer* buffer, anvil_event** out_event);

/* `*out_type` is an anvil_element_type. */
anvil_status* anvil_buffer_element_type(anvil_buffer* buffer, int32_t* out_type);
/* `*out_dims` lives as long as the buffer. */
anvil_status* anvil_buffer_dims(anvil_buffer* buffer, const int64_t** out_dims, size_t* out_num_dims);
anvil_status* anvil_buffer_byte_size(anvil_buffer* buffer, size_t* out_bytes);
anvil_status* anvil_buffer_device(anvil_buffer* buffer, anvil_device** out_device);

/* Frees the handle. Device memory is released once every execution or copy
 * already using the buffer has finished. NULL is fine. */
anvil_status* anvil_buffer_destroy(anvil_buffer* buffer);

/* ------------------------------------------------------------ executables */

typedef struct anvil_compile_args {
  size_t struct_size;
  const char* program; /* bytes; need to live only during the call */
  size_t program_size;
  const char* format; /* "hlo" (XLA HLO text), "stablehlo" (MLIR text) or
                         "stablehlo-bytecode" (a portable artifact) */
  anvil_device* device;
  const char* options; /* plugin options, may be NULL */
} anvil_compile_args;
#define ANVIL_COMPILE_ARGS_STRUCT_SIZE ANVIL_STRUCT_SIZE(anvil_compile_args, options)

/* Parses, verifies and canonicalises the program, then compiles it for the
 * device. A malformed program gives INVALID_ARGUMENT with FILE:LINE:COL. */
anvil_status* anvil_client_compile(anvil_client* client, const anvil_compile_args* args,
                                   anvil_executable** out_executable);

/* Parameters and results of the entry computation (tuples flattened). The
 * dims pointer lives as long as the executable. */
anvil_status* anvil_executable_parameter_count(anvil_executable* executable, size_t* out_count);
anvil_status* anvil_executable_parameter_shape(anvil_executable* executable, size_t index, int32_t* out_type, const int64_t** out_dims,
                                               size_t* out_num_dims);
/* Whether the program lets callers donate parameter `index` (XLA's
 * input_output_alias or buffer_donor; StableHLO's tf.aliasing_output or
 * jax.buffer_donor argument attributes): `*out_donor` is 1 or 0. Donation
 * itself is asked for per execution (anvil_execute_args.donate); this says
 * which parameters a framework such as JAX meant to be donated. Since
 * minor 3. */
anvil_status* anvil_executable_parameter_donor(anvil_executable* executable, size_t index, int32_t* out_donor);
anvil_status* anvil_executable_result_count(anvil_executable* executable, size_t* out_count);
anvil_status* anvil_executable_result_shape(anvil_executable* executable, size_t index, int32_t* out_type, const int64_t** out_dims,
                                            size_t* out_num_dims);
/* The canonical HLO text handed to the plugin; lives as long as the
 * executable. */
anvil_status* anvil_executable_canonical_text(anvil_executable* executable, const char** out_text,
                                              size_t* out_size);
/* The plugin's serialised form of the executable, for a cache. `*out_bytes`
 * is freed with anvil_bytes_free. UNIMPLEMENTED when the plugin cannot. */
anvil_status* anvil_executable_serialize(anvil_executable* executable, char** out_bytes, size_t* out_size);
void anvil_bytes_free(char* bytes);
/* Frees the handle; executions already started finish. NULL is fine. */
anvil_status* anvil_executable_destroy(anvil_executable* executable);

typedef struct anvil_execute_args {
  size_t struct_size;
  anvil_buffer* const* inputs; /* one per parameter, on the executable's device */
  size_t num_inputs;
  /* NULL, or one flag per input: non-zero donates the input. The donating
   * execution waits until every use of the buffer issued before it (an
   * execution reading it, a copy out of it) has finished; then the memory is
   * the plugin's, which may make it an output's. Any later use of the handle
   * is FAILED_PRECONDITION (destroying it is still required). */
  const uint8_t* donate;
} anvil_execute_args;
#define ANVIL_EXECUTE_ARGS_STRUCT_SIZE ANVIL_STRUCT_SIZE(anvil_execute_args, donate)

/* Returns at once. `out_outputs` (an array of the executable's result count)
 * receives new buffers defined when the execution completes; `out_done` (may
 * be NULL) completes then too. The execution starts once every input is
 * defined; an input whose definition failed fails it with the same error,
 * which its outputs then carry. */
anvil_status* anvil_executable_execute(anvil_executable* executable, const anvil_execute_args* args,
                                       anvil_buffer** out_outputs, anvil_event** out_done);

/* ----------------------------------------------- compile-only targets */

/* Since minor 5. What the loaded plugins compile for with no device present
 * (XLA's deviceless compile, PJRT's topology): a CUDA plugin lists "sm_80",
 * "sm_90" on a machine without a GPU. Targets of every loaded plugin, in
 * plugin load order, then in each plugin's own order; a plugin older than
 * plugin ABI minor 4, or one that does not implement them, has none. */
anvil_status* anvil_client_target_count(anvil_client* client, size_t* out_count);
/* The plugin that owns target `index` and the target's name ("sm_90").
 * Strings live as long as the client. An index past the end is
 * OUT_OF_RANGE. */
anvil_status* anvil_client_target(anvil_client* client, size_t index, const char** out_plugin,
                                  const char** out_name);
/* Parses, verifies and canonicalises the program as anvil_client_compile
 * does, then has the target's plugin compile it for target `index`, and
 * keeps nothing (no executable, no compile cache): NULL when the program
 * compiles for the target, else why not (the plugin's error, with its code;
 * a malformed program gives INVALID_ARGUMENT with FILE:LINE:COL).
 * `args->device` must be NULL (INVALID_ARGUMENT otherwise); `args->options`
 * goes to the plugin as with anvil_client_compile. */
anvil_status* anvil_client_compile_for_target(anvil_client* client, size_t index, const anvil_compile_args* args);

#ifdef __cplusplus
}
#endif

#endif /* ANVIL_ANVIL_H_ */
