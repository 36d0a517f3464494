#!/usr/bin/env python3
"""An object checked against a custom resource's structural schema the way
the API server treats a write (tests/schema/*.crd.json: the CRD's
openAPIV3Schema as published, its revision named in the file).

Two outcomes, each by path:
- errors: what the server refuses with 422 Invalid (a wrong type, a
  missing required field, an enum or pattern missed, an integer out of its
  format's range, a date-time that is not RFC 3339, a name that is not a
  DNS subdomain, apiVersion or kind not the resource's);
- pruned: what the server drops without a word (a field the schema does
  not know, a null), listed so that a writer's lost field is seen.

  crdcheck.py CRD.json FILE [--pruned-ok PATH]...
prints each error and each pruned path (indexes shown as []); exit 0 when
there is no error and nothing pruned but the --pruned-ok paths, 1
otherwise, 2 when a file cannot be read. As a module: check(doc, crd)
returns (errors, pruned, kept), kept being the object as stored.
"""
import argparse
import json
import re
import sys

DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
RANGES = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def _where(path):
    return path or "(the object)"


def _walk(x, s, path, errs, pruned):
    """x checked against schema s; returns x as the server keeps it."""
    if s.get("x-kubernetes-int-or-string"):
        if isinstance(x, bool) or not isinstance(x, (int, str)):
            errs.append(f"{_where(path)}: must be an integer or a string, not {json.dumps(x)}")
        elif isinstance(x, str) and "pattern" in s and not re.search(s["pattern"], x):
            errs.append(f"{_where(path)}: '{x}' does not match {s['pattern']}")
        return x
    t = s.get("type")
    if t in ("integer", "number"):
        if isinstance(x, bool) or not isinstance(x, int if t == "integer" else (int, float)):
            errs.append(f"{_where(path)}: must be an {t}, not {json.dumps(x)}")
            return x
        lo, hi = RANGES.get(s.get("format"), (None, None))
        if lo is not None and not lo <= x <= hi:
            errs.append(f"{_where(path)}: {x} is out of the {s['format']} range")
    elif t in TYPES:
        if not isinstance(x, TYPES[t]):
            errs.append(f"{_where(path)}: must be {'an' if t in ('object', 'array') else 'a'} {t}, "
                        f"not {json.dumps(x)}")
            return x
    elif t is not None:
        raise ValueError(f"{_where(path)}: schema type '{t}' not handled")
    if isinstance(x, str):
        if "enum" in s and x not in s["enum"]:
            errs.append(f"{_where(path)}: '{x}' is not one of {', '.join(s['enum'])}")
        if "pattern" in s and not re.search(s["pattern"], x):
            errs.append(f"{_where(path)}: '{x}' does not match {s['pattern']}")
        if s.get("format") == "date-time" and not RFC3339.match(x):
            errs.append(f"{_where(path)}: '{x}' is not an RFC 3339 date-time")
    if isinstance(x, list):
        return [_walk(v, s.get("items", {}), f"{path}[{i}]", errs, pruned) for i, v in enumerate(x)]
    if not isinstance(x, dict) or s.get("x-kubernetes-preserve-unknown-fields"):
        return x
    props, extra = s.get("properties", {}), s.get("additionalProperties")
    kept = {}
    for k, v in x.items():
        p = f"{path}.{k}" if path else k
        if v is None:
            pruned.append(p)
        elif k in props:
            kept[k] = _walk(v, props[k], p, errs, pruned)
        elif isinstance(extra, dict):
            kept[k] = _walk(v, extra, p, errs, pruned)
        elif extra is True:
            kept[k] = v
        else:
            pruned.append(p)
    for k in s.get("required", []):
        if k not in kept:
            errs.append(f"{path}.{k}: required" if path else f"{k}: required")
    return kept


def check(doc, crd):
    errs, pruned = [], []
    if not isinstance(doc, dict):
        return ["(the object): must be an object"], [], doc
    want = f"{crd['group']}/{crd['version']}"
    if doc.get("apiVersion") != want:
        errs.append(f"apiVersion: must be {want}, not {json.dumps(doc.get('apiVersion'))}")
    if doc.get("kind") != crd["kind"]:
        errs.append(f"kind: must be {crd['kind']}, not {json.dumps(doc.get('kind'))}")
    md = doc.get("metadata")
    name = md.get("name") if isinstance(md, dict) else None
    if not isinstance(name, str) or len(name) > 253 or not DNS_SUBDOMAIN.match(name):
        errs.append(f"metadata.name: {json.dumps(name)} is not a DNS subdomain")
    # ObjectMeta follows the server's own rules, not the schema's
    kept = _walk({k: v for k, v in doc.items() if k != "metadata"}, crd["openAPIV3Schema"], "", errs, pruned)
    if md is not None:
        kept["metadata"] = md
    return errs, pruned, kept


def shape(path):
    """a path with its list indexes left out: status.podsMetric[].qos"""
    return re.sub(r"\[\d+\]", "[]", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("crd")
    ap.add_argument("file")
    ap.add_argument("--pruned-ok", action="append", default=[], metavar="PATH")
    a = ap.parse_args()
    try:
        crd = json.load(open(a.crd))
        doc = json.load(open(a.file))
    except (OSError, ValueError) as e:
        print(f"crdcheck: {e}", file=sys.stderr)
        return 2
    errs, pruned, _ = check(doc, crd)
    for e in errs:
        print(f"error: {e}")
    bad = sorted({shape(p) for p in pruned} - set(a.pruned_ok))
    for p in sorted({shape(p) for p in pruned}):
        print(f"pruned: {p}" + ("" if p in bad else " (expected)"))
    return 1 if errs or bad else 0


if __name__ == "__main__":
    sys.exit(main())
