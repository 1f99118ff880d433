#!/usr/bin/env python3
"""A stand-in for the GCE, AWS and Azure instance metadata services, as far as
deploy/cloud-init/sift-preemption-watch uses them: each answers only with its provider's required
header (and, for AWS, an IMDSv2 session token), and announces a preemption once it has been polled
`--quiet-polls` times without one.

  fake_metadata.py PORT_FILE {gce|aws|azure} [--quiet-polls N]    prints nothing; writes its port
"""
import argparse
import http.server
import json

args = None
polls = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, body=b"", ctype="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def notice(self):
        global polls
        polls += 1
        return polls > args.quiet_polls

    def do_PUT(self):
        if args.cloud == "aws" and self.path == "/latest/api/token" and \
                self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            return self.reply(200, b"session-token-1")
        self.reply(404)

    def do_GET(self):
        path = self.path
        if args.cloud == "gce" and path.startswith("/computeMetadata/v1/"):
            if self.headers.get("Metadata-Flavor") != "Google":
                return self.reply(403, b"Missing Metadata-Flavor:Google header.")
            if path == "/computeMetadata/v1/instance/id":
                return self.reply(200, b"1234567890")
            if path == "/computeMetadata/v1/instance/preempted":
                return self.reply(200, b"TRUE" if self.notice() else b"FALSE")
        if args.cloud == "aws" and path.startswith("/latest/meta-data/"):
            if self.headers.get("X-aws-ec2-metadata-token") != "session-token-1":
                return self.reply(401)
            if path == "/latest/meta-data/spot/instance-action":
                if self.notice():
                    return self.reply(200, b'{"action": "terminate", "time": "2026-11-25T12:00:00Z"}',
                                      "application/json")
                return self.reply(404)
        if args.cloud == "azure" and path.startswith("/metadata/"):
            if self.headers.get("Metadata") != "true":
                return self.reply(400, b'{"error": "Bad request. Required metadata header not specified"}')
            if path.startswith("/metadata/instance?"):
                return self.reply(200, b'{"compute": {"vmSize": "Standard_D2s_v5"}}', "application/json")
            if path.startswith("/metadata/scheduledevents?"):
                events = [{"EventId": "A1", "EventType": "Freeze", "ResourceType": "VirtualMachine",
                           "Resources": ["vm0"], "EventStatus": "Scheduled"}]
                if self.notice():
                    events.append({"EventId": "B2", "EventType": "Preempt", "ResourceType": "VirtualMachine",
                                   "Resources": ["vm0"], "EventStatus": "Scheduled"})
                body = json.dumps({"DocumentIncarnation": polls, "Events": events}, separators=(",", ":"))
                return self.reply(200, body.encode(), "application/json")
        self.reply(404)


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("port_file")
    p.add_argument("cloud", choices=["gce", "aws", "azure"])
    p.add_argument("--quiet-polls", type=int, default=3)
    args = p.parse_args()
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
