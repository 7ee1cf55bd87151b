// ember-gpu-mma-emulate turns ember-gpu-mma's tensor-core launches into loops a CPU runs:
// the grid and its warps become an scf.parallel (block ids and thread ids y, z its
// induction variables, the lanes' x 0), each 16x16 mma_matrix value a buffer: loads copy
// the tile at their indices
// (row i, column j of the tile at [%row + i, %col + j]), compute adds A·B to a copy of C
// in C's type (f16 extended to f32), stores copy back. Launches without mma ops stay.

// RUN: ember-opt %s -p 'builtin.module(func.func(ember-gpu-mma,ember-gpu-mma-emulate))' | FileCheck %s

// CHECK-LABEL: func.func @tiles(
// CHECK-SAME:    %[[A:.*]]: memref<16x16xf16>, %[[B:.*]]: memref<16x48xf16>, %[[C:.*]]: memref<16x48xf32>)
// CHECK-NOT:     gpu.
// CHECK-DAG:     %[[GX:.*]] = arith.constant 3 : index
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = ({{.*}}) to (%[[GX]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-COUNT-4:   memref.alloc() : memref<16x16xf{{16|32}}>
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             scf.for %[[I:.*]] =
// CHECK:               scf.for %[[J:.*]] =
// CHECK:               %[[R:.*]] = arith.addi %{{.*}}, %[[I]] : index
// CHECK:               %[[S:.*]] = arith.addi %{{.*}}, %[[J]] : index
// CHECK:               %[[V:.*]] = memref.load %[[C]][%[[R]], %[[S]]] : memref<16x48xf32>
// CHECK:               memref.store %[[V]], %{{.*}}[%[[I]], %[[J]]] : memref<16x16xf32>
// CHECK:               memref.load %[[A]]
// CHECK:               memref.load %[[B]]
// CHECK:               scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK:                 %[[X:.*]] = memref.load %{{.*}}[%[[I]], %[[K]]] : memref<16x16xf16>
// CHECK:                 %[[XF:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK:                 %[[Y:.*]] = memref.load %{{.*}}[%[[K]], %[[J]]] : memref<16x16xf16>
// CHECK:                 %[[YF:.*]] = arith.extf %[[Y]] : f16 to f32
// CHECK:                 %[[P:.*]] = arith.mulf %[[XF]], %[[YF]] : f32
// CHECK:                 arith.addf %[[ACC]], %[[P]] : f32
// CHECK:               %[[W:.*]] = memref.load %{{.*}} : memref<16x16xf32>
// CHECK:               memref.store %[[W]], %[[C]]
// CHECK:           memref.dealloc
// CHECK:           scf.reduce
func.func @tiles(%a: memref<16x16xf16>, %b: memref<16x48xf16>, %c: memref<16x48xf32>) {
  linalg.matmul ins(%a, %b : memref<16x16xf16>, memref<16x48xf16>) outs(%c : memref<16x48xf32>)
  return
}

// CHECK-LABEL: func.func @other_launch(
// CHECK:         gpu.launch
func.func @other_launch(%m: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    gpu.terminator
  }
  return
}
