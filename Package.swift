// swift-tools-version: 6.1
import PackageDescription

/// The message path's async functions run on their caller's executor (the MQTT network thread
/// while handling a message) instead of hopping to the generic executor at every call.
let callerIsolatedAsync: [SwiftSetting] = [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]

// The products most targets take, named once.
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let lifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let metrics: Target.Dependency = .product(name: "Metrics", package: "swift-metrics")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
/// The HTTP servers' stack (Hummingbird with WebSockets, NIO, the Prometheus exposition).
let httpStack: [Target.Dependency] = [
    .product(name: "Prometheus", package: "swift-prometheus"),
    .product(name: "Hummingbird", package: "hummingbird"),
    .product(name: "HummingbirdCore", package: "hummingbird"),
    .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "NIOHTTP1", package: "swift-nio")
]
/// What the application is assembled from, which the commands use as well: the relay, its servers, the
/// broker, the MQTT client and the stores, with the configuration, signal and lifecycle products.
let applicationParts: [Target.Dependency] = [
    "TrellisRelay", "TrellisServer", "TrellisBroker", "TrellisCore", "TrellisMQTT", "TrellisStore",
    "TrellisStoreSQLite", "TrellisStorePostgres",
    .product(name: "Configuration", package: "swift-configuration"),
    .product(name: "SystemPackage", package: "swift-system"),
    .product(name: "UnixSignals", package: "swift-service-lifecycle"),
    logging, lifecycle
]

/// How the release `trellis` binary is linked, for a smaller resident footprint (docs/benchmark.md, "the release
/// binary's link"): LLVM's lld (shipped with the toolchain) packs the 144,000 relative relocations into a few
/// kilobytes of DT_RELR bitmaps (glibc 2.36, Debian 12) instead of 3.4 MB of tables the loader reads at every
/// start, and `--no-export-dynamic` keeps the dependencies' symbols out of the dynamic symbol table that
/// `--static-swift-stdlib` fills (2.2 MB more touched at start). Nothing looks symbols up in the executable.
let releaseFootprint: [LinkerSetting] = [
    .unsafeFlags(
        ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"],
        .when(platforms: [.linux], configuration: .release)
    )
]

