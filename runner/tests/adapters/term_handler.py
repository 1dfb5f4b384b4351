"""A correct adapter that does not exit on `stop` or at the end of its stdin, and cleans up on
SIGTERM. Into the file named by its first argument it writes `pid N` when it starts, `stop` when
it receives `stop`, and `term` on SIGTERM, then exits. With a second argument `ignore-term` it
ignores SIGTERM too (so only SIGKILL ends it)."""
import os
import signal
import sys

import proto

marker = sys.argv[1]
ignore = len(sys.argv) > 2 and sys.argv[2] == "ignore-term"


def on_term(signum, frame):
    with open(marker, "a") as f:
        f.write("term\n")
    sys.exit(0)


with open(marker, "w") as f:
    f.write(f"pid {os.getpid()}\n")
signal.signal(signal.SIGTERM, signal.SIG_IGN if ignore else on_term)
for request in proto.requests():
    if request["type"] == "stop":
        with open(marker, "a") as f:
            f.write("stop\n")
        continue
    proto.send(proto.answer(request))
while True:
    signal.pause()
