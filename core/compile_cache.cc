#include "core/compile_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <system_error>

#include "core/element_types.h"

#define XXH_INLINE_ALL  // header-only: the installed libanvil needs no libxxhash
#include <xxhash.h>

namespace anvil::core {
namespace {

constexpr char kEntryMagic[8] = {'A', 'N', 'V', 'I', 'L', 'E', 'X', 'E'};
constexpr char kReferenceMagic[8] = {'A', 'N', 'V', 'I', 'L', 'R', 'E', 'F'};
constexpr uint32_t kFormatVersion = 1;

// Little-endian fields, as this host lays them out (the key holds the
// builds, so a file is only ever read by the machine kind that wrote it).
class Writer {
 public:
  template <typename T>
  void Put(T value) {
    out_.append(reinterpret_cast<const char*>(&value), sizeof(value));
  }
  void PutBytes(std::string_view bytes) {
    Put<uint64_t>(bytes.size());
    out_.append(bytes);
  }
  void PutShape(const hlo::Shape& shape) {
    Put<int32_t>(ToAbi(shape.element_type()));
    Put<uint32_t>(static_cast<uint32_t>(shape.dims().size()));
    for (int64_t d : shape.dims()) Put<int64_t>(d);
    const auto& order = shape.layout().minor_to_major;
    Put<uint32_t>(static_cast<uint32_t>(order.size()));
    for (int64_t d : order) Put<int64_t>(d);
  }
  // Appends the checksum of everything so far and gives the bytes.
  std::string Finish() {
    Put<uint64_t>(XXH3_64bits(out_.data(), out_.size()));
    return std::move(out_);
  }

 private:
  std::string out_;
};

// A shape's fewest bytes: its type and its two counts (a scalar's).
constexpr size_t kLeastShapeBytes = 3 * 4;

// Reads what Writer wrote; any read past the end (or a count that cannot
// be) fails the reader, and the caller treats the file as corrupt.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  size_t offset() const { return at_; }
  template <typename T>
  T Get() {
    T value{};
    if (!Need(sizeof(T))) return value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  // A view of the next counted bytes, in the bytes being read.
  std::string_view GetBytes() {
    const uint64_t size = Get<uint64_t>();
    if (!Need(size)) return {};
    const std::string_view out = bytes_.substr(at_, size);
    at_ += size;
    return out;
  }
  hlo::Shape GetShape() {
    const hlo::ElementType type = FromAbi(Get<int32_t>());
    std::vector<int64_t> dims(Count(sizeof(int64_t)));
    for (int64_t& d : dims) d = Get<int64_t>();
    std::vector<int64_t> order(Count(sizeof(int64_t)));
    for (int64_t& d : order) d = Get<int64_t>();
    if (type == hlo::ElementType::kInvalid || !hlo::CheckArraySize(type, dims).ok() ||
        (!order.empty() && order.size() != dims.size())) {
      ok_ = false;
      return hlo::Shape();
    }
    hlo::Shape shape(type, std::move(dims));
    if (!order.empty()) shape.mutable_layout().minor_to_major = std::move(order);
    return shape;
  }
  // A count of items of `item_size` bytes each that fit in what is left.
  uint32_t Count(size_t item_size) {
    const uint32_t n = Get<uint32_t>();
    return Need(static_cast<uint64_t>(n) * item_size) ? n : 0;
  }
  // The whole file was read, and its checksum matches.
  bool Finish() {
    const size_t body = at_;
    const uint64_t sum = Get<uint64_t>();
    return ok_ && at_ == bytes_.size() && sum == XXH3_64bits(bytes_.data(), body);
  }

 private:
  bool Need(uint64_t n) {
    if (!ok_ || n > bytes_.size() - at_) ok_ = false;
    return ok_;
  }
  std::string_view bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

bool HasMagic(Reader& r, const char (&magic)[8]) {
  char got[8];
  for (char& c : got) c = r.Get<char>();
  return r.ok() && std::memcmp(got, magic, 8) == 0 && r.Get<uint32_t>() == kFormatVersion && r.ok();
}

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

std::unique_ptr<CompileCache> CompileCache::Open(const std::string& dir, uint64_t max_bytes) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir, error)) {
    std::fprintf(stderr, "anvil: compile cache %s cannot be used (%s); compiling without it\n", dir.c_str(),
                 error ? error.message().c_str() : "not a directory");
    return nullptr;
  }
  return std::unique_ptr<CompileCache>(new CompileCache(dir, max_bytes));
}

