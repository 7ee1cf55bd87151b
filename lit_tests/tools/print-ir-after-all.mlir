// --print-ir-after-all (alias --mlir-print-ir-after-all) dumps the whole module to stderr after
// every pass of the pipeline, while the final IR still goes to stdout.

// RUN: ember-opt %s -p 'builtin.module(canonicalize,cse)' --print-ir-after-all 2>&1 >/dev/null | FileCheck %s
// RUN: ember-opt %s -p 'builtin.module(canonicalize,cse)' --mlir-print-ir-after-all 2>/dev/null | FileCheck %s --check-prefix=OUT
// RUN: ember-opt %s -p 'func.func(cse)' --print-ir-after-all --mlir-print-op-generic 2>&1 >/dev/null | FileCheck %s --check-prefix=GENERIC

// After canonicalize the dead arith.addi is gone; the ember op stays.
// CHECK:      // -----// IR Dump After Canonicalizer (canonicalize) ('builtin.module' operation) //----- //
// CHECK-NEXT: module {
// CHECK-NEXT:   func.func @f(
// CHECK-NOT:    arith.addi
// CHECK:        "ember.neg"
// CHECK:      // -----// IR Dump After CSE (cse) ('builtin.module' operation) //----- //
// CHECK-NEXT: module {
// CHECK:        "ember.neg"
// CHECK-NOT:  IR Dump

// OUT-NOT:    IR Dump
// OUT:        func.func @f(
// OUT:          "ember.neg"

// GENERIC:    // -----// IR Dump After CSE (cse) ('func.func' operation: @f) //----- //
// GENERIC:    "func.func"() <{function_type
// GENERIC:    "ember.neg"
// GENERIC:    "func.return"
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 1 : i32
  %d = arith.addi %c, %c : i32
  %0 = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