let package = Package(
    name: "Trellis",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "trellis", targets: ["trellis"]),
        .library(name: "TrellisMQTT", targets: ["TrellisMQTT"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(
            url: "https://github.com/apple/swift-configuration", from: "1.0.0", traits: [.defaults, "YAML", "Reloading"]
        ),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0")
    ],
    targets: [
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev", "libssl-dev"]), .brew(["mosquitto", "openssl"])]
        ),
        // MQTTMessage, its properties, QoS and delivery: values only, no dependency.
        .target(name: "TrellisMQTTTypes"),
        .target(
            name: "TrellisMQTT",
            dependencies: [
                "CMosquitto",
                "TrellisMQTTTypes",
                .product(name: "DequeModule", package: "swift-collections"),
                logging,
                lifecycle
            ],
            swiftSettings: callerIsolatedAsync
        ),
        // The embedded broker (its process and configuration) and the secure profile's ACL file.
        .target(
            name: "TrellisBroker",
            dependencies: [
                "TrellisCore",
                logging,
                lifecycle
            ]
        ),
        // The git commit being built, written by the plugin below (TrellisVersion.commit reads it).
        .plugin(name: "TrellisBuildInfoPlugin", capability: .buildTool()),
        .target(name: "TrellisBuildInfo", plugins: ["TrellisBuildInfoPlugin"]),
        .target(name: "TrellisCore", dependencies: ["TrellisBuildInfo", "TrellisMQTTTypes"]),
        .target(name: "TrellisSocketIO", dependencies: ["TrellisCore"]),
        // pcap and pcapng captures of MQTT traffic read back into capture records (pure, no I/O).
        .target(name: "TrellisWire", dependencies: ["TrellisCore", "TrellisMQTTTypes"]),
        // The store's protocols, one per concern, the write-behind rule, the state dump and its table
        // catalog: what every backend shares, and all that the relay sees.
        .target(
            name: "TrellisStore",
            dependencies: [
                "TrellisCore",
                logging
            ],
            swiftSettings: callerIsolatedAsync
        ),
        // The embedded default: one SQLite file through GRDB.
        .target(
            name: "TrellisStoreSQLite",
            dependencies: [
                "TrellisStore",
                "TrellisCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                logging
            ],
            swiftSettings: callerIsolatedAsync
        ),
        // A database several relays share: PostgreSQL through postgres-nio.
        .target(
            name: "TrellisStorePostgres",
            dependencies: [
                "TrellisStore",
                "TrellisCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                logging
            ],
            swiftSettings: callerIsolatedAsync
        ),
        .target(
            name: "TrellisRelay",
            dependencies: [
                "TrellisMQTT",
                "TrellisMQTTTypes",
                "TrellisCore",
                "TrellisStore",
                logging,
                metrics,
                lifecycle
            ],
            swiftSettings: callerIsolatedAsync
        ),
        // The servers beside the relay: the Socket.IO endpoint and its bridge to the buttons, /metrics,
        // the probes and systemd's notifications.
        .target(
            name: "TrellisServer",
            dependencies: [
                "TrellisRelay",
                "TrellisCore",
                "TrellisStore",
                "TrellisSocketIO",
                metrics,
                logging,
                lifecycle
            ] + httpStack
        ),
        // The application assembled once (TrellisApplication): the settings and their reloading, the
        // state's place and lock, the broker's local accounts, the store opened and seeded, the services
        // and servers. `trellis run` and the tests' relay harness both build it; the executable keeps
        // the commands.
        .target(
            name: "TrellisApplication",
            dependencies: applicationParts + [
                "TrellisSocketIO",
                .product(name: "Yams", package: "Yams"),
                // The notification channels: HTTP requests, the webhook's HMAC-SHA256 (docs/notifications.md).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The email channel's SMTP connection and its TLS (STARTTLS or smtps).
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl")
            ] + httpStack
        ),
        .executableTarget(
            name: "trellis",
            dependencies: ["TrellisApplication", "TrellisWire", argumentParser] + applicationParts,
            linkerSettings: releaseFootprint
        ),
        .executableTarget(
            name: "trellis-bench",
            dependencies: [
                "TrellisMQTT", "TrellisBroker", "TrellisCore", "TrellisRelay", "TrellisStore", "TrellisStoreSQLite",
                "TrellisStorePostgres",
                argumentParser
            ],
            path: "Benchmarks/TrellisBench"
        ),
        .target(
            name: "TrellisTestSupport",
            dependencies: [
                "TrellisApplication", "TrellisMQTT", "TrellisBroker", "TrellisRelay", "TrellisServer", "TrellisStore",
                "TrellisStoreSQLite", "TrellisStorePostgres",
                logging,
                lifecycle
            ],
            path: "Tests/TrellisTestSupport"
        ),
        .testTarget(name: "TrellisMQTTTests", dependencies: ["TrellisMQTT", "TrellisBroker", "TrellisTestSupport"]),
        .testTarget(
            name: "TrellisCLITests",
            dependencies: [
                "trellis", "trellis-bench", "TrellisApplication", "TrellisTestSupport", "TrellisBroker", "TrellisCore",
                "TrellisMQTT",
                "TrellisRelay", "TrellisServer", "TrellisStore",
                "TrellisStoreSQLite", "TrellisStorePostgres", "TrellisWire", lifecycle,
                .product(name: "Configuration", package: "swift-configuration")
            ],
            // Read from the source tree by path (the tests run binaries on them), not bundled.
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "TrellisApplicationTests",
            dependencies: [
                "TrellisApplication", "TrellisTestSupport", "TrellisStore", "TrellisStorePostgres", logging,
                .product(name: "Configuration", package: "swift-configuration")
            ]),
        .testTarget(name: "TrellisCoreTests", dependencies: ["TrellisCore", "TrellisMQTTTypes"]),
        .testTarget(
            name: "TrellisWireTests",
            dependencies: ["TrellisWire", "TrellisCore", "TrellisMQTTTypes", "TrellisTestSupport"]),
        .testTarget(
            name: "TrellisServerTests",
            dependencies: [
                "TrellisServer", "TrellisTestSupport", "TrellisRelay", "TrellisStore", "TrellisSocketIO",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus")
            ]),
        .testTarget(name: "TrellisSocketIOTests", dependencies: ["TrellisSocketIO", "TrellisCore"]),
        .testTarget(
            name: "TrellisStoreTests",
            dependencies: [
                "TrellisStore", "TrellisStoreSQLite", "TrellisStorePostgres", "TrellisTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio")
            ]),
        .testTarget(
            name: "TrellisRelayTests",
            // TrellisServer and TrellisSocketIO: the harness's stored `ServerSettings` holds their types, and a
            // test target that cannot see them lays the harness's fields out wrongly (its `service` read as nil).
            dependencies: [
                "TrellisRelay", "TrellisTestSupport", "TrellisMQTT", "TrellisCore", "TrellisStore",
                "TrellisStoreSQLite",
                "TrellisStorePostgres", "TrellisBroker", "TrellisServer", "TrellisSocketIO", lifecycle
            ],
            resources: [.copy("Fixtures")]
        )
    ],
    swiftLanguageModes: [.v6]
)
