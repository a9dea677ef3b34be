// f32 convolutions through oneDNN's convolution primitives: forward,
// backward data and backward weights (conv_problem.h says which an HLO
// convolution is), grouped and depthwise included.
//
// Everything is decided at compile time: the primitive's descriptor (oneDNN
// picks its implementation and the blocked layouts it runs fastest in,
// `format any`), the reorders between Anvil's row-major arrays and those
// layouts, and where each temporary lives in the step's temp region (the
// plan's scratch block, so an execution allocates nothing here). The
// choices are recorded in the executable's ConvLayoutBook (conv_layouts.h),
// so that a load from the compile cache lays out the same temporaries
// without asking oneDNN, and the first execution describes the recorded
// implementation again. The
// primitives themselves, which oneDNN JIT-compiles and cannot serialise for
// CPU engines, are created by the first execution that runs the step: a
// compile, and a load from the compile cache, do not pay for code generation
// (most of a cached load's time otherwise) that only running needs, and a
// step never run (a branch not taken) never pays for it. Executing then
// mirrors the weights if the problem asks, reorders the inputs, runs the
// primitive and reorders the result back.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <optional>
#include <string>

#include "plugins/cpu/conv_layouts.h"
#include "plugins/cpu/conv_problem.h"
#include "plugins/cpu/openmp_float_mode.h"
#include "plugins/cpu/plan.h"

namespace anvil::cpu {
namespace {

using dnnl::memory;
using Kind = ConvProblem::Kind;

// One CPU engine for the plugin's life; oneDNN's primitives are safe to run
// from several threads at once.
const dnnl::engine& CpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

memory::desc StridedDesc(const ConvOperand& operand) {
  return memory::desc(memory::dims(operand.dims.begin(), operand.dims.end()), memory::data_type::f32,
                      memory::dims(operand.strides.begin(), operand.strides.end()));
}

memory::desc AnyDesc(const ConvOperand& operand) {
  return memory::desc(memory::dims(operand.dims.begin(), operand.dims.end()), memory::data_type::f32,
                      memory::format_tag::any);
}

// Bytes from `top`, rounded so every temporary starts 64-byte aligned.
int64_t Reserve(int64_t& top, size_t bytes) {
  const int64_t at = top;
  top += (static_cast<int64_t>(bytes) + 63) / 64 * 64;
  return at;
}

// An operand of the primitive: where Anvil keeps it, the layout the
// primitive wants, and the reorder between them when the two differ.
struct Port {
  int arg = 0;             // DNNL_ARG_*
  memory::desc user, primitive;
  bool reordered = false;  // user != primitive: staged through temp
  std::optional<dnnl::reorder> reorder;  // made with the primitive
  int64_t staged_at = -1;  // temp offset of the primitive-layout copy, if any
};

struct Mirror {
  std::vector<int64_t> dims, strides;  // of the source, in oneDNN's order
  std::vector<bool> flip;              // per dimension
  int64_t at = 0;                      // temp offset of the dense mirrored copy
};

// Writes `source` mirrored in the flagged dimensions into a dense array (the
// weights: small, so a plain odometer walk).
void WriteMirrored(const Mirror& m, const float* source, float* dense) {
  const size_t rank = m.dims.size();
  std::vector<int64_t> index(rank, 0);
  int64_t count = 1;
  for (int64_t d : m.dims) count *= d;
  for (int64_t e = 0; e < count; ++e) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      offset += (m.flip[d] ? m.dims[d] - 1 - index[d] : index[d]) * m.strides[d];
    }
    dense[e] = source[offset];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < m.dims[d]) break;
      index[d] = 0;
    }
  }
}

