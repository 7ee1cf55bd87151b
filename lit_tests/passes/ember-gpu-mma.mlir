// ember-gpu-mma runs f16 products whose M, N and K are multiples of 16 on tensor cores:
// each warp (32 threads along x) computes 1 or 2 16x16 fragments of C along M and along N
// (2 where they divide it), a block has 1 or 2 warps along each (threads y: N, z: M).
// 32x48 is 2x1 fragments, one warp a block, a grid of 3 blocks along N; K=160 is 10 steps
// of 16, done as 2 chunks of 5 with C's fragments in registers within a chunk. 64x128 is
// 2x2 fragments and 2x2 warps a block: 2 blocks. bf16 (no bf16 mma_matrix in MLIR 22)
// and ragged shapes are left to ember-gpu-tile-matmul.

// RUN: ember-opt %s -p 'builtin.module(func.func(ember-gpu-mma,cse))' --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @tiles(
// CHECK-SAME:    %[[A:.*]]: memref<32x160xf16>, %[[B:.*]]: memref<160x48xf16>, %[[C:.*]]: memref<32x48xf32>)
// CHECK-NOT:     linalg.matmul
// CHECK-DAG:     %[[WARP:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[GX:.*]] = arith.constant 3 : index
// CHECK:         gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %{{.*}}) in (%{{.*}} = %[[GX]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads({{.*}}) in (%{{.*}} = %[[WARP]],
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-COUNT-2:     gpu.subgroup_mma_load_matrix %[[C]][{{.*}}] {leadDimension = 48 : index} : memref<32x48xf32> -> !gpu.mma_matrix<16x16xf32, "COp">
// CHECK-COUNT-10:    gpu.subgroup_mma_compute {{.*}} : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
// CHECK-COUNT-2:     gpu.subgroup_mma_store_matrix %{{.*}}, %[[C]][{{.*}}] {leadDimension = 48 : index}
// CHECK:           gpu.terminator
func.func @tiles(%a: memref<32x160xf16>, %b: memref<160x48xf16>, %c: memref<32x48xf32>) {
  linalg.matmul ins(%a, %b : memref<32x160xf16>, memref<160x48xf16>) outs(%c : memref<32x48xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @warps(
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[TWO]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%{{.*}}, %[[TY:.*]], %[[TZ:.*]]) in (%{{.*}} = %{{.*}}, %{{.*}} = %[[TWO]], %{{.*}} = %[[TWO]])
// CHECK:           arith.addi %{{.*}}, %[[TZ]] : index
// CHECK:           arith.addi %{{.*}}, %[[TY]] : index
// CHECK-COUNT-4:     gpu.subgroup_mma_compute
func.func @warps(%a: memref<64x16xf16>, %b: memref<16x128xf16>, %c: memref<64x128xf32>) {
  linalg.matmul ins(%a, %b : memref<64x16xf16>, memref<16x128xf16>) outs(%c : memref<64x128xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @batched(
// CHECK:         gpu.launch
// CHECK:           gpu.subgroup_mma_load_matrix %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] {leadDimension = 16 : index} : memref<2x16x16xf16> -> !gpu.mma_matrix<16x16xf16, "AOp">
// CHECK:           gpu.subgroup_mma_compute {{.*}} -> !gpu.mma_matrix<16x16xf16, "COp">
func.func @batched(%a: memref<2x16x16xf16>, %b: memref<2x16x32xf16>, %c: memref<2x16x32xf16>) {
  linalg.batch_matmul ins(%a, %b : memref<2x16x16xf16>, memref<2x16x32xf16>) outs(%c : memref<2x16x32xf16>)
  return
}

// -----

// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.matmul {{.*}}bf16
// CHECK:         linalg.matmul {{.*}}memref<20x16xf16>
func.func @left_alone(%a: memref<16x16xbf16>, %c: memref<16x16xf32>, %x: memref<20x16xf16>, %y: memref<16x16xf16>, %z: memref<20x16xf32>) {
  linalg.matmul ins(%a, %a : memref<16x16xbf16>, memref<16x16xbf16>) outs(%c : memref<16x16xf32>)
  linalg.matmul ins(%x, %y : memref<20x16xf16>, memref<16x16xf16>) outs(%z : memref<20x16xf32>)
  return
}
