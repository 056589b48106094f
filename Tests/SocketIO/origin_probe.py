"""Asks a Socket.IO endpoint what a page of --origin may do, with plain HTTP requests as a browser
sends them, for the tests of the allowed origins. Uses only the standard library.

Prints one JSON line: for each request, its status and the Access-Control-Allow-Origin it got:
  handshake  GET  /socket.io/?EIO=4&transport=polling              (with Origin)
  post       POST ...&sid=S  body "40"                              (with Origin; S from a handshake
                                                                     without Origin)
  poll       GET  ...&sid=S                                         (with Origin)
  preflight  OPTIONS /socket.io/?EIO=4&transport=polling            (with Origin)
  websocket  GET  /socket.io/?EIO=4&transport=websocket, Upgrade    (with Origin; 101 when upgraded)
and the body of the handshake's answer. Without --origin no Origin header is sent. --host sends that
Host header with every request instead of the URL's (what a page reaching the endpoint by another
name sends: the connection still goes to --url), --fetch-site that Sec-Fetch-Site (a browser's mark).
"""
import argparse
import base64
import http.client
import json
import os
import socket
from urllib.parse import urlsplit

parser = argparse.ArgumentParser()
parser.add_argument("--url", required=True, help="the endpoint, e.g. http://127.0.0.1:3001")
parser.add_argument("--origin")
parser.add_argument("--host")
parser.add_argument("--fetch-site")
args = parser.parse_args()

target = urlsplit(args.url)
origin = {"Origin": args.origin} if args.origin is not None else {}
if args.fetch_site is not None:
    origin["Sec-Fetch-Site"] = args.fetch_site
host = args.host or target.netloc


def request(method, path, body=None, headers=None):
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
    connection.request(method, path, body=body, headers={"Host": host, **origin, **(headers or {})})
    response = connection.getresponse()
    data = response.read().decode("utf-8", "replace")
    connection.close()
    return {"status": response.status, "acao": response.getheader("Access-Control-Allow-Origin"),
            "credentials": response.getheader("Access-Control-Allow-Credentials")}, data


def sid():
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
    connection.request("GET", "/socket.io/?EIO=4&transport=polling", headers={"Host": target.netloc})
    body = connection.getresponse().read().decode()
    connection.close()
    return json.loads(body[1:body.index("}") + 1])["sid"]


def websocket():
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET /socket.io/?EIO=4&transport=websocket HTTP/1.1", f"Host: {host}", "Upgrade: websocket",
             "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    lines += [f"{name}: {value}" for name, value in origin.items()]
    with socket.create_connection((target.hostname, target.port), timeout=10) as connection:
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        while b"\r\n" not in answer:
            chunk = connection.recv(4096)
            if not chunk:
                break
            answer += chunk
    status = answer.split(b"\r\n", 1)[0].split(b" ")
    return {"status": int(status[1]) if len(status) > 1 else 0}


result = {}
result["handshake"], handshake_body = request("GET", "/socket.io/?EIO=4&transport=polling")
result["handshake_body"] = handshake_body
session = sid()
# The CONNECT first, so that the poll finds its answer waiting instead of waiting for the next ping.
result["post"], _ = request("POST", f"/socket.io/?EIO=4&transport=polling&sid={session}", body="40",
                            headers={"Content-Type": "text/plain;charset=UTF-8"})
result["poll"], _ = request("GET", f"/socket.io/?EIO=4&transport=polling&sid={session}")
result["preflight"], _ = request("OPTIONS", "/socket.io/?EIO=4&transport=polling",
                                 headers={"Access-Control-Request-Method": "POST"})
result["websocket"] = websocket()
print(json.dumps(result))
