import Logging
import Synchronization

/// The messages a `Logger` received, for tests that check what an operator reads.
///
/// ```swift
/// let log = CapturedLog()
/// configuration.logger = log.logger(label: "test")
/// #expect(log.messages.contains { $0.contains("rebuilt") })
/// ```
public final class CapturedLog: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// A logger that records every message at `level` and above.
    public func logger(label: String, level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in Handler(sink: self) }
        logger.logLevel = level
        return logger
    }

    /// The messages so far, in order.
    public var messages: [String] { lines.withLock { $0 } }

    fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let sink: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            sink.append("\(event.message)")
        }
    }
}
