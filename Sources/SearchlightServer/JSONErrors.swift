import Hummingbird
import SearchlightHistory

/// What the router itself refuses (a path or method the API does not have) as the API's JSON
/// errors, not Hummingbird's empty bodies.
struct JSONErrors<Context: RequestContext>: RouterMiddleware {
    let server: SearchServer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPResponseError {
            let code = error.status == .notFound ? "not-found" : error.status == .methodNotAllowed ? "method-not-allowed" : "http-\(error.status.code)"
            let message = error.status == .notFound || error.status == .methodNotAllowed
                ? "no such endpoint: \(request.method) \(UserText.shown(request.uri.path)) (the API: GET /v1/search, /v1/suggest, /v1/status, /healthz; the search page: GET /)"
                : "the request was refused (\(error.status.code))"
            return server.failure(ServerError(status: error.status, code: code, message: message))
        }
    }
}
