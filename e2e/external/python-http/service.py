#!/usr/bin/env python3
"""Example fw external service over HTTP ("tickets"), standard library only.

Adapter routes: GET /manifest (fw.manifest.json next to this file, real baseUrl filled in),
GET /health, POST /commands/<name> and POST /queries/<name> (bridge request envelope in,
result envelope or raw JSON out). Besides the ticket entries there are entries that misbehave
on purpose (hang, huge, garbage, dropConnection, ...) for the fw end-to-end tests.
See ../README.md.

Usage: python3 service.py [--port N]   (127.0.0.1; default 0 = any free port)
On start it prints one line to stdout: {"ready": true, "port": N, "baseUrl": "http://127.0.0.1:N"}
"""
import argparse
import json
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MANIFEST_FILE = Path(__file__).resolve().parent / "fw.manifest.json"
FORWARDED_HEADERS = ("x-fw-trace-id", "x-fw-auth-kind", "x-fw-user-id", "x-fw-tenant-id",
                     "x-fw-role", "authorization")
HUGE_SIZE = 5 * 1024 * 1024  # characters in the `huge` result string

tickets_by_tenant = {}  # tenantId -> [ticket, ...]; in memory, lost on restart
next_ticket_id = 1      # process-wide, so ids are unique across tenants
tickets_lock = threading.Lock()


def error(code, message):
    return {"ok": False, "error": {"code": code, "message": message}}


def tenant_of(envelope):
    auth = envelope.get("auth")
    return auth.get("tenantId") if isinstance(auth, dict) else None


def create_ticket(envelope, args):
    global next_ticket_id
    subject = args.get("subject")
    if not isinstance(subject, str) or not subject.strip():
        return 400, {"ok": False, "diagnostics": [
            {"path": "args.subject", "message": "subject is required", "code": "required"}]}
    tenant = tenant_of(envelope)
    with tickets_lock:
        ticket = {"id": next_ticket_id, "subject": subject, "tenantId": tenant}
        next_ticket_id += 1
        tickets_by_tenant.setdefault(tenant, []).append(ticket)
    return 200, {"ok": True, "result": ticket}


def list_tickets(envelope, args):
    with tickets_lock:
        return 200, {"ok": True, "result": list(tickets_by_tenant.get(tenant_of(envelope), []))}


class Handler(BaseHTTPRequestHandler):
    server_version = "fw-python-example/1.0"

    def log_message(self, format, *args):  # keep stdout/stderr quiet
        pass

    def send_json(self, status, body, content_type="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            self.send_json(200, {"status": "ok"})
        elif self.path == "/manifest":
            manifest = json.loads(MANIFEST_FILE.read_text(encoding="utf-8"))
            manifest["service"]["baseUrl"] = self.server.base_url
            self.send_json(200, manifest)
        else:
            self.send_json(404, error("not_found", f"No route GET {self.path}"))

    def do_POST(self):
        parts = self.path.split("?", 1)[0].strip("/").split("/")
        route = (parts[0], parts[1]) if len(parts) == 2 else None
        if route not in ROUTES:
            self.send_json(404, error("not_found", f"No route POST {self.path}"))
            return
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            envelope = json.loads(raw)
        except ValueError:
            self.send_json(400, error("invalid_json", "Request body is not valid JSON."))
            return
        if not isinstance(envelope, dict):
            self.send_json(400, error("invalid_envelope", "Request body must be a JSON object."))
            return
        args = envelope.get("args") if isinstance(envelope.get("args"), dict) else {}
        ROUTES[route](self, envelope, args)


def reply(fn):
    """Adapt a (envelope, args) -> (status, body) function to a route handler."""
    return lambda handler, envelope, args: handler.send_json(*fn(envelope, args))


def echo(handler, envelope, args):
    headers = {name: handler.headers[name] for name in FORWARDED_HEADERS if name in handler.headers}
    handler.send_json(200, {"ok": True, "result": {"envelope": envelope, "headers": headers}})


def hang(handler, envelope, args):
    time.sleep(60)
    handler.send_json(200, {"ok": True, "result": "finally"})


def drop_connection(handler, envelope, args):
    handler.close_connection = True  # return without writing: the server just closes the socket


ROUTES = {
    ("queries", "echo"): echo,
    ("queries", "raw"): reply(lambda e, a: (200, [1, 2, 3])),
    ("commands", "createTicket"): reply(create_ticket),
    ("queries", "listTickets"): reply(list_tickets),
    ("queries", "failing"): reply(lambda e, a: (409, error("ticket_closed", "The ticket is closed."))),
    ("queries", "plainError"): reply(lambda e, a: (500, {"error": "database is down"})),
    ("queries", "hang"): hang,
    ("queries", "huge"): reply(lambda e, a: (200, {"ok": True, "result": "x" * HUGE_SIZE})),
    ("queries", "garbage"): lambda h, e, a: h.send_json(200, b"this is not json", "text/plain"),
    ("queries", "dropConnection"): drop_connection,
}


class Server(ThreadingHTTPServer):
    daemon_threads = True  # a hanging request never blocks shutdown

    def handle_error(self, request, client_address):
        pass  # clients that give up early (timeouts, size limits) are expected here


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = any free port)")
    port = parser.parse_args().port
    try:
        server = Server(("127.0.0.1", port), Handler)
    except OSError as exc:
        sys.exit(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}")
    for sig in (signal.SIGINT, signal.SIGTERM):  # stop cleanly (exit 0), even if a request hangs
        signal.signal(sig, lambda *_: sys.exit(0))
    port = server.server_address[1]
    server.base_url = f"http://127.0.0.1:{port}"
    print(json.dumps({"ready": True, "port": port, "baseUrl": server.base_url}), flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
