// Transcendentals lower to plain arith (fastmath.py), not libm calls, so a fused chain of
// them becomes one vector loop (pinned to haswell: AVX2, <8 x float>). sin's argument
// reduction runs in f32 with fused multiply-adds below 2**20 (math.fma, the one math op
// left: LLVM's fma intrinsic, an instruction where the target has FMA), in f64 (<8 x
// double>) above; no tanhf/expf/sinf/... call or other math intrinsic is left anywhere.

// RUN: ember-compile %s --emit=linalg \
// RUN:   | FileCheck %s --check-prefix=LINALG --implicit-check-not='{{math\.([^f]|f[^m])}}'
// RUN: ember-compile %s --emit=llvmir --optimize --cpu=haswell --features=+avx2,+fma,+avx \
// RUN:   | FileCheck %s --check-prefix=LLVM --implicit-check-not=tanhf --implicit-check-not=expf \
// RUN:       --implicit-check-not=sinf --implicit-check-not=cosf --implicit-check-not=logf \
// RUN:       --implicit-check-not=log1pf --implicit-check-not=expm1f \
// RUN:       --implicit-check-not=@llvm.tanh --implicit-check-not=@llvm.exp \
// RUN:       --implicit-check-not=@llvm.sin --implicit-check-not=@llvm.cos \
// RUN:       --implicit-check-not=@llvm.log --implicit-check-not=@__ember_
// RUN: ember-compile %s --emit=asm --cpu=haswell --features=+avx2,+fma,+avx \
// RUN:   | FileCheck %s --check-prefix=ASM --implicit-check-not=tanhf \
// RUN:       --implicit-check-not=expf --implicit-check-not=sinf --implicit-check-not=cosf \
// RUN:       --implicit-check-not=logf

// Each function is built once per module as a private always-inline function that the
// loop body calls; LLVM inlines every call before vectorising (none is left in its IR).
// sin, cos and tanh are vectorised through their vector variants (cpu-sincos-variants.mlir,
// cpu-tanh-variant.mlir), inlined after vectorising: only their inlined blocks' labels keep
// the name.
// LINALG-LABEL: func.func @chain
// LINALG-COUNT-1: linalg.generic
// LINALG-NEXT:      ^bb0
// LINALG-NEXT:      func.call @__ember_tanh_f32
// LINALG-NEXT:      func.call @__ember_exp_f32
// LINALG-NEXT:      func.call @__ember_sin_f32
// LINALG-NEXT:      linalg.yield
// LINALG-LABEL: func.func private @__ember_tanh_f32(%{{.*}}: f32) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["alwaysinline"]}
// LINALG:           arith.bitcast
// LINALG-LABEL: func.func private @__ember_sin_f32(
// LINALG:           arith.extf {{.*}} : f32 to f64
// LINALG:           math.fma {{.*}} : f32

// LLVM-LABEL: define void @chain(
// LLVM:       vector.body:
//   tanh: |x| (the sign bit masked off, which LLVM recognises as fabs), then the small-|x|
//   polynomial
// LLVM:         call <8 x float> @llvm.fabs.v8f32
// LLVM:         fmul <8 x float>
//   tanh's exp(2|x|) scaled by 2**n built from bits, then 1 - 2/(e + 1)
// LLVM:         shl <8 x i32> {{.*}}, splat (i32 23)
// LLVM:         fdiv <8 x float> splat (float 2.000000e+00)
//   exp: the shifter 1.5 * 2**23 rounds x/ln2 to an integer
// LLVM:         fadd <8 x float> {{.*}}, splat (float 0x4168000000000000)
//   sin: Cody-Waite reduction in f64 for vectors with a lane >= 2**20, in f32 for the
//   others (x * 2/pi and the shifter in one fma), polynomials in f32, quadrant sign by xor
// LLVM:         fpext <8 x float> {{.*}} to <8 x double>
// LLVM:         fptrunc <8 x double> {{.*}} to <8 x float>
// LLVM:         @llvm.fma.v8f32(<8 x float> {{.*}}, <8 x float> splat (float 0x3FE45F3060000000)
// LLVM:         xor <8 x i32>
// LLVM:         store <8 x float>
// LLVM:         br i1 {{.*}}, label %middle.block, label %vector.body

// LLVM-LABEL: define void @others(
// LLVM:       vector.body:
// LLVM:         fmul <8 x float>
//   sigmoid's e/(1 + e) and log1p run in f64 and round once to f32
// LLVM:         fdiv <8 x double>
// LLVM:         fptrunc <8 x double> {{.*}} to <8 x float>
// LLVM:         store <8 x float>
// LLVM:         br i1 {{.*}}, label %middle.block, label %vector.body

// ASM-LABEL: chain:
// ASM:         vmulps {{.*}}%ymm
// ASM:         vdivps {{.*}}%ymm
// ASM:         vcvtps2pd {{.*}}%ymm
// ASM-LABEL: others:
// ASM:         vmulps {{.*}}%ymm
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = "ember.tanh"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = "ember.exp"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = "ember.sin"(%1) : (tensor<1024xf32>) -> tensor<1024xf32>
  return %2 : tensor<1024xf32>
}

func.func @others(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = "ember.cos"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = "ember.sigmoid"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = "ember.log"(%1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %3 = "ember.log1p"(%2) : (tensor<1024xf32>) -> tensor<1024xf32>
  %4 = "ember.expm1"(%3) : (tensor<1024xf32>) -> tensor<1024xf32>
  return %4 : tensor<1024xf32>
}
