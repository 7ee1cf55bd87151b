// ember-gpu-map and ember-gpu-map-reductions on memref loop nests, with their options:
// grids beyond the launch limits (a grid-stride loop in each thread), run-time sizes,
// reductions of another combiner, host code that becomes a 1 x 1 kernel whose results
// the host and later kernels read through 0-d buffers; invalid options.

// RUN: ember-opt %s -p 'builtin.module(func.func(ember-gpu-map-reductions,convert-linalg-to-parallel-loops,ember-gpu-map{threads-x=64 threads-y=4}),cse)' --split-input-file | FileCheck %s
// RUN: not ember-opt %s -p 'builtin.module(func.func(ember-gpu-map{threads-x=64 threads-y=32}))' 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not ember-opt %s -p 'builtin.module(func.func(ember-gpu-map-reductions{threads=2000}))' 2>&1 | FileCheck %s --check-prefix=ERR2

// ERR: error: invalid pass pipeline: ember-gpu-map: threads-1d=256, threads-x=64, threads-y=32: each at least 1, and at most 1024 threads per block
// ERR2: error: invalid pass pipeline: ember-gpu-map-reductions: threads=2000, min-reduction=16: threads from 1 to 1024

// 600000 outer indices need more than 65535 blocks in z: 65535 blocks, each thread
// striding over them; the innermost dim's size is known at run time only (launched only
// when not 0: a grid of 0 blocks is an error; ceildiv, a guard, and a grid-stride loop
// in x as its block count is unknown).
// CHECK-LABEL: func.func @big(
// CHECK-SAME:    %[[A:.*]]: memref<600000x3x?xf32>, %[[N:.*]]: index)
// CHECK:         %[[SOME:.*]] = arith.cmpi ult, %c0, %[[N]]
// CHECK:         scf.if %[[SOME]] {
// CHECK:         %[[BX:.*]] = arith.ceildivui %[[N]], %c64
// CHECK:         %[[GX:.*]] = arith.minui %[[BX]], %c2147483647
// CHECK:         scf.parallel (%[[X:.*]], %[[Y:.*]], %[[Z:.*]]) = (%c0, %c0, %c0) to (%[[GX]], %c1, %c65535)
// CHECK:           scf.parallel (%[[TX:.*]], %[[TY:.*]]) = (%c0, %c0) to (%c64, %c4)
// CHECK:             scf.for %[[XS:.*]] = %[[X]] to %[[BX]] step %[[GX]] {
// CHECK:               scf.for %[[ZS:.*]] = %[[Z]] to %c600000 step %c65535 {
// CHECK:                 %[[X0:.*]] = arith.muli %[[XS]], %c64
// CHECK:                 %[[K:.*]] = arith.addi %[[X0]], %[[TX]]
// CHECK:                 arith.cmpi ult, %[[K]], %[[N]]
// CHECK:                 scf.if
// CHECK:                   memref.load %[[A]][%[[ZS]], %{{.*}}, %[[K]]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>, #gpu.loop_dim_map<processor = thread_y, {{.*}}>]}
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_z, {{.*}}>]}
func.func @big(%a: memref<600000x3x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c600000 = arith.constant 600000 : index
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c600000, %c3, %n) step (%c1, %c1, %c1) {
    %v = memref.load %a[%i, %j, %k] : memref<600000x3x?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %a[%i, %j, %k] : memref<600000x3x?xf32>
    scf.reduce
  }
  return
}

// -----

// No iteration: no launch.
// CHECK-LABEL: func.func @empty(
// CHECK-NOT:     scf.parallel
// CHECK:         return
func.func @empty(%a: memref<0x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c0, %c5) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<0x5xf32>
    memref.store %v, %a[%i, %j] : memref<0x5xf32>
    scf.reduce
  }
  return
}

// -----

