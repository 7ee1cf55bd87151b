// Round trip of the binary arithmetic ops (add, sub, mul, div, floordiv, mod, pow, maximum,
// minimum): numpy broadcasting between static, dynamic (`?`) and rank-0 operands, no implicit
// dtype promotion, `div` of integers giving floats, and `add` concatenating string tensors.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Same shapes, a broadcast row, and a dynamic dim broadcast against 1.
// CHECK-LABEL: func.func @add(
// CHECK-SAME:    %[[A:.*]]: tensor<2x3xf32>, %[[ROW:.*]]: tensor<3xf32>, %[[D:.*]]: tensor<?x3xf32>, %[[ONE:.*]]: tensor<1x3xf32>)
// CHECK:       %[[SAME:.*]] = "ember.add"(%[[A]], %[[A]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:       %[[BCAST:.*]] = "ember.add"(%[[A]], %[[ROW]]) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:       %[[DYN:.*]] = "ember.add"(%[[D]], %[[ONE]]) : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
// CHECK:       return %[[SAME]], %[[BCAST]], %[[DYN]] : tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x3xf32>
// GENERIC-LABEL: sym_name = "add"
// GENERIC:       "ember.add"({{.*}}) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// GENERIC:       "ember.add"({{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// GENERIC:       "ember.add"({{.*}}) : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
func.func @add(%a: tensor<2x3xf32>, %row: tensor<3xf32>, %d: tensor<?x3xf32>, %one: tensor<1x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x3xf32>) {
  %same = "ember.add"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %bcast = "ember.add"(%a, %row) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %dyn = "ember.add"(%d, %one) : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  return %same, %bcast, %dyn : tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x3xf32>
}

