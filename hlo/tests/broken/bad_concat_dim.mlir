func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.concatenate %arg0, %arg0, dim = 3 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %arg0 : tensor<2xf32>
}
