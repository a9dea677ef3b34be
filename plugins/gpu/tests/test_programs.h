// What the GPU layer's and the GPU plugins' tests share: a program with a
// kernel of each kind the generator has, on several element types, a
// counted while loop, and a stand-in for core's host executor.
#pragma once

#include <thread>

#include "anvil/anvil_plugin.h"

namespace anvil::gpu::testing {

// Transpose (a loop), dot, reduce, convolution, sort of a key and a value,
// complex sqrt and an f64 elementary function.
inline constexpr const char* kEveryKernelKind = R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
less { a = s32[] parameter(0)  b = s32[] parameter(1)  c = f16[] parameter(2)  d = f16[] parameter(3)
       ROOT l = pred[] compare(a, b), direction=LT }
ENTRY e {
  x = f32[4,6] parameter(0)
  y = f32[6,3] parameter(1)
  k = s32[8] parameter(2)
  h = f16[8] parameter(3)
  img = f32[1,6,6,2] parameter(4)
  w = f32[3,3,2,4] parameter(5)
  c = c64[3] parameter(6)
  q = f64[5] parameter(7)
  t = f32[6,4] transpose(x), dimensions={1,0}
  d = f32[4,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  r = f32[4] reduce(x, zero), dimensions={1}, to_apply=add
  conv = f32[1,4,4,4] convolution(img, w), window={size=3x3}, dim_labels=b01f_01io->b01f
  sorted = (s32[8], f16[8]) sort(k, h), dimensions={0}, to_apply=less
  cs = c64[3] sqrt(c)
  lq = f64[5] log-plus-one(q)
  ROOT out = (f32[6,4], f32[4,3], f32[4], f32[1,4,4,4], (s32[8], f16[8]), c64[3], f64[5]) tuple(t, d, r, conv, sorted, cs, lq)
})";

// A while loop counting to 3 while it doubles an f32[4]; its result is
// the loop state's array.
inline constexpr const char* kCountedLoop = R"(HloModule loop
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next_i = s32[] add(i, one)
  doubled = f32[4] add(x, x)
  ROOT t = (s32[], f32[4]) tuple(next_i, doubled)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
})";

// Core's host executor stand-in: each job on a thread of its own.
inline anvil_plugin_host_executor ThreadPerJob() {
  anvil_plugin_host_executor host{};
  host.struct_size = ANVIL_PLUGIN_STRUCT_SIZE(anvil_plugin_host_executor, enqueue);
  host.enqueue = [](void*, void (*fn)(void*), void* arg) { std::thread(fn, arg).detach(); };
  return host;
}

}  // namespace anvil::gpu::testing
