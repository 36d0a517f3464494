#!/usr/bin/env python3
# The project's mutation test (make mutants): every mutant of
# tests/mutants/mutants.ini applied, one at a time, to a copy of the tree
# (build/mutants/tree, the build copied along so that only what a mutant
# changes is rebuilt), built, and run against the tests that own its claim
# through tests/run. Every one of those tests must fail: one that passes
# with its claim broken is a defect in that test, and the mutant survives. The original file is put back after each.
#
#   tools/mutants.py [--check] [--only ID,ID...] [--report FILE] [--list FILE]
#   tools/mutants.py --apply ID OUT
#
# --check: only verify the list (each entry complete, its text found once
#          in its file, its tests there) and exit.
# --apply: write the mutant's file, mutated, to OUT (the tree untouched;
#          tests/host/mutants.sh builds unit tests against it).
# A mutant whose BPF program the verifier rejects is not killed: every
# test then fails at the scheduler's load, before any check of its claim.
# Exit 0 when every mutant run was killed, 1 when one survived, did not
# build or did not load, 2 when the list itself is wrong.
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
LIST = os.path.join(TOP, "tests/mutants/mutants.ini")
KEYS = ("file", "from", "to", "tests", "claim")


def parse(path):
    """[id] sections of key = value rows; a value opened by '|' runs to the
    line that ends with '|', kept verbatim."""
    muts, cur, key, buf = [], None, None, None
    with open(path) as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines, 1):
        if buf is not None:
            if line.endswith("|"):
                buf.append(line[:-1])
                cur[key] = "\n".join(buf)
                buf = None
            else:
                buf.append(line)
            continue
        if not line.strip() or line.startswith("#"):
            continue
        m = re.fullmatch(r"\[([a-z0-9-]+)\]", line)
        if m:
            cur = {"id": m.group(1), "line": no}
            muts.append(cur)
            continue
        m = re.fullmatch(r"([a-z]+) = (.*)", line)
        if not m or cur is None or m.group(1) not in KEYS:
            raise SystemExit(f"{path}:{no}: not a [id] or one of {', '.join(KEYS)} = VALUE: {line!r}")
        key, val = m.group(1), m.group(2)
        if val.startswith("|"):
            if len(val) > 1 and val.endswith("|"):
                cur[key] = val[1:-1]
            else:
                buf = [val[1:]]
        else:
            cur[key] = val.strip()
    if buf is not None:
        raise SystemExit(f"{path}: a '|' value of [{cur['id']}] is not closed")
    return muts


def check(muts, root):
    """What is wrong with the list against the tree at @root, one line each."""
    errs, seen = [], set()
    for m in muts:
        where = f"[{m['id']}] (line {m['line']})"
        if m["id"] in seen:
            errs.append(f"{where}: a second mutant of that name")
        seen.add(m["id"])
        miss = [k for k in KEYS if not m.get(k)]
        if miss:
            errs.append(f"{where}: no {', '.join(miss)}")
            continue
        p = os.path.join(root, m["file"])
        try:
            text = open(p).read()
        except OSError as e:
            errs.append(f"{where}: {m['file']}: {e.strerror}")
            continue
        n = text.count(m["from"])
        if n != 1:
            errs.append(f"{where}: its text occurs {n} times in {m['file']}, not once")
        if m["from"] == m["to"]:
            errs.append(f"{where}: 'to' is the same text as 'from'")
        for t in m["tests"].split():
            src = t
            if t.startswith("build/tests/"):
                src = "tests/unit/" + t[len("build/tests/"):] + ".c"
            if not os.path.exists(os.path.join(root, src)):
                errs.append(f"{where}: no test {t}")
    return errs


def mutate(text, m):
    return text.replace(m["from"], m["to"], 1)


def sh(cmd, cwd, log, timeout):
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n")
        f.flush()
        try:
            return subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
                                  timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            f.write(f"timed out after {timeout} s\n")
            return 124


