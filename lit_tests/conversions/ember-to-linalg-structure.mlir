// convert-ember-to-linalg on structural ops: matmul on a zero-filled init as linalg.matmul,
// linalg.batch_matmul (batch dims collapsed) or a broadcasting linalg.generic contraction,
// with transposed operands through linalg.transpose and half floats accumulating in f32;
// transpose; reshape/expand_dims/squeeze as tensor.collapse_shape/expand_shape (tensor.reshape
// when dynamic); broadcast_to as a generic with broadcast maps. tensor.concat stays.

// The last case cannot be lowered: ember-opt exits 1 and names it on stderr.
// RUN: not ember-opt %s -p convert-ember-to-linalg --split-input-file 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err

// CHECK-LABEL: func.func @matmul_2d(
// CHECK-SAME:    %[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3x5xf32>)
// CHECK:       %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:       %[[E:.*]] = tensor.empty() : tensor<4x5xf32>
// CHECK:       %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<4x5xf32>)
// CHECK:       %[[C:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x3xf32>, tensor<3x5xf32>) outs(%[[INIT]] : tensor<4x5xf32>)
// CHECK:       return %[[C]]
func.func @matmul_2d(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// transpose_a: a linalg.transpose first; dynamic sizes come from tensor.dim.
// CHECK-LABEL: func.func @matmul_dynamic_transpose_a(
// CHECK-SAME:    %[[A:.*]]: tensor<3x?xf64>, %[[B:.*]]: tensor<3x?xf64>)
// CHECK:       %[[M:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<3x?xf64>
// CHECK:       %[[TE:.*]] = tensor.empty(%[[M]]) : tensor<?x3xf64>
// CHECK:       %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<3x?xf64>) outs(%[[TE]] : tensor<?x3xf64>) permutation = [1, 0]
// CHECK:       %[[N:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<3x?xf64>
// CHECK:       %[[E:.*]] = tensor.empty(%{{.*}}, %[[N]]) : tensor<?x?xf64>
// CHECK:       %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%[[E]] : tensor<?x?xf64>)
// CHECK:       linalg.matmul ins(%[[AT]], %[[B]] : tensor<?x3xf64>, tensor<3x?xf64>) outs(%[[INIT]] : tensor<?x?xf64>)
func.func @matmul_dynamic_transpose_a(%a: tensor<3x?xf64>, %b: tensor<3x?xf64>) -> tensor<?x?xf64> {
  %0 = "ember.matmul"(%a, %b) {transpose_a = true, transpose_b = false} : (tensor<3x?xf64>, tensor<3x?xf64>) -> tensor<?x?xf64>
  return %0 : tensor<?x?xf64>
}

// -----

// Batches against one matrix: the batch dims fold into the rows of a single linalg.matmul.
// CHECK-LABEL: func.func @matmul_rows_transpose_b(
// CHECK-SAME:    %[[A:.*]]: tensor<8x4x3xf32>, %[[B:.*]]: tensor<5x3xf32>)
// CHECK:       %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<5x3xf32>) outs(%{{.*}} : tensor<3x5xf32>) permutation = [1, 0]
// CHECK:       %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x4x5xf32>)
// CHECK:       %[[ROWS:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : tensor<8x4x3xf32> into tensor<32x3xf32>
// CHECK:       %[[FLAT:.*]] = tensor.collapse_shape %[[INIT]] {{\[}}[0, 1], [2]] : tensor<8x4x5xf32> into tensor<32x5xf32>
// CHECK:       %[[C:.*]] = linalg.matmul ins(%[[ROWS]], %[[BT]] : tensor<32x3xf32>, tensor<3x5xf32>) outs(%[[FLAT]] : tensor<32x5xf32>)
// CHECK:       %[[R:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1], [2]] output_shape [8, 4, 5] : tensor<32x5xf32> into tensor<8x4x5xf32>
// CHECK:       return %[[R]]
func.func @matmul_rows_transpose_b(%a: tensor<8x4x3xf32>, %b: tensor<5x3xf32>) -> tensor<8x4x5xf32> {
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = true} : (tensor<8x4x3xf32>, tensor<5x3xf32>) -> tensor<8x4x5xf32>
  return %0 : tensor<8x4x5xf32>
}

