// Round trip of the bitwise ops on integers (bitwise_and, bitwise_or, bitwise_xor, left_shift,
// right_shift, invert): numpy broadcasting and one integer dtype for both operands (float and
// bool operands are rejected: invalid.mlir).

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @bits(
// CHECK:       "ember.bitwise_and"(%{{.*}}, %{{.*}}) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
// CHECK:       "ember.bitwise_or"(%{{.*}}, %{{.*}}) : (tensor<?x4xui8>, tensor<4xui8>) -> tensor<?x4xui8>
// CHECK:       "ember.bitwise_xor"(%{{.*}}, %{{.*}}) : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
// CHECK:       "ember.left_shift"(%{{.*}}, %{{.*}}) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:       "ember.right_shift"(%{{.*}}, %{{.*}}) : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
// CHECK:       "ember.invert"(%{{.*}}) : (tensor<?x4xui8>) -> tensor<?x4xui8>
// GENERIC-LABEL: sym_name = "bits"
// GENERIC:       "ember.bitwise_and"({{.*}}) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
// GENERIC:       "ember.left_shift"({{.*}}) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// GENERIC:       "ember.invert"({{.*}}) : (tensor<?x4xui8>) -> tensor<?x4xui8>
func.func @bits(%a: tensor<4xi32>, %s: tensor<i32>, %u: tensor<?x4xui8>, %r: tensor<4xui8>,
                %l: tensor<2x3xi64>, %row: tensor<3xi64>, %b: tensor<4xi8>, %n: tensor<i8>)
    -> (tensor<4xi32>, tensor<?x4xui8>, tensor<2x3xi64>, tensor<4xi32>, tensor<4xi8>, tensor<?x4xui8>) {
  %0 = "ember.bitwise_and"(%a, %s) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %1 = "ember.bitwise_or"(%u, %r) : (tensor<?x4xui8>, tensor<4xui8>) -> tensor<?x4xui8>
  %2 = "ember.bitwise_xor"(%l, %row) : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %3 = "ember.left_shift"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %4 = "ember.right_shift"(%b, %n) : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
  %5 = "ember.invert"(%u) : (tensor<?x4xui8>) -> tensor<?x4xui8>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi32>, tensor<?x4xui8>, tensor<2x3xi64>, tensor<4xi32>, tensor<4xi8>, tensor<?x4xui8>
}
