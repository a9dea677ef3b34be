func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.abs across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
  return %arg0 : tensor<2xf32>
}
