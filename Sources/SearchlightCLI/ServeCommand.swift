import ArgumentParser
import Foundation
import Logging
import Searchlight
import SearchlightCommandSupport
import SearchlightHistory
import SearchlightServeCommand
import SearchlightServer

/// `searchlight serve`: the HTTP API and the search page over the local index.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve the index over HTTP, read-only: a search page at /, and GET /v1/search, /v1/suggest, /v1/status, /healthz.")

    @OptionGroup var options: StoreOptions
    @OptionGroup var serve: ServeOptions

    func run() async throws {
        let configuration = try serve.configuration()
        let store = try options.openStore(readOnly: true)
        let server = SearchServer(service: LocalSearchService(store: store), configuration: configuration, logger: Logger(label: "searchlight.server"))
        let (shownHost, keyed) = (configuration.host, configuration.apiKey != nil)
        try await server.run { port in
            Output.note("Serving http://\(shownHost):\(port)/ (\(keyed ? "API key required" : "no API key: loopback only")).")
        }
    }
}
