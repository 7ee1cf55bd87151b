// convert-ember-to-linalg on indexing ops: strided_slice as tensor.extract_slice (shrunk dims
// dropped by the slice's type, negative strides reversed by a generic with a `n - 1 - d` map,
// new axes by tensor.expand_shape); gather and one_hot as a generic over the result (gather
// clamps its index and reads params with tensor.extract); pad as tensor.pad, or a generic of
// mirrored coordinates for REFLECT and SYMMETRIC.

// The last case cannot be lowered (an unranked operand): ember-opt exits 1 and names it.
// RUN: not ember-opt %s -p convert-ember-to-linalg --split-input-file 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err

// x[1:3, ::2]
// CHECK-LABEL: func.func @slice_strided(
// CHECK-SAME:    %[[X:.*]]: tensor<4x6xf32>)
// CHECK:       %[[S:.*]] = tensor.extract_slice %[[X]][1, 0] [2, 3] [1, 2] : tensor<4x6xf32> to tensor<2x3xf32>
// CHECK-NEXT:  return %[[S]]
func.func @slice_strided(%x: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 1, 0>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 3, 0>, end_mask = 2 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// x[5:0:-2, 1:4] reads rows 5, 3, 1: rows 1, 3, 5 with stride 2, then reversed.
// CHECK-DAG:   #[[REV:.*]] = affine_map<(d0, d1) -> (-d0 + 2, d1)>
// CHECK-DAG:   #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @slice_reversed(
// CHECK-SAME:    %[[X:.*]]: tensor<6x5xi32>)
// CHECK:       %[[S:.*]] = tensor.extract_slice %[[X]][1, 1] [3, 3] [2, 1] : tensor<6x5xi32> to tensor<3x3xi32>
// CHECK:       %[[R:.*]] = linalg.generic {indexing_maps = [#[[REV]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[S]] : tensor<3x3xi32>) outs(%{{.*}} : tensor<3x3xi32>)
// CHECK:       return %[[R]]
func.func @slice_reversed(%x: tensor<6x5xi32>) -> tensor<3x3xi32> {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 5, 1>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0, 4>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: -2, 1>} : (tensor<6x5xi32>) -> tensor<3x3xi32>
  return %0 : tensor<3x3xi32>
}

// -----

// x[None, -1]: the shrunk row is dropped by the slice's type, the new axis expanded back.
// CHECK-LABEL: func.func @slice_shrink_new_axis(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>)
// CHECK:       %[[S:.*]] = tensor.extract_slice %[[X]][3, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
// CHECK:       %[[E:.*]] = tensor.expand_shape %[[S]] {{\[}}[0, 1]] output_shape [1, 3] : tensor<3xf32> into tensor<1x3xf32>
// CHECK:       return %[[E]]
func.func @slice_shrink_new_axis(%x: tensor<4x3xf32>) -> tensor<1x3xf32> {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 0, -1>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0, 0>, end_mask = 0 : i64, new_axis_mask = 1 : i64, shrink_axis_mask = 2 : i64, strides = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// x[..., 1] and x[1:] on a dynamic dim: sizes from tensor.dim, x[1:] clamps its start.
// CHECK-LABEL: func.func @slice_dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?x5x3xf32>)
// CHECK:       %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x5x3xf32>
// CHECK:       tensor.extract_slice %[[X]][0, 0, 1] [%[[N]], 5, 1] [1, 1, 1] : tensor<?x5x3xf32> to tensor<?x5xf32>
// CHECK:       %[[M:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x5x3xf32>
// CHECK:       %[[C1:.*]] = arith.constant 1 : index
// CHECK:       %[[B:.*]] = arith.minui %[[C1]], %[[M]] : index
// CHECK:       %[[L:.*]] = arith.subi %[[M]], %[[B]] : index
// CHECK:       tensor.extract_slice %[[X]][%[[B]], 0, 0] [%[[L]], 5, 3] [1, 1, 1] : tensor<?x5x3xf32> to tensor<?x5x3xf32>
func.func @slice_dynamic(%x: tensor<?x5x3xf32>) -> (tensor<?x5xf32>, tensor<?x5x3xf32>) {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 0, 1>, begin_mask = 0 : i64, ellipsis_mask = 1 : i64, end = array<i64: 0, 2>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 2 : i64, strides = array<i64: 1, 1>} : (tensor<?x5x3xf32>) -> tensor<?x5xf32>
  %1 = "ember.strided_slice"(%x) {begin = array<i64: 1>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1>} : (tensor<?x5x3xf32>) -> tensor<?x5x3xf32>
  return %0, %1 : tensor<?x5xf32>, tensor<?x5x3xf32>
}

