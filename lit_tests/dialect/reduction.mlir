// Round trip of the reductions (reduce_sum, reduce_prod, reduce_mean, reduce_max, reduce_min,
// reduce_any, reduce_all) with and without keepdims, over static and dynamic (`?`) dims, negative
// and empty axes; and of argmax/argmin (i32 or i64 indices, negative axis, dynamic dims).

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @reduce_sum(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[D:.*]]: tensor<?x3x?xi32>)
// CHECK:       %[[V0:.*]] = "ember.reduce_sum"(%[[X]]) {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK:       %[[V1:.*]] = "ember.reduce_sum"(%[[D]]) {axes = array<i64: 1, -1>, keepdims = true} : (tensor<?x3x?xi32>) -> tensor<?x1x1xi32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<2xf32>, tensor<?x1x1xi32>
// GENERIC-LABEL: sym_name = "reduce_sum"
// GENERIC:       "ember.reduce_sum"({{.*}}) {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
// GENERIC:       "ember.reduce_sum"({{.*}}) {axes = array<i64: 1, -1>, keepdims = true} : (tensor<?x3x?xi32>) -> tensor<?x1x1xi32>
func.func @reduce_sum(%x: tensor<2x3xf32>, %d: tensor<?x3x?xi32>) -> (tensor<2xf32>, tensor<?x1x1xi32>) {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %1 = "ember.reduce_sum"(%d) {axes = array<i64: 1, -1>, keepdims = true} : (tensor<?x3x?xi32>) -> tensor<?x1x1xi32>
  return %0, %1 : tensor<2xf32>, tensor<?x1x1xi32>
}

// Reducing every axis gives a scalar (or all-ones dims with keepdims).
// CHECK-LABEL: func.func @reduce_prod(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xi32>, %[[D:.*]]: tensor<?x?xf64>)
// CHECK:       %[[V0:.*]] = "ember.reduce_prod"(%[[X]]) {axes = array<i64: 0, 1>, keepdims = true} : (tensor<2x3xi32>) -> tensor<1x1xi32>
// CHECK:       %[[V1:.*]] = "ember.reduce_prod"(%[[D]]) {axes = array<i64: 0, 1>, keepdims = false} : (tensor<?x?xf64>) -> tensor<f64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<1x1xi32>, tensor<f64>
// GENERIC-LABEL: sym_name = "reduce_prod"
// GENERIC:       "ember.reduce_prod"({{.*}}) {axes = array<i64: 0, 1>, keepdims = true} : (tensor<2x3xi32>) -> tensor<1x1xi32>
// GENERIC:       "ember.reduce_prod"({{.*}}) {axes = array<i64: 0, 1>, keepdims = false} : (tensor<?x?xf64>) -> tensor<f64>
func.func @reduce_prod(%x: tensor<2x3xi32>, %d: tensor<?x?xf64>) -> (tensor<1x1xi32>, tensor<f64>) {
  %0 = "ember.reduce_prod"(%x) {axes = array<i64: 0, 1>, keepdims = true} : (tensor<2x3xi32>) -> tensor<1x1xi32>
  %1 = "ember.reduce_prod"(%d) {axes = array<i64: 0, 1>, keepdims = false} : (tensor<?x?xf64>) -> tensor<f64>
  return %0, %1 : tensor<1x1xi32>, tensor<f64>
}

// CHECK-LABEL: func.func @reduce_mean(
// CHECK-SAME:    %[[X:.*]]: tensor<?x8xf32>, %[[I:.*]]: tensor<4x5xi64>)
// CHECK:       %[[V0:.*]] = "ember.reduce_mean"(%[[X]]) {axes = array<i64: 0>, keepdims = false} : (tensor<?x8xf32>) -> tensor<8xf32>
// CHECK:       %[[V1:.*]] = "ember.reduce_mean"(%[[I]]) {axes = array<i64: -1>, keepdims = true} : (tensor<4x5xi64>) -> tensor<4x1xi64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<8xf32>, tensor<4x1xi64>
// GENERIC-LABEL: sym_name = "reduce_mean"
// GENERIC:       "ember.reduce_mean"({{.*}}) {axes = array<i64: 0>, keepdims = false} : (tensor<?x8xf32>) -> tensor<8xf32>
// GENERIC:       "ember.reduce_mean"({{.*}}) {axes = array<i64: -1>, keepdims = true} : (tensor<4x5xi64>) -> tensor<4x1xi64>
func.func @reduce_mean(%x: tensor<?x8xf32>, %i: tensor<4x5xi64>) -> (tensor<8xf32>, tensor<4x1xi64>) {
  %0 = "ember.reduce_mean"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<?x8xf32>) -> tensor<8xf32>
  %1 = "ember.reduce_mean"(%i) {axes = array<i64: -1>, keepdims = true} : (tensor<4x5xi64>) -> tensor<4x1xi64>
  return %0, %1 : tensor<8xf32>, tensor<4x1xi64>
}

