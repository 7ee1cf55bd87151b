// An out-of-tree pass loaded from a Python file: its options parse, it nests with Ember's
// and upstream passes, and a missing or broken plugin is a one-line error.
// RUN: ember-opt %s --load-pass-plugin=%S/Inputs/plugin_passes.py -p 'builtin.module(ember-canonicalize,test-plugin-rename{prefix=p_},cse)' | FileCheck %s
// RUN: not ember-opt %s --load-pass-plugin=%S/Inputs/missing.py 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not ember-opt %s --load-pass-plugin=%s 2>&1 | FileCheck %s --check-prefix=NOT-PY
// RUN: not ember-opt %s -p 'builtin.module(test-plugin-rename)' 2>&1 | FileCheck %s --check-prefix=UNLOADED

// CHECK-LABEL: func.func @p_f(
// CHECK: "ember.add"
// MISSING: ember-opt: error: pass plugin '{{.*}}missing.py' does not exist
// NOT-PY: ember-opt: error: pass plugin '{{.*}}load-pass-plugin.mlir' is not a Python file (.py)
// UNLOADED: error: invalid pass pipeline: {{.*}}test-plugin-rename

func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.add"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
