"""A runtime that checks nothing, for tests of exposures: what it shows is what it really read.

It scans `<root>/<skills_root>` when a case starts and at each `discover` (following every link,
opening every `SKILL.md`: a FIFO there blocks it), offers only `skill_read_reference`, and reads
whatever path it is given below the skill's directory, `..` and links included. Its prompt
lists each guide's description. Standard library only.
"""
import os

import proto

state = {}


def scan():
    base = state.get("skills")
    guides = []
    if not base or not os.path.isdir(base):
        return guides
    for name in sorted(os.listdir(base)):
        path = os.path.join(base, name, "SKILL.md")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        guides.append({"id": name, "format": "portable", "name": name, "description": text,
                       "body": text})
    return guides


def result(step):
    op = step["op"]
    if op == "tools":
        return {"offered": ["skill_read_reference"]}
    if op == "discover":
        state["guides"] = scan()
        return {"loaded": state["guides"]}
    if op == "prompt":
        lines = [f"- `{g['id']}`: {g['description']}" for g in state.get("guides", [])]
        return {"text": "\n".join(lines), "baseline": ""}
    if op == "call":
        args = step.get("args") if isinstance(step.get("args"), dict) else {}
        if step["tool"] != "skill_read_reference":
            return {"ok": False, "error": {"code": "unknown_tool"}}
        path = os.path.join(state["skills"], str(args.get("skill")), str(args.get("path")))
        try:
            with open(path, encoding="utf-8") as f:
                content = f.read()
        except OSError as e:
            return {"ok": False, "error": {"code": "not_found", "message": str(e)}}
        return proto.read_result(args, content)
    return {}


def start_case(request):
    state.clear()
    state["skills"] = proto.skills_dir(request)
    state["guides"] = scan()


proto.serve("reads-anything", result, start_case)
