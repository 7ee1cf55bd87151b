// Round trip of the scans and sorted search: cumsum and cumprod (every exclusive/reverse
// combination, negative axes, static, dynamic (`?`) and empty dims, ints and floats) and
// searchsorted (both sides, i32/i64 results, batched and dynamic operands). Also checked:
// the generic form parses back to the same IR. (Verifier errors: invalid.mlir.)

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @cumsum(
// CHECK-SAME:    %[[X:.*]]: tensor<2x?xf32>, %[[I:.*]]: tensor<0x3xi8>)
// CHECK:       %[[V0:.*]] = "ember.cumsum"(%[[X]]) {axis = 1 : i64, exclusive = false, reverse = true} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK:       %[[V1:.*]] = "ember.cumsum"(%[[X]]) {axis = -2 : i64, exclusive = true, reverse = false} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK:       %[[V2:.*]] = "ember.cumsum"(%[[I]]) {axis = 0 : i64, exclusive = true, reverse = true} : (tensor<0x3xi8>) -> tensor<0x3xi8>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]]
// GENERIC-LABEL: sym_name = "cumsum"
// GENERIC:       "ember.cumsum"({{.*}}) {axis = 1 : i64, exclusive = false, reverse = true} : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @cumsum(%x: tensor<2x?xf32>, %i: tensor<0x3xi8>) -> (tensor<2x?xf32>, tensor<2x?xf32>, tensor<0x3xi8>) {
  %0 = "ember.cumsum"(%x) {axis = 1 : i64, exclusive = false, reverse = true} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %1 = "ember.cumsum"(%x) {axis = -2 : i64, exclusive = true, reverse = false} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %2 = "ember.cumsum"(%i) {axis = 0 : i64, exclusive = true, reverse = true} : (tensor<0x3xi8>) -> tensor<0x3xi8>
  return %0, %1, %2 : tensor<2x?xf32>, tensor<2x?xf32>, tensor<0x3xi8>
}

// CHECK-LABEL: func.func @cumprod(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi32>, %[[H:.*]]: tensor<?x?xbf16>)
// CHECK:       %[[V0:.*]] = "ember.cumprod"(%[[X]]) {axis = 0 : i64, exclusive = true, reverse = false} : (tensor<4xi32>) -> tensor<4xi32>
// CHECK:       %[[V1:.*]] = "ember.cumprod"(%[[H]]) {axis = -1 : i64, exclusive = false, reverse = false} : (tensor<?x?xbf16>) -> tensor<?x?xbf16>
// CHECK:       return %[[V0]], %[[V1]]
// GENERIC-LABEL: sym_name = "cumprod"
// GENERIC:       "ember.cumprod"({{.*}}) {axis = 0 : i64, exclusive = true, reverse = false} : (tensor<4xi32>) -> tensor<4xi32>
func.func @cumprod(%x: tensor<4xi32>, %h: tensor<?x?xbf16>) -> (tensor<4xi32>, tensor<?x?xbf16>) {
  %0 = "ember.cumprod"(%x) {axis = 0 : i64, exclusive = true, reverse = false} : (tensor<4xi32>) -> tensor<4xi32>
  %1 = "ember.cumprod"(%h) {axis = -1 : i64, exclusive = false, reverse = false} : (tensor<?x?xbf16>) -> tensor<?x?xbf16>
  return %0, %1 : tensor<4xi32>, tensor<?x?xbf16>
}

// CHECK-LABEL: func.func @searchsorted(
// CHECK-SAME:    %[[S:.*]]: tensor<2x5xf32>, %[[V:.*]]: tensor<2x3xf32>, %[[D:.*]]: tensor<?xui8>, %[[E:.*]]: tensor<7xui8>)
// CHECK:       %[[V0:.*]] = "ember.searchsorted"(%[[S]], %[[V]]) {out_type = i32, side = "left"} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x3xi32>
// CHECK:       %[[V1:.*]] = "ember.searchsorted"(%[[D]], %[[E]]) {out_type = i64, side = "right"} : (tensor<?xui8>, tensor<7xui8>) -> tensor<7xi64>
// CHECK:       return %[[V0]], %[[V1]]
// GENERIC-LABEL: sym_name = "searchsorted"
// GENERIC:       "ember.searchsorted"({{.*}}) {out_type = i32, side = "left"} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x3xi32>
func.func @searchsorted(%s: tensor<2x5xf32>, %v: tensor<2x3xf32>, %d: tensor<?xui8>, %e: tensor<7xui8>) -> (tensor<2x3xi32>, tensor<7xi64>) {
  %0 = "ember.searchsorted"(%s, %v) {out_type = i32, side = "left"} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x3xi32>
  %1 = "ember.searchsorted"(%d, %e) {out_type = i64, side = "right"} : (tensor<?xui8>, tensor<7xui8>) -> tensor<7xi64>
  return %0, %1 : tensor<2x3xi32>, tensor<7xi64>
}
