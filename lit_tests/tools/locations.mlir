// Diagnostics are reported at the op's own location: positions in this file by default, and the
// file named by an explicit `loc("file":line:col)` (as in traced IR that points at Python source)
// when the op carries one.

// RUN: not ember-opt %s 2>&1 | FileCheck %s

func.func @f(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // CHECK-DAG: locations.mlir:[[@LINE+1]]:8: error: 'ember.add' op operand types
  %0 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  // CHECK-DAG: {{^}}model.py:12:4: error: 'ember.sub' op operand types
  %1 = "ember.sub"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32> loc("model.py":12:4)
  return
}
