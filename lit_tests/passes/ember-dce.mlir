// ember-dce erases pure ops whose results are unused (repeatedly, so whole chains go), drops
// the unused results of a pure scf.if, and keeps every effect and every op that may fail at
// run time (eager raises its error).

// RUN: ember-opt %s -p ember-dce --split-input-file | FileCheck %s
// RUN: ember-opt %s -p ember-dce --split-input-file --pass-statistics -o %t 2>&1 | FileCheck %s --check-prefix=STATS

// Unused pure ops go, ember and upstream alike.
// STATS:       ember-dce:
// STATS-NEXT:    erased: 3
// CHECK-LABEL: func.func @unused_pure(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[P:.*]]: tensor<i1>)
// CHECK-NEXT:  return %[[X]]
func.func @unused_pure(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %0 = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %b = tensor.extract %p[] : tensor<i1>
  return %x : tensor<4xf32>
}

// -----

// A dead chain goes entirely (users first, then what they used); the used part of a chain
// stays.
// STATS:       ember-dce:
// STATS-NEXT:    erased: 3
// CHECK-LABEL: func.func @chains(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:  %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:  return %[[E]]
func.func @chains(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %n = "ember.neg"(%e) : (tensor<4xf32>) -> tensor<4xf32>
  %t = "ember.tanh"(%n) : (tensor<4xf32>) -> tensor<4xf32>
  %s = "ember.reduce_sum"(%t) {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %e : tensor<4xf32>
}

// -----

// Effects stay: print, assigns, a call, and a read (it has to see earlier writes), along with
// the pure ops feeding them.
// STATS-NOT:   erased
// CHECK-LABEL: func.func @effects_kept(
// CHECK-SAME:    %[[V:.*]]: !ember.resource<tensor<f32>>, %[[X:.*]]: tensor<f32>)
// CHECK-NEXT:  %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:  "ember.print"(%[[E]])
// CHECK-NEXT:  "ember.assign_variable"(%[[V]], %[[E]])
// CHECK-NEXT:  "ember.assign_add_variable"(%[[V]], %[[X]])
// CHECK-NEXT:  "ember.read_variable"(%[[V]])
// CHECK-NEXT:  call @opaque()
// CHECK-NEXT:  return
func.func private @opaque()
func.func @effects_kept(%v: !ember.resource<tensor<f32>>, %x: tensor<f32>) {
  %e = "ember.exp"(%x) : (tensor<f32>) -> tensor<f32>
  "ember.print"(%e) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<f32>) -> ()
  "ember.assign_variable"(%v, %e) : (!ember.resource<tensor<f32>>, tensor<f32>) -> ()
  "ember.assign_add_variable"(%v, %x) : (!ember.resource<tensor<f32>>, tensor<f32>) -> ()
  %r = "ember.read_variable"(%v) : (!ember.resource<tensor<f32>>) -> tensor<f32>
  func.call @opaque() : () -> ()
  return
}

// -----

// A pure scf.if loses its unused result; the yields shrink to match and what only fed the
// dropped result goes too.
// STATS:       ember-dce:
// STATS-NEXT:    erased: 2
// STATS-NEXT:    results-removed: 1
// CHECK-LABEL: func.func @if_unused_result(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[P:.*]]: i1)
// CHECK-NEXT:  %[[R:.*]] = scf.if %[[P]] -> (tensor<4xf32>) {
// CHECK-NEXT:    %[[N:.*]] = "ember.neg"(%[[X]])
// CHECK-NEXT:    scf.yield %[[N]] : tensor<4xf32>
// CHECK-NEXT:  } else {
// CHECK-NEXT:    scf.yield %[[X]] : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  return %[[R]]
func.func @if_unused_result(%x: tensor<4xf32>, %p: i1) -> tensor<4xf32> {
  %r:2 = scf.if %p -> (tensor<4xf32>, tensor<4xf32>) {
    %n = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %e = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n, %e : tensor<4xf32>, tensor<4xf32>
  } else {
    %t = "ember.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %x, %t : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0 : tensor<4xf32>
}

// -----

// Used results of an scf.if stay; an scf.if with an effect inside stays even when no result
// is used; a pure scf.if with no used result goes entirely (one op erased, its body with it).
// STATS:       ember-dce:
// STATS-NEXT:    erased: 1
// CHECK-LABEL: func.func @if_kept(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[P:.*]]: i1)
// CHECK-NEXT:  %[[R:.*]]:2 = scf.if %[[P]] -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:    %[[N:.*]] = "ember.neg"(%[[X]])
// CHECK-NEXT:    scf.yield %[[N]], %[[X]]
// CHECK-NEXT:  } else {
// CHECK-NEXT:    scf.yield %[[X]], %[[X]]
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[E:.*]] = scf.if %[[P]] -> (tensor<4xf32>) {
// CHECK-NEXT:    "ember.print"(%[[X]])
// CHECK-NEXT:    scf.yield %[[X]]
// CHECK-NEXT:  } else {
// CHECK-NEXT:    scf.yield %[[X]]
// CHECK-NEXT:  }
// CHECK-NEXT:  return %[[R]]#0, %[[R]]#1
func.func @if_kept(%x: tensor<4xf32>, %p: i1) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = scf.if %p -> (tensor<4xf32>, tensor<4xf32>) {
    %n = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n, %x : tensor<4xf32>, tensor<4xf32>
  } else {
    scf.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  %effect = scf.if %p -> (tensor<4xf32>) {
    "ember.print"(%x) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<4xf32>) -> ()
    scf.yield %x : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  %dead = scf.if %p -> (tensor<4xf32>) {
    %e = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %e : tensor<4xf32>
  } else {
    %t = "ember.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Dead ops inside a loop body go; the loop stays because its result is used.
// STATS:       ember-dce:
// STATS-NEXT:    erased: 1
// CHECK-LABEL: func.func @loop_body(
// CHECK-SAME:    %[[X:.*]]: tensor<f32>, %[[UB:.*]]: index)
// CHECK:       scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[X]])
// CHECK-NEXT:    %[[A:.*]] = "ember.add"(%[[ACC]], %[[X]])
// CHECK-NEXT:    scf.yield %[[A]]
// CHECK-NEXT:  }
func.func @loop_body(%x: tensor<f32>, %ub: index) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %x) -> (tensor<f32>) {
    %unused = "ember.exp"(%acc) : (tensor<f32>) -> tensor<f32>
    %a = "ember.add"(%acc, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    scf.yield %a : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// Unused ops that may fail stay: an integer division (by zero?) and an add whose `?` dims
// are checked at run time. An unused add of static shapes cannot fail and goes.
// STATS:       ember-dce:
// STATS-NEXT:    erased: 1
// CHECK-LABEL: func.func @may_fail(
// CHECK:         "ember.floordiv"
// CHECK-NEXT:    "ember.add"(%{{.*}}, %{{.*}}) : (tensor<?xi32>, tensor<4xi32>)
// CHECK-NEXT:    return
func.func @may_fail(%x: tensor<4xi32>, %y: tensor<4xi32>, %z: tensor<?xi32>) -> tensor<4xi32> {
  %0 = "ember.floordiv"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = "ember.add"(%z, %x) : (tensor<?xi32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = "ember.add"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %x : tensor<4xi32>
}
