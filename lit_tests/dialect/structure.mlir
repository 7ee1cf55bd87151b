// Round trip of the structural ops: matmul (2-D, batched with broadcast batch dims, transposed
// operands), transpose, reshape (with a -1 dim), broadcast_to, expand_dims, squeeze, and the
// upstream tensor.concat that ember emits for concatenation (custom form in the default output,
// `"tensor.concat"(...) <{dim = ...}>` in generic form). Static and dynamic (`?`) dims throughout.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3x5xf32>, %[[DA:.*]]: tensor<?x3xf64>, %[[DB:.*]]: tensor<3x?xf64>)
// CHECK:       %[[V0:.*]] = "ember.matmul"(%[[A]], %[[B]]) {transpose_a = false, transpose_b = false} : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
// CHECK:       %[[V1:.*]] = "ember.matmul"(%[[DA]], %[[DB]]) {transpose_a = false, transpose_b = false} : (tensor<?x3xf64>, tensor<3x?xf64>) -> tensor<?x?xf64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4x5xf32>, tensor<?x?xf64>
// GENERIC-LABEL: sym_name = "matmul"
// GENERIC:       "ember.matmul"({{.*}}) {transpose_a = false, transpose_b = false} : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
// GENERIC:       "ember.matmul"({{.*}}) {transpose_a = false, transpose_b = false} : (tensor<?x3xf64>, tensor<3x?xf64>) -> tensor<?x?xf64>
func.func @matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %da: tensor<?x3xf64>, %db: tensor<3x?xf64>) -> (tensor<4x5xf32>, tensor<?x?xf64>) {
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = "ember.matmul"(%da, %db) {transpose_a = false, transpose_b = false} : (tensor<?x3xf64>, tensor<3x?xf64>) -> tensor<?x?xf64>
  return %0, %1 : tensor<4x5xf32>, tensor<?x?xf64>
}

// Batch dims broadcast; transpose_a/transpose_b swap the last two dims of an operand.
// CHECK-LABEL: func.func @matmul_batched_transposed(
// CHECK-SAME:    %[[A:.*]]: tensor<8x4x3xf32>, %[[B:.*]]: tensor<5x3xf32>, %[[C:.*]]: tensor<?x1x3x4xi32>, %[[D:.*]]: tensor<2x5x3xi32>)
// CHECK:       %[[V0:.*]] = "ember.matmul"(%[[A]], %[[B]]) {transpose_a = false, transpose_b = true} : (tensor<8x4x3xf32>, tensor<5x3xf32>) -> tensor<8x4x5xf32>
// CHECK:       %[[V1:.*]] = "ember.matmul"(%[[C]], %[[D]]) {transpose_a = true, transpose_b = true} : (tensor<?x1x3x4xi32>, tensor<2x5x3xi32>) -> tensor<?x2x4x5xi32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<8x4x5xf32>, tensor<?x2x4x5xi32>
// GENERIC-LABEL: sym_name = "matmul_batched_transposed"
// GENERIC:       "ember.matmul"({{.*}}) {transpose_a = false, transpose_b = true} : (tensor<8x4x3xf32>, tensor<5x3xf32>) -> tensor<8x4x5xf32>
// GENERIC:       "ember.matmul"({{.*}}) {transpose_a = true, transpose_b = true} : (tensor<?x1x3x4xi32>, tensor<2x5x3xi32>) -> tensor<?x2x4x5xi32>
func.func @matmul_batched_transposed(%a: tensor<8x4x3xf32>, %b: tensor<5x3xf32>, %c: tensor<?x1x3x4xi32>, %d: tensor<2x5x3xi32>) -> (tensor<8x4x5xf32>, tensor<?x2x4x5xi32>) {
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = true} : (tensor<8x4x3xf32>, tensor<5x3xf32>) -> tensor<8x4x5xf32>
  %1 = "ember.matmul"(%c, %d) {transpose_a = true, transpose_b = true} : (tensor<?x1x3x4xi32>, tensor<2x5x3xi32>) -> tensor<?x2x4x5xi32>
  return %0, %1 : tensor<8x4x5xf32>, tensor<?x2x4x5xi32>
}

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[D:.*]]: tensor<?x3x?xi8>)
// CHECK:       %[[V0:.*]] = "ember.transpose"(%[[X]]) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK:       %[[V1:.*]] = "ember.transpose"(%[[D]]) {perm = array<i64: 2, 0, 1>} : (tensor<?x3x?xi8>) -> tensor<?x?x3xi8>
// CHECK:       return %[[V0]], %[[V1]] : tensor<3x2xf32>, tensor<?x?x3xi8>
// GENERIC-LABEL: sym_name = "transpose"
// GENERIC:       "ember.transpose"({{.*}}) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// GENERIC:       "ember.transpose"({{.*}}) {perm = array<i64: 2, 0, 1>} : (tensor<?x3x?xi8>) -> tensor<?x?x3xi8>
func.func @transpose(%x: tensor<2x3xf32>, %d: tensor<?x3x?xi8>) -> (tensor<3x2xf32>, tensor<?x?x3xi8>) {
  %0 = "ember.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "ember.transpose"(%d) {perm = array<i64: 2, 0, 1>} : (tensor<?x3x?xi8>) -> tensor<?x?x3xi8>
  return %0, %1 : tensor<3x2xf32>, tensor<?x?x3xi8>
}

