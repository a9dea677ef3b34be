func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.slice %arg0 [1:5] : (tensor<2xf32>) -> tensor<4xf32>
  return %arg0 : tensor<2xf32>
}
