// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Searchlight",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SearchlightHistory", targets: ["SearchlightHistory"]),
        .library(name: "Searchlight", targets: ["Searchlight"]),
        .executable(name: "searchlight", targets: ["SearchlightCLI"]),
        // PostgreSQL: its own library and command, so that no other product (the two core libraries,
        // `searchlight`) builds postgres-nio. Of the other targets, searchlight-bench (scenario 9)
        // and SearchlightPostgresTests depend on it too.
        .library(name: "SearchlightPostgres", targets: ["SearchlightPostgres"]),
        .executable(name: "searchlight-postgres", targets: ["SearchlightPostgresCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // postgres-nio's own packages, for the sink's first direct connection (its errors by name)
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"), // NIOHTTPTypes: the parts Hummingbird's channel carries
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.1.0"..<"6.0.0"), // tests sign tokens by hand (as jwt-kit, which needs it)
    ],
    targets: [
        .target(
            name: "SearchlightHistory",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Searchlight",
            dependencies: [
                "SearchlightHistory",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "SearchlightDemoData",
            dependencies: ["SearchlightHistory", .product(name: "GRDB", package: "GRDB.swift")],
            resources: [.copy("Resources/jargon.jsonl"), .copy("Resources/JARGON-COPYRIGHT.txt")]
        ),
        // What both commands share: output formats, one-line errors, signals.
        .target(
            name: "SearchlightCommandSupport",
            dependencies: [
                "Searchlight",
                "SearchlightHistory",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The `searchlight` command: parses, calls the libraries, formats (no SQL, no logic).
        .target(
            name: "SearchlightServer",
            dependencies: [
                "Searchlight",
                "SearchlightHistory",
                "SearchlightCommandSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "SearchlightCLI",
            dependencies: [
                "SearchlightServeCommand",
                "SearchlightServer",
                "SearchlightCommandSupport",
                "Searchlight",
                "SearchlightHistory",
                "SearchlightDemoData",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Sinks: history of many databases flows into PostgreSQL; search spans them all.
        .target(
            name: "SearchlightPostgres",
            dependencies: [
                "Searchlight",
                "SearchlightHistory",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The `searchlight-postgres` command (sink, search, status, verify): thin, like `searchlight`.
        .target(
            name: "SearchlightPostgresServer",
            dependencies: ["SearchlightServer", "SearchlightPostgres", "Searchlight", "SearchlightHistory"]
        ),
        // The options both `serve` commands share.
        .target(
            name: "SearchlightServeCommand",
            dependencies: ["SearchlightServer", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .executableTarget(
            name: "SearchlightPostgresCLI",
            dependencies: [
                "SearchlightServeCommand",
                "SearchlightPostgresServer",
                "SearchlightServer",
                "SearchlightCommandSupport",
                "SearchlightPostgres",
                "Searchlight",
                "SearchlightHistory",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "searchlight-bench",
            dependencies: [
                "Searchlight",
                "SearchlightHistory",
                "SearchlightPostgres", // scenario 9
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                "SearchlightEvaluation", // the CJK recall evaluation (scenario 7)
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Fixed workloads that scenario 10 of the bench runs under callgrind (instruction counts).
        .executableTarget(
            name: "searchlight-workload",
            dependencies: [
                "Searchlight",
                "SearchlightHistory",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Shared by the benchmark and the tests: CJK recall against substring ground truth, and
        // a seeded generator. Not a product.
        .target(name: "SearchlightEvaluation"),
        .target(
            name: "SearchlightTestSupport",
            dependencies: ["Searchlight", "SearchlightHistory", "SearchlightEvaluation", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Logging", package: "swift-log")],
            path: "Tests/SearchlightTestSupport"
        ),
        .testTarget(
            name: "SearchlightHistoryTests",
            dependencies: ["SearchlightHistory", "SearchlightTestSupport"]
        ),
        .executableTarget(
            name: "searchlight-stress",
            dependencies: [
                "Searchlight",
                "SearchlightHistory",
                "SearchlightTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/Tools/searchlight-stress"
        ),
        .testTarget(
            name: "SearchlightCLITests",
            dependencies: [
                "SearchlightCLI", "searchlight-stress", "SearchlightTestSupport", "SearchlightHistory",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "SearchlightTests",
            dependencies: ["Searchlight", "SearchlightHistory", "SearchlightDemoData", "SearchlightEvaluation", "SearchlightTestSupport"],
            exclude: ["Fixtures"] // read by path: databases made by earlier releases
        ),
        // Against a real PostgreSQL server (SEARCHLIGHT_POSTGRES_URL; skipped, saying why, without one).
        .testTarget(
            name: "SearchlightPostgresTests",
            dependencies: [
                "SearchlightPostgres", "SearchlightPostgresCLI", "searchlight-stress", "SearchlightTestSupport",
                "Searchlight", "SearchlightHistory", "SearchlightEvaluation", "SearchlightServer", "SearchlightPostgresServer",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        // The public API as an embedder sees it: no @testable import here.
        .testTarget(
            name: "SearchlightServerTests",
            dependencies: [
                "SearchlightServer", "Searchlight", "SearchlightHistory", "SearchlightTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Page/Browser"] // the browser's script (Selenium), which BrowserTests runs
        ),
        .testTarget(
            name: "SearchlightAPITests",
            dependencies: ["Searchlight", "SearchlightHistory", .product(name: "GRDB", package: "GRDB.swift")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
