// ember-shape-refine re-runs type inference with constant operand values and makes result
// types static; users whose types must stay (return, yield, call, loops) see a tensor.cast.

// RUN: ember-opt %s --split-input-file -p ember-shape-refine | FileCheck %s
// RUN: ember-opt %s --split-input-file -p ember-shape-refine --pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// A fill of a constant shape gets a static type; the return keeps the function's type.
// CHECK-LABEL: func.func @fill(
// CHECK:         %[[F:.*]] = "ember.fill"(%{{.*}}, %{{.*}}) : (tensor<2xi32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.cast %[[F]] : tensor<2x3xf32> to tensor<?x?xf32>
// CHECK-NEXT:    return %[[C]] : tensor<?x?xf32>
// STATS:       ember-shape-refine:
// STATS-NEXT:    refined: 1
func.func @fill(%v: tensor<f32>) -> tensor<?x?xf32> {
  %d = "ember.constant"() {value = dense<[2, 3]> : tensor<2xi32>} : () -> tensor<2xi32>
  %f = "ember.fill"(%d, %v) : (tensor<2xi32>, tensor<f32>) -> tensor<?x?xf32>
  return %f : tensor<?x?xf32>
}

// -----

// A range of constant bounds gets its length; refinement flows to the users in program
// order, so only the value that leaves the function needs a cast.
// CHECK-LABEL: func.func @range(
// CHECK:         %[[R:.*]] = "ember.range"({{.*}}) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<5xi32>
// CHECK-NEXT:    %[[M:.*]] = "ember.mul"(%[[R]], %[[R]]) : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
// CHECK-NEXT:    %[[C:.*]] = tensor.cast %[[M]] : tensor<5xi32> to tensor<?xi32>
// CHECK-NEXT:    %[[S:.*]] = "ember.reduce_sum"(%[[M]]) {{.*}} : (tensor<5xi32>) -> tensor<i32>
// CHECK-NEXT:    return %[[C]], %[[S]] : tensor<?xi32>, tensor<i32>
// STATS:       ember-shape-refine:
// STATS-NEXT:    refined: 2
func.func @range() -> (tensor<?xi32>, tensor<i32>) {
  %start = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %limit = "ember.constant"() {value = dense<11> : tensor<i32>} : () -> tensor<i32>
  %delta = "ember.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %r = "ember.range"(%start, %limit, %delta) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
  %m = "ember.mul"(%r, %r) : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
  %s = "ember.reduce_sum"(%m) {axes = array<i64: 0>, keepdims = false} : (tensor<?xi32>) -> tensor<i32>
  return %m, %s : tensor<?xi32>, tensor<i32>
}

// -----

// Unknown operand values: nothing to refine (a fill of an argument shape, a range with one
// bound from an argument).
// CHECK-LABEL: func.func @unknown(
// CHECK-NOT:     tensor.cast
// CHECK:         "ember.fill"({{.*}}) : (tensor<2xi32>, tensor<f32>) -> tensor<?x?xf32>
// CHECK:         "ember.range"({{.*}}) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
// CHECK-NOT:     tensor.cast
// CHECK:         return
func.func @unknown(%d: tensor<2xi32>, %v: tensor<f32>, %n: tensor<i32>) -> (tensor<?x?xf32>, tensor<?xi32>) {
  %f = "ember.fill"(%d, %v) : (tensor<2xi32>, tensor<f32>) -> tensor<?x?xf32>
  %zero = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %r = "ember.range"(%zero, %n, %one) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
  return %f, %r : tensor<?x?xf32>, tensor<?xi32>
}

// -----