std::string CompileCache::Hash(std::string_view text) {
  const XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return hex;
}

void CompileCache::Warn(std::atomic<bool>& once, const std::string& message) {
  if (!once.exchange(true)) std::fprintf(stderr, "anvil: compile cache: %s\n", message.c_str());
}

std::shared_ptr<const FileBytes> CompileCache::ReadFile(const std::string& path) {
  struct File {
    int fd;
    ~File() {
      if (fd >= 0) close(fd);
    }
  } file{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    if (errno != ENOENT) Warn(warned_read_, "cannot read " + path + ": " + ErrnoText() + "; compiling instead");
    return nullptr;
  }
  // Sized once from the file's length. Entries are renamed into place whole
  // and never written again, so the length holds; a file cut short meanwhile
  // reads short and fails its checksum.
  struct stat st;
  if (fstat(file.fd, &st) != 0) {
    Warn(warned_read_, "cannot read " + path + ": " + ErrnoText() + "; compiling instead");
    return nullptr;
  }
  auto bytes = std::make_shared<FileBytes>();
  const size_t size = st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0;
  // A file larger than this machine can hold is a miss, not an allocation
  // failure of the compile.
  if (size > 0) bytes->data.reset(new (std::nothrow) char[size]);
  if (size > 0 && !bytes->data) {
    Warn(warned_read_, path + " is too large to read (" + std::to_string(size) + " bytes); compiling instead");
    return nullptr;
  }
  while (bytes->size < size) {
    const ssize_t n = read(file.fd, bytes->data.get() + bytes->size, size - bytes->size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Warn(warned_read_, "cannot read " + path + ": " + ErrnoText() + "; compiling instead");
      return nullptr;
    }
    if (n == 0) break;
    bytes->size += static_cast<size_t>(n);
  }
  return bytes;
}

// Under a name no other thread or process uses, then renamed over `path`.
bool CompileCache::WriteFile(const std::string& path, const std::string& bytes) {
  static std::atomic<uint64_t> counter{0};
  const std::string temporary = path + ".tmp." + std::to_string(getpid()) + "." +
                                std::to_string(static_cast<long>(syscall(SYS_gettid))) + "." +
                                std::to_string(counter++);
  FILE* f = std::fopen(temporary.c_str(), "wb");
  bool ok = f != nullptr;
  std::string why = ok ? "" : ErrnoText();
  if (ok) {
    ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    ok = (std::fclose(f) == 0) && ok;  // a full disk may only show at close
    if (!ok) why = ErrnoText();
    if (ok && std::rename(temporary.c_str(), path.c_str()) != 0) {
      ok = false;
      why = ErrnoText();
    }
  }
  if (!ok) {
    std::remove(temporary.c_str());
    Warn(warned_write_, "cannot write " + path + ": " + why + "; executables are not being cached");
  }
  return ok;
}

std::optional<CachedExecutable> CompileCache::Load(const std::string& key_text) {
  const std::string path = dir_ + "/" + Hash(key_text) + ".exe";
  std::shared_ptr<const FileBytes> bytes = ReadFile(path);
  if (!bytes) return std::nullopt;
  Reader r(bytes->view());
  CachedExecutable e;
  e.file = bytes;
  bool ok = HasMagic(r, kEntryMagic);
  if (ok) {
    const std::string_view stored_key = r.GetBytes();
    if (r.ok() && stored_key != key_text) return std::nullopt;  // another key with this hash: a miss
    ok = r.ok();
  }
  if (ok) {
    e.name = r.GetBytes();
    for (std::vector<hlo::Shape>* shapes : {&e.parameters, &e.results}) {
      const uint32_t n = r.Count(kLeastShapeBytes);
      shapes->reserve(n);
      for (uint32_t k = 0; k < n && r.ok(); ++k) shapes->push_back(r.GetShape());
    }
    e.donors.resize(r.Count(1));
    for (uint8_t& d : e.donors) d = r.Get<uint8_t>();
    e.canonical_text = r.GetBytes();
    e.plugin_bytes = r.GetBytes();
    ok = r.Finish() && e.donors.size() == e.parameters.size();
  }
  if (!ok) {
    Warn(warned_read_, path + " is truncated or corrupt (at byte " + std::to_string(r.offset()) +
                           "); compiling instead, and replacing it");
    return std::nullopt;
  }
  // Used now: the last to be evicted.
  std::error_code ignored;
  std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), ignored);
  return e;
}

