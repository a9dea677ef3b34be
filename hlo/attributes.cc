#include "hlo/attributes.h"

#include <charconv>

namespace anvil::hlo {
namespace {

// Reads the integers of `text` in order, whatever punctuation separates them.
StatusOr<std::vector<int64_t>> AllInts(std::string_view text) {
  std::vector<int64_t> out;
  size_t p = 0;
  while (p < text.size()) {
    char ch = text[p];
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
      int64_t v = 0;
      auto r = std::from_chars(text.data() + p, text.data() + text.size(), v);
      if (r.ec != std::errc()) return InvalidArgument("bad integer in '" + std::string(text) + "'");
      out.push_back(v);
      p = static_cast<size_t>(r.ptr - text.data());
    } else if (ch == '{' || ch == '}' || ch == ',' || ch == ' ' || ch == '[' || ch == ']') {
      ++p;
    } else {
      return InvalidArgument("unexpected '" + std::string(1, ch) + "' in integer list '" + std::string(text) + "'");
    }
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t p = text.find(sep, start);
    parts.push_back(text.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) break;
    start = p + 1;
  }
  return parts;
}

}  // namespace

std::string FormatIntList(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  return out + "}";
}

StatusOr<std::vector<int64_t>> ParseIntList(std::string_view text) { return AllInts(text); }

std::string FormatIntMatrix(const std::vector<std::vector<int64_t>>& rows) {
  std::string out = "{";
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i) out += ',';
    out += FormatIntList(rows[i]);
  }
  return out + "}";
}

std::string FormatSlice(const std::vector<SliceDim>& dims) {
  std::string out = "{";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ", ";
    out += "[" + std::to_string(dims[i].start) + ":" + std::to_string(dims[i].limit);
    if (dims[i].stride != 1) out += ":" + std::to_string(dims[i].stride);
    out += "]";
  }
  return out + "}";
}

StatusOr<std::vector<SliceDim>> ParseSlice(std::string_view text) {
  std::vector<SliceDim> dims;
  size_t p = 0;
  while ((p = text.find('[', p)) != std::string_view::npos) {
    size_t end = text.find(']', p);
    if (end == std::string_view::npos) return InvalidArgument("unterminated slice bound in '" + std::string(text) + "'");
    std::string_view body = text.substr(p + 1, end - p - 1);
    auto parts = Split(body, ':');
    if (parts.size() < 2 || parts.size() > 3) return InvalidArgument("bad slice bound '[" + std::string(body) + "]'");
    SliceDim d;
    int64_t* fields[] = {&d.start, &d.limit, &d.stride};
    for (size_t i = 0; i < parts.size(); ++i) {
      auto r = std::from_chars(parts[i].data(), parts[i].data() + parts[i].size(), *fields[i]);
      if (r.ec != std::errc()) return InvalidArgument("bad slice bound '[" + std::string(body) + "]'");
    }
    dims.push_back(d);
    p = end + 1;
  }
  return dims;
}

std::string FormatWindow(const std::vector<WindowDim>& dims) {
  auto join = [&](auto field) {
    std::string out;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i) out += 'x';
      out += field(dims[i]);
    }
    return out;
  };
  auto any = [&](auto pred) {
    for (const WindowDim& d : dims) {
      if (pred(d)) return true;
    }
    return false;
  };
  std::string out = "{size=" + join([](const WindowDim& d) { return std::to_string(d.size); });
  if (any([](const WindowDim& d) { return d.stride != 1; })) {
    out += " stride=" + join([](const WindowDim& d) { return std::to_string(d.stride); });
  }
  if (any([](const WindowDim& d) { return d.pad_low != 0 || d.pad_high != 0; })) {
    out += " pad=" + join([](const WindowDim& d) { return std::to_string(d.pad_low) + "_" + std::to_string(d.pad_high); });
  }
  if (any([](const WindowDim& d) { return d.base_dilation != 1; })) {
    out += " lhs_dilate=" + join([](const WindowDim& d) { return std::to_string(d.base_dilation); });
  }
  if (any([](const WindowDim& d) { return d.window_dilation != 1; })) {
    out += " rhs_dilate=" + join([](const WindowDim& d) { return std::to_string(d.window_dilation); });
  }
  if (any([](const WindowDim& d) { return d.reversal; })) {
    out += " rhs_reversal=" + join([](const WindowDim& d) { return std::string(d.reversal ? "1" : "0"); });
  }
  return out + "}";
}

