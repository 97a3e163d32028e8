import ArgumentParser
import Foundation
import Logging
import SearchlightCommandSupport
import SearchlightHistory
import SearchlightPostgres
import SearchlightPostgresServer
import SearchlightServeCommand
import SearchlightServer

/// `searchlight-postgres serve`: the HTTP API over PostgreSQL (a hot standby's URL serves reads).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve search on PostgreSQL over HTTP, read-only: a search page at /, and GET /v1/search, /v1/suggest, /v1/status, /healthz.")

    @OptionGroup var options: PostgresOptions

    @OptionGroup var serve: ServeOptions

    func run() async throws {
        let endpoint = try options.endpoint()
        let configuration = try serve.configuration()
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
