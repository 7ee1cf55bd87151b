// ember-widen-bool-memrefs stores i1 buffers as bytes (finalize-memref-to-llvm asserts on
// sub-byte element types): loads truncate, stores extend.

// RUN: ember-opt %s -p ember-widen-bool-memrefs | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-SAME:    memref<4xi8>
// CHECK:         %[[B:.*]] = memref.load %{{.*}} : memref<4xi8>
// CHECK:         arith.trunci %[[B]] : i8 to i1
func.func @f(%m: memref<4xi1>, %i: index) -> i1 {
  %v = memref.load %m[%i] : memref<4xi1>
  return %v : i1
}
