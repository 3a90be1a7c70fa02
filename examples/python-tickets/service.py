#!/usr/bin/env python3
"""A tickets service in Python for an fw app, on the standard library only.

It speaks fw's external runtime protocol (docs/external.md in the fw package): fw's bridge POSTs an
envelope {"args": ..., "auth": {"kind", "userId", "tenantId", "role"}, "fw": {...}} to
/commands/<name> or /queries/<name> after it has authenticated the caller and checked the entry's
policy and argsSchema; the service answers {"ok": true, "result": ...} or
{"ok": false, "error": {"code": ..., "message": ...}}. Tickets are kept per tenant, in memory.

Usage: python3 service.py [--port 8787]
"""
import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MANIFEST = Path(__file__).resolve().parent / "fw.manifest.json"

tickets = {}  # tenantId -> [ticket, ...]
lock = threading.Lock()
next_id = 1


def tenant_of(envelope):
    return (envelope.get("auth") or {}).get("tenantId")


def create_ticket(envelope):
    global next_id
    subject = envelope["args"]["subject"].strip()  # fw checked it against argsSchema
    if not subject:
        return 400, {"ok": False, "error": {"code": "validation_failed", "message": "subject is blank"},
                     "diagnostics": [{"path": "args.subject", "code": "blank", "message": "subject is blank"}]}
    with lock:
        ticket = {"id": next_id, "subject": subject, "status": "open"}
        next_id += 1
        tickets.setdefault(tenant_of(envelope), []).append(ticket)
    return 200, {"ok": True, "result": ticket}


def close_ticket(envelope):
    with lock:
        for ticket in tickets.get(tenant_of(envelope), []):
            if ticket["id"] == envelope["args"]["id"]:
                ticket["status"] = "closed"
                return 200, {"ok": True, "result": ticket}
    return 404, {"ok": False, "error": {"code": "not_found", "message": "no such ticket"}}


def list_tickets(envelope):
    with lock:
        return 200, {"ok": True, "result": list(tickets.get(tenant_of(envelope), []))}


ROUTES = {
    "/commands/createTicket": create_ticket,
    "/commands/closeTicket": close_ticket,
    "/queries/listTickets": list_tickets,
}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format, *args):
        print(f"{self.command} {self.path} {args[1] if len(args) > 1 else ''}", flush=True)

    def reply(self, status, body):
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            self.reply(200, {"status": "ok"})
        elif self.path == "/manifest":  # what `fw manifest import http://127.0.0.1:8787` reads
            self.reply(200, json.loads(MANIFEST.read_text(encoding="utf-8")))
        else:
            self.reply(404, {"ok": False, "error": {"code": "not_found", "message": self.path}})

    def do_POST(self):
        route = ROUTES.get(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        envelope = json.loads(self.rfile.read(length) or b"{}")
        if route is None:
            self.reply(404, {"ok": False, "error": {"code": "not_found", "message": self.path}})
        else:
            self.reply(*route(envelope))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8787)
    port = parser.parse_args().port
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"tickets service on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
