"""Answers `case_start` with a line that is not valid UTF-8 (a Latin-1 byte inside a JSON
string); correct otherwise."""
import json
import sys

import proto

for request in proto.requests():
    if request["type"] == "case_start":
        head = json.dumps({"type": "case_started", "seq": request["seq"]})[:-1].encode()
        sys.stdout.buffer.write(head + b', "note": "caf\xe9"}\n')
        sys.stdout.buffer.flush()
        continue
    if request["type"] == "stop":
        break
    proto.send(proto.answer(request))
