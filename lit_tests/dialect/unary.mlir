// Round trip of the unary elementwise ops: every op with a static and a dynamic (`?`) operand,
// across the dtypes it accepts (numeric ops take ints and floats, float-only ops f16/bf16/f32/f64,
// logical_not i1, is_nan/is_finite give i1). Also checked: the generic form parses back to the
// same IR, and a declared result may refine a dynamic dim that inference leaves open.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @neg(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?x3xi32>)
// CHECK:       %[[V0:.*]] = "ember.neg"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.neg"(%[[D]]) : (tensor<?x3xi32>) -> tensor<?x3xi32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?x3xi32>
// GENERIC-LABEL: sym_name = "neg"
// GENERIC:       "ember.neg"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.neg"({{.*}}) : (tensor<?x3xi32>) -> tensor<?x3xi32>
func.func @neg(%s: tensor<4xf32>, %d: tensor<?x3xi32>) -> (tensor<4xf32>, tensor<?x3xi32>) {
  %0 = "ember.neg"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.neg"(%d) : (tensor<?x3xi32>) -> tensor<?x3xi32>
  return %0, %1 : tensor<4xf32>, tensor<?x3xi32>
}

// CHECK-LABEL: func.func @abs(
// CHECK-SAME:    %[[S:.*]]: tensor<4xi32>, %[[D:.*]]: tensor<?xf64>)
// CHECK:       %[[V0:.*]] = "ember.abs"(%[[S]]) : (tensor<4xi32>) -> tensor<4xi32>
// CHECK:       %[[V1:.*]] = "ember.abs"(%[[D]]) : (tensor<?xf64>) -> tensor<?xf64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi32>, tensor<?xf64>
// GENERIC-LABEL: sym_name = "abs"
// GENERIC:       "ember.abs"({{.*}}) : (tensor<4xi32>) -> tensor<4xi32>
// GENERIC:       "ember.abs"({{.*}}) : (tensor<?xf64>) -> tensor<?xf64>
func.func @abs(%s: tensor<4xi32>, %d: tensor<?xf64>) -> (tensor<4xi32>, tensor<?xf64>) {
  %0 = "ember.abs"(%s) : (tensor<4xi32>) -> tensor<4xi32>
  %1 = "ember.abs"(%d) : (tensor<?xf64>) -> tensor<?xf64>
  return %0, %1 : tensor<4xi32>, tensor<?xf64>
}

// CHECK-LABEL: func.func @sign(
// CHECK-SAME:    %[[S:.*]]: tensor<?xf32>, %[[D:.*]]: tensor<2x?xi8>)
// CHECK:       %[[V0:.*]] = "ember.sign"(%[[S]]) : (tensor<?xf32>) -> tensor<?xf32>
// CHECK:       %[[V1:.*]] = "ember.sign"(%[[D]]) : (tensor<2x?xi8>) -> tensor<2x?xi8>
// CHECK:       return %[[V0]], %[[V1]] : tensor<?xf32>, tensor<2x?xi8>
// GENERIC-LABEL: sym_name = "sign"
// GENERIC:       "ember.sign"({{.*}}) : (tensor<?xf32>) -> tensor<?xf32>
// GENERIC:       "ember.sign"({{.*}}) : (tensor<2x?xi8>) -> tensor<2x?xi8>
func.func @sign(%s: tensor<?xf32>, %d: tensor<2x?xi8>) -> (tensor<?xf32>, tensor<2x?xi8>) {
  %0 = "ember.sign"(%s) : (tensor<?xf32>) -> tensor<?xf32>
  %1 = "ember.sign"(%d) : (tensor<2x?xi8>) -> tensor<2x?xi8>
  return %0, %1 : tensor<?xf32>, tensor<2x?xi8>
}

