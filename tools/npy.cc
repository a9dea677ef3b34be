#include "tools/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace anvil::tools {
namespace {

using hlo::ElementType;

struct Descr {
  const char* code;
  ElementType type;
};
constexpr Descr kDescrs[] = {
    {"|b1", ElementType::kPred}, {"|i1", ElementType::kS8},  {"<i2", ElementType::kS16}, {"<i4", ElementType::kS32},
    {"<i8", ElementType::kS64},  {"|u1", ElementType::kU8},  {"<u2", ElementType::kU16}, {"<u4", ElementType::kU32},
    {"<u8", ElementType::kU64},  {"<f2", ElementType::kF16}, {"<f4", ElementType::kF32}, {"<f8", ElementType::kF64},
    {"<c8", ElementType::kC64},  {"<c16", ElementType::kC128},
};

}  // namespace

hlo::StatusOr<hlo::Literal> ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return hlo::NotFound(path + ": cannot open");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return hlo::InvalidArgument(path + ": not a .npy file");
  }
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint16_t len16 = 0;
    in.read(reinterpret_cast<char*>(&len16), 2);
    header_len = len16;
  } else {
    in.read(reinterpret_cast<char*>(&header_len), 4);
  }
  std::string header(header_len, '\0');
  in.read(header.data(), header_len);
  auto field = [&](const std::string& key) -> std::string {
    size_t at = header.find("'" + key + "'");
    if (at == std::string::npos) return "";
    at = header.find(':', at) + 1;
    while (at < header.size() && header[at] == ' ') ++at;
    size_t end = header[at] == '(' ? header.find(')', at) + 1 : header.find_first_of(",}", at);
    return header.substr(at, end - at);
  };
  std::string descr = field("descr");
  if (descr.size() >= 2) descr = descr.substr(1, descr.size() - 2);
  if (field("fortran_order") == "True") return hlo::Unimplemented(path + ": Fortran-order arrays are not supported");
  ElementType type = ElementType::kInvalid;
  for (const Descr& d : kDescrs) {
    if (descr == d.code || (descr.size() > 1 && descr.substr(1) == std::string(d.code).substr(1) && descr[0] == '='))
      type = d.type;
  }
  if (type == ElementType::kInvalid) return hlo::Unimplemented(path + ": unsupported dtype '" + descr + "'");
  std::vector<int64_t> dims;
  std::string shape = field("shape");
  for (size_t p = 0; p < shape.size();) {
    if (std::isdigit(static_cast<unsigned char>(shape[p]))) {
      size_t end = p;
      while (end < shape.size() && std::isdigit(static_cast<unsigned char>(shape[end]))) ++end;
      dims.push_back(std::stoll(shape.substr(p, end - p)));
      p = end;
    } else {
      ++p;
    }
  }
  hlo::Literal literal(hlo::Shape(type, dims));
  auto& data = literal.mutable_data();
  if (!in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size()))) {
    return hlo::InvalidArgument(path + ": the data is shorter than its shape says");
  }
  return literal;
}

hlo::Status WriteNpy(const std::string& path, const hlo::Literal& literal) {
  const char* code = nullptr;
  for (const Descr& d : kDescrs) {
    if (d.type == literal.shape().element_type()) code = d.code;
  }
  if (!code) {
    return hlo::Unimplemented("no NumPy dtype for " + std::string(hlo::HloName(literal.shape().element_type())));
  }
  std::ostringstream dims;
  dims << "(";
  for (int64_t d : literal.shape().dims()) dims << d << ",";
  dims << ")";
  std::string header = std::string("{'descr': '") + code + "', 'fortran_order': False, 'shape': " + dims.str() + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) return hlo::NotFound(path + ": cannot create");
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  out.write(reinterpret_cast<const char*>(literal.data().data()), static_cast<std::streamsize>(literal.data().size()));
  return out ? hlo::OkStatus() : hlo::Internal(path + ": write failed");
}

}  // namespace anvil::tools