// -----

// Equal batch dims collapse into one for linalg.batch_matmul; f16 accumulates in f32.
// CHECK-DAG:   #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @matmul_batch_f16(
// CHECK:       %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:       %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x3x4x5xf32>)
// CHECK:       %[[L:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x3xf16> into tensor<6x4x3xf16>
// CHECK:       %[[R:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<2x3x3x5xf16> into tensor<6x3x5xf16>
// CHECK:       %[[O:.*]] = tensor.collapse_shape %[[INIT]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
// CHECK:       %[[P:.*]] = linalg.batch_matmul ins(%[[L]], %[[R]] : tensor<6x4x3xf16>, tensor<6x3x5xf16>) outs(%[[O]] : tensor<6x4x5xf32>)
// CHECK:       %[[X:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 4, 5]
// CHECK:       linalg.generic {indexing_maps = [#[[ID4]], #[[ID4]]], {{.*}} ins(%[[X]] : tensor<2x3x4x5xf32>) outs(%{{.*}} : tensor<2x3x4x5xf16>)
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @matmul_batch_f16(%a: tensor<2x3x4x3xf16>, %b: tensor<2x3x3x5xf16>) -> tensor<2x3x4x5xf16> {
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<2x3x4x3xf16>, tensor<2x3x3x5xf16>) -> tensor<2x3x4x5xf16>
  return %0 : tensor<2x3x4x5xf16>
}

// -----

// Broadcasting batch dims: one contraction whose map pins a's size-1 batch dim to 0.
// CHECK-DAG:   #[[MA:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>
// CHECK-DAG:   #[[MB:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG:   #[[MC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matmul_broadcast_batch(
// CHECK-SAME:    %[[A:.*]]: tensor<1x4x3xi32>, %[[B:.*]]: tensor<2x3x5xi32>)
// CHECK:       %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:       %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : i32)
// CHECK:       linalg.generic {indexing_maps = [#[[MA]], #[[MB]], #[[MC]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[A]], %[[B]] : tensor<1x4x3xi32>, tensor<2x3x5xi32>) outs(%[[INIT]] : tensor<2x4x5xi32>)
// CHECK:         %[[MUL:.*]] = arith.muli
// CHECK:         arith.addi %{{.*}}, %[[MUL]] : i32
func.func @matmul_broadcast_batch(%a: tensor<1x4x3xi32>, %b: tensor<2x3x5xi32>) -> tensor<2x4x5xi32> {
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<1x4x3xi32>, tensor<2x3x5xi32>) -> tensor<2x4x5xi32>
  return %0 : tensor<2x4x5xi32>
}

// -----

// ui8 becomes i8, inside the named op's body too.
// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[D:.*]]: tensor<?x3x?xi8>)
// CHECK:       linalg.transpose ins(%[[X]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
// CHECK:       %[[D0:.*]] = tensor.dim %[[D]], %{{.*}} : tensor<?x3x?xi8>
// CHECK:       %[[D2:.*]] = tensor.dim %[[D]], %{{.*}} : tensor<?x3x?xi8>
// CHECK:       %[[E:.*]] = tensor.empty(%[[D2]], %[[D0]]) : tensor<?x?x3xi8>
// CHECK:       linalg.transpose ins(%[[D]] : tensor<?x3x?xi8>) outs(%[[E]] : tensor<?x?x3xi8>) permutation = [2, 0, 1]
func.func @transpose(%x: tensor<2x3xf32>, %d: tensor<?x3x?xui8>) -> (tensor<3x2xf32>, tensor<?x?x3xui8>) {
  %0 = "ember.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "ember.transpose"(%d) {perm = array<i64: 2, 0, 1>} : (tensor<?x3x?xui8>) -> tensor<?x?x3xui8>
  return %0, %1 : tensor<3x2xf32>, tensor<?x?x3xui8>
}

// -----

