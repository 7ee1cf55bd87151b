// ember-copy-repeated-results returns a copy for each repeat of a returned tensor
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
