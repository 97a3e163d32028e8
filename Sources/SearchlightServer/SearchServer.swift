import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Searchlight
import SearchlightHistory
import Synchronization

/// The HTTP API of a ``SearchService`` (read-only), on Hummingbird:
///
/// - `GET /v1/search?q=…` with `prefix`, `typos`, `filter`, `facet` (repeatable), `sort`,
///   `ascending`, `entity` (repeatable), `source` (PostgreSQL, repeatable), `limit` and
///   `cursor`: the CLI's JSON page, plus `tookMs` and `cursor` (the next page's, or null);
/// - `GET /v1/suggest?q=…` with `limit` and `typos`; `GET /v1/status`; `GET /healthz`.
///
/// Errors are JSON, `{ "code", "message" }`, 4xx for the caller's mistakes. With an API key
/// (``Configuration/apiKey``) every request but `/healthz` needs `Authorization: Bearer` with
/// the key or a ``TenantToken`` signed with it. Each request is bounded (``Limits``): past
/// ``Limits/maximumConcurrentSearches`` it gets `503` with `Retry-After` at once.
public struct SearchServer: Sendable {
    let service: any SearchService
    let configuration: Configuration
    let logger: Logger

    public init(service: any SearchService, configuration: Configuration = .init(),
                logger: Logger = Logger(label: "searchlight.server")) {
        self.service = service
        self.configuration = configuration
        self.logger = logger
    }

