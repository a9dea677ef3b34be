func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
