"""A merchant's webhook endpoint for the tests (harness/src/merchant.rs starts it).

Every delivery is verified with the standardwebhooks library (pinned by scripts/bootstrap
--webhooks), never with the project's own code: what cannot be verified is answered 400
and counted as refused. A verified delivery is recorded first, then answered as the
current mode says, so a test sees it arrived whatever the answer:

    ok     204
    error  500
    gone   410
    hang   no answer (the thread sleeps 600 s)
    huge   200 with a 100 MB body, streamed

Routes: POST /webhooks (the endpoint), POST /control {"mode": ...} and GET /control,
GET /deliveries -> {"deliveries": [...], "refused": N}, GET /healthz.

Deliveries and refusals are appended to a JSONL state file, flushed one line at a time,
and read back at start: a restarted receiver still lists what it received. The mode is
not kept: every start answers "ok".
"""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

MODES = ("ok", "error", "gone", "hang", "huge")
STATUS = {"ok": 204, "error": 500, "gone": 410, "huge": 200}
HANG_SECONDS = 600
HUGE_BYTES = 100 * 1024 * 1024
CHUNK = b"x" * (1024 * 1024)


class State:
    """What was received, in arrival order, mirrored to the state file."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.mode = "ok"
        self.deliveries = []
        self.refused = 0
        try:
            with open(path, encoding="utf-8") as file:
                lines = file.read().splitlines()
        except FileNotFoundError:
            lines = []
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line torn by a kill -9 mid-write
            if "refused" in entry:
                self.refused += 1
            else:
                self.deliveries.append(entry)

    def append(self, entry):
        with self.lock:
            with open(self.path, "a", encoding="utf-8") as file:
                file.write(json.dumps(entry) + "\n")
                file.flush()
            if "refused" in entry:
                self.refused += 1
            else:
                self.deliveries.append(entry)

    def listing(self):
        with self.lock:
            return {"deliveries": list(self.deliveries), "refused": self.refused}


def handler(webhook, state):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/healthz":
                self.answer(200, {"status": "ok"})
            elif self.path == "/control":
                self.answer(200, {"mode": state.mode})
            elif self.path == "/deliveries":
                self.answer(200, state.listing())
            else:
                self.answer(404, {"error": "no such route"})

        def do_POST(self):
            body = self.body()
            if self.path == "/webhooks":
                self.deliver(body)
            elif self.path == "/control":
                self.control(body)
            else:
                self.answer(404, {"error": "no such route"})

        def body(self):
            try:
                length = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                length = 0
            return self.rfile.read(max(length, 0))

        def deliver(self, body):
            received_at_ms = int(time.time() * 1000)
            headers = dict(self.headers.items())
            try:
                payload = webhook.verify(body, headers)
            except (WebhookVerificationError, ValueError) as err:
                state.append({"refused": str(err), "receivedAtMs": received_at_ms})
                self.answer(400, {"error": str(err)})
                return
            mode = state.mode
            state.append(
                {
                    "webhookId": self.headers["webhook-id"],
                    "timestamp": self.headers["webhook-timestamp"],
                    "signatures": self.headers["webhook-signature"],
                    "body": payload,
                    "receivedAtMs": received_at_ms,
                    "mode": mode,
                }
            )
            if mode == "hang":
                time.sleep(HANG_SECONDS)
            elif mode == "huge":
                self.huge()
            else:
                self.send_response(STATUS[mode])
                self.send_header("Content-Length", "0")
                self.end_headers()

        def huge(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(HUGE_BYTES))
            self.end_headers()
            try:
                for _ in range(HUGE_BYTES // len(CHUNK)):
                    self.wfile.write(CHUNK)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the sender stopped reading, as it should

        def control(self, body):
            try:
                mode = json.loads(body)["mode"]
            except (ValueError, KeyError, TypeError):
                mode = None
            if mode not in MODES:
                self.answer(400, {"error": f"mode must be one of {', '.join(MODES)}"})
                return
            state.mode = mode
            self.answer(200, {"mode": mode})

        def answer(self, status, value):
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret", required=True, help="whsec_<base64>")
    parser.add_argument("--state", required=True, help="the JSONL state file")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(Webhook(args.secret), State(args.state)))
    print(f"merchant receiver on 127.0.0.1:{args.port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
