#!/usr/bin/env python3
# Read or write one element of a pinned BPF map through the bpf(2) syscall
# (the bootstrap bpftool the build makes has no map commands). Tests only.
#
#   tests/lib/bpfmap.py lookup PIN KEY_HEX            -> value hex, exit 1 if absent
#   tests/lib/bpfmap.py update PIN KEY_HEX VALUE_HEX
# x86_64 only (syscall 321).
import ctypes
import os
import sys

NR_BPF, MAP_LOOKUP, MAP_UPDATE, OBJ_GET = 321, 1, 2, 7
libc = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    r = libc.syscall(NR_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if r < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return r


class ObjGet(ctypes.Structure):
    _fields_ = [("pathname", ctypes.c_uint64), ("bpf_fd", ctypes.c_uint32),
                ("file_flags", ctypes.c_uint32)]


class Elem(ctypes.Structure):
    _fields_ = [("map_fd", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("key", ctypes.c_uint64), ("value", ctypes.c_uint64), ("flags", ctypes.c_uint64)]


op, pin, key = sys.argv[1], sys.argv[2].encode(), bytes.fromhex(sys.argv[3])
path = ctypes.create_string_buffer(pin)
fd = bpf(OBJ_GET, ObjGet(ctypes.cast(path, ctypes.c_void_p).value, 0, 0))
kbuf = ctypes.create_string_buffer(key, len(key))
if op == "update":
    val = bytes.fromhex(sys.argv[4])
    vbuf = ctypes.create_string_buffer(val, len(val))
    bpf(MAP_UPDATE, Elem(fd, 0, ctypes.addressof(kbuf), ctypes.addressof(vbuf), 0))
elif op == "lookup":
    vbuf = ctypes.create_string_buffer(4096)
    try:
        bpf(MAP_LOOKUP, Elem(fd, 0, ctypes.addressof(kbuf), ctypes.addressof(vbuf), 0))
    except OSError:
        sys.exit(1)
    print(vbuf.raw[:64].hex())
else:
    sys.exit("bpfmap: lookup or update")
