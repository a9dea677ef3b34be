// The persistent compile cache: executables of plugins that can serialise
// them, kept in a directory and reused across processes.
//
// Two kinds of file, each written whole under a temporary name and renamed
// into place (so a reader sees an old file or a new one, never half of one,
// and two processes storing the same entry at once both succeed):
//
// - `<K>.exe`, K the hash of the *canonical* key: the key's full text, what
//   core needs to rebuild the executable's handle (parameters, results,
//   donors, canonical text) and the plugin's bytes. Programs that differ only
//   in how they were written share it.
// - `<P>.ref`, P the hash of the *program* key (the exact bytes a caller
//   compiled, their format, and everything in the canonical key but the
//   text): the K it canonicalised to. A compile that finds it skips parsing
//   and canonicalisation as well as the plugin's compile.
//
// Both keys hold libanvil's and the plugin's build identities, the plugin's
// name and version, the device's kind and name and the compile options. Each
// file ends in a checksum of what precedes it, and its key text is compared
// on load, so a truncated or corrupt file, or a hash collision, is a miss
// (with a warning), never a wrong executable. Every failure to read or write
// costs only the cached work: the caller compiles as if there were no cache.
//
// The directory is kept under a size limit (ANVIL_CACHE_MAX_BYTES, 4 GiB by
// default) by evicting the entries used longest ago: a hit renews an
// entry's modification time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/shape.h"

namespace anvil::core {

// A cache file's bytes, read whole into memory no one has written yet:
// an entry is about as large as its program's text, and neither zeroing it
// first nor copying parts of it out is free on a warm load.
struct FileBytes {
  std::unique_ptr<char[]> data;
  size_t size = 0;
  std::string_view view() const { return {data.get(), size}; }
};

// What a cached executable brings besides the plugin's bytes.
struct CachedExecutable {
  std::string name;
  std::vector<hlo::Shape> parameters, results;
  std::vector<uint8_t> donors;
  // A load's views point into `file`, which keeps them alive; a store's
  // into the caller's strings.
  std::string_view canonical_text;
  std::string_view plugin_bytes;
  std::shared_ptr<const FileBytes> file;
};

class CompileCache {
 public:
  // The cache in `dir`, created if missing; null (with a warning) if it
  // cannot be created. Its entries (.exe files) are kept under `max_bytes`
  // in all (0: no limit) by evicting the least recently used after each
  // store.
  static std::unique_ptr<CompileCache> Open(const std::string& dir, uint64_t max_bytes = kDefaultMaxBytes);
  static constexpr uint64_t kDefaultMaxBytes = uint64_t{4} << 30;

  // A 128-bit hash of `text`, as 32 hex digits (XXH3).
  static std::string Hash(std::string_view text);

  // The entry stored under `key` for exactly `key_text`, if a whole one is
  // there.
  std::optional<CachedExecutable> Load(const std::string& key_text);
  // False (after a warning) if it could not be written.
  bool Store(const std::string& key_text, const CachedExecutable& entry);
  // The canonical key text a program key text was stored with.
  std::optional<std::string> LoadReference(const std::string& program_key_text);
  void StoreReference(const std::string& program_key_text, const std::string& canonical_key_text);

  const std::string& dir() const { return dir_; }

 private:
  CompileCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  // Removes the least recently used entries (a hit renews an entry's time)
  // until the directory is under its limit again, never `keep`; and
  // temporary files an interrupted writer left over an hour ago.
  void Trim(const std::string& keep);
  std::shared_ptr<const FileBytes> ReadFile(const std::string& path);
  bool WriteFile(const std::string& path, const std::string& bytes);
  // Warns on stderr, once per kind of failure, so a read-only directory
  // does not repeat itself on every compile.
  void Warn(std::atomic<bool>& once, const std::string& message);

  std::string dir_;
  uint64_t max_bytes_;
  std::atomic<bool> warned_read_{false}, warned_write_{false};
};

}  // namespace anvil::core