// A -1 dim is inferred from a static input and stays `?` for a dynamic one.
// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x2xf32>, %[[D:.*]]: tensor<?x4xf32>, %[[S:.*]]: tensor<f32>)
// CHECK:       %[[V0:.*]] = "ember.reshape"(%[[X]]) {shape = array<i64: -1, 2>} : (tensor<2x3x2xf32>) -> tensor<6x2xf32>
// CHECK:       %[[V1:.*]] = "ember.reshape"(%[[D]]) {shape = array<i64: -1, 2>} : (tensor<?x4xf32>) -> tensor<?x2xf32>
// CHECK:       %[[V2:.*]] = "ember.reshape"(%[[S]]) {shape = array<i64: 1, 1>} : (tensor<f32>) -> tensor<1x1xf32>
// CHECK:       %[[V3:.*]] = "ember.reshape"(%[[X]]) {shape = array<i64: 12>} : (tensor<2x3x2xf32>) -> tensor<12xf32>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]], %[[V3]] : tensor<6x2xf32>, tensor<?x2xf32>, tensor<1x1xf32>, tensor<12xf32>
// GENERIC-LABEL: sym_name = "reshape"
// GENERIC:       "ember.reshape"({{.*}}) {shape = array<i64: -1, 2>} : (tensor<2x3x2xf32>) -> tensor<6x2xf32>
// GENERIC:       "ember.reshape"({{.*}}) {shape = array<i64: -1, 2>} : (tensor<?x4xf32>) -> tensor<?x2xf32>
// GENERIC:       "ember.reshape"({{.*}}) {shape = array<i64: 1, 1>} : (tensor<f32>) -> tensor<1x1xf32>
// GENERIC:       "ember.reshape"({{.*}}) {shape = array<i64: 12>} : (tensor<2x3x2xf32>) -> tensor<12xf32>
func.func @reshape(%x: tensor<2x3x2xf32>, %d: tensor<?x4xf32>, %s: tensor<f32>) -> (tensor<6x2xf32>, tensor<?x2xf32>, tensor<1x1xf32>, tensor<12xf32>) {
  %0 = "ember.reshape"(%x) {shape = array<i64: -1, 2>} : (tensor<2x3x2xf32>) -> tensor<6x2xf32>
  %1 = "ember.reshape"(%d) {shape = array<i64: -1, 2>} : (tensor<?x4xf32>) -> tensor<?x2xf32>
  %2 = "ember.reshape"(%s) {shape = array<i64: 1, 1>} : (tensor<f32>) -> tensor<1x1xf32>
  %3 = "ember.reshape"(%x) {shape = array<i64: 12>} : (tensor<2x3x2xf32>) -> tensor<12xf32>
  return %0, %1, %2, %3 : tensor<6x2xf32>, tensor<?x2xf32>, tensor<1x1xf32>, tensor<12xf32>
}

