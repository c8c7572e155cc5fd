#pragma once

// Keep in step with project(VERSION) in CMakeLists.txt; the version is part of
// every kernel cache key.
#define FP8GEMM_VERSION_MAJOR 0
#define FP8GEMM_VERSION_MINOR 1
#define FP8GEMM_VERSION_PATCH 0
#define FP8GEMM_VERSION_STRING "0.1.0"