struct CompiledConvolution {
  ConvProblem problem;  // to describe the primitive again after a load
  // The chosen implementation; empty after a load from the compile cache
  // until the first execution describes it again from the layouts below.
  dnnl::primitive_desc pd;
  // Made once, by the first execution (Ready), under the mutex (not
  // std::call_once: with libstdc++, a call_once whose function threw hangs
  // the next call, GCC PR 66146).
  std::mutex ready_mu;
  bool ready = false;
  dnnl::primitive primitive;
  Port a, b, c;  // HLO's lhs, rhs and result
  std::optional<Mirror> mirror_b;
  memory::desc scratchpad;
  int64_t scratchpad_at = 0;
  int64_t scratchpad_reserved = 0;  // bytes at scratchpad_at
  std::string impl;  // oneDNN's name for the implementation it chose
};

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// oneDNN's descriptor for `p` with its operands in the given layouts (format
// `any` lets oneDNN choose): its first implementation, or with `accept` the
// first that `accept` takes. Throws dnnl::error when oneDNN has none.
// Nothing is JIT-compiled yet (Ready). The walk stays in here: a
// descriptor's iterator points at the operation descriptors and the forward
// hint, which live only as long as this call.
using Acceptor = std::function<bool(const dnnl::primitive_desc&)>;

dnnl::primitive_desc FirstAccepted(dnnl::primitive_desc pd, const Acceptor& accept) {
  while (accept && !accept(pd)) {
    if (!pd.next_impl()) throw dnnl::error(dnnl_unimplemented, "no implementation was accepted");
  }
  return pd;
}

dnnl::primitive_desc Describe(const ConvProblem& p, const memory::desc& src, const memory::desc& weights,
                              const memory::desc& dst, const Acceptor& accept = nullptr) {
  const dnnl::engine& engine = CpuEngine();
  const memory::dims strides(p.strides.begin(), p.strides.end()), dilates(p.dilates.begin(), p.dilates.end());
  const memory::dims pad_l(p.pad_l.begin(), p.pad_l.end()), pad_r(p.pad_r.begin(), p.pad_r.end());
  const auto algorithm = dnnl::algorithm::convolution_direct;
  const dnnl::primitive_attr attr = UserScratchpad();
  // The backward primitives take a forward one as a hint for their layouts.
  const dnnl::convolution_forward::desc forward(dnnl::prop_kind::forward_training, algorithm, src, weights, dst,
                                                strides, dilates, pad_l, pad_r);
  const dnnl::convolution_forward::primitive_desc forward_pd(forward, attr, engine);
  switch (p.kind) {
    case Kind::kForward: return FirstAccepted(forward_pd, accept);
    case Kind::kBackwardData: {
      const dnnl::convolution_backward_data::desc d(algorithm, src, weights, dst, strides, dilates, pad_l, pad_r);
      return FirstAccepted(dnnl::convolution_backward_data::primitive_desc(d, attr, engine, forward_pd), accept);
    }
    case Kind::kBackwardWeights: {
      const dnnl::convolution_backward_weights::desc d(algorithm, src, weights, dst, strides, dilates, pad_l, pad_r);
      return FirstAccepted(dnnl::convolution_backward_weights::primitive_desc(d, attr, engine, forward_pd), accept);
    }
  }
  throw dnnl::error(dnnl_invalid_arguments, "unknown convolution kind");
}

// The ports of `p`: oneDNN's argument roles of HLO's lhs, rhs and result
// and Anvil's layouts of them (the mirrored weights' dense copy, if any).
void BindPorts(const ConvProblem& p, CompiledConvolution& compiled) {
  switch (p.kind) {
    case Kind::kForward:
      compiled.a.arg = DNNL_ARG_SRC;
      compiled.b.arg = DNNL_ARG_WEIGHTS;
      compiled.c.arg = DNNL_ARG_DST;
      break;
    case Kind::kBackwardData:
      compiled.a.arg = DNNL_ARG_DIFF_DST;
      compiled.b.arg = DNNL_ARG_WEIGHTS;
      compiled.c.arg = DNNL_ARG_DIFF_SRC;
      break;
    case Kind::kBackwardWeights:
      compiled.a.arg = DNNL_ARG_SRC;
      compiled.b.arg = DNNL_ARG_DIFF_DST;
      compiled.c.arg = DNNL_ARG_DIFF_WEIGHTS;
      break;
  }
  const ConvOperand* user_a = p.kind == Kind::kBackwardData ? &p.dst : &p.src;
  const ConvOperand* user_b = p.kind == Kind::kBackwardWeights ? &p.dst : &p.weights;
  const ConvOperand* user_c = p.kind == Kind::kForward ? &p.dst : p.kind == Kind::kBackwardData ? &p.src : &p.weights;
  compiled.a.user = StridedDesc(*user_a);
  compiled.b.user = StridedDesc(*user_b);
  compiled.c.user = StridedDesc(*user_c);
  bool mirrored = false;
  for (bool f : p.flip) mirrored |= f;
  if (mirrored) {
    // The mirrored weights are written densely in oneDNN's dimension order;
    // the reorder (if any) starts from that copy.
    Mirror m;
    m.dims = user_b->dims;
    m.strides = user_b->strides;
    m.flip.assign(m.dims.size() - p.flip.size(), false);
    m.flip.insert(m.flip.end(), p.flip.begin(), p.flip.end());
    compiled.mirror_b = m;
    compiled.b.user = StridedDesc(ConvOperand{m.dims, RowMajorStrides(m.dims)});
  }
}

