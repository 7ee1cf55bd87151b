// ember-opt runs upstream passes through a textual pipeline, in the full form
// (`builtin.module(...)`) or the bare form (`canonicalize`, wrapped in builtin.module for you).
// Upstream passes see IRDL ops as having unknown effects: they erase and merge the arith ops
// around them but keep every ember op, duplicates and side effects included.

// RUN: ember-opt %s -p 'builtin.module(canonicalize,cse)' | FileCheck %s
// RUN: ember-opt %s -p canonicalize | FileCheck %s
// RUN: ember-opt %s -p cse | FileCheck %s --check-prefix=CSE
// RUN: ember-opt %s -p 'func.func(cse)' | FileCheck %s --check-prefix=CSE
// RUN: ember-opt %s -p 'builtin.module(func.func(canonicalize))' | FileCheck %s

// canonicalize erases the dead arith ops; the ember ops stay, in order.
// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[R:.*]]: !ember.resource<tensor<4xf32>>)
// CHECK-NOT:     arith.
// CHECK:         %[[A:.*]] = "ember.neg"(%[[X]])
// CHECK-NEXT:    %[[B:.*]] = "ember.neg"(%[[X]])
// CHECK-NEXT:    %[[V:.*]] = "ember.read_variable"(%[[R]])
// CHECK-NEXT:    "ember.print"(%[[V]])
// CHECK-NEXT:    "ember.print"(%[[V]])
// CHECK-NEXT:    %[[S:.*]] = "ember.add"(%[[A]], %[[B]])
// CHECK-NEXT:    return %[[S]], %[[V]]

// cse merges the two equal constants (and drops the now-dead addi) but not the ember ops.
// CSE-LABEL:     func.func @f(
// CSE-COUNT-2:   "ember.neg"
// CSE:           arith.constant 1 : i32
// CSE-NOT:       arith.constant
// CSE-NOT:       arith.addi
// CSE-COUNT-2:   "ember.print"
func.func @f(%x: tensor<4xf32>, %r: !ember.resource<tensor<4xf32>>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 1 : i32
  %sum = arith.addi %c1, %c2 : i32
  %v = "ember.read_variable"(%r) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  "ember.print"(%v) {end = "\0A", format = "{}", stream = "stderr", summarize = 3 : i64} : (tensor<4xf32>) -> ()
  "ember.print"(%v) {end = "\0A", format = "{}", stream = "stderr", summarize = 3 : i64} : (tensor<4xf32>) -> ()
  %s = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %s, %v : tensor<4xf32>, tensor<4xf32>
}
