#include "hlo/stablehlo_parser.h"

#include <gtest/gtest.h>

#include "hlo/hlo_parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace anvil::hlo {
namespace {

std::unique_ptr<Module> ParseOne(const std::string& text) {
  auto modules = ParseStableHloText(text);
  EXPECT_TRUE(modules.ok()) << modules.status().message();
  if (!modules.ok()) return nullptr;
  EXPECT_EQ(modules->size(), 1u);
  Status verified = Verify(*modules->front());
  EXPECT_TRUE(verified.ok()) << verified.message();
  return std::move(modules->front());
}

TEST(StableHloParser, PrettyAndGenericFormsLowerAlike) {
  auto pretty = ParseOne(R"(
func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
})");
  auto generic = ParseOne(R"(
func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  "func.return"(%0) : (tensor<3x2xf32>) -> ()
})");
  ASSERT_TRUE(pretty && generic);
  EXPECT_EQ(Print(*pretty), Print(*generic));
  EXPECT_EQ(pretty->entry->root->opcode, Opcode::kTranspose);
  EXPECT_EQ(pretty->entry->root->FindAttribute("dimensions")->value, "{1,0}");
}

// The pretty form writes `algorithm = THREE_FRY`; the generic form and
// VHLO bytecode (what JAX sends a PJRT plugin) name the attribute
// rng_algorithm. Both must reach the HLO attribute, or the draws silently
// come from the default algorithm.
TEST(StableHloParser, RngBitGeneratorAlgorithmFromEitherSpelling) {
  const char* const kWords[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
  const char* const kHlo[] = {"rng_default", "rng_three_fry", "rng_philox"};
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(kWords[k]);
    auto pretty = ParseOne(std::string(R"(
func.func @main(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>) {
  %0, %1 = stablehlo.rng_bit_generator %s, algorithm = )") + kWords[k] + R"( : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
  return %0, %1 : tensor<2xui64>, tensor<4xui32>
})");
    auto generic = ParseOne(std::string(R"(
func.func @main(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>) {
  %0:2 = "stablehlo.rng_bit_generator"(%s) {rng_algorithm = #stablehlo<rng_algorithm )") + kWords[k] + R"(>} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
  "func.return"(%0#0, %0#1) : (tensor<2xui64>, tensor<4xui32>) -> ()
})");
    ASSERT_TRUE(pretty && generic);
    for (const Module* m : {pretty.get(), generic.get()}) {
      const Instruction* rng = nullptr;
      for (const auto& i : m->entry->instructions) {
        if (i->opcode == Opcode::kRngBitGenerator) rng = i.get();
      }
      ASSERT_NE(rng, nullptr);
      ASSERT_NE(rng->FindAttribute("algorithm"), nullptr);
      EXPECT_EQ(rng->FindAttribute("algorithm")->value, kHlo[k]);
    }
  }
}

TEST(StableHloParser, ReduceWithAppliesAndRegion) {
  auto m = ParseOne(R"(
func.func @main(%x: tensor<4x5xi32>) -> (tensor<5xi32>, tensor<4xi32>) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [0] : (tensor<4x5xi32>, tensor<i32>) -> tensor<5xi32>
  %1 = "stablehlo.reduce"(%x, %c) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %m = stablehlo.maximum %a, %b : tensor<i32>
      stablehlo.return %m : tensor<i32>
  }) {dimensions = array<i64: 1>} : (tensor<4x5xi32>, tensor<i32>) -> tensor<4xi32>
  return %0, %1 : tensor<5xi32>, tensor<4xi32>
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry->root->opcode, Opcode::kTuple);
  EXPECT_EQ(m->computations.size(), 3u);  // two reducers and main
}

TEST(StableHloParser, WhileCapturesOuterValues) {
  auto m = ParseOne(R"(
func.func @main() -> tensor<i64> {
  %init = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %ten = stablehlo.constant dense<10> : tensor<i64>
  %r = stablehlo.while(%i = %init) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %i, %ten : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %n = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %n : tensor<i64>
  }
  return %r : tensor<i64>
})");
  ASSERT_TRUE(m);
  const Instruction* gte = m->entry->root;
  ASSERT_EQ(gte->opcode, Opcode::kGetTupleElement);
  const Instruction* loop = gte->operands[0];
  ASSERT_EQ(loop->opcode, Opcode::kWhile);
  // The loop state carries the counter and both captured constants.
  EXPECT_EQ(loop->shape.tuple_elements().size(), 3u);
}

TEST(StableHloParser, ChecksBecomeSideEffectingCustomCalls) {
  auto m = ParseOne(R"(
func.func @t() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %b = stablehlo.add %a, %a : tensor<2xi64>
  check.expect_eq_const %b, dense<[2, 4]> : tensor<2xi64>
  func.return
})");
  ASSERT_TRUE(m);
  const Instruction* check = nullptr;
  for (const auto& i : m->entry->instructions) {
    if (i->opcode == Opcode::kCustomCall) check = i.get();
  }
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(check->FindAttribute("custom_call_target")->value, "\"check.expect_eq_const\"");
  ASSERT_EQ(check->operands.size(), 2u);
  EXPECT_EQ(check->operands[1]->literal->ToString(), "{2, 4}");
}

