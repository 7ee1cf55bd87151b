// ember-gpu-tile-matmul turns each product on memrefs into one scf.parallel whose
// iterations compute a tile-m x tile-n register tile of the output: 70x50 in 2x3 tiles is
// 35 x 17 iterations (the last column of tiles ragged: 17 * 3 = 51 > 50). Loads clamp the
// row and column to the last one (69, 49), so they stay in bounds; each accumulator starts
// from the output's old value and is stored only when its row and column exist. A row of
// A is loaded once per K step for the 3 columns, a column of B once for the 2 rows.

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
// CHECK-DAG:       %[[LASTM:.*]] = arith.constant 69 : index
// CHECK:           %[[ROW:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:           %[[COL:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK:           %[[R0:.*]] = arith.minsi %[[ROW]], %[[LASTM]] : index
// CHECK:           %[[C0:.*]] = arith.minsi %[[COL]], %[[LASTN]] : index
// CHECK-COUNT-6:   memref.load %[[C]]
// CHECK:           %[[ACC:.*]]:6 = scf.for %[[K:.*]] = {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32) {
// CHECK:             %[[X:.*]] = memref.load %[[A]][%[[R0]], %[[K]]]
// CHECK:             %[[Y:.*]] = memref.load %[[B]][%[[K]], %[[C0]]]
// CHECK:             %[[M:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK:             arith.addf %{{.*}}, %[[M]] : f32
// CHECK-COUNT-2:     memref.load %[[B]]
// CHECK:             memref.load %[[A]]
// CHECK-NOT:         memref.load
// CHECK:             scf.yield
// CHECK:           %[[ROK:.*]] = arith.cmpi ule, %[[ROW]], %[[LASTM]] : index
// CHECK:           %[[COK:.*]] = arith.cmpi ule, %[[COL]], %[[LASTN]] : index
// CHECK:           %[[OK:.*]] = arith.andi %[[ROK]], %[[COK]] : i1
// CHECK:           scf.if %[[OK]] {
// CHECK-NEXT:        memref.store %[[ACC]]#0, %[[C]][%[[R0]], %[[C0]]]
// CHECK-COUNT-5:   memref.store
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
