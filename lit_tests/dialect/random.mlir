// Round trip of the stateless random ops (random_uniform, random_normal): a static [2] seed of
// i32 or i64, any float dtype, and a `shape` attribute (rank 0 and zero-size included). The
// result shape comes from the attribute, so it is always static; a dynamic seed is rejected
// (see invalid.mlir).

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @random_uniform(
// CHECK-SAME:    %[[SEED:.*]]: tensor<2xi64>, %[[SEED32:.*]]: tensor<2xi32>)
// CHECK:       %[[V0:.*]] = "ember.random_uniform"(%[[SEED]]) {dtype = f32, maxval = 1.000000e+00 : f64, minval = 0.000000e+00 : f64, shape = array<i64: 2, 3>} : (tensor<2xi64>) -> tensor<2x3xf32>
// CHECK:       %[[V1:.*]] = "ember.random_uniform"(%[[SEED32]]) {dtype = bf16, maxval = 1.000000e+01 : f64, minval = -1.000000e+01 : f64, shape = array<i64: 5>} : (tensor<2xi32>) -> tensor<5xbf16>
// CHECK:       %[[V2:.*]] = "ember.random_uniform"(%[[SEED]]) {dtype = f64, maxval = 1.000000e+00 : f64, minval = 0.000000e+00 : f64, shape = array<i64>} : (tensor<2xi64>) -> tensor<f64>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]] : tensor<2x3xf32>, tensor<5xbf16>, tensor<f64>
// GENERIC-LABEL: sym_name = "random_uniform"
// GENERIC:       "ember.random_uniform"({{.*}}) {dtype = f32, maxval = 1.000000e+00 : f64, minval = 0.000000e+00 : f64, shape = array<i64: 2, 3>} : (tensor<2xi64>) -> tensor<2x3xf32>
// GENERIC:       "ember.random_uniform"({{.*}}) {dtype = bf16, maxval = 1.000000e+01 : f64, minval = -1.000000e+01 : f64, shape = array<i64: 5>} : (tensor<2xi32>) -> tensor<5xbf16>
// GENERIC:       "ember.random_uniform"({{.*}}) {dtype = f64, maxval = 1.000000e+00 : f64, minval = 0.000000e+00 : f64, shape = array<i64>} : (tensor<2xi64>) -> tensor<f64>
func.func @random_uniform(%seed: tensor<2xi64>, %seed32: tensor<2xi32>) -> (tensor<2x3xf32>, tensor<5xbf16>, tensor<f64>) {
  %0 = "ember.random_uniform"(%seed) {dtype = f32, maxval = 1.0 : f64, minval = 0.0 : f64, shape = array<i64: 2, 3>} : (tensor<2xi64>) -> tensor<2x3xf32>
  %1 = "ember.random_uniform"(%seed32) {dtype = bf16, maxval = 10.0 : f64, minval = -10.0 : f64, shape = array<i64: 5>} : (tensor<2xi32>) -> tensor<5xbf16>
  %2 = "ember.random_uniform"(%seed) {dtype = f64, maxval = 1.0 : f64, minval = 0.0 : f64, shape = array<i64>} : (tensor<2xi64>) -> tensor<f64>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<5xbf16>, tensor<f64>
}

// CHECK-LABEL: func.func @random_normal(
// CHECK-SAME:    %[[SEED:.*]]: tensor<2xi64>)
// CHECK:       %[[V0:.*]] = "ember.random_normal"(%[[SEED]]) {dtype = f32, mean = 0.000000e+00 : f64, shape = array<i64: 4>, stddev = 1.000000e+00 : f64} : (tensor<2xi64>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.random_normal"(%[[SEED]]) {dtype = f16, mean = 5.000000e+00 : f64, shape = array<i64: 2, 0>, stddev = 5.000000e-01 : f64} : (tensor<2xi64>) -> tensor<2x0xf16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<2x0xf16>
// GENERIC-LABEL: sym_name = "random_normal"
// GENERIC:       "ember.random_normal"({{.*}}) {dtype = f32, mean = 0.000000e+00 : f64, shape = array<i64: 4>, stddev = 1.000000e+00 : f64} : (tensor<2xi64>) -> tensor<4xf32>
// GENERIC:       "ember.random_normal"({{.*}}) {dtype = f16, mean = 5.000000e+00 : f64, shape = array<i64: 2, 0>, stddev = 5.000000e-01 : f64} : (tensor<2xi64>) -> tensor<2x0xf16>
func.func @random_normal(%seed: tensor<2xi64>) -> (tensor<4xf32>, tensor<2x0xf16>) {
  %0 = "ember.random_normal"(%seed) {dtype = f32, mean = 0.0 : f64, shape = array<i64: 4>, stddev = 1.0 : f64} : (tensor<2xi64>) -> tensor<4xf32>
  %1 = "ember.random_normal"(%seed) {dtype = f16, mean = 5.0 : f64, shape = array<i64: 2, 0>, stddev = 0.5 : f64} : (tensor<2xi64>) -> tensor<2x0xf16>
  return %0, %1 : tensor<4xf32>, tensor<2x0xf16>
}

// The shape as an operand (em.stateless_random_uniform(em.shape(x), seed)): `?` where the
// operand's value is not known.
// CHECK-LABEL: func.func @shape_operand(
// CHECK:       "ember.dynamic_random_uniform"(%{{.*}}, %{{.*}}) {dtype = f32, maxval = 1.000000e+00 : f64, minval = 0.000000e+00 : f64} : (tensor<2xi64>, tensor<2xi32>) -> tensor<?x?xf32>
// CHECK:       "ember.dynamic_random_normal"(%{{.*}}, %{{.*}}) {dtype = f64, mean = 0.000000e+00 : f64, stddev = 1.000000e+00 : f64} : (tensor<2xi64>, tensor<2xi32>) -> tensor<?x?xf64>
// GENERIC-LABEL: sym_name = "shape_operand"
// GENERIC:       "ember.dynamic_random_uniform"
func.func @shape_operand(%seed: tensor<2xi64>, %s: tensor<2xi32>) -> (tensor<?x?xf32>, tensor<?x?xf64>) {
  %u = "ember.dynamic_random_uniform"(%seed, %s) {dtype = f32, maxval = 1.0 : f64, minval = 0.0 : f64} : (tensor<2xi64>, tensor<2xi32>) -> tensor<?x?xf32>
  %n = "ember.dynamic_random_normal"(%seed, %s) {dtype = f64, mean = 0.0 : f64, stddev = 1.0 : f64} : (tensor<2xi64>, tensor<2xi32>) -> tensor<?x?xf64>
  return %u, %n : tensor<?x?xf32>, tensor<?x?xf64>
}