TEST(StableHloParser, DenseForms) {
  auto m = ParseOne(R"(
func.func @main() -> (tensor<2xf32>, tensor<2x2xbf16>, tensor<2xcomplex<f32>>, tensor<3xi1>) {
  %0 = stablehlo.constant dense<[0x7FC00000, -1.5]> : tensor<2xf32>
  %1 = stablehlo.constant dense<"0x803F0040803F0040"> : tensor<2x2xbf16>
  %2 = stablehlo.constant dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>
  %3 = stablehlo.constant dense<true> : tensor<3xi1>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2x2xbf16>, tensor<2xcomplex<f32>>, tensor<3xi1>
})");
  ASSERT_TRUE(m);
  const auto& ops = m->entry->root->operands;
  EXPECT_EQ(ops[0]->literal->ToString(), "{nan, -1.5}");
  EXPECT_EQ(ops[1]->literal->ToString(), "{{1, 2}, {1, 2}}");
  EXPECT_EQ(ops[2]->literal->ToString(), "{(1, 2), (3, -4)}");
  EXPECT_EQ(ops[3]->literal->ToString(), "{true, true, true}");
}

// A splat of more than kMaxSplatConstantElements elements lowers to a
// broadcast of its value, never to the array; smaller splats, and large
// constants of several values, stay constants.
TEST(StableHloParser, LargeSplatsBecomeBroadcasts) {
  auto m = ParseOne(R"(
func.func @main() -> (tensor<64x64xf32>, tensor<2048xbf16>, tensor<1025xcomplex<f32>>, tensor<4096xi1>, tensor<1024xf32>, tensor<2x1024xf32>) {
  %0 = stablehlo.constant dense<1.5> : tensor<64x64xf32>
  %1 = stablehlo.constant dense<"0x803F"> : tensor<2048xbf16>
  %2 = stablehlo.constant dense<(1.0, -2.0)> : tensor<1025xcomplex<f32>>
  %3 = stablehlo.constant dense<true> : tensor<4096xi1>
  %4 = stablehlo.constant dense<2.5> : tensor<1024xf32>
  %5 = stablehlo.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %6 = stablehlo.broadcast_in_dim %5, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x1024xf32>
  return %0, %1, %2, %3, %4, %6 : tensor<64x64xf32>, tensor<2048xbf16>, tensor<1025xcomplex<f32>>, tensor<4096xi1>, tensor<1024xf32>, tensor<2x1024xf32>
})");
  ASSERT_TRUE(m);
  const auto& ops = m->entry->root->operands;
  const char* values[] = {"1.5", "1", "(1, -2)", "true"};
  for (int k = 0; k < 4; ++k) {
    ASSERT_EQ(ops[k]->opcode, Opcode::kBroadcast) << k;
    const Instruction* value = ops[k]->operands.at(0);
    ASSERT_EQ(value->opcode, Opcode::kConstant) << k;
    EXPECT_EQ(value->shape.rank(), 0) << k;
    EXPECT_EQ(value->literal->ToString(), values[k]) << k;
  }
  EXPECT_EQ(ops[0]->shape.ToString(false), "f32[64,64]");
  ASSERT_EQ(ops[4]->opcode, Opcode::kConstant);  // 1024 elements: small enough to stay
  EXPECT_EQ(ops[4]->literal->element_count(), 1024);
  EXPECT_TRUE(Verify(*m).ok());
}

