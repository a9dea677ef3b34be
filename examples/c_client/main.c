/* A framework's view of Anvil in one C11 file: load plugins, compile a
 * program from a file, run it on inputs it makes up, print the results.
 *
 *   anvil_c_client [--plugin NAME|PATH] [--canonical] PROGRAM
 *
 * PROGRAM is XLA HLO text (.hlo), StableHLO text (.mlir) or a StableHLO
 * portable artifact (.mlir.bc). Without --plugin every plugin on the search
 * path is loaded (ANVIL_PLUGIN_PATH, then anvil_plugins/ beside
 * libanvil.so) and the first device runs the program. --canonical prints
 * the canonical HLO text the plugin received. Parameters and results must be
 * f32 arrays: parameter p's element k is p + (k + 1) / 4. */
#include <anvil/anvil.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* CodeName(anvil_status_code code) {
  static const char* const names[] = {
      "OK",        "CANCELLED",         "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
      "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS"};
  return (unsigned)code < sizeof(names) / sizeof(names[0]) ? names[code] : "?";
}

/* Every call returns NULL or an error the caller owns: report and free it. */
static int Failed(anvil_status* status, const char* what) {
  if (!status) return 0;
  fprintf(stderr, "%s: %s: %s\n", what, CodeName(anvil_status_get_code(status)), anvil_status_get_message(status));
  anvil_status_free(status);
  return 1;
}

/* Completes an event and frees its handle; 1 when the work failed. */
static int Await(anvil_event* event, const char* what) {
  int failed = Failed(anvil_event_await(event), what);
  anvil_status_free(anvil_event_destroy(event));
  return failed;
}

static char* ReadFile(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  char* data = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)n + 1)) != NULL) {
      *size = fread(data, 1, (size_t)n, f);
      data[*size] = '\0';
    }
  }
  fclose(f);
  return data;
}

