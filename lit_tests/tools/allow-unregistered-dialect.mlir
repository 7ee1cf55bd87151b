// Ops of unknown dialects are errors unless --allow-unregistered-dialect is given; unknown ops
// of the ember dialect itself stay errors even then.

// RUN: not ember-opt %s --split-input-file 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: not ember-opt %s --split-input-file --allow-unregistered-dialect 2>&1 | FileCheck %s --check-prefix=ALLOW
// RUN: not ember-opt %s --split-input-file --allow-unregistered-dialect 2>/dev/null | FileCheck %s --check-prefix=OUT

// ALLOW-NOT:  unregistered dialect
// OUT:        "mystery.op"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// OUT-NOT:    ember.frobnicate

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // STRICT: allow-unregistered-dialect.mlir:[[@LINE+1]]:20: error: operation being parsed with an unregistered dialect
  %0 = "mystery.op"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  // STRICT: allow-unregistered-dialect.mlir:[[@LINE+2]]:8: error: unregistered operation 'ember.frobnicate' found in dialect ('ember')
  // ALLOW:  allow-unregistered-dialect.mlir:[[@LINE+1]]:8: error: unregistered operation 'ember.frobnicate' found in dialect ('ember')
  %0 = "ember.frobnicate"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
