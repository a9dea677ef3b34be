func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.transpose"(%arg0) {permutation = array<i64: 0} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
