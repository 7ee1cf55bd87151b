// ember-gpu-libdevice: the libm functions Ember's lowering calls (lgamma has no math op)
// become direct calls of NVIDIA libdevice's __nv_ functions, which gpu-module-to-binary
// links into the kernels; other declarations stay.

// RUN: ember-opt %s -p 'builtin.module(ember-gpu-libdevice)' | FileCheck %s

// CHECK-NOT:   func.func private @lgammaf
// CHECK-DAG:   llvm.func @__nv_lgammaf(f32) -> f32
// CHECK-DAG:   llvm.func @__nv_lgamma(f64) -> f64
// CHECK-DAG:   func.func private @other(f32) -> f32
// CHECK-LABEL: func.func @f(
// CHECK:         %[[A:.*]] = llvm.call @__nv_lgammaf(%{{.*}}) : (f32) -> f32
// CHECK:         %[[B:.*]] = llvm.call @__nv_lgamma(%{{.*}}) : (f64) -> f64
// CHECK:         %[[C:.*]] = call @other(%[[A]]) : (f32) -> f32
// CHECK:         return %[[C]], %[[B]]
func.func private @lgammaf(f32) -> f32
func.func private @lgamma(f64) -> f64
func.func private @other(f32) -> f32
func.func @f(%x: f32, %y: f64) -> (f32, f64) {
  %a = func.call @lgammaf(%x) : (f32) -> f32
  %b = func.call @lgamma(%y) : (f64) -> f64
  %c = func.call @other(%a) : (f32) -> f32
  return %c, %b : f32, f64
}
