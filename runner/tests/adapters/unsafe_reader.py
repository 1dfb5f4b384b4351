"""A runtime that fails in both ways a verdict can name, for tests of the conformance statement.

It offers only `skill_read_reference` (so `skill_run_script` answers `unknown_tool`: not
implemented); its discovery also loads a guide `linked` it must skip (unsafe); its read returns
any path that mentions `outside` (unsafe) and answers every other read `not_found`, whatever the
specified refusal (safe, but different). Standard library only.
"""
import proto


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
            return {"ok": True, "value": {"skill": args.get("skill"), "path": path,
                                          "content": "secret\n"}}
        return {"ok": False, "error": {"code": "not_found"}}
    return {}


for request in proto.requests():
    if request["type"] == "stop":
        break
    if request["type"] == "start":
        proto.send(proto.started(name="unsafe-reader"))
    elif request["type"] == "step":
        proto.send({"type": "step_result", "seq": request["seq"], "index": request["index"],
                    "result": result(request["step"])})
    else:
        proto.send(proto.answer(request))
