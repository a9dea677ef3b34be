func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %t = stablehlo.tuple %arg0 : tuple<tensor<2xf32>>
  %0 = stablehlo.get_tuple_element %t[5] : (tuple<tensor<2xf32>>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