// CHECK-LABEL: func.func @broadcast_to(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>, %[[D:.*]]: tensor<?x1xi32>, %[[S:.*]]: tensor<i1>)
// CHECK:       %[[V0:.*]] = "ember.broadcast_to"(%[[X]]) {shape = array<i64: 4, 3>} : (tensor<3xf32>) -> tensor<4x3xf32>
// CHECK:       %[[V1:.*]] = "ember.broadcast_to"(%[[D]]) {shape = array<i64: 2, 5, 7>} : (tensor<?x1xi32>) -> tensor<2x5x7xi32>
// CHECK:       %[[V2:.*]] = "ember.broadcast_to"(%[[S]]) {shape = array<i64: 2, 2>} : (tensor<i1>) -> tensor<2x2xi1>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]] : tensor<4x3xf32>, tensor<2x5x7xi32>, tensor<2x2xi1>
// GENERIC-LABEL: sym_name = "broadcast_to"
// GENERIC:       "ember.broadcast_to"({{.*}}) {shape = array<i64: 4, 3>} : (tensor<3xf32>) -> tensor<4x3xf32>
// GENERIC:       "ember.broadcast_to"({{.*}}) {shape = array<i64: 2, 5, 7>} : (tensor<?x1xi32>) -> tensor<2x5x7xi32>
// GENERIC:       "ember.broadcast_to"({{.*}}) {shape = array<i64: 2, 2>} : (tensor<i1>) -> tensor<2x2xi1>
func.func @broadcast_to(%x: tensor<3xf32>, %d: tensor<?x1xi32>, %s: tensor<i1>) -> (tensor<4x3xf32>, tensor<2x5x7xi32>, tensor<2x2xi1>) {
  %0 = "ember.broadcast_to"(%x) {shape = array<i64: 4, 3>} : (tensor<3xf32>) -> tensor<4x3xf32>
  %1 = "ember.broadcast_to"(%d) {shape = array<i64: 2, 5, 7>} : (tensor<?x1xi32>) -> tensor<2x5x7xi32>
  %2 = "ember.broadcast_to"(%s) {shape = array<i64: 2, 2>} : (tensor<i1>) -> tensor<2x2xi1>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<2x5x7xi32>, tensor<2x2xi1>
}