// The operands' layouts in oneDNN's roles (src, weights, dst) from the
// ports' primitive-side layouts.
void RoleLayouts(const CompiledConvolution& c, memory::desc* src, memory::desc* weights, memory::desc* dst) {
  const Kind kind = c.problem.kind;
  *src = kind == Kind::kBackwardData ? c.c.primitive : c.a.primitive;
  *weights = kind == Kind::kBackwardWeights ? c.c.primitive : c.b.primitive;
  *dst = kind == Kind::kBackwardData ? c.a.primitive : kind == Kind::kBackwardWeights ? c.b.primitive : c.c.primitive;
}

// The convolution as oneDNN describes `p`, activations in Anvil's own layout
// or in whichever oneDNN prefers; throws dnnl::error when it has no
// implementation.
std::shared_ptr<CompiledConvolution> DescribeConvolution(const ConvProblem& p, bool plain_activations) {
  auto compiled = std::make_shared<CompiledConvolution>();
  compiled->problem = p;
  auto act = [&](const ConvOperand& o) { return plain_activations ? StridedDesc(o) : AnyDesc(o); };
  compiled->pd = Describe(p, act(p.src), AnyDesc(p.weights), act(p.dst));
  BindPorts(p, *compiled);
  for (Port* port : {&compiled->a, &compiled->b, &compiled->c}) {
    port->primitive = compiled->pd.query_md(dnnl::query::exec_arg_md, port->arg);
  }
  compiled->scratchpad = compiled->pd.scratchpad_desc();
  compiled->impl = compiled->pd.impl_info_str();
  return compiled;
}

memory::desc DescFromBytes(const std::string& bytes) {
  dnnl_memory_desc_t data;
  std::memcpy(&data, bytes.data(), sizeof data);  // ConvLayoutBook::Read checked the size
  return memory::desc(data);
}

// The descriptor's fields, in a zeroed struct: its padding bytes carry no
// stray memory into the cache.
std::string BytesOf(const memory::desc& desc) {
  const dnnl_memory_desc_t& d = desc.data;
  dnnl_memory_desc_t clean;
  std::memset(&clean, 0, sizeof clean);
  clean.ndims = d.ndims;
  std::memcpy(clean.dims, d.dims, sizeof d.dims);
  clean.data_type = d.data_type;
  std::memcpy(clean.padded_dims, d.padded_dims, sizeof d.padded_dims);
  std::memcpy(clean.padded_offsets, d.padded_offsets, sizeof d.padded_offsets);
  clean.offset0 = d.offset0;
  clean.format_kind = d.format_kind;
  if (d.format_kind == dnnl_blocked) {
    const dnnl_blocking_desc_t& b = d.format_desc.blocking;
    std::memcpy(clean.format_desc.blocking.strides, b.strides, sizeof b.strides);
    clean.format_desc.blocking.inner_nblks = b.inner_nblks;
    std::memcpy(clean.format_desc.blocking.inner_blks, b.inner_blks, sizeof b.inner_blks);
    std::memcpy(clean.format_desc.blocking.inner_idxs, b.inner_idxs, sizeof b.inner_idxs);
  }
  clean.extra.flags = d.extra.flags;
  clean.extra.compensation_mask = d.extra.compensation_mask;
  clean.extra.scale_adjust = d.extra.scale_adjust;
  clean.extra.asymm_compensation_mask = d.extra.asymm_compensation_mask;
  return std::string(reinterpret_cast<const char*>(&clean), sizeof clean);
}

