// Round trip of the neural-network ops on NHWC tensors: conv2d (HWIO filter; SAME and VALID
// padding, strides, dilations), max_pool2d and avg_pool2d (SAME and VALID), softmax and
// log_softmax (any axis). Dynamic (`?`) batch and spatial dims stay dynamic.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// SAME keeps ceil(size / stride); VALID keeps full windows only.
// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME:    %[[X:.*]]: tensor<1x5x5x3xf32>, %[[F:.*]]: tensor<3x3x3x8xf32>)
// CHECK:       %[[SAME:.*]] = "ember.conv2d"(%[[X]], %[[F]]) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x5x5x8xf32>
// CHECK:       %[[VALID:.*]] = "ember.conv2d"(%[[X]], %[[F]]) {dilations = array<i64: 1, 1>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x3x3x8xf32>
// CHECK:       %[[STRIDED:.*]] = "ember.conv2d"(%[[X]], %[[F]]) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 2, 2>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x3x3x8xf32>
// CHECK:       return %[[SAME]], %[[VALID]], %[[STRIDED]] : tensor<1x5x5x8xf32>, tensor<1x3x3x8xf32>, tensor<1x3x3x8xf32>
// GENERIC-LABEL: sym_name = "conv2d"
// GENERIC:       "ember.conv2d"({{.*}}) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x5x5x8xf32>
// GENERIC:       "ember.conv2d"({{.*}}) {dilations = array<i64: 1, 1>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x3x3x8xf32>
// GENERIC:       "ember.conv2d"({{.*}}) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 2, 2>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x3x3x8xf32>
func.func @conv2d(%x: tensor<1x5x5x3xf32>, %f: tensor<3x3x3x8xf32>) -> (tensor<1x5x5x8xf32>, tensor<1x3x3x8xf32>, tensor<1x3x3x8xf32>) {
  %same = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x5x5x8xf32>
  %valid = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  %strided = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 2, 2>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  return %same, %valid, %strided : tensor<1x5x5x8xf32>, tensor<1x3x3x8xf32>, tensor<1x3x3x8xf32>
}

// A dilation of 2 widens a 3x3 window to 5x5.
// CHECK-LABEL: func.func @conv2d_dilated_dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?x9x?x2xf64>, %[[F:.*]]: tensor<3x3x2x4xf64>, %[[G:.*]]: tensor<2x2x?x?xf64>)
// CHECK:       %[[V0:.*]] = "ember.conv2d"(%[[X]], %[[F]]) {dilations = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<?x9x?x2xf64>, tensor<3x3x2x4xf64>) -> tensor<?x5x?x4xf64>
// CHECK:       %[[V1:.*]] = "ember.conv2d"(%[[X]], %[[G]]) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<?x9x?x2xf64>, tensor<2x2x?x?xf64>) -> tensor<?x9x?x?xf64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<?x5x?x4xf64>, tensor<?x9x?x?xf64>
// GENERIC-LABEL: sym_name = "conv2d_dilated_dynamic"
// GENERIC:       "ember.conv2d"({{.*}}) {dilations = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<?x9x?x2xf64>, tensor<3x3x2x4xf64>) -> tensor<?x5x?x4xf64>
// GENERIC:       "ember.conv2d"({{.*}}) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<?x9x?x2xf64>, tensor<2x2x?x?xf64>) -> tensor<?x9x?x?xf64>
func.func @conv2d_dilated_dynamic(%x: tensor<?x9x?x2xf64>, %f: tensor<3x3x2x4xf64>, %g: tensor<2x2x?x?xf64>) -> (tensor<?x5x?x4xf64>, tensor<?x9x?x?xf64>) {
  %0 = "ember.conv2d"(%x, %f) {dilations = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<?x9x?x2xf64>, tensor<3x3x2x4xf64>) -> tensor<?x5x?x4xf64>
  %1 = "ember.conv2d"(%x, %g) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<?x9x?x2xf64>, tensor<2x2x?x?xf64>) -> tensor<?x9x?x?xf64>
  return %0, %1 : tensor<?x5x?x4xf64>, tensor<?x9x?x?xf64>
}

// depthwise_conv2d: HWCM filter, C * M output channels; a dynamic batch stays dynamic.
// CHECK-LABEL: func.func @depthwise_conv2d(
// CHECK-SAME:    %[[X:.*]]: tensor<?x5x5x3xf32>, %[[F:.*]]: tensor<3x3x3x2xf32>)
// CHECK:       %[[Y:.*]] = "ember.depthwise_conv2d"(%[[X]], %[[F]]) {dilations = array<i64: 1, 2>, padding = "SAME", strides = array<i64: 2, 1>} : (tensor<?x5x5x3xf32>, tensor<3x3x3x2xf32>) -> tensor<?x3x5x6xf32>
// CHECK:       return %[[Y]] : tensor<?x3x5x6xf32>
// GENERIC-LABEL: sym_name = "depthwise_conv2d"
// GENERIC:       "ember.depthwise_conv2d"({{.*}}) {dilations = array<i64: 1, 2>, padding = "SAME", strides = array<i64: 2, 1>} : (tensor<?x5x5x3xf32>, tensor<3x3x3x2xf32>) -> tensor<?x3x5x6xf32>
func.func @depthwise_conv2d(%x: tensor<?x5x5x3xf32>, %f: tensor<3x3x3x2xf32>) -> tensor<?x3x5x6xf32> {
  %0 = "ember.depthwise_conv2d"(%x, %f) {dilations = array<i64: 1, 2>, padding = "SAME", strides = array<i64: 2, 1>} : (tensor<?x5x5x3xf32>, tensor<3x3x3x2xf32>) -> tensor<?x3x5x6xf32>
  return %0 : tensor<?x3x5x6xf32>
}

