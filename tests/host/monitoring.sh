#!/usr/bin/env bash
# plan: 8
# The monitoring pack: the alert rules of dist/kubernetes/prometheusrule.yaml
# load (promtool check rules), pass their unit tests (tests/promtool/
# rules_test.yaml: each alert fires on one node and not on one just short of
# it), and those tests catch a broken rule (each mutant below must fail
# them); the Grafana dashboard (dist/grafana/tidemark.json) is well formed,
# every query parses as PromQL, and every metric the rules and the dashboard
# read is a family of docs/metrics.md. tests/vm/prometheus.sh checks the same
# names against a live /metrics and runs every query and rule in Prometheus.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

command -v promtool >/dev/null || { not_ok "promtool is installed (tools/deps.sh)"; tap_done; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mon=tests/lib/monitoring.py

if ! $mon rules "$tmp/rules.yaml" 2>"$tmp/err"; then
	not_ok "the PrometheusRule's groups read" "$(cat "$tmp/err")"
	tap_done
fi
if out=$(promtool check rules "$tmp/rules.yaml" 2>&1); then
	ok "promtool check rules: $(grep -o '[0-9]* rules found' <<<"$out")"
else
	not_ok "promtool check rules" "$out"
fi
alerts=$(python3 -c 'import sys, yaml
for g in yaml.safe_load(open(sys.argv[1]))["groups"]:
    for r in g["rules"]:
        print(r.get("alert", "-"), r.get("for", "0"))' "$tmp/rules.yaml")
want="TidemarkdDown 5m
TidemarkSchedulerDown 2m
TidemarkFallbackActive 5m
TidemarkConfigRejected 0
TidemarkKubeRequestsFailing 10m
TidemarkNodeAboveLine 10m
TidemarkNodeMetricStale 5m"
expect_eq "the alerts asked for, with their durations" "$want" "$alerts"

cp tests/promtool/rules_test.yaml "$tmp/"
if out=$(promtool test rules "$tmp/rules_test.yaml" 2>&1); then
	ok "promtool test rules passes"
else
	not_ok "promtool test rules" "$out"
fi
# each alert tested where it fires and where it must not
cover=$(python3 - "$tmp/rules_test.yaml" <<'PY'
import sys, yaml
fires, quiet = set(), set()
for t in yaml.safe_load(open(sys.argv[1]))["tests"]:
    for a in t.get("alert_rule_test", []):
        (fires if a.get("exp_alerts") else quiet).add(a["alertname"])
for n in sorted(fires | quiet):
    print(n, "fires" if n in fires else "-", "quiet" if n in quiet else "-")
PY
)
expect_eq "every alert tested firing and quiet" \
	"$(awk '{print $1, "fires", "quiet"}' <<<"$alerts" | sort)" "$cover"

# mutants: a rule that forgets its duration, or moves its bound, must fail
# the tests (RULE<TAB>FROM<TAB>TO: one replacement in that rule's text)
mutants="TidemarkdDown	for: 5m	for: 2m
TidemarkSchedulerDown	== 0	< 2
TidemarkSchedulerDown	for: 2m	for: 0m
TidemarkFallbackActive	for: 5m	for: 3m
TidemarkConfigRejected	[15m]	[30m]
TidemarkKubeRequestsFailing	> 0.25	> 0.1
TidemarkKubeRequestsFailing	for: 10m	for: 30m
TidemarkNodeAboveLine	> tidemark_scheduler_be_line_ratio	> tidemark_scheduler_be_line_ratio - 0.1
TidemarkNodeAboveLine	for: 10m	for: 2m
TidemarkNodeMetricStale	3 *	30 *
TidemarkNodeMetricStale	and ignoring (call) tidemark_nodemetric_writing == 1	or ignoring (call) tidemark_nodemetric_writing == 1"
survived=() n=0
while IFS=$'\t' read -r rule from to; do
	n=$((n + 1))
	mkdir -p "$tmp/m$n"
	cp "$tmp/rules_test.yaml" "$tmp/m$n/"
	if ! python3 - "$tmp/rules.yaml" "$tmp/m$n/rules.yaml" "$rule" "$from" "$to" <<'PY'; then
import sys, yaml
src, dst, rule, frm, to = sys.argv[1:6]
doc = yaml.safe_load(open(src))
hit = 0
for g in doc["groups"]:
    for r in g["rules"]:
        if r.get("alert") != rule:
            continue
        text = yaml.safe_dump(r, sort_keys=False, width=1000)
        if frm in text:
            r.clear()
            r.update(yaml.safe_load(text.replace(frm, to, 1)))
            hit += 1
yaml.safe_dump(doc, open(dst, "w"), sort_keys=False)
sys.exit(0 if hit == 1 else 1)
PY
		survived+=("$rule: '$from' not found")
		continue
	fi
	promtool test rules "$tmp/m$n/rules_test.yaml" >/dev/null 2>&1 && survived+=("$rule: '$from' -> '$to'")
done <<<"$mutants"
expect_eq "each of $n mutants of the rules fails their tests" "" "$(printf '%s\n' "${survived[@]}")"

# the dashboard
if out=$($mon check 2>&1); then
	ok "the dashboard is well formed ($(python3 -c 'import json; print(len(json.load(open("dist/grafana/tidemark.json"))["panels"]))') panels)"
else
	not_ok "the dashboard is well formed" "$out"
fi
$mon records "$tmp/dash.yaml"
if out=$(promtool check rules "$tmp/dash.yaml" 2>&1); then
	ok "every dashboard query parses as PromQL ($(grep -o '[0-9]* rules found' <<<"$out"))"
else
	not_ok "every dashboard query parses as PromQL" "$out"
fi
# the metrics read: families of docs/metrics.md (a histogram's series by
# its _bucket, _sum and _count), or Prometheus's own up
undoc=$($mon names | while read -r m; do
	[ "$m" = up ] && continue
	f=$m
	case $m in *_bucket | *_sum | *_count) f=${m%_*} ;; esac
	grep -qF "| \`$f\` |" docs/metrics.md || echo "$m"
done)
expect_eq "every metric the rules and the dashboard read is in docs/metrics.md" "" "$undoc"
tap_done
