// Round trip of the comparisons (equal, not_equal, less, less_equal, greater, greater_equal) and
// the logical ops (logical_and, logical_or, logical_not): results are i1 with the broadcast shape
// of the operands, static or dynamic (`?`); equality accepts every dtype, strings included.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @equal(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<2x!ember.string>, %[[T:.*]]: tensor<!ember.string>, %[[B:.*]]: tensor<?xi1>)
// CHECK:       %[[V0:.*]] = "ember.equal"(%[[X]], %[[X]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK:       %[[V1:.*]] = "ember.equal"(%[[S]], %[[T]]) : (tensor<2x!ember.string>, tensor<!ember.string>) -> tensor<2xi1>
// CHECK:       %[[V2:.*]] = "ember.equal"(%[[B]], %[[B]]) : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]] : tensor<4xi1>, tensor<2xi1>, tensor<?xi1>
// GENERIC-LABEL: sym_name = "equal"
// GENERIC:       "ember.equal"({{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// GENERIC:       "ember.equal"({{.*}}) : (tensor<2x!ember.string>, tensor<!ember.string>) -> tensor<2xi1>
// GENERIC:       "ember.equal"({{.*}}) : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
func.func @equal(%x: tensor<4xf32>, %s: tensor<2x!ember.string>, %t: tensor<!ember.string>, %b: tensor<?xi1>) -> (tensor<4xi1>, tensor<2xi1>, tensor<?xi1>) {
  %0 = "ember.equal"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = "ember.equal"(%s, %t) : (tensor<2x!ember.string>, tensor<!ember.string>) -> tensor<2xi1>
  %2 = "ember.equal"(%b, %b) : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<2xi1>, tensor<?xi1>
}

// CHECK-LABEL: func.func @not_equal(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi32>, %[[D:.*]]: tensor<?x3xbf16>, %[[R:.*]]: tensor<3xbf16>)
// CHECK:       %[[V0:.*]] = "ember.not_equal"(%[[X]], %[[X]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
// CHECK:       %[[V1:.*]] = "ember.not_equal"(%[[D]], %[[R]]) : (tensor<?x3xbf16>, tensor<3xbf16>) -> tensor<?x3xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi1>, tensor<?x3xi1>
// GENERIC-LABEL: sym_name = "not_equal"
// GENERIC:       "ember.not_equal"({{.*}}) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
// GENERIC:       "ember.not_equal"({{.*}}) : (tensor<?x3xbf16>, tensor<3xbf16>) -> tensor<?x3xi1>
func.func @not_equal(%x: tensor<4xi32>, %d: tensor<?x3xbf16>, %r: tensor<3xbf16>) -> (tensor<4xi1>, tensor<?x3xi1>) {
  %0 = "ember.not_equal"(%x, %x) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %1 = "ember.not_equal"(%d, %r) : (tensor<?x3xbf16>, tensor<3xbf16>) -> tensor<?x3xi1>
  return %0, %1 : tensor<4xi1>, tensor<?x3xi1>
}

// CHECK-LABEL: func.func @less(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<f32>, %[[D:.*]]: tensor<?xui8>)
// CHECK:       %[[V0:.*]] = "ember.less"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
// CHECK:       %[[V1:.*]] = "ember.less"(%[[D]], %[[D]]) : (tensor<?xui8>, tensor<?xui8>) -> tensor<?xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi1>, tensor<?xi1>
// GENERIC-LABEL: sym_name = "less"
// GENERIC:       "ember.less"({{.*}}) : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
// GENERIC:       "ember.less"({{.*}}) : (tensor<?xui8>, tensor<?xui8>) -> tensor<?xi1>
func.func @less(%x: tensor<4xf32>, %y: tensor<f32>, %d: tensor<?xui8>) -> (tensor<4xi1>, tensor<?xi1>) {
  %0 = "ember.less"(%x, %y) : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %1 = "ember.less"(%d, %d) : (tensor<?xui8>, tensor<?xui8>) -> tensor<?xi1>
  return %0, %1 : tensor<4xi1>, tensor<?xi1>
}

