"""A runtime whose reads keep what they read, for the test of the runner's memory bound.

It offers `skill_read_reference` and reads the file it is given below the skill's directory
in 1 MiB pieces, keeping every piece, until the file ends: a link to /dev/zero never ends, so
its memory grows until something stops it. It reads about 250 MiB a second (a pause after each
piece), so that the runner's measurements every 200 ms see it pass a bound by little. Standard
library only.
"""
import os
import time

import proto

state = {}


def result(step):
    op = step["op"]
    if op == "tools":
        return {"offered": ["skill_read_reference"]}
    if op == "discover":
        return {"loaded": [{"id": "alpha", "format": "portable", "name": "alpha",
                            "description": "d", "body": ""}]}
    if op == "call":
        args = step.get("args") if isinstance(step.get("args"), dict) else {}
        path = os.path.join(state["skills"], str(args.get("skill")), str(args.get("path")))
        pieces = []
        with open(path, "rb") as f:
            while True:
                piece = f.read(1 << 20)
                if not piece:
                    break
                pieces.append(piece)
                time.sleep(0.004)
        content = b"".join(pieces).decode("utf-8", "replace")
        return proto.read_result(args, content)
    return {}


def start_case(request):
    state.clear()
    state["skills"] = proto.skills_dir(request)


proto.serve("hoards-a-read", result, start_case)
