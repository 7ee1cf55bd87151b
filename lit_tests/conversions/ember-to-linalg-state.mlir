// convert-ember-to-linalg on variables and print. Each !ember.resource argument becomes a
// tensor argument (its value on entry) and an extra function result (its value on exit),
// listed by `ember.variables`; reads and writes thread the current value in program order,
// through scf.if results and scf.while loop-carried values where regions write.
// ember.print becomes a call of a private per-site declaration the runtime binds.

// The last cases cannot be lowered: ember-opt exits 1 and names them on stderr.
// RUN: not ember-opt %s -p convert-ember-to-linalg --split-input-file 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err

// Read, add, read: the first read is the entry value, the second the sum; the sum is also
// the variable's value on exit (the extra result).
// CHECK-LABEL: func.func @read_add_read(
// CHECK-SAME:    %[[R:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME:    attributes {ember.variables = array<i64: 0>}
// CHECK:       %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[R]], %[[D]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:         arith.addf
// CHECK:       return %[[R]], %[[NEW]], %[[NEW]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @read_add_read(%r: !ember.resource<tensor<4xf32>>, %delta: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %before = "ember.read_variable"(%r) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  "ember.assign_add_variable"(%r, %delta) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
  %after = "ember.read_variable"(%r) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  return %before, %after : tensor<4xf32>, tensor<4xf32>
}

// -----

// Two variables, extra results in argument order; a static value assigned to a dynamic
// variable is cast to its type; assign_sub of integers is a wrapping subi.
// CHECK-LABEL: func.func @two_variables(
// CHECK-SAME:    %[[A:.*]]: tensor<?xi32>, %[[V:.*]]: tensor<3xi32>, %[[B:.*]]: tensor<i64>, %[[W:.*]]: tensor<i64>)
// CHECK-SAME:    -> (tensor<?xi32>, tensor<i64>) attributes {ember.variables = array<i64: 0, 2>}
// CHECK:       %[[CAST:.*]] = tensor.cast %[[V]] : tensor<3xi32> to tensor<?xi32>
// CHECK:       %[[SUB:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[W]] : tensor<i64>, tensor<i64>)
// CHECK:         arith.subi
// CHECK:       return %[[CAST]], %[[SUB]] : tensor<?xi32>, tensor<i64>
func.func @two_variables(%a: !ember.resource<tensor<?xi32>>, %v: tensor<3xi32>, %b: !ember.resource<tensor<i64>>, %w: tensor<i64>) {
  "ember.assign_variable"(%a, %v) : (!ember.resource<tensor<?xi32>>, tensor<3xi32>) -> ()
  "ember.assign_sub_variable"(%b, %w) : (!ember.resource<tensor<i64>>, tensor<i64>) -> ()
  return
}

// -----

