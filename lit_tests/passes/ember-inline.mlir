// ember-inline replaces calls of defined functions by their bodies, erases the private callees
// left without calls, and never inlines declarations (host callbacks) or recursion.

// RUN: ember-opt %s --split-input-file -p ember-inline | FileCheck %s
// RUN: ember-opt %s --split-input-file -p 'ember-inline{max-ops=2}' | FileCheck %s --check-prefix=SMALL
// RUN: ember-opt %s --split-input-file -p ember-inline --pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// A private callee with one call site: inlined, then erased.
// CHECK-LABEL: func.func @private_callee(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:    %[[N:.*]] = "ember.neg"(%[[E]])
// CHECK-NEXT:    return %[[N]]
// CHECK-NOT:   func.func private @g
// Statistics of the first five cases: the declaration and the recursion print none.
// STATS:       ember-inline:
// STATS-NEXT:    functions-erased: 1
// STATS-NEXT:    inlined: 1
// STATS-NEXT:  ember-inline:
// STATS-NEXT:    inlined: 2
// STATS-NEXT:  ember-inline:
// STATS-NEXT:    functions-erased: 1
// STATS-NEXT:    inlined: 2
func.func private @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @private_callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A public callee (a nested em.function) is inlined at every small call site but kept:
// code outside the module may call it.
// CHECK-LABEL: func.func @public_g(
// CHECK:         "ember.mul"
// CHECK-LABEL: func.func @public_callee(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:     call
// CHECK:         %[[A:.*]] = "ember.mul"(%[[X]], %[[X]])
// CHECK-NEXT:    %[[B:.*]] = "ember.mul"(%[[A]], %[[A]])
// CHECK-NEXT:    return %[[B]]
func.func @public_g(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.mul"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @public_callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @public_g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @public_g(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A host callback is a bodiless private declaration: never inlined, never erased.
// CHECK-LABEL: func.func private @callback(tensor<4xf32>) -> tensor<4xf32>
// CHECK-LABEL: func.func @declaration(
// CHECK:         %[[R:.*]] = call @callback(
// CHECK-NEXT:    return %[[R]]
func.func private @callback(tensor<4xf32>) -> tensor<4xf32>
func.func @declaration(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @callback(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Recursion, direct or mutual, is never inlined (it would never end).
// CHECK-LABEL: func.func private @self(
// CHECK:         call @self(
// CHECK-LABEL: func.func private @ping(
// CHECK:         call @pong(
// CHECK-LABEL: func.func private @pong(
// CHECK:         call @ping(
// CHECK-LABEL: func.func @recursion(
// CHECK-NEXT:    %[[A:.*]] = call @self(
// CHECK-NEXT:    %[[B:.*]] = call @ping(%[[A]])
// CHECK-NEXT:    return %[[B]]
func.func private @self(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @self(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @ping(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @pong(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @pong(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @ping(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @recursion(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @self(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @ping(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A callee bigger than max-ops (3 ops > 2) with two call sites stays a call; with the default
// max-ops it is inlined at both.
// CHECK-LABEL: func.func @big_callee(
// CHECK-NOT:     call
// CHECK-COUNT-4: "ember.exp"
// CHECK-NOT:   func.func private @big
// SMALL-LABEL: func.func private @big(
// SMALL-LABEL: func.func @big_callee(
// SMALL-NEXT:    call @big(
// SMALL-NEXT:    call @big(
func.func private @big(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func @big_callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @big(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @big(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A big callee with exactly one call site is inlined anyway: no code is duplicated.
// SMALL-LABEL: func.func @single_site(
// SMALL-NOT:     call
// SMALL-COUNT-2: "ember.exp"
// SMALL-NOT:   func.func private @big_once
func.func private @big_once(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func @single_site(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @big_once(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Calls nested in calls are inlined transitively, also inside scf regions, and a callee with
// several results maps each result to its returned value.
// CHECK-LABEL: func.func @nested(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[P:.*]]: i1)
// CHECK-NEXT:    %[[R:.*]] = scf.if %[[P]]
// CHECK-NEXT:      %[[S:.*]] = "ember.sin"(%[[X]])
// CHECK-NEXT:      %[[C:.*]] = "ember.cos"(%[[X]])
// CHECK-NEXT:      %[[A:.*]] = "ember.add"(%[[C]], %[[S]])
// CHECK-NEXT:      scf.yield %[[A]]
// CHECK:         return %[[R]]
// CHECK-NOT:   func.func private
func.func private @leaf(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.sin"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.cos"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
func.func private @mid(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = call @leaf(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %1 = "ember.add"(%0#1, %0#0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func @nested(%x: tensor<4xf32>, %p: i1) -> tensor<4xf32> {
  %r = scf.if %p -> (tensor<4xf32>) {
    %0 = func.call @mid(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %0 : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A private function that was never called is not this pass's business (symbol-dce's).
// CHECK-LABEL: func.func private @unused(
// CHECK-LABEL: func.func @untouched(
func.func private @unused(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func @untouched(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
