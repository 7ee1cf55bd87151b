// ember-licm hoists pure, loop-invariant ops that cannot fail out of scf.while (both regions)
// and scf.for, innermost loops first; effects, reads of variables the loop writes, ops that
// may fail and ops with regions stay in the loop.

// RUN: ember-opt %s -p ember-licm --split-input-file | FileCheck %s
// RUN: ember-opt %s -p ember-licm --split-input-file --pass-statistics -o %t 2>&1 | FileCheck %s --check-prefix=STATS

// The `do` region of an scf.while: exp(x) moves out, the add of the loop value stays, and
// so does the op that uses it.
// STATS:       ember-licm:
// STATS-NEXT:    hoisted: 2
// CHECK-LABEL: func.func @while_body(
// CHECK-SAME:    %[[N:.*]]: tensor<f32>, %[[X:.*]]: tensor<f32>)
// CHECK:       %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:  %[[T:.*]] = "ember.tanh"(%[[E]])
// CHECK-NEXT:  scf.while (%[[I:.*]] = %[[X]])
// CHECK:       } do {
// CHECK-NEXT:  ^bb0(%[[J:.*]]: tensor<f32>):
// CHECK-NEXT:    %[[A:.*]] = "ember.add"(%[[J]], %[[T]])
// CHECK-NEXT:    %[[M:.*]] = "ember.mul"(%[[A]], %[[E]])
// CHECK-NEXT:    scf.yield %[[M]]
func.func @while_body(%n: tensor<f32>, %x: tensor<f32>) -> tensor<f32> {
  %r = scf.while (%i = %x) : (tensor<f32>) -> tensor<f32> {
    %l = "ember.less"(%i, %n) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c = tensor.extract %l[] : tensor<i1>
    scf.condition(%c) %i : tensor<f32>
  } do {
  ^bb0(%j: tensor<f32>):
    %e = "ember.exp"(%x) : (tensor<f32>) -> tensor<f32>
    %t = "ember.tanh"(%e) : (tensor<f32>) -> tensor<f32>
    %a = "ember.add"(%j, %t) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %m = "ember.mul"(%a, %e) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    scf.yield %m : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// The condition region of an scf.while: the bound's computation moves out, and a constant
// too; the comparison with the loop value stays.
// STATS:       ember-licm:
// STATS-NEXT:    hoisted: 2
// CHECK-LABEL: func.func @while_condition(
// CHECK-SAME:    %[[N:.*]]: tensor<i32>, %[[X:.*]]: tensor<i32>)
// CHECK:       %[[TWO:.*]] = "ember.constant"()
// CHECK-NEXT:  %[[B:.*]] = "ember.mul"(%[[N]], %[[TWO]])
// CHECK-NEXT:  scf.while (%[[I:.*]] = %[[X]])
// CHECK-NEXT:    %[[L:.*]] = "ember.less"(%[[I]], %[[B]])
// CHECK-NEXT:    %[[C:.*]] = tensor.extract %[[L]][]
// CHECK-NEXT:    scf.condition(%[[C]])
func.func @while_condition(%n: tensor<i32>, %x: tensor<i32>) -> tensor<i32> {
  %r = scf.while (%i = %x) : (tensor<i32>) -> tensor<i32> {
    %two = "ember.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
    %b = "ember.mul"(%n, %two) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %l = "ember.less"(%i, %b) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c = tensor.extract %l[] : tensor<i1>
    scf.condition(%c) %i : tensor<i32>
  } do {
  ^bb0(%j: tensor<i32>):
    %k = "ember.add"(%j, %n) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    scf.yield %k : tensor<i32>
  }
  return %r : tensor<i32>
}

// -----

// scf.for: the induction variable and the iteration value are variant, exp(x) is not.
// STATS:       ember-licm:
// STATS-NEXT:    hoisted: 1
// CHECK-LABEL: func.func @for_body(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[INIT:.*]]: tensor<4xf32>, %[[UB:.*]]: index)
// CHECK:       %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:  %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:  %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:  scf.for %[[I:.*]] = %[[C0]] to %[[UB]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK-NEXT:    %[[CI:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT:    %[[N:.*]] = "ember.add"(%[[ACC]], %[[E]])
// CHECK-NEXT:    scf.yield %[[N]]
func.func @for_body(%x: tensor<4xf32>, %init: tensor<4xf32>, %ub: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %init) -> (tensor<4xf32>) {
    %ci = arith.index_cast %i : index to i64
    %e = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %n = "ember.add"(%acc, %e) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Nested loops: exp(x) leaves both loops, neg(acc) leaves the inner loop only (it uses the
// outer loop's value), and add(inner, e) stays in the inner loop.
// STATS:       ember-licm:
// STATS-NEXT:    hoisted: 3
// CHECK-LABEL: func.func @nested(
// CHECK-SAME:    %[[X:.*]]: tensor<f32>, %[[UB:.*]]: index)
// CHECK:       %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:  scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[X]])
// CHECK-NEXT:    %[[NEG:.*]] = "ember.neg"(%[[ACC]])
// CHECK-NEXT:    scf.for {{.*}} iter_args(%[[IN:.*]] = %[[ACC]])
// CHECK-NEXT:      %[[A:.*]] = "ember.add"(%[[IN]], %[[E]])
// CHECK-NEXT:      %[[B:.*]] = "ember.add"(%[[A]], %[[NEG]])
// CHECK-NEXT:      scf.yield %[[B]]
func.func @nested(%x: tensor<f32>, %ub: index) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %x) -> (tensor<f32>) {
    %s = scf.for %j = %c0 to %ub step %c1 iter_args(%in = %acc) -> (tensor<f32>) {
      %e = "ember.exp"(%x) : (tensor<f32>) -> tensor<f32>
      %neg = "ember.neg"(%acc) : (tensor<f32>) -> tensor<f32>
      %a = "ember.add"(%in, %e) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %b = "ember.add"(%a, %neg) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      scf.yield %b : tensor<f32>
    }
    scf.yield %s : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// Effects stay in the loop even with invariant operands: print, assign, a call. A pure op
// using their neighbours' invariant values still moves.
// STATS:       ember-licm:
// STATS-NEXT:    hoisted: 1
// CHECK-LABEL: func.func @effects_stay(
// CHECK-SAME:    %[[V:.*]]: !ember.resource<tensor<f32>>, %[[X:.*]]: tensor<f32>, %[[UB:.*]]: index)
// CHECK:       %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:  scf.for
// CHECK-NEXT:    "ember.print"(%[[E]])
// CHECK-NEXT:    "ember.assign_variable"(%[[V]], %[[E]])
// CHECK-NEXT:    call @opaque()
// CHECK-NEXT:  }
func.func private @opaque()
func.func @effects_stay(%v: !ember.resource<tensor<f32>>, %x: tensor<f32>, %ub: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %ub step %c1 {
    %e = "ember.exp"(%x) : (tensor<f32>) -> tensor<f32>
    "ember.print"(%e) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<f32>) -> ()
    "ember.assign_variable"(%v, %e) : (!ember.resource<tensor<f32>>, tensor<f32>) -> ()
    func.call @opaque() : () -> ()
  }
  return
}

// -----

// A read of a variable the loop writes stays; a read of one it does not write moves.
// STATS:       ember-licm:
// STATS-NEXT:    hoisted: 1
// CHECK-LABEL: func.func @reads(
// CHECK-SAME:    %[[V:.*]]: !ember.resource<tensor<f32>>, %[[W:.*]]: !ember.resource<tensor<f32>>, %[[UB:.*]]: index)
// CHECK:       %[[RW:.*]] = "ember.read_variable"(%[[W]])
// CHECK-NEXT:  scf.for
// CHECK-NEXT:    %[[RV:.*]] = "ember.read_variable"(%[[V]])
// CHECK-NEXT:    %[[S:.*]] = "ember.add"(%[[RV]], %[[RW]])
// CHECK-NEXT:    "ember.assign_variable"(%[[V]], %[[S]])
func.func @reads(%v: !ember.resource<tensor<f32>>, %w: !ember.resource<tensor<f32>>, %ub: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %ub step %c1 {
    %rv = "ember.read_variable"(%v) : (!ember.resource<tensor<f32>>) -> tensor<f32>
    %rw = "ember.read_variable"(%w) : (!ember.resource<tensor<f32>>) -> tensor<f32>
    %s = "ember.add"(%rv, %rw) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "ember.assign_variable"(%v, %s) : (!ember.resource<tensor<f32>>, tensor<f32>) -> ()
  }
  return
}

// -----

// A call may write any variable: no read leaves a loop that has one.
// STATS-NOT:   hoisted
// CHECK-LABEL: func.func @read_with_call(
// CHECK:       scf.for
// CHECK-NEXT:    "ember.read_variable"
// CHECK-NEXT:    "ember.print"
// CHECK-NEXT:    call @opaque()
func.func private @opaque()
func.func @read_with_call(%w: !ember.resource<tensor<f32>>, %ub: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %ub step %c1 {
    %rw = "ember.read_variable"(%w) : (!ember.resource<tensor<f32>>) -> tensor<f32>
    "ember.print"(%rw) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<f32>) -> ()
    func.call @opaque() : () -> ()
  }
  return
}

// -----

// Ops that may fail stay, since the loop may run zero times: integer floordiv and mod by an
// invariant but unknown divisor, integer pow with an unknown exponent, gather. Integer
// floordiv by a non-zero constant and float div (no error on zero) move.
// STATS:       ember-licm:
// STATS-NEXT:    hoisted: 3
// CHECK-LABEL: func.func @may_fail(
// CHECK-SAME:    %[[A:.*]]: tensor<4xi32>, %[[D:.*]]: tensor<4xi32>, %[[F:.*]]: tensor<4xf32>, %[[IDX:.*]]: tensor<2xi64>, %[[UB:.*]]: index)
// CHECK:       %[[THREE:.*]] = "ember.constant"()
// CHECK-NEXT:  %[[Q:.*]] = "ember.floordiv"(%[[A]], %[[THREE]])
// CHECK-NEXT:  %[[FD:.*]] = "ember.div"(%[[F]], %[[F]])
// CHECK-NEXT:  scf.for
// CHECK-NEXT:    "ember.floordiv"(%[[A]], %[[D]])
// CHECK-NEXT:    "ember.mod"(%[[A]], %[[D]])
// CHECK-NEXT:    "ember.pow"(%[[A]], %[[D]])
// CHECK-NEXT:    "ember.gather"(%[[F]], %[[IDX]])
// CHECK-NEXT:    "ember.print"(%[[Q]])
// CHECK-NEXT:    "ember.print"(%[[FD]])
func.func @may_fail(%a: tensor<4xi32>, %d: tensor<4xi32>, %f: tensor<4xf32>, %idx: tensor<2xi64>, %ub: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %ub step %c1 {
    %three = "ember.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
    %q = "ember.floordiv"(%a, %three) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
    %fd = "ember.div"(%f, %f) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %q2 = "ember.floordiv"(%a, %d) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %m = "ember.mod"(%a, %d) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %p = "ember.pow"(%a, %d) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %g = "ember.gather"(%f, %idx) {axis = 0 : i64} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xf32>
    "ember.print"(%q) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<4xi32>) -> ()
    "ember.print"(%fd) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<4xf32>) -> ()
    "ember.print"(%q2) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<4xi32>) -> ()
    "ember.print"(%m) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<4xi32>) -> ()
    "ember.print"(%p) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<4xi32>) -> ()
    "ember.print"(%g) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<2xf32>) -> ()
  }
  return
}

