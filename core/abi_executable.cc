// Compilation and execution of anvil.h.
#include <algorithm>
#include <cstring>
#include <functional>

#include "core/abi_util.h"
#include "core/cached_compile.h"
#include "core/donors.h"
#include "core/element_types.h"
#include "core/runtime.h"
#include "hlo/canonicalize.h"
#include "hlo/printer.h"
#include "hlo/program_text.h"
#include "hlo/verifier.h"

using anvil::core::BufferState;
using anvil::core::DeviceMemory;
using anvil::core::Event;
using anvil::core::ExecutableState;
using anvil::core::Guard;
using anvil::core::IndexOutOfRange;
using anvil::core::Invalid;
using anvil::core::MakeError;
using anvil::core::Status;
using anvil::core::StatusCode;
using anvil::core::ToAbi;
using anvil::core::Tracer;
using anvil::core::TraceSpan;

namespace {

// Parses, verifies and canonicalises a program into the text plugins read,
// with spans on `client`'s tracer; `function` names the caller in messages.
anvil::hlo::StatusOr<std::unique_ptr<anvil::hlo::Module>> CanonicalModule(const anvil_client& client,
                                                                          const anvil_compile_args& args,
                                                                          const char* function) {
  auto format = anvil::hlo::ProgramFormatFromName(args.format);
  if (!format) {
    return MakeError(StatusCode::kInvalidArgument, std::string(function) + ": unknown program format '" +
                                                       std::string(args.format) + "' (expected hlo, stablehlo or stablehlo-bytecode)");
  }
  Tracer* tracer = client.tracer.get();
  std::string_view text(args.program, args.program_size);
  std::vector<std::unique_ptr<anvil::hlo::Module>> modules;
  {
    TraceSpan span(tracer, "parse", "compile");
    if (span.on()) span.SetArgs("\"format\":\"" + std::string(args.format) + "\",\"bytes\":" + std::to_string(text.size()));
    ANVIL_ASSIGN_OR_RETURN(modules, anvil::hlo::ParseProgramText(text, *format, {"program", 1}));
  }
  if (modules.size() != 1) {
    return MakeError(StatusCode::kInvalidArgument,
                     "the program holds " + std::to_string(modules.size()) + " modules; compile one at a time");
  }
  std::unique_ptr<anvil::hlo::Module> module = std::move(modules[0]);
  {
    TraceSpan span(tracer, "verify", "compile");
    ANVIL_RETURN_IF_ERROR(anvil::hlo::Verify(*module));
  }
  {
    TraceSpan span(tracer, "canonicalize", "compile");
    ANVIL_RETURN_IF_ERROR(anvil::hlo::Canonicalize(*module));
  }
  return module;
}

// The entry's parameters and results as executables have them (tuples
// flattened into their array leaves), or UNIMPLEMENTED for a parameter or
// result that is no array.
anvil::hlo::Status EntryInterface(const anvil::hlo::Module& module, std::vector<anvil::hlo::Shape>& parameters,
                                  std::vector<anvil::hlo::Shape>& results) {
  const anvil::hlo::Computation& entry = *module.entry;
  for (const auto* p : entry.parameters) {
    if (!p->shape.IsArray()) {
      return MakeError(StatusCode::kUnimplemented, "parameter " + std::to_string(p->parameter_number) + " has shape " +
                                                       p->shape.ToString(false) +
                                                       "; only array parameters are supported");
    }
    parameters.push_back(p->shape);
  }
  // Results: the root's array leaves, tuples flattened in order.
  std::function<void(const anvil::hlo::Shape&)> leaves = [&](const anvil::hlo::Shape& s) {
    if (s.IsTuple()) {
      for (const auto& e : s.tuple_elements()) leaves(e);
    } else {
      results.push_back(s);
    }
  };
  leaves(entry.ResultShape());
  for (const auto& r : results) {
    if (!r.IsArray()) {
      return MakeError(StatusCode::kUnimplemented, "result shape " + r.ToString(false) + " is not an array");
    }
  }
  return anvil::hlo::OkStatus();
}

anvil_status* ShapeAt(const char* function, const std::vector<anvil::hlo::Shape>& shapes, size_t index,
                      const char* what, int32_t* out_type, const int64_t** out_dims, size_t* out_num_dims) {
  ANVIL_CHECK_NOT_NULL(function, out_type);
  ANVIL_CHECK_NOT_NULL(function, out_dims);
  ANVIL_CHECK_NOT_NULL(function, out_num_dims);
  if (index >= shapes.size()) {
    return IndexOutOfRange(function, what, index, shapes.size());
  }
  *out_type = anvil::core::ToAbi(shapes[index].element_type());
  *out_dims = shapes[index].dims().data();
  *out_num_dims = shapes[index].dims().size();
  return nullptr;
}

// Everything an execution carries from its start to its completion.
struct Execution {
  // First, so it is destroyed last: the execution's memory is released before
  // the client learns the work is over.
  std::shared_ptr<anvil::core::WorkToken> token;
  std::shared_ptr<ExecutableState> executable;
  std::vector<std::shared_ptr<BufferState>> inputs;
  std::vector<uint8_t> donate;
  std::vector<std::shared_ptr<BufferState>> outputs;
  std::shared_ptr<Event> done;
  // The uses this execution registered on the inputs it reads without
  // donating; a later donation of one of them waits for them.
  std::vector<anvil::core::UseRelease> uses;

