"""Puts terminal escapes and characters XML forbids everywhere it can: its name and version,
an `error` answer to the first step, and its stderr before it exits during a case whose id
contains `crash`."""
import sys

import proto

EVIL = "\x1b[2J\x1b]0;owned\x07\x00\x01\x0b\x0c\x1f\x7f\x9b\u202e\ufffe"
for request in proto.requests():
    kind = request["type"]
    if kind == "start":
        proto.send(proto.started(name="evil" + EVIL, version="1" + EVIL))
    elif kind == "case_start" and "crash" in request["case"]:
        proto.log(("dying" + EVIL + "\n").encode("utf-8", "surrogatepass"))
        sys.exit(3)
    elif kind == "step":
        proto.send({"type": "error", "seq": request["seq"], "message": "refused" + EVIL})
    elif kind == "stop":
        break
    else:
        proto.send(proto.answer(request))
