// Float matrix products become calls of a GEMM (ember-prepare-blas and ember-linalg-to-blas
// in the bufferized stage): Ember's own kernels (backends/cpu/kernels/) with EMBER_BLAS=off:
// a call of the private @ember_sgemm declaration, row-major (101), a transposed operand
// read in place with the TRANS flag (112) instead of a linalg.transpose copy; integer
// products keep the loop lowering. The zero fill of each product's output (one fill that
// CSE shared between both float products) becomes beta = 0: no fill, no copy is left.
// EMBER_BLAS=loops keeps linalg.matmul; EMBER_BLAS=openblas calls numpy's OpenBLAS
// (backends/cpu/blas_library.py) under its own name; the default, auto, picks per shape.

// RUN: env EMBER_BLAS=off ember-compile %s --emit=bufferized | FileCheck %s
// RUN: env EMBER_BLAS=loops ember-compile %s --emit=bufferized | FileCheck %s --check-prefix=OFF
// RUN: env EMBER_BLAS=openblas ember-compile %s --emit=bufferized | FileCheck %s --check-prefix=OPENBLAS

// CHECK:       func.func private @ember_sgemm(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// CHECK-LABEL: func.func @mlp_layer(
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     linalg.matmul
// CHECK-DAG:     %[[ROW:.*]] = arith.constant 101 : i32
// CHECK-DAG:     %[[N:.*]] = arith.constant 111 : i32
// CHECK-DAG:     %[[T:.*]] = arith.constant 112 : i32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     memref.extract_aligned_pointer_as_index %arg0
// CHECK-NOT:     linalg.fill {{.*}}xf32>
// CHECK-NOT:     copy
// CHECK:         call @ember_sgemm(%[[ROW]], %[[N]], %[[N]], {{.*}}, %[[ZERO]], %{{.*}}, %{{.*}}) :
// CHECK-NOT:     linalg.fill {{.*}}xf32>
// CHECK-NOT:     copy
// CHECK:         call @ember_sgemm(%[[ROW]], %[[N]], %[[T]], {{.*}}, %[[ZERO]], %{{.*}}, %{{.*}}) :
// CHECK:         linalg.matmul {{.*}}memref<64x64xi32>
// CHECK:         return

// OFF-NOT:     ember_sgemm
// OFF:         linalg.transpose
// OFF:         linalg.matmul
func.func @mlp_layer(%x: tensor<256x784xf32>, %w: tensor<784x1024xf32>, %v: tensor<512x1024xf32>,
                     %i: tensor<64x64xi32>) -> (tensor<256x1024xf32>, tensor<256x512xf32>, tensor<64x64xi32>) {
  %0 = "ember.matmul"(%x, %w) {transpose_a = false, transpose_b = false} : (tensor<256x784xf32>, tensor<784x1024xf32>) -> tensor<256x1024xf32>
  %1 = "ember.matmul"(%0, %v) {transpose_a = false, transpose_b = true} : (tensor<256x1024xf32>, tensor<512x1024xf32>) -> tensor<256x512xf32>
  %2 = "ember.matmul"(%i, %i) {transpose_a = false, transpose_b = false} : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi32>
  return %0, %1, %2 : tensor<256x1024xf32>, tensor<256x512xf32>, tensor<64x64xi32>
}

// OPENBLAS: func.func private @ember_openblas_sgemm(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// OPENBLAS-COUNT-2: call @ember_openblas_sgemm(
// OPENBLAS-NOT: call @ember_sgemm(
