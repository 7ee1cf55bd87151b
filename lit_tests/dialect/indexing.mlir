// Round trip of the indexing ops: strided_slice (plain slices, begin/end masks, negative
// strides, shrink_axis, new_axis and ellipsis masks, on static and dynamic (`?`) dims), gather
// (axis 0 and 1, i32/i64 and multi-dim or dynamic indices), one_hot (axis -1 and 0), and pad
// (CONSTANT, REFLECT and SYMMETRIC modes).

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// x[1:3, ::2]: bit 1 of end_mask ignores end[1].
// CHECK-LABEL: func.func @strided_slice(
// CHECK-SAME:    %[[X:.*]]: tensor<4x6xf32>)
// CHECK:       %[[V0:.*]] = "ember.strided_slice"(%[[X]]) {begin = array<i64: 1, 0>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 3, 0>, end_mask = 2 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
// CHECK:       return %[[V0]] : tensor<2x3xf32>
// GENERIC-LABEL: sym_name = "strided_slice"
// GENERIC:       "ember.strided_slice"({{.*}}) {begin = array<i64: 1, 0>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 3, 0>, end_mask = 2 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
func.func @strided_slice(%x: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 1, 0>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 3, 0>, end_mask = 2 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// x[::-1] reverses; x[-2:] counts from the end.
// CHECK-LABEL: func.func @strided_slice_negative(
// CHECK-SAME:    %[[X:.*]]: tensor<5xi32>)
// CHECK:       %[[V0:.*]] = "ember.strided_slice"(%[[X]]) {begin = array<i64: 0>, begin_mask = 1 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: -1>} : (tensor<5xi32>) -> tensor<5xi32>
// CHECK:       %[[V1:.*]] = "ember.strided_slice"(%[[X]]) {begin = array<i64: -2>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1>} : (tensor<5xi32>) -> tensor<2xi32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<5xi32>, tensor<2xi32>
// GENERIC-LABEL: sym_name = "strided_slice_negative"
// GENERIC:       "ember.strided_slice"({{.*}}) {begin = array<i64: 0>, begin_mask = 1 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: -1>} : (tensor<5xi32>) -> tensor<5xi32>
// GENERIC:       "ember.strided_slice"({{.*}}) {begin = array<i64: -2>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1>} : (tensor<5xi32>) -> tensor<2xi32>
func.func @strided_slice_negative(%x: tensor<5xi32>) -> (tensor<5xi32>, tensor<2xi32>) {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 0>, begin_mask = 1 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: -1>} : (tensor<5xi32>) -> tensor<5xi32>
  %1 = "ember.strided_slice"(%x) {begin = array<i64: -2>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1>} : (tensor<5xi32>) -> tensor<2xi32>
  return %0, %1 : tensor<5xi32>, tensor<2xi32>
}