// Merging dims collapses, splitting expands, anything else goes through 1-D.
// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x2xf32>, %[[S:.*]]: tensor<f32>)
// CHECK:       %[[R0:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x2xf32> into tensor<6x2xf32>
// CHECK:       %[[R1:.*]] = tensor.expand_shape %[[S]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK:       %[[R2:.*]] = tensor.expand_shape %[[R0]] {{\[}}[0, 1], [2, 3]] output_shape [2, 3, 1, 2] : tensor<6x2xf32> into tensor<2x3x1x2xf32>
// CHECK:       %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x3x2xf32> into tensor<12xf32>
// CHECK:       %[[R3:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
// CHECK:       return %[[R0]], %[[R1]], %[[R2]], %[[R3]]
func.func @reshape(%x: tensor<2x3x2xf32>, %s: tensor<f32>) -> (tensor<6x2xf32>, tensor<1x1xf32>, tensor<2x3x1x2xf32>, tensor<3x4xf32>) {
  %0 = "ember.reshape"(%x) {shape = array<i64: -1, 2>} : (tensor<2x3x2xf32>) -> tensor<6x2xf32>
  %1 = "ember.reshape"(%s) {shape = array<i64: 1, 1>} : (tensor<f32>) -> tensor<1x1xf32>
  %2 = "ember.reshape"(%0) {shape = array<i64: 2, 3, 1, 2>} : (tensor<6x2xf32>) -> tensor<2x3x1x2xf32>
  %3 = "ember.reshape"(%x) {shape = array<i64: 3, 4>} : (tensor<2x3x2xf32>) -> tensor<3x4xf32>
  return %0, %1, %2, %3 : tensor<6x2xf32>, tensor<1x1xf32>, tensor<2x3x1x2xf32>, tensor<3x4xf32>
}

// -----

