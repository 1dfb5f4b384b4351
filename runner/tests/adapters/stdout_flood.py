"""Answers until the first step; then writes megabyte-long lines to stdout that nobody asked
for, forever, and reads nothing more."""
import sys

import proto

for request in proto.requests():
    proto.send(proto.answer(request))
    if request["type"] == "step":
        break
line = b'{"type":"noise","pad":"' + b"n" * (1 << 20) + b'"}\n'
while True:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
