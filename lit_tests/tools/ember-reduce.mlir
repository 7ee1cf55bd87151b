// ember-reduce shrinks a module while an interestingness test still exits with 1
// (mlir-reduce's convention): here, while the module holds an `ember.tanh`. The test runs as
// `SCRIPT [--test-arg ...] FILE`, the candidate's path last; `sh -c` makes a one-line script.

// RUN: ember-reduce %s --test sh --test-arg=-c \
// RUN:   --test-arg='grep -q ember.tanh "$0" && exit 1; exit 0' 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=PROGRESS < %t.err
// RUN: ember-reduce %s -o %t.out --test sh --test-arg=-c \
// RUN:   --test-arg='test "$1" = first && grep -q ember.tanh "$2" && exit 1; exit 0' \
// RUN:   --test-arg=sh --test-arg=first && FileCheck %s < %t.out

// Everything else goes: @unused, the constant, the scf.if around the tanh (inlined), the
// other ops (new function arguments stand in for their results), the unused arguments.
// CHECK:      module {
// CHECK-NEXT:   func.func @f(%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     "ember.tanh"(%[[B]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     return %[[A]] : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// PROGRESS:   ember-reduce: ops: 14 -> {{.*}} -> 3 ({{[0-9]+}} tests)

// A test that finds everything interesting (`false` exits with 1) leaves an empty module, as
// mlir-reduce does; mlir-reduce's own spelling of the test is accepted too.
// RUN: ember-reduce %s --test false | FileCheck %s --check-prefix=EMPTY
// RUN: ember-reduce %s -reduction-tree='traversal-mode=0 test=false' \
// RUN:   | FileCheck %s --check-prefix=EMPTY
// EMPTY:      module {
// EMPTY-NEXT: }

// A test that finds the input boring, one that does not exist, a traversal mode upstream
// lacks, no test, ops of unknown dialects (unless --allow-unregistered-dialect, as in
// mlir-reduce), and input that does not verify: an error each, exit status 1.
// RUN: not ember-reduce %s --test true 2>&1 | FileCheck %s --check-prefix=BORING
// BORING: ember-reduce: error: the input is not interesting: 'true' exited with status 0 on it
// RUN: not ember-reduce %s --test %t.no-such-script 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: ember-reduce: error: the interestingness test '{{.*}}.no-such-script' does not exist
// RUN: not ember-reduce %s -reduction-tree='traversal-mode=1 test=false' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MODE
// MODE: ember-reduce: error: -reduction-tree: traversal-mode=1 is not supported; only 0
// RUN: not ember-reduce %s 2>&1 | FileCheck %s --check-prefix=NOTEST
// NOTEST: ember-reduce: error: no interestingness test: give --test SCRIPT
// RUN: echo 'func.func @h(%%x: i32) -> i32 { %%0 = "mystery.op"(%%x) : (i32) -> i32  %%1 = "mystery.op"(%%0) : (i32) -> i32  return %%1 : i32 }' > %t.unregistered.mlir
// RUN: not ember-reduce %t.unregistered.mlir --test false 2>&1 | FileCheck %s --check-prefix=UNREGISTERED
// UNREGISTERED: error: operation being parsed with an unregistered dialect
// RUN: ember-reduce %t.unregistered.mlir --allow-unregistered-dialect --test sh --test-arg=-c \
// RUN:   --test-arg='grep -q mystery.op "$0" && exit 1; exit 0' | FileCheck %s --check-prefix=ALLOW
// ALLOW:      func.func @h(%[[X:.*]]: i32) -> i32 {
// ALLOW-NEXT:   %[[R:.*]] = "mystery.op"(%[[X]]) : (i32) -> i32
// ALLOW-NEXT:   return %[[R]] : i32
// RUN: echo 'func.func @g(%%x: tensor<4xf32>) -> tensor<2xf32> { %%0 = "ember.neg"(%%x) : (tensor<4xf32>) -> tensor<2xf32>  return %%0 : tensor<2xf32> }' > %t.bad.mlir
// RUN: not ember-reduce %t.bad.mlir --test false 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: bad.mlir:1:{{[0-9]+}}: error: 'ember.neg' op result #0 has type tensor<2xf32>

func.func @unused(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @f(%x: tensor<4xf32>, %flag: i1) -> tensor<4xf32> {
  %c = "ember.constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "ember.add"(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %dead = "ember.sigmoid"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = scf.if %flag -> (tensor<4xf32>) {
    %n = "ember.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %t = "ember.tanh"(%n) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  } else {
    scf.yield %0 : tensor<4xf32>
  }
  %2 = "ember.mul"(%1, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
