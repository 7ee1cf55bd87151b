// convert-ember-to-linalg on nn ops: SAME padding as tensor.pad of the input, then conv2d
// as patches times filter rows (a linalg.matmul; the named conv for a `?` channel count),
// depthwise: linalg.depthwise_conv_2d_nhwc_hwcm and a collapse of (C, M),
// linalg.pooling_nhwc_max(_unsigned) on an init of the lowest value, linalg.pooling_nhwc_sum
// divided by a constant table of window counts; half floats in f32, integer averages in f64. softmax/log_softmax: max-reduce,
// sum of exp(x - max), then normalise — three linalg.generics.

// The last case cannot be lowered: ember-opt exits 1 and names it on stderr.
// RUN: not ember-opt %s -p convert-ember-to-linalg --split-input-file 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err

// conv2d is a GEMM: patches [N*OH*OW, KH*KW*C] (the gather's map holds the strides; a
// constant [KH, KW] operand only gives loops i and j their sizes), the filter as
// [KH*KW*C, F], a linalg.matmul on a zero fill, and a copy back to NHWC.
// SAME, stride 2 on 5x5 with a 3x3 filter: 3x3 outputs, one row/column of zeros each side.
// CHECK-DAG:   #[[READ:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 floordiv 9, ((d0 floordiv 3) mod 3) * 2 + d1, (d0 mod 3) * 2 + d2, d3)>
// CHECK-DAG:   #[[TAPS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-DAG:   #[[COLS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, (d1 * 3 + d2) * 3 + d3)>
// CHECK-DAG:   #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[ROWS:.*]] = affine_map<(d0, d1, d2, d3) -> ((d0 * 3 + d1) * 3 + d2, d3)>
// CHECK-LABEL: func.func @conv_same(
// CHECK-SAME:    %[[X:.*]]: tensor<1x5x5x3xf32>, %[[F:.*]]: tensor<3x3x3x8xf32>)
// CHECK:       %[[PZ:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:       %[[P:.*]] = tensor.pad %[[X]] low[0, 1, 1, 0] high[0, 1, 1, 0] {
// CHECK:         tensor.yield %[[PZ]] : f32
// CHECK:       } : tensor<1x5x5x3xf32> to tensor<1x7x7x3xf32>
// CHECK:       %[[T:.*]] = arith.constant dense<0> : tensor<3x3xi8>
// CHECK:       %[[A:.*]] = linalg.generic {indexing_maps = [#[[READ]], #[[TAPS]], #[[COLS]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[P]], %[[T]] : tensor<1x7x7x3xf32>, tensor<3x3xi8>) outs(%{{.*}} : tensor<9x27xf32>)
// CHECK-NEXT:  ^bb0(%[[V:.*]]: f32, %{{.*}}: i8, %{{.*}}: f32):
// CHECK-NEXT:    linalg.yield %[[V]] : f32
// CHECK:       %[[B:.*]] = linalg.generic {indexing_maps = [#[[ID4]], #[[ROWS]]], {{.*}} ins(%[[F]] : tensor<3x3x3x8xf32>) outs(%{{.*}} : tensor<27x8xf32>)
// CHECK:       %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<9x8xf32>)
// CHECK:       %[[C:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<9x27xf32>, tensor<27x8xf32>) outs(%[[Z]] : tensor<9x8xf32>)
// CHECK:       %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ROWS]], #[[ID4]]], {{.*}} ins(%[[C]] : tensor<9x8xf32>) outs(%{{.*}} : tensor<1x3x3x8xf32>)
// CHECK-NOT:   linalg.conv_2d_nhwc_hwcf
// CHECK:       return %[[Y]]
func.func @conv_same(%x: tensor<1x5x5x3xf32>, %f: tensor<3x3x3x8xf32>) -> tensor<1x3x3x8xf32> {
  %0 = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 2, 2>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  return %0 : tensor<1x3x3x8xf32>
}

// -----

