// ember-outline-loop-nests moves each outermost scf.for of a function with at least
// `min-nests` of them into a private, internal, noinline function called in its place:
// outside values become arguments (constants are cloned in), loop results are returned.
// A function with fewer nests is left as it is.

// RUN: ember-opt %s -p 'builtin.module(ember-outline-loop-nests{min-nests=2})' | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-SAME:      %[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>, %[[N:.*]]: index, %[[P:.*]]: i1)
// CHECK-NOT:     scf.for
// CHECK:         call @f.nest0(%[[A]], %[[B]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK:         scf.if %[[P]] {
// CHECK-NEXT:      func.call @f.nest1(%[[A]]) : (memref<4xf32>) -> ()
// CHECK:         %[[S:.*]] = call @f.nest2(%[[N]], %[[B]]) : (index, memref<4xf32>) -> f32
// CHECK:         return %[[S]] : f32

// CHECK-LABEL: func.func @g(
// CHECK:         scf.for
// CHECK-NOT:     call
// CHECK:         return

// CHECK-LABEL: func.func private @f.nest0(
// CHECK-SAME:      attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         scf.for %{{.*}} = %[[C0]] to %[[C4]]
// CHECK:           scf.for
// CHECK:         return

// CHECK-LABEL: func.func private @f.nest1(
// CHECK:         scf.for
// CHECK:         return

// CHECK-LABEL: func.func private @f.nest2(
// CHECK-SAME:      %[[N2:.*]]: index, %[[B2:.*]]: memref<4xf32>) -> f32
// CHECK:         %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %[[N2]] {{.*}} -> (f32) {
// CHECK:           memref.load %[[B2]]
// CHECK:         return %[[R]] : f32
func.func @f(%a: memref<4xf32>, %b: memref<4xf32>, %n: index, %p: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %a[%j] : memref<4xf32>
      memref.store %v, %b[%i] : memref<4xf32>
    }
  }
  scf.if %p {
    scf.for %i = %c0 to %c4 step %c1 {
      memref.store %z, %a[%i] : memref<4xf32>
    }
  }
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> f32 {
    %v = memref.load %b[%i] : memref<4xf32>
    %t = arith.addf %acc, %v : f32
    scf.yield %t : f32
  }
  return %s : f32
}

func.func @g(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %z, %a[%i] : memref<4xf32>
  }
  return
}
