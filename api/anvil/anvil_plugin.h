/* Anvil device-plugin ABI: what a plugin shared library exports.
 *
 * Pure C11. A plugin exports one symbol, `anvil_plugin_get_api`, returning a
 * table of functions. The table starts with `struct_size` and the ABI version
 * the plugin was built against; core refuses another major, and before every
 * call checks that the entry lies within `struct_size` and is not NULL,
 * answering UNIMPLEMENTED otherwise. So a plugin built against an older minor
 * (a shorter table) keeps loading, and optional entries may be NULL.
 *
 * Errors: a function returns NULL on success, or an `anvil_plugin_error*`
 * the plugin allocated; core reads it with `error_code`/`error_message` and
 * frees it with `error_destroy`.
 *
 * Completion: transfers and executions finish asynchronously by calling the
 * `anvil_plugin_done` callback core passed, exactly once, from any thread,
 * with NULL or an error (which core then owns). A plugin may also finish
 * work before the entry returns and call `done` from inside it (the CPU
 * plugin runs tiny programs so); it then returns NULL.
 *
 * Threading: core may call any entry from any thread, concurrently.
 */
#ifndef ANVIL_ANVIL_PLUGIN_H_
#define ANVIL_ANVIL_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ANVIL_PLUGIN_ABI_MAJOR 0
#define ANVIL_PLUGIN_ABI_MINOR 4

#define ANVIL_PLUGIN_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

typedef struct anvil_plugin_error anvil_plugin_error;         /* plugin-owned until returned */
typedef struct anvil_plugin_context anvil_plugin_context;     /* one per client */
typedef struct anvil_plugin_memory anvil_plugin_memory;       /* device memory */
typedef struct anvil_plugin_executable anvil_plugin_executable;

/* Called once when asynchronous work ends; `error` NULL on success, else
 * owned by the receiver. */
typedef void (*anvil_plugin_done)(void* user_data, anvil_plugin_error* error);

/* What core offers a plugin, handed to `context_create` and alive as long as
 * the context: its host thread pool (a oneTBB arena), for plugins that run
 * host work (`enqueue` runs `fn(arg)` soon on one of core's threads), and,
 * since minor 3, its trace. Read a field only when `struct_size` covers it
 * (ANVIL_PLUGIN_STRUCT_SIZE): an older core passes a shorter struct. */
typedef struct anvil_plugin_host_executor {
  size_t struct_size;
  void* executor;
  void (*enqueue)(void* executor, void (*fn)(void* arg), void* arg);
  /* --- since minor 3 */
  /* When the client traces (see anvil_client_options.trace_path),
   * `trace_span` records a span that ran on the calling thread from
   * `begin_ns` to `end_ns` (CLOCK_MONOTONIC nanoseconds): `name` is short
   * ("fusion(7 ops)", "convolution"); `detail` (may be NULL) is shown with
   * it (the HLO instructions a kernel holds). Both are copied. NULL when
   * tracing is off, so a plugin tests it once and times nothing. */
  void* tracer;
  void (*trace_span)(void* tracer, const char* name, const char* detail, uint64_t begin_ns, uint64_t end_ns);
} anvil_plugin_host_executor;
#define ANVIL_PLUGIN_HOST_EXECUTOR_STRUCT_SIZE ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_host_executor, trace_span)

typedef struct anvil_plugin_device_properties {
  size_t struct_size;
  const char* kind; /* lives as long as the context */
  const char* name; /* lives as long as the context */
  uint64_t memory_bytes;
} anvil_plugin_device_properties;
#define ANVIL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE \
  ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_device_properties, memory_bytes)

