// A syntax error is reported as FILE:LINE:COL: error: with the line and column of the bad token,
// and ember-opt exits 1 without printing a module.

// RUN: not ember-opt %s 2>&1 | FileCheck %s
// RUN: not ember-opt %s 2>/dev/null | count 0

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // The type list is missing its closing parenthesis.
  // CHECK: parse-error.mlir:[[@LINE+2]]:40: error: expected ')'
  // CHECK-NOT: error:
  %1 = "ember.neg"(%0) : (tensor<4xf32> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
