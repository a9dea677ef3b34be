// Readers and writers for the structured attributes the IR keeps in XLA's
// text spelling: integer lists, slices, windows, padding, convolution
// dimension labels. The StableHLO lowering writes them; the verifier and the
// passes read them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir.h"
#include "hlo/status.h"

namespace anvil::hlo {

std::string FormatIntList(const std::vector<int64_t>& values);  // {1,2,3}
StatusOr<std::vector<int64_t>> ParseIntList(std::string_view text);
// {{0,1},{2,3}}
std::string FormatIntMatrix(const std::vector<std::vector<int64_t>>& rows);

struct SliceDim {
  int64_t start = 0, limit = 0, stride = 1;
};
std::string FormatSlice(const std::vector<SliceDim>& dims);  // {[0:2], [1:5:2]}
StatusOr<std::vector<SliceDim>> ParseSlice(std::string_view text);

struct WindowDim {
  int64_t size = 1, stride = 1, pad_low = 0, pad_high = 0, base_dilation = 1, window_dilation = 1;
  bool reversal = false;
};
// size=3x3 stride=2x2 pad=1_1x0_0 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..
std::string FormatWindow(const std::vector<WindowDim>& dims);
StatusOr<std::vector<WindowDim>> ParseWindow(std::string_view text);

struct PadDim {
  int64_t low = 0, high = 0, interior = 0;
};
std::string FormatPadding(const std::vector<PadDim>& dims);  // 0_0x1_2_1
StatusOr<std::vector<PadDim>> ParsePadding(std::string_view text);

// `b01f_01io->b01f`: which dimension of input, kernel and output plays which role.
struct ConvDimensionNumbers {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
};
StatusOr<ConvDimensionNumbers> ParseDimLabels(std::string_view text);
std::string FormatDimLabels(const ConvDimensionNumbers& dnums, int rank);

// The integer list attribute `key` of `instruction`, or `fallback` if absent.
StatusOr<std::vector<int64_t>> IntListAttribute(const Instruction& instruction, std::string_view key,
                                                std::vector<int64_t> fallback = {}, bool required = false);
// An integer attribute (`index=3`), or `fallback`.
StatusOr<int64_t> IntAttribute(const Instruction& instruction, std::string_view key, std::optional<int64_t> fallback);
bool BoolAttribute(const Instruction& instruction, std::string_view key, bool fallback = false);
// An attribute's value without surrounding quotes, or "" when absent.
std::string StringAttribute(const Instruction& instruction, std::string_view key);
// Where `instruction` came from in the framework's source, from its
// `metadata={op_name=... source_file=... source_line=...}`: "FILE:LINE
// (OP_NAME)", or "" when it does not say.
std::string SourceOf(const Instruction& instruction);

}  // namespace anvil::hlo
