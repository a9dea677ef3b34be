#include "core/donors.h"

#include <cctype>
#include <string_view>

namespace anvil::core {
namespace {

// Every `(N, ...)` in the value names parameter N: input_output_alias is
// `{ {out}: (N, {index}, kind), ... }`, buffer_donor is `{ (N, {index}), ... }`.
void MarkParameters(std::string_view value, std::vector<uint8_t>& donors) {
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '(') continue;
    size_t j = i + 1;
    while (j < value.size() && value[j] == ' ') ++j;
    uint64_t number = 0;
    size_t digits = 0;
    while (j < value.size() && std::isdigit(static_cast<unsigned char>(value[j])) && digits < 18) {
      number = number * 10 + static_cast<uint64_t>(value[j] - '0');
      ++j, ++digits;
    }
    if (digits > 0 && number < donors.size()) donors[number] = 1;
  }
}

}  // namespace

std::vector<uint8_t> DonorParameters(const hlo::Module& module, size_t count) {
  std::vector<uint8_t> donors(count, 0);
  for (const auto& attribute : module.attributes) {
    if (attribute.key == "input_output_alias" || attribute.key == "buffer_donor") {
      MarkParameters(attribute.value, donors);
    }
  }
  return donors;
}

}  // namespace anvil::core
