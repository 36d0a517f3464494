#!/usr/bin/env python3
# A stand-in HTTP receiver on 127.0.0.1:PORT. "sink": answers 200 to every
# POST and appends one line per request (path and body length) to LOG.
# "slow": accepts connections and sends one byte of an answer each second,
# never finishing it.
#
#   tests/lib/httpsink.py sink|slow PORT LOG SECONDS
import http.server
import socket
import sys
import threading
import time

mode, port, log, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
threading.Timer(secs, lambda: __import__("os")._exit(0)).start()

if mode == "sink":
    class H(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with open(log, "a") as f:
                f.write(f"{self.path} {len(body)} {self.headers.get('Content-Type')}\n")
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
else:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)

    def trickle(c):
        try:
            for b in b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{}":
                c.send(bytes([b]))
                time.sleep(1)
        except OSError:
            pass

    while True:
        c, _ = s.accept()
        threading.Thread(target=trickle, args=(c,), daemon=True).start()
