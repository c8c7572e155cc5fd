// fp8gemm_host_profile: where the host time of a warm gemm_fp8_nt call goes, step by step,
// on an sm_90 GPU. For every dense shape of a shape set it times, over --calls calls after
// the first (the kernel compiled and loaded), each step of the call path alone and the
// whole call, and prints microseconds per call (median of --repeats runs):
//
//   validate      argument checks (problem/validate)
//   context       the call's CUDA context from the stream (CallContext)
//   runtime       the device's runtime and its sm_90 check
//   plan          the plan lookup (plan_for_call)
//   tensor maps   the four TMA descriptors through the per-thread cache
//   launch        cuLaunchKernelEx with the plan's configuration
//   whole call    fp8gemm::gemm_fp8_nt
//
// and how cuLaunchKernelEx's cost depends on the launch's form (same kernel, same arguments):
//   no pdl        without the programmatic-serialization attribute
//   packed        the arguments as one packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER)
//   no attrs      no attribute at all (kernels without a cluster only)
//   legacy        cuLaunchKernel (kernels without a cluster only)
//
// Then, once, the driver's own floor: cuLaunchKernelEx of kernels that do nothing, compiled
// with NVRTC like the library's (same stream, same timing):
//   empty, 1 CTA        no arguments, one warp, no attribute
//   empty, plan's grid  no arguments, the first shape's grid, threads, shared memory and attributes
//   same arguments      the GEMM kernel's 14 arguments (four tensor maps), the same configuration
//
// It links the library's internals (fp8gemm_core) and calls them as gemm_api.cpp does; the
// stream is a non-blocking stream of the primary context, as a framework's would be. The
// GPU runs what is launched (each step's loop is followed by a synchronization).
//
//   fp8gemm_host_profile [--shapes shapes/dense-decode.json] [--calls 200] [--repeats 9] [--json FILE]

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/library.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "driver/driver_api.hpp"
#include "common/shape_file.hpp"
#include "driver/tma_cache.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "problem/validate.hpp"
#include "runtime/gemm_launch.hpp"
#include "runtime/launch_config.hpp"

namespace {

using namespace fp8gemm;
using namespace fp8gemm::detail;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "host_profile: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct Buffers {
  void* a = nullptr;
  void* sa = nullptr;
  void* b = nullptr;
  void* sb = nullptr;
  void* d = nullptr;
  ~Buffers() {
    for (void* p : {a, sa, b, sb, d}) cudaFree(p);
  }
};

using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    CUstream, void**, void**);
using ParamInfoFn = CUresult (*)(CUfunction, size_t, size_t*, size_t*);

template <class Fn>
Fn driver_entry(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12040, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(fn);
}

void* device_zeros(size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, std::max<size_t>(bytes, 16)), "cudaMalloc");
  check(cudaMemset(p, 0, std::max<size_t>(bytes, 16)), "cudaMemset");
  return p;
}

// Microseconds per call of `step`, the median of `repeats` loops of `calls` calls.
double time_step(const std::function<void()>& step, int calls, int repeats, cudaStream_t stream) {
  std::vector<double> per_call;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) step();
    const auto t1 = std::chrono::steady_clock::now();
    per_call.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    check(cudaStreamSynchronize(stream), "synchronize");
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

void check_launch(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "host_profile: %s failed (CUresult %d)\n", what, static_cast<int>(r));
    std::exit(1);
  }
}

// time_step for a launch form: one untimed call first, which must succeed (a launch the
// driver rejects returns at once and would time as a fast one), then the timed loops.
double time_launch(const std::function<CUresult()>& launch, const char* what, int calls, int repeats,
                   cudaStream_t stream) {
  check_launch(launch(), what);
  check(cudaStreamSynchronize(stream), what);
  return time_step([&] { launch(); }, calls, repeats, stream);
}

// Kernels that do nothing: one without arguments, one with the 1D2D GEMM kernel's.
constexpr const char* kFloorSource = R"(#include "fp8gemm/ptx.cuh"
namespace fp8gemm_floor {
__global__ void no_arguments() {}
__global__ void gemm_arguments(const __grid_constant__ fp8gemm_dev::TensorMap, const __grid_constant__ fp8gemm_dev::TensorMap,
                               const __grid_constant__ fp8gemm_dev::TensorMap, const __grid_constant__ fp8gemm_dev::TensorMap,
                               const float*, long long, long long, unsigned short*, long long, int, unsigned,
                               const int*, int, int) {}
}
)";

