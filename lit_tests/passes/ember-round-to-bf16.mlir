// ember-round-to-bf16 rounds f32 to bf16 with integer operations (nearest even on the bit
// pattern, a quiet NaN for NaN), so no `fptrunc` reaches LLVM, whose AVX512-BF16 lowering
// flushes denormals; it drops the `contract` flag the bf16 emulation puts on conversions.

// RUN: ember-opt %s -p ember-round-to-bf16 | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-NOT:     arith.truncf
// CHECK:         %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:         arith.constant 32767 : i32
// CHECK:         arith.cmpf uno
// CHECK:         arith.select
// CHECK:         arith.bitcast %{{.*}} : i16 to bf16
// CHECK:         arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT:     contract
func.func @f(%x: f32) -> f32 {
  %r = arith.truncf %x fastmath<contract> : f32 to bf16
  %e = arith.extf %r fastmath<contract> : bf16 to f32
  return %e : f32
}
