// --opt-bisect-limit=N applies only the first N pass applications (ember and upstream,
// nested ones once per function) and prints each decision as LLVM's opt-bisect does.
// RUN: ember-opt %s --opt-bisect-limit=2 -p 'builtin.module(ember-canonicalize,func.func(ember-cse),cse,ember-dce)' 2>&1 | FileCheck %s
// RUN: ember-opt %s --opt-bisect-limit=-1 -p 'builtin.module(func.func(ember-cse))' 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: ember-opt %s --opt-bisect-limit=0 -p 'builtin.module(func.func(ember-cse))' 2>&1 | FileCheck %s --check-prefix=NONE

// CHECK: BISECT: running pass (1) ember-canonicalize on builtin.module
// CHECK-NEXT: BISECT: running pass (2) ember-cse on func.func (@f)
// CHECK-NEXT: BISECT: NOT running pass (3) ember-cse on func.func (@g)
// CHECK-NEXT: BISECT: NOT running pass (4) cse on builtin.module
// CHECK-NEXT: BISECT: NOT running pass (5) ember-dce on builtin.module
// CHECK-LABEL: func.func @f(
// CHECK-COUNT-1: "ember.add"
// CHECK-LABEL: func.func @g(
// CHECK-COUNT-2: "ember.add"

// ALL: BISECT: running pass (1) ember-cse on func.func (@f)
// ALL-NEXT: BISECT: running pass (2) ember-cse on func.func (@g)
// NONE: BISECT: NOT running pass (1) ember-cse on func.func (@f)
// NONE-NEXT: BISECT: NOT running pass (2) ember-cse on func.func (@g)

func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.add"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "ember.add"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "ember.mul"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}

func.func @g(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.add"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "ember.add"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "ember.mul"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}
