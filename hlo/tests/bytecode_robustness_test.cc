// Truncated and corrupted portable artifacts: every result is a module or an
// INVALID_ARGUMENT status that names the byte offset, never a crash, a hang
// or a huge allocation (the sanitizer builds run this too).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "hlo/bytecode_stream.h"
#include "hlo/printer.h"
#include "hlo/program_text.h"
#include "hlo/stablehlo_parser.h"
#include "hlo/verifier.h"

namespace anvil::hlo {
namespace {

std::string Artifact(const std::string& version) {
  const std::string path = std::string(ANVIL_CORPUS_DIR) + "/stablehlo-vhlo/stablehlo_legalize_to_vhlo." + version +
                           ".mlir.bc";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Reads `bytes` both ways (one module, function by function) and checks
// that each outcome is a clean one.
void ExpectClean(const std::string& bytes, const std::string& what) {
  auto modules = ParseProgramText(bytes, ProgramFormat::kStableHloBytecode, SourceInfo{"t.mlir.bc", 1});
  if (modules.ok()) {
    for (const auto& m : *modules) {
      if (Verify(*m).ok()) (void)Print(*m);
    }
  } else {
    ASSERT_EQ(modules.status().code(), StatusCode::kInvalidArgument) << what << ": " << modules.status().message();
    ASSERT_NE(modules.status().message().find("t.mlir.bc: byte "), std::string::npos)
        << what << ": " << modules.status().message();
  }
  auto functions = ParseStableHloBytecodeFunctions(bytes, SourceInfo{"t.mlir.bc", 1});
  if (!functions.ok()) {
    ASSERT_EQ(functions.status().code(), StatusCode::kInvalidArgument) << what;
    return;
  }
  for (const FunctionModule& f : *functions) {
    if (!f.module.ok()) {
      ASSERT_EQ(f.module.status().code(), StatusCode::kInvalidArgument) << what;
    }
  }
}

TEST(BytecodeRobustness, ArtifactsOfEachBytecodeVersionRead) {
  // 0.9.0 is bytecode version 1, 0.10.0 version 3, 0.12.0 version 4 (no
  // properties yet), 1.13.0 and 1.20.0 version 6.
  for (const char* version : {"0_9_0", "0_10_0", "0_12_0", "1_13_0", "1_20_0"}) {
    const std::string bytes = Artifact(version);
    ASSERT_FALSE(bytes.empty()) << version;
    auto functions = ParseStableHloBytecodeFunctions(bytes, SourceInfo{version, 1});
    ASSERT_TRUE(functions.ok()) << functions.status().message();
    int read = 0;
    for (const FunctionModule& f : *functions) read += f.module.ok();
    EXPECT_GT(read, 100) << version;
  }
}

TEST(BytecodeRobustness, TruncatedArtifactsFailWithTheOffset) {
  const std::string bytes = Artifact("1_13_0");
  ASSERT_FALSE(bytes.empty());
  auto cut = ParseProgramText(bytes.substr(0, 4), ProgramFormat::kStableHloBytecode, SourceInfo{"t.mlir.bc", 1});
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().message(), "t.mlir.bc: byte 4: error: expected the bytecode version, found end of data");
  auto empty = ParseProgramText("", ProgramFormat::kStableHloBytecode, SourceInfo{"t.mlir.bc", 1});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), "t.mlir.bc: byte 0: error: expected the MLIR bytecode magic 'ML\\xefR'");
  // Every prefix of the header and the first sections, then every 13th.
  for (size_t n = 0; n < bytes.size(); n += n < 600 ? 1 : 13) {
    ExpectClean(bytes.substr(0, n), "prefix of " + std::to_string(n) + " bytes");
    if (HasFailure()) return;
  }
}

std::string EncodeVarInt(uint64_t v) {
  for (int n = 1; n <= 8; ++n) {
    if (n < 8 ? v < (uint64_t{1} << (7 * n)) : v < (uint64_t{1} << 56)) {
      uint64_t encoded = (v << n) | (uint64_t{1} << (n - 1));
      std::string out;
      for (int k = 0; k < n; ++k) out += static_cast<char>((encoded >> (8 * k)) & 0xff);
      return out;
    }
  }
  std::string out(1, '\0');
  for (int k = 0; k < 8; ++k) out += static_cast<char>((v >> (8 * k)) & 0xff);
  return out;
}

