#!/usr/bin/env python3
"""A real SMTP server for the email channel's tests: aiosmtpd's Controller on 127.0.0.1 (or --host), on a port the
kernel picks, printed as `listening PORT` once it answers.

With --cert and --key it offers STARTTLS with that certificate and requires it before anything else
(require_starttls); with --implicit-tls it speaks TLS from the first byte instead (smtps). Without a certificate it
offers no STARTTLS, and --auth-in-clear then offers AUTH in clear text, as a careless server would. AUTH (PLAIN and
LOGIN, or only those named by --mechanisms) is required before MAIL and accepts the one account of --login-file
(the user on the first line, the password on the second).

Each message received is written to --spool as NUMBER.json (the envelope, whether TLS was on and who logged in)
and NUMBER.eml (the raw content), the JSON last, so a file NUMBER.json means the message is complete. Every login
attempt is printed as `auth MECHANISM USER ok|refused tls=BOOL`, so a test sees that none was made.
"""
import argparse
import email
import email.policy
import json
import os
import ssl
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class LoopbackController(Controller):
    """Controller bound to port 0: the port is the one the kernel gave, read once the server listens."""

    def _trigger_server(self):
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


class Spool:
    """Writes each message to the spool directory, numbered from 1."""

    def __init__(self, directory):
        self.directory = directory
        self.count = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            number = self.count
        base = os.path.join(self.directory, str(number))
        with open(base + ".eml", "wb") as file:
            file.write(envelope.original_content or envelope.content)
        login = session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None
        content = envelope.original_content or envelope.content
        # Python's own parser reads the message: the headers decoded (RFC 2047), the body decoded
        # (quoted-printable, the charset; line ends as LF), and whatever it found wrong with either.
        message = email.message_from_bytes(content, policy=email.policy.default)
        defects = [type(d).__name__ for d in message.defects]
        for name, value in message.items():
            defects += [f"{name}: {type(d).__name__}" for d in getattr(value, "defects", ())]
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "tls": secure(server, session),
            "login": login,
            "headers": {name: str(value) for name, value in message.items()},
            "body": message.get_content().replace("\r\n", "\n"),
            "defects": defects,
            "longest_line": max(len(line) for line in content.split(b"\r\n")),
            "bare_line_feeds": content.replace(b"\r\n", b"").count(b"\n"),
        }
        with open(base + ".json.part", "w") as file:
            json.dump(record, file)
        os.rename(base + ".json.part", base + ".json")
        return "250 Message accepted for delivery"


def secure(server, session):
    """Whether the session is over TLS: by STARTTLS (session.ssl), or from the first byte."""
    return session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None


def authenticator(user, password):
    def check(server, session, envelope, mechanism, auth_data):
        ok = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login == user
            and auth_data.password == password
        )
        name = auth_data.login.decode(errors="replace") if isinstance(auth_data, LoginPassword) else "?"
        print(f"auth {mechanism} {name} {'ok' if ok else 'refused'} tls={secure(server, session)}", flush=True)
        # handled=False: aiosmtpd answers a refusal itself (535), as a server would.
        return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)

    return check


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--spool", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--login-file", required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--implicit-tls", action="store_true")
    parser.add_argument("--auth-in-clear", action="store_true")
    parser.add_argument("--mechanisms", default="PLAIN,LOGIN")
    arguments = parser.parse_args()

    with open(arguments.login_file, "rb") as file:
        lines = file.read().split(b"\n")
    user, password = lines[0], lines[1]

    context = None
    if arguments.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(arguments.cert, arguments.key)
    wanted = set(arguments.mechanisms.split(","))
    options = dict(
        authenticator=authenticator(user, password),
        auth_required=True,
        # aiosmtpd counts only STARTTLS as TLS for this; with --implicit-tls every byte is over TLS.
        auth_require_tls=not (arguments.auth_in_clear or arguments.implicit_tls),
        auth_exclude_mechanism=[m for m in ("PLAIN", "LOGIN") if m not in wanted],
    )
    if arguments.implicit_tls:
        controller = LoopbackController(
            Spool(arguments.spool), hostname=arguments.host, port=0, ssl_context=context, **options
        )
    else:
        controller = LoopbackController(
            Spool(arguments.spool), hostname=arguments.host, port=0,
            tls_context=context, require_starttls=context is not None, **options
        )
    controller.start()
    print(f"listening {controller.port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