static int EndsWith(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static const char* FormatOf(const char* path) {
  if (EndsWith(path, ".mlir.bc")) return "stablehlo-bytecode";
  if (EndsWith(path, ".mlir")) return "stablehlo";
  return "hlo";
}

static size_t ElementCount(const int64_t* dims, size_t rank) {
  size_t n = 1;
  for (size_t d = 0; d < rank; ++d) n *= (size_t)dims[d];
  return n;
}

static void PrintArray(size_t index, const int64_t* dims, size_t rank, const float* values) {
  printf("result %zu: f32[", index);
  for (size_t d = 0; d < rank; ++d) printf("%s%lld", d ? "," : "", (long long)dims[d]);
  printf("] {");
  size_t n = ElementCount(dims, rank);
  for (size_t k = 0; k < n; ++k) printf("%s%g", k ? ", " : "", values[k]);
  printf("}\n");
}

/* Loads the one plugin asked for, or reports those that failed to load. */
static int LoadPlugins(anvil_client* client, const char* plugin) {
  if (plugin) {
    anvil_plugin_load_args load = {.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE};
    /* A name is looked up on the search path; anything with a '/' is a file. */
    if (strchr(plugin, '/')) load.path = plugin; else load.name = plugin;
    return Failed(anvil_client_load_plugin(client, &load), "load plugin");
  }
  size_t failures = 0;
  if (Failed(anvil_client_plugin_failure_count(client, &failures), "plugin failures")) return 1;
  for (size_t i = 0; i < failures; ++i) {
    const char *path, *reason;
    if (!Failed(anvil_client_plugin_failure(client, i, &path, &reason), "plugin failure"))
      fprintf(stderr, "not loaded: %s: %s\n", path, reason);
  }
  return 0;
}

/* Uploads one made-up f32 input per parameter into `inputs`. */
static int MakeInputs(anvil_client* client, anvil_device* device, anvil_executable* exe, size_t count,
                      anvil_buffer** inputs) {
  for (size_t p = 0; p < count; ++p) {
    int32_t type;
    const int64_t* dims;
    size_t rank;
    if (Failed(anvil_executable_parameter_shape(exe, p, &type, &dims, &rank), "parameter shape")) return 1;
    if (type != ANVIL_F32) {
      fprintf(stderr, "parameter %zu: this example makes f32 inputs only\n", p);
      return 1;
    }
    size_t n = ElementCount(dims, rank);
    float* data = malloc(n * sizeof(float) + 1); /* + 1: never malloc(0), for an empty array */
    if (!data) return 1;
    for (size_t k = 0; k < n; ++k) data[k] = (float)p + (float)(k + 1) / 4.0f;
    anvil_buffer_from_host_args args = {.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE,
                                        .device = device,
                                        .data = data,
                                        .element_type = ANVIL_F32,
                                        .dims = dims,
                                        .num_dims = rank,
                                        .host_buffer_semantics = ANVIL_HOST_BUFFER_COPY};
    /* No host-done event: the call returns once the data is copied, so the
     * array can be freed at once. */
    int failed = Failed(anvil_buffer_from_host(client, &args, &inputs[p], NULL), "upload");
    free(data);
    if (failed) return 1;
  }
  return 0;
}

static int PrintResults(anvil_executable* exe, anvil_buffer** outputs, size_t count) {
  for (size_t r = 0; r < count; ++r) {
    int32_t type;
    const int64_t* dims;
    size_t rank;
    if (Failed(anvil_executable_result_shape(exe, r, &type, &dims, &rank), "result shape")) return 1;
    if (type != ANVIL_F32) {
      printf("result %zu: not f32 (element type %d)\n", r, (int)type);
      continue;
    }
    size_t n = ElementCount(dims, rank);
    float* values = malloc(n * sizeof(float) + 1);
    anvil_event* copied = NULL;
    int failed = !values || Failed(anvil_buffer_to_host(outputs[r], values, n * sizeof(float), &copied), "download") ||
                 Await(copied, "download");
    if (!failed) PrintArray(r, dims, rank, values);
    free(values);
    if (failed) return 1;
  }
  return 0;
}

/* Compiles and runs the program on `device`; every handle made here is
 * destroyed here, before the client. */
static int Run(anvil_client* client, anvil_device* device, const char* file, int canonical) {
  size_t size = 0;
  char* program = ReadFile(file, &size);
  if (!program) {
    fprintf(stderr, "%s: cannot read\n", file);
    return 1;
  }
  anvil_compile_args compile = {.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE,
                                .program = program,
                                .program_size = size,
                                .format = FormatOf(file),
                                .device = device};
  anvil_executable* exe = NULL;
  int failed = Failed(anvil_client_compile(client, &compile, &exe), "compile");
  free(program); /* the program needs to live only during the call */
  if (failed) return 1;
  if (canonical) {
    const char* text;
    size_t text_size;
    if (!Failed(anvil_executable_canonical_text(exe, &text, &text_size), "canonical text"))
      fwrite(text, 1, text_size, stdout);
  }
  size_t num_inputs = 0, num_outputs = 0;
  anvil_buffer** inputs = NULL;
  anvil_buffer** outputs = NULL;
  failed = Failed(anvil_executable_parameter_count(exe, &num_inputs), "parameters") ||
           Failed(anvil_executable_result_count(exe, &num_outputs), "results") ||
           !(inputs = calloc(num_inputs + 1, sizeof(*inputs))) ||
           !(outputs = calloc(num_outputs + 1, sizeof(*outputs))) ||
           MakeInputs(client, device, exe, num_inputs, inputs);
  if (!failed) {
    /* Returns at once; the outputs exist now and are defined when `done`
     * completes. */
    anvil_execute_args run = {.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE, .inputs = inputs, .num_inputs = num_inputs};
    anvil_event* done = NULL;
    failed = Failed(anvil_executable_execute(exe, &run, outputs, &done), "execute") || Await(done, "execute") ||
             PrintResults(exe, outputs, num_outputs);
  }
  for (size_t i = 0; inputs && i < num_inputs; ++i) anvil_status_free(anvil_buffer_destroy(inputs[i]));
  for (size_t i = 0; outputs && i < num_outputs; ++i) anvil_status_free(anvil_buffer_destroy(outputs[i]));
  free(inputs);
  free(outputs);
  anvil_status_free(anvil_executable_destroy(exe));
  return failed;
}

int main(int argc, char** argv) {
  const char* plugin = NULL;
  const char* file = NULL;
  int canonical = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--plugin") == 0 && i + 1 < argc) plugin = argv[++i];
    else if (strcmp(argv[i], "--canonical") == 0) canonical = 1;
    else file = argv[i];
  }
  if (!file) {
    fprintf(stderr, "usage: %s [--plugin NAME|PATH] [--canonical] PROGRAM\n", argv[0]);
    return 2;
  }
  /* The library's major must be the header's: within a major the ABI only
   * grows, and the SONAME (libanvil.so.MAJOR) already keeps another major
   * from loading. */
  anvil_version version = anvil_get_abi_version();
  if (version.major != ANVIL_ABI_MAJOR) {
    fprintf(stderr, "libanvil ABI %u.%u; this program needs %d.x\n", version.major, version.minor, ANVIL_ABI_MAJOR);
    return 1;
  }
  /* Set struct_size to the header's size: fields are only ever appended,
   * and the library reads no further than the caller's struct reaches. */
  anvil_client_options options = {.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE, .load_all_plugins = plugin == NULL};
  anvil_client* client = NULL;
  if (Failed(anvil_client_create(&options, &client), "create client")) return 1;
  anvil_device* device = NULL;
  anvil_device_properties props = {.struct_size = ANVIL_DEVICE_PROPERTIES_STRUCT_SIZE};
  int failed = LoadPlugins(client, plugin) || Failed(anvil_client_device(client, 0, &device), "device 0") ||
               Failed(anvil_device_get_properties(device, &props), "device properties");
  if (!failed) {
    printf("device: %s (plugin %s)\n", props.name, props.plugin);
    failed = Run(client, device, file, canonical);
  }
  failed |= Failed(anvil_client_destroy(client), "destroy client");
  return failed;
}