// A dynamic reshape computes the -1 dim as (4 * dim 0) / 2, checks at run time that the
// element count is a multiple of 2 (a shape site: eager's error), then collapses and expands.
// CHECK-LABEL: func.func @reshape_dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xf32>)
// CHECK:       %[[C4:.*]] = arith.constant 4 : index
// CHECK:       %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4xf32>
// CHECK:       %[[T:.*]] = arith.muli %[[C4]], %[[D]] : index
// CHECK:       %[[C2:.*]] = arith.constant 2 : index
// CHECK:       %[[N:.*]] = arith.divui %[[T]], %[[C2]] : index
// CHECK:       %[[BACK:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK:       %[[WRONG:.*]] = arith.cmpi ne, %[[BACK]], %[[T]] : index
// CHECK:       scf.if
// CHECK-NEXT:    func.call @ember_error_0(%{{.*}}) : (i64) -> ()
// CHECK:       %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<?x4xf32> into tensor<?xf32>
// CHECK:       tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [%[[N]], 2] : tensor<?xf32> into tensor<?x2xf32>
func.func @reshape_dynamic(%d: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %0 = "ember.reshape"(%d) {shape = array<i64: -1, 2>} : (tensor<?x4xf32>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// Leading dims are dropped from the input map; size-1 dims read index 0.
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG:   #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[PIN:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-DAG:   #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @broadcast_to(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>, %[[D:.*]]: tensor<?x1xi32>, %[[S:.*]]: tensor<i1>)
// CHECK:       linalg.generic {indexing_maps = [#[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<3xf32>) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    linalg.yield %[[IN]] : f32
// A `?` dim is checked to be 1 or the target's size, and repeated in a branch where it is 1.
// CHECK:       %[[DB:.*]] = scf.if %{{.*}} -> (tensor<?x1xi32>)
// CHECK:       linalg.generic {indexing_maps = [#[[PIN]], #{{.*}}], {{.*}} ins(%[[DB]] : tensor<?x1xi32>) outs(%{{.*}} : tensor<2x5x7xi32>)
// CHECK:       linalg.generic {indexing_maps = [#[[SCALAR]], #[[ID2]]], {{.*}} ins(%[[S]] : tensor<i1>) outs(%{{.*}} : tensor<2x2xi1>)
func.func @broadcast_to(%x: tensor<3xf32>, %d: tensor<?x1xi32>, %s: tensor<i1>) -> (tensor<4x3xf32>, tensor<2x5x7xi32>, tensor<2x2xi1>) {
  %0 = "ember.broadcast_to"(%x) {shape = array<i64: 4, 3>} : (tensor<3xf32>) -> tensor<4x3xf32>
  %1 = "ember.broadcast_to"(%d) {shape = array<i64: 2, 5, 7>} : (tensor<?x1xi32>) -> tensor<2x5x7xi32>
  %2 = "ember.broadcast_to"(%s) {shape = array<i64: 2, 2>} : (tensor<i1>) -> tensor<2x2xi1>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<2x5x7xi32>, tensor<2x2xi1>
}

// -----

// A squeezed `?` dim is asserted to be 1 with tensor.cast before collapsing.
// CHECK-LABEL: func.func @expand_dims_squeeze(
// CHECK-SAME:    %[[D:.*]]: tensor<?x2xf16>, %[[S:.*]]: tensor<i64>, %[[O:.*]]: tensor<1x2x1x1xf32>, %[[Q:.*]]: tensor<?x3x1xi32>)
// CHECK:       %[[N:.*]] = tensor.dim %[[D]], %{{.*}} : tensor<?x2xf16>
// CHECK:       tensor.expand_shape %[[D]] {{\[}}[0], [1, 2]] output_shape [%[[N]], 1, 2] : tensor<?x2xf16> into tensor<?x1x2xf16>
// CHECK:       tensor.expand_shape %[[S]] [] output_shape [1] : tensor<i64> into tensor<1xi64>
// CHECK:       tensor.collapse_shape %[[O]] {{\[}}[0, 1, 2, 3]] : tensor<1x2x1x1xf32> into tensor<2xf32>
// CHECK:       %[[C:.*]] = tensor.cast %[[Q]] : tensor<?x3x1xi32> to tensor<1x3x1xi32>
// CHECK:       tensor.collapse_shape %[[C]] {{\[}}[0, 1], [2]] : tensor<1x3x1xi32> into tensor<3x1xi32>
func.func @expand_dims_squeeze(%d: tensor<?x2xf16>, %s: tensor<i64>, %o: tensor<1x2x1x1xf32>, %q: tensor<?x3x1xi32>) -> (tensor<?x1x2xf16>, tensor<1xi64>, tensor<2xf32>, tensor<3x1xi32>) {
  %0 = "ember.expand_dims"(%d) {axis = 1 : i64} : (tensor<?x2xf16>) -> tensor<?x1x2xf16>
  %1 = "ember.expand_dims"(%s) {axis = 0 : i64} : (tensor<i64>) -> tensor<1xi64>
  %2 = "ember.squeeze"(%o) {axes = array<i64>} : (tensor<1x2x1x1xf32>) -> tensor<2xf32>
  %3 = "ember.squeeze"(%q) {axes = array<i64: 0>} : (tensor<?x3x1xi32>) -> tensor<3x1xi32>
  return %0, %1, %2, %3 : tensor<?x1x2xf16>, tensor<1xi64>, tensor<2xf32>, tensor<3x1xi32>
}

// -----

// tensor.concat is upstream and stays as it is.
// CHECK-LABEL: func.func @concat_stays(
// CHECK:       tensor.concat dim(0) %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
func.func @concat_stays(%a: tensor<2x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = "tensor.concat"(%a, %b) <{dim = 0 : i64}> : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// A declared result type more static than the rule's sizes gets a tensor.cast.
// CHECK-LABEL: func.func @refined_result(
// CHECK:       %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<?x3xf32>) outs(%{{.*}} : tensor<3x?xf32>) permutation = [1, 0]
// CHECK:       %[[C:.*]] = tensor.cast %[[T]] : tensor<3x?xf32> to tensor<3x2xf32>
// CHECK:       return %[[C]]
func.func @refined_result(%x: tensor<?x3xf32>) -> tensor<3x2xf32> {
  %0 = "ember.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<?x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// ERR: :{{[0-9]+}}:{{[0-9]+}}: error: cannot lower 'ember.matmul': operand #0 of type tensor<*xf32> is unranked; lowering needs ranked types: run ember-shape-refine first
func.func @matmul_unranked(%a: tensor<*xf32>, %b: tensor<3x5xf32>) -> tensor<*xf32> {
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<*xf32>, tensor<3x5xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