// Strings concatenate elementwise; a dynamic dim meeting a static one gives the static size.
// CHECK-LABEL: func.func @add_strings_and_refine(
// CHECK-SAME:    %[[S:.*]]: tensor<2x!ember.string>, %[[T:.*]]: tensor<!ember.string>, %[[D:.*]]: tensor<?xi64>, %[[E:.*]]: tensor<4xi64>)
// CHECK:       %[[CAT:.*]] = "ember.add"(%[[S]], %[[T]]) : (tensor<2x!ember.string>, tensor<!ember.string>) -> tensor<2x!ember.string>
// CHECK:       %[[SUM:.*]] = "ember.add"(%[[D]], %[[E]]) : (tensor<?xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK:       return %[[CAT]], %[[SUM]] : tensor<2x!ember.string>, tensor<4xi64>
// GENERIC-LABEL: sym_name = "add_strings_and_refine"
// GENERIC:       "ember.add"({{.*}}) : (tensor<2x!ember.string>, tensor<!ember.string>) -> tensor<2x!ember.string>
// GENERIC:       "ember.add"({{.*}}) : (tensor<?xi64>, tensor<4xi64>) -> tensor<4xi64>
func.func @add_strings_and_refine(%s: tensor<2x!ember.string>, %t: tensor<!ember.string>, %d: tensor<?xi64>, %e: tensor<4xi64>) -> (tensor<2x!ember.string>, tensor<4xi64>) {
  %cat = "ember.add"(%s, %t) : (tensor<2x!ember.string>, tensor<!ember.string>) -> tensor<2x!ember.string>
  %sum = "ember.add"(%d, %e) : (tensor<?xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %cat, %sum : tensor<2x!ember.string>, tensor<4xi64>
}

// A rank-0 rhs broadcasts to any shape.
// CHECK-LABEL: func.func @sub(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<i32>, %[[D:.*]]: tensor<?x?xf16>, %[[E:.*]]: tensor<f16>)
// CHECK:       %[[V0:.*]] = "ember.sub"(%[[X]], %[[Y]]) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
// CHECK:       %[[V1:.*]] = "ember.sub"(%[[D]], %[[E]]) : (tensor<?x?xf16>, tensor<f16>) -> tensor<?x?xf16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi32>, tensor<?x?xf16>
// GENERIC-LABEL: sym_name = "sub"
// GENERIC:       "ember.sub"({{.*}}) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
// GENERIC:       "ember.sub"({{.*}}) : (tensor<?x?xf16>, tensor<f16>) -> tensor<?x?xf16>
func.func @sub(%x: tensor<4xi32>, %y: tensor<i32>, %d: tensor<?x?xf16>, %e: tensor<f16>) -> (tensor<4xi32>, tensor<?x?xf16>) {
  %0 = "ember.sub"(%x, %y) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %1 = "ember.sub"(%d, %e) : (tensor<?x?xf16>, tensor<f16>) -> tensor<?x?xf16>
  return %0, %1 : tensor<4xi32>, tensor<?x?xf16>
}

// Rank extension on both sides: [4, 1] * [3] -> [4, 3].
// CHECK-LABEL: func.func @mul(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xf32>, %[[Y:.*]]: tensor<1x4xf32>, %[[COL:.*]]: tensor<4x1xbf16>, %[[ROW:.*]]: tensor<3xbf16>)
// CHECK:       %[[V0:.*]] = "ember.mul"(%[[X]], %[[Y]]) : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
// CHECK:       %[[V1:.*]] = "ember.mul"(%[[COL]], %[[ROW]]) : (tensor<4x1xbf16>, tensor<3xbf16>) -> tensor<4x3xbf16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<?x4xf32>, tensor<4x3xbf16>
// GENERIC-LABEL: sym_name = "mul"
// GENERIC:       "ember.mul"({{.*}}) : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
// GENERIC:       "ember.mul"({{.*}}) : (tensor<4x1xbf16>, tensor<3xbf16>) -> tensor<4x3xbf16>
func.func @mul(%x: tensor<?x4xf32>, %y: tensor<1x4xf32>, %col: tensor<4x1xbf16>, %row: tensor<3xbf16>) -> (tensor<?x4xf32>, tensor<4x3xbf16>) {
  %0 = "ember.mul"(%x, %y) : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %1 = "ember.mul"(%col, %row) : (tensor<4x1xbf16>, tensor<3xbf16>) -> tensor<4x3xbf16>
  return %0, %1 : tensor<?x4xf32>, tensor<4x3xbf16>
}

// True division: i32/i64 give f64, i8/i16/ui8 give f32, floats keep their type.
// CHECK-LABEL: func.func @div(
// CHECK-SAME:    %[[A:.*]]: tensor<4xi32>, %[[B:.*]]: tensor<?xi8>, %[[C:.*]]: tensor<2xui8>, %[[F:.*]]: tensor<?x2xf32>)
// CHECK:       %[[V0:.*]] = "ember.div"(%[[A]], %[[A]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xf64>
// CHECK:       %[[V1:.*]] = "ember.div"(%[[B]], %[[B]]) : (tensor<?xi8>, tensor<?xi8>) -> tensor<?xf32>
// CHECK:       %[[V2:.*]] = "ember.div"(%[[C]], %[[C]]) : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xf32>
// CHECK:       %[[V3:.*]] = "ember.div"(%[[F]], %[[F]]) : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]], %[[V3]] : tensor<4xf64>, tensor<?xf32>, tensor<2xf32>, tensor<?x2xf32>
// GENERIC-LABEL: sym_name = "div"
// GENERIC:       "ember.div"({{.*}}) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xf64>
// GENERIC:       "ember.div"({{.*}}) : (tensor<?xi8>, tensor<?xi8>) -> tensor<?xf32>
// GENERIC:       "ember.div"({{.*}}) : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xf32>
// GENERIC:       "ember.div"({{.*}}) : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
func.func @div(%a: tensor<4xi32>, %b: tensor<?xi8>, %c: tensor<2xui8>, %f: tensor<?x2xf32>) -> (tensor<4xf64>, tensor<?xf32>, tensor<2xf32>, tensor<?x2xf32>) {
  %0 = "ember.div"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xf64>
  %1 = "ember.div"(%b, %b) : (tensor<?xi8>, tensor<?xi8>) -> tensor<?xf32>
  %2 = "ember.div"(%c, %c) : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xf32>
  %3 = "ember.div"(%f, %f) : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  return %0, %1, %2, %3 : tensor<4xf64>, tensor<?xf32>, tensor<2xf32>, tensor<?x2xf32>
}

// CHECK-LABEL: func.func @floordiv(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi32>, %[[D:.*]]: tensor<?xf64>, %[[S:.*]]: tensor<f64>)
// CHECK:       %[[V0:.*]] = "ember.floordiv"(%[[X]], %[[X]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:       %[[V1:.*]] = "ember.floordiv"(%[[D]], %[[S]]) : (tensor<?xf64>, tensor<f64>) -> tensor<?xf64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi32>, tensor<?xf64>
// GENERIC-LABEL: sym_name = "floordiv"
// GENERIC:       "ember.floordiv"({{.*}}) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// GENERIC:       "ember.floordiv"({{.*}}) : (tensor<?xf64>, tensor<f64>) -> tensor<?xf64>
func.func @floordiv(%x: tensor<4xi32>, %d: tensor<?xf64>, %s: tensor<f64>) -> (tensor<4xi32>, tensor<?xf64>) {
  %0 = "ember.floordiv"(%x, %x) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = "ember.floordiv"(%d, %s) : (tensor<?xf64>, tensor<f64>) -> tensor<?xf64>
  return %0, %1 : tensor<4xi32>, tensor<?xf64>
}

// CHECK-LABEL: func.func @mod(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi64>, %[[D:.*]]: tensor<2x?xf32>, %[[R:.*]]: tensor<?xf32>)
// CHECK:       %[[V0:.*]] = "ember.mod"(%[[X]], %[[X]]) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK:       %[[V1:.*]] = "ember.mod"(%[[D]], %[[R]]) : (tensor<2x?xf32>, tensor<?xf32>) -> tensor<2x?xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi64>, tensor<2x?xf32>
// GENERIC-LABEL: sym_name = "mod"
// GENERIC:       "ember.mod"({{.*}}) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// GENERIC:       "ember.mod"({{.*}}) : (tensor<2x?xf32>, tensor<?xf32>) -> tensor<2x?xf32>
func.func @mod(%x: tensor<4xi64>, %d: tensor<2x?xf32>, %r: tensor<?xf32>) -> (tensor<4xi64>, tensor<2x?xf32>) {
  %0 = "ember.mod"(%x, %x) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = "ember.mod"(%d, %r) : (tensor<2x?xf32>, tensor<?xf32>) -> tensor<2x?xf32>
  return %0, %1 : tensor<4xi64>, tensor<2x?xf32>
}

// CHECK-LABEL: func.func @pow(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<f32>, %[[D:.*]]: tensor<?xi16>)
// CHECK:       %[[V0:.*]] = "ember.pow"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.pow"(%[[D]], %[[D]]) : (tensor<?xi16>, tensor<?xi16>) -> tensor<?xi16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?xi16>
// GENERIC-LABEL: sym_name = "pow"
// GENERIC:       "ember.pow"({{.*}}) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// GENERIC:       "ember.pow"({{.*}}) : (tensor<?xi16>, tensor<?xi16>) -> tensor<?xi16>
func.func @pow(%x: tensor<4xf32>, %y: tensor<f32>, %d: tensor<?xi16>) -> (tensor<4xf32>, tensor<?xi16>) {
  %0 = "ember.pow"(%x, %y) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = "ember.pow"(%d, %d) : (tensor<?xi16>, tensor<?xi16>) -> tensor<?xi16>
  return %0, %1 : tensor<4xf32>, tensor<?xi16>
}

// CHECK-LABEL: func.func @maximum(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?x1xi32>, %[[R:.*]]: tensor<5xi32>)
// CHECK:       %[[V0:.*]] = "ember.maximum"(%[[X]], %[[X]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.maximum"(%[[D]], %[[R]]) : (tensor<?x1xi32>, tensor<5xi32>) -> tensor<?x5xi32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?x5xi32>
// GENERIC-LABEL: sym_name = "maximum"
// GENERIC:       "ember.maximum"({{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.maximum"({{.*}}) : (tensor<?x1xi32>, tensor<5xi32>) -> tensor<?x5xi32>
func.func @maximum(%x: tensor<4xf32>, %d: tensor<?x1xi32>, %r: tensor<5xi32>) -> (tensor<4xf32>, tensor<?x5xi32>) {
  %0 = "ember.maximum"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.maximum"(%d, %r) : (tensor<?x1xi32>, tensor<5xi32>) -> tensor<?x5xi32>
  return %0, %1 : tensor<4xf32>, tensor<?x5xi32>
}

// CHECK-LABEL: func.func @minimum(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?xf64>)
// CHECK:       %[[V0:.*]] = "ember.minimum"(%[[X]], %[[X]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.minimum"(%[[D]], %[[D]]) : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?xf64>
// GENERIC-LABEL: sym_name = "minimum"
// GENERIC:       "ember.minimum"({{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.minimum"({{.*}}) : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
func.func @minimum(%x: tensor<4xf32>, %d: tensor<?xf64>) -> (tensor<4xf32>, tensor<?xf64>) {
  %0 = "ember.minimum"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.minimum"(%d, %d) : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
  return %0, %1 : tensor<4xf32>, tensor<?xf64>
}

// Zero-size dims broadcast like any other size.
// CHECK-LABEL: func.func @zero_size(
// CHECK-SAME:    %[[E:.*]]: tensor<0x3xf32>, %[[R:.*]]: tensor<3xf32>, %[[O:.*]]: tensor<1xf32>)
// CHECK:       %[[V0:.*]] = "ember.add"(%[[E]], %[[R]]) : (tensor<0x3xf32>, tensor<3xf32>) -> tensor<0x3xf32>
// CHECK:       %[[V1:.*]] = "ember.mul"(%[[O]], %[[E]]) : (tensor<1xf32>, tensor<0x3xf32>) -> tensor<0x3xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<0x3xf32>, tensor<0x3xf32>
// GENERIC-LABEL: sym_name = "zero_size"
// GENERIC:       "ember.add"({{.*}}) : (tensor<0x3xf32>, tensor<3xf32>) -> tensor<0x3xf32>
// GENERIC:       "ember.mul"({{.*}}) : (tensor<1xf32>, tensor<0x3xf32>) -> tensor<0x3xf32>
func.func @zero_size(%e: tensor<0x3xf32>, %r: tensor<3xf32>, %o: tensor<1xf32>) -> (tensor<0x3xf32>, tensor<0x3xf32>) {
  %0 = "ember.add"(%e, %r) : (tensor<0x3xf32>, tensor<3xf32>) -> tensor<0x3xf32>
  %1 = "ember.mul"(%o, %e) : (tensor<1xf32>, tensor<0x3xf32>) -> tensor<0x3xf32>
  return %0, %1 : tensor<0x3xf32>, tensor<0x3xf32>
}
