// ember-gpu-device-allocs: the host functions of a CUDA module allocate in managed memory
// (gpu.alloc host_shared, which gpu-to-llvm lowers to mgpuMemAlloc(size, stream, 1)) and
// free with an async gpu.dealloc between gpu.waits (the synchronous form has no lowering);
// functions inside gpu.module (the kernels) keep their allocations.

// RUN: ember-opt %s -p 'builtin.module(ember-gpu-device-allocs)' | FileCheck %s
// RUN: ember-opt %s -p 'builtin.module(ember-gpu-device-allocs)' --pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: ember-opt %s -p 'builtin.module(ember-gpu-device-allocs,gpu-to-llvm)' | FileCheck %s --check-prefix=LLVM

// STATS: ember-gpu-device-allocs:
// STATS-DAG:   allocs: 2
// STATS-DAG:   deallocs: 1

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
  gpu.module @kernels {
    gpu.func @k() kernel {
      %a = memref.alloca() : memref<4xf32>
      gpu.return
    }
  }
}
