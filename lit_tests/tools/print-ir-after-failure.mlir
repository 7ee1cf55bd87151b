// --print-ir-after-failure prints the IR the failing pass left, headed as MLIR's
// --mlir-print-ir-after-failure, and the error follows.

// RUN: not ember-opt %s -p 'builtin.module(cse,one-shot-bufferize)' --print-ir-after-failure 2>&1 >/dev/null | FileCheck %s

// CHECK:      // -----// IR Dump After one-shot-bufferize Failed //----- //
// CHECK-NEXT: module {
// CHECK:        "ember.neg"
// CHECK:      error: op was not bufferized
// CHECK-NOT:  IR Dump
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