// CHECK-LABEL: func.func @reduce_max(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[D:.*]]: tensor<?x3xbf16>)
// CHECK:       %[[V0:.*]] = "ember.reduce_max"(%[[X]]) {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK:       %[[V1:.*]] = "ember.reduce_max"(%[[D]]) {axes = array<i64: 1>, keepdims = false} : (tensor<?x3xbf16>) -> tensor<?xbf16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<2x1xf32>, tensor<?xbf16>
// GENERIC-LABEL: sym_name = "reduce_max"
// GENERIC:       "ember.reduce_max"({{.*}}) {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// GENERIC:       "ember.reduce_max"({{.*}}) {axes = array<i64: 1>, keepdims = false} : (tensor<?x3xbf16>) -> tensor<?xbf16>
func.func @reduce_max(%x: tensor<2x3xf32>, %d: tensor<?x3xbf16>) -> (tensor<2x1xf32>, tensor<?xbf16>) {
  %0 = "ember.reduce_max"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %1 = "ember.reduce_max"(%d) {axes = array<i64: 1>, keepdims = false} : (tensor<?x3xbf16>) -> tensor<?xbf16>
  return %0, %1 : tensor<2x1xf32>, tensor<?xbf16>
}

// CHECK-LABEL: func.func @reduce_min(
// CHECK-SAME:    %[[X:.*]]: tensor<5xi64>, %[[D:.*]]: tensor<3x?xui8>)
// CHECK:       %[[V0:.*]] = "ember.reduce_min"(%[[X]]) {axes = array<i64: 0>, keepdims = false} : (tensor<5xi64>) -> tensor<i64>
// CHECK:       %[[V1:.*]] = "ember.reduce_min"(%[[D]]) {axes = array<i64: -1>, keepdims = false} : (tensor<3x?xui8>) -> tensor<3xui8>
// CHECK:       return %[[V0]], %[[V1]] : tensor<i64>, tensor<3xui8>
// GENERIC-LABEL: sym_name = "reduce_min"
// GENERIC:       "ember.reduce_min"({{.*}}) {axes = array<i64: 0>, keepdims = false} : (tensor<5xi64>) -> tensor<i64>
// GENERIC:       "ember.reduce_min"({{.*}}) {axes = array<i64: -1>, keepdims = false} : (tensor<3x?xui8>) -> tensor<3xui8>
func.func @reduce_min(%x: tensor<5xi64>, %d: tensor<3x?xui8>) -> (tensor<i64>, tensor<3xui8>) {
  %0 = "ember.reduce_min"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<5xi64>) -> tensor<i64>
  %1 = "ember.reduce_min"(%d) {axes = array<i64: -1>, keepdims = false} : (tensor<3x?xui8>) -> tensor<3xui8>
  return %0, %1 : tensor<i64>, tensor<3xui8>
}

// CHECK-LABEL: func.func @reduce_any(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi1>, %[[D:.*]]: tensor<?x4xi1>)
// CHECK:       %[[V0:.*]] = "ember.reduce_any"(%[[X]]) {axes = array<i64: 0>, keepdims = false} : (tensor<4xi1>) -> tensor<i1>
// CHECK:       %[[V1:.*]] = "ember.reduce_any"(%[[D]]) {axes = array<i64: 1>, keepdims = true} : (tensor<?x4xi1>) -> tensor<?x1xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<i1>, tensor<?x1xi1>
// GENERIC-LABEL: sym_name = "reduce_any"
// GENERIC:       "ember.reduce_any"({{.*}}) {axes = array<i64: 0>, keepdims = false} : (tensor<4xi1>) -> tensor<i1>
// GENERIC:       "ember.reduce_any"({{.*}}) {axes = array<i64: 1>, keepdims = true} : (tensor<?x4xi1>) -> tensor<?x1xi1>
func.func @reduce_any(%x: tensor<4xi1>, %d: tensor<?x4xi1>) -> (tensor<i1>, tensor<?x1xi1>) {
  %0 = "ember.reduce_any"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<4xi1>) -> tensor<i1>
  %1 = "ember.reduce_any"(%d) {axes = array<i64: 1>, keepdims = true} : (tensor<?x4xi1>) -> tensor<?x1xi1>
  return %0, %1 : tensor<i1>, tensor<?x1xi1>
}

