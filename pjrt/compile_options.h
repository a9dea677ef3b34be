// The few fields of a serialized xla.CompileOptionsProto this plugin acts
// on, read with a minimal protobuf wire-format reader (the plugin links no
// protobuf library; unknown fields are skipped, as protobuf itself does).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace anvil::pjrt {

struct CompileOptions {
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  int64_t device_ordinal = -1;  // -1: not set
};

// Reads `bytes`; false with `error` set when they are not a well-formed
// message.
bool ParseCompileOptions(std::string_view bytes, CompileOptions& out, std::string& error);

}  // namespace anvil::pjrt
