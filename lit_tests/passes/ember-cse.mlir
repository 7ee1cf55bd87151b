// ember-cse merges pure ops with the same name, operands (sorted for commutative ops),
// attributes and result types, where the earlier one dominates; it merges reads of a variable
// until something may write it, and never merges prints or assigns.

// RUN: ember-opt %s -p ember-cse --split-input-file | FileCheck %s
// RUN: ember-opt %s -p ember-cse --split-input-file --pass-statistics -o %t 2>&1 | FileCheck %s --check-prefix=STATS

// STATS:       ember-cse:
// STATS-NEXT:    eliminated: 2

// Duplicates merge, and so do their users once their operands agree.
// CHECK-LABEL: func.func @duplicates(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK:       %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:  %[[N:.*]] = "ember.neg"(%[[E]])
// CHECK-NEXT:  %[[S:.*]] = "ember.sub"(%[[N]], %[[N]])
// CHECK-NEXT:  return %[[S]]
func.func @duplicates(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "ember.neg"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "ember.sub"(%2, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// add and mul are commutative: swapped operands merge. sub is not.
// STATS:       ember-cse:
// STATS-NEXT:    eliminated: 2
// CHECK-LABEL: func.func @commutative(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<f32>)
// CHECK:       %[[A:.*]] = "ember.add"(%[[X]], %[[Y]])
// CHECK-NEXT:  %[[M:.*]] = "ember.mul"(%[[Y]], %[[X]])
// CHECK-NEXT:  %[[S1:.*]] = "ember.sub"(%[[X]], %[[Y]])
// CHECK-NEXT:  %[[S2:.*]] = "ember.sub"(%[[Y]], %[[X]])
// CHECK-NEXT:  return %[[A]], %[[A]], %[[M]], %[[M]], %[[S1]], %[[S2]]
func.func @commutative(%x: tensor<4xf32>, %y: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.add"(%x, %y) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = "ember.add"(%y, %x) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.mul"(%y, %x) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "ember.mul"(%x, %y) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = "ember.sub"(%x, %y) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %5 = "ember.sub"(%y, %x) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Different attributes (axes, dtype) keep both ops; equal ones merge.
// STATS:       ember-cse:
// STATS-NEXT:    eliminated: 1
// CHECK-LABEL: func.func @attributes(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>)
// CHECK:       %[[R0:.*]] = "ember.reduce_sum"(%[[X]]) {axes = array<i64: 0>, keepdims = false}
// CHECK-NEXT:  %[[R1:.*]] = "ember.reduce_sum"(%[[X]]) {axes = array<i64: 1>, keepdims = false}
// CHECK-NEXT:  %[[C0:.*]] = "ember.cast"(%[[X]]) {dtype = f16}
// CHECK-NEXT:  %[[C1:.*]] = "ember.cast"(%[[X]]) {dtype = bf16}
// CHECK-NEXT:  return %[[R0]], %[[R1]], %[[R0]], %[[C0]], %[[C1]]
func.func @attributes(%x: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>) {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
  %1 = "ember.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %2 = "ember.reduce_sum"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
  %3 = "ember.cast"(%x) {dtype = f16} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %4 = "ember.cast"(%x) {dtype = bf16} : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>
}

// -----

// Pure upstream ops merge too: constants, tensor.extract and tensor.cast.
// STATS:       ember-cse:
// STATS-NEXT:    eliminated: 4
// CHECK-LABEL: func.func @upstream(
// CHECK-SAME:    %[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<4xf32>)
// CHECK:       %[[C:.*]] = "ember.constant"() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT:  %[[B:.*]] = tensor.extract %[[P]][]
// CHECK-NEXT:  %[[D:.*]] = tensor.cast %[[X]] : tensor<4xf32> to tensor<?xf32>
// CHECK-NEXT:  %[[I:.*]] = arith.constant 0 : index
// CHECK-NEXT:  return %[[C]], %[[C]], %[[B]], %[[B]], %[[D]], %[[D]], %[[I]], %[[I]]
func.func @upstream(%p: tensor<i1>, %x: tensor<4xf32>) -> (tensor<f32>, tensor<f32>, i1, i1, tensor<?xf32>, tensor<?xf32>, index, index) {
  %c0 = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %c1 = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %b0 = tensor.extract %p[] : tensor<i1>
  %b1 = tensor.extract %p[] : tensor<i1>
  %d0 = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  %d1 = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 0 : index
  return %c0, %c1, %b0, %b1, %d0, %d1, %i0, %i1 : tensor<f32>, tensor<f32>, i1, i1, tensor<?xf32>, tensor<?xf32>, index, index
}

// -----

// An op before an scf.if is reused in its branches; an op inside a branch is reused neither
// in the other branch nor after the scf.if.
// STATS:       ember-cse:
// STATS-NEXT:    eliminated: 1
// CHECK-LABEL: func.func @regions(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[P:.*]]: i1)
// CHECK:       %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:  %[[R:.*]] = scf.if %[[P]]
// CHECK-NEXT:    %[[T:.*]] = "ember.tanh"(%[[X]])
// CHECK-NEXT:    %[[A:.*]] = "ember.add"(%[[E]], %[[T]])
// CHECK-NEXT:    scf.yield %[[A]]
// CHECK-NEXT:  } else {
// CHECK-NEXT:    %[[T2:.*]] = "ember.tanh"(%[[X]])
// CHECK-NEXT:    scf.yield %[[T2]]
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[T3:.*]] = "ember.tanh"(%[[X]])
// CHECK-NEXT:  return %[[R]], %[[T3]]
func.func @regions(%x: tensor<4xf32>, %p: i1) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %r = scf.if %p -> (tensor<4xf32>) {
    %e2 = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %t = "ember.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %a = "ember.add"(%e2, %t) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    %t2 = "ember.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %t2 : tensor<4xf32>
  }
  %t3 = "ember.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r, %t3 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Reads of one variable merge while nothing writes it; a write to another variable and a
// print do not get in the way.
// STATS:       ember-cse:
// STATS-NEXT:    eliminated: 2
// CHECK-LABEL: func.func @reads_merge(
// CHECK-SAME:    %[[V:.*]]: !ember.resource<tensor<4xf32>>, %[[W:.*]]: !ember.resource<tensor<4xf32>>, %[[X:.*]]: tensor<4xf32>)
// CHECK:       %[[R:.*]] = "ember.read_variable"(%[[V]])
// CHECK-NEXT:  "ember.assign_variable"(%[[W]], %[[X]])
// CHECK-NEXT:  "ember.print"(%[[R]])
// CHECK-NEXT:  return %[[R]], %[[R]], %[[R]]
func.func @reads_merge(%v: !ember.resource<tensor<4xf32>>, %w: !ember.resource<tensor<4xf32>>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.read_variable"(%v) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  "ember.assign_variable"(%w, %x) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
  %1 = "ember.read_variable"(%v) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  "ember.print"(%1) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<4xf32>) -> ()
  %2 = "ember.read_variable"(%v) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A write to the variable (directly, in an scf.if, or maybe by a call) separates two reads;
// reads after the write merge with each other.
// STATS:       ember-cse:
// STATS-NEXT:    eliminated: 1
// CHECK-LABEL: func.func @reads_split_by_writes(
// CHECK-SAME:    %[[V:.*]]: !ember.resource<tensor<4xf32>>, %[[X:.*]]: tensor<4xf32>, %[[P:.*]]: i1)
// CHECK:       %[[R0:.*]] = "ember.read_variable"(%[[V]])
// CHECK-NEXT:  "ember.assign_add_variable"(%[[V]], %[[X]])
// CHECK-NEXT:  %[[R1:.*]] = "ember.read_variable"(%[[V]])
// CHECK-NEXT:  scf.if %[[P]] {
// CHECK-NEXT:    "ember.assign_variable"(%[[V]], %[[X]])
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[R2:.*]] = "ember.read_variable"(%[[V]])
// CHECK-NEXT:  call @opaque()
// CHECK-NEXT:  %[[R3:.*]] = "ember.read_variable"(%[[V]])
// CHECK-NEXT:  return %[[R0]], %[[R1]], %[[R1]], %[[R2]], %[[R3]]
func.func private @opaque()
func.func @reads_split_by_writes(%v: !ember.resource<tensor<4xf32>>, %x: tensor<4xf32>, %p: i1) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.read_variable"(%v) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  "ember.assign_add_variable"(%v, %x) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
  %1 = "ember.read_variable"(%v) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  %2 = "ember.read_variable"(%v) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  scf.if %p {
    "ember.assign_variable"(%v, %x) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
  }
  %3 = "ember.read_variable"(%v) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  func.call @opaque() : () -> ()
  %4 = "ember.read_variable"(%v) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A loop whose body writes the variable: the read inside is not the read before the loop
// (the next iteration sees the write), but a pure op before the loop is still reused.
// STATS:       ember-cse:
// STATS-NEXT:    eliminated: 1
// CHECK-LABEL: func.func @read_in_writing_loop(
// CHECK-SAME:    %[[V:.*]]: !ember.resource<tensor<f32>>, %[[X:.*]]: tensor<f32>)
// CHECK:       %[[R0:.*]] = "ember.read_variable"(%[[V]])
// CHECK-NEXT:  %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:  scf.while
// CHECK-NEXT:    %[[R1:.*]] = "ember.read_variable"(%[[V]])
// CHECK-NEXT:    %[[L:.*]] = "ember.less"(%[[R1]], %[[E]])
// CHECK:       } do {
// CHECK-NEXT:    "ember.assign_add_variable"(%[[V]], %[[X]])
// CHECK-NEXT:    scf.yield
// CHECK:       return %[[R0]]
func.func @read_in_writing_loop(%v: !ember.resource<tensor<f32>>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "ember.read_variable"(%v) : (!ember.resource<tensor<f32>>) -> tensor<f32>
  %e = "ember.exp"(%x) : (tensor<f32>) -> tensor<f32>
  scf.while : () -> () {
    %1 = "ember.read_variable"(%v) : (!ember.resource<tensor<f32>>) -> tensor<f32>
    %e2 = "ember.exp"(%x) : (tensor<f32>) -> tensor<f32>
    %l = "ember.less"(%1, %e2) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c = tensor.extract %l[] : tensor<i1>
    scf.condition(%c)
  } do {
    "ember.assign_add_variable"(%v, %x) : (!ember.resource<tensor<f32>>, tensor<f32>) -> ()
    scf.yield
  }
  return %0 : tensor<f32>
}

// -----

// Effects never merge: both prints and both assigns stay.
// STATS-NOT:   eliminated
// CHECK-LABEL: func.func @effects(
// CHECK-SAME:    %[[V:.*]]: !ember.resource<tensor<4xf32>>, %[[X:.*]]: tensor<4xf32>)
// CHECK:       "ember.print"(%[[X]])
// CHECK-NEXT:  "ember.print"(%[[X]])
// CHECK-NEXT:  "ember.assign_add_variable"(%[[V]], %[[X]])
// CHECK-NEXT:  "ember.assign_add_variable"(%[[V]], %[[X]])
// CHECK-NEXT:  return
func.func @effects(%v: !ember.resource<tensor<4xf32>>, %x: tensor<4xf32>) {
  "ember.print"(%x) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<4xf32>) -> ()
  "ember.print"(%x) {format = "{}", end = "\0A", stream = "stdout", summarize = 3 : i64} : (tensor<4xf32>) -> ()
  "ember.assign_add_variable"(%v, %x) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
  "ember.assign_add_variable"(%v, %x) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
  return
}
