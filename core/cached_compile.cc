#include "core/cached_compile.h"

#include <cstdio>

#include "core/build_identity.h"

namespace anvil::core {
namespace {

// libanvil's own build: it canonicalises, so a program key made by one build
// must not find what another stored.
const std::string& CoreBuildIdentity() {
  static const std::string identity = BuildIdentityOf(reinterpret_cast<const void*>(&CoreBuildIdentity));
  return identity;
}

std::string SizedHash(std::string_view text) {
  return CompileCache::Hash(text) + " " + std::to_string(text.size());
}

}  // namespace

std::unique_ptr<CachedCompile> CachedCompile::Start(anvil_client& client, anvil_device& device,
                                                    std::string_view format, std::string_view program,
                                                    const std::string& options) {
  if (!client.cache || !device.plugin->CanSerialize()) return nullptr;
  std::unique_ptr<CachedCompile> c(new CachedCompile(client, device));
  Plugin& plugin = *device.plugin;
  c->base_key_ = "anvil compile cache key 1\ncore " + CoreBuildIdentity() + "\nplugin " + plugin.name() + " " +
                 plugin.version() + " " + plugin.build_identity() + "\ndevice " + device.kind + " " + device.name +
                 "\noptions " + SizedHash(options) + "\n";
  c->program_key_ = c->base_key_ + "format " + std::string(format) + "\nprogram " + SizedHash(program) + "\n";
  return c;
}

std::string CachedCompile::CanonicalKey(const std::string& canonical_text) const {
  return base_key_ + "canonical " + SizedHash(canonical_text) + "\n";
}

std::shared_ptr<ExecutableState> CachedCompile::LoadByProgram() {
  TraceSpan span(client_.tracer.get(), "cache lookup", "compile");
  std::optional<std::string> canonical_key = client_.cache->LoadReference(program_key_);
  return canonical_key ? Load(*canonical_key, nullptr, "program") : nullptr;
}

std::shared_ptr<ExecutableState> CachedCompile::LoadByCanonicalText(const std::string& canonical_text) {
  TraceSpan span(client_.tracer.get(), "cache lookup", "compile");
  canonical_key_ = CanonicalKey(canonical_text);
  auto state = Load(canonical_key_, &canonical_text, "canonical text");
  if (state) client_.cache->StoreReference(program_key_, canonical_key_);
  return state;
}

std::shared_ptr<ExecutableState> CachedCompile::Load(const std::string& canonical_key,
                                                     const std::string* canonical_text, const char* found_by) {
  Tracer* tracer = client_.tracer.get();
  const uint64_t begin = tracer ? Tracer::NowNs() : 0;
  std::optional<CachedExecutable> entry = client_.cache->Load(canonical_key);
  if (!entry || (canonical_text && entry->canonical_text != *canonical_text)) return nullptr;
  auto executable = device_.plugin->Deserialize(device_.index_in_plugin, entry->plugin_bytes);
  if (!executable.ok()) {
    std::fprintf(stderr, "anvil: compile cache: %s cannot load an executable it stored (%s); compiling instead\n",
                 device_.plugin->name().c_str(), executable.status().message().c_str());
    return nullptr;
  }
  auto state = std::make_shared<ExecutableState>();
  state->client = &client_;
  state->device = &device_;
  state->executable = *executable;
  state->parameters = std::move(entry->parameters);
  state->results = std::move(entry->results);
  state->donors = std::move(entry->donors);
  state->name = std::move(entry->name);
  state->SetCanonicalTextIn(std::move(entry->file), entry->canonical_text);
  // Only a hit is a span: a miss is the compile's own spans.
  if (tracer) tracer->Complete("cache hit", "compile", begin, Tracer::NowNs(), std::string("\"found by\":\"") + found_by + "\"");
  return state;
}

void CachedCompile::Store(const ExecutableState& state) {
  TraceSpan span(client_.tracer.get(), "cache store", "compile");
  auto bytes = device_.plugin->Serialize(state.executable);
  if (!bytes.ok()) return;  // this executable is simply not cached
  const std::string& canonical_text = state.CanonicalText();
  CachedExecutable entry{state.name, state.parameters, state.results, state.donors, canonical_text, *bytes, nullptr};
  if (canonical_key_.empty()) canonical_key_ = CanonicalKey(canonical_text);
  if (client_.cache->Store(canonical_key_, entry)) client_.cache->StoreReference(program_key_, canonical_key_);
}

}  // namespace anvil::core
