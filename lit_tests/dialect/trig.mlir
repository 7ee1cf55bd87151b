// Round trip of tan, the inverse and hyperbolic functions (float-only unary ops) and atan2
// (a binary float op that broadcasts), static and dynamic, in f16/bf16/f32/f64.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @unary(
// CHECK:       "ember.tan"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       "ember.asin"(%{{.*}}) : (tensor<?xf64>) -> tensor<?xf64>
// CHECK:       "ember.acos"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       "ember.atan"(%{{.*}}) : (tensor<?x2xbf16>) -> tensor<?x2xbf16>
// CHECK:       "ember.sinh"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       "ember.cosh"(%{{.*}}) : (tensor<?xf64>) -> tensor<?xf64>
// CHECK:       "ember.asinh"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       "ember.acosh"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       "ember.atanh"(%{{.*}}) : (tensor<3xf16>) -> tensor<3xf16>
// GENERIC-LABEL: sym_name = "unary"
// GENERIC:       "ember.tan"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.atanh"({{.*}}) : (tensor<3xf16>) -> tensor<3xf16>
func.func @unary(%s: tensor<4xf32>, %d: tensor<?xf64>, %b: tensor<?x2xbf16>, %h: tensor<3xf16>) -> (tensor<4xf32>, tensor<?xf64>, tensor<4xf32>, tensor<?x2xbf16>, tensor<4xf32>, tensor<?xf64>, tensor<4xf32>, tensor<4xf32>, tensor<3xf16>) {
  %0 = "ember.tan"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.asin"(%d) : (tensor<?xf64>) -> tensor<?xf64>
  %2 = "ember.acos"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "ember.atan"(%b) : (tensor<?x2xbf16>) -> tensor<?x2xbf16>
  %4 = "ember.sinh"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "ember.cosh"(%d) : (tensor<?xf64>) -> tensor<?xf64>
  %6 = "ember.asinh"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %7 = "ember.acosh"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %8 = "ember.atanh"(%h) : (tensor<3xf16>) -> tensor<3xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4xf32>, tensor<?xf64>, tensor<4xf32>, tensor<?x2xbf16>, tensor<4xf32>, tensor<?xf64>, tensor<4xf32>, tensor<4xf32>, tensor<3xf16>
}

// CHECK-LABEL: func.func @atan2(
// CHECK:       "ember.atan2"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:       "ember.atan2"(%{{.*}}, %{{.*}}) : (tensor<?xf64>, tensor<f64>) -> tensor<?xf64>
// GENERIC-LABEL: sym_name = "atan2"
// GENERIC:       "ember.atan2"({{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @atan2(%y: tensor<2x3xf32>, %x: tensor<3xf32>, %a: tensor<?xf64>, %b: tensor<f64>) -> (tensor<2x3xf32>, tensor<?xf64>) {
  %0 = "ember.atan2"(%y, %x) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "ember.atan2"(%a, %b) : (tensor<?xf64>, tensor<f64>) -> tensor<?xf64>
  return %0, %1 : tensor<2x3xf32>, tensor<?xf64>
}
