// convert-ember-to-linalg on ember.dynamic_strided_slice and ember.slice: bounds are read
// with tensor.extract and clamped as Python slices clamp (checked, for ember.slice); an index out of range calls the op's error site
// (checks.py); the slice is one tensor.extract_slice with dynamic offsets and sizes. Ops whose
// shape is an operand lower as their attribute forms once their result type is static.

// RUN: ember-opt %s -p convert-ember-to-linalg | FileCheck %s

// x[i]: the index is checked against [-4, 4), wrapped when negative, and drops dim 0.
// CHECK:       func.func private @ember_error_0(i64) attributes {ember.error = "OpShapeError", ember.message = "index {} is out of bounds for dim 0 of size 4 in tensor<4x6xf32>"
// CHECK-LABEL: func.func @index(
// CHECK:         %[[I:.*]] = tensor.extract %{{.*}}[%{{.*}}] : tensor<1xi32>
// CHECK:         %[[J:.*]] = arith.index_cast %[[I]] : i32 to index
// CHECK:         scf.if
// CHECK:           func.call @ember_error_0
// CHECK:         %[[O:.*]] = arith.select %{{.*}}, %{{.*}}, %[[J]] : index
// CHECK:         tensor.extract_slice %{{.*}}[%[[O]], 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<6xf32>
func.func @index(%x: tensor<4x6xf32>, %b: tensor<1xi32>) -> tensor<6xf32> {
  %z = "ember.constant"() {value = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %one = "ember.constant"() {value = dense<1> : tensor<1xi32>} : () -> tensor<1xi32>
  %0 = "ember.dynamic_strided_slice"(%x, %b, %z, %one) {begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64} : (tensor<4x6xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// x[b:e:2]: start and stop clamp into [0, 5]; size = max(0, ceildiv(stop - start, 2)).
// CHECK-LABEL: func.func @slice(
// CHECK:         arith.minsi
// CHECK:         arith.ceildivsi
// CHECK:         %[[N:.*]] = arith.maxsi
// CHECK:         tensor.extract_slice %{{.*}}[%{{.*}}] [%[[N]]] [2] : tensor<5xf32> to tensor<?xf32>
func.func @slice(%x: tensor<5xf32>, %b: tensor<1xi64>, %e: tensor<1xi64>) -> tensor<?xf32> {
  %two = "ember.constant"() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "ember.dynamic_strided_slice"(%x, %b, %e, %two) {begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64} : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// tf.slice: begin must lie in [0, n] and the length (size, or n - begin for -1) in
// [0, n - begin]; else the shape site reports the bounds and the runtime raises the op's
// inference error. A known size is a static size of the extract_slice.
// CHECK:       func.func private @[[SITE:ember_error_[0-9]+]](i64, i64, i64, i64, i64) attributes {{{.*}}ember.error = "OpShapeError", {{.*}}ember.op = "ember.slice", {{.*}}ember.valued = "[1, 2]"
// CHECK-LABEL: func.func @tf_slice(
// CHECK:         %[[B:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK:         arith.cmpi slt, %[[B]]
// CHECK:         scf.if
// CHECK:           func.call @[[SITE]]
// CHECK:         tensor.extract_slice %{{.*}}[%[[B]], %{{.*}}] [2, %{{.*}}] [1, 1] : tensor<4x?xf32> to tensor<2x?xf32>
func.func @tf_slice(%x: tensor<4x?xf32>, %b: tensor<2xi32>) -> tensor<2x?xf32> {
  %n = "ember.constant"() {value = dense<[2, -1]> : tensor<2xi32>} : () -> tensor<2xi32>
  %0 = "ember.slice"(%x, %b, %n) : (tensor<4x?xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// A reshape whose shape operand inference fixed (tensor<3x8xf32>) lowers as ember.reshape does.
// CHECK-LABEL: func.func @reshape_static_result(
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<3x4x2xf32> into tensor<3x8xf32>
func.func @reshape_static_result(%x: tensor<3x4x2xf32>) -> tensor<3x8xf32> {
  %d = "ember.constant"() {value = dense<[3, -1]> : tensor<2xi32>} : () -> tensor<2xi32>
  %r = "ember.dynamic_reshape"(%x, %d) : (tensor<3x4x2xf32>, tensor<2xi32>) -> tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}
