#!/usr/bin/env python3
"""The monitoring pack as tests read it: dist/kubernetes/prometheusrule.yaml
and dist/grafana/tidemark.json.

  monitoring.py rules OUT        the PrometheusRule's groups as a plain rules
                                 file (what promtool and Prometheus load)
  monitoring.py queries          every dashboard query, its variables set
                                 ($node: any node, $__rate_interval: 1m), one
                                 per line as "PANEL<TAB>EXPR"
  monitoring.py records OUT      those queries as recording rules (promtool
                                 check rules parses each)
  monitoring.py names            every metric name the rules and the
                                 dashboard's queries and variables read
  monitoring.py check            the dashboard's shape: unique panel ids, a
                                 grid position, every query on the
                                 datasource variable; problems on stdout,
                                 exit 1 when there is one
"""
import json
import re
import sys

import yaml

RULES = "dist/kubernetes/prometheusrule.yaml"
DASH = "dist/grafana/tidemark.json"
NAME = re.compile(r"\b(tidemark_[a-z0-9_]+|up(?=\s*\{))\b")


def groups():
    return yaml.safe_load(open(RULES))["spec"]["groups"]


def dash():
    return json.load(open(DASH))


def queries():
    for p in dash()["panels"]:
        for t in p.get("targets", []):
            e = t["expr"].replace("$node", ".*").replace("$__rate_interval", "1m")
            yield p["title"], e


def exprs():
    for g in groups():
        for r in g["rules"]:
            yield r["expr"]
    for _, e in queries():
        yield e
    for v in dash()["templating"]["list"]:
        if v.get("type") == "query":
            yield v["definition"]


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "rules":
        with open(sys.argv[2], "w") as f:
            yaml.safe_dump({"groups": groups()}, f, sort_keys=False)
    elif cmd == "queries":
        for title, e in queries():
            print("%s\t%s" % (title, " ".join(e.split())))
    elif cmd == "records":
        rules = [{"record": "dashboard:%d" % i, "expr": e}
                 for i, (_, e) in enumerate(queries(), 1)]
        with open(sys.argv[2], "w") as f:
            yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)
    elif cmd == "names":
        names = set()
        for e in exprs():
            # label values in quotes are not names
            names.update(NAME.findall(re.sub(r'"[^"]*"', '""', e)))
        print("\n".join(sorted(names)))
    elif cmd == "check":
        d = dash()
        bad = []
        ids = [p.get("id") for p in d["panels"]]
        if len(set(ids)) != len(ids):
            bad.append("panel ids repeat: %s" % ids)
        for p in d["panels"]:
            if set(p.get("gridPos", {})) != {"h", "w", "x", "y"}:
                bad.append("panel %r: no gridPos" % p.get("title"))
            if not p.get("targets"):
                bad.append("panel %r: no query" % p.get("title"))
            for t in p.get("targets", []):
                if t.get("datasource", {}).get("uid") != "${datasource}" or not t.get("expr"):
                    bad.append("panel %r: a query without expr or off ${datasource}" % p["title"])
        if not any(v.get("name") == "datasource" and v.get("type") == "datasource"
                   for v in d["templating"]["list"]):
            bad.append("no datasource variable")
        print("\n".join(bad))
        return 1 if bad else 0
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
