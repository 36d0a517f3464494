#!/usr/bin/env python3
"""The project's layering, checked.

  layering.py bpf FILE...      each BPF part declares no function it does
                               not define (no forward declaration: a part
                               uses only the parts included before it)
  layering.py objs OBJ...      among one program's object files (one per
                               source file), no file calls into a file that
                               calls it, directly or around a longer circle

Prints one line per finding and exits 1 when there is any; 2 when the
input cannot be read (no file, no object: nothing checked is a failure).
"""
import os
import re
import subprocess
import sys


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def top_level(text):
    """Each top-level statement: (line, text, ended by ';' or by a body)."""
    out, depth, start, buf, line = [], 0, 1, [], 1
    in_pp = False
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
            if in_pp and not (i > 0 and text[i - 1] == "\\"):
                in_pp = False
                buf, start = [], line
            continue
        if in_pp:
            continue
        if ch == "#" and depth == 0 and not "".join(buf).strip():
            in_pp = True
            continue
        if not buf and ch.isspace():
            continue
        if not buf:
            start = line
        buf.append(ch)
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                s = "".join(buf)
                # a function body ends the statement; a struct/map type does not
                if re.search(r"\)\s*\{", s.split("{", 1)[0] + "{") and "=" not in s.split("{", 1)[0]:
                    out.append((start, s, "body"))
                    buf = []
        elif ch == ";" and depth == 0:
            out.append((start, "".join(buf), "decl"))
            buf = []
    return out


FUNC = re.compile(r"\b([A-Za-z_]\w*)\s*\(((?:[^()]|\([^()]*\))*)\)\s*(?:__attribute__\s*\(\(.*\)\))?\s*$")


def func_name(head):
    """The function a declaration or definition head names, or None."""
    head = head.strip()
    m = FUNC.search(head)
    if not m or m.start() == 0:  # a macro call such as UEI_DEFINE(uei)
        return None
    before = head[: m.start()].strip()
    if not before or before.endswith(("=", ",")) or "=" in before:
        return None
    return m.group(1)


def check_bpf(files):
    bad = 0
    for path in files:
        try:
            text = strip_comments(open(path).read())
        except OSError as e:
            print(f"layering: cannot read {path}: {e}")
            return 2
        defined, declared = set(), []
        for line, stmt, kind in top_level(text):
            if kind == "body":
                name = func_name(stmt.split("{", 1)[0])
                if name:
                    defined.add(name)
            elif "{" not in stmt:
                name = func_name(stmt.rstrip(";"))
                if name:
                    declared.append((line, name))
        for line, name in declared:
            if name not in defined:
                print(f"{path}:{line}: declares {name}() but does not define it")
                bad += 1
    return 1 if bad else 0


def nm(path, flags):
    out = subprocess.run(["nm", flags, path], check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def check_objs(objs):
    missing = [o for o in objs if not os.path.isfile(o)]
    if not objs or missing:
        print(f"layering: no object file {' '.join(missing) or 'given'} (make all first)")
        return 2
    owner, uses = {}, {}
    for o in objs:
        name = o.split("/obj/", 1)[-1][:-2] + ".c"
        uses[name] = set()
        for ln in nm(o, "--defined-only"):
            f = ln.split()
            if len(f) == 3 and f[1] in "TDBRVW":
                owner[f[2]] = name
        for ln in nm(o, "--undefined-only"):
            uses[name].add(ln.split()[-1])
    graph = {n: sorted({owner[s] for s in syms if s in owner and owner[s] != n})
             for n, syms in uses.items()}
    # circles: Tarjan's strongly connected components
    index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    for comp in comps:
        calls = []
        for a in comp:
            for b in graph[a]:
                if b in comp:
                    why = sorted(s for s in uses[a] if owner.get(s) == b)[:3]
                    calls.append(f"{a} -> {b} ({', '.join(why)})")
        print("circle: " + "; ".join(calls))
    print(f"layering: {len(graph)} files, {sum(len(v) for v in graph.values())} calls between "
          f"them, {len(comps)} circles")
    return 1 if comps else 0


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("bpf", "objs"):
        print(__doc__.strip())
        return 2
    if sys.argv[1] == "bpf":
        return check_bpf(sys.argv[2:])
    return check_objs(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
