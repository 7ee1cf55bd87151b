// Round trip of the stateful ops on `!ember.resource<tensor<...>>` function arguments
// (read_variable, assign_variable, assign_add_variable, assign_sub_variable), of ember.print
// (format with one `{}`, `end`, stream stderr or stdout) and of ember.assert. These ops have side effects: the
// output keeps every one of them, in order.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @read_variable(
// CHECK-SAME:    %[[R:.*]]: !ember.resource<tensor<2xf32>>, %[[D:.*]]: !ember.resource<tensor<?x3xi64>>)
// CHECK:       %[[V0:.*]] = "ember.read_variable"(%[[R]]) : (!ember.resource<tensor<2xf32>>) -> tensor<2xf32>
// CHECK:       %[[V1:.*]] = "ember.read_variable"(%[[D]]) : (!ember.resource<tensor<?x3xi64>>) -> tensor<?x3xi64>
// CHECK:       return %[[V0]], %[[V1]] : tensor<2xf32>, tensor<?x3xi64>
// GENERIC-LABEL: sym_name = "read_variable"
// GENERIC:       "ember.read_variable"({{.*}}) : (!ember.resource<tensor<2xf32>>) -> tensor<2xf32>
// GENERIC:       "ember.read_variable"({{.*}}) : (!ember.resource<tensor<?x3xi64>>) -> tensor<?x3xi64>
func.func @read_variable(%r: !ember.resource<tensor<2xf32>>, %d: !ember.resource<tensor<?x3xi64>>) -> (tensor<2xf32>, tensor<?x3xi64>) {
  %0 = "ember.read_variable"(%r) : (!ember.resource<tensor<2xf32>>) -> tensor<2xf32>
  %1 = "ember.read_variable"(%d) : (!ember.resource<tensor<?x3xi64>>) -> tensor<?x3xi64>
  return %0, %1 : tensor<2xf32>, tensor<?x3xi64>
}

// A value with a static shape fits a variable with a dynamic one, and the other way round.
// CHECK-LABEL: func.func @assign_variable(
// CHECK-SAME:    %[[R:.*]]: !ember.resource<tensor<2xf32>>, %[[V:.*]]: tensor<2xf32>, %[[D:.*]]: !ember.resource<tensor<?xf32>>, %[[W:.*]]: tensor<?xf32>)
// CHECK:       "ember.assign_variable"(%[[R]], %[[V]]) : (!ember.resource<tensor<2xf32>>, tensor<2xf32>) -> ()
// CHECK:       "ember.assign_variable"(%[[D]], %[[V]]) : (!ember.resource<tensor<?xf32>>, tensor<2xf32>) -> ()
// CHECK:       "ember.assign_variable"(%[[R]], %[[W]]) : (!ember.resource<tensor<2xf32>>, tensor<?xf32>) -> ()
// CHECK:       return
// GENERIC-LABEL: sym_name = "assign_variable"
// GENERIC:       "ember.assign_variable"({{.*}}) : (!ember.resource<tensor<2xf32>>, tensor<2xf32>) -> ()
// GENERIC:       "ember.assign_variable"({{.*}}) : (!ember.resource<tensor<?xf32>>, tensor<2xf32>) -> ()
// GENERIC:       "ember.assign_variable"({{.*}}) : (!ember.resource<tensor<2xf32>>, tensor<?xf32>) -> ()
func.func @assign_variable(%r: !ember.resource<tensor<2xf32>>, %v: tensor<2xf32>, %d: !ember.resource<tensor<?xf32>>, %w: tensor<?xf32>) {
  "ember.assign_variable"(%r, %v) : (!ember.resource<tensor<2xf32>>, tensor<2xf32>) -> ()
  "ember.assign_variable"(%d, %v) : (!ember.resource<tensor<?xf32>>, tensor<2xf32>) -> ()
  "ember.assign_variable"(%r, %w) : (!ember.resource<tensor<2xf32>>, tensor<?xf32>) -> ()
  return
}

