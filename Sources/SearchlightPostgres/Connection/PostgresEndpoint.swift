import Foundation
import PostgresNIO
import SearchlightHistory

/// Where a PostgreSQL server is, parsed at the boundary from a connection URL:
/// `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require&schema=NAME&connect_timeout=SECONDS]`.
///
/// ```swift
/// let endpoint = try PostgresEndpoint(url: "postgres://app@127.0.0.1:5432/search")
/// endpoint.schema // "searchlight": the sink's tables live in this schema
/// ```
///
/// A password may also come from `PGPASSWORD`, as with `psql`. `connect_timeout` (whole seconds,
/// 1 to 3600; 10 by default) bounds the wait for a connection, as libpq's does; on a loaded
/// machine a longer one tells a slow server from one that is gone.
public struct PostgresEndpoint: Sendable {
    /// The client configuration postgres-nio connects with.
    public var configuration: PostgresClient.Configuration
    /// The schema that holds Searchlight's tables (`schema=` in the URL; `searchlight` by default).
    public var schema: String
    /// The URL without its password, for messages and logs.
    public var displayURL: String
    /// `sslmode=` as parsed (a first direct connection rebuilds its TLS settings from it).
    enum TLSMode: Sendable { case disable, prefer, require }
    let tlsMode: TLSMode

    /// Parses a `postgres://` or `postgresql://` URL. Throws `invalidArgument` with one line that
    /// says what is wrong.
    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(SearchlightError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "postgres" || scheme == "postgresql" else {
            throw SearchlightError(.invalidArgument, "invalid PostgreSQL URL \"\(Self.redacted(text))\": expected postgres://user@host[:port]/database")
        }
        guard let host = components.host, !host.isEmpty else {
            throw SearchlightError(.invalidArgument, "invalid PostgreSQL URL \"\(Self.redacted(text))\": it names no host")
        }
        guard let user = components.user, !user.isEmpty else {
            throw SearchlightError(.invalidArgument, "invalid PostgreSQL URL \"\(Self.redacted(text))\": it names no user (postgres://USER@host/database)")
        }
        if let port = components.port, !(1...65_535).contains(port) {
            throw SearchlightError(.invalidArgument, "invalid PostgreSQL URL \"\(Self.redacted(text))\": port \(port) is not between 1 and 65535")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let password = components.password ?? environment["PGPASSWORD"]
        var tls = PostgresClient.Configuration.TLS.disable
        var tlsMode = TLSMode.disable
        var schema = "searchlight"
        var connectTimeout = 10
        for item in components.queryItems ?? [] {
            switch (item.name, item.value ?? "") {
            case ("sslmode", "disable"): (tls, tlsMode) = (.disable, .disable)
            case ("sslmode", "prefer"), ("sslmode", "allow"): (tls, tlsMode) = (.prefer(.makeClientConfiguration()), .prefer)
            case ("sslmode", "require"), ("sslmode", "verify-ca"), ("sslmode", "verify-full"): (tls, tlsMode) = (.require(.makeClientConfiguration()), .require)
            case let ("schema", name):
                guard !name.isEmpty, name.utf8.count <= 63, !name.utf8.contains(0) else {
                    throw SearchlightError(.invalidArgument, "invalid PostgreSQL URL \"\(Self.redacted(text))\": schema= needs a name of 1 to 63 bytes")
                }
                schema = name
            case let ("connect_timeout", seconds):
                guard let value = Int(seconds), (1...3_600).contains(value) else {
                    throw SearchlightError(.invalidArgument, "invalid PostgreSQL URL \"\(Self.redacted(text))\": connect_timeout= needs whole seconds from 1 to 3600")
                }
                connectTimeout = value
            default:
                throw SearchlightError(.invalidArgument, "invalid PostgreSQL URL \"\(Self.redacted(text))\": unknown option \(item.name)=\(item.value ?? "")")
            }
        }
        var configuration = PostgresClient.Configuration(host: host, port: components.port ?? 5432, username: user,
                                                         password: password, database: database.isEmpty ? user : database, tls: tls)
        configuration.options.connectTimeout = .seconds(connectTimeout)
        self.configuration = configuration
        self.schema = schema
        self.tlsMode = tlsMode
        displayURL = Self.redacted(text)
    }

    /// `text` with its password replaced by `***`.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? text
    }
}