// An integer sum over the outer axis: 40 elements, so 64 threads (whole warps) per
// output column, each starting at addi's identity 0; a reduction of 4 stays a loop in
// a thread per output carrying its value (not a host loop around a launch per row).
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @columns(
// CHECK:         scf.parallel (%[[COL:.*]]) = (%c0) to (%c7) step (%c1) {
// CHECK:           %[[OLD:.*]] = memref.load %arg1[%[[COL]]]
// CHECK:           %[[R:.*]] = scf.parallel (%[[T:.*]]) = (%c0) to (%c64) step (%c1) init (%c0_i32) -> i32 {
// CHECK:             scf.for %[[ROW:.*]] = %[[T]] to %c40 step %c64 iter_args(%{{.*}} = %c0_i32)
// CHECK:               memref.load %arg0[%[[ROW]], %[[COL]]]
// CHECK:             scf.reduce
// CHECK:               arith.addi
// CHECK:           arith.addi %[[OLD]], %[[R]]
// CHECK:           memref.store
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
// CHECK-NEXT:    scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1) {
// CHECK:           scf.parallel (%{{.*}}) = (%c0) to (%c256) step (%c1) {
// CHECK:             scf.if
// CHECK:               %[[O:.*]] = memref.load %arg3[%[[C:.*]]]
// CHECK:               %[[S:.*]] = scf.for %[[R:.*]] = %c0 to %c4 step %c1 iter_args(%[[ACC:.*]] = %[[O]]) -> (i32) {
// CHECK:                 memref.load %arg2[%[[R]], %[[C]]]
// CHECK:               memref.store %[[S]], %arg3[%[[C]]]
func.func @columns(%x: memref<40x7xi32>, %o: memref<7xi32>, %y: memref<4x7xi32>, %p: memref<7xi32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<40x7xi32>) outs(%o : memref<7xi32>) {
  ^bb0(%a: i32, %acc: i32):
    %s = arith.addi %a, %acc : i32
    linalg.yield %s : i32
  }
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%y : memref<4x7xi32>) outs(%p : memref<7xi32>) {
  ^bb0(%a: i32, %acc: i32):
    %s = arith.addi %a, %acc : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// Host code that touches memory: the loop computing a flag runs as a 1 x 1 kernel that
// stores the flag in a 0-d buffer; the host reads it for its if, the next kernel where it
// uses it.
// CHECK-LABEL: func.func @flag(
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<i1>
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1) {
// CHECK:           %[[F:.*]] = scf.for
// CHECK:           memref.store %[[F]], %[[BUF]][]
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
// CHECK:         %[[HOST:.*]] = memref.load %[[BUF]][]
// CHECK:         scf.if %[[HOST]] {
// CHECK:           func.call @fail()
// CHECK:         scf.parallel
// CHECK:           scf.parallel
// CHECK:             scf.if
// CHECK:               %[[DEV:.*]] = memref.load %[[BUF]][]
// CHECK:               arith.select %[[DEV]]
// CHECK:         memref.dealloc %[[BUF]]
// CHECK-NEXT:    return
func.func private @fail()
func.func @flag(%x: memref<9xi32>, %o: memref<9xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %zero = arith.constant 0 : i32
  %false = arith.constant false
  %any = scf.for %i = %c0 to %c9 step %c1 iter_args(%f = %false) -> (i1) {
    %v = memref.load %x[%i] : memref<9xi32>
    %z = arith.cmpi eq, %v, %zero : i32
    %g = arith.ori %f, %z : i1
    scf.yield %g : i1
  }
  scf.if %any {
    func.call @fail() : () -> ()
  }
  scf.parallel (%i) = (%c0) to (%c9) step (%c1) {
    %v = memref.load %x[%i] : memref<9xi32>
    %w = arith.select %any, %zero, %v : i32
    memref.store %w, %o[%i] : memref<9xi32>
    scf.reduce
  }
  return
}

// -----

// A nest that is a parallel reduction already (not from linalg): a block per row, 64
// threads (whole warps over the 40 columns) each from maxsi's identity, the result
// combined with the loop's own init (7) after the all-reduce.
// CHECK-LABEL: func.func @row_max(
// CHECK:         scf.parallel (%[[ROW:.*]]) = (%c0) to (%c9) step (%c1) {
// CHECK:           %[[R:.*]] = scf.parallel (%[[T:.*]]) = (%c0) to (%c64) step (%c1) init (%[[MIN:.*]]) -> i32 {
// CHECK:             scf.for %[[K:.*]] = %[[T]] to %c40 step %c64 iter_args(%[[ACC:.*]] = %[[MIN]])
// CHECK:               %[[V:.*]] = memref.load %arg0[%[[ROW]], %[[K]]]
// CHECK:               arith.maxsi %[[ACC]], %[[V]]
// CHECK:             scf.reduce
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK:           %[[FINAL:.*]] = arith.maxsi %c7_i32, %[[R]]
// CHECK:           memref.store %[[FINAL]], %arg1[%[[ROW]]]
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
func.func @row_max(%x: memref<9x40xi32>, %out: memref<9xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %c40 = arith.constant 40 : index
  %seven = arith.constant 7 : i32
  scf.parallel (%i) = (%c0) to (%c9) step (%c1) {
    %s = scf.parallel (%j) = (%c0) to (%c40) step (%c1) init (%seven) -> i32 {
      %v = memref.load %x[%i, %j] : memref<9x40xi32>
      scf.reduce(%v : i32) {
      ^bb0(%a: i32, %b: i32):
        %r = arith.maxsi %a, %b : i32
        scf.reduce.return %r : i32
      }
    }
    memref.store %s, %out[%i] : memref<9xi32>
    scf.reduce
  }
  return
}