// Variables of any dtype can be assigned, strings and booleans included.
// CHECK-LABEL: func.func @assign_variable_strings_bools(
// CHECK-SAME:    %[[S:.*]]: !ember.resource<tensor<!ember.string>>, %[[V:.*]]: tensor<!ember.string>, %[[B:.*]]: !ember.resource<tensor<3xi1>>, %[[W:.*]]: tensor<3xi1>)
// CHECK:       "ember.assign_variable"(%[[S]], %[[V]]) : (!ember.resource<tensor<!ember.string>>, tensor<!ember.string>) -> ()
// CHECK:       "ember.assign_variable"(%[[B]], %[[W]]) : (!ember.resource<tensor<3xi1>>, tensor<3xi1>) -> ()
// CHECK:       return
// GENERIC-LABEL: sym_name = "assign_variable_strings_bools"
// GENERIC:       "ember.assign_variable"({{.*}}) : (!ember.resource<tensor<!ember.string>>, tensor<!ember.string>) -> ()
// GENERIC:       "ember.assign_variable"({{.*}}) : (!ember.resource<tensor<3xi1>>, tensor<3xi1>) -> ()
func.func @assign_variable_strings_bools(%s: !ember.resource<tensor<!ember.string>>, %v: tensor<!ember.string>, %b: !ember.resource<tensor<3xi1>>, %w: tensor<3xi1>) {
  "ember.assign_variable"(%s, %v) : (!ember.resource<tensor<!ember.string>>, tensor<!ember.string>) -> ()
  "ember.assign_variable"(%b, %w) : (!ember.resource<tensor<3xi1>>, tensor<3xi1>) -> ()
  return
}

// CHECK-LABEL: func.func @assign_add_variable(
// CHECK-SAME:    %[[R:.*]]: !ember.resource<tensor<i32>>, %[[V:.*]]: tensor<i32>, %[[D:.*]]: !ember.resource<tensor<?x2xbf16>>, %[[W:.*]]: tensor<?x2xbf16>)
// CHECK:       "ember.assign_add_variable"(%[[R]], %[[V]]) : (!ember.resource<tensor<i32>>, tensor<i32>) -> ()
// CHECK:       "ember.assign_add_variable"(%[[D]], %[[W]]) : (!ember.resource<tensor<?x2xbf16>>, tensor<?x2xbf16>) -> ()
// CHECK:       return
// GENERIC-LABEL: sym_name = "assign_add_variable"
// GENERIC:       "ember.assign_add_variable"({{.*}}) : (!ember.resource<tensor<i32>>, tensor<i32>) -> ()
// GENERIC:       "ember.assign_add_variable"({{.*}}) : (!ember.resource<tensor<?x2xbf16>>, tensor<?x2xbf16>) -> ()
func.func @assign_add_variable(%r: !ember.resource<tensor<i32>>, %v: tensor<i32>, %d: !ember.resource<tensor<?x2xbf16>>, %w: tensor<?x2xbf16>) {
  "ember.assign_add_variable"(%r, %v) : (!ember.resource<tensor<i32>>, tensor<i32>) -> ()
  "ember.assign_add_variable"(%d, %w) : (!ember.resource<tensor<?x2xbf16>>, tensor<?x2xbf16>) -> ()
  return
}

// CHECK-LABEL: func.func @assign_sub_variable(
// CHECK-SAME:    %[[R:.*]]: !ember.resource<tensor<3xf64>>, %[[V:.*]]: tensor<3xf64>, %[[D:.*]]: !ember.resource<tensor<?xui8>>, %[[W:.*]]: tensor<4xui8>)
// CHECK:       "ember.assign_sub_variable"(%[[R]], %[[V]]) : (!ember.resource<tensor<3xf64>>, tensor<3xf64>) -> ()
// CHECK:       "ember.assign_sub_variable"(%[[D]], %[[W]]) : (!ember.resource<tensor<?xui8>>, tensor<4xui8>) -> ()
// CHECK:       return
// GENERIC-LABEL: sym_name = "assign_sub_variable"
// GENERIC:       "ember.assign_sub_variable"({{.*}}) : (!ember.resource<tensor<3xf64>>, tensor<3xf64>) -> ()
// GENERIC:       "ember.assign_sub_variable"({{.*}}) : (!ember.resource<tensor<?xui8>>, tensor<4xui8>) -> ()
func.func @assign_sub_variable(%r: !ember.resource<tensor<3xf64>>, %v: tensor<3xf64>, %d: !ember.resource<tensor<?xui8>>, %w: tensor<4xui8>) {
  "ember.assign_sub_variable"(%r, %v) : (!ember.resource<tensor<3xf64>>, tensor<3xf64>) -> ()
  "ember.assign_sub_variable"(%d, %w) : (!ember.resource<tensor<?xui8>>, tensor<4xui8>) -> ()
  return
}

