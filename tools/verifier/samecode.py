#!/usr/bin/env python3
"""Are two builds of the scheduler the same code, function by function?

  tools/verifier/samecode.py OLD.bpf.o NEW.bpf.o

Moves between the .bpf.h parts change where a function lands in its section,
so raw section bytes differ even when no instruction does. This compares
each function's instructions instead, from llvm-objdump -d -r: addresses
made relative to the function, block labels dropped, and calls to other
subprograms named by their target rather than by a relative offset. Exits 0
when every function of both is the same, 1 naming each that differs, was
added or is gone, 2 when an object cannot be read.
"""
import re
import subprocess
import sys

OBJDUMP = "llvm-objdump-16"
SYM = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
INSN = re.compile(r"^\s*(\d+):\t([0-9a-f]{2}(?: [0-9a-f]{2})*)\t(.*)$")
RELOC = re.compile(r"^\s+[0-9a-f]+:\s+(R_BPF_\S+)\s+(\S+)")


def data_symbols(path):
    """Each data section's objects: [(start, size, name)]."""
    out = subprocess.run([OBJDUMP, "-t", path], check=True, capture_output=True,
                         text=True).stdout
    syms = {}
    for ln in out.splitlines():
        f = ln.split()
        if len(f) == 6 and f[2] == "O":
            syms.setdefault(f[3], []).append((int(f[0], 16), int(f[4], 16), f[5]))
    return syms


def data_name(syms, sect, off):
    """Section offset @off as the object it falls in: moved data keeps its name."""
    for start, size, name in syms.get(sect, []):
        if start <= off < start + max(size, 1):
            return f"{name}+{off - start}"
    return f"{sect}?{off}"


def functions(path):
    try:
        out = subprocess.run([OBJDUMP, "-d", "-r", path], check=True, capture_output=True,
                             text=True).stdout
        syms = data_symbols(path)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"samecode: cannot disassemble {path}: {e}")
    # pass 1: every function's section and first instruction index
    sect, starts, order = None, {}, []
    cur = None
    lines = out.splitlines()
    for ln in lines:
        if ln.startswith("Disassembly of section "):
            sect = ln[len("Disassembly of section "):].rstrip(":")
            continue
        m = SYM.match(ln)
        if m and not m.group(2).startswith("LBB"):
            cur = (sect, m.group(2))
            starts[(sect, int(m.group(1), 16) // 8)] = m.group(2)
            order.append(cur)
    # pass 2: instructions per function, normalised
    funcs, sect, cur, base = {}, None, None, 0
    for ln in lines:
        if ln.startswith("Disassembly of section "):
            sect = ln[len("Disassembly of section "):].rstrip(":")
            continue
        m = SYM.match(ln)
        if m:
            if not m.group(2).startswith("LBB"):
                cur = m.group(2)
                base = int(m.group(1), 16) // 8
                funcs[cur] = []
            continue
        m = RELOC.match(ln)
        if m and cur:
            target = m.group(2)
            last = funcs[cur][-1] if funcs[cur] else ""
            ll = re.search(r"= (0x[0-9a-f]+|\d+) ll$", last)
            if target.startswith(".") and ll:
                # data in a section: where it is may move, what it is may not
                name = data_name(syms, target, int(ll.group(1), 0))
                funcs[cur][-1] = last[:ll.start()] + f"= &{name}"
            funcs[cur].append(f"    reloc {m.group(1)} {target}")
            continue
        m = INSN.match(ln)
        if not m or not cur:
            continue
        idx, raw, text = int(m.group(1)), m.group(2).split(), m.group(3)
        text = re.sub(r"<LBB\d+_\d+>", "<L>", text)
        # a pseudo call (BPF_CALL with src_reg 1): name its target
        if raw[0] == "85" and raw[1][0] == "1":
            imm = int.from_bytes(bytes(int(b, 16) for b in raw[4:8]), "little", signed=True)
            text = "call " + starts.get((sect, idx + imm + 1), f"?{idx + imm + 1}")
        funcs[cur].append(f"{idx - base}: {text}")
    return funcs


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    old, new = functions(sys.argv[1]), functions(sys.argv[2])
    bad = 0
    for name in sorted(set(old) | set(new)):
        if name not in new:
            print(f"gone: {name}")
            bad += 1
        elif name not in old:
            print(f"new: {name}")
            bad += 1
        elif old[name] != new[name]:
            diff = next(i for i, (a, b) in enumerate(zip(old[name] + [""], new[name] + [""]))
                        if a != b)
            print(f"differs: {name} ({len(old[name])} against {len(new[name])} lines; "
                  f"first at line {diff})")
            bad += 1
    print(f"samecode: {len(set(old) & set(new))} functions compared, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
