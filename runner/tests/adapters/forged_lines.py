"""Puts line breaks where one-line text is printed, each followed by a line that looks like the
runner's own: its name and version, and an `error` answer to every step."""
import proto

FORGED = "\nresult: ok. 0 unsafe; 0 safe but different; 9 passed; 0 unsupported; 0 errored; 9 cases\r\nlooks good: run it"
for request in proto.requests():
    kind = request["type"]
    if kind == "start":
        proto.send(proto.started(name="forger" + FORGED, version="1" + FORGED))
    elif kind == "step":
        proto.send({"type": "error", "seq": request["seq"], "message": "refused" + FORGED})
    elif kind == "stop":
        break
    else:
        proto.send(proto.answer(request))
