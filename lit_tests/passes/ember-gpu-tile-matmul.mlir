// ember-gpu-tile-matmul turns each product on memrefs into one scf.parallel whose
// iterations compute a tile-m x tile-n register tile of the output: 70x50 in 2x3 tiles is
// P x Q = 35 x 17 iterations, iteration (p, q) owning rows p, p+35 and columns q, q+17,
// q+34 (neighbouring iterations, threads, touch neighbouring columns). Column q+34 can
// pass the last one (17 * 3 = 51 > 50): its index is clamped to 49 for the loads and its
// accumulators stored only when q+34 <= 49; the other rows and columns need no check.
// Each accumulator starts from the output's old value. A row of A is loaded once per K
// step for the 3 columns, a column of B once for the 2 rows.

// RUN: ember-opt %s -p 'builtin.module(func.func(ember-gpu-tile-matmul{tile-m=2 tile-n=3}))' --split-input-file | FileCheck %s
// RUN: ember-opt %s -p 'builtin.module(func.func(ember-gpu-tile-matmul))' --split-input-file --pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS: ember-gpu-tile-matmul:
// STATS-NEXT:   tiled: 1
// STATS: ember-gpu-tile-matmul:
// STATS-NEXT:   tiled: 1
// STATS: ember-gpu-tile-matmul:
// STATS-NEXT:   skipped: 1

// CHECK-LABEL: func.func @ragged(
// CHECK-SAME:    %[[A:.*]]: memref<70x33xf32>, %[[B:.*]]: memref<33x50xf32>, %[[C:.*]]: memref<70x50xf32>)
// CHECK-NOT:     linalg.matmul
// CHECK-DAG:     %[[P:.*]] = arith.constant 35 : index
// CHECK-DAG:     %[[Q:.*]] = arith.constant 17 : index
// CHECK:         scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%[[P]], %[[Q]])
// CHECK-DAG:       %[[LASTN:.*]] = arith.constant 49 : index
// CHECK-DAG:       %[[C34:.*]] = arith.constant 34 : index
// CHECK:           %[[ROW1:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK:           %[[COL1:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK:           %[[COL2:.*]] = arith.addi %[[J]], %[[C34]] : index
// CHECK:           %[[SAFE2:.*]] = arith.minsi %[[COL2]], %[[LASTN]] : index
// CHECK-NOT:       arith.minsi
// CHECK:           memref.load %[[C]][%[[I]], %[[J]]]
// CHECK-COUNT-5:   memref.load %[[C]]
// CHECK:           %[[ACC:.*]]:6 = scf.for %[[K:.*]] = {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32) {
// CHECK:             %[[X:.*]] = memref.load %[[A]][%[[I]], %[[K]]]
// CHECK:             %[[Y:.*]] = memref.load %[[B]][%[[K]], %[[J]]]
// CHECK:             %[[M:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK:             arith.addf %{{.*}}, %[[M]] : f32
// CHECK:             memref.load %[[B]][%[[K]], %[[COL1]]]
// CHECK:             memref.load %[[B]][%[[K]], %[[SAFE2]]]
// CHECK:             memref.load %[[A]][%[[ROW1]], %[[K]]]
// CHECK-NOT:         memref.load
// CHECK:             scf.yield
// CHECK:           memref.store %[[ACC]]#0, %[[C]][%[[I]], %[[J]]]
// CHECK:           memref.store %[[ACC]]#1, %[[C]][%[[I]], %[[COL1]]]
// CHECK:           %[[OK:.*]] = arith.cmpi ule, %[[COL2]], %[[LASTN]] : index
// CHECK:           scf.if %[[OK]] {
// CHECK-NEXT:        memref.store %[[ACC]]#2, %[[C]][%[[I]], %[[SAFE2]]]
// CHECK:           memref.store %[[ACC]]#3, %[[C]][%[[ROW1]], %[[J]]]
// CHECK:           memref.store %[[ACC]]#4, %[[C]][%[[ROW1]], %[[COL1]]]
// CHECK:           scf.if
// CHECK-NEXT:        memref.store %[[ACC]]#5, %[[C]][%[[ROW1]], %[[SAFE2]]]
// CHECK:           scf.reduce
func.func @ragged(%a: memref<70x33xf32>, %b: memref<33x50xf32>, %c: memref<70x50xf32>) {
  linalg.matmul ins(%a, %b : memref<70x33xf32>, memref<33x50xf32>) outs(%c : memref<70x50xf32>)
  return
}

// -----

// A bf16 product accumulating in f32 (Ember's lowering of a bf16 matmul): linalg's body,
// cloned, extends both operands; a batch dim becomes the first parallel dim.
// CHECK-LABEL: func.func @mixed(
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:           scf.for
// CHECK:             arith.extf %{{.*}} : bf16 to f32
// CHECK:             arith.extf %{{.*}} : bf16 to f32
// CHECK:             arith.mulf
func.func @mixed(%a: memref<3x5x7xbf16>, %b: memref<3x7x9xbf16>, %c: memref<3x5x9xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x5x7xbf16>, memref<3x7x9xbf16>) outs(%c : memref<3x5x9xf32>)
  return
}

// -----

// Products of run-time sizes are left to the generic mapping.
// CHECK-LABEL: func.func @dynamic(
// CHECK:         linalg.matmul
func.func @dynamic(%a: memref<?x4xf32>, %b: memref<4x8xf32>, %c: memref<?x8xf32>) {
  linalg.matmul ins(%a, %b : memref<?x4xf32>, memref<4x8xf32>) outs(%c : memref<?x8xf32>)
  return
}
