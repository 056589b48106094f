#!/usr/bin/env python3
"""The P2O web app's socket flow in headless Chromium, with an official socket.io client bundle.

Serves p2o.html (+ p2o_hooks.js, p2o_app.js and the chosen bundle as /socket.io.js) from its own
origin, a free port on 127.0.0.1 (or --page-port), so the client talks to --url cross-origin, with
credentials, like the app; Trellis must allow that origin (buttons.socketio_allowed_origins). Drives Debian's chromium through Debian's chromedriver with Selenium, and prints one JSON
line per event to stdout as it happens (UTF-8, non-ASCII kept as it is):
  start, page, action, open, connect, upgrade, handshakes, http, websocket-close,
  connection-response, register-response, registered (the app's state), button-press
  (data, count, transport), error (kind: connect_error, reducer, uncaught, ...), console (the
  browser's log: CORS refusals and failed loads show up there), end or timeout.
Runs until --presses button-presses were seen (exit 0), SIGTERM or SIGINT (exit 0, the browser
quit), or --timeout seconds (a `timeout` line, exit 2). Needs setup.sh to have run; started with
another python3, it re-runs itself with the venv's.

  python3 Tests/SocketIO/browser/p2o_browser.py --url http://127.0.0.1:3001 --bundle 1.x --button ID
"""
import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlencode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from browser_venv import CACHE, require_selenium  # noqa: E402

require_selenium(__file__, "p2o_browser")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

BUNDLES = {  # --bundle id -> (file in the cache, socket.io-client version)
    "1.x": ("socket.io-1.4.5.js", "1.4.5"), "1.4.5": ("socket.io-1.4.5.js", "1.4.5"),
    "2.x": ("socket.io-2.3.0.js", "2.3.0"), "2.3.0": ("socket.io-2.3.0.js", "2.3.0"),
}


def say(event):
    sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def serve_page(bundle_path, port=0):
    """The page's own origin: a small HTTP server on a free loopback port, in a thread."""
    routes = {
        "/": (os.path.join(HERE, "p2o.html"), "text/html; charset=utf-8"),
        "/p2o_hooks.js": (os.path.join(HERE, "p2o_hooks.js"), "application/javascript; charset=utf-8"),
        "/p2o_app.js": (os.path.join(HERE, "p2o_app.js"), "application/javascript; charset=utf-8"),
        "/socket.io.js": (bundle_path, "application/javascript; charset=utf-8"),
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path not in routes:
                self.send_response(204 if path == "/favicon.ico" else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            with open(routes[path][0], "rb") as f:
                body = f.read()
            self.send_response(200)
            self.send_header("Content-Type", routes[path][1])
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_chromium():
    options = webdriver.ChromeOptions()
    binary = "/usr/lib/chromium/chromium"  # Debian's real binary, without the /usr/bin wrapper script
    options.binary_location = binary if os.path.exists(binary) else "/usr/bin/chromium"
    arguments = [
        "--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
        "--no-default-browser-check", "--disable-extensions", "--disable-default-apps",
        # Nothing leaves the machine: no background services, every non-loopback request goes to a
        # dead proxy and every host name but localhost and 127.0.0.1 fails to resolve.
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-domain-reliability", "--disable-client-side-phishing-detection", "--no-pings",
        "--disable-breakpad", "--metrics-recording-only", "--password-store=basic",
        "--proxy-server=http://127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    ]
    if os.geteuid() == 0:
        arguments.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    for argument in arguments:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # Explicit paths: Selenium Manager is never asked to find or download anything.
    os.environ.setdefault("SE_AVOID_STATS", "true")
    os.environ.setdefault("SE_OFFLINE", "true")
    service = Service(executable_path="/usr/bin/chromedriver", log_output=os.devnull)
    return webdriver.Chrome(options=options, service=service)


stopping = threading.Event()


def main():
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stopping.set())
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True, help="Trellis's Socket.IO address, e.g. http://127.0.0.1:3001")
    parser.add_argument("--bundle", required=True, choices=sorted(BUNDLES))
    parser.add_argument("--button", required=True, help="the button id to register")
    parser.add_argument("--transports", choices=["default", "polling"], default="default",
                        help="default: the client's own (polling, then the WebSocket upgrade); polling: polling only")
    parser.add_argument("--presses", type=int, default=0, help="exit 0 after this many button-press events (0: no limit)")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--page-port", type=int, default=0,
                        help="serve the page on this port of 127.0.0.1 (0: a free one), so its origin is known beforehand")
    parser.add_argument("--contain-reducer-errors", action="store_true",
                        help="only report a reducer error instead of rethrowing it into the client, as the app does")
    args = parser.parse_args()
    sys.stdout.reconfigure(encoding="utf-8")

    bundle_file, version = BUNDLES[args.bundle]
    bundle_path = os.path.join(CACHE, bundle_file)
    if not os.path.exists(bundle_path):
        sys.exit(f"p2o_browser: {bundle_path} is missing; run Tests/SocketIO/browser/setup.sh first")

    deadline = time.monotonic() + args.timeout
    server = serve_page(bundle_path, args.page_port)
    driver = None
    code, presses = 2, 0
    try:
        started = time.monotonic()
        driver = start_chromium()
        query = urlencode({"url": args.url, "button": args.button, "transports": args.transports,
                           "contain": "1" if args.contain_reducer_errors else "0"})
        page = f"http://127.0.0.1:{server.server_address[1]}/?{query}"
        say({"event": "start", "bundle": version, "bundle_file": bundle_path, "page": page,
             "chromium": driver.capabilities.get("browserVersion"),
             "browser_start_s": round(time.monotonic() - started, 2)})
        driver.get(page)
        next_log = 0.0
        while True:
            for event in driver.execute_script("return window.p2o ? window.p2o.take() : [];"):
                say(event)
                presses += event.get("event") == "button-press"
            if time.monotonic() >= next_log:  # the browser's console: CORS refusals, failed loads
                for entry in driver.get_log("browser"):
                    say({"event": "console", "level": entry.get("level"), "message": entry.get("message")})
                next_log = time.monotonic() + 0.25
            if args.presses and presses >= args.presses:
                code, reason = 0, "presses"
                break
            if stopping.is_set():
                code, reason = 0, "signal"
                break
            if time.monotonic() >= deadline:
                code, reason = 2, "timeout"
                break
            time.sleep(0.05)
        state = driver.execute_script("return window.p2o && window.p2o.state ? window.p2o.state() : null;")
        say({"event": "timeout" if code == 2 else "end", "reason": reason, "presses": presses, "state": state})
    except Exception as error:  # the browser or driver failed: say so as an event, exit 3
        say({"event": "error", "kind": "harness", "message": f"{type(error).__name__}: {error}"})
        code = 3
    finally:
        if driver is not None:
            try:
                driver.quit()
            except Exception:
                pass
        server.shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())
