// `anvil plugins`: the plugins found on the search path (ANVIL_PLUGIN_PATH,
// then the directory beside libanvil.so, or --path), their versions,
// devices and compile-only targets, and for each plugin that failed to
// load, why. Uses the C ABI only.
#include <cstdio>
#include <cstring>
#include <string>

#include "anvil/anvil.h"
#include "tools/commands.h"

namespace anvil::tools {
namespace {

int Fail(anvil_status* status) {
  std::fprintf(stderr, "anvil plugins: %s\n", anvil_status_get_message(status));
  anvil_status_free(status);
  return 1;
}

}  // namespace

int PluginsCommand(int argc, char** argv) {
  const char* path = nullptr;
  for (int k = 0; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--path") && k + 1 < argc) {
      path = argv[++k];
    } else if (!std::strcmp(argv[k], "--help") || !std::strcmp(argv[k], "-h")) {
      std::printf("usage: anvil plugins [--path DIR[:DIR...]]\n");
      return 0;
    } else {
      std::fprintf(stderr, "anvil plugins: unknown argument '%s'\n", argv[k]);
      return 2;
    }
  }
  anvil_client_options options{};
  options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
  options.plugin_path = path;
  options.load_all_plugins = 1;
  anvil_client* client = nullptr;
  if (anvil_status* s = anvil_client_create(&options, &client)) return Fail(s);
  size_t plugins = 0, devices = 0, failures = 0, targets = 0;
  anvil_client_plugin_count(client, &plugins);
  anvil_client_device_count(client, &devices);
  anvil_client_target_count(client, &targets);
  anvil_client_plugin_failure_count(client, &failures);
  for (size_t p = 0; p < plugins; ++p) {
    const char *name = nullptr, *version = nullptr, *file = nullptr;
    anvil_client_plugin_info(client, p, &name, &version, &file);
    std::printf("plugin %s %s (%s)\n", name, version, file);
    for (size_t d = 0; d < devices; ++d) {
      anvil_device* device = nullptr;
      anvil_client_device(client, d, &device);
      anvil_device_properties props{};
      props.struct_size = ANVIL_DEVICE_PROPERTIES_STRUCT_SIZE;
      anvil_device_get_properties(device, &props);
      if (std::strcmp(props.plugin, name) != 0) continue;
      std::printf("  device %zu: %s (kind %s, %llu MiB)\n", d, props.name, props.kind,
                  static_cast<unsigned long long>(props.memory_bytes >> 20));
    }
    // What it compiles for with no device present (sm_90, gfx90a...).
    std::string names;
    for (size_t t = 0; t < targets; ++t) {
      const char *owner = nullptr, *target = nullptr;
      if (anvil_status* s = anvil_client_target(client, t, &owner, &target)) {
        anvil_status_free(s);
        continue;
      }
      if (std::strcmp(owner, name) == 0) names += (names.empty() ? "" : ", ") + std::string(target);
    }
    if (!names.empty()) std::printf("  compile-only targets: %s\n", names.c_str());
  }
  for (size_t f = 0; f < failures; ++f) {
    const char *file = nullptr, *reason = nullptr;
    anvil_client_plugin_failure(client, f, &file, &reason);
    (void)file;  // the reason names the file
    std::printf("failed: %s\n", reason);
  }
  std::printf("%zu plugins, %zu devices, %zu failed to load\n", plugins, devices, failures);
  anvil_client_destroy(client);
  return 0;
}

}  // namespace anvil::tools
