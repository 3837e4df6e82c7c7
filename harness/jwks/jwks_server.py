"""An identity provider's JWKS endpoint for the tests (harness/src/jwks_server.rs starts it).

Python's standard library only. Two listeners on loopback:

    https://127.0.0.1:PORT/...   what the edge fetches (JWT_JWKS_URL): any GET path is
                                 the key set, answered as the current mode says, and
                                 counted first, so a test sees a fetch whatever the answer
    http://127.0.0.1:CONTROL/... the test's: POST /control {"mode", "body", "cacheControl"},
                                 GET /fetches -> {"fetches": N}, GET /healthz

Modes:

    serve    200 with `body` (the key set as text) and `cacheControl` when given
    hang     no answer (the thread sleeps 600 s)
    garbage  200 with a body that is not JSON
    error    500
    huge     200 with a 1 MiB body, streamed

The certificate is testdata/jwks/tls/server.pem (for 127.0.0.1 and localhost, signed by
testdata/jwks/tls/ca.pem, which the edge's workerd is told to trust).
"""

import argparse
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ("serve", "hang", "garbage", "error", "huge")
HANG_SECONDS = 600
HUGE_CHUNK = b" " * 65536
HUGE_CHUNKS = 16


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.mode = "serve"
        self.body = '{"keys":[]}'
        self.cache_control = None
        self.fetches = 0

    def fetched(self):
        """Counts a fetch; what to answer it with."""
        with self.lock:
            self.fetches += 1
            return self.mode, self.body, self.cache_control


STATE = State()


class Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        sys.stderr.write("%s %s\n" % (self.server.name, format % args))
        sys.stderr.flush()

    def answer(self, status, body, content_type="application/json", extra=()):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


class KeySet(Quiet):
    def do_GET(self):
        mode, body, cache_control = STATE.fetched()
        if mode == "hang":
            time.sleep(HANG_SECONDS)
            return
        if mode == "garbage":
            self.answer(200, b"<html>this is not a key set</html>", "text/html")
        elif mode == "error":
            self.answer(500, b'{"error":"internal"}')
        elif mode == "huge":
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for _ in range(HUGE_CHUNKS):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(HUGE_CHUNK), HUGE_CHUNK))
            self.wfile.write(b"0\r\n\r\n")
        else:
            extra = [("cache-control", cache_control)] if cache_control else []
            self.answer(200, body.encode(), extra=extra)


class Control(Quiet):
    def do_GET(self):
        if self.path == "/healthz":
            self.answer(200, b"{}")
        elif self.path == "/fetches":
            with STATE.lock:
                fetches = STATE.fetches
            self.answer(200, json.dumps({"fetches": fetches}).encode())
        else:
            self.answer(404, b"{}")

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        try:
            asked = json.loads(self.rfile.read(length))
        except ValueError:
            asked = None
        if self.path != "/control" or not isinstance(asked, dict) or asked.get("mode") not in MODES:
            self.answer(400, b'{"error":"POST /control {\\"mode\\": one of the modes}"}')
            return
        with STATE.lock:
            STATE.mode = asked["mode"]
            if "body" in asked:
                STATE.body = asked["body"]
            STATE.cache_control = asked.get("cacheControl")
        self.answer(200, b"{}")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, name, port, handler):
        self.name = name
        super().__init__(("127.0.0.1", port), handler)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--control-port", type=int, required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    args = parser.parse_args()

    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(args.cert, args.key)
    keys = Server("https", args.port, KeySet)
    # The handshake happens on the first read, in the request's own thread, so a client that
    # never finishes one holds up no other.
    keys.socket = tls.wrap_socket(keys.socket, server_side=True, do_handshake_on_connect=False)
    control = Server("control", args.control_port, Control)
    threading.Thread(target=keys.serve_forever, daemon=True).start()
    sys.stderr.write("serving the key set on https://127.0.0.1:%d\n" % args.port)
    sys.stderr.flush()
    control.serve_forever()


if __name__ == "__main__":
    main()
