#!/bin/sh
# Creates the Python environment the fault matrix (Tests/Faults/matrix.py) drives its load from, in a cache
# outside the repository: paho-mqtt 2.x (the MQTT publishers and the requester, with their acknowledgements),
# python-socketio 5 (the Socket.IO presses), requests and websocket-client (its transports). Prints the
# environment's python on standard output (Tests/python-venv.sh).
set -eu
exec "$(dirname "$0")/../python-venv.sh" faults "paho-mqtt>=2.1,<3" "python-socketio>=5.11,<6" \
    "python-engineio>=4.9,<5" "requests>=2.25,<3" "websocket-client>=1.0,<2"
