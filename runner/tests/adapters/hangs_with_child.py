"""Answers the handshake; at `case_start` starts a child process (in the adapter's process group),
writes both pids to the file named by its first argument, and hangs."""
import os
import subprocess
import sys
import time

import proto

for request in proto.requests():
    if request["type"] == "start":
        proto.send(proto.started())
        continue
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        time.sleep(60)
