// `anvil run FILE [--plugin cpu] [--input X]... [--random-inputs] [--output DIR]
//  [--iterations N]`: compiles the program's entry on the plugin's first
// device through the C ABI, runs it, prints (or saves as .npy) the results,
// and reports compile and execute time.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "anvil/anvil.h"
#include "conformance/inputs.h"
#include "hlo/hlo_parser.h"
#include "hlo/printer.h"
#include "hlo/program_text.h"
#include "tools/commands.h"
#include "tools/npy.h"

namespace anvil::tools {
namespace {

using Clock = std::chrono::steady_clock;

int Fail(const std::string& message) {
  std::fprintf(stderr, "anvil run: %s\n", message.c_str());
  return 1;
}

bool Check(anvil_status* s, std::string* message) {
  if (!s) return true;
  *message = anvil_status_get_message(s);
  anvil_status_free(s);
  return false;
}

// An input given on the command line: a .npy file, or a literal in HLO
// spelling (`{1, 2, 3}`, `2.5`) read against the parameter's shape.
hlo::StatusOr<hlo::Literal> ReadInput(const std::string& text, const hlo::Shape& shape) {
  if (text.size() > 4 && text.substr(text.size() - 4) == ".npy") {
    ANVIL_ASSIGN_OR_RETURN(hlo::Literal l, ReadNpy(text));
    if (!l.shape().Compatible(shape)) {
      return hlo::InvalidArgument(text + " holds " + l.shape().ToString(false) + " but the parameter is " +
                                  shape.ToString(false));
    }
    return l;
  }
  auto m = hlo::ParseHloModule("HloModule input\nENTRY e {\n  ROOT c = " + shape.ToString(false) + " constant(" + text +
                               ")\n}\n",
                               {"--input", 0});
  if (!m.ok()) return m.status();
  return *(*m)->entry->root->literal;
}

std::string Summary(const hlo::Literal& l) {
  const int64_t n = l.element_count();
  if (n <= 64) return l.ToString();
  std::string out = "{";
  for (int64_t k = 0; k < 8; ++k) out += (k ? ", " : "") + l.ElementToString(k);
  return out + ", ... (" + std::to_string(n) + " elements)}";
}

}  // namespace

int RunCommand(int argc, char** argv) {
  std::string file, plugin = "cpu", output_dir;
  std::vector<std::string> inputs;
  bool random_inputs = false;
  int iterations = 1;
  for (int k = 0; k < argc; ++k) {
    std::string a = argv[k];
    if (a == "--plugin" && k + 1 < argc) plugin = argv[++k];
    else if (a == "--input" && k + 1 < argc) inputs.push_back(argv[++k]);
    else if (a == "--random-inputs") random_inputs = true;
    else if (a == "--output" && k + 1 < argc) output_dir = argv[++k];
    else if (a == "--iterations" && k + 1 < argc) iterations = std::max(1, std::atoi(argv[++k]));
    else if (a == "--help" || a == "-h") {
      std::printf("usage: anvil run FILE [--plugin NAME] [--input NPY_OR_LITERAL]... [--random-inputs]\n"
                  "                      [--output DIR] [--iterations N]\n");
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return Fail("unknown option '" + a + "'");
    } else {
      file = a;
    }
  }
  if (file.empty()) return Fail("no program given");
  auto modules = hlo::ParseProgramFile(file);
  if (!modules.ok()) return Fail(modules.status().message());
  if (modules->size() > 1) std::fprintf(stderr, "anvil run: %s holds %zu modules; running the first\n", file.c_str(), modules->size());
  hlo::Module& module = *(*modules)[0];
  conformance::FillElidedConstants(module);
  const std::string text = hlo::Print(module);

  std::string error;
  anvil_client_options options{};
  options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
  options.load_all_plugins = 0;
  anvil_client* client = nullptr;
  if (!Check(anvil_client_create(&options, &client), &error)) return Fail(error);
  anvil_plugin_load_args load{};
  load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
  load.name = plugin.c_str();
  anvil_device* device = nullptr;
  if (!Check(anvil_client_load_plugin(client, &load), &error) ||
      !Check(anvil_client_device(client, 0, &device), &error)) {
    anvil_status_free(anvil_client_destroy(client));
    return Fail(error);
  }
  anvil_compile_args compile{};
  compile.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
  compile.program = text.data();
  compile.program_size = text.size();
  compile.format = "hlo";
  compile.device = device;
  anvil_executable* exe = nullptr;
  auto t0 = Clock::now();
  bool ok = Check(anvil_client_compile(client, &compile, &exe), &error);
  const double compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  std::vector<anvil_buffer*> buffers;
  std::vector<hlo::Literal> args;
  size_t params = 0, results = 0;
  if (ok) ok = Check(anvil_executable_parameter_count(exe, &params), &error) &&
               Check(anvil_executable_result_count(exe, &results), &error);
  for (size_t p = 0; ok && p < params; ++p) {
    int32_t type = 0;
    const int64_t* dims = nullptr;
    size_t rank = 0;
    ok = Check(anvil_executable_parameter_shape(exe, p, &type, &dims, &rank), &error);
    if (!ok) break;
    hlo::Shape shape(static_cast<hlo::ElementType>(type), std::vector<int64_t>(dims, dims + rank));
    if (p < inputs.size()) {
      auto literal = ReadInput(inputs[p], shape);
      if (!literal.ok()) {
        error = literal.status().message();
        ok = false;
        break;
      }
      args.push_back(std::move(literal).value());
    } else if (random_inputs) {
      args.push_back(conformance::DeterministicLiteral(shape, 1000 + p));
    } else {
      error = "parameter " + std::to_string(p) + " (" + shape.ToString(false) +
              ") has no --input; give one or use --random-inputs";
      ok = false;
      break;
    }
    anvil_buffer_from_host_args from{};
    from.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
    from.device = device;
    from.data = args.back().data().data();
    from.element_type = type;
    from.dims = dims;
    from.num_dims = rank;
    anvil_buffer* b = nullptr;
    ok = Check(anvil_buffer_from_host(client, &from, &b, nullptr), &error);
    if (ok) buffers.push_back(b);
  }
  std::vector<anvil_buffer*> outputs(results, nullptr);
  double best_ms = 1e300, total_ms = 0;
  for (int it = 0; ok && it < iterations; ++it) {
    for (anvil_buffer*& o : outputs) {
      anvil_status_free(anvil_buffer_destroy(o));
      o = nullptr;
    }
    anvil_execute_args run{};
    run.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
    run.inputs = buffers.data();
    run.num_inputs = buffers.size();
    anvil_event* done = nullptr;
    auto t1 = Clock::now();
    ok = Check(anvil_executable_execute(exe, &run, outputs.data(), &done), &error) &&
         Check(anvil_event_await(done), &error);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
    anvil_status_free(anvil_event_destroy(done));
    best_ms = std::min(best_ms, ms);
    total_ms += ms;
  }
  for (size_t r = 0; ok && r < results; ++r) {
    int32_t type = 0;
    const int64_t* dims = nullptr;
    size_t rank = 0;
    ok = Check(anvil_executable_result_shape(exe, r, &type, &dims, &rank), &error);
    hlo::Literal out(hlo::Shape(static_cast<hlo::ElementType>(type), std::vector<int64_t>(dims, dims + rank)));
    anvil_event* copied = nullptr;
    ok = ok && Check(anvil_buffer_to_host(outputs[r], out.mutable_data().data(), out.mutable_data().size(), &copied), &error) &&
         Check(anvil_event_await(copied), &error);
    anvil_status_free(anvil_event_destroy(copied));
    if (!ok) break;
    if (!output_dir.empty()) {
      std::filesystem::create_directories(output_dir);
      std::string path = output_dir + "/result_" + std::to_string(r) + ".npy";
      hlo::Status written = WriteNpy(path, out);
      if (!written.ok()) {
        error = written.message();
        ok = false;
        break;
      }
      std::printf("result %zu: %s -> %s\n", r, out.shape().ToString(false).c_str(), path.c_str());
    } else {
      std::printf("result %zu: %s %s\n", r, out.shape().ToString(false).c_str(), Summary(out).c_str());
    }
  }
  for (anvil_buffer* b : buffers) anvil_status_free(anvil_buffer_destroy(b));
  for (anvil_buffer* b : outputs) anvil_status_free(anvil_buffer_destroy(b));
  anvil_status_free(anvil_executable_destroy(exe));
  anvil_status_free(anvil_client_destroy(client));
  if (!ok) return Fail(error);
  std::printf("compile: %.1f ms, execute: %.1f ms (best of %d, mean %.1f ms)\n", compile_ms, best_ms, iterations,
              total_ms / iterations);
  return 0;
}

}  // namespace anvil::tools
