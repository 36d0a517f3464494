#!/usr/bin/env python3
"""Write a raw BTF file (the format of /sys/kernel/btf/vmlinux) holding an
int and one struct with the members named, for tests of what reads a
kernel's BTF: btfgen.py OUT STRUCT [MEMBER...]."""
import struct
import sys

BTF_KIND_INT, BTF_KIND_STRUCT = 1, 4


def build(name, members):
    strs = b"\0"
    offs = {}

    def s(x):
        nonlocal strs
        if x not in offs:
            offs[x] = len(strs)
            strs += x.encode() + b"\0"
        return offs[x]

    # type 1: a 32-bit signed int
    types = struct.pack("<III", s("int"), BTF_KIND_INT << 24, 4)
    types += struct.pack("<I", (1 << 24) | 32)  # BTF_INT_SIGNED, 32 bits
    # type 2: the struct, every member an int at its own offset
    types += struct.pack("<III", s(name), (BTF_KIND_STRUCT << 24) | len(members), 4 * len(members))
    for i, m in enumerate(members):
        types += struct.pack("<III", s(m), 1, 32 * i)
    hdr = struct.pack("<HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(types), len(types), len(strs))
    return hdr + types + strs


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: btfgen.py OUT STRUCT [MEMBER...]")
    with open(sys.argv[1], "wb") as f:
        f.write(build(sys.argv[2], sys.argv[3:]))