// Read-modify-write: every effect stays, in program order.
// CHECK-LABEL: func.func @read_assign_read(
// CHECK-SAME:    %[[R:.*]]: !ember.resource<tensor<4xf32>>, %[[DELTA:.*]]: tensor<4xf32>)
// CHECK:       %[[BEFORE:.*]] = "ember.read_variable"(%[[R]]) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
// CHECK:       "ember.assign_add_variable"(%[[R]], %[[DELTA]]) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
// CHECK:       "ember.assign_sub_variable"(%[[R]], %[[DELTA]]) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
// CHECK:       "ember.assign_variable"(%[[R]], %[[BEFORE]]) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
// CHECK:       %[[AFTER:.*]] = "ember.read_variable"(%[[R]]) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
// CHECK:       return %[[BEFORE]], %[[AFTER]] : tensor<4xf32>, tensor<4xf32>
// GENERIC-LABEL: sym_name = "read_assign_read"
// GENERIC:       "ember.read_variable"({{.*}}) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
// GENERIC:       "ember.assign_add_variable"({{.*}}) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
// GENERIC:       "ember.assign_sub_variable"({{.*}}) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
// GENERIC:       "ember.assign_variable"({{.*}}) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
// GENERIC:       "ember.read_variable"({{.*}}) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
func.func @read_assign_read(%r: !ember.resource<tensor<4xf32>>, %delta: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %before = "ember.read_variable"(%r) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  "ember.assign_add_variable"(%r, %delta) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
  "ember.assign_sub_variable"(%r, %delta) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
  "ember.assign_variable"(%r, %before) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
  %after = "ember.read_variable"(%r) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
  return %before, %after : tensor<4xf32>, tensor<4xf32>
}

// `end` is printed with MLIR's string escapes ("\0A" is a newline); summarize -1 shows all.
// CHECK-LABEL: func.func @print(
// CHECK-SAME:    %[[X:.*]]: tensor<3xi32>, %[[D:.*]]: tensor<?x2xf32>, %[[S:.*]]: tensor<!ember.string>)
// CHECK:       "ember.print"(%[[X]]) {end = "\0A", format = "x = {}", stream = "stderr", summarize = 3 : i64} : (tensor<3xi32>) -> ()
// CHECK:       "ember.print"(%[[D]]) {end = "", format = "{}", stream = "stdout", summarize = -1 : i64} : (tensor<?x2xf32>) -> ()
// CHECK:       "ember.print"(%[[S]]) {end = " | ", format = "[{}] \22quoted\22", stream = "stdout", summarize = 3 : i64} : (tensor<!ember.string>) -> ()
// CHECK:       "ember.print"(%[[X]]) {end = "\0A", format = "x = {}", stream = "stderr", summarize = 3 : i64} : (tensor<3xi32>) -> ()
// CHECK:       return
// GENERIC-LABEL: sym_name = "print"
// GENERIC:       "ember.print"({{.*}}) {end = "\0A", format = "x = {}", stream = "stderr", summarize = 3 : i64} : (tensor<3xi32>) -> ()
// GENERIC:       "ember.print"({{.*}}) {end = "", format = "{}", stream = "stdout", summarize = -1 : i64} : (tensor<?x2xf32>) -> ()
// GENERIC:       "ember.print"({{.*}}) {end = " | ", format = "[{}] \22quoted\22", stream = "stdout", summarize = 3 : i64} : (tensor<!ember.string>) -> ()
// GENERIC:       "ember.print"({{.*}}) {end = "\0A", format = "x = {}", stream = "stderr", summarize = 3 : i64} : (tensor<3xi32>) -> ()
func.func @print(%x: tensor<3xi32>, %d: tensor<?x2xf32>, %s: tensor<!ember.string>) {
  "ember.print"(%x) {end = "\0A", format = "x = {}", stream = "stderr", summarize = 3 : i64} : (tensor<3xi32>) -> ()
  "ember.print"(%d) {end = "", format = "{}", stream = "stdout", summarize = -1 : i64} : (tensor<?x2xf32>) -> ()
  "ember.print"(%s) {end = " | ", format = "[{}] \22quoted\22", stream = "stdout", summarize = 3 : i64} : (tensor<!ember.string>) -> ()
  "ember.print"(%x) {end = "\0A", format = "x = {}", stream = "stderr", summarize = 3 : i64} : (tensor<3xi32>) -> ()
  return
}

// ember.assert checks a bool tensor of any shape; it has an effect: it stays, in order.
// CHECK-LABEL: func.func @assert(
// CHECK-SAME:    %[[C:.*]]: tensor<i1>, %[[V:.*]]: tensor<?xi1>)
// CHECK:       "ember.assert"(%[[C]]) {message = "x must be positive"} : (tensor<i1>) -> ()
// CHECK:       "ember.assert"(%[[V]]) {message = "all \22ok\22"} : (tensor<?xi1>) -> ()
// GENERIC-LABEL: sym_name = "assert"
// GENERIC:       "ember.assert"({{.*}}) {message = "x must be positive"} : (tensor<i1>) -> ()
func.func @assert(%c: tensor<i1>, %v: tensor<?xi1>) {
  "ember.assert"(%c) {message = "x must be positive"} : (tensor<i1>) -> ()
  "ember.assert"(%v) {message = "all \22ok\22"} : (tensor<?xi1>) -> ()
  return
}