    /// Serves until the process gets SIGINT or SIGTERM (or the task is cancelled); `onRunning`
    /// gets the port once the server listens.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        try configuration.validate()
        // An idle connection is closed after 30 s: a client that opens connections and sends
        // nothing does not hold them for ever.
        // A client that trickles its request head is closed after `requestHeadTimeout`; past
        // `maximumConnections` new connections wait in the kernel's backlog instead of taking
        // file descriptors.
        let limits = configuration.limits
        let headDeadline = TimeAmount.nanoseconds(Int64(limits.requestHeadTimeout / .nanoseconds(1)))
        let http = HTTP1Channel.Configuration(additionalChannelHandlers: [RequestHeadDeadline(deadline: headDeadline)], idleTimeout: .seconds(30),
                                              httpDecoderConfiguration: .init(maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100))
        let app = Application(router: try await router(), server: .http1(configuration: http),
                              configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Searchlight",
                                                   availableConnectionsDelegate: MaximumAvailableConnections(limits.maximumConnections, logger: logger)),
                              onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
                              logger: logger)
        try await app.runService()
    }

    /// The routes (tests call them without a socket).
    func router() async throws -> Router<BasicRequestContext> {
        let access = await Access(apiKey: configuration.apiKey)
        let gate = Gate(limit: configuration.limits.maximumConcurrentSearches)
        let router = Router()
        router.add(middleware: JSONErrors(server: self))
        if let origin = configuration.corsOrigin {
            router.add(middleware: CORSMiddleware(allowOrigin: .custom(origin), allowHeaders: [.authorization, .contentType], allowMethods: [.get, .options]))
        }
        let server = self
        if configuration.page.isEnabled {
            router.get("/") { request, _ -> Response in
                await server.page(request, access: access, gate: gate)
            }
            router.get("assets/page.js") { _, _ -> Response in
                server.asset(PageAssets.script, type: "text/javascript; charset=utf-8")
            }
            router.get("assets/page.css") { _, _ -> Response in
                server.asset(PageAssets.styleSheet, type: "text/css; charset=utf-8")
            }
        }
        router.get("healthz") { _, _ -> Response in
            server.json(["status": "ok"])
        }
        router.get("v1/search") { request, _ -> Response in
            await server.respond(request, access: access, gate: gate, pages: true) { query, caller in
                let page = try await server.search(try server.searchRequest(query, caller: caller), caller: caller)
                return (page, page.nextOffset.map { Cursor(offset: $0, query: query).encoded })
            }
        }
        router.get("v1/suggest") { request, _ -> Response in
            await server.respond(request, access: access, gate: gate) { query, caller in
                try Self.refuseUnknown(query, ["q", "limit", "typos"])
                if case .tenant = caller {
                    // Suggestions are words of every document's vocabulary: a tenant sees none.
                    throw ServerError(.forbidden, "suggestions are not available to a tenant token (they read every document's words)")
                }
                let text = try server.text(query["q"] ?? "", name: "q", maximum: server.configuration.limits.maximumQueryLength)
                let limit = try server.number(query["limit"], name: "limit", default: 10, range: 1...server.configuration.limits.maximumLimit)
                return (try await server.service.suggest(text, limit: limit, typos: try Self.typos(query["typos"])), nil)
            }
        }
        router.get("v1/status") { request, _ -> Response in
            await server.respond(request, access: access, gate: gate) { query, caller in
                try Self.refuseUnknown(query, [])
                if case .tenant = caller { throw ServerError(.forbidden, "status is for the API key's holder, not a tenant token") }
                return (try await server.service.status(), nil)
            }
        }
        return router
    }

    // MARK: - Answering

    /// Checks the caller, takes a place among the running searches, runs `body` within the
    /// request timeout, and writes its page (with `tookMs` and `cursor`) or the error as JSON.
    func respond(_ request: Request, access: Access, gate: Gate, pages: Bool = false,
                 _ body: @escaping @Sendable (QueryString, Caller) async throws -> (ServedPage, String?)) async -> Response {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let caller = try await access.caller(authorization: request.headers[.authorization])
            let query = try QueryString(request.uri.query)
            let (page, cursor) = try await bounded(gate: gate) { try await body(query, caller) }
            let tookMs = (clock.now - start) / .milliseconds(1)
            return json(Envelope(body: page.body, tookMs: (tookMs * 10).rounded() / 10, cursor: cursor, includesCursor: pages))
        } catch {
            return failure(Self.served(error, logger: logger, path: request.uri.path))
        }
    }

    /// Takes a place among the running requests (or fails at once, busy) and runs `body`
    /// within the request timeout. Past it the request fails at once, but the place is held
    /// until `body` ends: blocking work (SQLite) goes on after its answer is given up, and a
    /// flood of slow searches must not run more at once than the bound.
    func bounded<T: Sendable>(gate: Gate, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard gate.enter() else {
            throw ServerError(.busy, "too many searches at once; try again shortly", retryAfter: 1)
        }
        let timeout = configuration.limits.requestTimeout
        let outcome = RequestOutcome<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                outcome.start(continuation)
                let work = Task {
                    defer { gate.leave() }
                    do { outcome.finish(.success(try await body())) } catch { outcome.finish(.failure(error)) }
                }
                outcome.timer(Task {
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    if outcome.finish(.failure(ServerError(.busy, "the search took longer than \(timeout) and was stopped", retryAfter: 1))) {
                        work.cancel()
                    }
                }, work: work)
            }
        } onCancel: {
            outcome.cancel()
        }
    }

    /// Any error as the API answers it: ours are logged and said as "internal error".
    static func served(_ error: any Error, logger: Logger, path: String) -> ServerError {
        switch error {
        case let error as ServerError: return error
        case let error as SearchlightError: return ServerError(error)
        default:
            logger.error("request \(path) failed: \(String(describing: error))")
            return ServerError(.internalError, "internal error")
        }
    }

    /// The service's search; a tenant's failure does not name the model's entities, attributes
    /// or columns (its token's filter may name an attribute that some entity lacks, and a facet's
    /// error lists the declared attributes): it says what was refused, and no more.
    func search(_ request: SearchRequest, caller: Caller) async throws -> ServedPage {
        let result: Result<ServedPage, SearchlightError>
        do { result = .success(try await service.search(request)) } catch { result = .failure(error) }
        guard case let .failure(error) = result, case .tenant = caller, error.code != .invalidQuery, ServerError(error).status == .badRequest else {
            return try result.get()
        }
        switch error.code {
        case .unknownEntity: throw SearchlightError(error.code, "unknown entity: this tenant token searches none of that name")
        case .invalidFilter: throw SearchlightError(error.code, "the filter does not apply to the searched entities (an attribute it names is not theirs)")
        default: throw SearchlightError(error.code, "the search was refused: check its entity, facets and filter (a tenant's errors name nothing of the model)")
        }
    }

    // MARK: - The search page

    /// The page at `/`: the search form, and for `/?q=…` the results rendered here (the page
    /// works without JavaScript), through the same checks, bounds and tenant filter as the API.
    func page(_ request: Request, access: Access, gate: Gate) async -> Response {
        let html = PageHTML(title: configuration.page.title, facets: configuration.page.facets, keyed: configuration.apiKey != nil)
        let query: QueryString
        do {
            query = try QueryString(request.uri.query)
        } catch {
            return page(html.render(PageState(), notice: .init(message: UserText.oneLine(error.message))), status: .badRequest)
        }
        let state = PageState(query)
        if let refusal = state.refusal(configuration.limits) {
            // Refused before anything is rendered from it: a page's links repeat its filters.
            return page(html.render(PageState(), notice: .init(message: refusal)), status: .badRequest)
        }
        guard !state.text.isEmpty else { return page(html.render(state)) }
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let caller = try await access.caller(authorization: request.headers[.authorization])
            let api = QueryString(pairs: state.apiParameters(facets: configuration.page.facets, limit: 20))
            let search = try searchRequest(api, caller: caller)
            let served = try await bounded(gate: gate) { try await self.search(search, caller: caller) }
            let view = try JSONDecoder().decode(PageView.self, from: try JSONEncoder().encode(served.body))
            let cursor = served.nextOffset.map { Cursor(offset: $0, query: api).encoded }
            let tookMs = (clock.now - start) / .milliseconds(1)
            return page(html.render(state, view: view, cursor: cursor, tookMs: tookMs))
        } catch {
            let failure = Self.served(error, logger: logger, path: request.uri.path)
            let message = failure.status == .unauthorized
                ? "This server needs an API key or a tenant token: enter it below, and the page sends it with each search."
                : failure.message
            return page(html.render(state, notice: .init(message: UserText.oneLine(message))), status: failure.status)
        }
    }

    /// An HTML page: no script but the page's own file, no frames, no referrer.
    func page(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        headers[.init("X-Frame-Options")!] = "DENY"
        headers[.init("Referrer-Policy")!] = "no-referrer"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    func asset(_ text: String, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-cache"
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    struct Envelope: Encodable {
        var body: any Encodable & Sendable
        var tookMs: Double
        var cursor: String?
        var includesCursor: Bool

        func encode(to encoder: any Encoder) throws {
            try body.encode(to: encoder)
            enum Key: String, CodingKey { case tookMs, cursor }
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(tookMs, forKey: .tookMs)
            if includesCursor { try container.encode(cursor, forKey: .cursor) } // null on the last page
        }
    }

    func failure(_ error: ServerError) -> Response {
        var response = json(ServerError.Body(code: error.code, message: UserText.oneLine(error.message)), status: error.status)
        if let retryAfter = error.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }

    func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data(#"{"code":"internal","message":"internal error: the answer could not be encoded"}"#.utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: - Parameters

    static let searchParameters: Set<String> = ["q", "prefix", "typos", "filter", "facet", "sort", "ascending", "entity", "source", "limit", "cursor", "highlight"]

    /// The parameters a request may repeat.
    static let repeatable: Set<String> = ["facet", "entity", "source"]

    /// Refuses a parameter the endpoint does not take, or one given twice that is not
    /// repeatable (which of the two would count is not the caller's guess to make).
    static func refuseUnknown(_ query: QueryString, _ known: Set<String>) throws(SearchlightError) {
        if let name = query.unknown(known).first {
            throw SearchlightError(.invalidArgument, "unknown parameter \"\(UserText.shown(name))\" (\(known.isEmpty ? "this endpoint takes none" : "known: " + known.sorted().joined(separator: ", ")))")
        }
        var seen = Set<String>()
        for (name, _) in query.pairs where !repeatable.contains(name) && !seen.insert(name).inserted {
            throw SearchlightError(.invalidArgument, "parameter \"\(UserText.shown(name))\" is given more than once (only facet, entity and source repeat)")
        }
    }

    /// A search as the request asks it, bounded, with a tenant's filter ANDed and its sources kept.
    func searchRequest(_ query: QueryString, caller: Caller) throws -> SearchRequest {
        try Self.refuseUnknown(query, Self.searchParameters)
        let limits = configuration.limits
        var search = SearchRequest(text: try text(query["q"] ?? "", name: "q", maximum: limits.maximumQueryLength))
        search.asYouType = try Self.flag(query["prefix"], name: "prefix")
        search.typos = try Self.typos(query["typos"])
        if let filter = query["filter"], !filter.isEmpty {
            search.filter = try Self.filter(try text(filter, name: "filter", maximum: limits.maximumFilterLength))
        }
        search.facets = query.all("facet")
        if search.facets.count > SearchFacet.maximumFacets {
            throw SearchlightError(.invalidArgument, "\(search.facets.count) facets; at most \(SearchFacet.maximumFacets) are allowed")
        }
        if let sort = query["sort"], !sort.isEmpty {
            search.order = .column(sort, descending: !(try Self.flag(query["ascending"], name: "ascending")))
        } else if query["ascending"] != nil {
            throw SearchlightError(.invalidArgument, "ascending needs sort")
        }
        let entities = query.all("entity")
        search.entities = entities.isEmpty ? nil : Set(entities)
        let sources = query.all("source")
        search.sources = sources.isEmpty ? nil : Set(sources)
        search.limit = try number(query["limit"], name: "limit", default: 20, range: 1...limits.maximumLimit)
        if let highlight = query["highlight"], !highlight.isEmpty {
            guard let marks = SearchRequest.Highlight(rawValue: highlight) else {
                throw SearchlightError(.invalidArgument, "invalid highlight \"\(UserText.shown(highlight))\": use brackets or private-use")
            }
            search.highlight = marks
        }
        if let cursor = query["cursor"], !cursor.isEmpty {
            guard let decoded = Cursor(encoded: cursor), decoded.fingerprint == Cursor.fingerprint(query) else {
                throw SearchlightError(.invalidArgument, "invalid cursor: it belongs to another search (send the same parameters with the cursor the previous page gave)")
            }
            search.offset = decoded.offset
        }
        let (depth, overflow) = search.offset.addingReportingOverflow(search.limit)
        if overflow || depth > limits.maximumDepth {
            throw SearchlightError(.invalidArgument, "pages end at \(limits.maximumDepth) results: narrow the search")
        }
        if case let .tenant(filter, allowed) = caller {
            if query["sort"].map({ !$0.isEmpty }) == true {
                // A column's order would show values of columns the tenant's filter does not cover.
                throw ServerError(.forbidden, "a tenant token cannot sort by a column; results come by relevance")
            }
            if let filter { search.filter = search.filter.map { .and(filter, $0) } ?? filter }
            if let allowed {
                if let asked = search.sources, !asked.isSubset(of: allowed) {
                    throw ServerError(.forbidden, "the tenant token does not allow source \"\(UserText.shown(asked.subtracting(allowed).sorted()[0]))\"")
                }
                search.sources = search.sources ?? allowed
            }
        }
        return search
    }

    /// A filter as the HTTP API takes it: the grammar's, without NUL characters (SQLite would
    /// compare text only up to its first NUL: `'acme\0x'` would match `'acme'`).
    static func filter(_ text: String) throws(SearchlightError) -> SearchFilter {
        if text.utf8.contains(0) { throw SearchlightError(.invalidFilter, "invalid filter: it holds a NUL character") }
        return try SearchFilter(parsing: text)
    }

    func text(_ value: String, name: String, maximum: Int) throws(SearchlightError) -> String {
        if value.count > maximum {
            throw SearchlightError(.invalidArgument, "\(name) is \(value.count) characters long; at most \(maximum) are allowed")
        }
        return value
    }

    func number(_ value: String?, name: String, default fallback: Int, range: ClosedRange<Int>) throws(SearchlightError) -> Int {
        guard let value, !value.isEmpty else { return fallback }
        guard let number = Int(value), range.contains(number) else {
            throw SearchlightError(.invalidArgument, "invalid \(name) \"\(UserText.shown(value))\": it must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    static func flag(_ value: String?, name: String) throws(SearchlightError) -> Bool {
        switch value?.lowercased() {
        case nil, "", "false", "0", "off", "no": return false
        case "true", "1", "on", "yes": return true
        default: throw SearchlightError(.invalidArgument, "invalid \(name) \"\(UserText.shown(value ?? ""))\": use true or false")
        }
    }

    static func typos(_ value: String?) throws(SearchlightError) -> TypoTolerance {
        guard let value, !value.isEmpty else { return .on }
        guard let typos = TypoTolerance(rawValue: value.lowercased()) else {
            throw SearchlightError(.invalidArgument, "invalid typos \"\(UserText.shown(value))\": use on or off")
        }
        return typos
    }
}