// Whether recorded bytes are a layout oneDNN could have chosen for an
// operand of `dims`: f32, blocked, no offset, dims as the problem's, sane
// blocks, and no more than a blocked layout's padding. A record that is
// not is described afresh (core's checksum makes this a second line).
bool PlausibleLayout(const memory::desc& desc, const std::vector<int64_t>& dims) {
  const dnnl_memory_desc_t& d = desc.data;
  if (d.ndims != static_cast<int>(dims.size()) || d.ndims < 1 || d.ndims > DNNL_MAX_NDIMS) return false;
  if (d.data_type != dnnl_f32 || d.format_kind != dnnl_blocked || d.offset0 != 0 || d.extra.flags != 0) return false;
  int64_t dense = 1, padded = 1;
  for (int k = 0; k < d.ndims; ++k) {
    if (d.dims[k] != dims[k] || d.padded_dims[k] < d.dims[k] || d.padded_dims[k] > d.dims[k] + 64 ||
        d.padded_offsets[k] != 0 || d.format_desc.blocking.strides[k] < 0) {
      return false;
    }
    dense *= std::max<int64_t>(dims[k], 1);
    padded *= std::max<int64_t>(d.padded_dims[k], 1);
  }
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  if (b.inner_nblks < 0 || b.inner_nblks > DNNL_MAX_NDIMS) return false;
  for (int k = 0; k < b.inner_nblks; ++k) {
    if (b.inner_blks[k] < 1 || b.inner_blks[k] > 64 || b.inner_idxs[k] < 0 || b.inner_idxs[k] >= d.ndims) return false;
  }
  if (padded > dense * 64 + 4096) return false;
  // The bytes it spans: what get_size() computes from strides and blocks.
  return desc.get_size() <= static_cast<size_t>(padded) * 4 * 2 + 4096;
}

bool PlausibleScratchpad(const memory::desc& desc) {
  const dnnl_memory_desc_t& d = desc.data;
  if (d.ndims == 0) return true;  // none
  return d.ndims == 1 && d.data_type == dnnl_u8 && d.format_kind == dnnl_blocked && d.offset0 == 0 &&
         d.dims[0] >= 0 && d.dims[0] < (int64_t{1} << 40) && d.padded_dims[0] == d.dims[0] &&
         d.format_desc.blocking.inner_nblks == 0 && d.format_desc.blocking.strides[0] == 1 && d.extra.flags == 0;
}

// The convolution as a compile described it, from its recorded layouts:
// no oneDNN descriptor until the first execution (Ready). Null when the
// record is not plausible for this problem.
std::shared_ptr<CompiledConvolution> RecordedConvolution(const ConvProblem& p, const ConvLayout& layout) {
  auto compiled = std::make_shared<CompiledConvolution>();
  compiled->problem = p;
  BindPorts(p, *compiled);
  Port* ports[3] = {&compiled->a, &compiled->b, &compiled->c};
  for (int k = 0; k < 3; ++k) {
    ports[k]->primitive = DescFromBytes(layout.ports[k]);
    if (!PlausibleLayout(ports[k]->primitive, ports[k]->user.dims())) return nullptr;
  }
  compiled->scratchpad = DescFromBytes(layout.scratchpad);
  if (!PlausibleScratchpad(compiled->scratchpad)) return nullptr;
  compiled->impl = layout.impl;
  return compiled;
}

ConvLayout LayoutOf(const CompiledConvolution& c) {
  return ConvLayout{{BytesOf(c.a.primitive), BytesOf(c.b.primitive), BytesOf(c.c.primitive)},
                    BytesOf(c.scratchpad),
                    c.impl};
}

