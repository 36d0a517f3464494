#!/usr/bin/env python3
# Read or write one element of a pinned BPF map through the bpf(2) syscall
# (the bootstrap bpftool the build makes has no map commands). Tests only.
#
#   tests/lib/bpfmap.py lookup PIN KEY_HEX            -> value hex; exit 1 if absent
#   tests/lib/bpfmap.py absent PIN KEY_HEX            -> exit 0 if absent, 1 if there
#   tests/lib/bpfmap.py update PIN KEY_HEX VALUE_HEX
# Any other failure (no such pin, not a map, a bad key, no permission) is
# exit 2 with a message: never read as "absent", which a "gone" check
# would take for a pass.
# x86_64 only (syscall 321).
import ctypes
import errno
import os
import sys

NR_BPF, MAP_LOOKUP, MAP_UPDATE, OBJ_GET, OBJ_GET_INFO_BY_FD = 321, 1, 2, 7, 15
libc = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    r = libc.syscall(NR_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if r < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return r


class ObjGet(ctypes.Structure):
    _fields_ = [("pathname", ctypes.c_uint64), ("bpf_fd", ctypes.c_uint32),
                ("file_flags", ctypes.c_uint32)]


class InfoByFd(ctypes.Structure):
    _fields_ = [("bpf_fd", ctypes.c_uint32), ("info_len", ctypes.c_uint32), ("info", ctypes.c_uint64)]


class MapInfo(ctypes.Structure):
    # the head of struct bpf_map_info
    _fields_ = [("type", ctypes.c_uint32), ("id", ctypes.c_uint32), ("key_size", ctypes.c_uint32),
                ("value_size", ctypes.c_uint32), ("max_entries", ctypes.c_uint32),
                ("map_flags", ctypes.c_uint32), ("name", ctypes.c_char * 16)]


class Elem(ctypes.Structure):
    _fields_ = [("map_fd", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("key", ctypes.c_uint64), ("value", ctypes.c_uint64), ("flags", ctypes.c_uint64)]


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("lookup", "absent", "update") or \
            (sys.argv[1] == "update") != (len(sys.argv) == 5) or len(sys.argv) > 5:
        print("usage: bpfmap.py lookup|absent PIN KEY_HEX, or update PIN KEY_HEX VALUE_HEX", file=sys.stderr)
        return 2
    op, pin = sys.argv[1], sys.argv[2]
    try:
        key = bytes.fromhex(sys.argv[3])
        val = bytes.fromhex(sys.argv[4]) if op == "update" else b""
    except ValueError as e:
        print(f"bpfmap.py: bad hex: {e}", file=sys.stderr)
        return 2
    path = ctypes.create_string_buffer(pin.encode())
    try:
        fd = bpf(OBJ_GET, ObjGet(ctypes.cast(path, ctypes.c_void_p).value, 0, 0))
    except OSError as e:
        print(f"bpfmap.py: {pin}: {e.strerror}", file=sys.stderr)
        return 2
    info = MapInfo()
    try:
        bpf(OBJ_GET_INFO_BY_FD, InfoByFd(fd, ctypes.sizeof(info), ctypes.addressof(info)))
    except OSError as e:
        print(f"bpfmap.py: {pin}: not a map? {e.strerror}", file=sys.stderr)
        return 2
    # a short key would be read past its end: another key, found or not
    if len(key) != info.key_size or (op == "update" and len(val) != info.value_size):
        print(f"bpfmap.py: {pin} has {info.key_size}-byte keys and {info.value_size}-byte values, "
              f"given {len(key)}" + (f" and {len(val)}" if op == "update" else ""), file=sys.stderr)
        return 2
    kbuf = ctypes.create_string_buffer(key, len(key))
    if op == "update":
        vbuf = ctypes.create_string_buffer(val, len(val))
        try:
            bpf(MAP_UPDATE, Elem(fd, 0, ctypes.addressof(kbuf), ctypes.addressof(vbuf), 0))
        except OSError as e:
            print(f"bpfmap.py: update {pin}: {e.strerror}", file=sys.stderr)
            return 2
        return 0
    # room for a per-CPU map's copy per CPU too; the first value printed
    vbuf = ctypes.create_string_buffer(max(4096, (info.value_size + 7) // 8 * 8 * 512))
    try:
        bpf(MAP_LOOKUP, Elem(fd, 0, ctypes.addressof(kbuf), ctypes.addressof(vbuf), 0))
    except OSError as e:
        if e.errno == errno.ENOENT:
            return 0 if op == "absent" else 1
        print(f"bpfmap.py: lookup {pin}: {e.strerror}", file=sys.stderr)
        return 2
    if op == "absent":
        return 1
    print(vbuf.raw[:info.value_size].hex())
    return 0


if __name__ == "__main__":
    sys.exit(main())