StatusOr<std::vector<WindowDim>> ParseWindow(std::string_view text) {
  if (text.size() >= 2 && text.front() == '{' && text.back() == '}') text = text.substr(1, text.size() - 2);
  std::vector<WindowDim> dims;
  bool have_size = false;
  for (std::string_view item : Split(text, ' ')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) return InvalidArgument("bad window field '" + std::string(item) + "'");
    std::string_view key = item.substr(0, eq);
    auto values = Split(item.substr(eq + 1), 'x');
    if (key == "size") {
      dims.assign(values.size(), WindowDim{});
      have_size = true;
    } else if (!have_size) {
      return InvalidArgument("window must start with size=: '" + std::string(text) + "'");
    }
    if (values.size() != dims.size()) {
      return InvalidArgument("window field '" + std::string(key) + "' has " + std::to_string(values.size()) +
                             " entries but size has " + std::to_string(dims.size()));
    }
    for (size_t i = 0; i < values.size(); ++i) {
      std::string_view v = values[i];
      auto parse = [&](std::string_view s, int64_t& out) -> bool {
        auto r = std::from_chars(s.data(), s.data() + s.size(), out);
        return r.ec == std::errc() && r.ptr == s.data() + s.size();
      };
      bool ok = true;
      if (key == "size") ok = parse(v, dims[i].size);
      else if (key == "stride") ok = parse(v, dims[i].stride);
      else if (key == "lhs_dilate") ok = parse(v, dims[i].base_dilation);
      else if (key == "rhs_dilate") ok = parse(v, dims[i].window_dilation);
      else if (key == "rhs_reversal") {
        int64_t r = 0;
        ok = parse(v, r);
        dims[i].reversal = r != 0;
      } else if (key == "pad") {
        auto lh = Split(v, '_');
        ok = lh.size() == 2 && parse(lh[0], dims[i].pad_low) && parse(lh[1], dims[i].pad_high);
      } else {
        return InvalidArgument("unknown window field '" + std::string(key) + "'");
      }
      if (!ok) return InvalidArgument("bad window value '" + std::string(item) + "'");
    }
  }
  return dims;
}

std::string FormatPadding(const std::vector<PadDim>& dims) {
  bool interior = false;
  for (const PadDim& d : dims) interior |= d.interior != 0;
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(dims[i].low) + "_" + std::to_string(dims[i].high);
    if (interior) out += "_" + std::to_string(dims[i].interior);
  }
  return out;
}

StatusOr<std::vector<PadDim>> ParsePadding(std::string_view text) {
  std::vector<PadDim> dims;
  if (text.empty()) return dims;
  for (std::string_view item : Split(text, 'x')) {
    auto parts = Split(item, '_');
    if (parts.size() < 2 || parts.size() > 3) return InvalidArgument("bad padding '" + std::string(item) + "'");
    PadDim d;
    int64_t* fields[] = {&d.low, &d.high, &d.interior};
    for (size_t i = 0; i < parts.size(); ++i) {
      auto r = std::from_chars(parts[i].data(), parts[i].data() + parts[i].size(), *fields[i]);
      if (r.ec != std::errc() || r.ptr != parts[i].data() + parts[i].size()) {
        return InvalidArgument("bad padding '" + std::string(item) + "'");
      }
    }
    dims.push_back(d);
  }
  return dims;
}

StatusOr<ConvDimensionNumbers> ParseDimLabels(std::string_view text) {
  size_t underscore = text.find('_');
  size_t arrow = text.find("->");
  if (underscore == std::string_view::npos || arrow == std::string_view::npos || arrow < underscore) {
    return InvalidArgument("bad dim_labels '" + std::string(text) + "' (expected like b01f_01io->b01f)");
  }
  std::string_view input = text.substr(0, underscore);
  std::string_view kernel = text.substr(underscore + 1, arrow - underscore - 1);
  std::string_view output = text.substr(arrow + 2);
  ConvDimensionNumbers d;
  size_t spatial = input.size() >= 2 ? input.size() - 2 : 0;
  if (input.size() != kernel.size() || input.size() != output.size() || input.size() < 2) {
    return InvalidArgument("dim_labels '" + std::string(text) + "' parts differ in rank");
  }
  d.input_spatial.assign(spatial, -1);
  d.kernel_spatial.assign(spatial, -1);
  d.output_spatial.assign(spatial, -1);
  auto fill = [&](std::string_view labels, char a, char b, int64_t& da, int64_t& db,
                  std::vector<int64_t>& sp) -> bool {
    int seen_a = 0, seen_b = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
      char ch = labels[i];
      if (ch == a) {
        da = static_cast<int64_t>(i);
        ++seen_a;
      } else if (ch == b) {
        db = static_cast<int64_t>(i);
        ++seen_b;
      } else if (ch >= '0' && ch <= '9' && static_cast<size_t>(ch - '0') < sp.size() && sp[ch - '0'] == -1) {
        sp[ch - '0'] = static_cast<int64_t>(i);
      } else {
        return false;
      }
    }
    for (int64_t s : sp) {
      if (s < 0) return false;
    }
    return seen_a == 1 && seen_b == 1;
  };
  if (!fill(input, 'b', 'f', d.input_batch, d.input_feature, d.input_spatial) ||
      !fill(kernel, 'i', 'o', d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial) ||
      !fill(output, 'b', 'f', d.output_batch, d.output_feature, d.output_spatial)) {
    return InvalidArgument("bad dim_labels '" + std::string(text) + "'");
  }
  return d;
}