// CHECK-LABEL: func.func @square(
// CHECK-SAME:    %[[S:.*]]: tensor<2x3xf64>, %[[D:.*]]: tensor<?x?xi64>)
// CHECK:       %[[V0:.*]] = "ember.square"(%[[S]]) : (tensor<2x3xf64>) -> tensor<2x3xf64>
// CHECK:       %[[V1:.*]] = "ember.square"(%[[D]]) : (tensor<?x?xi64>) -> tensor<?x?xi64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<2x3xf64>, tensor<?x?xi64>
// GENERIC-LABEL: sym_name = "square"
// GENERIC:       "ember.square"({{.*}}) : (tensor<2x3xf64>) -> tensor<2x3xf64>
// GENERIC:       "ember.square"({{.*}}) : (tensor<?x?xi64>) -> tensor<?x?xi64>
func.func @square(%s: tensor<2x3xf64>, %d: tensor<?x?xi64>) -> (tensor<2x3xf64>, tensor<?x?xi64>) {
  %0 = "ember.square"(%s) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %1 = "ember.square"(%d) : (tensor<?x?xi64>) -> tensor<?x?xi64>
  return %0, %1 : tensor<2x3xf64>, tensor<?x?xi64>
}

// CHECK-LABEL: func.func @relu(
// CHECK-SAME:    %[[S:.*]]: tensor<8xf32>, %[[D:.*]]: tensor<?x8xf16>)
// CHECK:       %[[V0:.*]] = "ember.relu"(%[[S]]) : (tensor<8xf32>) -> tensor<8xf32>
// CHECK:       %[[V1:.*]] = "ember.relu"(%[[D]]) : (tensor<?x8xf16>) -> tensor<?x8xf16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<8xf32>, tensor<?x8xf16>
// GENERIC-LABEL: sym_name = "relu"
// GENERIC:       "ember.relu"({{.*}}) : (tensor<8xf32>) -> tensor<8xf32>
// GENERIC:       "ember.relu"({{.*}}) : (tensor<?x8xf16>) -> tensor<?x8xf16>
func.func @relu(%s: tensor<8xf32>, %d: tensor<?x8xf16>) -> (tensor<8xf32>, tensor<?x8xf16>) {
  %0 = "ember.relu"(%s) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "ember.relu"(%d) : (tensor<?x8xf16>) -> tensor<?x8xf16>
  return %0, %1 : tensor<8xf32>, tensor<?x8xf16>
}

// Rank 0, zero-size and unsigned operands.
// CHECK-LABEL: func.func @neg_rank0_empty_unsigned(
// CHECK-SAME:    %[[S:.*]]: tensor<i16>, %[[E:.*]]: tensor<0x4xf32>, %[[U:.*]]: tensor<3xui8>)
// CHECK:       %[[V0:.*]] = "ember.neg"(%[[S]]) : (tensor<i16>) -> tensor<i16>
// CHECK:       %[[V1:.*]] = "ember.abs"(%[[E]]) : (tensor<0x4xf32>) -> tensor<0x4xf32>
// CHECK:       %[[V2:.*]] = "ember.square"(%[[U]]) : (tensor<3xui8>) -> tensor<3xui8>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]] : tensor<i16>, tensor<0x4xf32>, tensor<3xui8>
// GENERIC-LABEL: sym_name = "neg_rank0_empty_unsigned"
// GENERIC:       "ember.neg"({{.*}}) : (tensor<i16>) -> tensor<i16>
// GENERIC:       "ember.abs"({{.*}}) : (tensor<0x4xf32>) -> tensor<0x4xf32>
// GENERIC:       "ember.square"({{.*}}) : (tensor<3xui8>) -> tensor<3xui8>
func.func @neg_rank0_empty_unsigned(%s: tensor<i16>, %e: tensor<0x4xf32>, %u: tensor<3xui8>) -> (tensor<i16>, tensor<0x4xf32>, tensor<3xui8>) {
  %0 = "ember.neg"(%s) : (tensor<i16>) -> tensor<i16>
  %1 = "ember.abs"(%e) : (tensor<0x4xf32>) -> tensor<0x4xf32>
  %2 = "ember.square"(%u) : (tensor<3xui8>) -> tensor<3xui8>
  return %0, %1, %2 : tensor<i16>, tensor<0x4xf32>, tensor<3xui8>
}

