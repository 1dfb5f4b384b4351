"""A runtime whose scan is slow but ends, for the test that no step timeout decides a verdict.

Each scan of a tree that holds a file over 1 GiB (a sparse one, in the test) takes 4 s, as a
runtime that reads such a file whole would, and then loads the other skills and skips it. It
reads nothing big itself. Standard library only.
"""
import os
import time

import proto

state = {}


def scan():
    base = state.get("skills")
    guides = []
    if not base or not os.path.isdir(base):
        return guides
    for name in sorted(os.listdir(base)):
        path = os.path.join(base, name, "SKILL.md")
        if os.path.getsize(path) > 1 << 30:
            time.sleep(4)
            continue
        guides.append({"id": name, "format": "portable", "name": name, "description": "d",
                       "body": ""})
    return guides


for request in proto.requests():
    kind = request["type"]
    if kind == "stop":
        break
    if kind == "start":
        proto.send(proto.started(name="slow-scan"))
    elif kind == "case_start":
        root = request["config"].get("skills_root")
        state.clear()
        state["skills"] = root and os.path.join(request["root"], root)
        scan()
        proto.send(proto.answer(request))
    elif kind == "step" and request["step"]["op"] == "discover":
        proto.send({"type": "step_result", "seq": request["seq"], "index": request["index"],
                    "result": {"loaded": scan()}})
    else:
        proto.send(proto.answer(request))
