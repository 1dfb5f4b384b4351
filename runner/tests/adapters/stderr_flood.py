"""Answers the handshake, then floods stderr without a single newline and never answers."""
import sys

import proto

for request in proto.requests():
    if request["type"] == "start":
        proto.send(proto.started())
        continue
    proto.log("flood begins: ")
    chunk = b"E" * 65536
    while True:
        sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.flush()
