// Round trip of ember.sort: ascending and descending, static, dynamic (`?`) and empty dims;
// two results, the sorted values and their i32 indices.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @sort(
// CHECK-SAME:    %[[X:.*]]: tensor<3x5xf32>)
// CHECK:       %[[S:.*]]:2 = "ember.sort"(%[[X]]) {descending = false} : (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xi32>)
// CHECK:       return %[[S]]#0, %[[S]]#1 : tensor<3x5xf32>, tensor<3x5xi32>
// GENERIC-LABEL: sym_name = "sort"
// GENERIC:       "ember.sort"(
func.func @sort(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xi32>) {
  %v, %i = "ember.sort"(%x) {descending = false} : (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xi32>)
  return %v, %i : tensor<3x5xf32>, tensor<3x5xi32>
}

// CHECK-LABEL: func.func @sort_descending_dynamic(
// CHECK:       "ember.sort"(%{{.*}}) {descending = true} : (tensor<?x?xui8>) -> (tensor<?x?xui8>, tensor<?x?xi32>)
// GENERIC-LABEL: sym_name = "sort_descending_dynamic"
// GENERIC:       "ember.sort"(
func.func @sort_descending_dynamic(%x: tensor<?x?xui8>) -> tensor<?x?xi32> {
  %v, %i = "ember.sort"(%x) {descending = true} : (tensor<?x?xui8>) -> (tensor<?x?xui8>, tensor<?x?xi32>)
  return %i : tensor<?x?xi32>
}

// CHECK-LABEL: func.func @sort_empty(
// CHECK:       "ember.sort"(%{{.*}}) {descending = false} : (tensor<0xbf16>) -> (tensor<0xbf16>, tensor<0xi32>)
// GENERIC-LABEL: sym_name = "sort_empty"
// GENERIC:       "ember.sort"(
func.func @sort_empty(%x: tensor<0xbf16>) -> tensor<0xbf16> {
  %v, %i = "ember.sort"(%x) {descending = false} : (tensor<0xbf16>) -> (tensor<0xbf16>, tensor<0xi32>)
  return %v : tensor<0xbf16>
}

// ember.unique: the output's dim is `?` whatever the input's (its size depends on values).
// CHECK-LABEL: func.func @unique(
// CHECK:       %[[U:.*]]:2 = "ember.unique"(%{{.*}}) {out_idx = i32} : (tensor<6xi64>) -> (tensor<?xi64>, tensor<6xi32>)
// CHECK:       "ember.unique"(%{{.*}}) {out_idx = i64} : (tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi64>)
// GENERIC-LABEL: sym_name = "unique"
// GENERIC:       "ember.unique"(
func.func @unique(%x: tensor<6xi64>, %f: tensor<?xf32>) -> (tensor<?xi64>, tensor<6xi32>, tensor<?xi64>) {
  %y, %i = "ember.unique"(%x) {out_idx = i32} : (tensor<6xi64>) -> (tensor<?xi64>, tensor<6xi32>)
  %fy, %fi = "ember.unique"(%f) {out_idx = i64} : (tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi64>)
  return %y, %i, %fi : tensor<?xi64>, tensor<6xi32>, tensor<?xi64>
}
