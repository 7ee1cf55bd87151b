// --mlir-print-debuginfo prints each op's location; explicit locations survive a round trip.

// RUN: ember-opt %s --mlir-print-debuginfo | FileCheck %s
// RUN: ember-opt %s --mlir-print-debuginfo | ember-opt --mlir-print-debuginfo | FileCheck %s --check-prefix=TRIP

// CHECK:      "ember.neg"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32> loc([[NEG:#loc[0-9]*]])
// CHECK:      "ember.abs"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32> loc([[ABS:#loc[0-9]*]])
// CHECK-DAG:  [[NEG]] = loc({{.*}}:[[@LINE+6]]:8)
// CHECK-DAG:  [[ABS]] = loc("model.py":7:3)

// TRIP:       "ember.abs"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32> loc([[ABS:#loc[0-9]*]])
// TRIP:       [[ABS]] = loc("model.py":7:3)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.abs"(%0) : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":7:3)
  return %1 : tensor<4xf32>
}
