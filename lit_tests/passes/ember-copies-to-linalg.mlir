// ember-copies-to-linalg rewrites memref.copy as linalg.copy (a non-contiguous memref.copy
// lowers to a call of memrefCopy, which the JIT process does not have).

// RUN: ember-opt %s -p ember-copies-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-NOT:     memref.copy
// CHECK:         linalg.copy {{.*}}ins(%{{.*}} : memref<4xf32, strided<[2]>>) outs(%{{.*}} : memref<4xf32>)
func.func @f(%a: memref<4xf32, strided<[2]>>, %b: memref<4xf32>) {
  memref.copy %a, %b : memref<4xf32, strided<[2]>> to memref<4xf32>
  return
}