// CHECK-LABEL: func.func @max_pool2d(
// CHECK-SAME:    %[[X:.*]]: tensor<1x4x4x3xf32>, %[[D:.*]]: tensor<?x?x?x2xi32>)
// CHECK:       %[[V0:.*]] = "ember.max_pool2d"(%[[X]]) {ksize = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
// CHECK:       %[[V1:.*]] = "ember.max_pool2d"(%[[D]]) {ksize = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<?x?x?x2xi32>) -> tensor<?x?x?x2xi32>
// CHECK:       return %[[V0]], %[[V1]] : tensor<1x2x2x3xf32>, tensor<?x?x?x2xi32>
// GENERIC-LABEL: sym_name = "max_pool2d"
// GENERIC:       "ember.max_pool2d"({{.*}}) {ksize = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
// GENERIC:       "ember.max_pool2d"({{.*}}) {ksize = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<?x?x?x2xi32>) -> tensor<?x?x?x2xi32>
func.func @max_pool2d(%x: tensor<1x4x4x3xf32>, %d: tensor<?x?x?x2xi32>) -> (tensor<1x2x2x3xf32>, tensor<?x?x?x2xi32>) {
  %0 = "ember.max_pool2d"(%x) {ksize = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
  %1 = "ember.max_pool2d"(%d) {ksize = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<?x?x?x2xi32>) -> tensor<?x?x?x2xi32>
  return %0, %1 : tensor<1x2x2x3xf32>, tensor<?x?x?x2xi32>
}

// CHECK-LABEL: func.func @avg_pool2d(
// CHECK-SAME:    %[[X:.*]]: tensor<1x4x4x3xf32>, %[[Y:.*]]: tensor<2x7x5x1xbf16>)
// CHECK:       %[[V0:.*]] = "ember.avg_pool2d"(%[[X]]) {ksize = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:       %[[V1:.*]] = "ember.avg_pool2d"(%[[Y]]) {ksize = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<2x7x5x1xbf16>) -> tensor<2x3x2x1xbf16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<1x4x4x3xf32>, tensor<2x3x2x1xbf16>
// GENERIC-LABEL: sym_name = "avg_pool2d"
// GENERIC:       "ember.avg_pool2d"({{.*}}) {ksize = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
// GENERIC:       "ember.avg_pool2d"({{.*}}) {ksize = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<2x7x5x1xbf16>) -> tensor<2x3x2x1xbf16>
func.func @avg_pool2d(%x: tensor<1x4x4x3xf32>, %y: tensor<2x7x5x1xbf16>) -> (tensor<1x4x4x3xf32>, tensor<2x3x2x1xbf16>) {
  %0 = "ember.avg_pool2d"(%x) {ksize = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %1 = "ember.avg_pool2d"(%y) {ksize = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<2x7x5x1xbf16>) -> tensor<2x3x2x1xbf16>
  return %0, %1 : tensor<1x4x4x3xf32>, tensor<2x3x2x1xbf16>
}

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    %[[X:.*]]: tensor<2x10xf32>, %[[D:.*]]: tensor<?x?xf16>)
// CHECK:       %[[V0:.*]] = "ember.softmax"(%[[X]]) {axis = -1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
// CHECK:       %[[V1:.*]] = "ember.softmax"(%[[D]]) {axis = 0 : i64} : (tensor<?x?xf16>) -> tensor<?x?xf16>
// CHECK:       return %[[V0]], %[[V1]] : tensor<2x10xf32>, tensor<?x?xf16>
// GENERIC-LABEL: sym_name = "softmax"
// GENERIC:       "ember.softmax"({{.*}}) {axis = -1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
// GENERIC:       "ember.softmax"({{.*}}) {axis = 0 : i64} : (tensor<?x?xf16>) -> tensor<?x?xf16>
func.func @softmax(%x: tensor<2x10xf32>, %d: tensor<?x?xf16>) -> (tensor<2x10xf32>, tensor<?x?xf16>) {
  %0 = "ember.softmax"(%x) {axis = -1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %1 = "ember.softmax"(%d) {axis = 0 : i64} : (tensor<?x?xf16>) -> tensor<?x?xf16>
  return %0, %1 : tensor<2x10xf32>, tensor<?x?xf16>
}

// CHECK-LABEL: func.func @log_softmax(
// CHECK-SAME:    %[[X:.*]]: tensor<2x10xf32>, %[[D:.*]]: tensor<?xf64>)
// CHECK:       %[[V0:.*]] = "ember.log_softmax"(%[[X]]) {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
// CHECK:       %[[V1:.*]] = "ember.log_softmax"(%[[D]]) {axis = -1 : i64} : (tensor<?xf64>) -> tensor<?xf64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<2x10xf32>, tensor<?xf64>
// GENERIC-LABEL: sym_name = "log_softmax"
// GENERIC:       "ember.log_softmax"({{.*}}) {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
// GENERIC:       "ember.log_softmax"({{.*}}) {axis = -1 : i64} : (tensor<?xf64>) -> tensor<?xf64>
func.func @log_softmax(%x: tensor<2x10xf32>, %d: tensor<?xf64>) -> (tensor<2x10xf32>, tensor<?xf64>) {
  %0 = "ember.log_softmax"(%x) {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %1 = "ember.log_softmax"(%d) {axis = -1 : i64} : (tensor<?xf64>) -> tensor<?xf64>
  return %0, %1 : tensor<2x10xf32>, tensor<?xf64>
}