// VALID needs no pad; dilation 2 in the gather's map; a dynamic batch gives M = N * 15;
// f16 is extended to f32 by both copies (an f32 GEMM) and the result rounded once.
// CHECK-DAG:   #[[READ:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 floordiv 15, (d0 floordiv 3) mod 5 + d1 * 2, d0 mod 3 + d2 * 2, d3)>
// CHECK-LABEL: func.func @conv_valid_dilated_f16(
// CHECK-SAME:    %[[X:.*]]: tensor<?x9x7x2xf16>, %[[F:.*]]: tensor<3x3x2x4xf16>)
// CHECK-NOT:   tensor.pad
// CHECK:       %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x9x7x2xf16>
// CHECK:       %[[C15:.*]] = arith.constant 15 : index
// CHECK:       %[[M:.*]] = arith.muli %[[N]], %[[C15]] : index
// CHECK:       %[[E:.*]] = tensor.empty(%[[M]]) : tensor<?x18xf32>
// CHECK:       %[[A:.*]] = linalg.generic {indexing_maps = [#[[READ]], {{.*}} ins(%[[X]], %{{.*}} : tensor<?x9x7x2xf16>, tensor<3x3xi8>) outs(%[[E]] : tensor<?x18xf32>)
// CHECK:         arith.extf %{{.*}} : f16 to f32
// CHECK:       %[[B:.*]] = linalg.generic {{.*}} ins(%[[F]] : tensor<3x3x2x4xf16>) outs(%{{.*}} : tensor<18x4xf32>)
// CHECK:         arith.extf %{{.*}} : f16 to f32
// CHECK:       %[[C:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<?x18xf32>, tensor<18x4xf32>) outs(%{{.*}} : tensor<?x4xf32>)
// CHECK:       %[[Y:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<?x4xf32>) outs(%{{.*}} : tensor<?x5x3x4xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[Y]] : tensor<?x5x3x4xf32>) outs(%{{.*}} : tensor<?x5x3x4xf16>)
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @conv_valid_dilated_f16(%x: tensor<?x9x7x2xf16>, %f: tensor<3x3x2x4xf16>) -> tensor<?x5x3x4xf16> {
  %0 = "ember.conv2d"(%x, %f) {dilations = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<?x9x7x2xf16>, tensor<3x3x2x4xf16>) -> tensor<?x5x3x4xf16>
  return %0 : tensor<?x5x3x4xf16>
}

// -----

// A 1x1 window with stride 1: no gather, x copied as rows [N*H*W, C] (no div/mod in the
// maps); N and F dynamic.
// CHECK-DAG:   #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[ROWS:.*]] = affine_map<(d0, d1, d2, d3) -> ((d0 * 4 + d1) * 4 + d2, d3)>
// CHECK-DAG:   #[[FROWS:.*]] = affine_map<(d0, d1, d2, d3) -> ((d0 + d1) * 3 + d2, d3)>
// CHECK-LABEL: func.func @conv_1x1(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4x4x3xf64>, %[[F:.*]]: tensor<1x1x3x?xf64>)
// CHECK:       %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x4x3xf64>
// CHECK:       %[[FO:.*]] = tensor.dim %[[F]], %{{.*}} : tensor<1x1x3x?xf64>
// CHECK:       %[[M:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK:       %[[EA:.*]] = tensor.empty(%[[M]]) : tensor<?x3xf64>
// CHECK:       %[[A:.*]] = linalg.generic {indexing_maps = [#[[ID4]], #[[ROWS]]], {{.*}} ins(%[[X]] : tensor<?x4x4x3xf64>) outs(%[[EA]] : tensor<?x3xf64>)
// CHECK:       %[[B:.*]] = linalg.generic {indexing_maps = [#[[ID4]], #[[FROWS]]], {{.*}} ins(%[[F]] : tensor<1x1x3x?xf64>) outs(%{{.*}} : tensor<3x?xf64>)
// CHECK:       %[[E:.*]] = tensor.empty(%[[M]], %[[FO]]) : tensor<?x?xf64>
// CHECK:       %[[Z:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%[[E]] : tensor<?x?xf64>)
// CHECK:       %[[C:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<?x3xf64>, tensor<3x?xf64>) outs(%[[Z]] : tensor<?x?xf64>)
// CHECK:       %[[EY:.*]] = tensor.empty(%[[N]], %[[FO]]) : tensor<?x4x4x?xf64>
// CHECK:       %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ROWS]], #[[ID4]]], {{.*}} ins(%[[C]] : tensor<?x?xf64>) outs(%[[EY]] : tensor<?x4x4x?xf64>)
// CHECK:       return %[[Y]]
func.func @conv_1x1(%x: tensor<?x4x4x3xf64>, %f: tensor<1x1x3x?xf64>) -> tensor<?x4x4x?xf64> {
  %0 = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<?x4x4x3xf64>, tensor<1x1x3x?xf64>) -> tensor<?x4x4x?xf64>
  return %0 : tensor<?x4x4x?xf64>
}

// -----