typedef struct anvil_plugin_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;    /* "cpu"; static */
  const char* version; /* "0.1.0"; static */

  /* --- errors (required) */
  void (*error_destroy)(anvil_plugin_error* error);
  int32_t (*error_code)(const anvil_plugin_error* error); /* anvil_status_code */
  const char* (*error_message)(const anvil_plugin_error* error);

  /* --- lifecycle (required) */
  anvil_plugin_error* (*context_create)(const anvil_plugin_host_executor* executor,
                                        anvil_plugin_context** out_context);
  /* Called after all memory and executables are freed and all work done. */
  void (*context_destroy)(anvil_plugin_context* context);

  /* --- devices (required) */
  anvil_plugin_error* (*device_count)(anvil_plugin_context* context, size_t* out_count);
  /* Fills the fields within `out->struct_size`. */
  anvil_plugin_error* (*device_properties)(anvil_plugin_context* context, size_t device,
                                           anvil_plugin_device_properties* out);

  /* --- memory (required) */
  anvil_plugin_error* (*memory_allocate)(anvil_plugin_context* context, size_t device, size_t bytes,
                                         anvil_plugin_memory** out_memory);
  void (*memory_free)(anvil_plugin_context* context, anvil_plugin_memory* memory);
  /* `src`/`dst` stay valid until `done` is called. */
  anvil_plugin_error* (*memory_copy_from_host)(anvil_plugin_context* context, anvil_plugin_memory* memory,
                                               const void* src, size_t bytes, anvil_plugin_done done,
                                               void* user_data);
  anvil_plugin_error* (*memory_copy_to_host)(anvil_plugin_context* context, anvil_plugin_memory* memory,
                                             void* dst, size_t bytes, anvil_plugin_done done, void* user_data);

  /* --- programs (required) */
  /* `hlo_text` is canonical XLA HLO text (see docs/abi.md): one entry
   * computation whose parameters and root are arrays or a tuple of arrays. */
  anvil_plugin_error* (*executable_compile)(anvil_plugin_context* context, size_t device, const char* hlo_text,
                                            size_t hlo_size, const char* options,
                                            anvil_plugin_executable** out_executable);
  void (*executable_destroy)(anvil_plugin_context* context, anvil_plugin_executable* executable);
  /* Starts an execution. `inputs` are defined; the plugin allocates (or, for
   * an input whose `donated` flag is set, may reuse) the memory of each
   * output and stores it in `outputs` before returning. The memory of a
   * donated input belongs to the plugin from this call on: it becomes an
   * output or the plugin frees it, also when the call fails. `done` runs when
   * the outputs are defined. On a returned error the plugin has freed what it
   * allocated and left `outputs` NULL (core frees any output it finds set),
   * and `done` is not called. plugins/common/execution_memory.h does this. */
  anvil_plugin_error* (*executable_execute)(anvil_plugin_context* context, anvil_plugin_executable* executable,
                                            anvil_plugin_memory* const* inputs, const uint8_t* donated,
                                            size_t num_inputs, anvil_plugin_memory** outputs,
                                            size_t num_outputs, anvil_plugin_done done, void* user_data);

  /* --- optional (may be NULL) */
  /* Serialise an executable so core can cache it; the bytes are freed with
   * `serialized_free`. */
  anvil_plugin_error* (*executable_serialize)(anvil_plugin_context* context, anvil_plugin_executable* executable,
                                              void** out_bytes, size_t* out_size);
  void (*serialized_free)(void* bytes);
  anvil_plugin_error* (*executable_deserialize)(anvil_plugin_context* context, size_t device, const void* bytes,
                                                size_t size, anvil_plugin_executable** out_executable);

  /* --- optional, since minor 2 */
  /* Uses `bytes` of the caller's host memory at `data` as device memory in
   * place, when the device can read it there (the CPU plugin: when `data` is
   * 64-byte aligned); sets `*out_memory` to NULL when it cannot, and core
   * copies instead. The memory stays the caller's: `memory_free` on the
   * handle releases only the handle. Core never donates such memory, so a
   * plugin only ever reads it. */
  anvil_plugin_error* (*memory_wrap_host)(anvil_plugin_context* context, size_t device, const void* data,
                                          size_t bytes, anvil_plugin_memory** out_memory);

  /* --- optional, since minor 4: compile-only targets */
  /* What the plugin compiles for with no device present (XLA's deviceless
   * compile, PJRT's topology): a program's kernels are generated and
   * compiled for the target's instruction set, and nothing runs. A plugin
   * may list targets whether or not it has devices. */
  anvil_plugin_error* (*target_count)(anvil_plugin_context* context, size_t* out_count);
  /* The target's name ("sm_90", "gfx90a"); it lives as long as `context`. */
  anvil_plugin_error* (*target_name)(anvil_plugin_context* context, size_t target, const char** out_name);
  /* Compiles `hlo_text` (as executable_compile gets it) for `target`, and
   * keeps nothing; an error says why the program does not compile for it. */
  anvil_plugin_error* (*target_compile)(anvil_plugin_context* context, size_t target, const char* hlo_text,
                                        size_t hlo_size, const char* options);
} anvil_plugin_api;
#define ANVIL_PLUGIN_API_STRUCT_SIZE ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_api, target_compile)

/* The one symbol a plugin exports. */
#define ANVIL_PLUGIN_GET_API_SYMBOL "anvil_plugin_get_api"
typedef const anvil_plugin_api* (*anvil_plugin_get_api_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* ANVIL_ANVIL_PLUGIN_H_ */
