#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A hostile stand-in for etcd's JSON gateway, for the fleet tests.

    fake_gateway.py SCENARIO PORTFILE LOG

SCENARIO is a JSON object mapping a request path ("/v3/kv/range",
"/v3/watch", "/v3/kv/txn", ...) to a list of replies, used in turn (the
last one again once the list is used up). A reply is one of
    {"body": TEXT}                     200 with TEXT (default "{}")
    {"lines": [TEXT...], "then": "close" | "hold"}
                                       a stream of lines, then the end of
                                       the reply or silence until the end
    {"hang": true}                     the request is read, never answered
With FAKE_GATEWAY_TLS=CERT:KEY in the environment it speaks https with
that certificate (the attack-trust test's https endpoint).
Listens on a free loopback port, writes it to PORTFILE, and appends the
path of every request to LOG, then "body PATH BODY" (the request's body,
one line), and "hasleader PATH" for each request that carries the
gateway's hasleader requirement.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

scenario = json.load(open(sys.argv[1]))
portfile, logfile = sys.argv[2], sys.argv[3]
used = {}
lock = threading.Lock()


def next_reply(path, body):
    with lock:
        replies = scenario.get(path) or [{"body": "{}"}]
        i = used.get(path, 0)
        used[path] = i + 1
        with open(logfile, "a") as f:
            f.write(path + "\n")
            f.write("body " + path + " " + body.decode(errors="replace").replace("\n", " ") + "\n")
        return replies[min(i, len(replies) - 1)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # the end of a reply is the end of the connection

    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        if self.headers.get("Grpc-Metadata-hasleader") == "true":
            with lock, open(logfile, "a") as f:
                f.write("hasleader " + self.path + "\n")
        r = next_reply(self.path, body)
        try:
            if r.get("hang"):
                time.sleep(3600)
                return
            self.send_response(r.get("status", 200))
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            if "lines" in r:
                for line in r["lines"]:
                    self.wfile.write(line.encode() + b"\n")
                    self.wfile.flush()
                if r.get("then") == "hold":
                    time.sleep(3600)
            else:
                self.wfile.write(r.get("body", "{}").encode())
        except (BrokenPipeError, ConnectionResetError):
            pass


class Server(ThreadingHTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
if os.environ.get("FAKE_GATEWAY_TLS"):
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*os.environ["FAKE_GATEWAY_TLS"].split(":"))
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
