#!/usr/bin/env python3
"""A stand-in for the parts of a Kubernetes API server tidemarkd calls, over
HTTPS, for tests on machines where no kube-apiserver can run.

It answers the documented paths:
  GET   /api/v1/pods?fieldSelector=spec.nodeName=NODE    (the pod list file)
  GET   /apis/slo.koordinator.sh/v1alpha1/nodemetrics?fieldSelector=metadata.name=NODE
  GET   /apis/slo.koordinator.sh/v1alpha1/nodeslos?fieldSelector=metadata.name=NODE
        (lists; with watch=true, watches from resourceVersion: the events
        since, BOOKMARKs when asked, until timeoutSeconds or --watch-s; a
        version from before this run, or unknown, gets an ERROR event 410;
        the pod list and NodeSLO files are polled for changes)
  GET   /apis/slo.koordinator.sh/v1alpha1/nodemetrics/NODE
  POST  /apis/slo.koordinator.sh/v1alpha1/nodemetrics
  PATCH /apis/slo.koordinator.sh/v1alpha1/nodemetrics/NODE/status
  GET   /apis/slo.koordinator.sh/v1alpha1/nodeslos/NODE   (the NodeSLO file,
        re-read on every request; 404 while it does not exist)
  POST  /api/v1/namespaces/NS/pods/NAME/eviction           (a policy/v1
        Eviction for a pod of the list: DIR/evicted.log)
  POST  /api/v1/namespaces/NS/events                       (a core/v1 Event
        on a pod: DIR/events.log)
  GET   /pods                                              (the kubelet's
        pod list: the same file, no selector)
  GET   /api/v1/nodes/NODE, PATCH (application/json-patch+json: test, add
        and replace of /spec/taints; each new taint list in DIR/taints.log)
and checks what a real one would: the bearer token or, with --client-ca, a
client certificate of user --client-cn (else 401), the field
selector, JSON bodies, the merge-patch content type on PATCH (415), and each
NodeMetric written against the CRD's structural schema (--schema: a
tests/schema/*.crd.json read by tests/lib/crdcheck.py): 422 with the first
error; fields the CRD does not know are pruned, as the server does, and
each one's path (indexes left out) is listed once in DIR/pruned.log.

A plan file (JSON, re-read on every request) makes calls fail first:
{"patch_nodemetric_status": ["500", "429", "timeout", "403"]} answers the
next four such calls so ("timeout": no answer for 30 s); each entry is used
once. Every request is logged to DIR/requests.log as
"CALL METHOD CODE WHO MANAGER" (WHO: token, cert:CN or -; MANAGER: the
write's field manager, - for a read); each accepted status is
DIR/status-N.json. The NodeMetric's metadata.managedFields say who wrote
its status last, and when, as the API server's do.
"""
import argparse
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crdcheck  # noqa: E402  (beside this file)