// Declared types less static than the operands give (hand-written IR, unranked results) are
// refined too; a static dim that is already there never changes.
// CHECK-LABEL: func.func @loose(
// CHECK-NEXT:    %[[E:.*]] = "ember.exp"(%{{.*}}) : (tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %[[T:.*]] = "ember.transpose"(%[[E]]) {{.*}} : (tensor<4x2xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.cast %[[T]] : tensor<2x4xf32> to tensor<?x4xf32>
// CHECK-NEXT:    return %[[C]]
func.func @loose(%x: tensor<4x2xf32>) -> tensor<?x4xf32> {
  %e = "ember.exp"(%x) : (tensor<4x2xf32>) -> tensor<?x?xf32>
  %t = "ember.transpose"(%e) {perm = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<?x4xf32>
  return %t : tensor<?x4xf32>
}

// -----

// An unknown rank becomes known.
// CHECK-LABEL: func.func @unranked(
// CHECK-NEXT:    %[[E:.*]] = "ember.sin"(%{{.*}}) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.cast %[[E]] : tensor<3xf32> to tensor<*xf32>
// CHECK-NEXT:    return %[[C]] : tensor<*xf32>
func.func @unranked(%x: tensor<3xf32>) -> tensor<*xf32> {
  %e = "ember.sin"(%x) : (tensor<3xf32>) -> tensor<*xf32>
  return %e : tensor<*xf32>
}

// -----

// Inside regions: an scf.if whose branches both yield tensor<3xf32> (one through a cast)
// takes that type, and the return gets a cast; so does a loop that carries its value
// unchanged (its init's cast is looked through and erased); a
// tensor.extract takes the refined value as it is.
// CHECK-LABEL: func.func @regions(
// CHECK:         %[[IF:.*]] = scf.if %{{.*}} -> (tensor<3xf32>) {
// CHECK-NEXT:      %[[F:.*]] = "ember.fill"({{.*}}) -> tensor<3xf32>
// CHECK-NEXT:      scf.yield %[[F]] : tensor<3xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[E:.*]] = "ember.fill"({{.*}}) -> tensor<3xf32>
// CHECK-NEXT:      scf.yield %[[E]] : tensor<3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[IC:.*]] = tensor.cast %[[IF]] : tensor<3xf32> to tensor<?xf32>
// CHECK-NEXT:    %[[G:.*]] = "ember.fill"({{.*}}) -> tensor<3xf32>
// CHECK-NEXT:    %[[X:.*]] = tensor.extract %[[G]][%{{.*}}] : tensor<3xf32>
// CHECK-NEXT:    %[[W:.*]] = scf.while (%{{.*}} = %[[G]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:      scf.condition(%{{.*}}) %{{.*}} : tensor<3xf32>
// CHECK:           scf.yield %{{.*}} : tensor<3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[WC:.*]] = tensor.cast %[[W]] : tensor<3xf32> to tensor<?xf32>
// CHECK-NEXT:    return %[[IC]], %[[X]], %[[WC]]
func.func @regions(%p: i1, %v: tensor<f32>, %i: index) -> (tensor<?xf32>, f32, tensor<?xf32>) {
  %d = "ember.constant"() {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %r = scf.if %p -> (tensor<?xf32>) {
    %f = "ember.fill"(%d, %v) : (tensor<1xi64>, tensor<f32>) -> tensor<?xf32>
    scf.yield %f : tensor<?xf32>
  } else {
    %e = "ember.fill"(%d, %v) : (tensor<1xi64>, tensor<f32>) -> tensor<3xf32>
    %c = tensor.cast %e : tensor<3xf32> to tensor<?xf32>
    scf.yield %c : tensor<?xf32>
  }
  %g = "ember.fill"(%d, %v) : (tensor<1xi64>, tensor<f32>) -> tensor<?xf32>
  %x = tensor.extract %g[%i] : tensor<?xf32>
  %w = scf.while (%a = %g) : (tensor<?xf32>) -> tensor<?xf32> {
    scf.condition(%p) %a : tensor<?xf32>
  } do {
  ^bb0(%b: tensor<?xf32>):
    scf.yield %b : tensor<?xf32>
  }
  return %r, %x, %w : tensor<?xf32>, f32, tensor<?xf32>
}

// -----

// A call keeps its callee's signature: the argument is cast back.
// CHECK-LABEL: func.func @call(
// CHECK:         %[[F:.*]] = "ember.fill"({{.*}}) -> tensor<2xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.cast %[[F]] : tensor<2xf32> to tensor<?xf32>
// CHECK-NEXT:    %[[R:.*]] = call @callee(%[[C]]) : (tensor<?xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %[[N:.*]] = "ember.neg"(%[[F]]) : (tensor<2xf32>) -> tensor<2xf32>
func.func private @callee(tensor<?xf32>) -> tensor<?xf32>
func.func @call(%v: tensor<f32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %d = "ember.constant"() {value = dense<2> : tensor<1xi32>} : () -> tensor<1xi32>
  %f = "ember.fill"(%d, %v) : (tensor<1xi32>, tensor<f32>) -> tensor<?xf32>
  %r = call @callee(%f) : (tensor<?xf32>) -> tensor<?xf32>
  %n = "ember.neg"(%f) : (tensor<?xf32>) -> tensor<?xf32>
  return %r, %n : tensor<?xf32>, tensor<?xf32>
}

// -----

// Static IR is left exactly as it is.
// CHECK-LABEL: func.func @static(
// CHECK-NEXT:    "ember.add"(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    return
func.func @static(%x: tensor<4xf32>, %y: tensor<f32>) -> tensor<4xf32> {
  %0 = "ember.add"(%x, %y) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// tensor.concat, an upstream op with a spec, is refined like the ember ops.
// CHECK-LABEL: func.func @concat(
// CHECK:         %[[F:.*]] = "ember.fill"({{.*}}) -> tensor<2xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.concat dim(0) %[[F]], %{{.*}} : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %[[R:.*]] = tensor.cast %[[C]] : tensor<5xf32> to tensor<?xf32>
// CHECK-NEXT:    return %[[R]]
func.func @concat(%v: tensor<f32>, %y: tensor<3xf32>) -> tensor<?xf32> {
  %d = "ember.constant"() {value = dense<2> : tensor<1xi32>} : () -> tensor<1xi32>
  %f = "ember.fill"(%d, %v) : (tensor<1xi32>, tensor<f32>) -> tensor<?xf32>
  %c = tensor.concat dim(0) %f, %y : (tensor<?xf32>, tensor<3xf32>) -> tensor<?xf32>
  return %c : tensor<?xf32>
}

// -----

// A cast to a less static type (an inlined call's argument) is looked through by the ops
// that re-infer their types, which then refine, and by the loop, which carries it unchanged.
// CHECK-LABEL: func.func @through_cast(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = "ember.neg"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = "ember.exp"(%[[N]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         scf.while (%{{.*}} = %[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// STATS:         casts-bypassed: 1
// STATS-NEXT:    loops-refined: 1
// STATS-NEXT:    refined: 2
func.func @through_cast(%x: tensor<4xf32>, %p: i1) -> (tensor<?xf32>, tensor<?xf32>) {
  %c = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  %n = "ember.neg"(%c) : (tensor<?xf32>) -> tensor<?xf32>
  %e = "ember.exp"(%n) : (tensor<?xf32>) -> tensor<?xf32>
  %w = scf.while (%a = %c) : (tensor<?xf32>) -> tensor<?xf32> {
    scf.condition(%p) %a : tensor<?xf32>
  } do {
  ^bb0(%b: tensor<?xf32>):
    scf.yield %b : tensor<?xf32>
  }
  return %e, %w : tensor<?xf32>, tensor<?xf32>
}

// -----

// Values computed during the walk feed the users that infer from values: ember.shape of a
// static operand is known, and so is a small fill of known dims; the keepdims reduction of
// a tensor of unknown rank (here specialised to 2x3) becomes static in one walk.
// CHECK-LABEL: func.func @computed_dims(
// CHECK:         %[[S:.*]] = "ember.shape"(%{{.*}}) {dtype = i32} : (tensor<2x3xf32>) -> tensor<2xi32>
// CHECK:         "ember.fill"(%{{.*}}, %{{.*}}) : (tensor<1xi32>, tensor<i32>) -> tensor<2xi32>
// CHECK:         %[[F:.*]] = "ember.fill"(%{{.*}}, %{{.*}}) : (tensor<2xi32>, tensor<f32>) -> tensor<1x1xf32>
// CHECK:         tensor.cast %[[F]] : tensor<1x1xf32> to tensor<*xf32>
// STATS:         casts-bypassed: 1
// STATS-NEXT:    refined: 3
func.func @computed_dims(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<*xf32> {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %c = tensor.cast %x : tensor<2x3xf32> to tensor<*xf32>
  %s = "ember.shape"(%c) {dtype = i32} : (tensor<*xf32>) -> tensor<?xi32>
  %r = "ember.shape"(%s) {dtype = i32} : (tensor<?xi32>) -> tensor<1xi32>
  %ones = "ember.fill"(%r, %one) : (tensor<1xi32>, tensor<i32>) -> tensor<?xi32>
  %f = "ember.fill"(%ones, %v) : (tensor<?xi32>, tensor<f32>) -> tensor<*xf32>
  return %f : tensor<*xf32>
}

// -----

// A shape computed from ember.shape (em.zeros([em.shape(x)[0], 5])): dim 0 is x's, dim 1
// the constant; inference reads what is known of the shape operand (dialects/ember/partial.py).
// CHECK-LABEL: func.func @fill_of_partial_shape(
// CHECK:         "ember.fill"(%{{.*}}, %{{.*}}) : (tensor<2xi32>, tensor<f32>) -> tensor<2x5xf32>
func.func @fill_of_partial_shape(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<?x?xf32> {
  %s = "ember.shape"(%x) {dtype = i32} : (tensor<2x3xf32>) -> tensor<2xi32>
  %n = "ember.strided_slice"(%s) {begin = array<i64: 0>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 1>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<i32>
  %n1 = "ember.expand_dims"(%n) {axis = 0 : i64} : (tensor<i32>) -> tensor<1xi32>
  %five = "ember.constant"() {value = dense<[5]> : tensor<1xi32>} : () -> tensor<1xi32>
  %d = tensor.concat dim(0) %n1, %five : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %f = "ember.fill"(%d, %v) : (tensor<2xi32>, tensor<f32>) -> tensor<?x?xf32>
  return %f : tensor<?x?xf32>
}

// -----

// An scf.if of unknown rank takes the type both branches agree on; one whose branches
// yield different static types keeps its result type (and the yields their casts).
// CHECK-LABEL: func.func @if_results(
// CHECK:         %[[A:.*]] = scf.if %{{.*}} -> (tensor<2x3xf32>) {
// CHECK-NEXT:      %[[N:.*]] = "ember.neg"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:      scf.yield %[[N]] : tensor<2x3xf32>
// CHECK:         %[[B:.*]] = scf.if %{{.*}} -> (tensor<?xf32>) {
// CHECK:           scf.yield %{{.*}} : tensor<?xf32>
// CHECK:           scf.yield %{{.*}} : tensor<?xf32>
// CHECK:         %[[S:.*]] = "ember.reduce_sum"(%[[A]]) {{.*}} : (tensor<2x3xf32>) -> tensor<3xf32>
// STATS:         if-results-refined: 1
// STATS-NEXT:    refined: 3
func.func @if_results(%p: i1, %x: tensor<2x3xf32>, %y: tensor<3xf32>, %z: tensor<4xf32>)
    -> (tensor<*xf32>, tensor<?xf32>) {
  %c = tensor.cast %x : tensor<2x3xf32> to tensor<*xf32>
  %a = scf.if %p -> (tensor<*xf32>) {
    %n = "ember.neg"(%c) : (tensor<*xf32>) -> tensor<*xf32>
    scf.yield %n : tensor<*xf32>
  } else {
    %e = "ember.exp"(%c) : (tensor<*xf32>) -> tensor<*xf32>
    scf.yield %e : tensor<*xf32>
  }
  %b = scf.if %p -> (tensor<?xf32>) {
    %cy = tensor.cast %y : tensor<3xf32> to tensor<?xf32>
    scf.yield %cy : tensor<?xf32>
  } else {
    %cz = tensor.cast %z : tensor<4xf32> to tensor<?xf32>
    scf.yield %cz : tensor<?xf32>
  }
  %s = "ember.reduce_sum"(%a) {axes = array<i64: 0>, keepdims = false} : (tensor<*xf32>) -> tensor<*xf32>
  return %s, %b : tensor<*xf32>, tensor<?xf32>
}

// -----

// A loop carrying a tensor of unknown rank that its body keeps (neg of 2x3 is 2x3) takes
// the static type; one whose body grows the value (a concat) keeps its carried type.
// CHECK-LABEL: func.func @loops(
// CHECK:         scf.while (%{{.*}} = %{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK:           "ember.neg"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:           scf.yield %{{.*}} : tensor<2x3xf32>
// CHECK:         scf.while (%{{.*}} = %{{.*}}) : (tensor<?xf32>) -> tensor<?xf32> {
// CHECK:           tensor.concat dim(0) %{{.*}}, %{{.*}} : (tensor<?xf32>, tensor<3xf32>) -> tensor<?xf32>
// STATS:         loops-refined: 1
func.func @loops(%p: i1, %x: tensor<2x3xf32>, %y: tensor<3xf32>) -> (tensor<*xf32>, tensor<?xf32>) {
  %c = tensor.cast %x : tensor<2x3xf32> to tensor<*xf32>
  %a = scf.while (%s = %c) : (tensor<*xf32>) -> tensor<*xf32> {
    scf.condition(%p) %s : tensor<*xf32>
  } do {
  ^bb0(%t: tensor<*xf32>):
    %n = "ember.neg"(%t) : (tensor<*xf32>) -> tensor<*xf32>
    scf.yield %n : tensor<*xf32>
  }
  %cy = tensor.cast %y : tensor<3xf32> to tensor<?xf32>
  %b = scf.while (%s = %cy) : (tensor<?xf32>) -> tensor<?xf32> {
    scf.condition(%p) %s : tensor<?xf32>
  } do {
  ^bb0(%t: tensor<?xf32>):
    %g = tensor.concat dim(0) %t, %y : (tensor<?xf32>, tensor<3xf32>) -> tensor<?xf32>
    scf.yield %g : tensor<?xf32>
  }
  return %a, %b : tensor<*xf32>, tensor<?xf32>
}

// -----

// After specialisation to x : tensor<3x4x2xf32> the shape operand is known in full: the
// forms with a shape operand get static types (and lower as their attribute forms).
// CHECK-LABEL: func.func @shape_operands_refined(
// CHECK:         "ember.dynamic_reshape"(%{{.*}}, %{{.*}}) : (tensor<3x4x2xf32>, tensor<2xi32>) -> tensor<3x8xf32>
// CHECK:         "ember.dynamic_random_normal"(%{{.*}}, %{{.*}}) {{.*}} -> tensor<3x4x2xf32>
func.func @shape_operands_refined(%x: tensor<3x4x2xf32>, %seed: tensor<2xi64>) -> (tensor<?x8xf32>, tensor<?x?x?xf32>) {
  %s = "ember.shape"(%x) {dtype = i32} : (tensor<3x4x2xf32>) -> tensor<3xi32>
  %n = "ember.strided_slice"(%s) {begin = array<i64: 0>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 1>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64, strides = array<i64: 1>} : (tensor<3xi32>) -> tensor<i32>
  %n1 = "ember.expand_dims"(%n) {axis = 0 : i64} : (tensor<i32>) -> tensor<1xi32>
  %m = "ember.constant"() {value = dense<[-1]> : tensor<1xi32>} : () -> tensor<1xi32>
  %d = tensor.concat dim(0) %n1, %m : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %r = "ember.dynamic_reshape"(%x, %d) : (tensor<3x4x2xf32>, tensor<2xi32>) -> tensor<?x8xf32>
  %g = "ember.dynamic_random_normal"(%seed, %s) {dtype = f32, mean = 0.0 : f64, stddev = 1.0 : f64} : (tensor<2xi64>, tensor<3xi32>) -> tensor<?x?x?xf32>
  return %r, %g : tensor<?x8xf32>, tensor<?x?x?xf32>
}
