// Round trip of the scatter ops: tensor_scatter (each mode; slices and single elements;
// static and dynamic (`?`) dims; i32 and i64 indices) and where_indices (whose first result
// dim is always `?`).

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Rows of a matrix, added.
// CHECK-LABEL: func.func @scatter_add_rows(
// CHECK:       "ember.tensor_scatter"(%{{.*}}, %{{.*}}, %{{.*}}) {mode = "add"} : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// GENERIC-LABEL: sym_name = "scatter_add_rows"
// GENERIC:       "ember.tensor_scatter"(
func.func @scatter_add_rows(%t: tensor<5x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %0 = "ember.tensor_scatter"(%t, %i, %u) {mode = "add"} : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// Single elements of a dynamic matrix, replaced (the default mode prints too).
// CHECK-LABEL: func.func @scatter_update_elements(
// CHECK:       "ember.tensor_scatter"(%{{.*}}, %{{.*}}, %{{.*}}) {mode = "update"} : (tensor<?x3xi8>, tensor<?x2xi64>, tensor<?xi8>) -> tensor<?x3xi8>
// GENERIC-LABEL: sym_name = "scatter_update_elements"
// GENERIC:       "ember.tensor_scatter"(
func.func @scatter_update_elements(%t: tensor<?x3xi8>, %i: tensor<?x2xi64>, %u: tensor<?xi8>) -> tensor<?x3xi8> {
  %0 = "ember.tensor_scatter"(%t, %i, %u) {mode = "update"} : (tensor<?x3xi8>, tensor<?x2xi64>, tensor<?xi8>) -> tensor<?x3xi8>
  return %0 : tensor<?x3xi8>
}

// The other modes, with a batch of 2x2 index rows.
// CHECK-LABEL: func.func @scatter_modes(
// CHECK:       "ember.tensor_scatter"({{.*}}) {mode = "sub"}
// CHECK:       "ember.tensor_scatter"({{.*}}) {mode = "mul"}
// CHECK:       "ember.tensor_scatter"({{.*}}) {mode = "max"}
// CHECK:       "ember.tensor_scatter"({{.*}}) {mode = "min"} : (tensor<4xi32>, tensor<2x2x1xi32>, tensor<2x2xi32>) -> tensor<4xi32>
// GENERIC-LABEL: sym_name = "scatter_modes"
// GENERIC:       "ember.tensor_scatter"(
func.func @scatter_modes(%t: tensor<4xi32>, %i: tensor<2x2x1xi32>, %u: tensor<2x2xi32>) -> tensor<4xi32> {
  %0 = "ember.tensor_scatter"(%t, %i, %u) {mode = "sub"} : (tensor<4xi32>, tensor<2x2x1xi32>, tensor<2x2xi32>) -> tensor<4xi32>
  %1 = "ember.tensor_scatter"(%0, %i, %u) {mode = "mul"} : (tensor<4xi32>, tensor<2x2x1xi32>, tensor<2x2xi32>) -> tensor<4xi32>
  %2 = "ember.tensor_scatter"(%1, %i, %u) {mode = "max"} : (tensor<4xi32>, tensor<2x2x1xi32>, tensor<2x2xi32>) -> tensor<4xi32>
  %3 = "ember.tensor_scatter"(%2, %i, %u) {mode = "min"} : (tensor<4xi32>, tensor<2x2x1xi32>, tensor<2x2xi32>) -> tensor<4xi32>
  return %3 : tensor<4xi32>
}

// CHECK-LABEL: func.func @where_indices(
// CHECK:       "ember.where_indices"(%{{.*}}) : (tensor<3x4xi1>) -> tensor<?x2xi64>
// CHECK:       "ember.where_indices"(%{{.*}}) : (tensor<?xf32>) -> tensor<?x1xi64>
// GENERIC-LABEL: sym_name = "where_indices"
// GENERIC:       "ember.where_indices"(
func.func @where_indices(%c: tensor<3x4xi1>, %x: tensor<?xf32>) -> (tensor<?x2xi64>, tensor<?x1xi64>) {
  %0 = "ember.where_indices"(%c) : (tensor<3x4xi1>) -> tensor<?x2xi64>
  %1 = "ember.where_indices"(%x) : (tensor<?xf32>) -> tensor<?x1xi64>
  return %0, %1 : tensor<?x2xi64>, tensor<?x1xi64>
}
