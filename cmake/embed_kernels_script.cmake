# cmake -DROOT=<dir> -DFILES=a|b -DOUTPUT=<file.cpp> -P embed_kernels_script.cmake
string(REPLACE "|" ";" _files "${FILES}")
set(_body "")
set(_all "")
set(_count 0)
foreach(f IN LISTS _files)
  file(READ ${ROOT}/${f} _text)
  string(APPEND _all "${f}\n${_text}\n")
  # Raw string literals are limited in length by some compilers; split into chunks.
  string(LENGTH "${_text}" _len)
  set(_pieces "")
  set(_pos 0)
  while(_pos LESS _len)
    string(SUBSTRING "${_text}" ${_pos} 8000 _chunk)
    string(APPEND _pieces "R\"FP8GEMM_EMBED(${_chunk})FP8GEMM_EMBED\"\n")
    math(EXPR _pos "${_pos} + 8000")
  endwhile()
  string(APPEND _body "  {\"${f}\",\n${_pieces}  },\n")
  math(EXPR _count "${_count} + 1")
endforeach()
string(SHA256 _digest "${_all}")
file(WRITE ${OUTPUT}.tmp
"// Generated from kernels/ by cmake/embed_kernels_script.cmake. Do not edit.
#include \"codegen/embedded_kernels.hpp\"

namespace fp8gemm::detail {
namespace {
const EmbeddedHeader kHeaders[] = {
${_body}};
}  // namespace

const EmbeddedHeader* embedded_headers() { return kHeaders; }
int embedded_header_count() { return ${_count}; }
const char* embedded_headers_digest() { return \"${_digest}\"; }
}  // namespace fp8gemm::detail
")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