TEST(BytecodeRobustness, SectionsCutShortFailCleanly) {
  // Cutting the file only ever breaks the last section's framing; cutting
  // one section's contents (and its length to match) reaches the readers of
  // strings, dialects, attributes, types, properties and ops.
  for (const char* version : {"0_9_0", "0_12_0", "1_13_0"}) {
    const std::string bytes = Artifact(version);
    ASSERT_FALSE(bytes.empty());
    const std::string file = "t.mlir.bc";
    bytecode::Reader r(bytecode::Bytes{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 0}, &file);
    bytecode::Bytes skipped;
    ASSERT_TRUE(r.ReadBytes(4, skipped).ok());
    uint64_t bytecode_version = 0;
    ASSERT_TRUE(r.ReadVarInt(bytecode_version).ok());
    std::string_view producer;
    ASSERT_TRUE(r.ReadNullTerminated(producer).ok());
    struct Piece { size_t start, data_start, end; bool aligned; };
    std::vector<Piece> sections;
    while (!r.AtEnd()) {
      const size_t start = r.offset();
      const bool aligned = static_cast<uint8_t>(bytes[start]) & 0x80;
      bytecode::SectionId id;
      bytecode::Bytes data;
      ASSERT_TRUE(r.ReadSection(id, data).ok());
      sections.push_back({start, data.offset, data.offset + data.size, aligned});
    }
    ASSERT_GE(sections.size(), 5u);
    for (const Piece& p : sections) {
      if (p.aligned) continue;  // its padding depends on where it starts
      const size_t size = p.end - p.data_start;
      for (size_t keep = 0; keep < size; keep += keep < 64 ? 1 : 1 + size / 97) {
        std::string cut = bytes.substr(0, p.start) + bytes[p.start] + EncodeVarInt(keep) +
                          bytes.substr(p.data_start, keep) + bytes.substr(p.end);
        ExpectClean(cut, std::string(version) + " section at " + std::to_string(p.start) + " cut to " +
                             std::to_string(keep) + " bytes");
        if (HasFailure()) return;
      }
    }
  }
}

TEST(BytecodeRobustness, CorruptedArtifactsFailCleanly) {
  std::mt19937 rng(12);
  for (const char* version : {"0_9_0", "0_12_0", "1_13_0"}) {
    const std::string bytes = Artifact(version);
    ASSERT_FALSE(bytes.empty());
    std::uniform_int_distribution<size_t> where(0, bytes.size() - 1);
    std::uniform_int_distribution<int> value(0, 255);
    for (int k = 0; k < 150; ++k) {
      std::string corrupt = bytes;
      const int flips = 1 + k % 3;
      for (int f = 0; f < flips; ++f) corrupt[where(rng)] = static_cast<char>(value(rng));
      ExpectClean(corrupt, std::string(version) + " corruption " + std::to_string(k));
      if (HasFailure()) return;
    }
  }
}

// A section: id, one-byte varint length (< 128), bytes.
std::string Section(int id, const std::string& data) {
  return std::string(1, static_cast<char>(id)) + std::string(1, static_cast<char>(data.size() * 2 + 1)) + data;
}

TEST(BytecodeRobustness, HugeCountsAreRefusedBeforeAllocating) {
  // A string section that declares 2^40 strings (a 9-byte varint) in an
  // otherwise well-framed artifact.
  const std::string header = std::string("ML\xefR", 4) + "\x0d" + std::string("x\0", 2);
  const std::string huge = std::string("\0\0\0\0\0\0\1\0\0", 9);
  const std::string rest = Section(1, "\x01") + Section(2, "") + Section(3, std::string("\x01\x01", 2)) +
                           Section(4, "\x01") + Section(8, "");
  auto modules = ParseProgramText(header + Section(0, huge) + rest, ProgramFormat::kStableHloBytecode,
                                  SourceInfo{"t.mlir.bc", 1});
  ASSERT_FALSE(modules.ok());
  EXPECT_EQ(modules.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(modules.status().message(),
            "t.mlir.bc: byte 9: error: the string count is 1099511627776, more than the 0 bytes left can hold");
}

}  // namespace
}  // namespace anvil::hlo
