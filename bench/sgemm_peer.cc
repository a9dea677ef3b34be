// The dot workload's library peers for bench/compare.py: an f32 row-major
// C = A B of M x K by K x N, timed through oneDNN's dnnl_sgemm with its own
// threading (OpenMP, every core) and through OpenBLAS's cblas_sgemm when
// an OpenBLAS library can be loaded (Debian's libopenblas0-pthread, which
// bench/setup_peers.sh installs; it is looked up at run time, so building
// this needs no OpenBLAS). Each prints one JSON line with the median and
// the best of the timed runs, after one untimed run.
//   ./build/bench/anvil_sgemm_peer M N K [ITERATIONS]
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

// cblas_sgemm's signature, with CBLAS's enum values spelled as ints
// (CblasRowMajor = 101, CblasNoTrans = 111).
using CblasSgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                            int lda, const float* b, int ldb, float beta, float* c, int ldc);

CblasSgemm LoadOpenblasSgemm(std::string* loaded) {
  for (const char* name : {"libopenblas.so.0", "libopenblasp.so.0", "libopenblas.so"}) {
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
      if (void* f = dlsym(lib, "cblas_sgemm")) {
        *loaded = name;
        return reinterpret_cast<CblasSgemm>(f);
      }
    }
  }
  return nullptr;
}

void Report(const char* peer, const std::string& library, int64_t m, int64_t n, int64_t k,
            int iterations, const std::function<void()>& run) {
  run();  // untimed: first-touch of the result, the library's own set-up
  std::vector<double> ms;
  for (int it = 0; it < iterations; ++it) {
    const auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2], flops = 2.0 * static_cast<double>(m) * n * k;
  std::printf("{\"peer\": \"%s\", \"library\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"execute_ms\": "
              "{\"min\": %.4f, \"median\": %.4f, \"max\": %.4f}, \"gflop_per_s_at_median\": %.1f}\n",
              peer, library.c_str(), static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
              ms.front(), median, ms.back(), flops / median / 1e6);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: anvil_sgemm_peer M N K [ITERATIONS]\n");
    return 2;
  }
  const int64_t m = std::atoll(argv[1]), n = std::atoll(argv[2]), k = std::atoll(argv[3]);
  const int iterations = argc > 4 ? std::max(1, std::atoi(argv[4])) : 10;
  if (m <= 0 || n <= 0 || k <= 0) {
    std::fprintf(stderr, "anvil_sgemm_peer: M, N and K must be positive\n");
    return 2;
  }
  // Inputs in [-1, 1), as `anvil bench` gives its programs.
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), c(static_cast<size_t>(m * n));
  unsigned state = 12345;
  auto next = [&] {
    state = state * 1103515245u + 12345u;
    return static_cast<float>((state >> 8) & 0xffff) / 32768.0f - 1.0f;
  };
  for (float& v : a) v = next();
  for (float& v : b) v = next();
  Report("onednn", "dnnl_sgemm", m, n, k, iterations, [&] {
    dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
  });
  std::string library;
  if (CblasSgemm sgemm = LoadOpenblasSgemm(&library)) {
    Report("openblas", library, m, n, k, iterations, [&] {
      sgemm(101, 111, 111, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a.data(),
            static_cast<int>(k), b.data(), static_cast<int>(n), 0.0f, c.data(), static_cast<int>(n));
    });
  } else {
    std::fprintf(stderr, "anvil_sgemm_peer: no OpenBLAS library could be loaded (bench/setup_peers.sh installs "
                         "libopenblas0-pthread); oneDNN only\n");
  }
  return 0;
}
