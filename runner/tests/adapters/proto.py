"""Shared by the misbehaving test adapters: the protocol's happy path for a trivial runtime.

Each adapter in this directory is correct up to the one way it misbehaves, so that a test
reaches exactly that misbehaviour. Standard library only.
"""
import json
import sys


def requests():
    """Yields each request read from stdin, parsed."""
    for raw in sys.stdin.buffer:
        line = raw.strip()
        if line:
            yield json.loads(line)


def send(message, extra=b""):
    """Writes one response line (and `extra` bytes right after it, in the same write)."""
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n" + extra)
    sys.stdout.buffer.flush()


def started(name="misbehaving", version="0", features=()):
    return {
        "type": "started",
        "protocol_version": 2,
        "implementation": {
            "name": name,
            "version": version,
            "language": "python",
            "features": list(features),
        },
    }


def answer(request):
    """What a correct adapter of a runtime offering both skill tools answers."""
    kind = request["type"]
    if kind == "start":
        return started()
    if kind == "case_start":
        return {"type": "case_started", "seq": request["seq"]}
    if kind == "step":
        op = request["step"]["op"]
        if op == "tools":
            result = {"offered": ["skill_read_reference", "skill_run_script"]}
        elif op == "call":
            result = {"ok": False, "error": {"code": "unknown_tool"}}
        else:
            result = {}
        return {"type": "step_result", "seq": request["seq"], "index": request["index"],
                "result": result}
    if kind == "case_end":
        return {"type": "case_ended", "seq": request["seq"]}
    return None


def log(text):
    """Writes bytes or text to stderr at once."""
    data = text if isinstance(text, bytes) else text.encode()
    sys.stderr.buffer.write(data)
    sys.stderr.buffer.flush()
