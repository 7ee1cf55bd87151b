// The CUDA backend's mapped stage (ember-gpu-map-reductions, ember-gpu-map): each loop nest
// tiled by its own rank, the contiguous dim on thread_x, ragged edges guarded by scf.if;
// a reduction a block per output reducing over its threads (scf.reduce, then
// gpu.all_reduce); code left outside loops a 1 x 1 kernel. After the gpu stage the host
// functions only launch.

// RUN: ember-compile %s --target cuda:sm_90 --emit=mapped | FileCheck %s
// RUN: ember-compile %s --target cuda:sm_90 --emit=gpu | FileCheck %s --check-prefix=GPU

// A 2-D elementwise nest: threads 32 (x, along the 33 columns) by 8 (y, along the 5 rows),
// both dims ragged: one guard for both.
// CHECK-LABEL: func.func @ragged(
// CHECK:         scf.parallel (%[[BX:.*]], %[[BY:.*]]) = (%c0, %c0) to (%c2, %c1) step (%c1, %c1) {
// CHECK:           scf.parallel (%[[TX:.*]], %[[TY:.*]]) = (%c0, %c0) to (%c32, %c8) step (%c1, %c1) {
// CHECK:             %[[X0:.*]] = arith.muli %[[BX]], %c32
// CHECK:             %[[COL:.*]] = arith.addi %[[X0]], %[[TX]]
// CHECK:             %[[INX:.*]] = arith.cmpi ult, %[[COL]], %c33
// CHECK:             %[[Y0:.*]] = arith.muli %[[BY]], %c8
// CHECK:             %[[ROW:.*]] = arith.addi %[[Y0]], %[[TY]]
// CHECK:             %[[INY:.*]] = arith.cmpi ult, %[[ROW]], %c5
// CHECK:             %[[IN:.*]] = arith.andi %[[INX]], %[[INY]]
// CHECK:             scf.if %[[IN]] {
// CHECK:               memref.load %arg0[%[[ROW]], %[[COL]]]
// CHECK:               memref.store {{.*}}[%[[ROW]], %[[COL]]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>, #gpu.loop_dim_map<processor = thread_y, {{.*}}>]}
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>]}
func.func @ragged(%x: tensor<5x33xf32>) -> tensor<5x33xf32> {
  %0 = "ember.mul"(%x, %x) : (tensor<5x33xf32>, tensor<5x33xf32>) -> tensor<5x33xf32>
  return %0 : tensor<5x33xf32>
}

// max over 1000 columns: a block per row, 256 threads each striding over the row from
// -inf, the all-reduce's result combined with the output's value (its init).
// CHECK-LABEL: func.func @row_max(
// CHECK:         scf.parallel (%[[ROW:.*]]) = (%c0) to (%c10) step (%c1) {
// CHECK:           %[[OLD:.*]] = memref.load %arg1[%[[ROW]]]
// CHECK:           %[[R:.*]] = scf.parallel (%[[T:.*]]) = (%c0) to (%c256) step (%c1) init (%[[NEGINF:.*]]) -> f32 {
// CHECK:             %[[P:.*]] = scf.for %[[K:.*]] = %[[T]] to %c1000 step %c256 iter_args(%[[ACC:.*]] = %[[NEGINF]]) -> (f32) {
// CHECK:               %[[V:.*]] = memref.load %arg0[%[[ROW]], %[[K]]]
// CHECK:               arith.maximumf %[[V]], %[[ACC]]
// CHECK:             scf.reduce(%[[P]] : f32) {
// CHECK:               arith.maximumf
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK:           %[[NEW:.*]] = arith.maximumf %[[OLD]], %[[R]]
// CHECK:           memref.store %[[NEW]], %arg1[%[[ROW]]]
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
// GPU-LABEL:   func.func @row_max(
// GPU-NOT:       memref.store
// GPU:           gpu.launch_func
// GPU-NOT:       memref.store
// GPU:           gpu.launch_func
// GPU:           return
// GPU:         gpu.module @row_max_kernel_0
// GPU:           gpu.all_reduce
// GPU-NEXT:      ^bb0
// GPU-NEXT:        arith.maximumf
func.func @row_max(%x: tensor<10x1000xf32>) -> tensor<10xf32> {
  %0 = "ember.reduce_max"(%x) {axes = array<i64: 1>, keepdims = false} : (tensor<10x1000xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// A 0-d computation has no loop: its loads and store run as one 1 x 1 kernel.
// CHECK-LABEL: func.func @scalar(
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1) {
// CHECK:           memref.load %arg0[]
// CHECK:           memref.store
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
// GPU-LABEL:   func.func @scalar(
// GPU-NOT:       memref.load
// GPU:           gpu.launch_func
// GPU-NEXT:      return
func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  %0 = "ember.add"(%x, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Rows of 64 floats: 4 per thread, as 16-byte vector loads and stores (PTX ld.global.v4);
// the row operand broadcast along dim 0 is loaded as a vector too. 16 vectors per row: 16
// threads along x (no guard: they fit exactly) and the next power of two above the 6 rows
// along y (guarded).
// CHECK-LABEL: func.func @contiguous(
// CHECK:         scf.parallel (%[[BX:.*]], %[[BY:.*]]) = (%c0, %c0) to (%c1, %c1) step (%c1, %c1) {
// CHECK:           scf.parallel (%[[TX:.*]], %[[TY:.*]]) = (%c0, %c0) to (%c16, %c8) step (%c1, %c1) {
// CHECK:             %[[Q:.*]] = arith.addi %{{.*}}, %[[TX]]
// CHECK-NOT:         arith.cmpi ult, %[[Q]]
// CHECK:             %[[I:.*]] = arith.addi %{{.*}}, %[[TY]]
// CHECK:             %[[IN:.*]] = arith.cmpi ult, %[[I]], %c6
// CHECK:             scf.if %[[IN]]
// CHECK:               %[[J:.*]] = arith.muli %[[Q]], %c4
// CHECK:               %[[X:.*]] = vector.load %arg0[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<6x64xf32>, vector<4xf32>
// CHECK:               %[[R:.*]] = vector.load %arg1[%[[J]]] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// CHECK:               %[[P:.*]] = arith.mulf %[[X]], %[[R]] : vector<4xf32>
// CHECK:               vector.store %[[P]], %arg2[%[[I]], %[[J]]] {alignment = 16 : i64}
func.func @contiguous(%x: tensor<6x64xf32>, %r: tensor<64xf32>) -> tensor<6x64xf32> {
  %0 = "ember.mul"(%x, %r) : (tensor<6x64xf32>, tensor<64xf32>) -> tensor<6x64xf32>
  return %0 : tensor<6x64xf32>
}
