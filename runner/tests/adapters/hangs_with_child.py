"""Answers the handshake; at `case_start` starts a child process (in the adapter's process group),
writes both pids to the file named by its first argument followed by `.` and its own pid (one file
per adapter process, for runs with several), and hangs."""
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
    name = f"{sys.argv[1]}.{os.getpid()}"
    with open(name + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    os.rename(name + ".tmp", name)
    while True:
        time.sleep(60)