  void Fail(const Status& error) {
    uses.clear();
    for (auto& o : outputs) o->defined->Set(error);
    done->Set(error);
  }
};

// Runs on the client's arena once every input is defined.
void Run(const std::shared_ptr<Execution>& e) {
  anvil::core::Plugin* plugin = e->executable->device->plugin;
  std::vector<std::shared_ptr<DeviceMemory>> held;
  std::vector<anvil_plugin_memory*> inputs;
  std::vector<uint8_t> donated(e->inputs.size(), 0);
  for (size_t i = 0; i < e->inputs.size(); ++i) {
    BufferState& in = *e->inputs[i];
    std::shared_ptr<DeviceMemory> memory;
    {
      std::lock_guard<std::mutex> lock(in.mu);
      memory = in.memory;
      if (e->donate[i]) in.memory.reset();  // the handle no longer owns it
    }
    if (!memory) return e->Fail(MakeError(StatusCode::kFailedPrecondition, "input " + std::to_string(i) + " has no memory"));
    // Hand the memory over only when nothing else still reads it.
    if (e->donate[i] && memory.use_count() == 1 && !memory->borrowed) {
      donated[i] = 1;
      inputs.push_back(memory->memory);
      memory->memory = nullptr;  // the plugin owns it now
    } else {
      inputs.push_back(memory->memory);
      held.push_back(std::move(memory));
    }
  }
  auto outputs = std::make_shared<std::vector<anvil_plugin_memory*>>(e->outputs.size(), nullptr);
  TraceSpan span(e->executable->client->tracer.get(), "plugin execute", "execute");
  plugin->Execute(e->executable->executable, inputs, donated, *outputs,
                  [e, outputs, held = std::move(held), plugin](Status s) mutable {
                    // The inputs are read: let go of them before anyone
                    // learns of the completion, then let waiting donations go.
                    held.clear();
                    e->uses.clear();
                    if (!s.ok()) {
                      for (anvil_plugin_memory* m : *outputs) plugin->Free(m);
                      return e->Fail(s);
                    }
                    for (size_t i = 0; i < e->outputs.size(); ++i) {
                      if (!(*outputs)[i]) {  // a plugin bug: free what it did make
                        for (anvil_plugin_memory* m : *outputs) plugin->Free(m);
                        return e->Fail(MakeError(StatusCode::kInternal,
                                                 plugin->name() + " produced no memory for output " + std::to_string(i)));
                      }
                    }
                    for (size_t i = 0; i < e->outputs.size(); ++i) {
                      std::lock_guard<std::mutex> lock(e->outputs[i]->mu);
                      e->outputs[i]->memory = std::make_shared<DeviceMemory>(plugin, (*outputs)[i]);
                    }
                    for (auto& o : e->outputs) o->defined->Set(anvil::hlo::OkStatus());
                    e->done->Set(anvil::hlo::OkStatus());
                  });
}

}  // namespace