// A channel count unknown in both operands: the named op on a zero-filled init.
// CHECK-LABEL: func.func @conv_dynamic_channels(
// CHECK-SAME:    %[[X:.*]]: tensor<2x4x4x?xf32>, %[[F:.*]]: tensor<2x2x?x5xf32>)
// CHECK:       %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x3x5xf32>)
// CHECK:       %[[Y:.*]] = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[X]], %[[F]] : tensor<2x4x4x?xf32>, tensor<2x2x?x5xf32>) outs(%[[INIT]] : tensor<2x3x3x5xf32>)
// CHECK:       return %[[Y]]
func.func @conv_dynamic_channels(%x: tensor<2x4x4x?xf32>, %f: tensor<2x2x?x5xf32>) -> tensor<2x3x3x5xf32> {
  %0 = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<2x4x4x?xf32>, tensor<2x2x?x5xf32>) -> tensor<2x3x3x5xf32>
  return %0 : tensor<2x3x3x5xf32>
}

// -----

// An empty output (a window taller than the input): a zero fill, no product.
// CHECK-LABEL: func.func @conv_empty(
// CHECK:       %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x0x3x5xf32>)
// CHECK-NOT:   linalg.matmul
// CHECK:       return %[[Z]]
func.func @conv_empty(%x: tensor<2x1x4x3xf32>, %f: tensor<2x2x3x5xf32>) -> tensor<2x0x3x5xf32> {
  %0 = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<2x1x4x3xf32>, tensor<2x2x3x5xf32>) -> tensor<2x0x3x5xf32>
  return %0 : tensor<2x0x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @max_pool_valid(
// CHECK-SAME:    %[[X:.*]]: tensor<1x4x4x3xf32>)
// CHECK:       %[[LOW:.*]] = arith.constant 0xFF800000 : f32
// CHECK:       %[[INIT:.*]] = linalg.fill ins(%[[LOW]] : f32) outs(%{{.*}} : tensor<1x2x2x3xf32>)
// CHECK:       %[[W:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK:       linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[X]], %[[W]] : tensor<1x4x4x3xf32>, tensor<2x2xf32>) outs(%[[INIT]] : tensor<1x2x2x3xf32>)
func.func @max_pool_valid(%x: tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32> {
  %0 = "ember.max_pool2d"(%x) {ksize = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----

// ui8 pads with 0 and compares unsigned; i32 pads with INT_MIN.
// CHECK-LABEL: func.func @max_pool_same_ints(
// CHECK-SAME:    %[[X:.*]]: tensor<2x5x5x2xi8>, %[[Y:.*]]: tensor<1x4x4x1xi32>)
// CHECK:       %[[Z:.*]] = arith.constant 0 : i8
// CHECK:       %[[P:.*]] = tensor.pad %[[X]] low[0, 1, 1, 0] high[0, 1, 1, 0] {
// CHECK:         tensor.yield %[[Z]] : i8
// CHECK:       linalg.pooling_nhwc_max_unsigned {{.*}} ins(%[[P]], %{{.*}} : tensor<2x7x7x2xi8>, tensor<3x3xi8>) outs(%{{.*}} : tensor<2x5x5x2xi8>)
// CHECK:       %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK:       %[[Q:.*]] = tensor.pad %[[Y]] low[0, 0, 0, 0] high[0, 1, 1, 0] {
// CHECK:         tensor.yield %[[MIN]] : i32
// CHECK:       linalg.pooling_nhwc_max {{.*}} ins(%[[Q]], %{{.*}} : tensor<1x5x5x1xi32>, tensor<3x3xi32>) outs(%{{.*}} : tensor<1x2x2x1xi32>)
func.func @max_pool_same_ints(%x: tensor<2x5x5x2xui8>, %y: tensor<1x4x4x1xi32>) -> (tensor<2x5x5x2xui8>, tensor<1x2x2x1xi32>) {
  %0 = "ember.max_pool2d"(%x) {ksize = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<2x5x5x2xui8>) -> tensor<2x5x5x2xui8>
  %1 = "ember.max_pool2d"(%y) {ksize = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 2, 2>} : (tensor<1x4x4x1xi32>) -> tensor<1x2x2x1xi32>
  return %0, %1 : tensor<2x5x5x2xui8>, tensor<1x2x2x1xi32>
}

// -----

// Corner windows hold 4 real elements, edges 6, the middle 9.
// CHECK-DAG:   #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[HW:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-LABEL: func.func @avg_pool_same(
// CHECK:       %[[P:.*]] = tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:       %[[S:.*]] = linalg.pooling_nhwc_sum {{.*}} ins(%[[P]], %{{.*}} : tensor<1x6x6x3xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<1x4x4x3xf32>)
// CHECK:       %[[COUNTS:.*]] = arith.constant dense<{{\[\[}}4.000000e+00, 6.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 9.000000e+00, 6.000000e+00], [6.000000e+00, 9.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<4x4xf32>
// CHECK:       linalg.generic {indexing_maps = [#[[ID4]], #[[HW]], #[[ID4]]], {{.*}} ins(%[[S]], %[[COUNTS]] : tensor<1x4x4x3xf32>, tensor<4x4xf32>)
// CHECK:         arith.divf
func.func @avg_pool_same(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %0 = "ember.avg_pool2d"(%x) {ksize = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

// -----

// Every VALID window is full: divide by the scalar 4, in f32, and round to bf16 once.
// CHECK-LABEL: func.func @avg_pool_valid_bf16(
// CHECK:       %[[S:.*]] = linalg.pooling_nhwc_sum {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x7x5x1xbf16>, tensor<2x2xf32>) outs(%{{.*}} : tensor<2x3x2x1xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[S]] : tensor<2x3x2x1xf32>) outs(%{{.*}} : tensor<2x3x2x1xbf16>)
// CHECK:         %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK:         %[[Q:.*]] = arith.divf %{{.*}}, %[[FOUR]] : f32
// CHECK:         arith.truncf %[[Q]] : f32 to bf16
func.func @avg_pool_valid_bf16(%x: tensor<2x7x5x1xbf16>) -> tensor<2x3x2x1xbf16> {
  %0 = "ember.avg_pool2d"(%x) {ksize = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<2x7x5x1xbf16>) -> tensor<2x3x2x1xbf16>
  return %0 : tensor<2x3x2x1xbf16>
}

// -----

// Integers average in f64 and truncate toward zero.
// CHECK-LABEL: func.func @avg_pool_int(
// CHECK:       %[[F:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x3x1xf64>)
// CHECK:         arith.sitofp %{{.*}} : i32 to f64
// CHECK:       %[[P:.*]] = tensor.pad %[[F]] low[0, 0, 0, 0] high[0, 1, 1, 0]
// CHECK:       linalg.pooling_nhwc_sum {{.*}} ins(%[[P]], %{{.*}} : tensor<1x4x4x1xf64>, tensor<2x2xf64>)
// CHECK:       arith.constant dense<{{\[\[}}4.000000e+00, 4.000000e+00, 2.000000e+00], [4.000000e+00, 4.000000e+00, 2.000000e+00], [2.000000e+00, 2.000000e+00, 1.000000e+00]]> : tensor<3x3xf64>
// CHECK:       linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x3x1xi32>)
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f64
// CHECK:         arith.fptosi %{{.*}} : f64 to i32
func.func @avg_pool_int(%x: tensor<1x3x3x1xi32>) -> tensor<1x3x3x1xi32> {
  %0 = "ember.avg_pool2d"(%x) {ksize = array<i64: 2, 2>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x3x3x1xi32>) -> tensor<1x3x3x1xi32>
  return %0 : tensor<1x3x3x1xi32>
}

// -----

// CHECK-DAG:   #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    %[[X:.*]]: tensor<2x10xf32>)
// CHECK:       %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:       %[[I0:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK:       %[[M:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x10xf32>) outs(%[[I0]] : tensor<2xf32>)
// CHECK:         arith.maximumf
// CHECK:       %[[S:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[M]] : tensor<2x10xf32>, tensor<2xf32>)
// CHECK:         %[[FIN:.*]] = arith.cmpf olt
// CHECK:         %[[SHIFT:.*]] = arith.select %[[FIN]]
// CHECK:         %[[D:.*]] = arith.subf %{{.*}}, %[[SHIFT]] : f32
// CHECK:         %[[E:.*]] = math.exp %[[D]] : f32
// CHECK:         arith.addf %{{.*}}, %[[E]] : f32
// CHECK:       linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[M]], %[[S]] : tensor<2x10xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK:         math.exp
// CHECK:         arith.divf
func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %0 = "ember.softmax"(%x) {axis = -1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  return %0 : tensor<2x10xf32>
}

// -----

// Along axis 0 of a dynamic f16 matrix: f32 max and sum, (x - m) - log(s) rounded to f16.
// CHECK-DAG:   #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @log_softmax_f16(
// CHECK-SAME:    %[[X:.*]]: tensor<?x?xf16>)
// CHECK:       %[[R:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?xf16>
// CHECK:       %[[C:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?xf16>
// CHECK:       %[[M:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[COL]]], iterator_types = ["reduction", "parallel"]} ins(%[[X]] : tensor<?x?xf16>) outs(%{{.*}} : tensor<?xf32>)
// CHECK:         arith.extf %{{.*}} : f16 to f32
// CHECK:       %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[X]], %[[M]] : tensor<?x?xf16>, tensor<?xf32>) outs(%{{.*}} : tensor<?xf32>)
// CHECK:       %[[E:.*]] = tensor.empty(%[[R]], %[[C]]) : tensor<?x?xf16>
// CHECK:       linalg.generic {{.*}} ins(%[[X]], %[[M]], %[[S]] : tensor<?x?xf16>, tensor<?xf32>, tensor<?xf32>) outs(%[[E]] : tensor<?x?xf16>)
// CHECK:         %[[L:.*]] = math.log %{{.*}} : f32
// CHECK:         %[[Y:.*]] = arith.subf %{{.*}}, %[[L]] : f32
// CHECK:         arith.truncf %[[Y]] : f32 to f16
func.func @log_softmax_f16(%x: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %0 = "ember.log_softmax"(%x) {axis = 0 : i64} : (tensor<?x?xf16>) -> tensor<?x?xf16>
  return %0 : tensor<?x?xf16>
}

// -----

// depthwise: SAME pads (1, 1) rows and (2, 2) dilated columns, convolves into
// [N, OH, OW, C, M] and collapses (C, M) into C * M output channels.
// CHECK-LABEL: func.func @depthwise_same(
// CHECK-SAME:    %[[X:.*]]: tensor<?x5x5x3xf32>, %[[F:.*]]: tensor<3x3x3x2xf32>)
// CHECK:       %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x5x5x3xf32>
// CHECK:       %[[P:.*]] = tensor.pad %[[X]] low[0, 1, 2, 0] high[0, 1, 2, 0] {
// CHECK:       } : tensor<?x5x5x3xf32> to tensor<?x7x9x3xf32>
// CHECK:       %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x3x5x3x2xf32>
// CHECK:       %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x3x5x3x2xf32>)
// CHECK:       %[[Y:.*]] = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%[[P]], %[[F]] : tensor<?x7x9x3xf32>, tensor<3x3x3x2xf32>) outs(%[[INIT]] : tensor<?x3x5x3x2xf32>)
// CHECK:       %[[R:.*]] = tensor.collapse_shape %[[Y]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<?x3x5x3x2xf32> into tensor<?x3x5x6xf32>
// CHECK:       return %[[R]]
func.func @depthwise_same(%x: tensor<?x5x5x3xf32>, %f: tensor<3x3x3x2xf32>) -> tensor<?x3x5x6xf32> {
  %0 = "ember.depthwise_conv2d"(%x, %f) {dilations = array<i64: 1, 2>, padding = "SAME", strides = array<i64: 2, 1>} : (tensor<?x5x5x3xf32>, tensor<3x3x3x2xf32>) -> tensor<?x3x5x6xf32>
  return %0 : tensor<?x3x5x6xf32>
}

// -----

// f16 depthwise accumulates in f32 and truncates once, before the collapse.
// CHECK-LABEL: func.func @depthwise_f16(
// CHECK-NOT:   tensor.pad
// CHECK:       %[[Y:.*]] = linalg.depthwise_conv_2d_nhwc_hwcm {{.*}} outs(%{{.*}} : tensor<1x3x3x2x1xf32>)
// CHECK:       %[[T:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<1x3x3x2x1xf32>) outs(%{{.*}} : tensor<1x3x3x2x1xf16>)
// CHECK:         arith.truncf %{{.*}} : f32 to f16
// CHECK:       tensor.collapse_shape %[[T]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x3x3x2x1xf16> into tensor<1x3x3x2xf16>
func.func @depthwise_f16(%x: tensor<1x4x4x2xf16>, %f: tensor<2x2x2x1xf16>) -> tensor<1x3x3x2xf16> {
  %0 = "ember.depthwise_conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<1x4x4x2xf16>, tensor<2x2x2x1xf16>) -> tensor<1x3x3x2xf16>
  return %0 : tensor<1x3x3x2xf16>
}

// -----

// ERR: cannot lower 'ember.conv2d': conv2d needs an input of rank 4 with static height and width, got tensor<1x5x?x3xf32>
func.func @conv_dynamic_width(%x: tensor<1x5x?x3xf32>, %f: tensor<3x3x3x8xf32>) -> tensor<1x5x?x8xf32> {
  %0 = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x5x?x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x5x?x8xf32>
  return %0 : tensor<1x5x?x8xf32>
}
