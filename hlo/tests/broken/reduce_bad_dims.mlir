func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [4] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
  return %arg0 : tensor<2xf32>
}