// axis ranges over [-rank-1, rank]: 0 prepends, -1 appends.
// CHECK-LABEL: func.func @expand_dims(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>, %[[D:.*]]: tensor<?x2xf16>, %[[S:.*]]: tensor<i64>)
// CHECK:       %[[V0:.*]] = "ember.expand_dims"(%[[X]]) {axis = 0 : i64} : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK:       %[[V1:.*]] = "ember.expand_dims"(%[[D]]) {axis = -1 : i64} : (tensor<?x2xf16>) -> tensor<?x2x1xf16>
// CHECK:       %[[V2:.*]] = "ember.expand_dims"(%[[D]]) {axis = 1 : i64} : (tensor<?x2xf16>) -> tensor<?x1x2xf16>
// CHECK:       %[[V3:.*]] = "ember.expand_dims"(%[[S]]) {axis = 0 : i64} : (tensor<i64>) -> tensor<1xi64>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]], %[[V3]] : tensor<1x3xf32>, tensor<?x2x1xf16>, tensor<?x1x2xf16>, tensor<1xi64>
// GENERIC-LABEL: sym_name = "expand_dims"
// GENERIC:       "ember.expand_dims"({{.*}}) {axis = 0 : i64} : (tensor<3xf32>) -> tensor<1x3xf32>
// GENERIC:       "ember.expand_dims"({{.*}}) {axis = -1 : i64} : (tensor<?x2xf16>) -> tensor<?x2x1xf16>
// GENERIC:       "ember.expand_dims"({{.*}}) {axis = 1 : i64} : (tensor<?x2xf16>) -> tensor<?x1x2xf16>
// GENERIC:       "ember.expand_dims"({{.*}}) {axis = 0 : i64} : (tensor<i64>) -> tensor<1xi64>
func.func @expand_dims(%x: tensor<3xf32>, %d: tensor<?x2xf16>, %s: tensor<i64>) -> (tensor<1x3xf32>, tensor<?x2x1xf16>, tensor<?x1x2xf16>, tensor<1xi64>) {
  %0 = "ember.expand_dims"(%x) {axis = 0 : i64} : (tensor<3xf32>) -> tensor<1x3xf32>
  %1 = "ember.expand_dims"(%d) {axis = -1 : i64} : (tensor<?x2xf16>) -> tensor<?x2x1xf16>
  %2 = "ember.expand_dims"(%d) {axis = 1 : i64} : (tensor<?x2xf16>) -> tensor<?x1x2xf16>
  %3 = "ember.expand_dims"(%s) {axis = 0 : i64} : (tensor<i64>) -> tensor<1xi64>
  return %0, %1, %2, %3 : tensor<1x3xf32>, tensor<?x2x1xf16>, tensor<?x1x2xf16>, tensor<1xi64>
}

