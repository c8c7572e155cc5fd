#pragma once

// The PTX vocabulary the kernels are written in: TMA, mbarrier, wgmma, register
// reconfiguration, conversions. No CUDA toolkit header is included, so NVRTC
// compiles these from memory with nothing installed beside the library.

namespace fp8gemm_dev {

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// The driver's CUtensorMap: 128 opaque bytes, 64-byte aligned. Kernels take it as a
// `const __grid_constant__` parameter and hand its generic address to TMA.
struct alignas(64) TensorMap {
  u64 opaque[16];
};

__device__ __forceinline__ int imin(int a, int b) { return a < b ? a : b; }
__device__ __forceinline__ int imax(int a, int b) { return a > b ? a : b; }

// Shared-state-space address of a generic pointer into shared memory.
__device__ __forceinline__ u32 smem_addr(const void* p) {
  u32 r;
  asm("{\n .reg .u64 a;\n cvta.to.shared.u64 a, %1;\n cvt.u32.u64 %0, a;\n}" : "=r"(r) : "l"(p));
  return r;
}

__device__ __forceinline__ float ld_shared_f32(u32 addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
  return v;
}

__device__ __forceinline__ void st_shared_f32(u32 addr, float v) {
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(v) : "memory");
}

// Read-only global load (inputs never change during a kernel).
__device__ __forceinline__ int ldg_s32(const int* p) {
  int v;
  asm("ld.global.nc.s32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ float ldg_f32(const float* p) {
  float v;
  asm("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

// Two fp32 values to a packed bf16 pair, round to nearest even; `lo` lands at the
// lower address.
__device__ __forceinline__ u32 pack_bf16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ void st_global_u32(void* p, u32 v) {
  asm volatile("st.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// ---------------------------------------------------------------------------
// mbarrier
// ---------------------------------------------------------------------------

__device__ __forceinline__ void mbar_init(u32 bar, u32 arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}

// Makes barrier initialization visible to the async proxy (TMA) and the cluster.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// A compile-time int as a value (for generic lambdas instantiated per count).
template <int V>
struct IntConstant {
  static constexpr int value = V;
};

// Blocks until the phase with the given parity has completed.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
  asm volatile(
      "{\n"
      " .reg .pred done;\n"
      "FP8GEMM_WAIT:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra FP8GEMM_WAIT;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// The same for a thread that waits long and is not in a hurry (a weight-gradient storer
// waits a whole tile): it sleeps between tries, so that its spinning does not take issue
// slots from the math warps on the same scheduler.
__device__ __forceinline__ void mbar_wait_sleeping(u32 bar, u32 parity) {
  u32 done = 0;
  for (;;) {
    asm volatile(
        "{\n"
        " .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    if (done) return;
    __nanosleep(500);
  }
}

// ---------------------------------------------------------------------------
// TMA
// ---------------------------------------------------------------------------

__device__ __forceinline__ void prefetch_tensor_map(const TensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(map)) : "memory");
}

// Loads the box at coordinates (c0 innermost, c1) into shared memory at `dst`; the
// bytes are counted on barrier `bar`. Out-of-range elements arrive as zeros.
__device__ __forceinline__ void tma_load_2d(u32 dst, const TensorMap* map, u32 bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}

// The same load written into the shared memory of every CTA of the cluster named in
// `cta_mask`, at the same offsets, each CTA's barrier counting its bytes.
__device__ __forceinline__ void tma_load_2d_multicast(u32 dst, const TensorMap* map, u32 bar, int c0, int c1,
                                                      u16 cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask)
      : "memory");
}

// Stores the box at coordinates (c0 innermost, c1) from shared memory at `src`;
// out-of-range elements are not written. Completion is tracked per bulk group.
__device__ __forceinline__ void tma_store_2d(const TensorMap* map, u32 src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   reinterpret_cast<u64>(map)),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}

// 3D forms (c2 outermost): the k-grouped weight gradient's D and C, [groups, M, N], so
// that a box clipped at one group's last row never reaches into the next group.
__device__ __forceinline__ void tma_load_3d(u32 dst, const TensorMap* map, u32 bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

__device__ __forceinline__ void tma_store_3d(const TensorMap* map, u32 src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<u64>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until this thread's committed bulk stores have read their shared memory
// (the buffer may be rewritten) ...
__device__ __forceinline__ void bulk_wait_group_read0() {
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

// ... or have completed (their writes are done).
__device__ __forceinline__ void bulk_wait_group0() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// Makes this thread's generic-proxy shared-memory writes visible to the async proxy
// (a TMA store that reads them next).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Barrier `id` (1..15; 0 is __syncthreads) among `threads` threads.
__device__ __forceinline__ void named_barrier_sync(u32 id, u32 threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Stores four 8x8 matrices of 16-bit values from the warp's registers: thread t holds, in
// r_q, the pair (row t / 4, columns 2 (t % 4), +1) of matrix q (the mma accumulator layout)
// and gives the shared address of row t % 8 of matrix t / 8 (16 contiguous bytes).
__device__ __forceinline__ void stmatrix_x4(u32 addr, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

// ---------------------------------------------------------------------------
// Clusters
// ---------------------------------------------------------------------------

__device__ __forceinline__ u32 cluster_cta_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ __forceinline__ u32 cluster_id() {
  u32 r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}

__device__ __forceinline__ u32 cluster_count() {
  u32 r;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
  return r;
}

// Every thread of every CTA of the cluster: what each wrote before is visible to all
// after (barrier initialization at the start, the last remote arrivals at the end).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// Arrives on the barrier at a shared::cluster address (map_shared_to_cta: the barrier of
// this or another CTA of the cluster), release at CTA scope (cluster scope would wait for
// this thread's outstanding global stores). The scale products `u0`, `u1` are inputs only
// so that the shared loads they came from are complete before the arrival (which lets the
// stage be refilled).
__device__ __forceinline__ void mbar_arrive_mapped(u32 cluster_addr, float u0, float u1) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster_addr), "f"(u0), "f"(u1) : "memory");
}

// Arrives on the barrier at the same offset in CTA `cta`, releasing at cluster scope:
// this thread's earlier writes to that CTA's shared memory are visible to whoever
// waits on the barrier with acquire at cluster scope.
__device__ __forceinline__ void mbar_arrive_cluster_release(u32 bar, u32 cta) {
  asm volatile(
      "{\n"
      " .reg .b32 remote;\n"
      " mapa.shared::cluster.u32 remote, %0, %1;\n"
      " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}

// mbar_wait, acquiring at cluster scope (pairs with mbar_arrive_cluster_release).
__device__ __forceinline__ void mbar_wait_cluster_acquire(u32 bar, u32 parity) {
  asm volatile(
      "{\n"
      " .reg .pred done;\n"
      "FP8GEMM_WAIT_CLUSTER:\n"
      " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra FP8GEMM_WAIT_CLUSTER;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// Shared-memory address of the same offset in CTA `cta` of the cluster.
__device__ __forceinline__ u32 map_shared_to_cta(u32 addr, u32 cta) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(cta));
  return r;
}

// Stores v at `addr` in another CTA's shared memory (a shared::cluster address) and counts
// its 4 bytes on that CTA's barrier `remote_bar` (also a shared::cluster address), as a TMA
// load does: whoever sees the barrier's phase complete sees the value.
__device__ __forceinline__ void st_async_f32(u32 addr, float v, u32 remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(addr),
               "r"(__float_as_uint(v)), "r"(remote_bar)
               : "memory");
}

// The same on this CTA's own barrier.
__device__ __forceinline__ void mbar_arrive_after(u32 bar, float u0, float u1) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar), "f"(u0), "f"(u1) : "memory");
}

// ---------------------------------------------------------------------------
// Programmatic dependent launch
// ---------------------------------------------------------------------------

// Waits until the kernels this one depends on (the previous one in the stream, when this
// one was launched with programmatic stream serialization) have completed and their
// memory is visible; a no-op otherwise. Nothing before it may touch global memory, so
// only the launch and the prologue (barrier setup, tensor-map prefetch) overlap the
// previous kernel's tail.
__device__ __forceinline__ void grid_dependency_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// Lets the next kernel in the stream (if launched with programmatic stream serialization)
// be scheduled once every CTA of this grid has called this or exited; the first call in a
// CTA counts for the CTA. Called when a CTA has issued its last operand load. The next
// kernel still waits for this whole grid before its first global access.
__device__ __forceinline__ void allow_dependent_launch() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// ---------------------------------------------------------------------------
// wgmma
// ---------------------------------------------------------------------------

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving accesses of an accumulator register across wgmma.
__device__ __forceinline__ void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// Declares a register's value dead (no instruction): the next wgmma overwrites it
// anyway, but its "+f" operand would otherwise keep the old value alive.
__device__ __forceinline__ void discard(float& r) { asm volatile("" : "=f"(r)); }

// Shared-memory matrix descriptor of a K-major tile stored with the 128-byte swizzle
// (rows of 128 bytes, 8-row atoms of 1024 bytes): start address, leading byte offset
// (unused for this layout, 1), stride byte offset 1024 between 8-row groups, mode 1.
__device__ __forceinline__ u64 smem_desc_sw128(u32 addr) {
  return static_cast<u64>((addr & 0x3FFFF) >> 4) | (static_cast<u64>(1) << 16) |
         (static_cast<u64>(1024 >> 4) << 32) | (static_cast<u64>(1) << 62);
}

// wgmma.m64nNk32.f32.e4m3.e4m3 with both operands in shared memory. One
// specialization per N is generated with the kernel (the operand list depends on N).
// scale_d == 0 overwrites the accumulators instead of adding to them.
template <int kN>
struct WgmmaE4M3;

// One 128-deep K block: the 4 wgmma k32 steps (descriptors advanced by 32 bytes each) into
// `buf`, overwriting it, issued as one commit group. The operand fences keep the
// compiler's accesses of `buf` out of the asynchronous window on both sides.
template <int kN>
__device__ __forceinline__ void wgmma_k128(float (&buf)[kN / 2], u64 desc_a, u64 desc_b) {
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) fence_operand(buf[i]);
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < 4; ++k) WgmmaE4M3<kN>::mma(buf, desc_a + k * 2, desc_b + k * 2, k);  // +32 bytes: +2
  wgmma_commit();
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) fence_operand(buf[i]);
}

// ---------------------------------------------------------------------------
// Register reconfiguration (per warpgroup)
// ---------------------------------------------------------------------------

template <u32 kRegs>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}

template <u32 kRegs>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}

}  // namespace fp8gemm_dev
