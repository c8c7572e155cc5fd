#!/usr/bin/env python3
"""Instruction counts of disassembled kernels (`nvdisasm -hex` or `cuobjdump -sass` output).

Usage: tools/sass_summary.py [--top N] [--loops N] [--opcode-table OUT.json] FILE.sass [FILE.sass ...]
       tools/sass_summary.py --cubins TABLE.json [--split-at MNEMONIC] FILE.cubin [FILE.cubin ...]

For each file: the number of instructions, the most frequent mnemonics (the part before the
first '.', e.g. HGMMA, FFMA, LDS, R2UR), and its loops, largest first: every backward branch
(BRA to an address at or before its own) closes a loop from its target to itself, printed
with its instruction count and mnemonics. The main loop of a GEMM kernel is the loop that
holds its wgmma instructions, so per-K-block counts read directly off that line.

--opcode-table: also writes, from the instruction words that `nvdisasm -hex` prints, a JSON
map from each instruction's low 12 bits (the opcode field, "0x984") to its mnemonic, over all
files, so that cubins built where no disassembler exists can be counted by opcode; a field
seen with two mnemonics is reported and left out.

--cubins TABLE.json: counts the instructions of cubins (every .text section, 16-byte
instructions) by that table's mnemonics instead (a field missing from it prints as ?0x...);
--split-at MNEMONIC also counts each stretch between two instructions of that mnemonic (e.g.
WARPGROUP, the wgmma waits), to see what a change moved across them. A kernel cache entry is
a cubin after its two header lines: `tail -n +3 ENTRY.fp8k > k.cubin`.
tools/sass-opcodes-sm90.json is such a table, written by `--opcode-table` from `nvdisasm -hex`
(CUDA 13.0) over the 52 kernels planned for shapes/deepseek-v3.json, dense-m4096.json and
m-grouped-only.json (weight-gradient and forward, dense and grouped; 124 fields); other kernels
may use fields it lacks (printed as ?0x...).
"""
import collections
import importlib.util
import json
import os
import re
import sys

INSTRUCTION = re.compile(
    r"/\*(?P<addr>[0-9a-fA-F]{4,})\*/\s+(?P<text>[^;]*?)\s*;(?:\s*/\*\s*(?P<word>0x[0-9a-fA-F]{16})\s*\*/)?")
LABEL = re.compile(r"^\s*(?P<label>\.L_[A-Za-z0-9_]+):")
TARGET = re.compile(r"(?:`\((?P<label>\.L_[A-Za-z0-9_]+)\)|(?P<addr>0x[0-9a-fA-F]+))")


def parse(text):
    """The instructions of a listing, in order: dicts with addr, mnemonic (base), full, target
    (the address a branch goes to, or None), word (the first instruction word, or None)."""
    out, labels, pending = [], {}, []
    for line in text.splitlines():
        label = LABEL.match(line)
        if label:
            pending.append(label.group("label"))
            continue
        m = INSTRUCTION.search(line)
        if not m:
            continue
        addr = int(m.group("addr"), 16)
        for name in pending:
            labels[name] = addr
        pending = []
        tokens = m.group("text").split()
        if tokens and tokens[0].startswith("@"):
            tokens = tokens[1:]
        if not tokens:
            continue
        full = tokens[0]
        out.append({"addr": addr, "full": full, "mnemonic": full.split(".")[0],
                    "operands": " ".join(tokens[1:]),
                    "word": int(m.group("word"), 16) if m.group("word") else None})
    for ins in out:
        ins["target"] = None
        if ins["mnemonic"] in ("BRA", "BRX", "JMP"):
            t = TARGET.search(ins["operands"])
            if t and t.group("label"):
                ins["target"] = labels.get(t.group("label"))
            elif t:
                ins["target"] = int(t.group("addr"), 16)
    return out


def histogram(instructions, top):
    counts = collections.Counter(i["mnemonic"] for i in instructions)
    return ", ".join(f"{name} {n}" for name, n in counts.most_common(top))


def loops(instructions):
    """(first addr, last addr, instructions) of every backward branch's loop, largest first."""
    found = []
    for i, ins in enumerate(instructions):
        if ins["target"] is not None and ins["target"] <= ins["addr"]:
            body = [x for x in instructions[: i + 1] if x["addr"] >= ins["target"]]
            found.append((ins["target"], ins["addr"], body))
    return sorted(found, key=lambda x: -len(x[2]))


def elf_sections():
    """The ELF section reader of tools/compare-cubin-code.py."""
    spec = importlib.util.spec_from_file_location(
        "compare_cubin_code", os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare-cubin-code.py"))
    elf_tools = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(elf_tools)
    return elf_tools.sections


def cubin_words(path, sections):
    """The first 64-bit word of every instruction in a cubin's .text sections."""
    with open(path, "rb") as f:
        elf = f.read()
    words = []
    for name, _kind, data, _entsize in sections(elf):
        if name.startswith(".text"):
            words += [int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data) - 15, 16)]
    return words


def count_cubins(table_path, split_at, files, top):
    with open(table_path) as f:
        table = json.load(f)
    sections = elf_sections()
    for path in files:
        names = [table.get(f"{w & 0xFFF:#05x}", f"?{w & 0xFFF:#05x}") for w in cubin_words(path, sections)]
        as_instructions = [{"mnemonic": n} for n in names]
        print(f"{path}: {len(names)} instructions: {histogram(as_instructions, top)}")
        if split_at:
            start = 0
            for i, n in enumerate(names + [split_at]):
                if n == split_at:
                    if i > start:
                        print(f"  [{start}, {i}): {i - start} instructions: {histogram(as_instructions[start:i], top)}")
                    start = i + 1
    return 0


def main(argv):
    top, max_loops, table_path, files = 12, 4, None, []
    cubin_table, split_at = None, None
    args = iter(argv)
    for a in args:
        if a == "--top":
            top = int(next(args))
        elif a == "--loops":
            max_loops = int(next(args))
        elif a == "--opcode-table":
            table_path = next(args)
        elif a == "--cubins":
            cubin_table = next(args)
        elif a == "--split-at":
            split_at = next(args)
        elif a.startswith("-"):
            print(__doc__, file=sys.stderr)
            return 2
        else:
            files.append(a)
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    if cubin_table:
        return count_cubins(cubin_table, split_at, files, top)
    table, conflicts = {}, set()
    for path in files:
        with open(path, errors="replace") as f:
            instructions = parse(f.read())
        print(f"{path}: {len(instructions)} instructions: {histogram(instructions, top)}")
        for first, last, body in loops(instructions)[:max_loops]:
            print(f"  loop {first:#06x}-{last:#06x}: {len(body)} instructions: {histogram(body, top)}")
        for ins in instructions:
            if ins["word"] is None:
                continue
            field = f"{ins['word'] & 0xFFF:#05x}"
            if table.get(field, ins["mnemonic"]) != ins["mnemonic"]:
                conflicts.add(field)
            table.setdefault(field, ins["mnemonic"])
    if table_path:
        for field in sorted(conflicts):
            print(f"opcode field {field}: more than one mnemonic (left out)", file=sys.stderr)
            table.pop(field, None)
        with open(table_path, "w") as f:
            json.dump(dict(sorted(table.items())), f, indent=1)
        print(f"opcode table: {len(table)} fields -> {table_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
