// --ir-diff-report writes one HTML page of what each pass of -p did: a table of contents
// (pass, what it ran on, time, lines changed, statistics), then per pass its diff, folded
// when it changed nothing. The printed IR is the same as without the flag.

// RUN: ember-opt %s -p 'builtin.module(func.func(ember-canonicalize),ember-cse,ember-dce)' --ir-diff-report=%t.html | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s < %t.html

// IR-LABEL: func.func @f
// IR-NEXT:    "ember.neg"(%arg0)
// IR-NEXT:    "ember.mul"(%0, %0)

// CHECK-LABEL: <table class="toc">
// CHECK:       <tr class="changed"><td>1</td><td class="name"><a href="#r0-p1">ember-canonicalize</a></td><td>@f</td>
// CHECK-SAME:  <td>add-zero:&nbsp;1</td></tr>
// CHECK-NEXT:  <tr class="changed"><td>2</td><td class="name"><a href="#r0-p2">ember-cse</a></td><td>module</td>
// CHECK-SAME:  <td>eliminated:&nbsp;1</td></tr>
// CHECK-NEXT:  <tr class="unchanged"><td>3</td><td class="name"><a href="#r0-p3">ember-dce</a></td><td>module</td>
// CHECK-SAME:  <td>no change</td>
// CHECK:       <section class="pass changed" id="r0-p1"><details class="pass" open>
// CHECK:       <tr class="sub"><td class="num">4</td><td>    %1 = &quot;ember.add&quot;(%arg0, %0)
// CHECK:       <section class="pass unchanged" id="r0-p3"><details class="pass">

func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %z = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %y = "ember.add"(%x, %z) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %a = "ember.neg"(%y) : (tensor<4xi32>) -> tensor<4xi32>
  %b = "ember.neg"(%y) : (tensor<4xi32>) -> tensor<4xi32>
  %s = "ember.mul"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %s : tensor<4xi32>
}
