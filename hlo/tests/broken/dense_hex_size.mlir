func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.constant dense<"0x0000"> : tensor<2xf32>
  return %0 : tensor<2xf32>
}
