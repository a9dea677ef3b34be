// Speed of the CPU plugin through the C ABI, each as a ratio to a baseline
// measured in the same run: elementwise add of 2^24 f32 against memcpy
// bandwidth, and a 1024x1024x1024 f32 dot against oneDNN's dnnl_sgemm.
//   ./build/bench/anvil_cpu_bench
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "anvil/anvil.h"

namespace {

constexpr int64_t kElements = int64_t{1} << 24;
constexpr int64_t kN = 1024;

double memcpy_bytes_per_second = 0;  // baselines, measured before the benchmarks
double sgemm_flops_per_second = 0;

void Check(anvil_status* s) {
  if (s) {
    std::fprintf(stderr, "anvil: %s\n", anvil_status_get_message(s));
    std::abort();
  }
}

template <typename F>
double BestSeconds(int repeats, F f) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void MeasureBaselines() {
  std::vector<float> a(kElements, 1.0f), b(kElements);
  // Elementwise add reads two arrays and writes one: compare with memcpy's
  // bytes moved (read + write) per second.
  double t = BestSeconds(5, [&] { std::memcpy(b.data(), a.data(), kElements * sizeof(float)); });
  memcpy_bytes_per_second = 2.0 * kElements * sizeof(float) / t;
  std::vector<float> x(kN * kN, 0.5f), y(kN * kN, 0.25f), z(kN * kN);
  t = BestSeconds(3, [&] { dnnl_sgemm('N', 'N', kN, kN, kN, 1.0f, x.data(), kN, y.data(), kN, 0.0f, z.data(), kN); });
  sgemm_flops_per_second = 2.0 * kN * kN * kN / t;
}

struct Runner {
  anvil_client* client = nullptr;
  anvil_device* device = nullptr;
  anvil_executable* exe = nullptr;
  std::vector<anvil_buffer*> inputs;

  Runner(const std::string& hlo, const std::vector<std::vector<int64_t>>& shapes) {
    anvil_client_options options{};
    options.struct_size = ANVIL_CLIENT_OPTIONS_STRUCT_SIZE;
    options.load_all_plugins = 0;
    Check(anvil_client_create(&options, &client));
    anvil_plugin_load_args load{};
    load.struct_size = ANVIL_PLUGIN_LOAD_ARGS_STRUCT_SIZE;
    load.name = "cpu";
    Check(anvil_client_load_plugin(client, &load));
    Check(anvil_client_device(client, 0, &device));
    anvil_compile_args compile{};
    compile.struct_size = ANVIL_COMPILE_ARGS_STRUCT_SIZE;
    compile.program = hlo.data();
    compile.program_size = hlo.size();
    compile.format = "hlo";
    compile.device = device;
    Check(anvil_client_compile(client, &compile, &exe));
    for (const auto& dims : shapes) {
      int64_t n = 1;
      for (int64_t d : dims) n *= d;
      std::vector<float> data(static_cast<size_t>(n), 0.5f);
      anvil_buffer_from_host_args args{};
      args.struct_size = ANVIL_BUFFER_FROM_HOST_ARGS_STRUCT_SIZE;
      args.device = device;
      args.data = data.data();
      args.element_type = ANVIL_F32;
      args.dims = dims.data();
      args.num_dims = dims.size();
      anvil_buffer* b = nullptr;
      Check(anvil_buffer_from_host(client, &args, &b, nullptr));
      inputs.push_back(b);
    }
  }
  ~Runner() {
    for (auto* b : inputs) anvil_status_free(anvil_buffer_destroy(b));
    anvil_status_free(anvil_executable_destroy(exe));
    anvil_status_free(anvil_client_destroy(client));
  }
  void RunOnce() {
    anvil_buffer* out = nullptr;
    anvil_execute_args run{};
    run.struct_size = ANVIL_EXECUTE_ARGS_STRUCT_SIZE;
    run.inputs = inputs.data();
    run.num_inputs = inputs.size();
    anvil_event* done = nullptr;
    Check(anvil_executable_execute(exe, &run, &out, &done));
    Check(anvil_event_await(done));
    anvil_status_free(anvil_event_destroy(done));
    anvil_status_free(anvil_buffer_destroy(out));
  }
};

void BM_ElementwiseAdd(benchmark::State& state) {
  const std::string n = std::to_string(kElements);
  Runner r("HloModule add\nENTRY e {\n  a = f32[" + n + "] parameter(0)\n  b = f32[" + n +
               "] parameter(1)\n  ROOT s = f32[" + n + "] add(a, b)\n}\n",
           {{kElements}, {kElements}});
  for (auto _ : state) r.RunOnce();
  const double bytes = 3.0 * kElements * sizeof(float);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["ratio_to_memcpy"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * bytes / memcpy_bytes_per_second, benchmark::Counter::kIsRate);
}

void BM_Dot(benchmark::State& state) {
  const std::string n = std::to_string(kN);
  Runner r("HloModule dot\nENTRY e {\n  a = f32[" + n + "," + n + "] parameter(0)\n  b = f32[" + n + "," + n +
               "] parameter(1)\n  ROOT d = f32[" + n + "," + n +
               "] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
           {{kN, kN}, {kN, kN}});
  for (auto _ : state) r.RunOnce();
  const double flops = 2.0 * kN * kN * kN;
  state.counters["GFLOP/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * flops / 1e9,
                                                 benchmark::Counter::kIsRate);
  state.counters["ratio_to_dnnl_sgemm"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * flops / sgemm_flops_per_second, benchmark::Counter::kIsRate);
}

BENCHMARK(BM_ElementwiseAdd)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Dot)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  MeasureBaselines();
  std::printf("baselines: memcpy %.2f GB/s (bytes read + written), dnnl_sgemm %.1f GFLOP/s\n",
              memcpy_bytes_per_second / 1e9, sgemm_flops_per_second / 1e9);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
