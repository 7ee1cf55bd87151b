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

// A copy into an unranked buffer (bufferization's clone of a result returned with a
// dynamic type) copies into that buffer cast to the source's shape.
// CHECK-LABEL: func.func @unranked(
// CHECK:         %[[R:.*]] = memref.cast %{{.*}} : memref<*xi32> to memref<0xi32>
// CHECK:         linalg.copy {{.*}}ins(%{{.*}} : memref<0xi32>) outs(%[[R]] : memref<0xi32>)
func.func @unranked(%a: memref<0xi32>, %b: memref<*xi32>) {
  memref.copy %a, %b : memref<0xi32> to memref<*xi32>
  return
}