// Describes a loaded convolution again: the recorded implementation on the
// recorded layouts. oneDNN lists its implementations in a fixed order, so
// the walk finds the one the compile chose. Its scratchpad may come out
// other than recorded (it depends on the thread count, which the book's
// provenance also checks); one larger than the room planned for it is
// allocated by each execution (Execution's `own_scratchpad`). If this
// process has the implementation no more, running the step fails with a
// message rather than computing with other layouts than planned.
dnnl::primitive_desc DescribeRecorded(const CompiledConvolution& c) {
  memory::desc src, weights, dst;
  RoleLayouts(c, &src, &weights, &dst);
  const Port* ports[3] = {&c.a, &c.b, &c.c};
  try {
    return Describe(c.problem, src, weights, dst, [&](const dnnl::primitive_desc& pd) {
      bool same = pd.impl_info_str() == c.impl;
      for (const Port* port : ports) same = same && pd.query_md(dnnl::query::exec_arg_md, port->arg) == port->primitive;
      return same;
    });
  } catch (const dnnl::error&) {
    throw std::runtime_error("oneDNN no longer offers the convolution implementation " + c.impl +
                             " this executable was compiled for; clear the compile cache");
  }
}

// Whether `p` is pointwise: a 1x1 window at unit stride, unpadded and
// ungrouped (grouped weights carry a leading group dimension), so that each
// output element is a dot product of one input column.
bool IsPointwise(const ConvProblem& p) {
  if (p.weights.dims.size() != p.src.dims.size()) return false;
  for (size_t d = 2; d < p.weights.dims.size(); ++d) {
    if (p.weights.dims[d] != 1) return false;
  }
  for (size_t d = 0; d < p.strides.size(); ++d) {
    if (p.strides[d] != 1 || p.pad_l[d] != 0 || p.pad_r[d] != 0) return false;
  }
  return true;
}

// The primitive and its reorders, made once, by the first execution. What
// fails (a throw) leaves the convolution as it was, for the next execution
// to try again.
void Ready(CompiledConvolution& conv) {
  std::lock_guard<std::mutex> lock(conv.ready_mu);
  if (conv.ready) return;
  const dnnl::engine& engine = CpuEngine();
  if (!conv.pd) {
    conv.pd = DescribeRecorded(conv);
    conv.scratchpad = conv.pd.scratchpad_desc();
  }
  conv.primitive = dnnl::primitive(conv.pd.get());  // forward, backward data or weights, as chosen
  for (Port* port : {&conv.a, &conv.b}) {
    if (port->reordered) {
      port->reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine, port->user, engine, port->primitive));
    }
  }
  if (conv.c.reordered) {
    conv.c.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine, conv.c.primitive, engine, conv.c.user));
  }
  conv.ready = true;
}

}  // namespace

