stablehlo.abs %arg0 : tensor<2xf32>
