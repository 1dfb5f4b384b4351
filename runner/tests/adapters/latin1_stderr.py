"""A correct adapter that logs a lot of Latin-1 (not UTF-8) to stderr, except that it exits in
the middle of any case whose id contains `crash`."""
import sys

import proto

proto.log(b"caf\xe9 adapter starting\n")
for request in proto.requests():
    # More than a pipe holds, so a runner that stops draining stderr blocks the adapter.
    proto.log(b"r\xe9ponse\n" * 20000)
    if request["type"] == "case_start" and "crash" in request["case"]:
        proto.log(b"caf\xe9 crashed\n")
        sys.exit(1)
    if request["type"] == "stop":
        break
    proto.send(proto.answer(request))
