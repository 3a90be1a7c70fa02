#!/usr/bin/env python3
"""Example fw external service over stdio ("scripts"), standard library only.

stdio contract (see ../README.md): fw starts `service.command` with `service.commandArgs`
(no shell), writes one bridge request envelope as JSON to stdin and closes stdin. The service
writes exactly one JSON document to stdout - a result envelope or a raw JSON value - and exits.
stderr is for diagnostics only; a non-zero exit code means failure.

The envelope's `fw.entry` selects the behaviour. Besides the normal entries (echo, raw, record)
there are entries that misbehave on purpose (crash, hang, huge, garbage) so the fw end-to-end
tests can check the bridge's error handling.

Try it:
  echo '{"args":{"a":1,"b":2},"auth":{"kind":"user","userId":"u1","tenantId":"t1","role":"member"},
         "fw":{"service":"scripts","entry":"raw","kind":"query","traceId":"t"}}' | python3 service.py
"""
import json
import os
import sys
import time

HUGE_SIZE = 5 * 1024 * 1024  # characters in the `huge` JSON string


def error(code, message):
    return {"ok": False, "error": {"code": code, "message": message}}


def raw_sum(args):
    a, b = args.get("a"), args.get("b")
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    if not numbers:
        return error("bad_input", "args.a and args.b must be numbers")
    return {"sum": a + b}  # a raw JSON value, not an envelope


def crash(envelope, args):
    sys.stderr.write("boom: something broke\n")
    sys.stderr.flush()
    sys.exit(3)


def hang(envelope, args):
    time.sleep(60)
    return {"ok": True, "result": "finally"}


ENTRIES = {
    "echo": lambda env, args: {"ok": True, "result": {"envelope": env, "argv": sys.argv[1:]}},
    "raw": lambda env, args: raw_sum(args),
    "record": lambda env, args: {"ok": True, "result": {"recorded": args}},
    "failing": lambda env, args: error("bad_input", "The input was rejected on purpose."),
    "crash": crash,
    "hang": hang,
    "huge": lambda env, args: "x" * HUGE_SIZE,
    "garbage": lambda env, args: RawText("hello, not json"),
}


class RawText(str):
    """Output written as-is instead of JSON-encoded (only used by `garbage`)."""


def write_stdout(output):
    text = output if isinstance(output, RawText) else json.dumps(output)
    data = memoryview((text + "\n").encode("utf-8"))
    try:  # unbuffered writes to fd 1, so a vanished reader is always noticed
        while data:
            data = data[os.write(sys.stdout.fileno(), data):]
    except BrokenPipeError:  # the reader went away (e.g. size limit hit): exit 1 quietly
        sys.exit(1)


def main():
    try:
        envelope = json.loads(sys.stdin.read())
        if not isinstance(envelope, dict) or not isinstance(envelope.get("fw"), dict):
            raise ValueError("envelope must be a JSON object with an `fw` object")
    except ValueError as exc:
        sys.stderr.write(f"invalid envelope: {exc}\n")
        write_stdout(error("invalid_envelope", f"Invalid envelope: {exc}"))
        sys.exit(2)
    entry = envelope["fw"].get("entry")
    args = envelope.get("args") if isinstance(envelope.get("args"), dict) else {}
    handler = ENTRIES.get(entry)
    if handler is None:
        write_stdout(error("unknown_entry", f"Unknown entry {entry!r}."))
        return
    write_stdout(handler(envelope, args))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
