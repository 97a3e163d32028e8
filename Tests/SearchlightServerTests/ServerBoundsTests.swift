import Foundation
import Hummingbird
import HummingbirdTesting
import NIOPosix
import Searchlight
import SearchlightHistory
@testable import SearchlightServer
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The bounds that keep one client from holding the server: a search past its time fails at
/// once but keeps its place until its work ends, and a client that trickles its request head is
/// closed.
struct ServerBoundsTests {
    /// A service whose searches run until released, cancelled or not, as blocking work does.
    /// They wait suspended (never spinning: a loop of cancelled sleeps would hold one of the
    /// cooperative pool's threads, two on a 2-core machine, until released).
    final class HeldService: SearchService {
        private let state = Mutex<(released: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

        func release() {
            let waiting = state.withLock { state in
                state.released = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }

        func search(_ request: SearchRequest) async throws(SearchlightError) -> ServedPage {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if !state.released { state.waiting.append(continuation) }
                    return state.released
                }
                if now { continuation.resume() }
            }
            return ServedPage(body: ["done": true])
        }

        func suggest(_ text: String, limit: Int, typos: TypoTolerance) async throws(SearchlightError) -> ServedPage { ServedPage(body: ["suggestions": [String]()]) }
        func status() async throws(SearchlightError) -> ServedPage { ServedPage(body: ["ok": true]) }
    }

    @Test func aSearchPastItsTimeFailsButHoldsItsPlaceUntilItsWorkEnds() async throws {
        let service = HeldService()
        var configuration = SearchServer.Configuration()
        configuration.limits.requestTimeout = .milliseconds(200)
        configuration.limits.maximumConcurrentSearches = 1
        let app = Application(router: try await SearchServer(service: service, configuration: configuration).router())
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/search?q=slow", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] == "1")
                #expect(String(buffer: response.body).contains("took longer than"))
            }
            // Its work still runs: the next search finds no place, at once.
            try await client.execute(uri: "/v1/search?q=next", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(String(buffer: response.body).contains("too many searches at once"))
            }
            service.release()
            // Once it ends, its place is free again (waited for by asking, never by sleeping alone).
            var status: HTTPResponse.Status = .serviceUnavailable
            for _ in 0..<2_000 where status != .ok {
                try await client.execute(uri: "/v1/search?q=again", method: .get) { response in status = response.status }
                if status != .ok { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(status == .ok)
        }
    }

    /// A client that sends its request head a byte at a time is closed at the head's deadline
    /// (the idle timeout never fires: bytes keep coming).
    @Test func aClientTricklingItsRequestHeadIsClosed() async throws {
        let service = HeldService()
        service.release()
        var configuration = SearchServer.Configuration()
        configuration.port = 0
        configuration.limits.requestHeadTimeout = .milliseconds(500)
        let server = SearchServer(service: service, configuration: configuration)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let serving = Task { try await server.run { port in continuation.yield(port) } }
        defer { serving.cancel() }
        let port = try await BrowserTests.first(ports, within: .seconds(60))
        // A whole request is answered.
        let answered = try await NIOThreadPool.singleton.runIfActive { try Self.exchange(port: port, trickle: false) }
        #expect(answered.hasPrefix("HTTP/1.1 200"), "\(answered)")
        // A trickled one is closed before its head is whole (the trickle lasts 60 s at most).
        let trickled = try await NIOThreadPool.singleton.runIfActive { try Self.exchange(port: port, trickle: true) }
        #expect(trickled == "closed", "\(trickled)")
    }

    /// Sends `GET /healthz` whole, or one byte every 50 ms; returns the answer's first line, or
    /// "closed" if the server closed the connection first.
    static func exchange(port: Int, trickle: Bool) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EBADF) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: \(String(repeating: "a", count: 1_200))\r\n\r\n".utf8)
        if !trickle {
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var buffer = [UInt8](repeating: 0, count: 4_096)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self).components(separatedBy: "\r\n")[0] : "closed"
        }
        for byte in request.dropLast(4) {
            var one = byte
            if send(fd, &one, 1, Int32(MSG_NOSIGNAL)) < 0 { return "closed" }
            // Has the server closed it? (A poll of 50 ms between bytes.)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 50) > 0 {
                var buffer = [UInt8](repeating: 0, count: 4_096)
                let count = recv(fd, &buffer, buffer.count, 0)
                return count <= 0 ? "closed" : String(decoding: buffer[..<count], as: UTF8.self).components(separatedBy: "\r\n")[0]
            }
        }
        return "the whole head was sent without the server closing"
    }
}
