// A failing pass writes a reproducer (MLIR's local crash reproducer: the IR before the
// failing pass, that pass embedded as mlir_reproducer), whose path and command the error
// names; `--run-reproducer` runs the embedded pipeline and fails the same way.
// RUN: rm -rf %t && mkdir -p %t
// RUN: env EMBER_REPRO_DIR=%t not ember-opt %s --load-pass-plugin=%S/Inputs/plugin_passes.py -p 'builtin.module(test-plugin-rename,ember-canonicalize,func.func(test-plugin-fail-on-mul),cse)' 2>&1 | FileCheck %s
// RUN: cat %t/repro-*.mlir | FileCheck %s --check-prefix=EMBEDDED
// RUN: env EMBER_REPRO_DIR=%t not ember-opt %t/repro-*.mlir --run-reproducer --load-pass-plugin=%S/Inputs/plugin_passes.py 2>&1 | FileCheck %s --check-prefix=AGAIN
// RUN: not ember-opt %s --run-reproducer 2>&1 | FileCheck %s --check-prefix=NO-PIPELINE
// RUN: env EMBER_REPRO_DIR=off not ember-opt %s --load-pass-plugin=%S/Inputs/plugin_passes.py -p 'builtin.module(func.func(test-plugin-fail-on-mul))' 2>&1 | FileCheck %s --check-prefix=OFF

// CHECK: error: test-plugin-fail-on-mul met an ember.mul
// CHECK-NEXT: note: reproducer written to [[FILE:.*repro-[0-9a-f]+\.mlir]]; rerun with: ember-opt [[FILE]] --run-reproducer --load-pass-plugin={{.*}}plugin_passes.py

// EMBEDDED: {-#
// EMBEDDED-NEXT: external_resources: {
// EMBEDDED-NEXT: mlir_reproducer: {
// EMBEDDED-NEXT: pipeline: "builtin.module(func.func(test-plugin-fail-on-mul))",
// EMBEDDED-NEXT: disable_threading: true,
// EMBEDDED-NEXT: verify_each: true
// EMBEDDED: #-}
// EMBEDDED: func.func @plugin_f(
// EMBEDDED: "ember.mul"

// AGAIN: error: test-plugin-fail-on-mul met an ember.mul

// NO-PIPELINE: ember-opt: error: the input has no '{-# external_resources: { mlir_reproducer:

// OFF: error: test-plugin-fail-on-mul met an ember.mul
// OFF-NOT: reproducer

func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.add"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "ember.mul"(%0, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
