#include "compiler/nvrtc_compiler.hpp"

#include <nvrtc.h>

#include <chrono>

#include "codegen/embedded_kernels.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace fp8gemm::detail {
namespace {

// Frees the NVRTC program on every path.
struct Program {
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle != nullptr) nvrtcDestroyProgram(&handle);
  }
};

void check(nvrtcResult result, const char* what, const std::string& slug) {
  if (result != NVRTC_SUCCESS)
    fail(ErrorCode::CompileFailed, "{} failed for kernel {}: {}", what, slug, nvrtcGetErrorString(result));
}

std::string program_log(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return "";
  log.resize(size - 1);
  return log;
}

}  // namespace

const std::vector<std::string>& compile_options() {
  static const std::vector<std::string> options = {
      "--gpu-architecture=sm_90a", "-std=c++17", "-default-device", "--ptxas-options=-v",
      "-DNDEBUG"};
  return options;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

CompiledKernel compile_kernel(const GeneratedKernel& kernel) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<const char*> header_sources, header_names;
  for (int i = 0; i < embedded_header_count(); ++i) {
    header_sources.push_back(embedded_headers()[i].source);
    header_names.push_back(embedded_headers()[i].name);
  }
  Program program;
  const std::string file_name = kernel.slug + ".cu";
  check(nvrtcCreateProgram(&program.handle, kernel.source.c_str(), file_name.c_str(),
                           static_cast<int>(header_sources.size()), header_sources.data(),
                           header_names.data()),
        "nvrtcCreateProgram", kernel.slug);
  check(nvrtcAddNameExpression(program.handle, kernel.name_expression.c_str()),
        "nvrtcAddNameExpression", kernel.slug);

  std::vector<const char*> options;
  for (const std::string& o : compile_options()) options.push_back(o.c_str());
  const nvrtcResult result =
      nvrtcCompileProgram(program.handle, static_cast<int>(options.size()), options.data());
  CompiledKernel out;
  out.log = program_log(program.handle);
  if (result != NVRTC_SUCCESS)
    fail(ErrorCode::CompileFailed, "NVRTC could not compile kernel {} ({}). Compile log:\n{}",
         kernel.slug, nvrtcGetErrorString(result), out.log);

  const char* lowered = nullptr;
  check(nvrtcGetLoweredName(program.handle, kernel.name_expression.c_str(), &lowered),
        "nvrtcGetLoweredName", kernel.slug);
  out.lowered_name = lowered;
  size_t cubin_size = 0;
  check(nvrtcGetCUBINSize(program.handle, &cubin_size), "nvrtcGetCUBINSize", kernel.slug);
  out.cubin.resize(cubin_size);
  check(nvrtcGetCUBIN(program.handle, out.cubin.data()), "nvrtcGetCUBIN", kernel.slug);
  out.resources = parse_resource_report(out.log);
  out.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // (A fact of the compile, not yet a problem: the planner skips such kernels; whoever
  // launches one anyway warns.)
  if (out.resources.uses_local_memory())
    log(LogLevel::Info, "kernel {} uses local memory ({} B stack, {} B spill stores): slow path",
        kernel.slug, out.resources.stack_frame_bytes, out.resources.spill_store_bytes);
  for (const std::string& w : out.resources.warnings) log(LogLevel::Warn, "kernel {}: {}", kernel.slug, w);
  for (const std::string& n : out.resources.performance_notes) log(LogLevel::Debug, "kernel {}: {}", kernel.slug, n);
  log(LogLevel::Info, "compiled {} in {:.2f} s ({} registers)", kernel.slug, out.compile_seconds,
      out.resources.registers);
  return out;
}

}  // namespace fp8gemm::detail
