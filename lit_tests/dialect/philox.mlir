// Round trip of the Philox ops (philox_random, philox_uniform_int): a [3] i64 TensorFlow
// Philox state (counter low, counter high, key), a 1-D integer shape operand whose value
// decides the result dims (`?` here: only a constant shape gives static dims), and for
// philox_random a `distribution` and a `dtype` attribute.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @philox_random(
// CHECK-SAME:    %[[STATE:.*]]: tensor<3xi64>, %[[SHAPE:.*]]: tensor<2xi64>, %[[N:.*]]: tensor<1xi32>)
// CHECK:       %[[V0:.*]] = "ember.philox_random"(%[[STATE]], %[[SHAPE]]) {distribution = "uniform", dtype = f32} : (tensor<3xi64>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK:       %[[V1:.*]] = "ember.philox_random"(%[[STATE]], %[[N]]) {distribution = "bits", dtype = i32} : (tensor<3xi64>, tensor<1xi32>) -> tensor<?xi32>
// CHECK:       %[[V2:.*]] = "ember.philox_random"(%[[STATE]], %[[N]]) {distribution = "normal", dtype = f64} : (tensor<3xi64>, tensor<1xi32>) -> tensor<?xf64>
// CHECK:       %[[V3:.*]] = "ember.philox_random"(%[[STATE]], %[[N]]) {distribution = "truncated_normal", dtype = bf16} : (tensor<3xi64>, tensor<1xi32>) -> tensor<?xbf16>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]], %[[V3]]
// GENERIC-LABEL: sym_name = "philox_random"
// GENERIC:       "ember.philox_random"({{.*}}) {distribution = "uniform", dtype = f32} : (tensor<3xi64>, tensor<2xi64>) -> tensor<?x?xf32>
// GENERIC:       "ember.philox_random"({{.*}}) {distribution = "bits", dtype = i32} : (tensor<3xi64>, tensor<1xi32>) -> tensor<?xi32>
// GENERIC:       "ember.philox_random"({{.*}}) {distribution = "normal", dtype = f64} : (tensor<3xi64>, tensor<1xi32>) -> tensor<?xf64>
// GENERIC:       "ember.philox_random"({{.*}}) {distribution = "truncated_normal", dtype = bf16} : (tensor<3xi64>, tensor<1xi32>) -> tensor<?xbf16>
func.func @philox_random(%state: tensor<3xi64>, %shape: tensor<2xi64>, %n: tensor<1xi32>) -> (tensor<?x?xf32>, tensor<?xi32>, tensor<?xf64>, tensor<?xbf16>) {
  %0 = "ember.philox_random"(%state, %shape) {distribution = "uniform", dtype = f32} : (tensor<3xi64>, tensor<2xi64>) -> tensor<?x?xf32>
  %1 = "ember.philox_random"(%state, %n) {distribution = "bits", dtype = i32} : (tensor<3xi64>, tensor<1xi32>) -> tensor<?xi32>
  %2 = "ember.philox_random"(%state, %n) {distribution = "normal", dtype = f64} : (tensor<3xi64>, tensor<1xi32>) -> tensor<?xf64>
  %3 = "ember.philox_random"(%state, %n) {distribution = "truncated_normal", dtype = bf16} : (tensor<3xi64>, tensor<1xi32>) -> tensor<?xbf16>
  return %0, %1, %2, %3 : tensor<?x?xf32>, tensor<?xi32>, tensor<?xf64>, tensor<?xbf16>
}

// CHECK-LABEL: func.func @philox_uniform_int(
// CHECK-SAME:    %[[STATE:.*]]: tensor<3xi64>, %[[N:.*]]: tensor<1xi64>, %[[LO:.*]]: tensor<i64>, %[[HI:.*]]: tensor<i64>)
// CHECK:       "ember.philox_uniform_int"(%[[STATE]], %[[N]], %[[LO]], %[[HI]]) : (tensor<3xi64>, tensor<1xi64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
// GENERIC-LABEL: sym_name = "philox_uniform_int"
// GENERIC:       "ember.philox_uniform_int"({{.*}}) : (tensor<3xi64>, tensor<1xi64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
func.func @philox_uniform_int(%state: tensor<3xi64>, %n: tensor<1xi64>, %lo: tensor<i64>, %hi: tensor<i64>) -> tensor<?xi64> {
  %0 = "ember.philox_uniform_int"(%state, %n, %lo, %hi) : (tensor<3xi64>, tensor<1xi64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