Kernel OnednnConvolutionKernel(const hlo::Instruction& i, const ConvolutionAttributes& attributes,
                               const std::vector<Slot>& in, const Slot& out, Temp* temp, ConvLayoutBook* layouts) {
  const std::optional<ConvProblem> problem = PoseConvolution(i, attributes);
  if (!problem || !temp) return nullptr;
  const std::string key = layouts ? ConvProblemKey(*problem) : std::string();
  std::shared_ptr<CompiledConvolution> compiled;
  if (const std::optional<ConvLayout> recorded = layouts ? layouts->Find(key) : std::nullopt) {
    compiled = RecordedConvolution(*problem, *recorded);
  }
  if (!compiled) {
    // An implementation that reads and writes Anvil's row-major arrays as
    // they are saves two reorders, each a pass over an activation in and
    // out: a JIT one (MobileNet's first layer, with 3 input channels), or
    // oneDNN's gemm one on a pointwise convolution, which is then a matrix
    // product per image with nothing to gather (MobileNet's 1x1 layers and
    // their gradients: the step's convolutions 2.75 -> 2.29 s, sums of
    // per-step minima). On a window larger than one element a gemm
    // implementation gathers patches first, and a reference one is slow
    // throughout: reordering to a blocked layout and back is faster.
    try {
      compiled = DescribeConvolution(*problem, /*plain_activations=*/true);
      const bool jit = compiled->impl.rfind("jit", 0) == 0;
      const bool gemm = compiled->impl.find("gemm") != std::string::npos;
      if (!jit && !(gemm && IsPointwise(*problem))) compiled.reset();
    } catch (const dnnl::error&) {
    }
    try {
      if (!compiled) compiled = DescribeConvolution(*problem, /*plain_activations=*/false);
    } catch (const dnnl::error&) {
      return nullptr;  // no oneDNN implementation for this problem: the generic kernels take it
    }
    if (layouts) layouts->Record(key, LayoutOf(*compiled));  // (replacing an implausible record)
  }
  // Inputs are reordered into the primitive's layout, the result out of it.
  for (Port* port : {&compiled->a, &compiled->b, &compiled->c}) port->reordered = port->user != port->primitive;
  // Lay out the temporaries after the temp region's start.
  int64_t top = 0;
  compiled->scratchpad_reserved = static_cast<int64_t>(compiled->scratchpad.get_size());
  compiled->scratchpad_at = Reserve(top, compiled->scratchpad.get_size());
  if (compiled->mirror_b) compiled->mirror_b->at = Reserve(top, compiled->b.user.get_size());
  for (Port* port : {&compiled->a, &compiled->b, &compiled->c}) {
    if (port->reordered) port->staged_at = Reserve(top, port->primitive.get_size());
  }
  temp->bytes = top;
  const Slot lhs = in[0], rhs = in[1], result = out, region = temp->slot;
  return [=](const Frame& frame) {
    CompiledConvolution& conv = *compiled;
    Ready(conv);
    // The primitive and its reorders run on OpenMP's team, in this
    // execution's float mode.
    MatchTeamFloatMode();
    const dnnl::engine& engine = CpuEngine();
    char* base = static_cast<char*>(frame.At(region));
    dnnl::stream stream(engine);
    void* b_source = frame.At(rhs);
    if (conv.mirror_b) {
      float* dense = reinterpret_cast<float*>(base + conv.mirror_b->at);
      WriteMirrored(*conv.mirror_b, static_cast<const float*>(b_source), dense);
      b_source = dense;
    }
    // The primitive-side memory of a port: staged in temp, or the user's own.
    auto bind = [&](const Port& port, void* user_data, memory& user, memory& staged) {
      user = memory(port.user, engine, user_data);
      staged = port.reordered ? memory(port.primitive, engine, base + port.staged_at) : user;
    };
    memory a_user, a_staged, b_user, b_staged, c_user, c_staged;
    bind(conv.a, frame.At(lhs), a_user, a_staged);
    bind(conv.b, b_source, b_user, b_staged);
    bind(conv.c, frame.At(result), c_user, c_staged);
    if (conv.a.reorder) conv.a.reorder->execute(stream, a_user, a_staged);
    if (conv.b.reorder) conv.b.reorder->execute(stream, b_user, b_staged);
    // The planned room, or (a reloaded implementation that wants more) this
    // execution's own.
    std::unique_ptr<char[]> own_scratchpad;
    char* scratchpad_data = base + conv.scratchpad_at;
    if (static_cast<int64_t>(conv.scratchpad.get_size()) > conv.scratchpad_reserved) {
      own_scratchpad.reset(new (std::align_val_t{64}) char[conv.scratchpad.get_size()]);
      scratchpad_data = own_scratchpad.get();
    }
    const memory scratchpad(conv.scratchpad, engine, scratchpad_data);
    conv.primitive.execute(stream, {{conv.a.arg, a_staged},
                                    {conv.b.arg, b_staged},
                                    {conv.c.arg, c_staged},
                                    {DNNL_ARG_SCRATCHPAD, scratchpad}});
    if (conv.c.reorder) conv.c.reorder->execute(stream, c_staged, c_user);
    stream.wait();
  };
}

}  // namespace anvil::cpu