TEST(StableHloParser, CallsAndSplitInput) {
  auto modules = ParseStableHloText(R"(
func.func private @twice(%x: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %x, %x : tensor<f32>
  return %0 : tensor<f32>
}
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = call @twice(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
module @second {
  func.func @main() -> tensor<i32> {
    %0 = stablehlo.iota dim = 0 : tensor<i32>
    return %0 : tensor<i32>
  }
}
)");
  ASSERT_TRUE(modules.ok()) << modules.status().message();
  ASSERT_EQ(modules->size(), 2u);
  EXPECT_EQ((*modules)[0]->entry->name, "main");
  EXPECT_EQ((*modules)[0]->entry->root->opcode, Opcode::kCall);
  EXPECT_EQ((*modules)[1]->name, "second");
}

TEST(StableHloParser, SkipsLocationsAndAliases) {
  auto m = ParseOne(R"(#loc1 = loc("f.py":3:0)
#loc2 = loc("add"(#loc1))
module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32> {mhlo.sharding = "{replicated}"} loc("x")) -> (tensor<2xf32> {jax.result_info = ""}) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32> loc(#loc2)
    return %0 : tensor<2xf32> loc(#loc1)
  } loc(#loc1)
} loc(#loc1)
)");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry->root->opcode, Opcode::kAdd);
}

TEST(StableHloParser, IfAndCaseBranchesTakeTheirCaptures) {
  auto m = ParseOne(R"(
func.func @main(%p: tensor<i1>, %i: tensor<i32>, %x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = "stablehlo.if"(%p) ({
    %n = stablehlo.negate %x : tensor<f32>
    stablehlo.return %n : tensor<f32>
  }, {
    stablehlo.return %x : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  %1 = "stablehlo.case"(%i) ({
    stablehlo.return %x : tensor<f32>
  }, {
    %a = stablehlo.abs %x : tensor<f32>
    stablehlo.return %a : tensor<f32>
  }) : (tensor<i32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
})");
  ASSERT_TRUE(m);
  const Instruction* cond = m->entry->root->operands[0];
  ASSERT_EQ(cond->opcode, Opcode::kConditional);
  EXPECT_EQ(cond->operands.size(), 3u);
  EXPECT_NE(cond->FindAttribute("true_computation"), nullptr);
  const Instruction* cases = m->entry->root->operands[1];
  ASSERT_EQ(cases->opcode, Opcode::kConditional);
  EXPECT_NE(cases->FindAttribute("branch_computations"), nullptr);
}

TEST(StableHloParser, ConvolutionDotAndGatherAttributes) {
  auto m = ParseOne(R"(
func.func @main(%lhs: tensor<1x8x8x3xf32>, %rhs: tensor<3x3x3x4xf32>, %a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>)
    -> (tensor<1x4x4x4xf32>, tensor<2x3x5xf32>) {
  %0 = stablehlo.convolution(%lhs, %rhs)
    dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
    window = {stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]}
    {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
    : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32>
  %1 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1],
    precision = [DEFAULT, HIGHEST] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0, %1 : tensor<1x4x4x4xf32>, tensor<2x3x5xf32>
})");
  ASSERT_TRUE(m);
  const Instruction* conv = m->entry->root->operands[0];
  EXPECT_EQ(conv->FindAttribute("dim_labels")->value, "b01f_01io->b01f");
  EXPECT_EQ(conv->FindAttribute("window")->value, "{size=3x3 stride=2x2 pad=1_1x1_1}");
  const Instruction* dot = m->entry->root->operands[1];
  EXPECT_EQ(dot->FindAttribute("lhs_batch_dims")->value, "{0}");
  EXPECT_EQ(dot->FindAttribute("rhs_contracting_dims")->value, "{1}");
  EXPECT_EQ(dot->FindAttribute("operand_precision")->value, "{default,highest}");
}

}  // namespace
}  // namespace anvil::hlo
