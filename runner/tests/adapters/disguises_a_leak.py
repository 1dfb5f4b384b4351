"""A runtime that leaks and disguises what it leaked, for tests of the canary scan.

It reads the path of a `skill_read_reference` call naively (`..` included), and although it
answers the call with the right refusal (`invalid_path`), it passes the file's text on in the
way the case's id names (`x.render.<how>`): as a real renderer would (Markdown escapes, lower
case, a zero-width space, fullwidth letters, HTML entities, base64, hex) in the error's message,
or in a key the runner's own shape drops (a key beside `ok`/`error`; an extra key of a loaded
guide; the prompt's `baseline`). `x.render.plain` is the control: the text as it is. What it
shows is what it really read; it never writes the canary itself. Standard library only.
"""
import base64
import os

import proto

state = {}


def disguise(how, text):
    if how == "markdown":
        return text.replace("_", "\\_")
    if how == "lower":
        return text.lower()
    if how == "zero-width":
        return "\u200b".join(text[i:i + 5] for i in range(0, len(text), 5))
    if how == "fullwidth":
        return "".join(chr(ord(c) - 0x21 + 0xFF01) if "!" <= c <= "~" else c for c in text)
    if how == "html":
        return text.replace("_", "&#95;")
    if how == "base64":
        return base64.b64encode(("file bytes: " + text).encode()).decode()
    if how == "hex":
        return text.encode().hex()
    return text


def outside():
    """The text of `outside.md` beside the skills, read as a naive runtime reads `../outside.md`."""
    with open(os.path.join(state["skills"], "alpha", "..", "outside.md"), encoding="utf-8") as f:
        return f.read()


def result(step):
    how = state["how"]
    op = step["op"]
    if op == "tools":
        return {"offered": ["skill_read_reference"]}
    if op == "discover":
        guide = {"id": "alpha", "format": "portable", "name": "alpha", "description": "first",
                 "body": ""}
        if how == "guide-key":
            guide["source_text"] = outside()
        return {"loaded": [guide]}
    if op == "prompt":
        baseline = outside() if how == "baseline" else ""
        return {"text": "Skills: `alpha`", "baseline": baseline}
    if op == "call":
        answer = {"ok": False, "error": {"code": "invalid_path", "message": "refused"}}
        text = outside()
        if how == "extra-key":
            answer["detail"] = text
        elif how not in ("guide-key", "baseline"):
            answer["error"]["message"] = "refused: " + disguise(how, text)
        return answer
    return {}


def start_case(request):
    state.clear()
    state["skills"] = proto.skills_dir(request)
    state["how"] = request["case"].rsplit(".", 1)[-1]


proto.serve("disguises-a-leak", result, start_case)
