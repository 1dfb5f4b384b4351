"""A runtime that says what it reads and lacks, for tests of the claims (PROTOCOL.md, "What the
runtime reads and lacks").

It declares `implementation` extras from the JSON in `$SKILLSPEC_TEST_CLAIMS` (`read_scope`,
`formats`, `lacks`), scans only the skills root's direct children for `SKILL.md`, offers only
`skill_read_reference` and reads whatever path it is given below the skill's directory, `..`
included. It has no `skill_run_script` (calls of it are `unknown_tool`). What it shows is what
it really read. Standard library only.
"""
import json
import os

import proto

state = {}
claims = json.loads(os.environ.get("SKILLSPEC_TEST_CLAIMS", "{}"))


def scan():
    base = state.get("skills")
    guides = []
    if not base or not os.path.isdir(base):
        return guides
    for name in sorted(os.listdir(base)):
        path = os.path.join(base, name, "SKILL.md")
        if not os.path.isfile(path):
            continue
        guides.append({"id": name, "format": "portable", "name": name, "description": "d",
                       "body": ""})
    return guides


def result(step):
    op = step["op"]
    if op == "tools":
        return {"offered": ["skill_read_reference"]}
    if op == "discover":
        return {"loaded": scan()}
    if op == "prompt":
        return {"text": " ".join("`%s`" % g["id"] for g in scan()), "baseline": ""}
    if op == "call":
        args = step.get("args") if isinstance(step.get("args"), dict) else {}
        if step["tool"] != "skill_read_reference":
            return {"ok": False, "error": {"code": "unknown_tool"}}
        path = os.path.join(state["skills"], str(args.get("skill")), str(args.get("path")))
        try:
            with open(path, encoding="utf-8") as f:
                content = f.read()
        except OSError:
            return {"ok": False, "error": {"code": "not_found"}}
        return proto.read_result(args, content)
    return {}


def start_case(request):
    state.clear()
    state["skills"] = proto.skills_dir(request)


proto.serve("claims", result, start_case, claims)