std::string FormatDimLabels(const ConvDimensionNumbers& d, int rank) {
  auto labels = [&](int64_t a, char ca, int64_t b, char cb, const std::vector<int64_t>& sp) {
    std::string s(static_cast<size_t>(rank), '?');
    if (a >= 0 && a < rank) s[a] = ca;
    if (b >= 0 && b < rank) s[b] = cb;
    for (size_t i = 0; i < sp.size(); ++i) {
      if (sp[i] >= 0 && sp[i] < rank) s[sp[i]] = static_cast<char>('0' + i);
    }
    return s;
  };
  return labels(d.input_batch, 'b', d.input_feature, 'f', d.input_spatial) + "_" +
         labels(d.kernel_input_feature, 'i', d.kernel_output_feature, 'o', d.kernel_spatial) + "->" +
         labels(d.output_batch, 'b', d.output_feature, 'f', d.output_spatial);
}

StatusOr<std::vector<int64_t>> IntListAttribute(const Instruction& instruction, std::string_view key,
                                                std::vector<int64_t> fallback, bool required) {
  const Attribute* a = instruction.FindAttribute(key);
  if (!a) {
    if (required) return InvalidArgument("'" + instruction.name + "' needs the attribute " + std::string(key));
    return fallback;
  }
  auto values = ParseIntList(a->value);
  if (!values.ok()) {
    return InvalidArgument("attribute " + std::string(key) + " of '" + instruction.name + "': " +
                           values.status().message());
  }
  return values;
}

StatusOr<int64_t> IntAttribute(const Instruction& instruction, std::string_view key, std::optional<int64_t> fallback) {
  const Attribute* a = instruction.FindAttribute(key);
  if (!a) {
    if (fallback) return *fallback;
    return InvalidArgument("'" + instruction.name + "' needs the attribute " + std::string(key));
  }
  int64_t v = 0;
  auto r = std::from_chars(a->value.data(), a->value.data() + a->value.size(), v);
  if (r.ec != std::errc() || r.ptr != a->value.data() + a->value.size()) {
    return InvalidArgument("attribute " + std::string(key) + " of '" + instruction.name + "' must be an integer, got " +
                           a->value);
  }
  return v;
}

bool BoolAttribute(const Instruction& instruction, std::string_view key, bool fallback) {
  const Attribute* a = instruction.FindAttribute(key);
  if (!a) return fallback;
  return a->value == "true" || a->value == "1";
}

std::string StringAttribute(const Instruction& instruction, std::string_view key) {
  const Attribute* a = instruction.FindAttribute(key);
  if (!a) return "";
  std::string v = a->value;
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

namespace {

// The value of `key=` inside a metadata attribute: a quoted string (quotes
// removed, escapes undone) or a bare word.
std::string MetadataField(std::string_view metadata, std::string_view key) {
  const std::string needle = std::string(key) + "=";
  size_t at = 0;
  while ((at = metadata.find(needle, at)) != std::string_view::npos) {
    if (at == 0 || metadata[at - 1] == '{' || metadata[at - 1] == ' ' || metadata[at - 1] == ',') break;
    at += needle.size();
  }
  if (at == std::string_view::npos) return "";
  size_t i = at + needle.size();
  std::string out;
  if (i < metadata.size() && metadata[i] == '"') {
    for (++i; i < metadata.size() && metadata[i] != '"'; ++i) {
      if (metadata[i] == '\\' && i + 1 < metadata.size()) ++i;
      out += metadata[i];
    }
    return out;
  }
  while (i < metadata.size() && metadata[i] != ' ' && metadata[i] != ',' && metadata[i] != '}') out += metadata[i++];
  return out;
}

}  // namespace

std::string SourceOf(const Instruction& instruction) {
  const Attribute* metadata = instruction.FindAttribute("metadata");
  if (metadata == nullptr) return "";
  std::string file = MetadataField(metadata->value, "source_file");
  std::string line = MetadataField(metadata->value, "source_line");
  std::string name = MetadataField(metadata->value, "op_name");
  std::string where = file.empty() ? "" : file + (line.empty() ? "" : ":" + line);
  if (name.empty()) return where;
  return where.empty() ? name : where + " (" + name + ")";
}

}  // namespace anvil::hlo
