"""An honest adapter of a runtime whose tools have their own names and that refuses, for the
tests of `implementation.tool_names` and of refusals (PROTOCOL.md, "Mapping a runtime's own
tools" and "Refusals").

The runtime names its tools `read_skill_resource` and `run_skill_script_native` (declared in
`tool_names`; the adapter reports the spec's names in `tools`). It refuses to start when its
skills directory does not exist (its FileNotFoundError text travels in `refused`), aborts a scan
that meets a SKILL.md that is not a regular file (without opening it), and its sandbox denies
every read. Its prompt always names the run tool, by its native name, even when the operator's
tool allowlist removes it. Every refusal carries the runtime's own message. Standard library
only.
"""
import os
import stat

import proto

NAMES = {"skill_read_reference": "read_skill_resource", "skill_run_script": "run_skill_script_native"}


class Runtime:
    def __init__(self, root):
        if not root or not os.path.isdir(root):
            raise FileNotFoundError(2, "No such file or directory", root)
        self.root = root

    def scan(self):
        names = []
        for name in sorted(os.listdir(self.root)):
            skill_md = os.path.join(self.root, name, "SKILL.md")
            try:
                mode = os.lstat(skill_md).st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(mode):
                raise OSError("scanner aborted: %s is not a regular file" % skill_md)
            names.append(name)
        return names

    def read(self, args):
        raise PermissionError("sandbox denied the read of %r" % (args.get("path"),))


def text_of(e):
    return "%s: %s" % (type(e).__name__, e)


runtime = None


def step(request):
    """The `result` or the `refused` of a step, as the runtime answered it."""
    op = request["step"]["op"]
    if op == "tools":
        return {"result": {"offered": ["skill_read_reference", "skill_run_script"]}}
    if op == "discover":
        try:
            loaded = runtime.scan()
        except OSError as e:
            return {"refused": {"message": text_of(e)}}
        return {"result": {"loaded": [{"id": n, "format": "portable", "name": n,
                                       "description": "d", "body": ""} for n in loaded]}}
    if op == "prompt":
        text = ("Read files with read_skill_resource(skill, path). "
                "Run helpers with run_skill_script_native(skill, script).")
        return {"result": {"text": text, "baseline": ""}}
    if op == "call":
        try:
            return {"result": {"ok": True, "value": runtime.read(request["step"]["args"])}}
        except PermissionError as e:
            return {"refused": {"message": text_of(e)}}
    return {"result": {}}


for request in proto.requests():
    kind = request["type"]
    if kind == "stop":
        break
    if kind == "start":
        started = proto.started(name="honest", features=["tool-allowlist"])
        started["implementation"]["tool_names"] = NAMES
        proto.send(started)
    elif kind == "case_start":
        answer = {"type": "case_started", "seq": request["seq"]}
        try:
            runtime = Runtime(request["config"]["skills_root"])
        except OSError as e:
            answer["refused"] = {"message": text_of(e)}
        proto.send(answer)
    elif kind == "step":
        proto.log("step %s\n" % request["step"]["op"])
        answer = {"type": "step_result", "seq": request["seq"], "index": request["index"]}
        answer.update(step(request))
        proto.send(answer)
    else:
        proto.send(proto.answer(request))
