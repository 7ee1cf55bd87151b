// --emit-dot prints the module (after -p) as a Graphviz picture instead of IR: one cluster
// per function, a box per op with its name, op and result types, an edge per use labelled
// with the value's type, and clusters for the regions of scf ops.

// RUN: ember-opt %s -p 'builtin.module(func.func(ember-canonicalize))' --emit-dot | FileCheck %s

// CHECK-LABEL: digraph "module" {
// CHECK:       subgraph cluster_0 {
// CHECK-NEXT:    label="@f";
// CHECK-NEXT:    [[X:n[0-9]+]] [label="arg0\nargument 0: tensor<4xf32>", shape="ellipse"
// CHECK-NEXT:    [[P:n[0-9]+]] [label="arg1\nargument 1: tensor<i1>", shape="ellipse"
// CHECK-NEXT:    [[C:n[0-9]+]] [label="extract\ntensor.extract\n-> i1"];
// CHECK-NEXT:    subgraph cluster_1 {
// CHECK-NEXT:      label="if (scf.if)";
// CHECK-NEXT:      [[IF:n[0-9]+]] [label="if\nscf.if\n-> tensor<4xf32>"];
// CHECK-NEXT:      subgraph cluster_2 {
// CHECK-NEXT:        label="then";
// CHECK-NEXT:        [[NEG:n[0-9]+]] [label="neg\nember.neg\n-> tensor<4xf32>"];
// CHECK-NEXT:        [[Y:n[0-9]+]] [label="yield\nscf.yield"];
// CHECK-NEXT:      }
// CHECK-NEXT:      subgraph cluster_3 {
// CHECK-NEXT:        label="else";
// CHECK-NEXT:        [[Y1:n[0-9]+]] [label="yield_1\nscf.yield"];
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    [[R:n[0-9]+]] [label="Identity\nresult 0: tensor<4xf32>", shape="ellipse"
// CHECK-NEXT:  }
// The product by one is gone (ember-canonicalize ran first): x flows into the neg and the yield.
// CHECK-NOT:   ember.mul
// CHECK-DAG:   [[P]] -> [[C]] [label="tensor<i1>"];
// CHECK-DAG:   [[C]] -> [[IF]] [label="i1"];
// CHECK-DAG:   [[X]] -> [[NEG]] [label="tensor<4xf32>"];
// CHECK-DAG:   [[NEG]] -> [[Y]] [label="tensor<4xf32>"];
// CHECK-DAG:   [[X]] -> [[Y1]] [label="tensor<4xf32>"];
// CHECK-DAG:   [[Y]] -> [[IF]] [style=dashed, constraint=false];
// CHECK-DAG:   [[IF]] -> [[R]] [label="tensor<4xf32>"];
// CHECK:       }

func.func @f(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %c = tensor.extract %p[] : tensor<i1>
  %r = scf.if %c -> (tensor<4xf32>) {
    %one = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %y = "ember.mul"(%x, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %n = "ember.neg"(%y) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
