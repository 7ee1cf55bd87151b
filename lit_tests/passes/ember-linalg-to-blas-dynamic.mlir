// ember-linalg-to-blas on a 2-D matmul of run-time sizes (an AOT library's `?` dims): the
// sizes come from `memref.dim`, the leading dimensions are the row lengths (at least 1),
// and the call runs only for min-macs multiply-adds or more; smaller products run the
// matmul kept in the else branch (with the zero fill the call replaces by beta = 0).
// RUN: ember-opt %s -p 'builtin.module(ember-linalg-to-blas)' | FileCheck %s

// CHECK-LABEL: func.func @rows(
// CHECK:         %[[M:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:         arith.muli %[[M]]
// CHECK:         %[[MACS:.*]] = arith.muli
// CHECK:         %[[LARGE:.*]] = arith.cmpi sge, %[[MACS]], %{{.*}} : i64
// CHECK:         scf.if %[[LARGE]] {
// CHECK:           func.call @ember_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %[[M]], {{.*}}) : (i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
// CHECK:         } else {
// CHECK-NEXT:      linalg.fill
// CHECK-NEXT:      linalg.matmul
// CHECK:         }
// CHECK-NOT:     linalg.fill
func.func @rows(%a: memref<?x64xf32>, %b: memref<64x256xf32>, %c: memref<?x256xf32>) {
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%c : memref<?x256xf32>)
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x256xf32>)
                outs(%c : memref<?x256xf32>)
  return
}

// A strided (non-identity) buffer is no row-major matrix: the product stays.
// CHECK-LABEL: func.func @strided(
// CHECK-NOT:     call
// CHECK:         linalg.matmul
func.func @strided(%a: memref<?x64xf32, strided<[128, 1]>>, %b: memref<64x256xf32>,
                   %c: memref<?x256xf32>) {
  linalg.matmul ins(%a, %b : memref<?x64xf32, strided<[128, 1]>>, memref<64x256xf32>)
                outs(%c : memref<?x256xf32>)
  return
}
