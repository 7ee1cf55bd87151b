// Round trip of the creation ops: ember.constant for every dtype (f32, f64, f16, bf16, i8..i64,
// ui8, i1 and `!ember.string`, including splats, rank 0, zero-size and escaped strings),
// ember.fill and ember.range (a static result when their operands are constants, `?` otherwise)
// and ember.shape (i32 or i64, of static and dynamic inputs).

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @constant_floats(
// CHECK:       %[[F32:.*]] = "ember.constant"() {value = dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK:       %[[F64:.*]] = "ember.constant"() {value = dense<{{\[\[}}1.000000e+00, -2.000000e+00], [5.000000e-01, 1.000000e+10]]> : tensor<2x2xf64>} : () -> tensor<2x2xf64>
// CHECK:       %[[F16:.*]] = "ember.constant"() {value = dense<[5.000000e-01, 1.000000e+00, 6.550400e+04]> : tensor<3xf16>} : () -> tensor<3xf16>
// CHECK:       %[[SCALAR:.*]] = "ember.constant"() {value = dense<3.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:       return %[[F32]], %[[F64]], %[[F16]], %[[SCALAR]] : tensor<2xf32>, tensor<2x2xf64>, tensor<3xf16>, tensor<f32>
// GENERIC-LABEL: sym_name = "constant_floats"
// GENERIC:       "ember.constant"() {value = dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
// GENERIC:       "ember.constant"() {value = dense<{{\[\[}}1.000000e+00, -2.000000e+00], [5.000000e-01, 1.000000e+10]]> : tensor<2x2xf64>} : () -> tensor<2x2xf64>
// GENERIC:       "ember.constant"() {value = dense<[5.000000e-01, 1.000000e+00, 6.550400e+04]> : tensor<3xf16>} : () -> tensor<3xf16>
// GENERIC:       "ember.constant"() {value = dense<3.000000e+00> : tensor<f32>} : () -> tensor<f32>
func.func @constant_floats() -> (tensor<2xf32>, tensor<2x2xf64>, tensor<3xf16>, tensor<f32>) {
  %f32 = "ember.constant"() {value = dense<[1.0, 2.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %f64 = "ember.constant"() {value = dense<[[1.0, -2.0], [0.5, 1.0e10]]> : tensor<2x2xf64>} : () -> tensor<2x2xf64>
  %f16 = "ember.constant"() {value = dense<[0.5, 1.0, 65504.0]> : tensor<3xf16>} : () -> tensor<3xf16>
  %scalar = "ember.constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  return %f32, %f64, %f16, %scalar : tensor<2xf32>, tensor<2x2xf64>, tensor<3xf16>, tensor<f32>
}

// bf16 prints in decimal; a splat keeps its single value.
// CHECK-LABEL: func.func @constant_bf16(
// CHECK:       %[[LIST:.*]] = "ember.constant"() {value = dense<[1.000000e+00, -2.500000e+00, 7.812500e-03]> : tensor<3xbf16>} : () -> tensor<3xbf16>
// CHECK:       %[[SPLAT:.*]] = "ember.constant"() {value = dense<1.500000e+00> : tensor<2x2xbf16>} : () -> tensor<2x2xbf16>
// CHECK:       return %[[LIST]], %[[SPLAT]] : tensor<3xbf16>, tensor<2x2xbf16>
// GENERIC-LABEL: sym_name = "constant_bf16"
// GENERIC:       "ember.constant"() {value = dense<[1.000000e+00, -2.500000e+00, 7.812500e-03]> : tensor<3xbf16>} : () -> tensor<3xbf16>
// GENERIC:       "ember.constant"() {value = dense<1.500000e+00> : tensor<2x2xbf16>} : () -> tensor<2x2xbf16>
func.func @constant_bf16() -> (tensor<3xbf16>, tensor<2x2xbf16>) {
  %list = "ember.constant"() {value = dense<[1.0, -2.5, 0.0078125]> : tensor<3xbf16>} : () -> tensor<3xbf16>
  %splat = "ember.constant"() {value = dense<1.5> : tensor<2x2xbf16>} : () -> tensor<2x2xbf16>
  return %list, %splat : tensor<3xbf16>, tensor<2x2xbf16>
}

// CHECK-LABEL: func.func @constant_integers(
// CHECK:       %[[I8:.*]] = "ember.constant"() {value = dense<[-128, 127]> : tensor<2xi8>} : () -> tensor<2xi8>
// CHECK:       %[[I16:.*]] = "ember.constant"() {value = dense<[-32768, 32767]> : tensor<2xi16>} : () -> tensor<2xi16>
// CHECK:       %[[I32:.*]] = "ember.constant"() {value = dense<[1, 2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
// CHECK:       %[[I64:.*]] = "ember.constant"() {value = dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>} : () -> tensor<2xi64>
// CHECK:       return %[[I8]], %[[I16]], %[[I32]], %[[I64]] : tensor<2xi8>, tensor<2xi16>, tensor<3xi32>, tensor<2xi64>
// GENERIC-LABEL: sym_name = "constant_integers"
// GENERIC:       "ember.constant"() {value = dense<[-128, 127]> : tensor<2xi8>} : () -> tensor<2xi8>
// GENERIC:       "ember.constant"() {value = dense<[-32768, 32767]> : tensor<2xi16>} : () -> tensor<2xi16>
// GENERIC:       "ember.constant"() {value = dense<[1, 2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
// GENERIC:       "ember.constant"() {value = dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>} : () -> tensor<2xi64>
func.func @constant_integers() -> (tensor<2xi8>, tensor<2xi16>, tensor<3xi32>, tensor<2xi64>) {
  %i8 = "ember.constant"() {value = dense<[-128, 127]> : tensor<2xi8>} : () -> tensor<2xi8>
  %i16 = "ember.constant"() {value = dense<[-32768, 32767]> : tensor<2xi16>} : () -> tensor<2xi16>
  %i32 = "ember.constant"() {value = dense<[1, 2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
  %i64 = "ember.constant"() {value = dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>} : () -> tensor<2xi64>
  return %i8, %i16, %i32, %i64 : tensor<2xi8>, tensor<2xi16>, tensor<3xi32>, tensor<2xi64>
}

// ui8 keeps values above 127; i1 prints as true/false.
// CHECK-LABEL: func.func @constant_ui8_i1(
// CHECK:       %[[U:.*]] = "ember.constant"() {value = dense<[0, 128, 255]> : tensor<3xui8>} : () -> tensor<3xui8>
// CHECK:       %[[B:.*]] = "ember.constant"() {value = dense<{{\[\[}}true, false], [false, true]]> : tensor<2x2xi1>} : () -> tensor<2x2xi1>
// CHECK:       %[[T:.*]] = "ember.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
// CHECK:       return %[[U]], %[[B]], %[[T]] : tensor<3xui8>, tensor<2x2xi1>, tensor<i1>
// GENERIC-LABEL: sym_name = "constant_ui8_i1"
// GENERIC:       "ember.constant"() {value = dense<[0, 128, 255]> : tensor<3xui8>} : () -> tensor<3xui8>
// GENERIC:       "ember.constant"() {value = dense<{{\[\[}}true, false], [false, true]]> : tensor<2x2xi1>} : () -> tensor<2x2xi1>
// GENERIC:       "ember.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
func.func @constant_ui8_i1() -> (tensor<3xui8>, tensor<2x2xi1>, tensor<i1>) {
  %u = "ember.constant"() {value = dense<[0, 128, 255]> : tensor<3xui8>} : () -> tensor<3xui8>
  %b = "ember.constant"() {value = dense<[[true, false], [false, true]]> : tensor<2x2xi1>} : () -> tensor<2x2xi1>
  %t = "ember.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  return %u, %b, %t : tensor<3xui8>, tensor<2x2xi1>, tensor<i1>
}

// String tensors: plain, escaped (quote, newline, UTF-8 bytes) and splat.
// CHECK-LABEL: func.func @constant_strings(
// CHECK:       %[[S:.*]] = "ember.constant"() {value = dense<["hello", "world"]> : tensor<2x!ember.string>} : () -> tensor<2x!ember.string>
// CHECK:       %[[E:.*]] = "ember.constant"() {value = dense<"say \22hi\22\0A\E2\82\AC"> : tensor<!ember.string>} : () -> tensor<!ember.string>
// CHECK:       %[[SPLAT:.*]] = "ember.constant"() {value = dense<"x"> : tensor<3x!ember.string>} : () -> tensor<3x!ember.string>
// CHECK:       return %[[S]], %[[E]], %[[SPLAT]] : tensor<2x!ember.string>, tensor<!ember.string>, tensor<3x!ember.string>
// GENERIC-LABEL: sym_name = "constant_strings"
// GENERIC:       "ember.constant"() {value = dense<["hello", "world"]> : tensor<2x!ember.string>} : () -> tensor<2x!ember.string>
// GENERIC:       "ember.constant"() {value = dense<"say \22hi\22\0A\E2\82\AC"> : tensor<!ember.string>} : () -> tensor<!ember.string>
// GENERIC:       "ember.constant"() {value = dense<"x"> : tensor<3x!ember.string>} : () -> tensor<3x!ember.string>
func.func @constant_strings() -> (tensor<2x!ember.string>, tensor<!ember.string>, tensor<3x!ember.string>) {
  %s = "ember.constant"() {value = dense<["hello", "world"]> : tensor<2x!ember.string>} : () -> tensor<2x!ember.string>
  %e = "ember.constant"() {value = dense<"say \22hi\22\0A\E2\82\AC"> : tensor<!ember.string>} : () -> tensor<!ember.string>
  %splat = "ember.constant"() {value = dense<"x"> : tensor<3x!ember.string>} : () -> tensor<3x!ember.string>
  return %s, %e, %splat : tensor<2x!ember.string>, tensor<!ember.string>, tensor<3x!ember.string>
}

// Zero-size constants.
// CHECK-LABEL: func.func @constant_empty(
// CHECK:       %[[V0:.*]] = "ember.constant"() {value = dense<> : tensor<0xf32>} : () -> tensor<0xf32>
// CHECK:       %[[V1:.*]] = "ember.constant"() {value = dense<> : tensor<2x0xi32>} : () -> tensor<2x0xi32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<0xf32>, tensor<2x0xi32>
// GENERIC-LABEL: sym_name = "constant_empty"
// GENERIC:       "ember.constant"() {value = dense<> : tensor<0xf32>} : () -> tensor<0xf32>
// GENERIC:       "ember.constant"() {value = dense<> : tensor<2x0xi32>} : () -> tensor<2x0xi32>
func.func @constant_empty() -> (tensor<0xf32>, tensor<2x0xi32>) {
  %0 = "ember.constant"() {value = dense<> : tensor<0xf32>} : () -> tensor<0xf32>
  %1 = "ember.constant"() {value = dense<> : tensor<2x0xi32>} : () -> tensor<2x0xi32>
  return %0, %1 : tensor<0xf32>, tensor<2x0xi32>
}

// Constant dims give a static shape.
// CHECK-LABEL: func.func @fill_static(
// CHECK:       %[[DIMS:.*]] = "ember.constant"() {value = dense<[3, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
// CHECK:       %[[V:.*]] = "ember.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:       %[[Z:.*]] = "ember.fill"(%[[DIMS]], %[[V]]) : (tensor<2xi64>, tensor<f32>) -> tensor<3x4xf32>
// CHECK:       return %[[Z]] : tensor<3x4xf32>
// GENERIC-LABEL: sym_name = "fill_static"
// GENERIC:       "ember.constant"() {value = dense<[3, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
// GENERIC:       "ember.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
// GENERIC:       "ember.fill"({{.*}}) : (tensor<2xi64>, tensor<f32>) -> tensor<3x4xf32>
func.func @fill_static() -> tensor<3x4xf32> {
  %dims = "ember.constant"() {value = dense<[3, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %v = "ember.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %z = "ember.fill"(%dims, %v) : (tensor<2xi64>, tensor<f32>) -> tensor<3x4xf32>
  return %z : tensor<3x4xf32>
}

// Unknown dims give `?` per element of the shape operand; a declared result may refine them.
// CHECK-LABEL: func.func @fill_dynamic(
// CHECK-SAME:    %[[DIMS:.*]]: tensor<2xi32>, %[[V:.*]]: tensor<i1>, %[[S:.*]]: tensor<!ember.string>)
// CHECK:       %[[V0:.*]] = "ember.fill"(%[[DIMS]], %[[V]]) : (tensor<2xi32>, tensor<i1>) -> tensor<?x?xi1>
// CHECK:       %[[V1:.*]] = "ember.fill"(%[[DIMS]], %[[S]]) : (tensor<2xi32>, tensor<!ember.string>) -> tensor<2x?x!ember.string>
// CHECK:       return %[[V0]], %[[V1]] : tensor<?x?xi1>, tensor<2x?x!ember.string>
// GENERIC-LABEL: sym_name = "fill_dynamic"
// GENERIC:       "ember.fill"({{.*}}) : (tensor<2xi32>, tensor<i1>) -> tensor<?x?xi1>
// GENERIC:       "ember.fill"({{.*}}) : (tensor<2xi32>, tensor<!ember.string>) -> tensor<2x?x!ember.string>
func.func @fill_dynamic(%dims: tensor<2xi32>, %v: tensor<i1>, %s: tensor<!ember.string>) -> (tensor<?x?xi1>, tensor<2x?x!ember.string>) {
  %0 = "ember.fill"(%dims, %v) : (tensor<2xi32>, tensor<i1>) -> tensor<?x?xi1>
  %1 = "ember.fill"(%dims, %s) : (tensor<2xi32>, tensor<!ember.string>) -> tensor<2x?x!ember.string>
  return %0, %1 : tensor<?x?xi1>, tensor<2x?x!ember.string>
}

// Constant bounds give a static length: ceil((10 - 1) / 2) = 5, and 0 for an empty range.
// CHECK-LABEL: func.func @range_static(
// CHECK:       %[[START:.*]] = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
// CHECK:       %[[LIMIT:.*]] = "ember.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
// CHECK:       %[[DELTA:.*]] = "ember.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
// CHECK:       %[[R:.*]] = "ember.range"(%[[START]], %[[LIMIT]], %[[DELTA]]) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<5xi32>
// CHECK:       %[[FS:.*]] = "ember.constant"() {value = dense<3.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:       %[[FL:.*]] = "ember.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK:       %[[FD:.*]] = "ember.constant"() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
// CHECK:       %[[EMPTY:.*]] = "ember.range"(%[[FS]], %[[FL]], %[[FD]]) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<0xf32>
// CHECK:       return %[[R]], %[[EMPTY]] : tensor<5xi32>, tensor<0xf32>
// GENERIC-LABEL: sym_name = "range_static"
// GENERIC:       "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
// GENERIC:       "ember.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
// GENERIC:       "ember.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
// GENERIC:       "ember.range"({{.*}}) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<5xi32>
// GENERIC:       "ember.constant"() {value = dense<3.000000e+00> : tensor<f32>} : () -> tensor<f32>
// GENERIC:       "ember.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
// GENERIC:       "ember.constant"() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
// GENERIC:       "ember.range"({{.*}}) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<0xf32>
func.func @range_static() -> (tensor<5xi32>, tensor<0xf32>) {
  %start = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %limit = "ember.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
  %delta = "ember.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %r = "ember.range"(%start, %limit, %delta) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<5xi32>
  %fs = "ember.constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %fl = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %fd = "ember.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %empty = "ember.range"(%fs, %fl, %fd) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<0xf32>
  return %r, %empty : tensor<5xi32>, tensor<0xf32>
}

// CHECK-LABEL: func.func @range_dynamic(
// CHECK-SAME:    %[[START:.*]]: tensor<i64>, %[[LIMIT:.*]]: tensor<i64>, %[[DELTA:.*]]: tensor<i64>)
// CHECK:       %[[R:.*]] = "ember.range"(%[[START]], %[[LIMIT]], %[[DELTA]]) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
// CHECK:       return %[[R]] : tensor<?xi64>
// GENERIC-LABEL: sym_name = "range_dynamic"
// GENERIC:       "ember.range"({{.*}}) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
func.func @range_dynamic(%start: tensor<i64>, %limit: tensor<i64>, %delta: tensor<i64>) -> tensor<?xi64> {
  %r = "ember.range"(%start, %limit, %delta) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %r : tensor<?xi64>
}

// The result length is the operand's rank, whatever its dims.
// CHECK-LABEL: func.func @shape(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xf32>, %[[S:.*]]: tensor<f64>, %[[Y:.*]]: tensor<2x3x5xi8>)
// CHECK:       %[[V0:.*]] = "ember.shape"(%[[X]]) {dtype = i32} : (tensor<?x4xf32>) -> tensor<2xi32>
// CHECK:       %[[V1:.*]] = "ember.shape"(%[[S]]) {dtype = i64} : (tensor<f64>) -> tensor<0xi64>
// CHECK:       %[[V2:.*]] = "ember.shape"(%[[Y]]) {dtype = i64} : (tensor<2x3x5xi8>) -> tensor<3xi64>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]] : tensor<2xi32>, tensor<0xi64>, tensor<3xi64>
// GENERIC-LABEL: sym_name = "shape"
// GENERIC:       "ember.shape"({{.*}}) {dtype = i32} : (tensor<?x4xf32>) -> tensor<2xi32>
// GENERIC:       "ember.shape"({{.*}}) {dtype = i64} : (tensor<f64>) -> tensor<0xi64>
// GENERIC:       "ember.shape"({{.*}}) {dtype = i64} : (tensor<2x3x5xi8>) -> tensor<3xi64>
func.func @shape(%x: tensor<?x4xf32>, %s: tensor<f64>, %y: tensor<2x3x5xi8>) -> (tensor<2xi32>, tensor<0xi64>, tensor<3xi64>) {
  %0 = "ember.shape"(%x) {dtype = i32} : (tensor<?x4xf32>) -> tensor<2xi32>
  %1 = "ember.shape"(%s) {dtype = i64} : (tensor<f64>) -> tensor<0xi64>
  %2 = "ember.shape"(%y) {dtype = i64} : (tensor<2x3x5xi8>) -> tensor<3xi64>
  return %0, %1, %2 : tensor<2xi32>, tensor<0xi64>, tensor<3xi64>
}