// A variable that is only read is returned unchanged; ui8 variables become i8.
// CHECK-LABEL: func.func @read_only(
// CHECK-SAME:    %[[R:.*]]: tensor<2xi8>) -> (tensor<2xi8>, tensor<2xi8>) attributes {ember.variables = array<i64: 0>}
// CHECK-NEXT:  return %[[R]], %[[R]] : tensor<2xi8>, tensor<2xi8>
func.func @read_only(%r: !ember.resource<tensor<2xui8>>) -> tensor<2xui8> {
  %0 = "ember.read_variable"(%r) : (!ember.resource<tensor<2xui8>>) -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

// Reads inside scf.if regions see the current value (defined before the region op).
// CHECK-LABEL: func.func @read_in_region(
// CHECK-SAME:    %[[R:.*]]: tensor<f32>, %[[V:.*]]: tensor<f32>, %[[C:.*]]: i1)
// CHECK:       %[[IF:.*]] = scf.if %[[C]] -> (tensor<f32>) {
// CHECK-NEXT:    scf.yield %[[V]] : tensor<f32>
// CHECK-NEXT:  } else {
// CHECK-NEXT:    scf.yield %[[R]] : tensor<f32>
// CHECK:       return %[[IF]], %[[V]] : tensor<f32>, tensor<f32>
func.func @read_in_region(%r: !ember.resource<tensor<f32>>, %v: tensor<f32>, %c: i1) -> tensor<f32> {
  %old = "ember.read_variable"(%r) : (!ember.resource<tensor<f32>>) -> tensor<f32>
  "ember.assign_variable"(%r, %v) : (!ember.resource<tensor<f32>>, tensor<f32>) -> ()
  %0 = scf.if %c -> (tensor<f32>) {
    %new = "ember.read_variable"(%r) : (!ember.resource<tensor<f32>>) -> tensor<f32>
    scf.yield %new : tensor<f32>
  } else {
    scf.yield %old : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

// Print: one private declaration per site, carrying the format, summarize and the ember type (ui8
// prints unsigned although the signature says i8), called in program order.
// CHECK:       func.func private @ember_print_0(tensor<3xi8> {bufferization.access = "read"})
// CHECK-SAME:    attributes {ember.end = "\0A", ember.format = "x = {}", ember.stream = "stderr", ember.summarize = 3 : i64, ember.type = tensor<3xui8>, llvm.emit_c_interface}
// CHECK:       func.func private @ember_print_1(tensor<?x2xf32> {bufferization.access = "read"})
// CHECK-SAME:    attributes {ember.end = "", ember.format = "{}", ember.stream = "stdout", ember.summarize = -1 : i64, ember.type = tensor<?x2xf32>, llvm.emit_c_interface}
// CHECK-LABEL: func.func @print(
// CHECK-SAME:    %[[X:.*]]: tensor<3xi8>, %[[D:.*]]: tensor<?x2xf32>)
// CHECK-NEXT:  call @ember_print_0(%[[X]]) : (tensor<3xi8>) -> ()
// CHECK-NEXT:  call @ember_print_1(%[[D]]) : (tensor<?x2xf32>) -> ()
// CHECK-NEXT:  call @ember_print_2(%[[X]]) : (tensor<3xi8>) -> ()
// CHECK-NEXT:  return
func.func @print(%x: tensor<3xui8>, %d: tensor<?x2xf32>) {
  "ember.print"(%x) {end = "\0A", format = "x = {}", stream = "stderr", summarize = 3 : i64} : (tensor<3xui8>) -> ()
  "ember.print"(%d) {end = "", format = "{}", stream = "stdout", summarize = -1 : i64} : (tensor<?x2xf32>) -> ()
  "ember.print"(%x) {end = "\0A", format = "x = {}", stream = "stderr", summarize = 3 : i64} : (tensor<3xui8>) -> ()
  return
}

// -----

// A write inside an scf.if without else: the if gets a result and an else branch that
// yields the value from before it; the write in the branch is the current value there.
// CHECK-LABEL: func.func @write_in_if(
// CHECK-SAME:    %[[R:.*]]: tensor<f32>, %[[V:.*]]: tensor<f32>, %[[C:.*]]: i1) -> tensor<f32>
// CHECK-SAME:    attributes {ember.variables = array<i64: 0>}
// CHECK:       %[[IF:.*]] = scf.if %[[C]] -> (tensor<f32>) {
// CHECK-NEXT:    scf.yield %[[V]] : tensor<f32>
// CHECK-NEXT:  } else {
// CHECK-NEXT:    scf.yield %[[R]] : tensor<f32>
// CHECK-NEXT:  }
// CHECK-NEXT:  return %[[IF]] : tensor<f32>
func.func @write_in_if(%r: !ember.resource<tensor<f32>>, %v: tensor<f32>, %c: i1) {
  scf.if %c {
    "ember.assign_variable"(%r, %v) : (!ember.resource<tensor<f32>>, tensor<f32>) -> ()
  }
  return
}

// -----

// A write inside an scf.while: the variable becomes one more loop-carried value (an init,
// an argument of both regions, forwarded by scf.condition, yielded by the body) and the
// loop's extra result is its value on exit. The body's assign_add adds to the carried value.
// CHECK-LABEL: func.func @write_in_while(
// CHECK-SAME:    %[[R:.*]]: tensor<f32>, %[[D:.*]]: tensor<f32>, %[[N:.*]]: tensor<i32>) -> (tensor<i32>, tensor<f32>)
// CHECK:       %[[W:.*]]:2 = scf.while (%[[I:.*]] = %{{.*}}, %[[CARRY:.*]] = %[[R]]) : (tensor<i32>, tensor<f32>) -> (tensor<i32>, tensor<f32>) {
// CHECK:         scf.condition(%{{.*}}) %[[I]], %[[CARRY]] : tensor<i32>, tensor<f32>
// CHECK:       } do {
// CHECK-NEXT:  ^bb0(%[[I2:.*]]: tensor<i32>, %[[CARRY2:.*]]: tensor<f32>):
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[CARRY2]], %[[D]] : tensor<f32>, tensor<f32>)
// CHECK:           arith.addf
// CHECK:         scf.yield %{{.*}}, %[[SUM]] : tensor<i32>, tensor<f32>
// CHECK:       return %[[W]]#0, %[[W]]#1 : tensor<i32>, tensor<f32>
func.func @write_in_while(%r: !ember.resource<tensor<f32>>, %d: tensor<f32>, %n: tensor<i32>) -> tensor<i32> {
  %zero = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %w = scf.while (%i = %zero) : (tensor<i32>) -> tensor<i32> {
    %lt = "ember.less"(%i, %n) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i : tensor<i32>
  } do {
  ^bb0(%i: tensor<i32>):
    %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %next = "ember.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "ember.assign_add_variable"(%r, %d) : (!ember.resource<tensor<f32>>, tensor<f32>) -> ()
    scf.yield %next : tensor<i32>
  }
  return %w : tensor<i32>
}

// -----

// ERR: :{{[0-9]+}}:{{[0-9]+}}: error: cannot lower the variables of @passes_variable: variable argument #0 is used by 'func.call'; only read/assign ops can use it after lowering (run ember-inline first)
func.func private @callee(!ember.resource<tensor<f32>>)
func.func @passes_variable(%r: !ember.resource<tensor<f32>>) -> tensor<f32> {
  func.call @callee(%r) : (!ember.resource<tensor<f32>>) -> ()
  %0 = "ember.read_variable"(%r) : (!ember.resource<tensor<f32>>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// ERR: :{{[0-9]+}}:{{[0-9]+}}: error: cannot lower 'ember.print': string tensors only run on the host (interpreter)
func.func @print_string(%s: tensor<!ember.string>) {
  "ember.print"(%s) {end = "\0A", format = "{}", stream = "stderr", summarize = 3 : i64} : (tensor<!ember.string>) -> ()
  return
}

// -----

// ERR: :{{[0-9]+}}:{{[0-9]+}}: error: cannot lower the variables of @write_in_execute_region: a variable is written inside 'scf.execute_region'; only scf.if and scf.while can carry variables out of regions
func.func @write_in_execute_region(%r: !ember.resource<tensor<f32>>, %v: tensor<f32>) {
  scf.execute_region {
    "ember.assign_variable"(%r, %v) : (!ember.resource<tensor<f32>>, tensor<f32>) -> ()
    scf.yield
  }
  return
}
