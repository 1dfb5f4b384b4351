"""Answers the handshake (declaring no feature), then reads every request, `stop` included,
and answers none."""
import proto

for request in proto.requests():
    if request["type"] == "start":
        proto.send(proto.started())
        proto.log("hanging from now on\n")