// CHECK-LABEL: func.func @exp(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?xf32>)
// CHECK:       %[[V0:.*]] = "ember.exp"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.exp"(%[[D]]) : (tensor<?xf32>) -> tensor<?xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?xf32>
// GENERIC-LABEL: sym_name = "exp"
// GENERIC:       "ember.exp"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.exp"({{.*}}) : (tensor<?xf32>) -> tensor<?xf32>
func.func @exp(%s: tensor<4xf32>, %d: tensor<?xf32>) -> (tensor<4xf32>, tensor<?xf32>) {
  %0 = "ember.exp"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.exp"(%d) : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<4xf32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @expm1(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?x2xf64>)
// CHECK:       %[[V0:.*]] = "ember.expm1"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.expm1"(%[[D]]) : (tensor<?x2xf64>) -> tensor<?x2xf64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?x2xf64>
// GENERIC-LABEL: sym_name = "expm1"
// GENERIC:       "ember.expm1"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.expm1"({{.*}}) : (tensor<?x2xf64>) -> tensor<?x2xf64>
func.func @expm1(%s: tensor<4xf32>, %d: tensor<?x2xf64>) -> (tensor<4xf32>, tensor<?x2xf64>) {
  %0 = "ember.expm1"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.expm1"(%d) : (tensor<?x2xf64>) -> tensor<?x2xf64>
  return %0, %1 : tensor<4xf32>, tensor<?x2xf64>
}

// CHECK-LABEL: func.func @log(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?xbf16>)
// CHECK:       %[[V0:.*]] = "ember.log"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.log"(%[[D]]) : (tensor<?xbf16>) -> tensor<?xbf16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?xbf16>
// GENERIC-LABEL: sym_name = "log"
// GENERIC:       "ember.log"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.log"({{.*}}) : (tensor<?xbf16>) -> tensor<?xbf16>
func.func @log(%s: tensor<4xf32>, %d: tensor<?xbf16>) -> (tensor<4xf32>, tensor<?xbf16>) {
  %0 = "ember.log"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.log"(%d) : (tensor<?xbf16>) -> tensor<?xbf16>
  return %0, %1 : tensor<4xf32>, tensor<?xbf16>
}

// CHECK-LABEL: func.func @log1p(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf64>, %[[D:.*]]: tensor<?xf32>)
// CHECK:       %[[V0:.*]] = "ember.log1p"(%[[S]]) : (tensor<4xf64>) -> tensor<4xf64>
// CHECK:       %[[V1:.*]] = "ember.log1p"(%[[D]]) : (tensor<?xf32>) -> tensor<?xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf64>, tensor<?xf32>
// GENERIC-LABEL: sym_name = "log1p"
// GENERIC:       "ember.log1p"({{.*}}) : (tensor<4xf64>) -> tensor<4xf64>
// GENERIC:       "ember.log1p"({{.*}}) : (tensor<?xf32>) -> tensor<?xf32>
func.func @log1p(%s: tensor<4xf64>, %d: tensor<?xf32>) -> (tensor<4xf64>, tensor<?xf32>) {
  %0 = "ember.log1p"(%s) : (tensor<4xf64>) -> tensor<4xf64>
  %1 = "ember.log1p"(%d) : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<4xf64>, tensor<?xf32>
}

// CHECK-LABEL: func.func @sqrt(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?x?xf16>)
// CHECK:       %[[V0:.*]] = "ember.sqrt"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.sqrt"(%[[D]]) : (tensor<?x?xf16>) -> tensor<?x?xf16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?x?xf16>
// GENERIC-LABEL: sym_name = "sqrt"
// GENERIC:       "ember.sqrt"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.sqrt"({{.*}}) : (tensor<?x?xf16>) -> tensor<?x?xf16>
func.func @sqrt(%s: tensor<4xf32>, %d: tensor<?x?xf16>) -> (tensor<4xf32>, tensor<?x?xf16>) {
  %0 = "ember.sqrt"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.sqrt"(%d) : (tensor<?x?xf16>) -> tensor<?x?xf16>
  return %0, %1 : tensor<4xf32>, tensor<?x?xf16>
}

// CHECK-LABEL: func.func @rsqrt(
// CHECK-SAME:    %[[S:.*]]: tensor<f32>, %[[D:.*]]: tensor<?xf32>)
// CHECK:       %[[V0:.*]] = "ember.rsqrt"(%[[S]]) : (tensor<f32>) -> tensor<f32>
// CHECK:       %[[V1:.*]] = "ember.rsqrt"(%[[D]]) : (tensor<?xf32>) -> tensor<?xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<f32>, tensor<?xf32>
// GENERIC-LABEL: sym_name = "rsqrt"
// GENERIC:       "ember.rsqrt"({{.*}}) : (tensor<f32>) -> tensor<f32>
// GENERIC:       "ember.rsqrt"({{.*}}) : (tensor<?xf32>) -> tensor<?xf32>
func.func @rsqrt(%s: tensor<f32>, %d: tensor<?xf32>) -> (tensor<f32>, tensor<?xf32>) {
  %0 = "ember.rsqrt"(%s) : (tensor<f32>) -> tensor<f32>
  %1 = "ember.rsqrt"(%d) : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<f32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @tanh(
// CHECK-SAME:    %[[S:.*]]: tensor<1000xf32>, %[[D:.*]]: tensor<?x1000xbf16>)
// CHECK:       %[[V0:.*]] = "ember.tanh"(%[[S]]) : (tensor<1000xf32>) -> tensor<1000xf32>
// CHECK:       %[[V1:.*]] = "ember.tanh"(%[[D]]) : (tensor<?x1000xbf16>) -> tensor<?x1000xbf16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<1000xf32>, tensor<?x1000xbf16>
// GENERIC-LABEL: sym_name = "tanh"
// GENERIC:       "ember.tanh"({{.*}}) : (tensor<1000xf32>) -> tensor<1000xf32>
// GENERIC:       "ember.tanh"({{.*}}) : (tensor<?x1000xbf16>) -> tensor<?x1000xbf16>
func.func @tanh(%s: tensor<1000xf32>, %d: tensor<?x1000xbf16>) -> (tensor<1000xf32>, tensor<?x1000xbf16>) {
  %0 = "ember.tanh"(%s) : (tensor<1000xf32>) -> tensor<1000xf32>
  %1 = "ember.tanh"(%d) : (tensor<?x1000xbf16>) -> tensor<?x1000xbf16>
  return %0, %1 : tensor<1000xf32>, tensor<?x1000xbf16>
}

// CHECK-LABEL: func.func @sigmoid(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?xf64>)
// CHECK:       %[[V0:.*]] = "ember.sigmoid"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.sigmoid"(%[[D]]) : (tensor<?xf64>) -> tensor<?xf64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?xf64>
// GENERIC-LABEL: sym_name = "sigmoid"
// GENERIC:       "ember.sigmoid"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.sigmoid"({{.*}}) : (tensor<?xf64>) -> tensor<?xf64>
func.func @sigmoid(%s: tensor<4xf32>, %d: tensor<?xf64>) -> (tensor<4xf32>, tensor<?xf64>) {
  %0 = "ember.sigmoid"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.sigmoid"(%d) : (tensor<?xf64>) -> tensor<?xf64>
  return %0, %1 : tensor<4xf32>, tensor<?xf64>
}

// CHECK-LABEL: func.func @sin(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?xf32>)
// CHECK:       %[[V0:.*]] = "ember.sin"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.sin"(%[[D]]) : (tensor<?xf32>) -> tensor<?xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?xf32>
// GENERIC-LABEL: sym_name = "sin"
// GENERIC:       "ember.sin"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.sin"({{.*}}) : (tensor<?xf32>) -> tensor<?xf32>
func.func @sin(%s: tensor<4xf32>, %d: tensor<?xf32>) -> (tensor<4xf32>, tensor<?xf32>) {
  %0 = "ember.sin"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.sin"(%d) : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<4xf32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @cos(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf16>, %[[D:.*]]: tensor<?xf32>)
// CHECK:       %[[V0:.*]] = "ember.cos"(%[[S]]) : (tensor<4xf16>) -> tensor<4xf16>
// CHECK:       %[[V1:.*]] = "ember.cos"(%[[D]]) : (tensor<?xf32>) -> tensor<?xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf16>, tensor<?xf32>
// GENERIC-LABEL: sym_name = "cos"
// GENERIC:       "ember.cos"({{.*}}) : (tensor<4xf16>) -> tensor<4xf16>
// GENERIC:       "ember.cos"({{.*}}) : (tensor<?xf32>) -> tensor<?xf32>
func.func @cos(%s: tensor<4xf16>, %d: tensor<?xf32>) -> (tensor<4xf16>, tensor<?xf32>) {
  %0 = "ember.cos"(%s) : (tensor<4xf16>) -> tensor<4xf16>
  %1 = "ember.cos"(%d) : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<4xf16>, tensor<?xf32>
}

// CHECK-LABEL: func.func @floor(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?xbf16>)
// CHECK:       %[[V0:.*]] = "ember.floor"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.floor"(%[[D]]) : (tensor<?xbf16>) -> tensor<?xbf16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?xbf16>
// GENERIC-LABEL: sym_name = "floor"
// GENERIC:       "ember.floor"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.floor"({{.*}}) : (tensor<?xbf16>) -> tensor<?xbf16>
func.func @floor(%s: tensor<4xf32>, %d: tensor<?xbf16>) -> (tensor<4xf32>, tensor<?xbf16>) {
  %0 = "ember.floor"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.floor"(%d) : (tensor<?xbf16>) -> tensor<?xbf16>
  return %0, %1 : tensor<4xf32>, tensor<?xbf16>
}

// CHECK-LABEL: func.func @ceil(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?xf64>)
// CHECK:       %[[V0:.*]] = "ember.ceil"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.ceil"(%[[D]]) : (tensor<?xf64>) -> tensor<?xf64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?xf64>
// GENERIC-LABEL: sym_name = "ceil"
// GENERIC:       "ember.ceil"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.ceil"({{.*}}) : (tensor<?xf64>) -> tensor<?xf64>
func.func @ceil(%s: tensor<4xf32>, %d: tensor<?xf64>) -> (tensor<4xf32>, tensor<?xf64>) {
  %0 = "ember.ceil"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.ceil"(%d) : (tensor<?xf64>) -> tensor<?xf64>
  return %0, %1 : tensor<4xf32>, tensor<?xf64>
}

// CHECK-LABEL: func.func @round(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?x?x?xf32>)
// CHECK:       %[[V0:.*]] = "ember.round"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.round"(%[[D]]) : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?x?x?xf32>
// GENERIC-LABEL: sym_name = "round"
// GENERIC:       "ember.round"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.round"({{.*}}) : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
func.func @round(%s: tensor<4xf32>, %d: tensor<?x?x?xf32>) -> (tensor<4xf32>, tensor<?x?x?xf32>) {
  %0 = "ember.round"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.round"(%d) : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %0, %1 : tensor<4xf32>, tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @logical_not(
// CHECK-SAME:    %[[S:.*]]: tensor<4xi1>, %[[D:.*]]: tensor<?x2xi1>)
// CHECK:       %[[V0:.*]] = "ember.logical_not"(%[[S]]) : (tensor<4xi1>) -> tensor<4xi1>
// CHECK:       %[[V1:.*]] = "ember.logical_not"(%[[D]]) : (tensor<?x2xi1>) -> tensor<?x2xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi1>, tensor<?x2xi1>
// GENERIC-LABEL: sym_name = "logical_not"
// GENERIC:       "ember.logical_not"({{.*}}) : (tensor<4xi1>) -> tensor<4xi1>
// GENERIC:       "ember.logical_not"({{.*}}) : (tensor<?x2xi1>) -> tensor<?x2xi1>
func.func @logical_not(%s: tensor<4xi1>, %d: tensor<?x2xi1>) -> (tensor<4xi1>, tensor<?x2xi1>) {
  %0 = "ember.logical_not"(%s) : (tensor<4xi1>) -> tensor<4xi1>
  %1 = "ember.logical_not"(%d) : (tensor<?x2xi1>) -> tensor<?x2xi1>
  return %0, %1 : tensor<4xi1>, tensor<?x2xi1>
}

// is_nan and is_finite keep the shape and give i1.
// CHECK-LABEL: func.func @is_nan(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?xbf16>)
// CHECK:       %[[V0:.*]] = "ember.is_nan"(%[[S]]) : (tensor<4xf32>) -> tensor<4xi1>
// CHECK:       %[[V1:.*]] = "ember.is_nan"(%[[D]]) : (tensor<?xbf16>) -> tensor<?xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi1>, tensor<?xi1>
// GENERIC-LABEL: sym_name = "is_nan"
// GENERIC:       "ember.is_nan"({{.*}}) : (tensor<4xf32>) -> tensor<4xi1>
// GENERIC:       "ember.is_nan"({{.*}}) : (tensor<?xbf16>) -> tensor<?xi1>
func.func @is_nan(%s: tensor<4xf32>, %d: tensor<?xbf16>) -> (tensor<4xi1>, tensor<?xi1>) {
  %0 = "ember.is_nan"(%s) : (tensor<4xf32>) -> tensor<4xi1>
  %1 = "ember.is_nan"(%d) : (tensor<?xbf16>) -> tensor<?xi1>
  return %0, %1 : tensor<4xi1>, tensor<?xi1>
}

// CHECK-LABEL: func.func @is_finite(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?x3xf64>)
// CHECK:       %[[V0:.*]] = "ember.is_finite"(%[[S]]) : (tensor<4xf32>) -> tensor<4xi1>
// CHECK:       %[[V1:.*]] = "ember.is_finite"(%[[D]]) : (tensor<?x3xf64>) -> tensor<?x3xi1>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xi1>, tensor<?x3xi1>
// GENERIC-LABEL: sym_name = "is_finite"
// GENERIC:       "ember.is_finite"({{.*}}) : (tensor<4xf32>) -> tensor<4xi1>
// GENERIC:       "ember.is_finite"({{.*}}) : (tensor<?x3xf64>) -> tensor<?x3xi1>
func.func @is_finite(%s: tensor<4xf32>, %d: tensor<?x3xf64>) -> (tensor<4xi1>, tensor<?x3xi1>) {
  %0 = "ember.is_finite"(%s) : (tensor<4xf32>) -> tensor<4xi1>
  %1 = "ember.is_finite"(%d) : (tensor<?x3xf64>) -> tensor<?x3xi1>
  return %0, %1 : tensor<4xi1>, tensor<?x3xi1>
}

// A declared result may refine a dim that inference leaves dynamic, and may leave one dynamic.
// CHECK-LABEL: func.func @refined_result(
// CHECK-SAME:    %[[D:.*]]: tensor<?x4xf32>, %[[S:.*]]: tensor<2x4xf32>)
// CHECK:       %[[V0:.*]] = "ember.exp"(%[[D]]) : (tensor<?x4xf32>) -> tensor<2x4xf32>
// CHECK:       %[[V1:.*]] = "ember.exp"(%[[S]]) : (tensor<2x4xf32>) -> tensor<?x4xf32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<2x4xf32>, tensor<?x4xf32>
// GENERIC-LABEL: sym_name = "refined_result"
// GENERIC:       "ember.exp"({{.*}}) : (tensor<?x4xf32>) -> tensor<2x4xf32>
// GENERIC:       "ember.exp"({{.*}}) : (tensor<2x4xf32>) -> tensor<?x4xf32>
func.func @refined_result(%d: tensor<?x4xf32>, %s: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<?x4xf32>) {
  %0 = "ember.exp"(%d) : (tensor<?x4xf32>) -> tensor<2x4xf32>
  %1 = "ember.exp"(%s) : (tensor<2x4xf32>) -> tensor<?x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<?x4xf32>
}

// Unranked operands (e.g. the results of an em.py_function host callback) are accepted.
// CHECK-LABEL: func.func @unranked(
// CHECK:       "ember.neg"(%{{.*}}) : (tensor<*xf32>) -> tensor<*xf32>
// CHECK:       "ember.tanh"(%{{.*}}) : (tensor<*xf32>) -> tensor<3xf32>
// GENERIC-LABEL: sym_name = "unranked"
// GENERIC:       "ember.neg"({{.*}}) : (tensor<*xf32>) -> tensor<*xf32>
func.func @unranked(%a: tensor<*xf32>) -> (tensor<*xf32>, tensor<3xf32>) {
  %0 = "ember.neg"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  %1 = "ember.tanh"(%a) : (tensor<*xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<*xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @erf(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?xf64>)
// CHECK:       %[[V0:.*]] = "ember.erf"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.erfc"(%[[D]]) : (tensor<?xf64>) -> tensor<?xf64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<?xf64>
// GENERIC-LABEL: sym_name = "erf"
// GENERIC:       "ember.erf"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.erfc"({{.*}}) : (tensor<?xf64>) -> tensor<?xf64>
func.func @erf(%s: tensor<4xf32>, %d: tensor<?xf64>) -> (tensor<4xf32>, tensor<?xf64>) {
  %0 = "ember.erf"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.erfc"(%d) : (tensor<?xf64>) -> tensor<?xf64>
  return %0, %1 : tensor<4xf32>, tensor<?xf64>
}

// CHECK-LABEL: func.func @lgamma_digamma(
// CHECK-SAME:    %[[S:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<?xf64>, %[[H:.*]]: tensor<2xbf16>)
// CHECK:       %[[V0:.*]] = "ember.lgamma"(%[[S]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       %[[V1:.*]] = "ember.digamma"(%[[D]]) : (tensor<?xf64>) -> tensor<?xf64>
// CHECK:       %[[V2:.*]] = "ember.digamma"(%[[H]]) : (tensor<2xbf16>) -> tensor<2xbf16>
// CHECK:       return %[[V0]], %[[V1]], %[[V2]] : tensor<4xf32>, tensor<?xf64>, tensor<2xbf16>
// GENERIC-LABEL: sym_name = "lgamma_digamma"
// GENERIC:       "ember.lgamma"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:       "ember.digamma"({{.*}}) : (tensor<?xf64>) -> tensor<?xf64>
func.func @lgamma_digamma(%s: tensor<4xf32>, %d: tensor<?xf64>, %h: tensor<2xbf16>) -> (tensor<4xf32>, tensor<?xf64>, tensor<2xbf16>) {
  %0 = "ember.lgamma"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.digamma"(%d) : (tensor<?xf64>) -> tensor<?xf64>
  %2 = "ember.digamma"(%h) : (tensor<2xbf16>) -> tensor<2xbf16>
  return %0, %1, %2 : tensor<4xf32>, tensor<?xf64>, tensor<2xbf16>
}
