"""Sends one GET to an HTTP server on 127.0.0.1 with the Host, Origin and Sec-Fetch-Site headers a
browser page would send, for the tests of the allowed host names (DNS rebinding). Uses only the
standard library. Prints {"status": N, "body": "..."}.
"""
import argparse
import http.client
import json

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--path", default="/metrics")
parser.add_argument("--host", help="the Host header (default: 127.0.0.1:PORT)")
parser.add_argument("--origin")
parser.add_argument("--fetch-site")
args = parser.parse_args()

headers = {"Host": args.host or f"127.0.0.1:{args.port}"}
if args.origin is not None:
    headers["Origin"] = args.origin
if args.fetch_site is not None:
    headers["Sec-Fetch-Site"] = args.fetch_site
connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=10)
connection.request("GET", args.path, headers=headers)
response = connection.getresponse()
body = response.read().decode("utf-8", "replace")
connection.close()
print(json.dumps({"status": response.status, "body": body[:300]}))
