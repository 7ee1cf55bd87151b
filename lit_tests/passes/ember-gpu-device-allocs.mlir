// ember-gpu-device-allocs: the host functions of a CUDA module allocate in managed memory
// (gpu.alloc host_shared, which gpu-to-llvm lowers to mgpuMemAlloc(size, stream, 1)) and
// free with an async gpu.dealloc between gpu.waits (the synchronous form has no lowering);
// functions inside gpu.module (the kernels) keep their allocations. Host constants that a
// launch takes are copied into managed memory first (kernels cannot read host memory).

// RUN: ember-opt %s -p 'builtin.module(ember-gpu-device-allocs)' | FileCheck %s
// RUN: ember-opt %s -p 'builtin.module(ember-gpu-device-allocs)' --pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: ember-opt %s -p 'builtin.module(ember-gpu-device-allocs,gpu.module(convert-gpu-to-nvvm),gpu-to-llvm)' | FileCheck %s --check-prefix=LLVM

// STATS: ember-gpu-device-allocs:
// STATS-DAG:   allocs: 2
// STATS-DAG:   deallocs: 1
// STATS-DAG:   globals: 1

// CHECK-LABEL: func.func @host(
// CHECK-SAME:    %[[N:.*]]: index
// CHECK-NOT:     memref.alloc
// CHECK:         %[[S:.*]] = gpu.alloc  host_shared () : memref<4x8xf32>
// CHECK:         %[[D:.*]] = gpu.alloc  host_shared (%[[N]]) : memref<?xf32>
// CHECK:         %[[T:.*]] = gpu.wait async
// CHECK:         %[[F:.*]] = gpu.dealloc async [%[[T]]] %[[D]] : memref<?xf32>
// CHECK:         gpu.wait [%[[F]]]
// CHECK-NOT:     memref.dealloc
// CHECK:         return %[[S]]
// CHECK-LABEL: func.func @constant(
// CHECK:         %[[G:.*]] = memref.get_global @c
// CHECK:         %[[B:.*]] = gpu.alloc  host_shared () : memref<3xf32>
// CHECK:         memref.copy %[[G]], %[[B]]
// CHECK:         gpu.launch_func  @kernels::@k {{.*}} args(%[[B]] : memref<3xf32>)
// CHECK:         memref.load %[[G]]
// CHECK:         gpu.dealloc async {{.*}} %[[B]]
// CHECK:         return
// CHECK:       gpu.module @kernels
// CHECK:         memref.alloca
// LLVM-DAG: llvm.call @mgpuMemAlloc
// LLVM-DAG: llvm.call @mgpuMemFree
module attributes {gpu.container_module} {
  func.func @host(%n: index) -> memref<4x8xf32> {
    %s = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    %d = memref.alloc(%n) : memref<?xf32>
    memref.dealloc %d : memref<?xf32>
    return %s : memref<4x8xf32>
  }
  memref.global "private" constant @c : memref<3xf32> = dense<[1.0, 2.0, 3.0]>
  func.func @constant() -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %g = memref.get_global @c : memref<3xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%g : memref<3xf32>)
    %v = memref.load %g[%c0] : memref<3xf32>
    return %v : f32
  }
  gpu.module @kernels {
    gpu.func @k(%arg0: memref<3xf32>) kernel {
      %a = memref.alloca() : memref<4xf32>
      gpu.return
    }
  }
}