CUfunction floor_kernel(const char* name) {
  const CompiledKernel k = compile_kernel(GeneratedKernel{kFloorSource, name, "launch_floor"});
  const DriverApi& cu = driver();
  CUmodule module = nullptr;
  CUfunction f = nullptr;
  if (cu.cuModuleLoadData(&module, k.cubin.data()) != CUDA_SUCCESS ||
      cu.cuModuleGetFunction(&f, module, k.lowered_name.c_str()) != CUDA_SUCCESS) {
    std::fprintf(stderr, "host_profile: the launch-floor kernel %s did not load\n", name);
    std::exit(1);
  }
  return f;  // (the module stays loaded until the process ends)
}

}  // namespace

int main(int argc, char** argv) {
  std::string shapes_path = "shapes/dense-decode.json", json_path;
  int calls = 200, repeats = 9;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "host_profile: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--shapes") shapes_path = value();
    else if (arg == "--calls") calls = std::atoi(value().c_str());
    else if (arg == "--repeats") repeats = std::atoi(value().c_str());
    else if (arg == "--json") json_path = value();
    else {
      std::fprintf(stderr, "usage: %s [--shapes FILE] [--calls N] [--repeats N] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  if (calls < 1 || repeats < 1) {
    std::fprintf(stderr, "host_profile: --calls and --repeats must be at least 1\n");
    return 2;
  }
  host::ShapeFile shapes;
  try {
    shapes = host::read_shape_file(shapes_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "host_profile: %s\n", e.what());
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "host_profile: no CUDA device\n");
    return 1;
  }
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  const Stream s = stream;
  const CUstream cs = reinterpret_cast<CUstream>(stream);

  nlohmann::json rows = nlohmann::json::array(), floor = nlohmann::json::object();
  std::printf("%6s %6s %6s | %8s %8s %8s %8s %8s %8s | %8s %8s | %8s %8s %8s %8s | kernel  (us per call; -1: n/a)\n",
              "M", "N", "K", "validate", "context", "runtime", "plan", "maps", "launch", "sum", "call", "no pdl",
              "packed", "no attrs", "legacy");
  for (const GemmShape& shape : shapes.dense) {
    const int64_t m = shape.m, n = shape.n, k = shape.k, sa_stride = (m + 3) / 4 * 4;
    Buffers buf;
    buf.a = device_zeros(size_t(m * k));
    buf.sa = device_zeros(size_t(sa_stride * ((k + 127) / 128) * 4));
    buf.b = device_zeros(size_t(n * k));
    buf.sb = device_zeros(size_t(((n + 127) / 128) * ((k + 127) / 128) * 4));
    buf.d = device_zeros(size_t(m * n * 2));
    const Fp8Matrix a{buf.a, m, k, k}, b{buf.b, n, k, k};
    const ScaleMatrix sa = per_token_scales(static_cast<const float*>(buf.sa), m, k);
    const ScaleMatrix sb = block_scales(static_cast<const float*>(buf.sb), n, k);
    const Bf16Matrix d{buf.d, m, n, n};
    try {
      gemm_fp8_nt(a, sa, b, sb, d, s);  // compiles and loads the kernel
      check(cudaStreamSynchronize(stream), "first call");
      CallContext call(s);
      DeviceRuntime& runtime = Library::instance().runtime(call.context());
      const LaunchPlan& plan = plan_for_call(call, runtime, GemmProblem{KernelKind::Gemm1D2D, m, n, k});
      const CUtensorMap ma = encode_tma_cached(tma_fp8_operand(a.data, m, k, a.ld, plan.a_box_rows));
      const CUtensorMap mb = encode_tma_cached(tma_fp8_operand(b.data, n, k, b.ld, plan.layout.b_box_rows));
      const CUtensorMap msa = encode_tma_cached(tma_per_token_scales(sa.data, m, sa.cols, sa.col_stride, plan.sfa_box_rows));
      CUtensorMap md{};
      if (plan.layout.tma_store) md = encode_tma_cached(tma_bf16_output(d.data, m, n, d.ld));

      volatile bool sink = false;
      const double t_validate = time_step([&] { sink = validate_gemm_fp8_nt(a, sa, b, sb, d); }, calls, repeats, stream);
      const double t_context = time_step([&] { CallContext c(s); }, calls, repeats, stream);
      const double t_runtime = time_step(
          [&] {
            DeviceRuntime& r = Library::instance().runtime(call.context());
            const DeviceProps& p = r.props();
            validate_device(p.cc_major, p.cc_minor, p.name, p.ordinal);
          },
          calls, repeats, stream);
      const double t_plan = time_step(
          [&] { sink = &plan_for_call(call, runtime, GemmProblem{KernelKind::Gemm1D2D, m, n, k}) != nullptr; }, calls, repeats,
          stream);
      const double t_maps = time_step(
          [&] {
            CUtensorMap x[4];
            x[0] = encode_tma_cached(tma_fp8_operand(a.data, m, k, a.ld, plan.a_box_rows));
            x[1] = encode_tma_cached(tma_fp8_operand(b.data, n, k, b.ld, plan.layout.b_box_rows));
            x[2] = encode_tma_cached(tma_per_token_scales(sa.data, m, sa.cols, sa.col_stride, plan.sfa_box_rows));
            if (plan.layout.tma_store) x[3] = encode_tma_cached(tma_bf16_output(d.data, m, n, d.ld));
            sink = x[0].opaque[0] == 1;
          },
          calls, repeats, stream);
      const double t_launch = time_step(
          [&] {
            launch_gemm_1d2d(plan, ma, mb, msa, md, sb.data, sb.row_stride, sb.col_stride, d.data, d.ld,
                             static_cast<int>(m), cs, GroupArgs{});
          },
          calls, repeats, stream);
      const double t_call = time_step([&] { gemm_fp8_nt(a, sa, b, sb, d, s); }, calls, repeats, stream);

      // The launch's forms. The kernel's arguments, as launch_gemm_1d2d passes them.
      long long stride_n = sb.row_stride, stride_k = sb.col_stride, ldd = d.ld;
      int mi = static_cast<int>(m), groups = 0, group_rows = 0;
      unsigned tx = plan.stage_tx_bytes;
      const int* group_info = nullptr;
      const float* sfb = sb.data;
      void* dptr = d.data;
      void* args[] = {const_cast<CUtensorMap*>(&ma), const_cast<CUtensorMap*>(&mb), const_cast<CUtensorMap*>(&msa),
                      &md, &sfb, &stride_n, &stride_k, &dptr, &ldd, &mi, &tx, &group_info, &groups, &group_rows};
      const size_t sizes[] = {sizeof(CUtensorMap), sizeof(CUtensorMap), sizeof(CUtensorMap), sizeof(CUtensorMap),
                              8, 8, 8, 8, 8, 4, 4, 8, 4, 4};
      CUlaunchAttribute attrs[2];
      const CUlaunchConfig with_pdl = gemm_launch_config(plan.layout, plan.grid, cs, attrs);
      CUlaunchAttribute attrs2[2];
      const CUlaunchConfig no_pdl = gemm_launch_config(plan.layout, plan.grid, cs, attrs2, false);
      const DriverApi& cu = driver();
      const double t_no_pdl = time_launch([&] { return cu.cuLaunchKernelEx(&no_pdl, plan.function, args, nullptr); },
                                          "launch without PDL", calls, repeats, stream);
      double t_packed = -1, t_no_attrs = -1, t_legacy = -1;
      static const auto param_info = driver_entry<ParamInfoFn>("cuFuncGetParamInfo");
      if (param_info) {
        std::vector<unsigned char> packed;
        bool ok = true;
        for (size_t i = 0; i < 14 && ok; ++i) {
          size_t offset = 0, size = 0;
          ok = param_info(plan.function, i, &offset, &size) == CUDA_SUCCESS && size == sizes[i];
          if (ok) {
            packed.resize(std::max(packed.size(), offset + size));
            std::memcpy(packed.data() + offset, args[i], size);
          }
        }
        if (ok) {
          size_t bytes = packed.size();
          void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes,
                           CU_LAUNCH_PARAM_END};
          t_packed = time_launch([&] { return cu.cuLaunchKernelEx(&with_pdl, plan.function, nullptr, extra); },
                                 "packed launch", calls, repeats, stream);
        } else {
          std::fprintf(stderr, "host_profile: the kernel's parameters are not the expected 14; packed form skipped\n");
        }
      }
      if (plan.layout.cluster_size == 1) {
        CUlaunchConfig bare = no_pdl;
        bare.numAttrs = 0;
        bare.attrs = nullptr;
        t_no_attrs = time_launch([&] { return cu.cuLaunchKernelEx(&bare, plan.function, args, nullptr); },
                                 "launch without attributes", calls, repeats, stream);
        static const auto legacy = driver_entry<LaunchKernelFn>("cuLaunchKernel");
        if (legacy)
          t_legacy = time_launch(
              [&] {
                return legacy(plan.function, plan.grid, 1, 1, static_cast<unsigned>(plan.layout.threads), 1, 1,
                              static_cast<unsigned>(plan.layout.smem_bytes), cs, args, nullptr);
              },
              "cuLaunchKernel", calls, repeats, stream);
      }
      if (rows.empty()) {
        // The driver's floor, once, with the first shape's configuration and arguments.
        const CUfunction none = floor_kernel("fp8gemm_floor::no_arguments");
        const CUfunction same = floor_kernel("fp8gemm_floor::gemm_arguments");
        for (const CUfunction f : {none, same})
          check_launch(cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, plan.layout.smem_bytes),
                       "cuFuncSetAttribute (launch floor)");
        CUlaunchConfig one{};
        one.gridDimX = one.gridDimY = one.gridDimZ = 1;
        one.blockDimX = 32;
        one.blockDimY = one.blockDimZ = 1;
        one.hStream = cs;
        const double t_one = time_launch([&] { return cu.cuLaunchKernelEx(&one, none, nullptr, nullptr); },
                                         "empty kernel, 1 CTA", calls, repeats, stream);
        const double t_grid = time_launch([&] { return cu.cuLaunchKernelEx(&with_pdl, none, nullptr, nullptr); },
                                          "empty kernel, plan's grid", calls, repeats, stream);
        const double t_same = time_launch([&] { return cu.cuLaunchKernelEx(&with_pdl, same, args, nullptr); },
                                          "empty kernel, same arguments", calls, repeats, stream);
        std::printf("launch floor (us per cuLaunchKernelEx): empty, 1 CTA %.3f | empty, plan's grid %.3f | "
                    "same arguments %.3f (configuration of %s)\n",
                    t_one, t_grid, t_same, plan.spec.slug().c_str());
        floor = {{"empty_one_cta_us", t_one}, {"empty_plan_grid_us", t_grid}, {"same_arguments_us", t_same},
                 {"configuration", plan.spec.slug()}};
      }
      const double sum = t_validate + t_context + t_runtime + t_plan + t_maps + t_launch;
      std::printf("%6lld %6lld %6lld | %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f | %8.3f %8.3f | %8.3f %8.3f %8.3f %8.3f | %s\n",
                  (long long)m, (long long)n, (long long)k, t_validate, t_context, t_runtime, t_plan, t_maps, t_launch,
                  sum, t_call, t_no_pdl, t_packed, t_no_attrs, t_legacy, plan.spec.slug().c_str());
      rows.push_back({{"m", m}, {"n", n}, {"k", k}, {"kernel", plan.spec.slug()}, {"validate_us", t_validate},
                      {"context_us", t_context}, {"runtime_us", t_runtime}, {"plan_us", t_plan}, {"maps_us", t_maps},
                      {"launch_us", t_launch}, {"sum_us", sum}, {"call_us", t_call},
                      {"launch_no_pdl_us", t_no_pdl}, {"launch_packed_us", t_packed},
                      {"launch_no_attributes_us", t_no_attrs}, {"launch_legacy_us", t_legacy}});
    } catch (const Error& e) {
      std::fprintf(stderr, "host_profile: %lldx%lldx%lld: %s\n", (long long)m, (long long)n, (long long)k, e.what());
      return 1;
    }
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << nlohmann::json{{"shapes_file", shapes_path}, {"calls", calls}, {"repeats", repeats}, {"rows", rows},
                         {"launch_floor", floor}}.dump(1)
        << "\n";
  }
  cudaStreamDestroy(stream);
  return 0;
}
