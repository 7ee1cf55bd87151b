// --print-ir-before=PASS (repeatable) and --print-ir-before-all print the IR before a pass,
// as mlir-opt's --mlir-print-ir-before: the op the pass runs on (a function for a nested
// pass), or with --print-ir-module-scope the whole module with the op named in the header.

// RUN: ember-opt %s -p 'builtin.module(ember-canonicalize,func.func(cse),symbol-dce)' --print-ir-before=cse 2>&1 >/dev/null | FileCheck %s
// RUN: ember-opt %s -p 'builtin.module(ember-canonicalize,func.func(cse),symbol-dce)' --mlir-print-ir-before-all 2>&1 >/dev/null | FileCheck %s --check-prefix=ALL
// RUN: ember-opt %s -p 'builtin.module(func.func(ember-canonicalize,ember-cse))' --print-ir-before=ember-cse 2>&1 >/dev/null | FileCheck %s --check-prefix=NESTED
// RUN: ember-opt %s -p 'builtin.module(func.func(ember-canonicalize,ember-cse))' --print-ir-before=ember-cse --print-ir-module-scope 2>&1 >/dev/null | FileCheck %s --check-prefix=SCOPE

// Before cse: ember-canonicalize has removed the add of zero; the dead arith op is still there.
// CHECK:      // -----// IR Dump Before func.func(cse) //----- //
// CHECK-NEXT: module {
// CHECK-NOT:    "ember.add"
// CHECK:        arith.addi
// CHECK-NOT:  IR Dump

// ALL:        // -----// IR Dump Before ember-canonicalize (ember-canonicalize) //----- //
// ALL:          "ember.add"
// ALL:        // -----// IR Dump Before func.func(cse) //----- //
// ALL:        // -----// IR Dump Before symbol-dce //----- //
// ALL-NOT:    IR Dump

// A nested pass prints its function, once per function.
// NESTED:      // -----// IR Dump Before ember-cse (ember-cse) //----- //
// NESTED-NEXT: func.func @f(
// NESTED:      // -----// IR Dump Before ember-cse (ember-cse) //----- //
// NESTED-NEXT: func.func @g(
// NESTED-NOT:  IR Dump

// SCOPE:      // -----// IR Dump Before ember-cse (ember-cse) ('func.func' operation: @f) //----- //
// SCOPE-NEXT: module {
// SCOPE:      // -----// IR Dump Before ember-cse (ember-cse) ('func.func' operation: @g) //----- //
// SCOPE-NEXT: module {
func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %c = arith.constant 1 : i32
  %d = arith.addi %c, %c : i32
  %z = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %y = "ember.add"(%x, %z) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}
func.func @g(%x: tensor<4xi32>) -> tensor<4xi32> {
  %y = "ember.neg"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}