// x[2] drops the dim (shrink_axis_mask); x[None, :] inserts one (new_axis_mask).
// CHECK-LABEL: func.func @strided_slice_shrink_new_axis(
// CHECK-SAME:    %[[X:.*]]: tensor<4x3xf32>)
// CHECK:       %[[V0:.*]] = "ember.strided_slice"(%[[X]]) {begin = array<i64: 2>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 3>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64, strides = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK:       %[[V1:.*]] = "ember.strided_slice"(%[[X]]) {begin = array<i64: 0, 0>, begin_mask = 2 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0, 0>, end_mask = 2 : i64, new_axis_mask = 1 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<1x4x3xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<3xf32>, tensor<1x4x3xf32>
// GENERIC-LABEL: sym_name = "strided_slice_shrink_new_axis"
// GENERIC:       "ember.strided_slice"({{.*}}) {begin = array<i64: 2>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 3>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64, strides = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<3xf32>
// GENERIC:       "ember.strided_slice"({{.*}}) {begin = array<i64: 0, 0>, begin_mask = 2 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0, 0>, end_mask = 2 : i64, new_axis_mask = 1 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<1x4x3xf32>
func.func @strided_slice_shrink_new_axis(%x: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<1x4x3xf32>) {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 2>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 3>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64, strides = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<3xf32>
  %1 = "ember.strided_slice"(%x) {begin = array<i64: 0, 0>, begin_mask = 2 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0, 0>, end_mask = 2 : i64, new_axis_mask = 1 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<1x4x3xf32>
  return %0, %1 : tensor<3xf32>, tensor<1x4x3xf32>
}

// x[..., 0] on a dynamic tensor: the ellipsis keeps the leading dims, `?` included.
// CHECK-LABEL: func.func @strided_slice_ellipsis_dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?x5x3xf32>)
// CHECK:       %[[V0:.*]] = "ember.strided_slice"(%[[X]]) {begin = array<i64: 0, 0>, begin_mask = 0 : i64, ellipsis_mask = 1 : i64, end = array<i64: 0, 1>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 2 : i64, strides = array<i64: 1, 1>} : (tensor<?x5x3xf32>) -> tensor<?x5xf32>
// CHECK:       %[[V1:.*]] = "ember.strided_slice"(%[[X]]) {begin = array<i64: 1>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1>} : (tensor<?x5x3xf32>) -> tensor<?x5x3xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<?x5xf32>, tensor<?x5x3xf32>
// GENERIC-LABEL: sym_name = "strided_slice_ellipsis_dynamic"
// GENERIC:       "ember.strided_slice"({{.*}}) {begin = array<i64: 0, 0>, begin_mask = 0 : i64, ellipsis_mask = 1 : i64, end = array<i64: 0, 1>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 2 : i64, strides = array<i64: 1, 1>} : (tensor<?x5x3xf32>) -> tensor<?x5xf32>
// GENERIC:       "ember.strided_slice"({{.*}}) {begin = array<i64: 1>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1>} : (tensor<?x5x3xf32>) -> tensor<?x5x3xf32>
func.func @strided_slice_ellipsis_dynamic(%x: tensor<?x5x3xf32>) -> (tensor<?x5xf32>, tensor<?x5x3xf32>) {
  %0 = "ember.strided_slice"(%x) {begin = array<i64: 0, 0>, begin_mask = 0 : i64, ellipsis_mask = 1 : i64, end = array<i64: 0, 1>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 2 : i64, strides = array<i64: 1, 1>} : (tensor<?x5x3xf32>) -> tensor<?x5xf32>
  %1 = "ember.strided_slice"(%x) {begin = array<i64: 1>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 0>, end_mask = 1 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1>} : (tensor<?x5x3xf32>) -> tensor<?x5x3xf32>
  return %0, %1 : tensor<?x5xf32>, tensor<?x5x3xf32>
}

// Result shape: params[:axis] + indices + params[axis+1:].
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:    %[[P:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<2xi32>, %[[J:.*]]: tensor<2x2xi64>)
// CHECK:       %[[V0:.*]] = "ember.gather"(%[[P]], %[[I]]) {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
// CHECK:       %[[V1:.*]] = "ember.gather"(%[[P]], %[[J]]) {axis = 1 : i64} : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<2x3xf32>, tensor<5x2x2xf32>
// GENERIC-LABEL: sym_name = "gather"
// GENERIC:       "ember.gather"({{.*}}) {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
// GENERIC:       "ember.gather"({{.*}}) {axis = 1 : i64} : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2xf32>
func.func @gather(%p: tensor<5x3xf32>, %i: tensor<2xi32>, %j: tensor<2x2xi64>) -> (tensor<2x3xf32>, tensor<5x2x2xf32>) {
  %0 = "ember.gather"(%p, %i) {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
  %1 = "ember.gather"(%p, %j) {axis = 1 : i64} : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<5x2x2xf32>
}

// CHECK-LABEL: func.func @gather_dynamic(
// CHECK-SAME:    %[[P:.*]]: tensor<?x4xi32>, %[[I:.*]]: tensor<?xi32>, %[[S:.*]]: tensor<i64>)
// CHECK:       %[[V0:.*]] = "ember.gather"(%[[P]], %[[I]]) {axis = 0 : i64} : (tensor<?x4xi32>, tensor<?xi32>) -> tensor<?x4xi32>
// CHECK:       %[[V1:.*]] = "ember.gather"(%[[P]], %[[S]]) {axis = -1 : i64} : (tensor<?x4xi32>, tensor<i64>) -> tensor<?xi32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<?x4xi32>, tensor<?xi32>
// GENERIC-LABEL: sym_name = "gather_dynamic"
// GENERIC:       "ember.gather"({{.*}}) {axis = 0 : i64} : (tensor<?x4xi32>, tensor<?xi32>) -> tensor<?x4xi32>
// GENERIC:       "ember.gather"({{.*}}) {axis = -1 : i64} : (tensor<?x4xi32>, tensor<i64>) -> tensor<?xi32>
func.func @gather_dynamic(%p: tensor<?x4xi32>, %i: tensor<?xi32>, %s: tensor<i64>) -> (tensor<?x4xi32>, tensor<?xi32>) {
  %0 = "ember.gather"(%p, %i) {axis = 0 : i64} : (tensor<?x4xi32>, tensor<?xi32>) -> tensor<?x4xi32>
  %1 = "ember.gather"(%p, %s) {axis = -1 : i64} : (tensor<?x4xi32>, tensor<i64>) -> tensor<?xi32>
  return %0, %1 : tensor<?x4xi32>, tensor<?xi32>
}

// The new dim of size depth goes at axis (-1: last).
// CHECK-LABEL: func.func @one_hot(
// CHECK-SAME:    %[[I:.*]]: tensor<4xi32>, %[[ON:.*]]: tensor<f32>, %[[OFF:.*]]: tensor<f32>, %[[D:.*]]: tensor<?x2xi64>)
// CHECK:       %[[V0:.*]] = "ember.one_hot"(%[[I]], %[[ON]], %[[OFF]]) {axis = -1 : i64, depth = 3 : i64} : (tensor<4xi32>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK:       %[[V1:.*]] = "ember.one_hot"(%[[D]], %[[ON]], %[[OFF]]) {axis = 0 : i64, depth = 3 : i64} : (tensor<?x2xi64>, tensor<f32>, tensor<f32>) -> tensor<3x?x2xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4x3xf32>, tensor<3x?x2xf32>
// GENERIC-LABEL: sym_name = "one_hot"
// GENERIC:       "ember.one_hot"({{.*}}) {axis = -1 : i64, depth = 3 : i64} : (tensor<4xi32>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
// GENERIC:       "ember.one_hot"({{.*}}) {axis = 0 : i64, depth = 3 : i64} : (tensor<?x2xi64>, tensor<f32>, tensor<f32>) -> tensor<3x?x2xf32>
func.func @one_hot(%i: tensor<4xi32>, %on: tensor<f32>, %off: tensor<f32>, %d: tensor<?x2xi64>) -> (tensor<4x3xf32>, tensor<3x?x2xf32>) {
  %0 = "ember.one_hot"(%i, %on, %off) {axis = -1 : i64, depth = 3 : i64} : (tensor<4xi32>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
  %1 = "ember.one_hot"(%d, %on, %off) {axis = 0 : i64, depth = 3 : i64} : (tensor<?x2xi64>, tensor<f32>, tensor<f32>) -> tensor<3x?x2xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<3x?x2xf32>
}

// paddings holds (before, after) per dim; a dynamic dim stays dynamic.
// CHECK-LABEL: func.func @pad(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[V:.*]]: tensor<f32>, %[[D:.*]]: tensor<?x4xi32>, %[[W:.*]]: tensor<i32>)
// CHECK:       %[[V0:.*]] = "ember.pad"(%[[X]], %[[V]]) {mode = "CONSTANT", paddings = array<i64: 1, 1, 0, 2>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x5xf32>
// CHECK:       %[[V1:.*]] = "ember.pad"(%[[D]], %[[W]]) {mode = "CONSTANT", paddings = array<i64: 0, 0, 1, 1>} : (tensor<?x4xi32>, tensor<i32>) -> tensor<?x6xi32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4x5xf32>, tensor<?x6xi32>
// GENERIC-LABEL: sym_name = "pad"
// GENERIC:       "ember.pad"({{.*}}) {mode = "CONSTANT", paddings = array<i64: 1, 1, 0, 2>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x5xf32>
// GENERIC:       "ember.pad"({{.*}}) {mode = "CONSTANT", paddings = array<i64: 0, 0, 1, 1>} : (tensor<?x4xi32>, tensor<i32>) -> tensor<?x6xi32>
func.func @pad(%x: tensor<2x3xf32>, %v: tensor<f32>, %d: tensor<?x4xi32>, %w: tensor<i32>) -> (tensor<4x5xf32>, tensor<?x6xi32>) {
  %0 = "ember.pad"(%x, %v) {mode = "CONSTANT", paddings = array<i64: 1, 1, 0, 2>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x5xf32>
  %1 = "ember.pad"(%d, %w) {mode = "CONSTANT", paddings = array<i64: 0, 0, 1, 1>} : (tensor<?x4xi32>, tensor<i32>) -> tensor<?x6xi32>
  return %0, %1 : tensor<4x5xf32>, tensor<?x6xi32>
}

// REFLECT pads at most size - 1 per side, SYMMETRIC at most size.
// CHECK-LABEL: func.func @pad_reflect_symmetric(
// CHECK-SAME:    %[[X:.*]]: tensor<3x3xf32>, %[[V:.*]]: tensor<f32>)
// CHECK:       %[[V0:.*]] = "ember.pad"(%[[X]], %[[V]]) {mode = "REFLECT", paddings = array<i64: 2, 2, 0, 0>} : (tensor<3x3xf32>, tensor<f32>) -> tensor<7x3xf32>
// CHECK:       %[[V1:.*]] = "ember.pad"(%[[X]], %[[V]]) {mode = "SYMMETRIC", paddings = array<i64: 0, 0, 3, 3>} : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x9xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<7x3xf32>, tensor<3x9xf32>
// GENERIC-LABEL: sym_name = "pad_reflect_symmetric"
// GENERIC:       "ember.pad"({{.*}}) {mode = "REFLECT", paddings = array<i64: 2, 2, 0, 0>} : (tensor<3x3xf32>, tensor<f32>) -> tensor<7x3xf32>
// GENERIC:       "ember.pad"({{.*}}) {mode = "SYMMETRIC", paddings = array<i64: 0, 0, 3, 3>} : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x9xf32>
func.func @pad_reflect_symmetric(%x: tensor<3x3xf32>, %v: tensor<f32>) -> (tensor<7x3xf32>, tensor<3x9xf32>) {
  %0 = "ember.pad"(%x, %v) {mode = "REFLECT", paddings = array<i64: 2, 2, 0, 0>} : (tensor<3x3xf32>, tensor<f32>) -> tensor<7x3xf32>
  %1 = "ember.pad"(%x, %v) {mode = "SYMMETRIC", paddings = array<i64: 0, 0, 3, 3>} : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x9xf32>
  return %0, %1 : tensor<7x3xf32>, tensor<3x9xf32>
}

// x[i, 1:j]: bounds as operands (ember.dynamic_strided_slice); the index drops dim 0, the
// slice's length depends on %j: `?`.
// CHECK-LABEL: func.func @dynamic_strided_slice(
// CHECK:       "ember.dynamic_strided_slice"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64} : (tensor<4x6xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?xf32>
// GENERIC-LABEL: sym_name = "dynamic_strided_slice"
// GENERIC:       "ember.dynamic_strided_slice"
func.func @dynamic_strided_slice(%x: tensor<4x6xf32>, %b: tensor<2xi32>, %e: tensor<2xi32>, %s: tensor<2xi32>) -> tensor<?xf32> {
  %0 = "ember.dynamic_strided_slice"(%x, %b, %e, %s) {begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64} : (tensor<4x6xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// tf.slice with begin and size as operands (ember.slice): a size known when tracing is a
// static dim even though begin is only known at run time.
// CHECK-LABEL: func.func @slice(
// CHECK:       "ember.slice"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x6xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x3xf32>
// GENERIC-LABEL: sym_name = "slice"
// GENERIC:       "ember.slice"
func.func @slice(%x: tensor<4x6xf32>, %b: tensor<2xi32>) -> tensor<2x3xf32> {
  %n = "ember.constant"() {value = dense<[2, 3]> : tensor<2xi32>} : () -> tensor<2xi32>
  %0 = "ember.slice"(%x, %b, %n) : (tensor<4x6xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
