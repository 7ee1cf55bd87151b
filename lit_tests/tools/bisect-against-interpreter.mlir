// --bisect-against-interpreter runs the pipeline one pass at a time and evaluates the
// function on Ember's interpreter after each; the first pass whose output differs from the
// input's is named with the IR before and after it (exit 1), else every step agrees.
// RUN: rm -rf %t && mkdir -p %t
// RUN: env EMBER_REPRO_DIR=%t not ember-opt %s --load-pass-plugin=%S/Inputs/plugin_passes.py -p 'builtin.module(ember-canonicalize,func.func(ember-cse,test-plugin-swap-sub),ember-dce)' --bisect-against-interpreter --no-compiled 2>%t/err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t/err
// RUN: env EMBER_REPRO_DIR=%t not ember-opt %t/miscompile-*.mlir --run-reproducer --bisect-against-interpreter --load-pass-plugin=%S/Inputs/plugin_passes.py 2>&1 | FileCheck %s --check-prefix=AGAIN
// RUN: ember-opt %s -p 'builtin.module(ember-canonicalize,func.func(ember-cse),ember-dce)' --bisect-against-interpreter --seed 3 | FileCheck %s --check-prefix=AGREE
// RUN: not ember-opt %s --bisect-against-interpreter --function nope 2>&1 | FileCheck %s --check-prefix=NO-FN

// CHECK: miscompile: the output of @f first differs from the traced module's after 'func.func(test-plugin-swap-sub)': result #0 differs at index
// CHECK: reproducer: {{.*}}miscompile-{{[0-9a-f]+}}.mlir
// CHECK: run: ember-opt {{.*}} --run-reproducer --load-pass-plugin={{.*}}plugin_passes.py --bisect-against-interpreter --function f --inputs {{.*}}.npz
// CHECK: IR Before func.func(test-plugin-swap-sub)
// CHECK: "ember.sub"(%arg0, %arg1)
// CHECK: IR After func.func(test-plugin-swap-sub)
// CHECK: "ember.sub"(%arg1, %arg0)
// ERR: ember-opt: error: miscompile: @f differs after 'func.func(test-plugin-swap-sub)'

// AGAIN: miscompile: the output of @f first differs from the traced module's after 'func.func(test-plugin-swap-sub)'

// AGREE: every step agrees: @f on random inputs through 'builtin.module(ember-canonicalize,func.func(ember-cse),ember-dce)' and lowering and codegen

// NO-FN: ember-opt: error: the module has no function @nope; it has @f

// RUN: ember-opt %s -p 'builtin.module(ember-canonicalize,convert-ember-to-linalg)' --bisect-against-interpreter | FileCheck %s --check-prefix=UNCHECKED
// UNCHECKED: note: the interpreter cannot run the IR after 'convert-ember-to-linalg' ({{.*}}); the steps from there on were not checked
// UNCHECKED-NEXT: every checked step agrees: @f on random inputs through 'builtin.module(ember-canonicalize,convert-ember-to-linalg)'{{$}}

func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.sub"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "ember.sub"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "ember.mul"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = "ember.mul"(%2, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %3 : tensor<3xf32>
}
