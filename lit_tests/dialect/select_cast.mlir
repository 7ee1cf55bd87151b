// Round trip of ember.select (three-way broadcasting of condition, true and false values) and
// ember.cast (every kind of dtype change, including bf16, ui8 and i1; strings only to strings),
// on static and dynamic (`?`) shapes.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @select(
// CHECK-SAME:    %[[C:.*]]: tensor<4xi1>, %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<f32>)
// CHECK:       %[[V0:.*]] = "ember.select"(%[[C]], %[[X]], %[[Y]]) : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK:       return %[[V0]] : tensor<4xf32>
// GENERIC-LABEL: sym_name = "select"
// GENERIC:       "ember.select"({{.*}}) : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
func.func @select(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<f32>) -> tensor<4xf32> {
  %0 = "ember.select"(%c, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// The result shape broadcasts all three operands: [?, 1] x [3] x [] -> [?, 3].
// CHECK-LABEL: func.func @select_broadcast_dynamic(
// CHECK-SAME:    %[[C:.*]]: tensor<?x1xi1>, %[[X:.*]]: tensor<3xi64>, %[[Y:.*]]: tensor<i64>)
// CHECK:       %[[V0:.*]] = "ember.select"(%[[C]], %[[X]], %[[Y]]) : (tensor<?x1xi1>, tensor<3xi64>, tensor<i64>) -> tensor<?x3xi64>
// CHECK:       return %[[V0]] : tensor<?x3xi64>
// GENERIC-LABEL: sym_name = "select_broadcast_dynamic"
// GENERIC:       "ember.select"({{.*}}) : (tensor<?x1xi1>, tensor<3xi64>, tensor<i64>) -> tensor<?x3xi64>
func.func @select_broadcast_dynamic(%c: tensor<?x1xi1>, %x: tensor<3xi64>, %y: tensor<i64>) -> tensor<?x3xi64> {
  %0 = "ember.select"(%c, %x, %y) : (tensor<?x1xi1>, tensor<3xi64>, tensor<i64>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// A scalar condition picks whole tensors; strings can be selected too.
// CHECK-LABEL: func.func @select_scalar_condition_strings(
// CHECK-SAME:    %[[C:.*]]: tensor<i1>, %[[X:.*]]: tensor<2x!ember.string>, %[[Y:.*]]: tensor<2x!ember.string>)
// CHECK:       %[[V0:.*]] = "ember.select"(%[[C]], %[[X]], %[[Y]]) : (tensor<i1>, tensor<2x!ember.string>, tensor<2x!ember.string>) -> tensor<2x!ember.string>
// CHECK:       return %[[V0]] : tensor<2x!ember.string>
// GENERIC-LABEL: sym_name = "select_scalar_condition_strings"
// GENERIC:       "ember.select"({{.*}}) : (tensor<i1>, tensor<2x!ember.string>, tensor<2x!ember.string>) -> tensor<2x!ember.string>
func.func @select_scalar_condition_strings(%c: tensor<i1>, %x: tensor<2x!ember.string>, %y: tensor<2x!ember.string>) -> tensor<2x!ember.string> {
  %0 = "ember.select"(%c, %x, %y) : (tensor<i1>, tensor<2x!ember.string>, tensor<2x!ember.string>) -> tensor<2x!ember.string>
  return %0 : tensor<2x!ember.string>
}

// CHECK-LABEL: func.func @cast_float_int(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<?x2xi32>)
// CHECK:       %[[V0:.*]] = "ember.cast"(%[[X]]) {dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
// CHECK:       %[[V1:.*]] = "ember.cast"(%[[I]]) {dtype = f64} : (tensor<?x2xi32>) -> tensor<?x2xf64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi32>, tensor<?x2xf64>
// GENERIC-LABEL: sym_name = "cast_float_int"
// GENERIC:       "ember.cast"({{.*}}) {dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
// GENERIC:       "ember.cast"({{.*}}) {dtype = f64} : (tensor<?x2xi32>) -> tensor<?x2xf64>
func.func @cast_float_int(%x: tensor<4xf32>, %i: tensor<?x2xi32>) -> (tensor<4xi32>, tensor<?x2xf64>) {
  %0 = "ember.cast"(%x) {dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
  %1 = "ember.cast"(%i) {dtype = f64} : (tensor<?x2xi32>) -> tensor<?x2xf64>
  return %0, %1 : tensor<4xi32>, tensor<?x2xf64>
}

// Half-precision floats, unsigned bytes and booleans.
// CHECK-LABEL: func.func @cast_narrow_types(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32>, %[[U:.*]]: tensor<3xui8>, %[[B:.*]]: tensor<2x2xi1>)
// CHECK:       %[[V0:.*]] = "ember.cast"(%[[X]]) {dtype = bf16} : (tensor<?xf32>) -> tensor<?xbf16>
// CHECK:       %[[V1:.*]] = "ember.cast"(%[[X]]) {dtype = f16} : (tensor<?xf32>) -> tensor<?xf16>
// CHECK:       %[[V2:.*]] = "ember.cast"(%[[U]]) {dtype = i64} : (tensor<3xui8>) -> tensor<3xi64>
// CHECK:       %[[V3:.*]] = "ember.cast"(%[[B]]) {dtype = f32} : (tensor<2x2xi1>) -> tensor<2x2xf32>
// CHECK:       %[[V4:.*]] = "ember.cast"(%[[X]]) {dtype = i1} : (tensor<?xf32>) -> tensor<?xi1>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]], %[[V3]], %[[V4]] : tensor<?xbf16>, tensor<?xf16>, tensor<3xi64>, tensor<2x2xf32>, tensor<?xi1>
// GENERIC-LABEL: sym_name = "cast_narrow_types"
// GENERIC:       "ember.cast"({{.*}}) {dtype = bf16} : (tensor<?xf32>) -> tensor<?xbf16>
// GENERIC:       "ember.cast"({{.*}}) {dtype = f16} : (tensor<?xf32>) -> tensor<?xf16>
// GENERIC:       "ember.cast"({{.*}}) {dtype = i64} : (tensor<3xui8>) -> tensor<3xi64>
// GENERIC:       "ember.cast"({{.*}}) {dtype = f32} : (tensor<2x2xi1>) -> tensor<2x2xf32>
// GENERIC:       "ember.cast"({{.*}}) {dtype = i1} : (tensor<?xf32>) -> tensor<?xi1>
func.func @cast_narrow_types(%x: tensor<?xf32>, %u: tensor<3xui8>, %b: tensor<2x2xi1>) -> (tensor<?xbf16>, tensor<?xf16>, tensor<3xi64>, tensor<2x2xf32>, tensor<?xi1>) {
  %0 = "ember.cast"(%x) {dtype = bf16} : (tensor<?xf32>) -> tensor<?xbf16>
  %1 = "ember.cast"(%x) {dtype = f16} : (tensor<?xf32>) -> tensor<?xf16>
  %2 = "ember.cast"(%u) {dtype = i64} : (tensor<3xui8>) -> tensor<3xi64>
  %3 = "ember.cast"(%b) {dtype = f32} : (tensor<2x2xi1>) -> tensor<2x2xf32>
  %4 = "ember.cast"(%x) {dtype = i1} : (tensor<?xf32>) -> tensor<?xi1>
  return %0, %1, %2, %3, %4 : tensor<?xbf16>, tensor<?xf16>, tensor<3xi64>, tensor<2x2xf32>, tensor<?xi1>
}

// Casting to the same dtype, and string to string, are allowed.
// CHECK-LABEL: func.func @cast_identity(
// CHECK-SAME:    %[[X:.*]]: tensor<i8>, %[[S:.*]]: tensor<?x!ember.string>)
// CHECK:       %[[V0:.*]] = "ember.cast"(%[[X]]) {dtype = i8} : (tensor<i8>) -> tensor<i8>
// CHECK:       %[[V1:.*]] = "ember.cast"(%[[S]]) {dtype = !ember.string} : (tensor<?x!ember.string>) -> tensor<?x!ember.string>
// CHECK:       return %[[V0]], %[[V1]] : tensor<i8>, tensor<?x!ember.string>
// GENERIC-LABEL: sym_name = "cast_identity"
// GENERIC:       "ember.cast"({{.*}}) {dtype = i8} : (tensor<i8>) -> tensor<i8>
// GENERIC:       "ember.cast"({{.*}}) {dtype = !ember.string} : (tensor<?x!ember.string>) -> tensor<?x!ember.string>
func.func @cast_identity(%x: tensor<i8>, %s: tensor<?x!ember.string>) -> (tensor<i8>, tensor<?x!ember.string>) {
  %0 = "ember.cast"(%x) {dtype = i8} : (tensor<i8>) -> tensor<i8>
  %1 = "ember.cast"(%s) {dtype = !ember.string} : (tensor<?x!ember.string>) -> tensor<?x!ember.string>
  return %0, %1 : tensor<i8>, tensor<?x!ember.string>
}

// select of values computed by cast: where(x > 0, int(x), 0).
// CHECK-LABEL: func.func @select_of_casts(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32>, %[[ZERO:.*]]: tensor<f32>, %[[IZERO:.*]]: tensor<i32>)
// CHECK:       %[[POS:.*]] = "ember.greater"(%[[X]], %[[ZERO]]) : (tensor<?xf32>, tensor<f32>) -> tensor<?xi1>
// CHECK:       %[[INT:.*]] = "ember.cast"(%[[X]]) {dtype = i32} : (tensor<?xf32>) -> tensor<?xi32>
// CHECK:       %[[OUT:.*]] = "ember.select"(%[[POS]], %[[INT]], %[[IZERO]]) : (tensor<?xi1>, tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
// CHECK:       return %[[OUT]] : tensor<?xi32>
// GENERIC-LABEL: sym_name = "select_of_casts"
// GENERIC:       "ember.greater"({{.*}}) : (tensor<?xf32>, tensor<f32>) -> tensor<?xi1>
// GENERIC:       "ember.cast"({{.*}}) {dtype = i32} : (tensor<?xf32>) -> tensor<?xi32>
// GENERIC:       "ember.select"({{.*}}) : (tensor<?xi1>, tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
func.func @select_of_casts(%x: tensor<?xf32>, %zero: tensor<f32>, %izero: tensor<i32>) -> tensor<?xi32> {
  %pos = "ember.greater"(%x, %zero) : (tensor<?xf32>, tensor<f32>) -> tensor<?xi1>
  %int = "ember.cast"(%x) {dtype = i32} : (tensor<?xf32>) -> tensor<?xi32>
  %out = "ember.select"(%pos, %int, %izero) : (tensor<?xi1>, tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  return %out : tensor<?xi32>
}