// -----

// A check over the indices runs first (checks.py): out of [0, 3), the first bad index is
// reported through @ember_error_0; then params are read at (i, index) with tensor.extract.
// CHECK-DAG:   #[[IDX:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK:       func.func private @ember_error_0(i64) attributes {ember.error = "InvalidArgumentError", ember.message = "gather index {} is out of range [0, 3)", ember.op = "ember.gather"
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:    %[[P:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<2x2xi64>)
// CHECK:       %[[BAD:.*]]:2 = scf.for
// CHECK:         scf.for
// CHECK:           tensor.extract %[[I]]
// CHECK:       scf.if %[[BAD]]#0 {
// CHECK-NEXT:    func.call @ember_error_0(%[[BAD]]#1) : (i64) -> ()
// CHECK:       linalg.generic {indexing_maps = [#[[IDX]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[I]] : tensor<2x2xi64>) outs(%{{.*}} : tensor<5x2x2xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:    %[[K:.*]] = arith.index_cast %[[IN]] : i64 to index
// CHECK-NEXT:    %[[ROW:.*]] = linalg.index 0 : index
// CHECK-NEXT:    %[[V:.*]] = tensor.extract %[[P]][%[[ROW]], %[[K]]] : tensor<5x3xf32>
// CHECK-NEXT:    linalg.yield %[[V]] : f32
func.func @gather(%p: tensor<5x3xf32>, %i: tensor<2x2xi64>) -> tensor<5x2x2xf32> {
  %0 = "ember.gather"(%p, %i) {axis = 1 : i64} : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2xf32>
  return %0 : tensor<5x2x2xf32>
}

// -----

// A scalar index into dynamic ui8 params: i8 everywhere, the result sized by tensor.dim.
// CHECK-LABEL: func.func @gather_dynamic_ui8(
// CHECK-SAME:    %[[P:.*]]: tensor<?x4xi8>, %[[I:.*]]: tensor<i32>) -> tensor<?xi8>
// CHECK:       %[[N:.*]] = tensor.dim %[[P]], %{{.*}} : tensor<?x4xi8>
// CHECK:       %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?xi8>
// CHECK:       linalg.generic {{.*}} ins(%[[I]] : tensor<i32>) outs(%[[E]] : tensor<?xi8>)
// CHECK:         tensor.extract %[[P]][%{{.*}}, %{{.*}}] : tensor<?x4xi8>
// CHECK:         linalg.yield %{{.*}} : i8
func.func @gather_dynamic_ui8(%p: tensor<?x4xui8>, %s: tensor<i32>) -> tensor<?xui8> {
  %0 = "ember.gather"(%p, %s) {axis = -1 : i64} : (tensor<?x4xui8>, tensor<i32>) -> tensor<?xui8>
  return %0 : tensor<?xui8>
}

// -----

// ui8 indices zero-extend before the compare with the position on the new axis.
// CHECK-DAG:   #[[IDX:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[SCALAR:.*]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-DAG:   #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @one_hot(
// CHECK-SAME:    %[[I:.*]]: tensor<?x2xi8>, %[[ON:.*]]: tensor<f32>, %[[OFF:.*]]: tensor<f32>)
// CHECK:       %[[N:.*]] = tensor.dim %[[I]], %{{.*}} : tensor<?x2xi8>
// CHECK:       %[[E:.*]] = tensor.empty(%[[N]]) : tensor<3x?x2xf32>
// CHECK:       linalg.generic {indexing_maps = [#[[IDX]], #[[SCALAR]], #[[SCALAR]], #[[ID3]]], {{.*}} ins(%[[I]], %[[ON]], %[[OFF]] : tensor<?x2xi8>, tensor<f32>, tensor<f32>) outs(%[[E]] : tensor<3x?x2xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: i8, %[[HOT:.*]]: f32, %[[COLD:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[WIDE:.*]] = arith.extui %[[IN]] : i8 to i64
// CHECK-NEXT:    %[[POS:.*]] = linalg.index 0 : index
// CHECK-NEXT:    %[[P64:.*]] = arith.index_cast %[[POS]] : index to i64
// CHECK-NEXT:    %[[EQ:.*]] = arith.cmpi eq, %[[WIDE]], %[[P64]] : i64
// CHECK-NEXT:    %[[V:.*]] = arith.select %[[EQ]], %[[HOT]], %[[COLD]] : f32
// CHECK-NEXT:    linalg.yield %[[V]] : f32
func.func @one_hot(%i: tensor<?x2xui8>, %on: tensor<f32>, %off: tensor<f32>) -> tensor<3x?x2xf32> {
  %0 = "ember.one_hot"(%i, %on, %off) {axis = 0 : i64, depth = 3 : i64} : (tensor<?x2xui8>, tensor<f32>, tensor<f32>) -> tensor<3x?x2xf32>
  return %0 : tensor<3x?x2xf32>
}

// -----

// CHECK-LABEL: func.func @pad_constant(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[V:.*]]: tensor<f32>, %[[D:.*]]: tensor<?x4xi8>, %[[W:.*]]: tensor<i8>)
// CHECK:       %[[F:.*]] = tensor.extract %[[V]][] : tensor<f32>
// CHECK:       tensor.pad %[[X]] low[1, 0] high[1, 2] {
// CHECK:         tensor.yield %[[F]] : f32
// CHECK:       } : tensor<2x3xf32> to tensor<4x5xf32>
// CHECK:       %[[G:.*]] = tensor.extract %[[W]][] : tensor<i8>
// CHECK:       tensor.pad %[[D]] low[0, 1] high[0, 1] {
// CHECK:         tensor.yield %[[G]] : i8
// CHECK:       } : tensor<?x4xi8> to tensor<?x6xi8>
func.func @pad_constant(%x: tensor<2x3xf32>, %v: tensor<f32>, %d: tensor<?x4xui8>, %w: tensor<ui8>) -> (tensor<4x5xf32>, tensor<?x6xui8>) {
  %0 = "ember.pad"(%x, %v) {mode = "CONSTANT", paddings = array<i64: 1, 1, 0, 2>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x5xf32>
  %1 = "ember.pad"(%d, %w) {mode = "CONSTANT", paddings = array<i64: 0, 0, 1, 1>} : (tensor<?x4xui8>, tensor<ui8>) -> tensor<?x6xui8>
  return %0, %1 : tensor<4x5xf32>, tensor<?x6xui8>
}

// -----

// REFLECT: j = i - 2; j < 0 reads -j, j >= 3 reads 2 * (3 - 1) - j.
// CHECK-LABEL: func.func @pad_reflect(
// CHECK-SAME:    %[[X:.*]]: tensor<3x3xf32>
// CHECK-DAG:   %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:   %[[N:.*]] = arith.constant 3 : index
// CHECK-DAG:   %[[TOP:.*]] = arith.constant 4 : index
// CHECK:       linalg.generic {{.*}} outs(%{{.*}} : tensor<7x3xf32>)
// CHECK:         %[[I:.*]] = linalg.index 0 : index
// CHECK:         %[[J:.*]] = arith.subi %[[I]], %{{.*}} : index
// CHECK:         %[[BELOW:.*]] = arith.cmpi slt, %[[J]], %[[ZERO]] : index
// CHECK:         %[[NEG:.*]] = arith.subi %[[ZERO]], %[[J]] : index
// CHECK:         %[[ABOVE:.*]] = arith.cmpi sge, %[[J]], %[[N]] : index
// CHECK:         %[[HIGH:.*]] = arith.subi %[[TOP]], %[[J]] : index
// CHECK:         %[[S1:.*]] = arith.select %[[ABOVE]], %[[HIGH]], %[[J]] : index
// CHECK:         %[[ROW:.*]] = arith.select %[[BELOW]], %[[NEG]], %[[S1]] : index
// CHECK:         %[[COL:.*]] = linalg.index 1 : index
// CHECK:         tensor.extract %[[X]][%[[ROW]], %[[COL]]] : tensor<3x3xf32>
func.func @pad_reflect(%x: tensor<3x3xf32>, %v: tensor<f32>) -> tensor<7x3xf32> {
  %0 = "ember.pad"(%x, %v) {mode = "REFLECT", paddings = array<i64: 2, 2, 0, 0>} : (tensor<3x3xf32>, tensor<f32>) -> tensor<7x3xf32>
  return %0 : tensor<7x3xf32>
}

// -----

// SYMMETRIC: j < 0 reads -j - 1, j >= 3 reads 2 * 3 - 1 - j.
// CHECK-LABEL: func.func @pad_symmetric(
// CHECK-DAG:   %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:   %[[TOP:.*]] = arith.constant 5 : index
// CHECK:       linalg.generic {{.*}} outs(%{{.*}} : tensor<3x9xf32>)
// CHECK:         %[[J:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK:         %[[NEG:.*]] = arith.subi %{{.*}}, %[[J]] : index
// CHECK:         arith.subi %[[NEG]], %[[ONE]] : index
// CHECK:         arith.subi %[[TOP]], %[[J]] : index
func.func @pad_symmetric(%x: tensor<3x3xf32>, %v: tensor<f32>) -> tensor<3x9xf32> {
  %0 = "ember.pad"(%x, %v) {mode = "SYMMETRIC", paddings = array<i64: 0, 0, 3, 3>} : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x9xf32>
  return %0 : tensor<3x9xf32>
}

// -----

// A slice of a dynamic dim with constant bounds clamps them when it runs, as Python does:
// [:1] takes min(1, n) elements.
// CHECK-LABEL: func.func @slice_dynamic_head(
// CHECK:         %[[N:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?xf32>
// CHECK:         %[[STOP:.*]] = arith.minsi %{{.*}}, %[[N]] : index
// CHECK:         %[[SIZE:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK:         tensor.extract_slice %{{.*}}[%{{.*}}] [%[[SIZE]]] [1] : tensor<?xf32> to tensor<?xf32>
func.func @slice_dynamic_head(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 0>, begin_mask = 1 : i64, ellipsis_mask = 0 : i64, end = array<i64: 1>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1>} : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// [::-1] of a dynamic dim reads element n-1-i of the whole dim.
// CHECK-LABEL: func.func @slice_dynamic_reversed(
// CHECK:         linalg.generic {{.*}}outs(%{{.*}} : tensor<?xf32>)
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[J:.*]] = arith.subi %{{.*}}, %[[I]] : index
// CHECK:           tensor.extract %{{.*}}[%[[J]]] : tensor<?xf32>
func.func @slice_dynamic_reversed(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 0>, begin_mask = 1 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: -1>} : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// [3::-1] of a dynamic dim: the start clamps to n - 1 when it runs, the slice takes
// min(3, n - 1) + 1 elements with stride 1 from offset 0, and a generic reverses them.
// CHECK-LABEL: func.func @slice_dynamic_reversed_from(
// CHECK:         %[[N:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?xf32>
// CHECK:         %[[LAST:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK:         arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK:         %[[SIZE:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK:         %[[S:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}] [%[[SIZE]]] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK:         linalg.generic {{.*}}outs(%{{.*}} : tensor<?xf32>)
// CHECK:           tensor.extract %[[S]][%{{.*}}] : tensor<?xf32>
func.func @slice_dynamic_reversed_from(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 3>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: -1>} : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// ERR: cannot lower 'ember.strided_slice': operand #0 of type tensor<*xf32> is unranked
func.func @slice_unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 3>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: -1>} : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