def copy_tree(dst):
    """The tree and its build, without the parts no test here needs."""
    os.makedirs(dst, exist_ok=True)
    ex = [".git", "build/mutants", "build/deb", "build/image", "build/kernel-deb"]
    cmd = ["rsync", "-a", "--delete"] + [f"--exclude=/{e}" for e in ex] + [TOP + "/", dst + "/"]
    subprocess.run(cmd, check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--only")
    ap.add_argument("--report", default=os.path.join(TOP, "build/mutants/report.md"))
    ap.add_argument("--list", default=LIST)
    ap.add_argument("--apply", nargs=2, metavar=("ID", "OUT"))
    a = ap.parse_args()
    muts = parse(a.list)
    if a.apply:
        m = [m for m in muts if m["id"] == a.apply[0]]
        if not m:
            print(f"mutants: no mutant {a.apply[0]} in {a.list}", file=sys.stderr)
            return 2
        text = open(os.path.join(TOP, m[0]["file"])).read()
        if text.count(m[0]["from"]) != 1:
            print(f"mutants: [{a.apply[0]}] does not apply once to {m[0]['file']}", file=sys.stderr)
            return 2
        open(a.apply[1], "w").write(mutate(text, m[0]))
        return 0
    errs = check(muts, TOP)
    if errs:
        for e in errs:
            print(f"mutants: {e}", file=sys.stderr)
        return 2
    if a.only:
        want = a.only.split(",")
        unknown = [w for w in want if w not in {m["id"] for m in muts}]
        if unknown:
            print(f"mutants: no mutant {', '.join(unknown)} in {a.list}", file=sys.stderr)
            return 2
        muts = [m for m in muts if m["id"] in want]
    if a.check:
        print(f"mutants: {len(muts)} in the list, each applies once")
        for m in muts:
            print(m["id"], m["file"], m["tests"])
        return 0

    work = os.path.join(TOP, "build/mutants")
    tree = os.path.join(work, "tree")
    os.makedirs(work, exist_ok=True)
    print(f"mutants: copying the tree to {tree}", flush=True)
    copy_tree(tree)
    jobs = str(os.cpu_count() or 1)
    base_log = os.path.join(work, "base.log")
    open(base_log, "w").close()
    # the copy must build as it is first: a mutant's build failure is then its own
    if sh(["make", "-s", f"-j{jobs}", "mutant-needs"], tree, base_log, 3600):
        print(f"mutants: the unchanged tree does not build (see {base_log})", file=sys.stderr)
        return 2
    rows, t_all = [], time.time()
    for m in muts:
        log = os.path.join(work, m["id"] + ".log")
        open(log, "w").close()
        path = os.path.join(tree, m["file"])
        orig = open(path).read()
        t0 = time.time()
        open(path, "w").write(mutate(orig, m))
        try:
            if sh(["make", "-s", f"-j{jobs}", "mutant-needs"], tree, log, 3600):
                verdict, why = "does not build", "see " + os.path.relpath(log, TOP)
            else:
                sh(["tests/run"] + m["tests"].split(), tree, log, 3600)
                out = open(log).read()
                # each owner on its own: every one must fail (one that
                # passes with the claim broken is the defect sought)
                per = dict(re.findall(r"^== (\S+): \d+ passed, (\d+) failed, \d+ skipped \(\d+ s\)$", out, re.M))
                failed = [x[len("FAILED "):] for x in out.splitlines() if x.startswith("FAILED ")]
                missing = [t for t in m["tests"].split() if t not in per]
                passing = [t for t in m["tests"].split() if per.get(t) == "0"]
                rejected = re.search(r"prog '([^']+)': BPF program load failed", out)
                if rejected:
                    # the verifier refused the mutated program: the tests
                    # failed at its load, and no check of the claim ran
                    verdict, why = "does not load", "the verifier rejected prog '%s' (see %s)" % (
                        rejected.group(1), os.path.relpath(log, TOP))
                elif missing:
                    verdict, why = "no verdict", "no result from " + " ".join(missing)
                elif passing:
                    verdict, why = "SURVIVED", "passed: " + " ".join(passing) + \
                        ("; failed: " + "; ".join(failed[:2]) if failed else "")
                else:
                    verdict, why = "killed", "; ".join(failed[:3])
        finally:
            # back, with a new time stamp: make rebuilds what the mutant changed
            open(path, "w").write(orig)
            os.utime(path)
        dt = time.time() - t0
        rows.append((m, verdict, why, dt))
        print(f"mutants: {m['id']}: {verdict} ({dt:.0f} s) {why}", flush=True)

    killed = sum(1 for r in rows if r[1] == "killed")
    os.makedirs(os.path.dirname(a.report), exist_ok=True)
    with open(a.report, "w") as f:
        f.write(f"{killed} of {len(rows)} mutants killed ({100 * killed / max(1, len(rows)):.0f}%) "
                f"in {(time.time() - t_all) / 60:.0f} min\n\n")
        f.write("| mutant | claim | change | tests | verdict |\n|---|---|---|---|---|\n")
        for m, verdict, why, dt in rows:
            # a '|' in a table cell ends it, even inside a code span
            cell = lambda x: x.replace("|", "\\|")
            ch = f"`{m['file']}`: `{cell(' '.join(m['from'].split()))}` -> `{cell(' '.join(m['to'].split()))}`"
            f.write(f"| {m['id']} | {m['claim']} | {ch} | {' '.join('`%s`' % t for t in m['tests'].split())} "
                    f"| {verdict} ({dt:.0f} s): {cell(why)} |\n")
    print(f"mutants: {killed} of {len(rows)} killed; report in {os.path.relpath(a.report, TOP)}")
    shutil.rmtree(os.path.join(tree, "build/mutants"), ignore_errors=True)
    return 0 if killed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
