#pragma once

// The device headers of kernels/, embedded into the library at build time.

namespace fp8gemm::detail {

struct EmbeddedHeader {
  const char* name;     // include name, e.g. "fp8gemm/ptx.cuh"
  const char* source;   // full text
};

const EmbeddedHeader* embedded_headers();
int embedded_header_count();
// SHA-256 (hex) over the names and contents of all embedded headers.
const char* embedded_headers_digest();

}  // namespace fp8gemm::detail
