// ember-drop-empty-concat-operands removes operands of size 0 along the concatenated dim
// (their bufferization fails upstream); a concat left with one operand is that operand, and
// a concat with an empty result is a tensor.empty.

// RUN: ember-opt %s -p ember-drop-empty-concat-operands | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[A:.*]]: tensor<4xf32>
// CHECK-NOT:     tensor.concat
// CHECK:         return %[[A]]
func.func @f(%a: tensor<4xf32>, %z: tensor<0xf32>) -> tensor<4xf32> {
  %c = tensor.concat dim(0) %a, %z : (tensor<4xf32>, tensor<0xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// A result with size 0 in another dim is empty whatever the operands: a tensor.empty, its
// dynamic concatenated size the sum of the operands'.

// CHECK-LABEL: func.func @empty_rows(
// CHECK-SAME:    %[[A:.*]]: tensor<0x?xf32>, %[[B:.*]]: tensor<0x?xf32>
// CHECK-DAG:     %[[DA:.*]] = tensor.dim %[[A]]
// CHECK-DAG:     %[[DB:.*]] = tensor.dim %[[B]]
// CHECK:         %[[N:.*]] = arith.addi %[[DA]], %[[DB]]
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<0x?xf32>
// CHECK-NOT:     tensor.concat
// CHECK:         return %[[E]]
func.func @empty_rows(%a: tensor<0x?xf32>, %b: tensor<0x?xf32>) -> tensor<0x?xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<0x?xf32>, tensor<0x?xf32>) -> tensor<0x?xf32>
  return %c : tensor<0x?xf32>
}