void CompileCache::Trim(const std::string& keep) {
  namespace fs = std::filesystem;
  struct File {
    fs::path path;
    uint64_t bytes;
    fs::file_time_type used;
  };
  std::vector<File> entries;
  uint64_t total = 0;
  const auto now = fs::file_time_type::clock::now();
  std::error_code error;
  for (const auto& f : fs::directory_iterator(dir_, error)) {
    std::error_code e;
    const uint64_t bytes = f.file_size(e);
    const auto used = f.last_write_time(e);
    if (e) continue;  // gone meanwhile: another process trims too
    const std::string name = f.path().filename().string();
    if (name.find(".tmp.") != std::string::npos) {
      if (now - used > std::chrono::hours(1)) fs::remove(f.path(), e);
      continue;
    }
    if (f.path().extension() != ".exe") continue;  // references are small; one left dangling is a miss
    total += bytes;
    if (f.path().string() != keep) entries.push_back({f.path(), bytes, used});
  }
  if (max_bytes_ == 0 || total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const File& a, const File& b) { return a.used < b.used; });
  for (const File& f : entries) {
    if (total <= max_bytes_) break;
    std::error_code e;
    if (fs::remove(f.path, e)) total -= f.bytes;
  }
}

bool CompileCache::Store(const std::string& key_text, const CachedExecutable& e) {
  Writer w;
  for (char c : kEntryMagic) w.Put<char>(c);
  w.Put<uint32_t>(kFormatVersion);
  w.PutBytes(key_text);
  w.PutBytes(e.name);
  w.Put<uint32_t>(static_cast<uint32_t>(e.parameters.size()));
  for (const auto& s : e.parameters) w.PutShape(s);
  w.Put<uint32_t>(static_cast<uint32_t>(e.results.size()));
  for (const auto& s : e.results) w.PutShape(s);
  w.Put<uint32_t>(static_cast<uint32_t>(e.donors.size()));
  for (uint8_t d : e.donors) w.Put<uint8_t>(d);
  w.PutBytes(e.canonical_text);
  w.PutBytes(e.plugin_bytes);
  const std::string path = dir_ + "/" + Hash(key_text) + ".exe";
  if (!WriteFile(path, w.Finish())) return false;
  Trim(path);
  return true;
}

std::optional<std::string> CompileCache::LoadReference(const std::string& program_key_text) {
  const std::string path = dir_ + "/" + Hash(program_key_text) + ".ref";
  std::shared_ptr<const FileBytes> bytes = ReadFile(path);
  if (!bytes) return std::nullopt;
  Reader r(bytes->view());
  const bool headed = HasMagic(r, kReferenceMagic);
  const std::string_view stored_key = headed ? r.GetBytes() : "";
  if (headed && r.ok() && stored_key != program_key_text) return std::nullopt;
  std::string canonical(r.GetBytes());
  if (!headed || !r.Finish()) {
    Warn(warned_read_, path + " is truncated or corrupt; compiling instead, and replacing it");
    return std::nullopt;
  }
  return canonical;
}

void CompileCache::StoreReference(const std::string& program_key_text, const std::string& canonical_key_text) {
  Writer w;
  for (char c : kReferenceMagic) w.Put<char>(c);
  w.Put<uint32_t>(kFormatVersion);
  w.PutBytes(program_key_text);
  w.PutBytes(canonical_key_text);
  WriteFile(dir_ + "/" + Hash(program_key_text) + ".ref", w.Finish());
}

}  // namespace anvil::core
