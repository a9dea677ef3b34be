#include "hlo/kernel_index.h"

namespace anvil::hlo {

std::string IndexLiteral(int64_t value) { return std::to_string(value) + "u"; }

std::vector<std::string> CoordinatesOf(const std::string& linear, const std::vector<int64_t>& dims) {
  std::vector<std::string> coordinates(dims.size());
  int64_t stride = 1;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    if (dims[d] == 1) {
      coordinates[d] = "0u";
      continue;
    }
    std::string c = stride == 1 ? linear : "(" + linear + " / " + IndexLiteral(stride) + ")";
    if (d > 0) c = "(" + c + " % " + IndexLiteral(dims[d]) + ")";
    coordinates[d] = c;
    stride *= dims[d];
  }
  return coordinates;
}

std::string LinearIndexOf(const std::vector<std::string>& coordinates, const std::vector<int64_t>& dims) {
  std::string sum;
  int64_t stride = 1;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    if (dims[d] != 1) {
      std::string term = stride == 1 ? coordinates[d] : coordinates[d] + " * " + IndexLiteral(stride);
      sum = sum.empty() ? term : term + " + " + sum;
    }
    stride *= dims[d];
  }
  return sum.empty() ? "0u" : "(" + sum + ")";
}

}  // namespace anvil::hlo