extern "C" {

anvil_status* anvil_client_compile(anvil_client* client, const anvil_compile_args* args,
                                   anvil_executable** out_executable) {
  return Guard("anvil_client_compile", [&]() -> anvil_status* {
    ANVIL_CHECK_NOT_NULL("anvil_client_compile", client);
    ANVIL_CHECK_NOT_NULL("anvil_client_compile", out_executable);
    ANVIL_CHECK_ARGS("anvil_client_compile", args, ANVIL_COMPILE_ARGS_STRUCT_SIZE);
    ANVIL_CHECK_NOT_NULL("anvil_client_compile", args->device);
    ANVIL_CHECK_NOT_NULL("anvil_client_compile", args->format);
    if (!args->program && args->program_size > 0) return Invalid("anvil_client_compile: program is NULL");
    if (args->device->client != client) return Invalid("anvil_client_compile: the device belongs to another client");
    *out_executable = nullptr;
    TraceSpan compile_span(client->tracer.get(), "anvil_client_compile", "compile");
    const std::string options = args->options ? args->options : "";
    auto cached = anvil::core::CachedCompile::Start(*client, *args->device, args->format,
                                                    std::string_view(args->program, args->program_size), options);
    if (cached) {
      if (auto state = cached->LoadByProgram()) {
        *out_executable = new anvil_executable(std::move(state));
        return nullptr;
      }
    }
    auto module = CanonicalModule(*client, *args, "anvil_client_compile");
    if (!module.ok()) return ToAbi(module.status());
    auto state = std::make_shared<ExecutableState>();
    state->client = client;
    state->device = args->device;
    if (Status s = EntryInterface(**module, state->parameters, state->results); !s.ok()) return ToAbi(s);
    state->donors = anvil::core::DonorParameters(**module, state->parameters.size());
    state->name = (*module)->name;
    if (compile_span.on()) {
      std::string name_arg = "\"module\":\"";
      anvil::core::AppendJsonEscaped(name_arg, state->name);
      compile_span.SetArgs(name_arg + "\",\"plugin\":\"" + args->device->plugin->name() + "\"");
    }
    {
      TraceSpan span(client->tracer.get(), "print canonical text", "compile");
      state->SetCanonicalText(anvil::hlo::Print(**module));
    }
    if (cached) {
      if (auto hit = cached->LoadByCanonicalText(state->CanonicalText())) {
        *out_executable = new anvil_executable(std::move(hit));
        return nullptr;
      }
    }
    anvil::hlo::StatusOr<anvil_plugin_executable*> compiled = nullptr;
    {
      TraceSpan span(client->tracer.get(), "plugin compile", "compile");
      if (span.on()) span.SetArgs("\"plugin\":\"" + args->device->plugin->name() + "\"");
      compiled = args->device->plugin->Compile(args->device->index_in_plugin, state->CanonicalText(), options);
    }
    if (!compiled.ok()) return ToAbi(compiled.status());
    state->executable = *compiled;
    if (cached) cached->Store(*state);
    *out_executable = new anvil_executable(state);
    return nullptr;
  });
}

anvil_status* anvil_client_compile_for_target(anvil_client* client, size_t index, const anvil_compile_args* args) {
  return Guard("anvil_client_compile_for_target", [&]() -> anvil_status* {
    ANVIL_CHECK_NOT_NULL("anvil_client_compile_for_target", client);
    ANVIL_CHECK_ARGS("anvil_client_compile_for_target", args, ANVIL_COMPILE_ARGS_STRUCT_SIZE);
    if (args->device) {
      return Invalid("anvil_client_compile_for_target: args->device must be NULL: a compile-only target has no device");
    }
    ANVIL_CHECK_NOT_NULL("anvil_client_compile_for_target", args->format);
    if (!args->program && args->program_size > 0) return Invalid("anvil_client_compile_for_target: program is NULL");
    const anvil::core::CompileTarget* target = nullptr;
    {
      std::lock_guard<std::mutex> lock(client->mu);
      if (index >= client->targets.size()) {
        return IndexOutOfRange("anvil_client_compile_for_target", "target", index, client->targets.size());
      }
      target = client->targets[index].get();  // entries are never removed
    }
    TraceSpan compile_span(client->tracer.get(), "anvil_client_compile_for_target", "compile");
    const std::string options = args->options ? args->options : "";
    auto module = CanonicalModule(*client, *args, "anvil_client_compile_for_target");
    if (!module.ok()) return ToAbi(module.status());
    // What anvil_client_compile would refuse does not compile here either.
    std::vector<anvil::hlo::Shape> parameters, results;
    if (Status s = EntryInterface(**module, parameters, results); !s.ok()) return ToAbi(s);
    if (compile_span.on()) {
      std::string name_arg = "\"module\":\"";
      anvil::core::AppendJsonEscaped(name_arg, (*module)->name);
      name_arg += "\",\"plugin\":\"" + target->plugin_name + "\",\"target\":\"";
      anvil::core::AppendJsonEscaped(name_arg, target->name);
      compile_span.SetArgs(name_arg + "\"");
    }
    std::string canonical_text;
    {
      TraceSpan span(client->tracer.get(), "print canonical text", "compile");
      canonical_text = anvil::hlo::Print(**module);
    }
    Status compiled = anvil::hlo::OkStatus();
    {
      TraceSpan span(client->tracer.get(), "plugin compile", "compile");
      if (span.on()) {
        std::string span_args = "\"plugin\":\"" + target->plugin_name + "\",\"target\":\"";
        anvil::core::AppendJsonEscaped(span_args, target->name);
        span.SetArgs(span_args + "\"");
      }
      compiled = target->plugin->TargetCompile(target->index_in_plugin, canonical_text, options);
    }
    return ToAbi(compiled);
  });
}

anvil_status* anvil_executable_parameter_count(anvil_executable* executable, size_t* out_count) {
  ANVIL_CHECK_NOT_NULL("anvil_executable_parameter_count", executable);
  ANVIL_CHECK_NOT_NULL("anvil_executable_parameter_count", out_count);
  *out_count = executable->state->parameters.size();
  return nullptr;
}

anvil_status* anvil_executable_parameter_shape(anvil_executable* executable, size_t index, int32_t* out_type, const int64_t** out_dims,
                                               size_t* out_num_dims) {
  ANVIL_CHECK_NOT_NULL("anvil_executable_parameter_shape", executable);
  return ShapeAt("anvil_executable_parameter_shape", executable->state->parameters, index, "parameter", out_type,
                 out_dims, out_num_dims);
}

anvil_status* anvil_executable_parameter_donor(anvil_executable* executable, size_t index, int32_t* out_donor) {
  ANVIL_CHECK_NOT_NULL("anvil_executable_parameter_donor", executable);
  ANVIL_CHECK_NOT_NULL("anvil_executable_parameter_donor", out_donor);
  const auto& donors = executable->state->donors;
  if (index >= donors.size()) {
    return Invalid("anvil_executable_parameter_donor: index " + std::to_string(index) + " is past the " +
                   std::to_string(donors.size()) + " parameters");
  }
  *out_donor = donors[index];
  return nullptr;
}

anvil_status* anvil_executable_result_count(anvil_executable* executable, size_t* out_count) {
  ANVIL_CHECK_NOT_NULL("anvil_executable_result_count", executable);
  ANVIL_CHECK_NOT_NULL("anvil_executable_result_count", out_count);
  *out_count = executable->state->results.size();
  return nullptr;
}

anvil_status* anvil_executable_result_shape(anvil_executable* executable, size_t index, int32_t* out_type, const int64_t** out_dims,
                                            size_t* out_num_dims) {
  ANVIL_CHECK_NOT_NULL("anvil_executable_result_shape", executable);
  return ShapeAt("anvil_executable_result_shape", executable->state->results, index, "result", out_type, out_dims,
                 out_num_dims);
}

anvil_status* anvil_executable_canonical_text(anvil_executable* executable, const char** out_text,
                                              size_t* out_size) {
  // Guarded: a text loaded from the compile cache is copied out here.
  return Guard("anvil_executable_canonical_text", [&]() -> anvil_status* {
    ANVIL_CHECK_NOT_NULL("anvil_executable_canonical_text", executable);
    ANVIL_CHECK_NOT_NULL("anvil_executable_canonical_text", out_text);
    ANVIL_CHECK_NOT_NULL("anvil_executable_canonical_text", out_size);
    const std::string& text = executable->state->CanonicalText();
    *out_text = text.c_str();
    *out_size = text.size();
    return nullptr;
  });
}

anvil_status* anvil_executable_serialize(anvil_executable* executable, char** out_bytes, size_t* out_size) {
  return Guard("anvil_executable_serialize", [&]() -> anvil_status* {
    ANVIL_CHECK_NOT_NULL("anvil_executable_serialize", executable);
    ANVIL_CHECK_NOT_NULL("anvil_executable_serialize", out_bytes);
    ANVIL_CHECK_NOT_NULL("anvil_executable_serialize", out_size);
    auto bytes = executable->state->device->plugin->Serialize(executable->state->executable);
    if (!bytes.ok()) return ToAbi(bytes.status());
    *out_bytes = new char[bytes->size()];
    std::memcpy(*out_bytes, bytes->data(), bytes->size());
    *out_size = bytes->size();
    return nullptr;
  });
}

void anvil_bytes_free(char* bytes) { delete[] bytes; }

anvil_status* anvil_executable_destroy(anvil_executable* executable) {
  delete executable;  // executions in flight hold the state
  return nullptr;
}

anvil_status* anvil_executable_execute(anvil_executable* executable, const anvil_execute_args* args,
                                       anvil_buffer** out_outputs, anvil_event** out_done) {
  return Guard("anvil_executable_execute", [&]() -> anvil_status* {
    ANVIL_CHECK_NOT_NULL("anvil_executable_execute", executable);
    ANVIL_CHECK_ARGS("anvil_executable_execute", args, ANVIL_EXECUTE_ARGS_STRUCT_SIZE);
    const ExecutableState& exe = *executable->state;
    if (exe.results.size() > 0) ANVIL_CHECK_NOT_NULL("anvil_executable_execute", out_outputs);
    if (args->num_inputs != exe.parameters.size()) {
      return Invalid("anvil_executable_execute: " + std::to_string(args->num_inputs) + " inputs given, the executable takes " +
                     std::to_string(exe.parameters.size()));
    }
    if (args->num_inputs > 0 && !args->inputs) return Invalid("anvil_executable_execute: inputs is NULL");
    auto e = std::make_shared<Execution>();
    e->token = std::make_shared<anvil::core::WorkToken>(exe.client->work);
    e->executable = executable->state;
    for (size_t i = 0; i < args->num_inputs; ++i) {
      anvil_buffer* b = args->inputs[i];
      if (!b) return Invalid("anvil_executable_execute: input " + std::to_string(i) + " is NULL");
      BufferState& in = *b->state;
      if (in.device != exe.device) {
        return Invalid("anvil_executable_execute: input " + std::to_string(i) + " is on device " + in.device->name +
                       " of " + in.device->plugin_name + ", the executable on " + exe.device->name + " of " +
                       exe.device->plugin_name);
      }
      if (!in.shape.Compatible(exe.parameters[i])) {
        return Invalid("anvil_executable_execute: input " + std::to_string(i) + " is " + in.shape.ToString(false) +
                       " but parameter " + std::to_string(i) + " is " + exe.parameters[i].ToString(false));
      }
      e->inputs.push_back(b->state);
      e->donate.push_back(args->donate && args->donate[i] ? 1 : 0);
    }
    // Donation is decided here, atomically for all inputs: a buffer donated
    // before, or donated and also passed again in this call, is refused.
    std::vector<std::unique_lock<std::mutex>> locks;
    std::vector<BufferState*> order;
    for (auto& in : e->inputs) {
      if (std::find(order.begin(), order.end(), in.get()) == order.end()) order.push_back(in.get());
    }
    std::sort(order.begin(), order.end());
    for (BufferState* s : order) locks.emplace_back(s->mu);
    for (size_t i = 0; i < e->inputs.size(); ++i) {
      if (e->inputs[i]->donated) {
        return ToAbi(MakeError(StatusCode::kFailedPrecondition,
                               "anvil_executable_execute: input " + std::to_string(i) +
                                   " was donated to an earlier execution and may not be used again"));
      }
      if (e->donate[i]) {
        for (size_t j = 0; j < e->inputs.size(); ++j) {
          if (j != i && e->inputs[j] == e->inputs[i]) {
            return Invalid("anvil_executable_execute: input " + std::to_string(i) +
                           " is donated but also passed as input " + std::to_string(j));
          }
        }
      }
    }
    // A donation waits for every use issued before it; a read registers a
    // use of its own, which a later donation then waits for.
    std::vector<std::shared_ptr<Event>> waits;
    for (size_t i = 0; i < e->inputs.size(); ++i) {
      BufferState& in = *e->inputs[i];
      if (e->donate[i]) {
        in.donated = true;
        waits.insert(waits.end(), in.pending_uses.begin(), in.pending_uses.end());
        in.pending_uses.clear();
      } else {
        e->uses.emplace_back(in.AddUseLocked());
      }
    }
    locks.clear();
    e->done = Event::Create();
    for (const auto& shape : exe.results) {
      auto out = std::make_shared<BufferState>();
      out->device = exe.device;
      out->shape = shape;
      out->bytes = anvil::core::ByteSize(shape);
      out->defined = Event::Create();
      e->outputs.push_back(out);
    }
    for (auto& in : e->inputs) waits.push_back(in->defined);
    // Inputs that are already defined (a caller's uploaded buffers, the
    // results of a finished step) let the plugin start on this thread: its
    // entry is asynchronous anyway, and a hop to a host thread first costs
    // more than a small program's whole run. Otherwise the execution starts
    // on a host thread once the last input is defined (never inside the
    // completion that defined it, so chains of executions do not recurse).
    const bool ready = std::all_of(waits.begin(), waits.end(), [](const auto& w) { return w->IsReady(); });
    anvil_client* client = exe.client;
    anvil::core::TraceUntil(*client, e->done, "execute", "execute", [&] {
      std::string args_json = "\"module\":\"";
      anvil::core::AppendJsonEscaped(args_json, exe.name);
      return args_json + "\",\"device\":\"" + exe.device->plugin_name + ":" +
             std::to_string(exe.device->index_in_plugin) + "\"";
    });
    anvil::core::AllOf(waits)->OnReady([e, client, ready](const Status& inputs_ready) {
      if (!inputs_ready.ok()) return e->Fail(inputs_ready);
      if (ready) return Run(e);
      client->Run([e] { Run(e); });
    });
    for (size_t i = 0; i < e->outputs.size(); ++i) out_outputs[i] = new anvil_buffer(e->outputs[i]);
    if (out_done) *out_done = new anvil_event{e->done};
    return nullptr;
  });
}

}  // extern "C"
