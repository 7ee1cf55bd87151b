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

// A view of a returned value is a repeat too (it would alias it: here the bufferized
// clone of an unranked result, which nothing lowers); the value after it is copied.
// CHECK-LABEL: func.func @view(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<0xi64>
// CHECK:         %[[V:.*]] = tensor.cast %[[E]] : tensor<0xi64> to tensor<?xi64>
// CHECK:         %[[R:.*]] = linalg.copy {{.*}}ins(%[[E]] : tensor<0xi64>)
// CHECK:         return %[[V]], %[[R]]
func.func @view() -> (tensor<?xi64>, tensor<0xi64>) {
  %e = tensor.empty() : tensor<0xi64>
  %v = tensor.cast %e : tensor<0xi64> to tensor<?xi64>
  return %v, %e : tensor<?xi64>, tensor<0xi64>
}
