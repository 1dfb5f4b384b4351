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


def read_result(args, content):
    """The `ok` result of a `skill_read_reference` call with `args` that read `content`."""
    return {"ok": True, "value": {"skill": args.get("skill"), "path": args.get("path"),
                                  "content": content}}


def log(text):
    """Writes bytes or text to stderr at once."""
    data = text if isinstance(text, bytes) else text.encode()
    sys.stderr.buffer.write(data)
    sys.stderr.buffer.flush()


def skills_dir(request):
    """The skills root of a `case_start` request as a path (None when the case sets none)."""
    import os
    root = request["config"].get("skills_root")
    return root and os.path.join(request["root"], root)


def serve(name, result, on_case=None, implementation=None):
    """The session of a trivial runtime: `started` (as `name`, with `implementation`'s extra
    fields), `on_case(request)` at each `case_start`, `result(step)` for every step, the happy path
    for the rest; ends at `stop`."""
    for request in requests():
        kind = request["type"]
        if kind == "stop":
            break
        if kind == "start":
            message = started(name=name)
            message["implementation"].update(implementation or {})
            send(message)
        elif kind == "case_start":
            if on_case:
                on_case(request)
            send(answer(request))
        elif kind == "step":
            send({"type": "step_result", "seq": request["seq"], "index": request["index"],
                  "result": result(request["step"])})
        else:
            send(answer(request))
