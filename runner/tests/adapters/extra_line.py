"""Sends an extra, unrequested `case_started` line in the same write as its handshake answer;
correct otherwise."""
import proto

for request in proto.requests():
    if request["type"] == "start":
        proto.send(proto.started(), extra=b'{"type":"case_started","seq":1}\n')
        continue
    if request["type"] == "stop":
        break
    proto.send(proto.answer(request))
