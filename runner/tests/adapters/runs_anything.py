"""A runtime with no approval at all, for tests of the refusal rule: what it shows is what it ran.

`skill_run_script` checks nothing: no allowlist, no path rules, no argument rules, no extra-key
check. It joins `script` naively under `<skills_root>/<skill>/` (`..`, links and any extension
included), runs it with the configured interpreter (`config.python`, else `python3`) and the
arguments passed through (a list item that is not a string as its JSON text, a string as one
argument), the skill directory as working directory and the case's `env` as the environment, and
answers `{"ok": true, "value": {..., "exit_code": 0, "stdout", "stderr"}}` (`script_failed` when
the helper exits non-zero, `timeout` past the configured limit, `spawn_failed` when it cannot
start). So every case that expects a run refused and plants a `code-ran` canary in the helper it
names must come out `unsafe` (`code-ran`) here whenever the helper could run at all.

It claims the dialects `RUNS_ANYTHING_DIALECTS` names (JSON), by default none (portable-skills).
Everything else is minimal: it scans `<skills_root>/*/SKILL.md` when a case starts and at each
`discover`, offers both tools, and reads whatever path `skill_read_reference` is given below the
skill's directory. Standard library only; the protocol helpers are inlined so that the file
stands alone.
"""
import json
import os
import signal
import subprocess
import sys

import proto

state = {}


def send(message):
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def scan():
    base = state.get("skills")
    guides = []
    if not base or not os.path.isdir(base):
        return guides
    for name in sorted(os.listdir(base)):
        path = os.path.join(base, name, "SKILL.md")
        if not os.path.isfile(path):  # never blocks on a FIFO
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        guides.append({"id": name, "format": "portable", "name": name, "description": name,
                       "body": text})
    return guides


def timeout_ms():
    text = state["config"].get("timeout_ms")
    if isinstance(text, str) and text.isascii() and text.isdigit() and 0 < int(text) <= 86_400_000:
        return int(text)
    return 30_000


def run_script(args):
    skill_dir = os.path.join(state["skills"] or "", str(args.get("skill")))
    path = os.path.join(skill_dir, str(args.get("script")))
    given = args.get("args", [])
    if isinstance(given, list):
        argv = [a if isinstance(a, str) else json.dumps(a) for a in given]
    elif isinstance(given, str):
        argv = [given]
    else:
        argv = []
    python = state["config"].get("python") or "python3"
    env = dict(state["config"].get("env") or {})
    env.setdefault("PATH", os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"))
    limit = timeout_ms()
    try:
        proc = subprocess.Popen([python, path, *argv], cwd=skill_dir if os.path.isdir(skill_dir) else None,
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except (OSError, ValueError) as e:  # ValueError: a NUL in an argument, which no OS passes on
        return {"ok": False, "error": {"code": "spawn_failed", "message": str(e)}}
    try:
        out, err = proc.communicate(timeout=limit / 1000)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        return {"ok": False, "error": {"code": "timeout", "timeout_ms": limit}}
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever the helper left behind
        except OSError:
            pass
    stdout = out.decode("utf-8", errors="replace")
    stderr = err.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        error = {"code": "script_failed", "stderr": stderr[-4000:]}
        if proc.returncode < 0:
            error.update(exit_code=None, signal=-proc.returncode)
        else:
            error["exit_code"] = proc.returncode
        return {"ok": False, "error": error}
    return {"ok": True, "value": {"skill": args.get("skill"), "script": args.get("script"),
                                  "exit_code": 0, "stdout": stdout, "stderr": stderr}}


def read_reference(args):
    path = os.path.join(state["skills"] or "", str(args.get("skill")), str(args.get("path")))
    try:
        with open(path, encoding="utf-8") as f:
            content = f.read()
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return {"ok": False, "error": {"code": "not_found", "message": str(e)}}
    return proto.read_result(args, content)


def result(step):
    op = step["op"]
    if op == "tools":
        return {"offered": ["skill_read_reference", "skill_run_script"]}
    if op == "discover":
        state["guides"] = scan()
        return {"loaded": state["guides"]}
    if op == "prompt":
        lines = [f"- `{g['id']}`" for g in state.get("guides", [])]
        return {"text": "\n".join(lines), "baseline": ""}
    if op == "call":
        args = step.get("args") if isinstance(step.get("args"), dict) else {}
        if step["tool"] == "skill_run_script":
            return run_script(args)
        if step["tool"] == "skill_read_reference":
            return read_reference(args)
        return {"ok": False, "error": {"code": "unknown_tool"}}
    return {}


for raw in sys.stdin.buffer:
    line = raw.strip()
    if not line:
        continue
    request = json.loads(line)
    kind = request["type"]
    if kind == "stop":
        break
    if kind == "start":
        implementation = {"name": "runs-anything", "version": "0", "language": "python",
                          "features": []}
        # RUNS_ANYTHING_DIALECTS (JSON): the dialects it claims, for the hardening test; unset,
        # it claims nothing (portable-skills).
        if os.environ.get("RUNS_ANYTHING_DIALECTS"):
            implementation["dialects"] = json.loads(os.environ["RUNS_ANYTHING_DIALECTS"])
        send({"type": "started", "protocol_version": 2, "implementation": implementation})
    elif kind == "case_start":
        config = request["config"]
        root = config.get("skills_root")
        state.clear()
        state["config"] = config
        state["skills"] = os.path.join(request["root"], root) if root else None
        state["guides"] = scan()
        send({"type": "case_started", "seq": request["seq"]})
    elif kind == "step":
        send({"type": "step_result", "seq": request["seq"], "index": request["index"],
              "result": result(request["step"])})
    elif kind == "case_end":
        send({"type": "case_ended", "seq": request["seq"]})
