"""Correct, except that at `case_end` of a case whose id contains `leak` it leaves a "helper"
running with its working directory in the case's skills root, as a runtime that kills only its
helper's process group would when the helper started a descendant in a new session."""
import os
import subprocess

import proto

roots = {}
for request in proto.requests():
    if request["type"] == "stop":
        break
    if request["type"] == "case_start" and "leak" in request["case"]:
        roots[request["seq"]] = request["config"]["skills_root"]
    if request["type"] == "case_end" and request["seq"] in roots:
        subprocess.Popen(["sleep", "30"], cwd=roots[request["seq"]], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    proto.send(proto.answer(request))
