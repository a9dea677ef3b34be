func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %arg0, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}
