// ember-drop-empty-concat-operands removes operands of size 0 along the concatenated dim
// (their bufferization fails upstream); a concat left with one operand is that operand.

// RUN: ember-opt %s -p ember-drop-empty-concat-operands | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[A:.*]]: tensor<4xf32>
// CHECK-NOT:     tensor.concat
// CHECK:         return %[[A]]
func.func @f(%a: tensor<4xf32>, %z: tensor<0xf32>) -> tensor<4xf32> {
  %c = tensor.concat dim(0) %a, %z : (tensor<4xf32>, tensor<0xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}