// CHECK-LABEL: func.func @less_equal(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?x?xi64>, %[[E:.*]]: tensor<1x?xi64>)
// CHECK:       %[[V0:.*]] = "ember.less_equal"(%[[X]], %[[X]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK:       %[[V1:.*]] = "ember.less_equal"(%[[D]], %[[E]]) : (tensor<?x?xi64>, tensor<1x?xi64>) -> tensor<?x?xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi1>, tensor<?x?xi1>
// GENERIC-LABEL: sym_name = "less_equal"
// GENERIC:       "ember.less_equal"({{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// GENERIC:       "ember.less_equal"({{.*}}) : (tensor<?x?xi64>, tensor<1x?xi64>) -> tensor<?x?xi1>
func.func @less_equal(%x: tensor<4xf32>, %d: tensor<?x?xi64>, %e: tensor<1x?xi64>) -> (tensor<4xi1>, tensor<?x?xi1>) {
  %0 = "ember.less_equal"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = "ember.less_equal"(%d, %e) : (tensor<?x?xi64>, tensor<1x?xi64>) -> tensor<?x?xi1>
  return %0, %1 : tensor<4xi1>, tensor<?x?xi1>
}

// CHECK-LABEL: func.func @greater(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[COL:.*]]: tensor<2x1xf64>, %[[ROW:.*]]: tensor<?xf64>)
// CHECK:       %[[V0:.*]] = "ember.greater"(%[[X]], %[[X]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK:       %[[V1:.*]] = "ember.greater"(%[[COL]], %[[ROW]]) : (tensor<2x1xf64>, tensor<?xf64>) -> tensor<2x?xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi1>, tensor<2x?xi1>
// GENERIC-LABEL: sym_name = "greater"
// GENERIC:       "ember.greater"({{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// GENERIC:       "ember.greater"({{.*}}) : (tensor<2x1xf64>, tensor<?xf64>) -> tensor<2x?xi1>
func.func @greater(%x: tensor<4xf32>, %col: tensor<2x1xf64>, %row: tensor<?xf64>) -> (tensor<4xi1>, tensor<2x?xi1>) {
  %0 = "ember.greater"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = "ember.greater"(%col, %row) : (tensor<2x1xf64>, tensor<?xf64>) -> tensor<2x?xi1>
  return %0, %1 : tensor<4xi1>, tensor<2x?xi1>
}

// CHECK-LABEL: func.func @greater_equal(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi8>, %[[D:.*]]: tensor<?xf16>)
// CHECK:       %[[V0:.*]] = "ember.greater_equal"(%[[X]], %[[X]]) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
// CHECK:       %[[V1:.*]] = "ember.greater_equal"(%[[D]], %[[D]]) : (tensor<?xf16>, tensor<?xf16>) -> tensor<?xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi1>, tensor<?xi1>
// GENERIC-LABEL: sym_name = "greater_equal"
// GENERIC:       "ember.greater_equal"({{.*}}) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
// GENERIC:       "ember.greater_equal"({{.*}}) : (tensor<?xf16>, tensor<?xf16>) -> tensor<?xi1>
func.func @greater_equal(%x: tensor<4xi8>, %d: tensor<?xf16>) -> (tensor<4xi1>, tensor<?xi1>) {
  %0 = "ember.greater_equal"(%x, %x) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
  %1 = "ember.greater_equal"(%d, %d) : (tensor<?xf16>, tensor<?xf16>) -> tensor<?xi1>
  return %0, %1 : tensor<4xi1>, tensor<?xi1>
}

