#include "plugins/cpu/conv_layouts.h"

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "plugins/common/byte_stream.h"
#include "plugins/cpu/conv_problem.h"

namespace anvil::cpu {
namespace {

using plugin::PutBytes;
using plugin::PutValue;

void PutInts(std::string& out, const std::vector<int64_t>& values) {
  PutValue<uint64_t>(out, values.size());
  for (int64_t v : values) PutValue(out, v);
}

// What makes a book valid here: choices made by another oneDNN, or by this
// one for another instruction set, may name implementations or layouts this
// process does not have.
// Scratchpad sizes also depend on the threads oneDNN would use.
struct Provenance {
  uint32_t major, minor, patch, isa, desc_bytes, threads;
  bool operator==(const Provenance&) const = default;
};

Provenance ThisProcess() {
  const dnnl_version_t* v = dnnl_version();
  return Provenance{static_cast<uint32_t>(v->major), static_cast<uint32_t>(v->minor), static_cast<uint32_t>(v->patch),
                    static_cast<uint32_t>(dnnl_get_effective_cpu_isa()),
                    static_cast<uint32_t>(sizeof(dnnl_memory_desc_t)), static_cast<uint32_t>(omp_get_max_threads())};
}

// Errors name the bytes and the offset.
struct Reader : plugin::ByteReader {
  Reader(std::string_view bytes, const std::string& what) : ByteReader(bytes), what(what) {}
  hlo::Status Bad(const char* why) const {
    return hlo::InvalidArgument(what + ": byte " + std::to_string(offset()) + ": " + why);
  }
  const std::string& what;
};

}  // namespace

std::optional<ConvLayout> ConvLayoutBook::Find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = layouts_.find(key);
  if (it == layouts_.end()) return std::nullopt;
  return it->second;
}

void ConvLayoutBook::Record(const std::string& key, ConvLayout layout) {
  std::lock_guard<std::mutex> lock(mutex_);
  layouts_.insert_or_assign(key, std::move(layout));
}

size_t ConvLayoutBook::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return layouts_.size();
}

std::string ConvLayoutBook::Write() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  PutValue(out, ThisProcess());
  PutValue<uint64_t>(out, layouts_.size());
  for (const auto& [key, layout] : layouts_) {
    PutBytes(out, key);
    for (const std::string& port : layout.ports) PutBytes(out, port);
    PutBytes(out, layout.scratchpad);
    PutBytes(out, layout.impl);
  }
  return out;
}

hlo::StatusOr<std::unique_ptr<ConvLayoutBook>> ConvLayoutBook::Read(std::string_view bytes, const std::string& what) {
  Reader r(bytes, what);
  auto book = std::make_unique<ConvLayoutBook>();
  Provenance made{};
  uint64_t count = 0;
  if (!r.Get(&made) || !r.Get(&count)) return r.Bad("truncated convolution layouts");
  const Provenance here = ThisProcess();
  for (uint64_t k = 0; k < count; ++k) {
    std::string key;
    ConvLayout layout;
    bool ok = r.GetBytes(&key);
    for (std::string& port : layout.ports) ok = ok && r.GetBytes(&port);
    ok = ok && r.GetBytes(&layout.scratchpad) && r.GetBytes(&layout.impl);
    if (!ok) return r.Bad("truncated convolution layout");
    for (const std::string& port : layout.ports) {
      if (port.size() != made.desc_bytes) return r.Bad("a convolution layout of the wrong size");
    }
    if (layout.scratchpad.size() != made.desc_bytes) return r.Bad("a convolution scratchpad of the wrong size");
    book->layouts_.emplace(std::move(key), std::move(layout));
  }
  if (!r.done()) return r.Bad("bytes after the convolution layouts");
  if (!(made == here)) book->layouts_.clear();  // well formed, but not for this process: describe again
  return book;
}

std::string ConvProblemKey(const ConvProblem& p) {
  std::string key;
  PutValue<uint8_t>(key, static_cast<uint8_t>(p.kind));
  for (const ConvOperand* o : {&p.src, &p.weights, &p.dst}) {
    PutInts(key, o->dims);
    PutInts(key, o->strides);
  }
  for (const std::vector<int64_t>* v : {&p.strides, &p.dilates, &p.pad_l, &p.pad_r}) PutInts(key, *v);
  PutValue<uint64_t>(key, p.flip.size());
  for (bool f : p.flip) PutValue<uint8_t>(key, f);
  return key;
}

}  // namespace anvil::cpu
