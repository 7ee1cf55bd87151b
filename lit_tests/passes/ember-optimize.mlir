// ember-optimize runs ember-canonicalize, ember-constant-fold, ember-cse, ember-licm and
// ember-dce to a fixed point; effects (variable writes, prints, host calls) stay, in order.

// RUN: ember-opt %s --split-input-file -p ember-optimize | FileCheck %s
// RUN: ember-opt %s --split-input-file -p 'ember-optimize{max-iterations=1}' | FileCheck %s --check-prefix=ONCE
// RUN: ember-opt %s --split-input-file -p ember-optimize --pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// Folding makes the two adds equal; CSE merges them; DCE sweeps the rest.
// CHECK-LABEL: func.func @fold_and_merge(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[C:.*]] = "ember.constant"() {value = dense<4.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[A:.*]] = "ember.add"(%[[X]], %[[C]])
// CHECK-NEXT:    %[[M:.*]] = "ember.mul"(%[[A]], %[[A]])
// CHECK-NEXT:    return %[[M]]
// STATS:       ember-optimize:
// STATS-NEXT:    ember-constant-fold.folded: 1
// STATS-NEXT:    ember-cse.eliminated: 1
// STATS:         iterations: 2
func.func @fold_and_merge(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "ember.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "ember.mul"(%c, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "ember.add"(%x, %0) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = "ember.add"(%x, %0) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = "ember.mul"(%1, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// Integer identities vanish: add(x, 0), mul(x, 1), neg(neg(x)).
// CHECK-LABEL: func.func @identities(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi32>)
// CHECK-NEXT:    return %[[X]]
func.func @identities(%x: tensor<4xi32>) -> tensor<4xi32> {
  %zero = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %one = "ember.constant"() {value = dense<1> : tensor<4xi32>} : () -> tensor<4xi32>
  %0 = "ember.add"(%x, %zero) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %1 = "ember.mul"(%one, %0) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = "ember.neg"(%1) : (tensor<4xi32>) -> tensor<4xi32>
  %3 = "ember.neg"(%2) : (tensor<4xi32>) -> tensor<4xi32>
  return %3 : tensor<4xi32>
}

// -----

// Effects are kept, in order, even when their results are unused or they look alike; a read
// after a write is not merged with the read before it; the pure work around them goes.
// CHECK-LABEL: func.func @effects(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[R:.*]]: !ember.resource<tensor<4xf32>>)
// CHECK-NEXT:    %[[V1:.*]] = "ember.read_variable"(%[[R]])
// CHECK-NEXT:    "ember.print"(%[[V1]])
// CHECK-NEXT:    "ember.assign_add_variable"(%[[R]], %[[X]])
// CHECK-NEXT:    %[[V2:.*]] = "ember.read_variable"(%[[R]])
// CHECK-NEXT:    "ember.print"(%[[V2]])
// CHECK-NEXT:    "ember.print"(%[[V2]])
// CHECK-NEXT:    %[[S:.*]] = call @host(%[[X]])
// CHECK-NEXT:    call @host(%[[X]])
// CHECK-NEXT:    return %[[S]]
func.func private @host(tensor<4xf32>) -> tensor<4xf32>
func.func @effects(%x: tensor<4xf32>, %r: !ember.resource<tensor<4xf32>>) -> tensor<4xf32> {
  %v1 = "ember.read_variable"(%r) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  "ember.print"(%v1) {end = "\0A", format = "{}", stream = "stderr", summarize = 3 : i64} : (tensor<4xf32>) -> ()
  %dead = "ember.exp"(%v1) : (tensor<4xf32>) -> tensor<4xf32>
  "ember.assign_add_variable"(%r, %x) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
  %v2 = "ember.read_variable"(%r) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  "ember.print"(%v2) {end = "\0A", format = "{}", stream = "stderr", summarize = 3 : i64} : (tensor<4xf32>) -> ()
  "ember.print"(%v2) {end = "\0A", format = "{}", stream = "stderr", summarize = 3 : i64} : (tensor<4xf32>) -> ()
  %s = call @host(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %t = call @host(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Loop-invariant work leaves the loop (folded where it is constant); the counter stays.
// CHECK-LABEL: func.func @loop(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[N:.*]]: tensor<i32>)
// CHECK-DAG:     %[[ONE:.*]] = "ember.constant"() {value = dense<1> : tensor<i32>}
// CHECK-DAG:     %[[ZERO:.*]] = "ember.constant"() {value = dense<0> : tensor<i32>}
// CHECK-DAG:     %[[H:.*]] = "ember.constant"() {value = dense<1.500000e+00> : tensor<f32>}
// CHECK-DAG:     %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-DAG:     %[[I:.*]] = "ember.mul"(%[[E]], %[[H]])
// CHECK:         scf.while
// CHECK:           "ember.less"
// CHECK:         } do {
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<i32>, %[[ACC:.*]]: tensor<4xf32>):
// CHECK-NEXT:      "ember.add"(%{{.*}}, %[[ONE]])
// CHECK-NEXT:      "ember.add"(%[[ACC]], %[[I]])
// CHECK-NEXT:      scf.yield
func.func @loop(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %zero = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:2 = scf.while (%i = %zero, %acc = %x) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {
    %lt = "ember.less"(%i, %n) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %p = tensor.extract %lt[] : tensor<i1>
    scf.condition(%p) %i, %acc : tensor<i32>, tensor<4xf32>
  } do {
  ^bb0(%i: tensor<i32>, %acc: tensor<4xf32>):
    %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %next = "ember.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %a = "ember.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %b = "ember.constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
    %h = "ember.mul"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %e = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %inv = "ember.mul"(%e, %h) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %new = "ember.add"(%acc, %inv) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %next, %new : tensor<i32>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}

// -----

// A predicate that folds to a constant selects a branch, but only in the second round:
// folding comes after canonicalisation in each round. One round leaves the scf.if.
// CHECK-LABEL: func.func @constant_branch(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[S:.*]] = "ember.sin"(%[[X]])
// CHECK-NEXT:    return %[[S]]
// ONCE-LABEL:  func.func @constant_branch(
// ONCE:          scf.if
// STATS:       ember-optimize:
// STATS:         iterations: 3
func.func @constant_branch(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = "ember.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %b = "ember.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %lt = "ember.less"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %p = tensor.extract %lt[] : tensor<i1>
  %r = scf.if %p -> (tensor<4xf32>) {
    %s = "ember.sin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  } else {
    %c = "ember.cos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Float identities that are wrong for NaN, inf or -0.0 are not applied.
// CHECK-LABEL: func.func @float_care(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-DAG:     %[[Z:.*]] = "ember.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-DAG:     %[[M:.*]] = "ember.mul"(%[[X]], %[[Z]])
// CHECK-DAG:     %[[S:.*]] = "ember.sub"(%[[X]], %[[X]])
// CHECK-DAG:     %[[A:.*]] = "ember.add"(%[[X]], %[[Z]])
// CHECK:         return %[[M]], %[[S]], %[[A]]
func.func @float_care(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %z = "ember.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %m = "ember.mul"(%x, %z) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %s = "ember.sub"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = "ember.add"(%x, %z) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %m, %s, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Optimal IR is a fixed point after one round, and stays as it is.
// CHECK-LABEL: func.func @already_optimal(
// CHECK-NEXT:    "ember.tanh"
// CHECK-NEXT:    return
// STATS:       ember-optimize:
// STATS-NEXT:    iterations: 1
func.func @already_optimal(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