// CHECK-LABEL: func.func @logical_and(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi1>, %[[D:.*]]: tensor<?x4xi1>, %[[S:.*]]: tensor<i1>)
// CHECK:       %[[V0:.*]] = "ember.logical_and"(%[[X]], %[[X]]) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK:       %[[V1:.*]] = "ember.logical_and"(%[[D]], %[[S]]) : (tensor<?x4xi1>, tensor<i1>) -> tensor<?x4xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi1>, tensor<?x4xi1>
// GENERIC-LABEL: sym_name = "logical_and"
// GENERIC:       "ember.logical_and"({{.*}}) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// GENERIC:       "ember.logical_and"({{.*}}) : (tensor<?x4xi1>, tensor<i1>) -> tensor<?x4xi1>
func.func @logical_and(%x: tensor<4xi1>, %d: tensor<?x4xi1>, %s: tensor<i1>) -> (tensor<4xi1>, tensor<?x4xi1>) {
  %0 = "ember.logical_and"(%x, %x) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = "ember.logical_and"(%d, %s) : (tensor<?x4xi1>, tensor<i1>) -> tensor<?x4xi1>
  return %0, %1 : tensor<4xi1>, tensor<?x4xi1>
}

// CHECK-LABEL: func.func @logical_or(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi1>, %[[D:.*]]: tensor<?x1xi1>, %[[R:.*]]: tensor<4xi1>)
// CHECK:       %[[V0:.*]] = "ember.logical_or"(%[[X]], %[[X]]) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK:       %[[V1:.*]] = "ember.logical_or"(%[[D]], %[[R]]) : (tensor<?x1xi1>, tensor<4xi1>) -> tensor<?x4xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi1>, tensor<?x4xi1>
// GENERIC-LABEL: sym_name = "logical_or"
// GENERIC:       "ember.logical_or"({{.*}}) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// GENERIC:       "ember.logical_or"({{.*}}) : (tensor<?x1xi1>, tensor<4xi1>) -> tensor<?x4xi1>
func.func @logical_or(%x: tensor<4xi1>, %d: tensor<?x1xi1>, %r: tensor<4xi1>) -> (tensor<4xi1>, tensor<?x4xi1>) {
  %0 = "ember.logical_or"(%x, %x) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = "ember.logical_or"(%d, %r) : (tensor<?x1xi1>, tensor<4xi1>) -> tensor<?x4xi1>
  return %0, %1 : tensor<4xi1>, tensor<?x4xi1>
}

// Comparisons compose with the logical ops: (a < b) and not (a == b).
// CHECK-LABEL: func.func @compare_then_combine(
// CHECK-SAME:    %[[A:.*]]: tensor<?xi32>, %[[B:.*]]: tensor<?xi32>)
// CHECK:       %[[LT:.*]] = "ember.less"(%[[A]], %[[B]]) : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi1>
// CHECK:       %[[EQ:.*]] = "ember.equal"(%[[A]], %[[B]]) : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi1>
// CHECK:       %[[NE:.*]] = "ember.logical_not"(%[[EQ]]) : (tensor<?xi1>) -> tensor<?xi1>
// CHECK:       %[[BOTH:.*]] = "ember.logical_and"(%[[LT]], %[[NE]]) : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
// CHECK:       return %[[BOTH]] : tensor<?xi1>
// GENERIC-LABEL: sym_name = "compare_then_combine"
// GENERIC:       "ember.less"({{.*}}) : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi1>
// GENERIC:       "ember.equal"({{.*}}) : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi1>
// GENERIC:       "ember.logical_not"({{.*}}) : (tensor<?xi1>) -> tensor<?xi1>
// GENERIC:       "ember.logical_and"({{.*}}) : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
func.func @compare_then_combine(%a: tensor<?xi32>, %b: tensor<?xi32>) -> tensor<?xi1> {
  %lt = "ember.less"(%a, %b) : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi1>
  %eq = "ember.equal"(%a, %b) : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi1>
  %ne = "ember.logical_not"(%eq) : (tensor<?xi1>) -> tensor<?xi1>
  %both = "ember.logical_and"(%lt, %ne) : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
  return %both : tensor<?xi1>
}
