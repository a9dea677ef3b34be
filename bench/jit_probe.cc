// What LLVM 15's ORC JIT would cost and give the CPU plugin's fused loops
// (issue 11 asks for the measurement before the choice; docs/architecture.md
// records the numbers and the choice). Not part of the plugin: built only
// where LLVM 15's development package is installed (bench/CMakeLists.txt).
//
//   anvil_jit_probe [--rows N] [--iterations N]
//
// 1. Compile time: an elementwise loop of K f32 ops (the fused loops' shape:
//    loads, a chain of adds, multiplies, divides, maxima and selects, a
//    store, over 16-float vectors), built as IR, optimised at O2 and turned
//    into machine code by LLJIT, for K = 8, 32 and 96 (exact GELU through
//    JAX is one loop of 95 ops), each in a fresh LLJIT so nothing is shared.
// 2. Speed: layer norm of f32[rows, 1024] as one generated kernel (row sums
//    and sums of squared deviations in double, as the plugin's kernels
//    take them, then (x - mean) * rsqrt(var + eps) * gamma + beta), on two
//    threads, against a memcpy of the same bytes in the same run.
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double MsSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

constexpr unsigned kWidth = 16;  // floats a vector

void Check(llvm::Error e, const char* what) {
  if (e) {
    std::fprintf(stderr, "%s: %s\n", what, llvm::toString(std::move(e)).c_str());
    std::exit(1);
  }
}

// The module's functions optimised at O2 for the host CPU, as a JIT would
// run them.
void Optimise(llvm::Module& m, llvm::TargetMachine* tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(m, mam);
}

// A counted loop over [0, n) in steps of `step`, its body from `body(i)`.
void CountedLoop(llvm::IRBuilder<>& b, llvm::Value* n, uint64_t step,
                 const std::function<void(llvm::Value*)>& body) {
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& c = b.getContext();
  llvm::BasicBlock* entry = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(c, "loop", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(c, "done", f);
  b.CreateCondBr(b.CreateICmpSLT(b.getInt64(0), n), loop, done);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), entry);
  body(i);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(step));
  i->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpSLT(next, n), loop, done);
  b.SetInsertPoint(done);
}

// void chain(const float* x, const float* y, float* z, int64 n): z = a
// chain of `ops` f32 ops of x and y, n a multiple of 16.
std::unique_ptr<llvm::Module> ChainModule(llvm::LLVMContext& c, int ops) {
  auto m = std::make_unique<llvm::Module>("chain", c);
  llvm::IRBuilder<> b(c);
  llvm::Type* f32 = b.getFloatTy();
  llvm::Type* ptr = llvm::PointerType::get(c, 0);
  auto* vec = llvm::FixedVectorType::get(f32, kWidth);
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, b.getInt64Ty()}, false),
                                    llvm::Function::ExternalLinkage, "chain", *m);
  b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", fn));
  llvm::Value* x = fn->getArg(0);
  llvm::Value* y = fn->getArg(1);
  llvm::Value* z = fn->getArg(2);
  CountedLoop(b, fn->getArg(3), kWidth, [&](llvm::Value* i) {
    llvm::Value* a = b.CreateAlignedLoad(vec, b.CreateGEP(f32, x, i), llvm::Align(4));
    llvm::Value* v = b.CreateAlignedLoad(vec, b.CreateGEP(f32, y, i), llvm::Align(4));
    llvm::Value* acc = a;
    for (int k = 0; k < ops; ++k) {
      switch (k % 5) {
        case 0: acc = b.CreateFAdd(acc, v); break;
        case 1: acc = b.CreateFMul(acc, a); break;
        case 2: acc = b.CreateFDiv(acc, b.CreateFAdd(v, llvm::ConstantFP::get(vec, 2.0))); break;
        case 3: acc = b.CreateMaxNum(acc, a); break;
        default: acc = b.CreateSelect(b.CreateFCmpOGT(acc, v), acc, b.CreateFSub(acc, v)); break;
      }
    }
    b.CreateAlignedStore(acc, b.CreateGEP(f32, z, i), llvm::Align(4));
  });
  b.CreateRetVoid();
  return m;
}

