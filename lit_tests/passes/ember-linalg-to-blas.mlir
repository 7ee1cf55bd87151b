// ember-linalg-to-blas turns a float product on memrefs into a call of the ILP64 CBLAS
// GEMM signature, declared once: row-major (101), no transposes (111), m n k = 64 48 32,
// leading dimensions from the strides, beta = 0 where a zero fill came right before (the
// fill goes). Below `min-macs` the product stays; integer products always stay.

// RUN: ember-opt %s -p 'builtin.module(ember-linalg-to-blas,canonicalize)' | FileCheck %s
// RUN: ember-opt %s -p 'builtin.module(ember-linalg-to-blas{min-macs=100000})' | FileCheck %s --check-prefix=SMALL

// CHECK:       func.func private @ember_sgemm(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// CHECK-NOT:   func.func private @ember_sgemm
// CHECK-LABEL: func.func @zero_filled(
// CHECK-DAG:     %[[K:.*]] = arith.constant 32 : i64
// CHECK-DAG:     %[[N:.*]] = arith.constant 48 : i64
// CHECK-DAG:     %[[M:.*]] = arith.constant 64 : i64
// CHECK-DAG:     %[[NT:.*]] = arith.constant 111 : i32
// CHECK-DAG:     %[[ROW:.*]] = arith.constant 101 : i32
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT:     linalg.fill
// CHECK:         call @ember_sgemm(%[[ROW]], %[[NT]], %[[NT]], %[[M]], %[[N]], %[[K]], %[[ONE]], %{{.*}}, %[[K]], %{{.*}}, %[[N]], %[[ZERO]], %{{.*}}, %[[N]])
// CHECK-LABEL: func.func @accumulate(
// CHECK:         %[[ONE_A:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @ember_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE_A]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE_A]], %{{.*}}, %{{.*}})
// CHECK-LABEL: func.func @integers(
// CHECK-NOT:     call
// CHECK:         linalg.matmul

// SMALL-NOT:   call @ember_sgemm
// SMALL-COUNT-3: linalg.matmul
func.func @zero_filled(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%c : memref<64x48xf32>)
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>)
                outs(%c : memref<64x48xf32>)
  return
}

func.func @accumulate(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>)
                outs(%c : memref<64x48xf32>)
  return
}

func.func @integers(%a: memref<64x32xi32>, %b: memref<32x48xi32>, %c: memref<64x48xi32>) {
  linalg.matmul ins(%a, %b : memref<64x32xi32>, memref<32x48xi32>)
                outs(%c : memref<64x48xi32>)
  return
}
