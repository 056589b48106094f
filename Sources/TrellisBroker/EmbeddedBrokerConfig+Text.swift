extension EmbeddedBrokerConfig {
    /// The text of `broker.conf`; a test keeps the two identical.
    public static let text = #"""
        # broker.conf: the Mosquitto 2.0 configuration Trellis starts when `trellis run` is given no --broker.
        # Trellis runs `mosquitto -c broker.conf` from its working directory, waits for the listener below,
        # and stops the broker when it stops. Pass another file with `trellis run --broker-config FILE`.

        # Settings apply to every listener alike (accounts and ACL included); there is one listener.
        per_listener_settings false

        # Listen on IPv4 loopback only, on the standard MQTT port: nothing off this machine can connect.
        listener 1883 127.0.0.1

        # Clients without an account may connect, but the ACL below gives them only what the released
        # Plant-Tracker app needs (publish rpi/torpi, read rpi/fromrpi): no operator action, no other client's
        # topics, no `#`. So the listener may be opened to the LAN for the household's phones
        # (docs/security.md says how). Everything else needs an account.
        allow_anonymous true

        # Accounts and their rights. `trellis run` keeps two here: its own (trellis, password in
        # trellis-state/trellis.password) and the local operator's (operator, password in
        # trellis-state/operator.password, mode 0600), and writes the ACL from its topic table at every
        # start; add more with `trellis users add` (docs/security.md).
        password_file trellis-state/passwd
        acl_file trellis-state/acl

        # Send small packets at once (no Nagle delay): requests and replies are a few hundred bytes.
        set_tcp_nodelay true

        # Run as the user that started the broker, which is Trellis's own user, instead of switching to
        # the 'mosquitto' account when started by root: the persistence directory below belongs to Trellis.
        # (Mosquitto only ever switches user when started as root; this value means "do not switch".)
        user root

        # Keep retained messages, persistent sessions and their queued QoS 1 messages across broker restarts.
        persistence true

        # Where the broker writes mosquitto.db, relative to the working directory: Trellis's default state
        # directory, which `trellis run` creates before it starts the broker.
        persistence_location trellis-state/

        # Write the in-memory state to disk every 60 s as well as at a clean shutdown, bounding what a
        # broker crash can lose.
        autosave_interval 60

        # Per-client queue of QoS 1/2 messages waiting while a client is slow or offline. The default of
        # 1000 silently drops QoS 1 messages for a subscriber that falls behind during a burst (the log then
        # says "Outgoing messages are being dropped"); 100000 absorbs a 20,000-request burst for Trellis
        # and keeps a persistent session's backlog across a restart of Trellis.
        max_queued_messages 100000

        # A byte ceiling on each client's queue, so the larger message count cannot exhaust memory.
        max_queued_bytes 268435456

        # QoS 1/2 messages in flight to each client before the rest wait in the queue above. The default
        # of 20 throttles a relay answering hundreds of pipelined requests.
        max_inflight_messages 1000

        # Largest packet accepted: 4 MiB, so oversized payloads (2 MiB code uploads, 1 MiB junk) still
        # reach Trellis and get a proper error instead of a silent disconnect, while 100 MiB cannot.
        max_packet_size 4194304

        # Log to standard error (Trellis sends it to trellis-state/mosquitto.log): errors, warnings and
        # notices, which include queue drops and client connects and disconnects.
        log_dest stderr
        log_type error
        log_type warning
        log_type notice
        connection_messages true
        log_timestamp true

        """#
}
