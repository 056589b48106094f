"""The browser tests' Python environment: the cache directory setup.sh fills (Chromium's venv with
Selenium, the socket.io client bundles), and a script's re-run inside that venv when it was started
by a Python without Selenium."""
import os
import sys

CACHE = os.path.join(
    os.environ.get("TRELLIS_CACHE")
    or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "trellis"),
    "browser")
VENV = os.path.join(CACHE, "venv")


def require_selenium(script, name):
    """Returns when Selenium can be imported; else runs `script` again with the venv's Python, once
    (an environment guard stops a loop if that venv is broken), or exits saying what to run."""
    try:
        import selenium  # noqa: F401
        return
    except ImportError:
        pass
    guard = name.upper() + "_REEXEC"
    python = os.path.join(VENV, "bin", "python")
    if os.path.exists(python) and not os.environ.get(guard):
        os.environ[guard] = "1"
        os.execv(python, [python, script] + sys.argv[1:])
    sys.exit(f"{name}: selenium is missing; run Tests/SocketIO/browser/setup.sh first")
