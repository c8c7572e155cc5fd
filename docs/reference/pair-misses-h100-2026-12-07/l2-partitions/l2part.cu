// Which L2 partition is near which SM, and where the hardware places CTAs (plain and 2-CTA clusters).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <string>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)
__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__global__ void where(int* out) { if (threadIdx.x == 0) out[blockIdx.x] = smid(); }
__global__ void lat(const unsigned* buf, int target, int nlines, int stride_words, unsigned* out, unsigned* vals, int zero) {
  __shared__ unsigned sink[1024];
  if (smid() != (unsigned)target || threadIdx.x != 0) return;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < nlines; ++i) {
      const unsigned* p = buf + (size_t)i * stride_words;
      long long t0, t1;
      unsigned v;
      asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0) :: "memory");
      const unsigned* q = p + (static_cast<int>(t0) & zero);
      asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(q) : "memory");
      const unsigned* r = buf + (v & zero);
      unsigned w;
      asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(w) : "l"(r) : "memory");
      asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1) :: "memory");
      t1 += (w & zero);
      vals[pass * nlines + i] = v + w;
      out[pass * nlines + i] = (unsigned)(t1 - t0);
    }
}
int main() {
  int nsm; CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  const int smem = 200 * 1024;
  CK(cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(lat, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  int* d_where; CK(cudaMalloc(&d_where, nsm * sizeof(int)));
  std::vector<int> h(nsm);
  FILE* f = fopen((std::string(getenv("OUT") ? getenv("OUT") : "/tmp") + "/placement.csv").c_str(), "w");
  fprintf(f, "launch,cluster,block,smid\n");
  for (int cl : {1, 2, 1, 2, 2, 4, 8, 16}) {
    static int launch = 0;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(nsm); cfg.blockDim = dim3(384); cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = cl; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cfg.attrs = at; cfg.numAttrs = 1;
    CK(cudaMemset(d_where, 0xff, nsm * sizeof(int)));
    cudaError_t le = cudaLaunchKernelEx(&cfg, where, d_where);
    if (le == cudaSuccess) le = cudaDeviceSynchronize();
    if (le != cudaSuccess) { printf("cluster %d: %s\n", cl, cudaGetErrorString(le)); cudaGetLastError(); ++launch; continue; }
    CK(cudaMemcpy(h.data(), d_where, nsm * sizeof(int), cudaMemcpyDeviceToHost));
    for (int b = 0; b < nsm; ++b) fprintf(f, "%d,%d,%d,%d\n", launch, cl, b, h[b]);
    printf("launch %d cluster %d: first 24 smids:", launch, cl);
    for (int b = 0; b < 24; ++b) printf(" %d", h[b]);
    printf("\n");
    ++launch;
  }
  fclose(f);
  const int nlines = 512, stride_words = 4224 / 4;  // 33 lines apart
  unsigned* buf; CK(cudaMalloc(&buf, (size_t)nlines * stride_words * 4 + 4096));
  CK(cudaMemset(buf, 0, (size_t)nlines * stride_words * 4 + 4096));
  char* flush; const size_t fb = 256ull << 20; CK(cudaMalloc(&flush, fb));
  unsigned* d_out; CK(cudaMalloc(&d_out, 2 * nlines * 4));
  unsigned* d_vals; CK(cudaMalloc(&d_vals, 2 * nlines * 4));
  std::vector<unsigned> ho(2 * nlines);
  FILE* g = fopen((std::string(getenv("OUT") ? getenv("OUT") : "/tmp") + "/latency.csv").c_str(), "w");
  fprintf(g, "sm,pass,line,cycles\n");
  for (int s = 0; s < nsm; ++s) {
    CK(cudaMemset(flush, s & 0xff, fb));
    lat<<<nsm, 32, smem>>>(buf, s, nlines, stride_words, d_out, d_vals, 0);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(ho.data(), d_out, 2 * nlines * 4, cudaMemcpyDeviceToHost));
    double m0 = 0, m1 = 0;
    for (int i = 0; i < nlines; ++i) { m0 += ho[i]; m1 += ho[nlines + i]; fprintf(g, "%d,0,%d,%u\n%d,1,%d,%u\n", s, i, ho[i], s, i, ho[nlines + i]); }
    if (s < 8 || s % 16 == 0) printf("sm %d: first %.0f second %.0f cycles (mean)\n", s, m0 / nlines, m1 / nlines);
  }
  fclose(g);
  printf("done\n");
  return 0;
}
