"""A runtime that fails in both ways a verdict can name, for tests of the conformance statement.

It offers only `skill_read_reference` (so `skill_run_script` answers `unknown_tool`: not
implemented); its discovery also loads a guide `linked` it must skip (unsafe); its read returns
the file of any path that mentions `outside`, `..` included (unsafe where the file holds a
canary), and answers every other read `not_found`, whatever the
specified refusal (safe, but different). Standard library only.
"""
import os

import proto

state = {}


def guide(skill_id):
    return {"id": skill_id, "format": "portable", "name": skill_id, "description": "d",
            "body": ""}


def result(step):
    op = step["op"]
    if op == "tools":
        return {"offered": ["skill_read_reference"]}
    if op == "discover":
        return {"loaded": [guide("alpha"), guide("linked")]}
    if op == "prompt":
        return {"text": "", "baseline": ""}
    if op == "call":
        args = step.get("args")
        args = args if isinstance(args, dict) else {}
        if step["tool"] != "skill_read_reference":
            return {"ok": False, "error": {"code": "unknown_tool"}}
        path = str(args.get("path", ""))
        if "outside" in path:
            full = os.path.join(state["root"], "skills", str(args.get("skill")), path)
            try:
                with open(full, encoding="utf-8") as f:
                    content = f.read()
            except OSError:
                content = "secret\n"
            return {"ok": True, "value": {"skill": args.get("skill"), "path": path,
                                          "content": content}}
        return {"ok": False, "error": {"code": "not_found"}}
    return {}


for request in proto.requests():
    if request["type"] == "stop":
        break
    if request["type"] == "start":
        proto.send(proto.started(name="unsafe-reader"))
    elif request["type"] == "case_start":
        state["root"] = request["root"]
        proto.send(proto.answer(request))
    elif request["type"] == "step":
        proto.send({"type": "step_result", "seq": request["seq"], "index": request["index"],
                    "result": result(request["step"])})
    else:
        proto.send(proto.answer(request))