// -----

// Ops with regions stay, and so do the ops inside them (moving those would run them when the
// branch is not taken).
// STATS-NOT:   hoisted
// CHECK-LABEL: func.func @regions_stay(
// CHECK:       scf.for
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      "ember.exp"
// CHECK:         } else {
// CHECK-NEXT:      "ember.tanh"
func.func @regions_stay(%x: tensor<f32>, %p: i1, %ub: index) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %x) -> (tensor<f32>) {
    %y = scf.if %p -> (tensor<f32>) {
      %e = "ember.exp"(%x) : (tensor<f32>) -> tensor<f32>
      scf.yield %e : tensor<f32>
    } else {
      %t = "ember.tanh"(%x) : (tensor<f32>) -> tensor<f32>
      scf.yield %t : tensor<f32>
    }
    %s = "ember.add"(%acc, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    scf.yield %s : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// Shapes only run time knows: x + y of two dynamic vectors may fail to broadcast, so it stays
// in a body that may never run (and so does the reduction of its result); x + s with a
// scalar s cannot fail and moves, and so does its reduction.
// STATS:       ember-licm:
// STATS-NEXT:    hoisted: 2
// CHECK-LABEL: func.func @dynamic_broadcast(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32>, %[[Y:.*]]: tensor<?xf32>, %[[S:.*]]: tensor<f32>, %[[N:.*]]: tensor<f32>)
// CHECK:       %[[XS:.*]] = "ember.add"(%[[X]], %[[S]])
// CHECK-NEXT:  "ember.reduce_sum"(%[[XS]])
// CHECK-NEXT:  scf.while
// CHECK:       } do {
// CHECK-NEXT:  ^bb0(%[[J:.*]]: tensor<f32>):
// CHECK-NEXT:    %[[XY:.*]] = "ember.add"(%[[X]], %[[Y]])
// CHECK-NEXT:    "ember.reduce_sum"(%[[XY]])
func.func @dynamic_broadcast(%x: tensor<?xf32>, %y: tensor<?xf32>, %s: tensor<f32>, %n: tensor<f32>) -> tensor<f32> {
  %r = scf.while (%i = %n) : (tensor<f32>) -> tensor<f32> {
    %l = "ember.less"(%i, %n) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c = tensor.extract %l[] : tensor<i1>
    scf.condition(%c) %i : tensor<f32>
  } do {
  ^bb0(%j: tensor<f32>):
    %xy = "ember.add"(%x, %y) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    %sum = "ember.reduce_sum"(%xy) {axes = array<i64: 0>, keepdims = false} : (tensor<?xf32>) -> tensor<f32>
    %xs = "ember.add"(%x, %s) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
    %sum2 = "ember.reduce_sum"(%xs) {axes = array<i64: 0>, keepdims = false} : (tensor<?xf32>) -> tensor<f32>
    %a = "ember.add"(%j, %sum) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %b = "ember.add"(%a, %sum2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    scf.yield %b : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// A region entered whenever its loop is (the condition of an scf.while, the body of an
// scf.for with constant bounds and an iteration) gives up an op that may fail while nothing
// staying before it may fail or has an effect: the gathers at the top move (with the sum
// of one), the one after the print stays (it must not fail before the print has run).
// STATS:       ember-licm:
// STATS-NEXT:    hoisted: 3
// CHECK-LABEL: func.func @entered_with_the_loop(
// CHECK-SAME:    %[[F:.*]]: tensor<4xf32>, %[[IDX:.*]]: tensor<2xi64>, %[[N:.*]]: tensor<f32>)
// CHECK:       %[[G0:.*]] = "ember.gather"(%[[F]], %[[IDX]])
// CHECK-NEXT:  %[[S:.*]] = "ember.reduce_sum"(%[[G0]])
// CHECK-NEXT:  scf.while
// CHECK-NEXT:    "ember.less"(%{{.*}}, %[[S]])
// CHECK:       %[[G1:.*]] = "ember.gather"(%[[F]], %[[IDX]])
// CHECK-NEXT:  scf.for
// CHECK-NEXT:    "ember.print"(%[[G1]])
// CHECK-NEXT:    %[[G2:.*]] = "ember.gather"(%[[F]], %[[IDX]])
// CHECK-NEXT:    "ember.print"(%[[G2]])
func.func @entered_with_the_loop(%f: tensor<4xf32>, %idx: tensor<2xi64>, %n: tensor<f32>) {
  %r = scf.while (%i = %n) : (tensor<f32>) -> tensor<f32> {
    %g0 = "ember.gather"(%f, %idx) {axis = 0 : i64} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xf32>
    %s = "ember.reduce_sum"(%g0) {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
    %l = "ember.less"(%i, %s) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c = tensor.extract %l[] : tensor<i1>
    scf.condition(%c) %i : tensor<f32>
  } do {
  ^bb0(%j: tensor<f32>):
    scf.yield %n : tensor<f32>
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %k = %c0 to %c3 step %c1 {
    %g1 = "ember.gather"(%f, %idx) {axis = 0 : i64} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xf32>
    "ember.print"(%g1) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<2xf32>) -> ()
    %g2 = "ember.gather"(%f, %idx) {axis = 0 : i64} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xf32>
    "ember.print"(%g2) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<2xf32>) -> ()
  }
  return
}

// -----

// An scf.for whose bounds give no iteration (or are not known) runs its body maybe never:
// the gather stays.
// STATS-NOT:   hoisted
// CHECK-LABEL: func.func @empty_range(
// CHECK:       scf.for
// CHECK-NEXT:    "ember.gather"
func.func @empty_range(%f: tensor<4xf32>, %idx: tensor<2xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %k = %c1 to %c0 step %c1 {
    %g = "ember.gather"(%f, %idx) {axis = 0 : i64} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xf32>
    "ember.print"(%g) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<2xf32>) -> ()
  }
  return
}