// void layer_norm(const float* x, const float* gamma, const float* beta,
// float* y, int64 row_begin, int64 row_end), rows of 1024.
std::unique_ptr<llvm::Module> LayerNormModule(llvm::LLVMContext& c) {
  constexpr uint64_t kCols = 1024;
  auto m = std::make_unique<llvm::Module>("layer_norm", c);
  llvm::IRBuilder<> b(c);
  llvm::Type* f32 = b.getFloatTy();
  llvm::Type* f64 = b.getDoubleTy();
  llvm::Type* ptr = llvm::PointerType::get(c, 0);
  auto* vec = llvm::FixedVectorType::get(f32, kWidth);
  auto* dvec = llvm::FixedVectorType::get(f64, kWidth);
  auto* fn = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, ptr, b.getInt64Ty(), b.getInt64Ty()}, false),
      llvm::Function::ExternalLinkage, "layer_norm", *m);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(c, "entry", fn);
  b.SetInsertPoint(entry);
  llvm::Value* x = fn->getArg(0);
  llvm::Value* gamma = fn->getArg(1);
  llvm::Value* beta = fn->getArg(2);
  llvm::Value* y = fn->getArg(3);
  llvm::Value* rows = b.CreateSub(fn->getArg(5), fn->getArg(4));
  llvm::Value* first = fn->getArg(4);
  llvm::Value* cols = b.getInt64(kCols);
  auto sum_of = [&](llvm::Value* row_x, const std::function<llvm::Value*(llvm::Value*)>& term) {
    // A vector of double partial sums, then its lanes added.
    llvm::AllocaInst* acc = nullptr;
    {
      llvm::IRBuilder<> e(&fn->getEntryBlock(), fn->getEntryBlock().begin());
      acc = e.CreateAlloca(dvec);
    }
    b.CreateStore(llvm::ConstantFP::get(dvec, 0.0), acc);
    CountedLoop(b, cols, kWidth, [&](llvm::Value* i) {
      llvm::Value* v = b.CreateAlignedLoad(vec, b.CreateGEP(f32, row_x, i), llvm::Align(4));
      b.CreateStore(b.CreateFAdd(b.CreateLoad(dvec, acc), b.CreateFPExt(term(v), dvec)), acc);
    });
    return b.CreateFAddReduce(llvm::ConstantFP::get(f64, 0.0), b.CreateLoad(dvec, acc));
  };
  CountedLoop(b, rows, 1, [&](llvm::Value* r) {
    llvm::Value* offset = b.CreateMul(b.CreateAdd(r, first), cols);
    llvm::Value* row_x = b.CreateGEP(f32, x, offset);
    llvm::Value* row_y = b.CreateGEP(f32, y, offset);
    llvm::Value* n = llvm::ConstantFP::get(f32, 1.0 / kCols);
    llvm::Value* mean = b.CreateFMul(b.CreateFPTrunc(sum_of(row_x, [](llvm::Value* v) { return v; }), f32), n);
    llvm::Value* mean_v = b.CreateVectorSplat(kWidth, mean);
    llvm::Value* var = b.CreateFMul(
        b.CreateFPTrunc(sum_of(row_x, [&](llvm::Value* v) {
                          llvm::Value* d = b.CreateFSub(v, mean_v);
                          return b.CreateFMul(d, d);
                        }),
                        f32),
        n);
    llvm::Value* scale = b.CreateFDiv(llvm::ConstantFP::get(f32, 1.0),
                                      b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt,
                                                             b.CreateFAdd(var, llvm::ConstantFP::get(f32, 1e-5))));
    llvm::Value* scale_v = b.CreateVectorSplat(kWidth, scale);
    CountedLoop(b, cols, kWidth, [&](llvm::Value* i) {
      llvm::Value* v = b.CreateAlignedLoad(vec, b.CreateGEP(f32, row_x, i), llvm::Align(4));
      llvm::Value* g = b.CreateAlignedLoad(vec, b.CreateGEP(f32, gamma, i), llvm::Align(4));
      llvm::Value* bt = b.CreateAlignedLoad(vec, b.CreateGEP(f32, beta, i), llvm::Align(4));
      llvm::Value* out = b.CreateFAdd(b.CreateFMul(b.CreateFMul(b.CreateFSub(v, mean_v), scale_v), g), bt);
      b.CreateAlignedStore(out, b.CreateGEP(f32, row_y, i), llvm::Align(4));
    });
  });
  b.CreateRetVoid();
  return m;
}