NM = "/apis/slo.koordinator.sh/v1alpha1/nodemetrics"
SLO = "/apis/slo.koordinator.sh/v1alpha1/nodeslos"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0, help="0: any free port")
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--client-ca", help="also accept client certificates this CA signed")
    ap.add_argument("--client-cn", default="tidemark",
                    help="the one user (certificate CN) accepted")
    ap.add_argument("--node", required=True)
    ap.add_argument("--pods", required=True, help="a PodList JSON file")
    ap.add_argument("--schema", required=True)
    ap.add_argument("--dir", required=True, help="where requests and statuses go")
    ap.add_argument("--nodemetric", help="the NodeMetric object there at start (none: 404)")
    ap.add_argument("--plan", help="the failure plan file")
    ap.add_argument("--nodeslo", help="the NodeSLO file (absent: 404)")
    ap.add_argument("--watch-s", type=float, default=0,
                    help="end every watch after this long (0: at its timeoutSeconds)")
    ap.add_argument("--require-rv0", action="store_true",
                    help="refuse (400) a list that does not ask for resourceVersion=0")
    ap.add_argument("--bookmark-s", type=float, default=2,
                    help="a BOOKMARK event this often on a watch that asks for them")
    a = ap.parse_args()

    crd = json.load(open(a.schema))
    pruned_seen = set()
    lock = threading.Lock()
    state = {"nm": json.load(open(a.nodemetric)) if a.nodemetric else None, "n": 0,
             "node": {"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": a.node, "resourceVersion": "1"},
                      "spec": {"taints": [{"key": "other.example/keep", "effect": "NoExecute"}]}}}

    # resourceVersions and the events of the watched kinds: the pod list and
    # the NodeSLO files are polled, the NodeMetric changes with each write
    cv = threading.Condition()
    # versions go on from the clock: one of an earlier run is older than any
    # this one kept, and a watch from it is told 410 (list again)
    base = int(time.time() * 1000)
    store = {"rv": base, "events": {"pods": [], "nodeslos": [], "nodemetrics": []},
             "pods": {}, "nodeslos": {}}

    def emit(kind, typ, obj):
        """One change (under cv): a new resourceVersion on the object, an
        event for the watches of its kind."""
        store["rv"] += 1
        obj = json.loads(json.dumps(obj))
        obj.setdefault("metadata", {})["resourceVersion"] = str(store["rv"])
        store["events"][kind].append((store["rv"], typ, obj))
        cv.notify_all()
        return obj

    def read_pods():
        try:
            return {i["metadata"]["uid"]: i for i in json.load(open(a.pods))["items"]}
        except (OSError, ValueError, KeyError):
            return None

    def read_slo():
        if not a.nodeslo or not os.path.exists(a.nodeslo):
            return {}
        try:
            o = json.load(open(a.nodeslo))
        except ValueError:
            return None
        return {o.get("metadata", {}).get("name", a.node): o}

    def poll():
        for kind, read in (("pods", read_pods), ("nodeslos", read_slo)):
            now = read()
            if now is None:
                continue
            with cv:
                old = store[kind]
                for k, o in now.items():
                    if k not in old:
                        now[k] = emit(kind, "ADDED", o)
                    elif json.dumps(o, sort_keys=True) != json.dumps(
                            {**old[k], "metadata": {x: y for x, y in old[k]["metadata"].items()
                                                    if x != "resourceVersion"}}, sort_keys=True):
                        now[k] = emit(kind, "MODIFIED", o)
                    else:
                        now[k] = old[k]
                for k, o in old.items():
                    if k not in now:
                        emit(kind, "DELETED", o)
                store[kind] = now

    def poller():
        while True:
            poll()
            time.sleep(0.1)

    poll()
    threading.Thread(target=poller, daemon=True).start()

    def planned(call):
        if not a.plan or not os.path.exists(a.plan):
            return None
        with lock:
            plan = json.load(open(a.plan))
            steps = plan.get(call) or []
            if not steps:
                return None
            step = steps.pop(0)
            with open(a.plan + ".tmp", "w") as f:
                json.dump(plan, f)
            os.replace(a.plan + ".tmp", a.plan)
            return step

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, call, code, obj=None, retry_after=None):
            body = json.dumps(obj if obj is not None else {}).encode()
            with lock, open(os.path.join(a.dir, "requests.log"), "a") as f:
                f.write("%s %s %d %s %s\n" % (call, self.command, code, self.who(),
                                              self.manager() if self.command != "GET" else "-"))
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def watch(self, call, kind, q):
            """A watch from resourceVersion: the events after it, BOOKMARKs
            when asked, until its timeoutSeconds (or --watch-s); a planned
            "410" answers an ERROR event with an expired Status."""
            try:
                since = int(q.get("resourceVersion", ["x"])[0])
            except ValueError:
                return self.reply(call, 400, self.status_obj(400, "BadRequest",
                                                             "resourceVersion"))
            limit = float(q.get("timeoutSeconds", ["1800"])[0])
            if a.watch_s:
                limit = min(limit, a.watch_s)
            marks = q.get("allowWatchBookmarks", [""])[0] == "true"
            with lock, open(os.path.join(a.dir, "requests.log"), "a") as f:
                f.write("%s GET 200 %s -\n" % (call, self.who()))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def send(ev):
                b = (json.dumps(ev) + "\n").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
                self.wfile.flush()
            end = time.monotonic() + limit
            mark = time.monotonic() + a.bookmark_s
            try:
                with cv:
                    known = base <= since <= store["rv"]
                if self.watch_expired or not known:
                    send({"type": "ERROR", "object": self.status_obj(
                        410, "Expired", "too old resource version: %d" % since)})
                    end = 0
                while time.monotonic() < end:
                    with cv:
                        evs = [e for e in store["events"][kind] if e[0] > since]
                        if not evs:
                            cv.wait(min(end, mark) - time.monotonic())
                            evs = [e for e in store["events"][kind] if e[0] > since]
                        rv = store["rv"]
                    for r, typ, obj in evs:
                        send({"type": typ, "object": obj})
                        since = r
                    if marks and time.monotonic() >= mark:
                        send({"type": "BOOKMARK", "object": {"metadata": {
                            "resourceVersion": str(max(rv, since))}}})
                        mark = time.monotonic() + a.bookmark_s
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
                pass
            self.close_connection = True

        def who(self):
            """The request's authenticated user: token, cert:CN or -."""
            if self.headers.get("Authorization") == "Bearer " + a.token:
                return "token"
            cert = self.connection.getpeercert() if a.client_ca else None
            for rdn in (cert or {}).get("subject", ()):
                for k, v in rdn:
                    if k == "commonName" and v == a.client_cn:
                        return "cert:" + v
            return "-"

        def manager(self):
            """The field manager of a write: ?fieldManager=, else the
            User-Agent's first word, as the API server takes it."""
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            if q.get("fieldManager"):
                return q["fieldManager"][0]
            return (self.headers.get("User-Agent") or "unknown").split("/")[0] or "unknown"

        def status_obj(self, code, reason, msg, retry=None):
            o = {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                 "message": msg, "reason": reason, "code": code}
            if retry:
                o["details"] = {"retryAfterSeconds": retry}
            return o

        def route(self):
            u = urllib.parse.urlsplit(self.path)
            q = urllib.parse.parse_qs(u.query)
            watch = q.get("watch", [""])[0] in ("true", "1")
            if self.command == "GET" and u.path == "/api/v1/pods":
                return ("watch_pods" if watch else "list_pods"), q
            if self.command == "GET" and u.path in (NM, SLO):
                kind = "nodemetric" if u.path == NM else "nodeslo"
                return ("watch_" if watch else "list_") + kind, q
            if self.command == "GET" and u.path == NM + "/" + a.node:
                return "get_nodemetric", q
            if self.command == "GET" and u.path == SLO + "/" + a.node:
                return "get_nodeslo", q
            if self.command == "GET" and u.path == "/pods":
                return "kubelet_pods", q
            if u.path == "/api/v1/nodes/" + a.node and self.command in ("GET", "PATCH"):
                return ("get_node" if self.command == "GET" else "patch_node"), q
            p = u.path.split("/")
            if self.command == "POST" and len(p) == 8 and p[1:4] == ["api", "v1", "namespaces"] \
                    and p[5] == "pods" and p[7] == "eviction":
                q["_ns"], q["_name"] = p[4], p[6]
                return "evict_pod", q
            if self.command == "POST" and len(p) == 6 and p[1:4] == ["api", "v1", "namespaces"] \
                    and p[5] == "events":
                q["_ns"] = p[4]
                return "create_event", q
            if self.command == "POST" and u.path == NM:
                return "create_nodemetric", q
            if self.command == "PATCH" and u.path == NM + "/" + a.node + "/status":
                return "patch_nodemetric_status", q
            return "unknown", q

        def body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def handle_any(self):
            call, q = self.route()
            data = self.body()
            if self.who() == "-":
                return self.reply(call, 401, self.status_obj(401, "Unauthorized",
                                                             "no good token or certificate"))
            if "application/json" not in (self.headers.get("Accept") or ""):
                return self.reply(call, 406, self.status_obj(406, "NotAcceptable", "Accept"))
            if call == "unknown":
                return self.reply(call, 404, self.status_obj(404, "NotFound", self.path))
            step = planned(call)
            if step == "timeout":
                time.sleep(30)
                return
            self.watch_expired = step == "410" and call.startswith("watch_")
            if step and not self.watch_expired:
                code = int(step)
                return self.reply(call, code, self.status_obj(
                    code, "Planned", "planned %s" % step, 1 if code == 429 else None))
            if call == "kubelet_pods":
                return self.reply(call, 200, json.load(open(a.pods)))
            if call in ("list_pods", "watch_pods", "list_nodemetric", "watch_nodemetric",
                        "list_nodeslo", "watch_nodeslo"):
                want = "spec.nodeName=" if call.endswith("pods") else "metadata.name="
                if q.get("fieldSelector") != [want + a.node]:
                    return self.reply(call, 400, self.status_obj(
                        400, "BadRequest", "fieldSelector %r" % q.get("fieldSelector")))
                kind = {"pods": "pods", "nodemetric": "nodemetrics",
                        "nodeslo": "nodeslos"}[call.split("_", 1)[1]]
                if call.startswith("watch_"):
                    return self.watch(call, kind, q)
                if a.require_rv0 and q.get("resourceVersion") != ["0"]:
                    return self.reply(call, 400, self.status_obj(
                        400, "BadRequest", "a list without resourceVersion=0"))
                with cv:
                    if kind == "nodemetrics":
                        items = [state["nm"]] if state["nm"] is not None else []
                    else:
                        items = list(store[kind].values())
                    lst = {"kind": {"pods": "PodList", "nodemetrics": "NodeMetricList",
                                    "nodeslos": "NodeSLOList"}[kind],
                           "apiVersion": "v1" if kind == "pods" else "slo.koordinator.sh/v1alpha1",
                           "metadata": {"resourceVersion": str(store["rv"])},
                           "items": json.loads(json.dumps(items))}
                return self.reply(call, 200, lst)
            if call == "get_nodeslo":
                if not a.nodeslo or not os.path.exists(a.nodeslo):
                    return self.reply(call, 404, self.status_obj(404, "NotFound", "nodeslos"))
                return self.reply(call, 200, json.load(open(a.nodeslo)))
            if call == "get_node":
                with lock:
                    node = json.loads(json.dumps(state["node"]))
                return self.reply(call, 200, node)
            if call == "get_nodemetric":
                with lock:
                    nm = state["nm"]
                if nm is None:
                    return self.reply(call, 404, self.status_obj(404, "NotFound", "nodemetrics"))
                return self.reply(call, 200, nm)
            try:
                doc = json.loads(data)
            except ValueError as e:
                return self.reply(call, 400, self.status_obj(400, "BadRequest", str(e)))
            if call == "patch_node":
                if self.headers.get("Content-Type") != "application/json-patch+json":
                    return self.reply(call, 415, self.status_obj(415, "UnsupportedMediaType", "ct"))
                bad = None
                with lock:
                    node = json.loads(json.dumps(state["node"]))
                    for op in doc:
                        if op.get("op") == "test" and op.get("path") == "/metadata/resourceVersion":
                            if op.get("value") != node["metadata"]["resourceVersion"]:
                                bad = (409, "Conflict", "resourceVersion")
                        elif op.get("op") in ("add", "replace") and op.get("path") == "/spec/taints":
                            node["spec"]["taints"] = op["value"]
                        else:
                            bad = (422, "Invalid", str(op))
                        if bad:
                            break
                    if not bad:
                        rv = int(node["metadata"]["resourceVersion"]) + 1
                        node["metadata"]["resourceVersion"] = str(rv)
                        state["node"] = node
                        with open(os.path.join(a.dir, "taints.log"), "a") as f:
                            f.write(" ".join(sorted("%s:%s" % (t["key"], t["effect"])
                                                    for t in node["spec"]["taints"])) + "\n")
                if bad:
                    return self.reply(call, bad[0], self.status_obj(*bad))
                return self.reply(call, 200, node)
            if call in ("evict_pod", "create_event") and \
                    self.headers.get("Content-Type") != "application/json":
                return self.reply(call, 415, self.status_obj(415, "UnsupportedMediaType", "ct"))
            if call == "evict_pod":
                md = doc.get("metadata", {})
                pods = {(i["metadata"]["namespace"], i["metadata"]["name"])
                        for i in json.load(open(a.pods))["items"]}
                if doc.get("apiVersion") != "policy/v1" or doc.get("kind") != "Eviction" or \
                        (md.get("namespace"), md.get("name")) != (q["_ns"], q["_name"]):
                    return self.reply(call, 422, self.status_obj(422, "Invalid", "eviction body"))
                if (q["_ns"], q["_name"]) not in pods:
                    return self.reply(call, 404, self.status_obj(404, "NotFound", "pods"))
                with lock, open(os.path.join(a.dir, "evicted.log"), "a") as f:
                    f.write("%s/%s\n" % (q["_ns"], q["_name"]))
                return self.reply(call, 201, {"kind": "Status", "apiVersion": "v1",
                                              "status": "Success", "code": 201})
            if call == "create_event":
                io = doc.get("involvedObject", {})
                ok = (doc.get("apiVersion") == "v1" and doc.get("kind") == "Event" and
                      doc.get("metadata", {}).get("namespace") == q["_ns"] and
                      io.get("kind") == "Pod" and io.get("namespace") == q["_ns"] and
                      io.get("name") and io.get("uid") and doc.get("reason") and
                      doc.get("type") in ("Normal", "Warning") and doc.get("message") and
                      doc.get("source", {}).get("component") == "tidemarkd")
                if not ok:
                    return self.reply(call, 422, self.status_obj(422, "Invalid", "event body"))
                with lock, open(os.path.join(a.dir, "events.log"), "a") as f:
                    f.write("%s %s/%s %s\n" % (doc["reason"], q["_ns"], io["name"], doc["message"]))
                return self.reply(call, 201, doc)
            if call == "create_nodemetric":
                if self.headers.get("Content-Type") != "application/json":
                    return self.reply(call, 415, self.status_obj(415, "UnsupportedMediaType", "ct"))
                if doc.get("metadata", {}).get("name") != a.node:
                    return self.reply(call, 422, self.status_obj(422, "Invalid", "name"))
                errs, _, doc = crdcheck.check(doc, crd)
                if errs:
                    with open(os.path.join(a.dir, "invalid.log"), "a") as f:
                        f.write(errs[0] + "\n")
                    return self.reply(call, 422, self.status_obj(422, "Invalid", errs[0]))
                with lock, cv:
                    exists = state["nm"] is not None
                    if not exists:
                        doc = state["nm"] = emit("nodemetrics", "ADDED", doc)
                if exists:  # replies take the lock themselves: never inside it
                    return self.reply(call, 409, self.status_obj(409, "AlreadyExists", "nm"))
                return self.reply(call, 201, doc)
            # patch_nodemetric_status
            if self.headers.get("Content-Type") != "application/merge-patch+json":
                return self.reply(call, 415, self.status_obj(
                    415, "UnsupportedMediaType", self.headers.get("Content-Type") or ""))
            with lock:
                nm = state["nm"]
            if nm is None:
                return self.reply(call, 404, self.status_obj(404, "NotFound", "nodemetrics"))
            if set(doc) != {"status"}:
                return self.reply(call, 422, self.status_obj(422, "Invalid", "only status"))
            obj = dict(nm)
            obj["status"] = doc["status"]
            errs, pruned, obj = crdcheck.check(obj, crd)
            if errs:
                msg = errs[0]
                with open(os.path.join(a.dir, "invalid.log"), "a") as f:
                    f.write(msg + "\n")
                return self.reply(call, 422, self.status_obj(422, "Invalid", msg))
            mgr = self.manager()
            if len(mgr) > 128:
                return self.reply(call, 422, self.status_obj(422, "Invalid", "fieldManager"))
            with lock:
                for q in sorted({crdcheck.shape(x) for x in pruned} - pruned_seen):
                    pruned_seen.add(q)
                    with open(os.path.join(a.dir, "pruned.log"), "a") as f:
                        f.write(q + "\n")
                state["n"] += 1
                n = state["n"]
                nm["status"] = obj.get("status", {})
                # managedFields as the API server keeps them for Update
                # operations: the writer owns the fields it set (with the
                # time), the others lose those; an entry left empty goes
                mine = {"f:" + k: {} for k in doc["status"]}
                md = nm.setdefault("metadata", {})
                kept = []
                for e in md.get("managedFields", []):
                    if e.get("manager") == mgr and e.get("subresource") == "status":
                        continue
                    st = e.get("fieldsV1", {}).get("f:status")
                    if e.get("subresource") == "status" and isinstance(st, dict):
                        for k in mine:
                            st.pop(k, None)
                        if not st:
                            continue
                    kept.append(e)
                kept.append({"manager": mgr, "operation": "Update",
                             "apiVersion": "slo.koordinator.sh/v1alpha1",
                             "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                             "fieldsType": "FieldsV1", "fieldsV1": {"f:status": mine},
                             "subresource": "status"})
                md["managedFields"] = kept
                with cv:
                    state["nm"] = nm = emit("nodemetrics", "MODIFIED", nm)
                obj = json.loads(json.dumps(nm))
            with open(os.path.join(a.dir, "status-%d.json" % n), "w") as f:
                json.dump(obj, f)
            return self.reply(call, 200, obj)

        do_GET = do_POST = do_PATCH = do_PUT = handle_any

    srv = ThreadingHTTPServer(("127.0.0.1", a.port), H)
    srv.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    if a.client_ca:
        ctx.verify_mode = ssl.CERT_OPTIONAL  # as an API server: a token or a certificate
        ctx.load_verify_locations(a.client_ca)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("ready %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
