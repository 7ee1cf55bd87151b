// ember-constant-fold runs pure ops whose operands are all ember.constant through their numpy
// reference kernels and replaces them by constants of the declared result type; operand
// constants left unused are erased. Effects, random ops with an unknown seed, ops whose kernel
// raises, dynamic results and constants over the size cap are left alone.

// RUN: ember-opt %s -p ember-constant-fold --split-input-file | FileCheck %s
// RUN: ember-opt %s -p 'ember-constant-fold{size-cap=16}' --split-input-file | FileCheck %s --check-prefix=CAP

// A chain folds in one walk: the add becomes a constant before the mul is visited.
// CHECK-LABEL: func.func @chain_with_broadcast(
// CHECK-NEXT:    %[[C:.*]] = "ember.constant"() {value = dense<[121, 144]> : tensor<2xi32>} : () -> tensor<2xi32>
// CHECK-NEXT:    return %[[C]] : tensor<2xi32>
func.func @chain_with_broadcast() -> tensor<2xi32> {
  %a = "ember.constant"() {value = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  %b = "ember.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
  %s = "ember.add"(%a, %b) : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  %m = "ember.mul"(%s, %s) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %m : tensor<2xi32>
}

// -----

// Comparisons give i1 constants; tensor.extract of a constant becomes arith.constant, which
// is what lets ember-canonicalize simplify scf.if and scf.while on it.
// CHECK-LABEL: func.func @compare_and_extract(
// CHECK-NOT:     ember.less
// CHECK-NOT:     tensor.extract
// CHECK:         %[[P:.*]] = arith.constant false
// CHECK:         %[[E:.*]] = arith.constant 2.500000e+00 : f32
// CHECK:         return %[[P]], %[[E]] : i1, f32
func.func @compare_and_extract() -> (i1, f32) {
  %b = "ember.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
  %l = "ember.less"(%b, %b) : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %p = tensor.extract %l[] : tensor<i1>
  %f = "ember.constant"() {value = dense<[1.5, 2.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %i = arith.constant 1 : index
  %e = tensor.extract %f[%i] : tensor<2xf32>
  return %p, %e : i1, f32
}

// -----

// tensor.concat is upstream but has a spec (and so a kernel): it folds too.
// CHECK-LABEL: func.func @concat(
// CHECK-NEXT:    %[[C:.*]] = "ember.constant"() {value = dense<[1, 2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
// CHECK-NEXT:    return %[[C]]
func.func @concat() -> tensor<3xi32> {
  %a = "ember.constant"() {value = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  %b = "ember.constant"() {value = dense<3> : tensor<1xi32>} : () -> tensor<1xi32>
  %c = "tensor.concat"(%a, %b) <{dim = 0 : i64}> : (tensor<2xi32>, tensor<1xi32>) -> tensor<3xi32>
  return %c : tensor<3xi32>
}

// -----

// Attributes reach the kernel: transpose's perm, reduce_sum's axes, cast's dtype (floats
// truncate toward zero).
// CHECK-LABEL: func.func @attributes(
// CHECK-DAG:     "ember.constant"() {value = dense<{{\[\[}}1, 3], [2, 4]]> : tensor<2x2xi64>}
// CHECK-DAG:     "ember.constant"() {value = dense<[3, 7]> : tensor<2xi64>}
// CHECK-DAG:     "ember.constant"() {value = dense<[-1, 2]> : tensor<2xi32>}
// CHECK-NOT:     "ember.transpose"
// CHECK-NOT:     "ember.reduce_sum"
// CHECK-NOT:     "ember.cast"
func.func @attributes() -> (tensor<2x2xi64>, tensor<2xi64>, tensor<2xi32>) {
  %m = "ember.constant"() {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>} : () -> tensor<2x2xi64>
  %t = "ember.transpose"(%m) {perm = array<i64: 1, 0>} : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %s = "ember.reduce_sum"(%m) {axes = array<i64: 1>, keepdims = false} : (tensor<2x2xi64>) -> tensor<2xi64>
  %f = "ember.constant"() {value = dense<[-1.7, 2.9]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = "ember.cast"(%f) {dtype = i32} : (tensor<2xf32>) -> tensor<2xi32>
  return %t, %s, %c : tensor<2x2xi64>, tensor<2xi64>, tensor<2xi32>
}

// -----

// Integer division by zero is a run-time error: the op stays (and so do its operands).
// Float division by zero is IEEE arithmetic and folds to inf.
// CHECK-LABEL: func.func @division_by_zero(
// CHECK:         %[[A:.*]] = "ember.constant"() {value = dense<[1, 2]> : tensor<2xi32>}
// CHECK:         %[[B:.*]] = "ember.constant"() {value = dense<[3, 0]> : tensor<2xi32>}
// CHECK:         "ember.floordiv"(%[[A]], %[[B]])
// CHECK:         "ember.mod"(%[[A]], %[[B]])
// CHECK:         "ember.constant"() {value = dense<0x7F800000> : tensor<f32>}
// CHECK-NOT:     "ember.div"
func.func @division_by_zero() -> (tensor<2xi32>, tensor<2xi32>, tensor<f32>) {
  %a = "ember.constant"() {value = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  %b = "ember.constant"() {value = dense<[3, 0]> : tensor<2xi32>} : () -> tensor<2xi32>
  %q = "ember.floordiv"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %r = "ember.mod"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %one = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %zero = "ember.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %inf = "ember.div"(%one, %zero) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %q, %r, %inf : tensor<2xi32>, tensor<2xi32>, tensor<f32>
}

// -----

// Prints and variable writes are effects: never folded, never erased, even on constants.
// CHECK-LABEL: func.func @effects(
// CHECK:         %[[C:.*]] = "ember.constant"() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT:    "ember.print"(%[[C]])
// CHECK-NEXT:    "ember.assign_variable"(%{{.*}}, %[[C]])
// CHECK-NEXT:    %[[V:.*]] = "ember.read_variable"
// CHECK-NEXT:    "ember.assign_add_variable"(%{{.*}}, %[[C]])
// CHECK-NEXT:    return %[[V]]
func.func @effects(%r: !ember.resource<tensor<2xf32>>) -> tensor<2xf32> {
  %c = "ember.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  "ember.print"(%c) {end = "\0A", format = "{}", stream = "stderr", summarize = 3 : i64} : (tensor<2xf32>) -> ()
  "ember.assign_variable"(%r, %c) : (!ember.resource<tensor<2xf32>>, tensor<2xf32>) -> ()
  %v = "ember.read_variable"(%r) : (!ember.resource<tensor<2xf32>>) -> tensor<2xf32>
  "ember.assign_add_variable"(%r, %c) : (!ember.resource<tensor<2xf32>>, tensor<2xf32>) -> ()
  return %v : tensor<2xf32>
}

// -----

// Random ops are pure given their seed: a constant seed folds (the kernel is the one eager mode
// and the interpreter run), a seed that is an argument does not.
// CHECK-LABEL: func.func @random(
// CHECK-SAME:    %[[SEED:.*]]: tensor<2xi64>)
// CHECK-NOT:     "ember.random_uniform"
// CHECK:         %[[U:.*]] = "ember.constant"() {value = dense<[{{.*}}]> : tensor<3xf32>}
// CHECK-NEXT:    %[[N:.*]] = "ember.random_normal"(%[[SEED]])
// CHECK-NEXT:    return %[[U]], %[[N]]
func.func @random(%seed: tensor<2xi64>) -> (tensor<3xf32>, tensor<3xf32>) {
  %s = "ember.constant"() {value = dense<[7, 42]> : tensor<2xi64>} : () -> tensor<2xi64>
  %u = "ember.random_uniform"(%s) {dtype = f32, maxval = 1.0 : f64, minval = 0.0 : f64, shape = array<i64: 3>} : (tensor<2xi64>) -> tensor<3xf32>
  %n = "ember.random_normal"(%seed) {dtype = f32, mean = 0.0 : f64, shape = array<i64: 3>, stddev = 1.0 : f64} : (tensor<2xi64>) -> tensor<3xf32>
  return %u, %n : tensor<3xf32>, tensor<3xf32>
}

// -----

// The size cap counts the bytes of the produced constant, and is checked before the kernel
// runs: 8 x f32 = 32 bytes folds by default but not under size-cap=16; 4 x i32 = 16 folds.
// CHECK-LABEL: func.func @size_cap(
// CHECK-NOT:     "ember.broadcast_to"
// CHECK-NOT:     "ember.add"
// CHECK:         return
// CAP-LABEL:   func.func @size_cap(
// CAP:           %[[B:.*]] = "ember.broadcast_to"
// CAP-SAME:        -> tensor<8xf32>
// CAP-NOT:       "ember.add"
// CAP:           %[[S:.*]] = "ember.constant"() {value = dense<[2, 4, 6, 8]> : tensor<4xi32>}
// CAP:           return %[[B]], %[[S]]
func.func @size_cap() -> (tensor<8xf32>, tensor<4xi32>) {
  %one = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %big = "ember.broadcast_to"(%one) {shape = array<i64: 8>} : (tensor<f32>) -> tensor<8xf32>
  %i = "ember.constant"() {value = dense<[1, 2, 3, 4]> : tensor<4xi32>} : () -> tensor<4xi32>
  %s = "ember.add"(%i, %i) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %big, %s : tensor<8xf32>, tensor<4xi32>
}

// -----

// A declared result with a dynamic dim cannot become a constant of that type: left alone.
// A static declaration folds.
// CHECK-LABEL: func.func @dynamic_result(
// CHECK:         %[[D:.*]] = "ember.range"({{.*}}) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
// CHECK:         %[[S:.*]] = "ember.constant"() {value = dense<[0, 2, 4]> : tensor<3xi32>}
// CHECK:         return %[[D]], %[[S]]
func.func @dynamic_result() -> (tensor<?xi32>, tensor<3xi32>) {
  %start = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %limit = "ember.constant"() {value = dense<6> : tensor<i32>} : () -> tensor<i32>
  %delta = "ember.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %d = "ember.range"(%start, %limit, %delta) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
  %s = "ember.range"(%start, %limit, %delta) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<3xi32>
  return %d, %s : tensor<?xi32>, tensor<3xi32>
}

// -----

// Ops in regions fold with constants from outside; ops on arguments do not.
// CHECK-LABEL: func.func @in_region(
// CHECK:         scf.if
// CHECK-NEXT:      %[[C:.*]] = "ember.constant"() {value = dense<-5> : tensor<i32>}
// CHECK-NEXT:      scf.yield %[[C]]
// CHECK:         } else {
// CHECK-NEXT:      %[[N:.*]] = "ember.neg"(%arg1)
// CHECK-NEXT:      scf.yield %[[N]]
func.func @in_region(%p: i1, %x: tensor<i32>) -> tensor<i32> {
  %c = "ember.constant"() {value = dense<5> : tensor<i32>} : () -> tensor<i32>
  %r = scf.if %p -> (tensor<i32>) {
    %n = "ember.neg"(%c) : (tensor<i32>) -> tensor<i32>
    scf.yield %n : tensor<i32>
  } else {
    %n = "ember.neg"(%x) : (tensor<i32>) -> tensor<i32>
    scf.yield %n : tensor<i32>
  }
  return %r : tensor<i32>
}

// -----

// String tensors fold too (add concatenates them).
// CHECK-LABEL: func.func @strings(
// CHECK-NEXT:    "ember.constant"() {value = dense<["ab", "cd"]> : tensor<2x!ember.string>}
// CHECK-NEXT:    return
func.func @strings() -> tensor<2x!ember.string> {
  %a = "ember.constant"() {value = dense<["a", "c"]> : tensor<2x!ember.string>} : () -> tensor<2x!ember.string>
  %b = "ember.constant"() {value = dense<["b", "d"]> : tensor<2x!ember.string>} : () -> tensor<2x!ember.string>
  %s = "ember.add"(%a, %b) : (tensor<2x!ember.string>, tensor<2x!ember.string>) -> tensor<2x!ember.string>
  return %s : tensor<2x!ember.string>
}