// Builds, optimises and compiles `m` in a fresh LLJIT; returns the JIT
// (which owns the code) and the function's address; `ms` gets the time.
std::unique_ptr<llvm::orc::LLJIT> Compile(std::unique_ptr<llvm::LLVMContext> c, std::unique_ptr<llvm::Module> m,
                                          const char* name, void** address, double* ms,
                                          Clock::time_point started) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  Check(builder.takeError(), "host");
  builder->setCodeGenOptLevel(llvm::CodeGenOpt::Default);
  auto tm = builder->createTargetMachine();
  Check(tm.takeError(), "target machine");
  m->setDataLayout((*tm)->createDataLayout());
  if (llvm::verifyModule(*m, &llvm::errs())) std::exit(1);
  Optimise(*m, tm->get());
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*builder).create();
  Check(jit.takeError(), "LLJIT");
  Check((*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(c))), "add module");
  auto symbol = (*jit)->lookup(name);  // materialises: codegen happens here
  Check(symbol.takeError(), "lookup");
  *address = symbol->toPtr<void*>();
  *ms = MsSince(started);
  return std::move(*jit);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 4096;
  int iterations = 50;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--rows")) rows = std::atoll(argv[a + 1]);
    if (!std::strcmp(argv[a], "--iterations")) iterations = std::atoi(argv[a + 1]);
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  std::printf("compile (IR built, O2, machine code, in a fresh LLJIT):\n");
  for (int ops : {8, 32, 96}) {
    std::vector<double> times;
    for (int k = 0; k < 5; ++k) {
      const auto started = Clock::now();
      auto c = std::make_unique<llvm::LLVMContext>();
      auto m = ChainModule(*c, ops);
      void* f = nullptr;
      double ms = 0;
      auto jit = Compile(std::move(c), std::move(m), "chain", &f, &ms, started);
      times.push_back(ms);
    }
    std::printf("  loop of %3d ops: %.2f ms (median of 5, min %.2f)\n", ops, Median(times),
                *std::min_element(times.begin(), times.end()));
  }

  {
    // A program's loops share one JIT: its set-up is paid once.
    constexpr int kLoops = 50;
    const auto started = Clock::now();
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    Check(builder.takeError(), "host");
    auto tm = builder->createTargetMachine();
    Check(tm.takeError(), "target machine");
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*builder).create();
    Check(jit.takeError(), "LLJIT");
    for (int k = 0; k < kLoops; ++k) {
      auto c = std::make_unique<llvm::LLVMContext>();
      auto m = ChainModule(*c, 8);
      const std::string name = "chain" + std::to_string(k);
      m->getFunction("chain")->setName(name);
      m->setDataLayout((*tm)->createDataLayout());
      Optimise(*m, tm->get());
      Check((*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(c))), "add module");
      auto symbol = (*jit)->lookup(name);
      Check(symbol.takeError(), "lookup");
    }
    std::printf("  %d loops of 8 ops in one LLJIT: %.2f ms a loop\n", kLoops, MsSince(started) / kLoops);
  }

  const auto started = Clock::now();
  auto c = std::make_unique<llvm::LLVMContext>();
  auto m = LayerNormModule(*c);
  void* address = nullptr;
  double compile_ms = 0;
  auto jit = Compile(std::move(c), std::move(m), "layer_norm", &address, &compile_ms, started);
  using LayerNorm = void (*)(const float*, const float*, const float*, float*, int64_t, int64_t);
  auto layer_norm = reinterpret_cast<LayerNorm>(address);

  constexpr int64_t kCols = 1024;
  std::vector<float> x(static_cast<size_t>(rows * kCols)), y(x.size()), copied(x.size()), gamma(kCols), beta(kCols);
  uint32_t s = 1;
  for (float& v : x) v = static_cast<float>((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f * 2 - 1;
  for (int64_t j = 0; j < kCols; ++j) gamma[j] = 1.0f + j * 1e-3f, beta[j] = j * 1e-4f;
  auto run = [&] {
    const int64_t half = rows / 2;
    std::thread other([&] { layer_norm(x.data(), gamma.data(), beta.data(), y.data(), half, rows); });
    layer_norm(x.data(), gamma.data(), beta.data(), y.data(), 0, half);
    other.join();
  };
  auto copy = [&] {
    const size_t half = x.size() / 2;
    std::thread other([&] { std::memcpy(copied.data() + half, x.data() + half, (x.size() - half) * sizeof(float)); });
    std::memcpy(copied.data(), x.data(), half * sizeof(float));
    other.join();
  };
  std::vector<double> norm_ms, copy_ms;
  for (int k = 0; k < iterations + 1; ++k) {
    auto t = Clock::now();
    run();
    if (k) norm_ms.push_back(MsSince(t));
    t = Clock::now();
    copy();
    if (k) copy_ms.push_back(MsSince(t));
  }
  // A check that it computes a layer norm: row 0's mean and variance.
  double mean = 0, var = 0;
  for (int64_t j = 0; j < kCols; ++j) mean += x[j];
  mean /= kCols;
  for (int64_t j = 0; j < kCols; ++j) var += (x[j] - mean) * (x[j] - mean);
  var /= kCols;
  const double expect = (x[5] - mean) / std::sqrt(var + 1e-5) * gamma[5] + beta[5];
  std::printf("layer norm of f32[%lld,1024] as one generated kernel (compiled in %.2f ms), 2 threads:\n",
              static_cast<long long>(rows), compile_ms);
  std::printf("  %.3f ms median of %d; memcpy of the same bytes %.3f ms (%.2fx); y[5] %.6f, expected %.6f\n",
              Median(norm_ms), iterations, Median(copy_ms), Median(norm_ms) / Median(copy_ms), y[5], expect);
  return std::fabs(y[5] - expect) < 1e-3 ? 0 : 1;
}
