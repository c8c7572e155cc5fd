#!/usr/bin/env python3
"""Compares the machine code of two kernel caches (FP8GEMM_CACHE_DIR trees filled by
`fp8gemm prewarm`), kernel by kernel name, where the kernels' symbol names may differ
(a change of the kernel template's parameters renames every kernel but need not change
its code). For each pair of cubins (everything after an entry's two header lines,
cache/README.md), every ELF section's contents must be identical, sections matched by
their names with the kernel's mangled name replaced by a placeholder, except the string
tables (names only) and the symbol table, whose entries are compared without their name
offsets. Prints one line per kernel that differs or is in one cache only, then the counts.
Exit status: 0 when every kernel in both caches has the same code, 1 otherwise, 2 on bad use.

    tools/compare-cubin-code.py CACHE_DIR_A CACHE_DIR_B
"""
import os
import re
import struct
import sys


def elf_of(path):
    data = open(path, "rb").read()
    first = data.index(b"\n")
    return data[data.index(b"\n", first + 1) + 1:]


def sections(elf):
    if elf[:4] != b"\x7fELF":
        raise ValueError("not an ELF image")
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    raw = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names_at = raw[shstrndx][4]
    out = []
    for name, kind, _flags, _addr, offset, size, _link, _info, _align, entsize in raw:
        end = elf.index(b"\0", names_at + name)
        out.append((elf[names_at + name:end].decode(), kind, elf[offset:offset + size] if kind != 8 else b"", entsize))
    return out


KERNEL = re.compile(r"_Z\w+")  # a mangled kernel name inside a section name


def normalized(elf):
    """{section name with kernel names replaced: contents}; symbol tables without names."""
    out = {}
    for name, kind, data, entsize in sections(elf):
        key = KERNEL.sub("<kernel>", name)
        if kind == 3:  # string tables: names only
            continue
        if kind == 2 and entsize == 24:  # SHT_SYMTAB: drop st_name (the first 4 bytes of each entry)
            data = b"".join(data[i + 4:i + 24] for i in range(0, len(data), 24))
        out[key] = (kind, data)
    return out


def by_kernel(cache):
    kernels = {}
    for f in sorted(os.listdir(os.path.join(cache, "kernels"))):
        if f.endswith(".fp8k"):
            kernels[re.sub(r"-[0-9a-f]*\.fp8k$", "", f)] = os.path.join(cache, "kernels", f)
    return kernels


def main(argv):
    if len(argv) != 3 or not all(os.path.isdir(os.path.join(d, "kernels")) for d in argv[1:]):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    a, b = by_kernel(argv[1]), by_kernel(argv[2])
    same = differ = only = 0
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            print(f"only in {argv[1] if name in a else argv[2]}: {name}")
            only += 1
            continue
        sa, sb = normalized(elf_of(a[name])), normalized(elf_of(b[name]))
        bad = sorted(k for k in set(sa) | set(sb) if sa.get(k) != sb.get(k))
        if bad:
            print(f"differs: {name} ({', '.join(bad)})")
            differ += 1
        else:
            same += 1
    print(f"machine code: {same} identical, {differ} different, {only} in one cache only")
    return 0 if differ == 0 and only == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
