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


def result(step):
    if step["op"] == "discover":
        return {"loaded": scan()}
    return proto.answer({"type": "step", "seq": 0, "index": 0, "step": step})["result"]


def start_case(request):
    state.clear()
    state["skills"] = proto.skills_dir(request)
    scan()


proto.serve("slow-scan", result, start_case)