// CHECK-LABEL: func.func @reduce_all(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi1>, %[[D:.*]]: tensor<?x?xi1>)
// CHECK:       %[[V0:.*]] = "ember.reduce_all"(%[[X]]) {axes = array<i64: 0>, keepdims = false} : (tensor<4xi1>) -> tensor<i1>
// CHECK:       %[[V1:.*]] = "ember.reduce_all"(%[[D]]) {axes = array<i64: 0>, keepdims = false} : (tensor<?x?xi1>) -> tensor<?xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<i1>, tensor<?xi1>
// GENERIC-LABEL: sym_name = "reduce_all"
// GENERIC:       "ember.reduce_all"({{.*}}) {axes = array<i64: 0>, keepdims = false} : (tensor<4xi1>) -> tensor<i1>
// GENERIC:       "ember.reduce_all"({{.*}}) {axes = array<i64: 0>, keepdims = false} : (tensor<?x?xi1>) -> tensor<?xi1>
func.func @reduce_all(%x: tensor<4xi1>, %d: tensor<?x?xi1>) -> (tensor<i1>, tensor<?xi1>) {
  %0 = "ember.reduce_all"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<4xi1>) -> tensor<i1>
  %1 = "ember.reduce_all"(%d) {axes = array<i64: 0>, keepdims = false} : (tensor<?x?xi1>) -> tensor<?xi1>
  return %0, %1 : tensor<i1>, tensor<?xi1>
}

// An empty axes list reduces nothing; a zero-size dim can still be reduced.
// CHECK-LABEL: func.func @reduce_empty_axes_and_dims(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[E:.*]]: tensor<0x3xf32>)
// CHECK:       %[[V0:.*]] = "ember.reduce_sum"(%[[X]]) {axes = array<i64>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:       %[[V1:.*]] = "ember.reduce_max"(%[[E]]) {axes = array<i64: 0>, keepdims = false} : (tensor<0x3xf32>) -> tensor<3xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<2x3xf32>, tensor<3xf32>
// GENERIC-LABEL: sym_name = "reduce_empty_axes_and_dims"
// GENERIC:       "ember.reduce_sum"({{.*}}) {axes = array<i64>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// GENERIC:       "ember.reduce_max"({{.*}}) {axes = array<i64: 0>, keepdims = false} : (tensor<0x3xf32>) -> tensor<3xf32>
func.func @reduce_empty_axes_and_dims(%x: tensor<2x3xf32>, %e: tensor<0x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "ember.reduce_max"(%e) {axes = array<i64: 0>, keepdims = false} : (tensor<0x3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @argmax(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[D:.*]]: tensor<?x5xi32>)
// CHECK:       %[[V0:.*]] = "ember.argmax"(%[[X]]) {axis = 1 : i64, dtype = i64} : (tensor<2x3xf32>) -> tensor<2xi64>
// CHECK:       %[[V1:.*]] = "ember.argmax"(%[[D]]) {axis = 0 : i64, dtype = i32} : (tensor<?x5xi32>) -> tensor<5xi32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<2xi64>, tensor<5xi32>
// GENERIC-LABEL: sym_name = "argmax"
// GENERIC:       "ember.argmax"({{.*}}) {axis = 1 : i64, dtype = i64} : (tensor<2x3xf32>) -> tensor<2xi64>
// GENERIC:       "ember.argmax"({{.*}}) {axis = 0 : i64, dtype = i32} : (tensor<?x5xi32>) -> tensor<5xi32>
func.func @argmax(%x: tensor<2x3xf32>, %d: tensor<?x5xi32>) -> (tensor<2xi64>, tensor<5xi32>) {
  %0 = "ember.argmax"(%x) {axis = 1 : i64, dtype = i64} : (tensor<2x3xf32>) -> tensor<2xi64>
  %1 = "ember.argmax"(%d) {axis = 0 : i64, dtype = i32} : (tensor<?x5xi32>) -> tensor<5xi32>
  return %0, %1 : tensor<2xi64>, tensor<5xi32>
}

// CHECK-LABEL: func.func @argmin(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi32>, %[[D:.*]]: tensor<3x?x2xf64>)
// CHECK:       %[[V0:.*]] = "ember.argmin"(%[[X]]) {axis = 0 : i64, dtype = i32} : (tensor<4xi32>) -> tensor<i32>
// CHECK:       %[[V1:.*]] = "ember.argmin"(%[[D]]) {axis = -1 : i64, dtype = i64} : (tensor<3x?x2xf64>) -> tensor<3x?xi64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<i32>, tensor<3x?xi64>
// GENERIC-LABEL: sym_name = "argmin"
// GENERIC:       "ember.argmin"({{.*}}) {axis = 0 : i64, dtype = i32} : (tensor<4xi32>) -> tensor<i32>
// GENERIC:       "ember.argmin"({{.*}}) {axis = -1 : i64, dtype = i64} : (tensor<3x?x2xf64>) -> tensor<3x?xi64>
func.func @argmin(%x: tensor<4xi32>, %d: tensor<3x?x2xf64>) -> (tensor<i32>, tensor<3x?xi64>) {
  %0 = "ember.argmin"(%x) {axis = 0 : i64, dtype = i32} : (tensor<4xi32>) -> tensor<i32>
  %1 = "ember.argmin"(%d) {axis = -1 : i64, dtype = i64} : (tensor<3x?x2xf64>) -> tensor<3x?xi64>
  return %0, %1 : tensor<i32>, tensor<3x?xi64>
}
