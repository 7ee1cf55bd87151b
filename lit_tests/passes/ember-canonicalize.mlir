// ember-canonicalize applies algebraic identities and folds control flow on constant
// predicates, to a fixed point. Every replacement keeps the exact result type. Identities that
// are wrong for some floats (NaN, inf, -0.0) are applied to integers only.

// RUN: ember-opt %s -p ember-canonicalize --split-input-file | FileCheck %s
// RUN: ember-opt %s -p ember-constant-fold,ember-canonicalize --split-input-file | FileCheck %s --check-prefix=FOLD

// add(x, 0) -> x on integers, with the constant on either side (add commutes); mul(x, 1) -> x,
// sub(x, 0) -> x. The constants left unused are erased.
// CHECK-LABEL: func.func @integer_identities(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi32>)
// CHECK-NOT:     "ember.
// CHECK:         return %[[X]], %[[X]], %[[X]], %[[X]] :
func.func @integer_identities(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %zero = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %one = "ember.constant"() {value = dense<1> : tensor<4xi32>} : () -> tensor<4xi32>
  %a = "ember.add"(%x, %zero) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %b = "ember.add"(%zero, %x) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
  %c = "ember.mul"(%one, %x) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %d = "ember.sub"(%x, %zero) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  return %a, %b, %c, %d : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// mul(x, 0) -> 0 and sub(x, x) -> 0 hold for integers.
// CHECK-LABEL: func.func @integer_zeros(
// CHECK-NOT:     "ember.mul"
// CHECK-NOT:     "ember.sub"
// CHECK-DAG:     %[[Z1:.*]] = "ember.constant"() {value = dense<0> : tensor<4xi64>}
// CHECK-DAG:     %[[Z2:.*]] = "ember.constant"() {value = dense<0> : tensor<4xi64>}
// CHECK:         return %[[Z1]], %[[Z2]] :
func.func @integer_zeros(%x: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %zero = "ember.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %a = "ember.mul"(%zero, %x) : (tensor<i64>, tensor<4xi64>) -> tensor<4xi64>
  %b = "ember.sub"(%x, %x) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %a, %b : tensor<4xi64>, tensor<4xi64>
}

// -----

// Negative: on floats x * 0 is not 0 (NaN * 0 and inf * 0 are NaN), x - x is not 0
// (inf - inf is NaN), x + 0.0 is not x (-0.0 + 0.0 is +0.0) and x - (-0.0) is not x.
// CHECK-LABEL: func.func @float_identities_not_applied(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[A:.*]] = "ember.mul"(%[[X]], %{{.*}})
// CHECK:         %[[B:.*]] = "ember.sub"(%[[X]], %[[X]])
// CHECK:         %[[C:.*]] = "ember.add"(%[[X]], %{{.*}})
// CHECK:         %[[D:.*]] = "ember.sub"(%[[X]], %{{.*}})
// CHECK:         return %[[A]], %[[B]], %[[C]], %[[D]] :
func.func @float_identities_not_applied(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = "ember.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %negzero = "ember.constant"() {value = dense<-0.0> : tensor<f32>} : () -> tensor<f32>
  %a = "ember.mul"(%x, %zero) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = "ember.sub"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = "ember.add"(%x, %zero) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %d = "ember.sub"(%x, %negzero) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %a, %b, %c, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// The float identities that are exact: x + (-0.0), x - (+0.0), x * 1 (either side), x / 1.
// CHECK-LABEL: func.func @float_identities(
// CHECK-SAME:    %[[X:.*]]: tensor<2xbf16>)
// CHECK-NOT:     "ember.
// CHECK:         return %[[X]], %[[X]], %[[X]], %[[X]] :
func.func @float_identities(%x: tensor<2xbf16>) -> (tensor<2xbf16>, tensor<2xbf16>, tensor<2xbf16>, tensor<2xbf16>) {
  %zero = "ember.constant"() {value = dense<0.0> : tensor<bf16>} : () -> tensor<bf16>
  %negzero = "ember.constant"() {value = dense<-0.0> : tensor<bf16>} : () -> tensor<bf16>
  %one = "ember.constant"() {value = dense<1.0> : tensor<bf16>} : () -> tensor<bf16>
  %a = "ember.add"(%negzero, %x) : (tensor<bf16>, tensor<2xbf16>) -> tensor<2xbf16>
  %b = "ember.sub"(%x, %zero) : (tensor<2xbf16>, tensor<bf16>) -> tensor<2xbf16>
  %c = "ember.mul"(%one, %x) : (tensor<bf16>, tensor<2xbf16>) -> tensor<2xbf16>
  %d = "ember.div"(%x, %one) : (tensor<2xbf16>, tensor<bf16>) -> tensor<2xbf16>
  return %a, %b, %c, %d : tensor<2xbf16>, tensor<2xbf16>, tensor<2xbf16>, tensor<2xbf16>
}

// -----

// Negative: a replacement must keep the result type. Integer x / 1 is f64, not x; x + zeros
// that broadcasts x to a bigger shape is not x; 0 - x is not x (sub does not commute).
// CHECK-LABEL: func.func @type_changing_not_applied(
// CHECK:         "ember.div"
// CHECK:         "ember.add"
// CHECK:         "ember.sub"
func.func @type_changing_not_applied(%x: tensor<4xi32>, %y: tensor<1xi32>) -> (tensor<4xf64>, tensor<4xi32>, tensor<4xi32>) {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %zeros = "ember.constant"() {value = dense<0> : tensor<4xi32>} : () -> tensor<4xi32>
  %a = "ember.div"(%x, %one) : (tensor<4xi32>, tensor<i32>) -> tensor<4xf64>
  %b = "ember.add"(%y, %zeros) : (tensor<1xi32>, tensor<4xi32>) -> tensor<4xi32>
  %c = "ember.sub"(%zeros, %x) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %a, %b, %c : tensor<4xf64>, tensor<4xi32>, tensor<4xi32>
}

// -----

// neg(neg(x)) -> x; the inner neg, now unused, is erased as well.
// CHECK-LABEL: func.func @neg_neg(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>)
// CHECK-NOT:     "ember.neg"
// CHECK:         return %[[X]]
func.func @neg_neg(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = "ember.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %b = "ember.neg"(%a) : (tensor<3xf32>) -> tensor<3xf32>
  return %b : tensor<3xf32>
}

// -----

// transpose(transpose(x, p), q) composes to one transpose, or to x when the composition is
// the identity; a transpose by the identity permutation is x.
// CHECK-LABEL: func.func @transposes(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[T:.*]] = "ember.transpose"(%[[X]]) {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NOT:     "ember.transpose"
// CHECK:         return %[[X]], %[[T]], %[[X]] :
func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<2x3x4xf32>) {
  %a = "ember.transpose"(%x) {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %b = "ember.transpose"(%a) {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  %c = "ember.transpose"(%a) {perm = array<i64: 1, 0, 2>} : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32>
  %d = "ember.transpose"(%x) {perm = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %b, %c, %d : tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<2x3x4xf32>
}

// -----

// reshape(reshape(x)) -> reshape(x); a reshape to x's own static shape is x. A reshape whose
// declared type equals a dynamic x's type may still move elements between dims: kept.
// CHECK-LABEL: func.func @reshapes(
// CHECK-SAME:    %[[X:.*]]: tensor<2x6xf32>, %[[D:.*]]: tensor<?x?xf32>)
// CHECK:         %[[R:.*]] = "ember.reshape"(%[[X]]) {shape = array<i64: 3, 4>} : (tensor<2x6xf32>) -> tensor<3x4xf32>
// CHECK:         %[[K:.*]] = "ember.reshape"(%[[D]]) {shape = array<i64: -1, 6>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK:         return %[[R]], %[[X]], %[[K]] :
func.func @reshapes(%x: tensor<2x6xf32>, %d: tensor<?x?xf32>) -> (tensor<3x4xf32>, tensor<2x6xf32>, tensor<?x?xf32>) {
  %a = "ember.reshape"(%x) {shape = array<i64: 12>} : (tensor<2x6xf32>) -> tensor<12xf32>
  %b = "ember.reshape"(%a) {shape = array<i64: 3, 4>} : (tensor<12xf32>) -> tensor<3x4xf32>
  %c = "ember.reshape"(%x) {shape = array<i64: 2, -1>} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %k = "ember.reshape"(%d) {shape = array<i64: -1, 6>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %b, %c, %k : tensor<3x4xf32>, tensor<2x6xf32>, tensor<?x?xf32>
}

// -----

// cast to x's own dtype is x, and broadcast_to x's own static shape is x; real casts and
// broadcasts stay.
// CHECK-LABEL: func.func @casts_and_broadcasts(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xi8>)
// CHECK:         %[[C:.*]] = "ember.cast"(%[[X]]) {dtype = f32}
// CHECK:         %[[B:.*]] = "ember.broadcast_to"(%[[X]]) {shape = array<i64: 4, 2, 3>}
// CHECK:         return %[[X]], %[[C]], %[[X]], %[[B]] :
func.func @casts_and_broadcasts(%x: tensor<2x3xi8>) -> (tensor<2x3xi8>, tensor<2x3xf32>, tensor<2x3xi8>, tensor<4x2x3xi8>) {
  %a = "ember.cast"(%x) {dtype = i8} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  %c = "ember.cast"(%x) {dtype = f32} : (tensor<2x3xi8>) -> tensor<2x3xf32>
  %b = "ember.broadcast_to"(%x) {shape = array<i64: 2, 3>} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  %d = "ember.broadcast_to"(%x) {shape = array<i64: 4, 2, 3>} : (tensor<2x3xi8>) -> tensor<4x2x3xi8>
  return %a, %c, %b, %d : tensor<2x3xi8>, tensor<2x3xf32>, tensor<2x3xi8>, tensor<4x2x3xi8>
}

// -----

// select on a constant splat condition picks a branch; a mixed condition stays.
// CHECK-LABEL: func.func @selects(
// CHECK-SAME:    %[[A:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<2xf32>)
// CHECK:         %[[S:.*]] = "ember.select"
// CHECK:         return %[[A]], %[[B]], %[[S]] :
func.func @selects(%a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %t = "ember.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %f = "ember.constant"() {value = dense<false> : tensor<2xi1>} : () -> tensor<2xi1>
  %m = "ember.constant"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  %x = "ember.select"(%t, %a, %b) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %y = "ember.select"(%f, %a, %b) : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %z = "ember.select"(%m, %a, %b) : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %x, %y, %z : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// scf.if on a constant predicate runs the taken region in place (its effects in order); an
// scf.if false without else disappears, effects and all. Nested ifs fold inside out.
// CHECK-LABEL: func.func @if_constant(
// CHECK-SAME:    %[[X:.*]]: tensor<2xf32>, %[[R:.*]]: !ember.resource<tensor<2xf32>>)
// CHECK-NOT:     scf.if
// CHECK-NOT:     "ember.assign_variable"
// CHECK:         %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:    "ember.print"(%[[E]])
// CHECK-NEXT:    return %[[E]]
func.func @if_constant(%x: tensor<2xf32>, %r: !ember.resource<tensor<2xf32>>) -> tensor<2xf32> {
  %t = arith.constant true
  %f = arith.constant false
  scf.if %f {
    "ember.assign_variable"(%r, %x) : (!ember.resource<tensor<2xf32>>, tensor<2xf32>) -> ()
  }
  %0 = scf.if %t -> (tensor<2xf32>) {
    %1 = scf.if %f -> (tensor<2xf32>) {
      scf.yield %x : tensor<2xf32>
    } else {
      %e = "ember.exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      "ember.print"(%e) {end = "\0A", format = "{}", stream = "stderr", summarize = 3 : i64} : (tensor<2xf32>) -> ()
      scf.yield %e : tensor<2xf32>
    }
    scf.yield %1 : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// Negative: scf.if on an unknown predicate stays.
// CHECK-LABEL: func.func @if_unknown(
// CHECK:         scf.if %arg0
func.func @if_unknown(%p: i1, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = scf.if %p -> (tensor<2xf32>) {
    %n = "ember.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %n : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// A while loop whose condition is constant false runs its condition region once and exits:
// the results are the values it forwards (here the init operands). A loop whose condition is
// not constant stays.
// CHECK-LABEL: func.func @while_false(
// CHECK-SAME:    %[[X:.*]]: tensor<i32>)
// CHECK:         %[[C:.*]] = "ember.constant"() {value = dense<0> : tensor<i32>}
// CHECK:         "ember.print"(%[[C]])
// CHECK:         %[[W:.*]] = scf.while
// CHECK:         return %[[C]], %[[W]] :
func.func @while_false(%x: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %c0 = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0 = scf.while (%i = %c0) : (tensor<i32>) -> tensor<i32> {
    %f = "ember.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
    %e = tensor.extract %f[] : tensor<i1>
    "ember.print"(%i) {end = "\0A", format = "{}", stream = "stderr", summarize = 3 : i64} : (tensor<i32>) -> ()
    scf.condition(%e) %i : tensor<i32>
  } do {
  ^bb0(%i: tensor<i32>):
    scf.yield %i : tensor<i32>
  }
  %1 = scf.while (%i = %c0) : (tensor<i32>) -> tensor<i32> {
    %l = "ember.less"(%i, %x) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %e = tensor.extract %l[] : tensor<i1>
    scf.condition(%e) %i : tensor<i32>
  } do {
  ^bb0(%i: tensor<i32>):
    scf.yield %i : tensor<i32>
  }
  return %0, %1 : tensor<i32>, tensor<i32>
}

// -----

// With ember-constant-fold first, traced control flow on a computed constant predicate folds
// away entirely: less(2, 3) -> true, tensor.extract -> arith.constant, scf.if -> its then
// region, and neg(neg(x)) -> x inside it.
// FOLD-LABEL: func.func @traced_if(
// FOLD-SAME:    %[[X:.*]]: tensor<4xf32>)
// FOLD-NOT:     scf.if
// FOLD-NOT:     "ember.neg"
// FOLD:         return %[[X]]
func.func @traced_if(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = "ember.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %b = "ember.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %l = "ember.less"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %p = tensor.extract %l[] : tensor<i1>
  %0 = scf.if %p -> (tensor<4xf32>) {
    %n = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %m = "ember.neg"(%n) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %m : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
