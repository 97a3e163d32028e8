import ArgumentParser
import Foundation
import SearchlightServer

/// The options both `serve` commands take (`searchlight serve`, `searchlight-postgres serve`):
/// where to listen, the key, CORS, and the search page.
public struct ServeOptions: ParsableArguments {
    @Option(help: "The address to listen on (any other than loopback needs an API key).")
    var host = "127.0.0.1"

    @Option(help: "The port (0: any free one, printed).")
    var port = 7700

    @Option(help: "Require 'Authorization: Bearer KEY' (or a tenant token signed with it); at least 32 bytes. Default: $SEARCHLIGHT_API_KEY.")
    var apiKey: String?

    @Option(help: "Let browsers call the API from this origin (CORS), e.g. https://app.example.")
    var corsOrigin: String?

    @Option(name: .customLong("page-facet"), help: "An attribute whose values the search page offers as filters (repeatable).")
    var pageFacets: [String] = []

    @Option(help: "The search page's title.")
    var pageTitle = "Search"

    @Flag(help: "Serve the API only: no search page at /.")
    var noPage = false

    @Option(help: "Searches running at once; past them a request gets 503 with Retry-After at once.")
    var maxConcurrentSearches = 16

    public init() {}

    /// The server's configuration, checked (``SearchlightServer/SearchServer/Configuration/validate()``).
    public func configuration(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SearchServer.Configuration {
        var configuration = SearchServer.Configuration()
        configuration.host = host
        configuration.port = port
        configuration.apiKey = apiKey ?? environment["SEARCHLIGHT_API_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        configuration.corsOrigin = corsOrigin
        configuration.page.isEnabled = !noPage
        configuration.page.title = pageTitle
        configuration.page.facets = pageFacets
        configuration.limits.maximumConcurrentSearches = maxConcurrentSearches
        try configuration.validate()
        return configuration
    }
}
