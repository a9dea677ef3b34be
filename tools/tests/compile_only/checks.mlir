// Checks are lifted into outputs, and that program is what is compiled.
func.func @negate_checked() {
  %0 = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %1 = stablehlo.negate %0 : tensor<2xf32>
  check.expect_eq_const %1, dense<[-1.0, 2.0]> : tensor<2xf32>
  func.return
}
