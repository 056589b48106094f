#!/bin/sh
# Creates the Python environment the email tests run their SMTP server from (Tests/Notifications/smtp_server.py):
# aiosmtpd 1.4 from PyPI, in a cache outside the repository. Prints the environment's python on standard output
# (Tests/python-venv.sh).
set -eu
exec "$(dirname "$0")/../python-venv.sh" smtp "aiosmtpd>=1.4.6,<2"
