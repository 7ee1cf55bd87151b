// ember-unrank-dynamic-results returns results of dynamic shape unranked (no caller could
// allocate them as out-parameters); an argument returned as such is copied first.

// RUN: ember-opt %s -p ember-unrank-dynamic-results | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-SAME:    -> tensor<*xf32>
// CHECK:         %[[C:.*]] = linalg.copy
// CHECK:         %[[U:.*]] = tensor.cast %[[C]] : tensor<?xf32> to tensor<*xf32>
// CHECK:         return %[[U]] : tensor<*xf32>
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}
