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

// A bool result of dynamic shape is returned unranked: memref<*xi1> becomes memref<*xi8>.
// CHECK-LABEL: func.func @unranked(
// CHECK-SAME:    %{{.*}}: memref<?x2xi8>) -> memref<*xi8>
// CHECK:         %[[U:.*]] = memref.cast %{{.*}} : memref<?x2xi8> to memref<*xi8>
// CHECK:         return %[[U]] : memref<*xi8>
func.func @unranked(%m: memref<?x2xi1>) -> memref<*xi1> {
  %u = memref.cast %m : memref<?x2xi1> to memref<*xi1>
  return %u : memref<*xi1>
}
