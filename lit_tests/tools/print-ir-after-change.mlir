// --print-ir-after-change prints after a pass only when the pass changed the IR it ran on
// (MLIR's --mlir-print-ir-after-change); ember-optimize's inner passes are passes too.

// RUN: ember-opt %s -p 'builtin.module(ember-cse,ember-canonicalize,canonicalize,symbol-dce)' --print-ir-after-change 2>&1 >/dev/null | FileCheck %s
// RUN: ember-opt %s -p 'builtin.module(ember-optimize)' --print-ir-after-change 2>&1 >/dev/null | FileCheck %s --check-prefix=INNER

// ember-cse merges nothing, ember-canonicalize folds the add of zero, canonicalize erases
// the dead arith ops, symbol-dce finds nothing to erase.
// CHECK-NOT:  IR Dump After ember-cse
// CHECK:      // -----// IR Dump After ember-canonicalize (ember-canonicalize) //----- //
// CHECK-NOT:    "ember.add"
// CHECK:        arith.addi
// CHECK:      // -----// IR Dump After canonicalize //----- //
// CHECK-NOT:    arith.addi
// CHECK-NOT:  IR Dump

// Its first ember-canonicalize does all the work (the add of zero and the dead ops go);
// the other inner passes and the second round change nothing.
// INNER:      // -----// IR Dump After ember-canonicalize (ember-canonicalize) //----- //
// INNER-NOT:    "ember.neg"
// INNER:      // -----// IR Dump After ember-optimize (ember-optimize) //----- //
// INNER-NOT:  IR Dump
func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %c = arith.constant 1 : i32
  %d = arith.addi %c, %c : i32
  %z = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %y = "ember.add"(%x, %z) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %n = "ember.neg"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}