// Listed axes must be 1 (or `?`); an empty list removes every static 1.
// CHECK-LABEL: func.func @squeeze(
// CHECK-SAME:    %[[X:.*]]: tensor<1x3xf32>, %[[D:.*]]: tensor<?x3x1xi32>, %[[ONES:.*]]: tensor<1x2x1x1xf32>)
// CHECK:       %[[V0:.*]] = "ember.squeeze"(%[[X]]) {axes = array<i64: 0>} : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK:       %[[V1:.*]] = "ember.squeeze"(%[[D]]) {axes = array<i64: 0>} : (tensor<?x3x1xi32>) -> tensor<3x1xi32>
// CHECK:       %[[V2:.*]] = "ember.squeeze"(%[[ONES]]) {axes = array<i64>} : (tensor<1x2x1x1xf32>) -> tensor<2xf32>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]] : tensor<3xf32>, tensor<3x1xi32>, tensor<2xf32>
// GENERIC-LABEL: sym_name = "squeeze"
// GENERIC:       "ember.squeeze"({{.*}}) {axes = array<i64: 0>} : (tensor<1x3xf32>) -> tensor<3xf32>
// GENERIC:       "ember.squeeze"({{.*}}) {axes = array<i64: 0>} : (tensor<?x3x1xi32>) -> tensor<3x1xi32>
// GENERIC:       "ember.squeeze"({{.*}}) {axes = array<i64>} : (tensor<1x2x1x1xf32>) -> tensor<2xf32>
func.func @squeeze(%x: tensor<1x3xf32>, %d: tensor<?x3x1xi32>, %ones: tensor<1x2x1x1xf32>) -> (tensor<3xf32>, tensor<3x1xi32>, tensor<2xf32>) {
  %0 = "ember.squeeze"(%x) {axes = array<i64: 0>} : (tensor<1x3xf32>) -> tensor<3xf32>
  %1 = "ember.squeeze"(%d) {axes = array<i64: 0>} : (tensor<?x3x1xi32>) -> tensor<3x1xi32>
  %2 = "ember.squeeze"(%ones) {axes = array<i64>} : (tensor<1x2x1x1xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<3x1xi32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @concat(
// CHECK-SAME:    %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<4x3xf32>)
// CHECK:       %[[CAT:.*]] = tensor.concat dim(0) %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
// CHECK:       return %[[CAT]] : tensor<6x3xf32>
// GENERIC-LABEL: sym_name = "concat"
// GENERIC:       "tensor.concat"({{.*}}) <{dim = 0 : i64}> : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<6x3xf32> {
  %cat = "tensor.concat"(%a, %b) <{dim = 0 : i64}> : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  return %cat : tensor<6x3xf32>
}

// A dynamic size along the concatenated dim makes the result `?` there; three operands on dim 1.
// CHECK-LABEL: func.func @concat_dynamic(
// CHECK-SAME:    %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<?x3xf32>, %[[C:.*]]: tensor<2x?xi32>, %[[D:.*]]: tensor<2x1xi32>)
// CHECK:       %[[V0:.*]] = tensor.concat dim(0) %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK:       %[[V1:.*]] = tensor.concat dim(1) %[[C]], %[[D]], %[[C]] : (tensor<2x?xi32>, tensor<2x1xi32>, tensor<2x?xi32>) -> tensor<2x?xi32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<?x3xf32>, tensor<2x?xi32>
// GENERIC-LABEL: sym_name = "concat_dynamic"
// GENERIC:       "tensor.concat"({{.*}}) <{dim = 0 : i64}> : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC:       "tensor.concat"({{.*}}) <{dim = 1 : i64}> : (tensor<2x?xi32>, tensor<2x1xi32>, tensor<2x?xi32>) -> tensor<2x?xi32>
func.func @concat_dynamic(%a: tensor<2x3xf32>, %b: tensor<?x3xf32>, %c: tensor<2x?xi32>, %d: tensor<2x1xi32>) -> (tensor<?x3xf32>, tensor<2x?xi32>) {
  %0 = "tensor.concat"(%a, %b) <{dim = 0 : i64}> : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = "tensor.concat"(%c, %d, %c) <{dim = 1 : i64}> : (tensor<2x?xi32>, tensor<2x1xi32>, tensor<2x?xi32>) -> tensor<2x?xi32>
  return %0, %1 : tensor<?x3xf32>, tensor<2x?xi32>
}

// reshape and broadcast_to with the shape as an operand (em.reshape(x, [em.shape(x)[0], -1])):
// the `?` dim the shape names cancels against the input's, so the -1 is 8.
// CHECK-LABEL: func.func @shape_operands(
// CHECK:       %[[S:.*]] = "ember.shape"
// CHECK:       "ember.dynamic_reshape"(%{{.*}}, %{{.*}}) : (tensor<?x4x2xf32>, tensor<2xi32>) -> tensor<?x8xf32>
// CHECK:       "ember.dynamic_broadcast_to"(%{{.*}}, %[[S]]) : (tensor<f32>, tensor<3xi32>) -> tensor<?x4x2xf32>
// GENERIC-LABEL: sym_name = "shape_operands"
// GENERIC:       "ember.dynamic_reshape"
func.func @shape_operands(%x: tensor<?x4x2xf32>, %v: tensor<f32>) -> (tensor<?x8xf32>, tensor<?x4x2xf32>) {
  %s = "ember.shape"(%x) {dtype = i32} : (tensor<?x4x2xf32>) -> tensor<3xi32>
  %n = "ember.strided_slice"(%s) {begin = array<i64: 0>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 1>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64, strides = array<i64: 1>} : (tensor<3xi32>) -> tensor<i32>
  %n1 = "ember.expand_dims"(%n) {axis = 0 : i64} : (tensor<i32>) -> tensor<1xi32>
  %m = "ember.constant"() {value = dense<[-1]> : tensor<1xi32>} : () -> tensor<1xi32>
  %d = tensor.concat dim(0) %n1, %m : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %r = "ember.dynamic_reshape"(%x, %d) : (tensor<?x4x2xf32>, tensor<2xi32>) -> tensor<?x8xf32>
  %b = "ember.dynamic_broadcast_to"(%v, %s) : (tensor<f32>, tensor<3xi32>) -> tensor<?x4x2xf32>
  return %r, %b : tensor<?x8xf32>, tensor<?x4x2xf32>
}
