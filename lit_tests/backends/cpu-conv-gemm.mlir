// conv2d reaches the backend's bufferized stage as one GEMM call (ember_to_linalg/conv_gemm.py):
// the backend's linalg-fuse-elementwise-ops must neither fuse the patch gather back into the
// product (a convolution loop nest again) nor split its reduction dim (no GEMM then). A
// bias add fuses into the copy back to NHWC. 3x3 SAME: M = 2*8*8 = 128, N = 16, K = 3*3*8
// = 72; a 1x1 window with stride 1 copies x as rows [128, 8] (K = 8), and the relu that
// produced x fuses into that copy, not into the product; beta = 0 for both. EMBER_BLAS=off:
// Ember's own kernels (the default policy may pick @ember_openblas_sgemm per shape).

// RUN: env EMBER_BLAS=off ember-compile %s --emit=bufferized | FileCheck %s

// CHECK-LABEL: func.func @conv_bias(
// CHECK-NOT:     linalg.conv_2d_nhwc_hwcf
// CHECK-DAG:     %[[M:.*]] = arith.constant 128 : i64
// CHECK-DAG:     %[[N:.*]] = arith.constant 16 : i64
// CHECK-DAG:     %[[K:.*]] = arith.constant 72 : i64
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         call @ember_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %[[M]], %[[N]], %[[K]], %{{.*}}, %{{.*}}, %[[K]], %{{.*}}, %[[N]], %[[ZERO]], %{{.*}}, %[[N]])
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<128x16xf32>, memref<16xf32>) outs(%{{.*}} : memref<2x8x8x16xf32>)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @conv_bias(%x: tensor<2x8x8x8xf32>, %f: tensor<3x3x8x16xf32>, %b: tensor<16xf32>) -> tensor<2x8x8x16xf32> {
  %0 = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<2x8x8x8xf32>, tensor<3x3x8x16xf32>) -> tensor<2x8x8x16xf32>
  %1 = "ember.add"(%0, %b) : (tensor<2x8x8x16xf32>, tensor<16xf32>) -> tensor<2x8x8x16xf32>
  return %1 : tensor<2x8x8x16xf32>
}

// CHECK-LABEL: func.func @relu_conv_1x1(
// CHECK-DAG:     %[[M:.*]] = arith.constant 128 : i64
// CHECK-DAG:     %[[N:.*]] = arith.constant 64 : i64
// CHECK-DAG:     %[[K:.*]] = arith.constant 8 : i64
// CHECK:         linalg.generic {{.*}} ins(%arg0 : memref<2x8x8x8xf64>) outs(%{{.*}} : memref<128x8xf64>)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      arith.maximumf
// CHECK-NEXT:      linalg.yield
// CHECK:         call @ember_dgemm(%{{.*}}, %{{.*}}, %{{.*}}, %[[M]], %[[N]], %[[K]], %{{.*}}, %{{.*}}, %[[K]], %{{.*}}, %[[N]], %{{.*}}, %{{.*}}, %[[N]])
// CHECK-NOT:     arith.mulf
// CHECK:         return
func.func @relu_conv_1x1(%x: tensor<2x8x8x8xf64>, %f: tensor<1x1x8x64xf64>) -> tensor<2x8x8x64xf64> {
  %r = "ember.relu"(%x) : (tensor<2x8x8x8xf64>) -> tensor<2x8x8x8xf64>
  %0 = "ember.conv2d"(%r, %f) {dilations = array<i64: 1, 1>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<2x8x8x8xf64>, tensor<1x1x8x64xf64>) -> tensor<2x8x8x64xf64>
  return %0 : tensor<2x8x8x64xf64>
}
