// ember-copy-repeated-results returns a copy for each repeat of a returned tensor or buffer
// (buffer-results-to-out-params{hoist-static-allocs} segfaults on `return %1, %1`,
// llvm/llvm-project#219492).

// RUN: ember-opt %s -p ember-copy-repeated-results | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK:         %[[C:.*]] = linalg.copy ins(%{{.*}} : tensor<4xf32>)
// CHECK:         %[[R:.*]] = linalg.copy {{.*}}ins(%[[C]] : tensor<4xf32>)
// CHECK:         return %[[C]], %[[R]]
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %c = linalg.copy ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %c, %c : tensor<4xf32>, tensor<4xf32>
}

// After bufferization a buffer returned twice gets a fresh buffer and a memref.copy for
// the repeat (one-shot-bufferize returns one buffer twice for `return %e, %g` when the
// tensor.empty %e is also %g's destination).

// CHECK-LABEL: func.func @buffers(
// CHECK:         %[[A:.*]] = memref.alloc(%{{.*}}) {{.*}}: memref<?xf32>
// CHECK:         %[[D:.*]] = memref.dim %[[A]]
// CHECK:         %[[B:.*]] = memref.alloc(%[[D]]) : memref<?xf32>
// CHECK:         memref.copy %[[A]], %[[B]]
// CHECK:         return %[[A]], %[[B]], %arg0, %arg0
func.func @buffers(%x: memref<?xf32>, %n: index) -> (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) {
  %a = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
  return %a, %a, %x, %x : memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>
}
