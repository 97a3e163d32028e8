import ArgumentParser
import Foundation
import Logging
import SearchlightCommandSupport
import SearchlightHistory
import SearchlightPostgres
import SearchlightPostgresServer
import SearchlightServer

/// `searchlight-postgres serve`: the HTTP API over PostgreSQL (a hot standby's URL serves reads).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve search on PostgreSQL over HTTP, read-only: GET /v1/search, /v1/suggest, /v1/status, /healthz.")

    @OptionGroup var options: PostgresOptions

    @Option(help: "The address to listen on (any other than loopback needs an API key).")
    var host = "127.0.0.1"

    @Option(help: "The port (0: any free one, printed).")
    var port = 7700

    @Option(help: "Require 'Authorization: Bearer KEY' (or a tenant token signed with it); at least 32 bytes. Default: $SEARCHLIGHT_API_KEY.")
    var apiKey: String?

    @Option(help: "Let browsers call the API from this origin (CORS), e.g. https://app.example.")
    var corsOrigin: String?

    func run() async throws {
        let endpoint = try options.endpoint()
        var configuration = SearchServer.Configuration()
        configuration.host = host
        configuration.port = port
        configuration.apiKey = apiKey ?? ProcessInfo.processInfo.environment["SEARCHLIGHT_API_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        configuration.corsOrigin = corsOrigin
        try configuration.validate()
        let settings = configuration
        let (shownHost, keyed) = (configuration.host, configuration.apiKey != nil)
        try await PostgresSearch.withSearch(endpoint: endpoint) { search in
            let server = SearchServer(service: PostgresSearchService(search: search, endpoint: endpoint), configuration: settings,
                                      logger: Logger(label: "searchlight.server"))
            try await server.run { port in
                Output.note("Serving http://\(shownHost):\(port)/ (\(keyed ? "API key required" : "no API key: loopback only")).")
            }
        }
    }
}
